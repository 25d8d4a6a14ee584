/* The sim encodes watched instances several at a time (server/sim_frame.c: encode_part
 * gathers up to PTP_TICK_MANY_MAX, encode_pending ticks each stream's encoders in one
 * ptp_encoder_tick_many): every record must be byte for byte the one an encoder of that
 * stream, ticked alone on the same points, writes. Instances of nine shapes, 1 to 7
 * strands of 2 to 19 points (so batches of four mix strand counts and lengths, and a
 * worker's last batch may be short), each moving its own way, watched in mixed sets of
 * streams (compact 60 and 10 Hz, classic 60 Hz, or none): ten with one worker, and 72
 * with two (the sim splits encoding from 64 instances on). In-process, tick by tick: nothing here
 * is timed. */
#define _GNU_SOURCE /* server/pool.c, included below, binds threads to CPUs */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/cmdq.c"
#include "../../server/driver.c"
#include "../../server/frame_ring.c"
#include "../../server/jutil.c"
#include "../../server/metrics.c"
#include "../../server/pool.c"
#include "../../server/record.c"
#include "../../server/record_disk.c"
#include "../../server/sim.c"
#include "../../server/sim_record.c"
#include "../../server/sim_frame.c"
#include "../../server/sim_guard.c"
#include "../../server/sim_wind.c"
#include "../../server/sim_touch.c"
#include "../../server/sim_grab.c"
#include "../../server/interact.c"
#include "testdef.h"

int log_min_level = LOG_WARN;
void log_emit(int level, const char *file, const char *fmt, ...)
{
	(void)level, (void)file, (void)fmt;
}

enum { NSHAPE = 9, MAXINST = 72, TICKS = 40, MAXP = PT_MAX_JOINTS, CAP = 1 << 16 };

static const int strands_of[NSHAPE] = {2, 2, 3, 1, 5, 2, 4, 7, 2};

/* Which streams instance i is watched on: bit SIM_STREAM_BIT(coding, rate index). */
static unsigned watched_of(int i)
{
	unsigned w = 0;
	if (i % 3 != 1)
		w |= SIM_STREAM_BIT(FRAME_COMPACT, 0);
	if (i % 2 == 0)
		w |= SIM_STREAM_BIT(FRAME_CLASSIC, 0);
	if (i % 4 == 3)
		w |= SIM_STREAM_BIT(FRAME_COMPACT, 3); /* 10 Hz: every 6th tick */
	return i % NSHAPE == 5 ? 0 : w;
}

static void play(int workers, int ninst)
{
	sim_config_t cfg = {
	    .tick_hz = 60, .substeps = 4, .workers = workers, .keyframe_interval = 60};
	cmdq_t *q = cmdq_create(64);
	frame_ring_t *ring = frame_ring_create(MAXINST);
	sim_t *s = sim_create(&cfg, q, ring);
	static pt_vec3 pts[MAXP];
	static uint8_t rec[CAP];
	static ptp_encoder_t *twin[MAXINST][FRAME_CODINGS][FRAME_RATES];
	int slot[MAXINST], checked = 0;
	int64_t deadline;
	assert_non_null(s);
	memset(twin, 0, sizeof twin);
	for (int i = 0; i < ninst; i++) {
		pt_instance_def d;
		/* each its own motion, so no two instances move alike */
		driver_t drv = {1, pt_motion_default(i % 2 ? PT_MOTION_STRESS : PT_MOTION_SHAKE)};
		drv.motion.period *= 0.7f + 0.1f * (float)(i % NSHAPE);
		tdef_init(&d);
		d.prewarm_s = 0;
		tdef_strands(&d, strands_of[i % NSHAPE]);
		for (int j = 0; j < strands_of[i % NSHAPE]; j++) {
			pt_strand_def *st = &d.strands[j];
			st->points = 2 + (i * 5 + j * 3) % 18;
			st->anchor =
			    pt_v3(0.03f * (float)j - 0.05f, 0.08f, -0.02f * (float)(i % 3));
			st->direction = pt_v3(0.2f * (float)(j % 3) - 0.2f, -1.0f, -0.3f);
		}
		assert_int_equal(sim_preload(s, (uint64_t)(10 + i), &d, &drv, NULL), 0);
		pt_instance_def_fini(&d);
		slot[i] = sim_slot_of(s, (uint64_t)(10 + i));
		assert_true(slot[i] >= 0);
		for (unsigned m = watched_of(i); m; m &= m - 1) {
			int bit = __builtin_ctz(m);
			frame_ring_watch(ring, slot[i], bit / FRAME_RATES, bit % FRAME_RATES,
			                 (uint64_t)TICKS + 10);
		}
	}
	deadline = sim_mono_ns();
	for (int k = 0; k < TICKS; k++) {
		frame_event_t *ev;
		int nev;
		deadline += 1000000000 / 60;
		tick_once(s, deadline, 1000000000 / 60);
		frame_set_t *fs = frame_ring_acquire(ring, NULL, &ev, &nev);
		assert_non_null(fs);
		for (int e = 0; e < nev; e++) {
			meta_unref(ev[e].meta);
			meta_unref(ev[e].old);
		}
		for (int i = 0; i < ninst; i++) {
			sim_inst_t *in = &s->inst[slot[i]];
			const frame_entry_t *e = &fs->entries[slot[i]];
			int n = pt_world_read_points(s->world, in->pid, pts, MAXP);
			pt_pose h;
			pt_world_get_head(s->world, in->pid, &h);
			float hp[3] = {h.p.x, h.p.y, h.p.z}, hq[4] = {h.q.x, h.q.y, h.q.z, h.q.w};
			for (int c = 0; c < FRAME_CODINGS; c++)
				for (int r = 0; r < FRAME_RATES; r++) {
					const frame_rec_t *fr = &e->rec[c][r];
					int due = fs->tick % (uint64_t)s->div[c][r] == 0;
					size_t len = 0;
					if (!(watched_of(i) & SIM_STREAM_BIT(c, r)) || !due) {
						assert_int_equal(fr->len, 0);
						continue;
					}
					ptp_encoder_t **t = &twin[i][c][r];
					if (!*t)
						assert_non_null(*t = sim_make_encoder(s, in->meta,
						                                      c, r));
					if (c == FRAME_COMPACT) {
						assert_int_equal(ptp_encoder_tick_c(
						                     *t, in->last_seq, hp, hq,
						                     (const float *)pts, (size_t)n),
						                 PTP_OK);
						assert_int_equal(ptp_encoder_record_c(
						                     *t, 0, in->id, rec, CAP, &len),
						                 PTP_OK);
					} else {
						assert_int_equal(
						    ptp_encoder_tick(*t, hp, hq, (const float *)pts,
						                     (size_t)n),
						    PTP_OK);
						assert_int_equal(ptp_encoder_record(*t, 0, in->id,
						                                    in->last_seq,
						                                    rec, CAP, &len),
						                 PTP_OK);
					}
					set_step(c, rec, (uint32_t)len, s->div[c][r]);
					assert_int_equal(fr->len, len);
					assert_memory_equal(fs->bufs[e->buf].data + fr->off, rec,
					                    len);
					checked++;
				}
		}
		frame_ring_release(ring, fs);
	}
	/* every watched stream's due records: 60 Hz ones each tick, 10 Hz every 6th */
	int want = 0;
	for (int i = 0; i < ninst; i++)
		for (unsigned m = watched_of(i); m; m &= m - 1)
			want +=
			    TICKS /
			    s->div[__builtin_ctz(m) / FRAME_RATES][__builtin_ctz(m) % FRAME_RATES];
	assert_int_equal(checked, want);
	print_message("%d workers: %d records equal to their encoders' alone\n", workers, checked);
	for (int i = 0; i < ninst; i++)
		for (int c = 0; c < FRAME_CODINGS; c++)
			for (int r = 0; r < FRAME_RATES; r++)
				ptp_encoder_destroy(twin[i][c][r]);
	sim_destroy(s);
	frame_ring_destroy(ring);
	cmdq_destroy(q);
}

static void test_one_worker(void **state)
{
	(void)state;
	play(1, NSHAPE + 1);
}

static void test_two_workers(void **state)
{
	(void)state;
	play(2, MAXINST);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_worker),
	    cmocka_unit_test(test_two_workers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
