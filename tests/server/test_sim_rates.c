/* Per-viewer rates of both codings in the sim (server/sim_frame.c, frame_ring.h; issue 15):
 * a compact stream watched at 30, 20 or 10 Hz has a record exactly on the ticks that are
 * multiples of its divisor (2, 3, 6 at a 60 Hz tick) and on no other, carrying that step
 * (compact flags bits 2..5, PROTOCOL.md 11.2); decoded with the record's step, each stream's
 * points lie within max_error_m of the simulated points of that tick (so within twice it
 * of the 60 Hz compact and classic streams'); a keyframe request is per coding and stream;
 * a stream that missed due ticks restarts from a keyframe (the gap rule); a slot nobody
 * watches gets no record of any stream and no encoder beyond the classic 60 Hz one. The
 * sim runs in-process, tick by tick, on a stress-driven instance: nothing here is timed. */
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

enum { ID = 7, MAXP = PT_MAX_JOINTS };

typedef struct fx_t {
	cmdq_t *q;
	frame_ring_t *ring;
	sim_t *s;
	int64_t deadline;
	int slot;
	frame_set_t *fs; /* held between tick() calls */
} fx_t;

/* A sim of cfg with its queue and ring, no instances yet. */
static fx_t *fx_open(const sim_config_t *cfg)
{
	fx_t *f = calloc(1, sizeof *f);
	assert_non_null(f);
	f->q = cmdq_create(64);
	f->ring = frame_ring_create(64);
	f->s = sim_create(cfg, f->q, f->ring);
	assert_non_null(f->s);
	f->deadline = sim_mono_ns();
	return f;
}

static int setup(void **state)
{
	sim_config_t cfg = {.tick_hz = 60, .substeps = 4, .workers = 1, .keyframe_interval = 60};
	fx_t *f = fx_open(&cfg);
	driver_t drv = {1, pt_motion_default(PT_MOTION_STRESS)};
	pt_instance_def d;
	tdef_init(&d);
	d.prewarm_s = 0;
	assert_int_equal(sim_preload(f->s, ID, &d, &drv, NULL), 0);
	pt_instance_def_fini(&d);
	f->slot = sim_slot_of(f->s, ID);
	assert_true(f->slot >= 0);
	f->deadline = sim_mono_ns();
	*state = f;
	return 0;
}

static void drop_events(frame_event_t *ev, int nev)
{
	for (int i = 0; i < nev; i++) {
		meta_unref(ev[i].meta);
		meta_unref(ev[i].old);
	}
}

static void fx_close(fx_t *f)
{
	frame_ring_release(f->ring, f->fs);
	sim_destroy(f->s);
	frame_ring_destroy(f->ring);
	cmdq_destroy(f->q);
	free(f);
}

static int teardown(void **state)
{
	fx_close(*state);
	return 0;
}

/* One tick; returns the entry of the instance in the frame set it published (held). */
static const frame_entry_t *tick(fx_t *f)
{
	frame_event_t *ev;
	int nev;
	frame_ring_release(f->ring, f->fs);
	f->fs = NULL;
	f->deadline += 1000000000 / 60;
	tick_once(f->s, f->deadline, 1000000000 / 60);
	f->fs = frame_ring_acquire(f->ring, NULL, &ev, &nev);
	drop_events(ev, nev);
	assert_non_null(f->fs);
	assert_int_equal(f->fs->tick, f->s->tick);
	return &f->fs->entries[f->slot];
}

static const uint8_t *data_of(const fx_t *f, const frame_entry_t *e)
{
	return f->fs->bufs[e->buf].data;
}

/* Parses the compact record at off/len of e's buffer. */
static ptp_record_c_t compact_rec(const fx_t *f, const frame_entry_t *e, uint32_t off, uint32_t len)
{
	ptp_batch_c_t one = {0, 0, 1, data_of(f, e) + off, len, 0};
	ptp_record_c_t r;
	size_t o = 0;
	assert_true(ptp_record_c_next(&one, &o, &r));
	assert_int_equal(o, len);
	assert_int_equal(r.id, ID);
	return r;
}

/* Largest distance between the decoded points and the instance's simulated ones now. */
static double error_now(const fx_t *f, const float *xyz, int n)
{
	static pt_vec3 p[MAXP];
	int m = pt_world_read_points(f->s->world, f->s->inst[f->slot].pid, p, MAXP);
	double worst = 0;
	assert_int_equal(m, n);
	for (int i = 0; i < n; i++) {
		double dx = xyz[3 * i] - p[i].x, dy = xyz[3 * i + 1] - p[i].y,
		       dz = xyz[3 * i + 2] - p[i].z;
		worst = fmax(worst, sqrt(dx * dx + dy * dy + dz * dz));
	}
	return worst;
}

static double dist_max(const float *a, const float *b, int n)
{
	double worst = 0;
	for (int i = 0; i < n; i++) {
		double dx = a[3 * i] - b[3 * i], dy = a[3 * i + 1] - b[3 * i + 1],
		       dz = a[3 * i + 2] - b[3 * i + 2];
		worst = fmax(worst, sqrt(dx * dx + dy * dy + dz * dz));
	}
	return worst;
}

static void test_divisors_and_shared_streams(void **state)
{
	(void)state;
	for (int c = 0; c < FRAME_CODINGS; c++) {
		static const int want[FRAME_RATES] = {1, 2, 3, 6};
		for (int r = 0; r < FRAME_RATES; r++) {
			assert_int_equal(frame_rate_divisor(60, c, r), want[r]);
			assert_int_equal(frame_rate_stream(60, c, r), r);
		}
		/* a 20 Hz tick: 60, 30 and 20 Hz are every tick, one stream; 10 Hz every 2nd */
		assert_int_equal(frame_rate_stream(20, c, 1), 0);
		assert_int_equal(frame_rate_stream(20, c, 2), 0);
		assert_int_equal(frame_rate_stream(20, c, 3), 3);
		assert_int_equal(frame_rate_divisor(20, c, 3), 2);
	}
	/* the step a record can carry: 32 classic (bits 1..5), 16 compact (bits 2..5) */
	assert_int_equal(frame_rate_divisor(240, FRAME_CLASSIC, 3), 24);
	assert_int_equal(frame_rate_divisor(240, FRAME_COMPACT, 3), 16);
	assert_int_equal(frame_rate_divisor(1000, FRAME_CLASSIC, 3), 32);
	assert_int_equal(frame_rate_stream(1000, FRAME_CLASSIC, 3), 1); /* 33 -> 32, as 30 Hz */
	assert_int_equal(frame_rate_stream(1000, FRAME_COMPACT, 3), 1); /* 30, 20, 10: all 16 */
	/* index 0 (rate_hz 0 and 60, and every 1.0/1.1 connection) is every tick at any tick
	 * rate: at 120 Hz round(120 / 60) = 2 would put a step in records that cannot say it */
	for (int c = 0; c < FRAME_CODINGS; c++) {
		assert_int_equal(frame_rate_divisor(120, c, 0), 1);
		assert_int_equal(frame_rate_divisor(1000, c, 0), 1);
		assert_int_equal(frame_rate_divisor(120, c, 1), 4);
		assert_int_equal(frame_rate_stream(120, c, 1), 1);
	}
	/* halves round up: a 45 Hz tick at 30 Hz is 1.5 -> every 2nd tick; 15 Hz at 10 too */
	assert_int_equal(frame_rate_divisor(45, FRAME_CLASSIC, 1), 2);
	assert_int_equal(frame_rate_divisor(15, FRAME_CLASSIC, 3), 2);
}

/* Compact streams at 60, 30, 20 and 10 Hz and the classic 60 Hz one, all watched: 72
 * ticks, every record decoded with its own step and checked against the simulation. */
static void test_compact_streams_per_rate(void **state)
{
	fx_t *f = *state;
	static float out[FRAME_RATES][3 * MAXP], classic[3 * MAXP];
	ptp_decoder_t *dec[FRAME_RATES], *dcl;
	const ptp_shape_t *shape = &f->s->inst[f->slot].meta->shape;
	int n = ptp_shape_point_count(shape), count[FRAME_RATES] = {0}, deltas[FRAME_RATES] = {0};
	double bound = ptp_encoder_params_default().max_error_m, worst[FRAME_RATES] = {0};
	for (int r = 0; r < FRAME_RATES; r++) {
		frame_ring_watch(f->ring, f->slot, FRAME_COMPACT, r, 1000);
		assert_non_null(dec[r] = ptp_decoder_create(shape));
	}
	frame_ring_watch(f->ring, f->slot, FRAME_CLASSIC, 0, 1000);
	assert_non_null(dcl = ptp_decoder_create(shape));
	for (int k = 0; k < 72; k++) {
		const frame_entry_t *e = tick(f);
		uint64_t T = f->fs->tick;
		/* the classic 60 Hz stream of the same tick */
		const frame_rec_t *cr = &e->rec[FRAME_CLASSIC][0];
		ptp_frame_batch_t cb = {T, 0, 1, data_of(f, e) + cr->off, cr->len, 0};
		ptp_record_t crec;
		size_t co = 0;
		assert_true(cr->len > 0);
		assert_true(ptp_record_next(&cb, &co, &crec));
		assert_int_equal(ptp_decoder_apply(dcl, T, &crec, classic, (size_t)n), PTP_OK);
		for (int r = 0; r < FRAME_RATES; r++) {
			const frame_rec_t *fr = &e->rec[FRAME_COMPACT][r];
			uint64_t d = (uint64_t)f->s->div[FRAME_COMPACT][r];
			/* never the classic slower streams: nobody watches them */
			if (r > 0)
				assert_int_equal(e->rec[FRAME_CLASSIC][r].len, 0);
			if (T % d != 0) {
				assert_int_equal(fr->len, 0); /* not due: not encoded */
				continue;
			}
			assert_true(fr->len > 0);
			assert_int_equal(fr->key_len, 0); /* nobody asked for one */
			ptp_record_c_t rec = compact_rec(f, e, fr->off, fr->len);
			assert_int_equal(rec.step, d);
			assert_int_equal(!!(rec.flags & PTP_RECORD_KEY), fr->delta_is_key);
			/* decoded with the record's step; a delta needs the record d ticks before
			 */
			assert_int_equal(
			    ptp_decoder_apply_c(dec[r], T, rec.step, &rec, NULL, out[r], (size_t)n),
			    PTP_OK);
			worst[r] = fmax(worst[r], error_now(f, out[r], n));
			assert_true(dist_max(out[r], out[0], n) <= 2 * bound + 1e-6);
			assert_true(dist_max(out[r], classic, n) <= 2 * bound + 1e-6);
			count[r]++;
			deltas[r] += !fr->delta_is_key;
		}
	}
	for (int r = 0; r < FRAME_RATES; r++) {
		/* ticks 1..72: exactly the multiples of the divisor */
		assert_int_equal(count[r], 72 / f->s->div[FRAME_COMPACT][r]);
		/* a key first, one a second after (keyframe_interval is kept in time) */
		assert_true(deltas[r] >= count[r] - 2);
		assert_true(worst[r] <= bound + 1e-6);
		print_message("compact stream %d Hz: %d records, %d deltas, worst %.3f mm\n",
		              frame_rate_hz[r], count[r], deltas[r], worst[r] * 1e3);
		ptp_decoder_destroy(dec[r]);
	}
	ptp_decoder_destroy(dcl);
}

/* A keyframe request names a coding and a stream: it adds a keyframe record to that
 * stream's next due tick, step included, and to no other stream. */
static void test_keyframe_request_per_stream(void **state)
{
	fx_t *f = *state;
	static float out[3 * MAXP];
	const ptp_shape_t *shape = &f->s->inst[f->slot].meta->shape;
	int n = ptp_shape_point_count(shape);
	frame_ring_watch(f->ring, f->slot, FRAME_COMPACT, 2, 1000);
	frame_ring_watch(f->ring, f->slot, FRAME_COMPACT, 0, 1000);
	for (int k = 0; k < 13; k++)
		tick(f); /* past the streams' first keyframes: tick 13 */
	frame_ring_request_key(f->ring, ID, FRAME_COMPACT, 2);
	int seen = 0;
	for (int k = 0; k < 3; k++) {
		const frame_entry_t *e = tick(f);
		uint64_t T = f->fs->tick;
		assert_int_equal(e->rec[FRAME_COMPACT][0].key_len, 0); /* not asked */
		assert_int_equal(e->rec[FRAME_CLASSIC][0].key_len, 0);
		const frame_rec_t *fr = &e->rec[FRAME_COMPACT][2];
		if (T % 3 != 0) {
			assert_int_equal(fr->len, 0);
			continue;
		}
		/* the due tick (15): a delta for followers, a keyframe for the one who asked */
		assert_int_equal(T, 15);
		assert_false(fr->delta_is_key);
		assert_true(fr->key_len > 0);
		ptp_record_c_t key = compact_rec(f, e, fr->key_off, fr->key_len);
		assert_int_equal(key.step, 3);
		assert_int_equal(key.flags & (PTP_RECORD_KEY | PTP_RECORD_ABS),
		                 PTP_RECORD_KEY | PTP_RECORD_ABS);
		/* a fresh decoder (a late joiner at 20 Hz) starts from it */
		ptp_decoder_t *late = ptp_decoder_create(shape);
		assert_int_equal(ptp_decoder_apply_c(late, T, key.step, &key, NULL, out, (size_t)n),
		                 PTP_OK);
		assert_true(error_now(f, out, n) <=
		            ptp_encoder_params_default().max_error_m + 1e-6);
		/* the delta of the same tick needs history the late joiner does not have */
		ptp_record_c_t delta = compact_rec(f, e, fr->off, fr->len);
		ptp_decoder_t *fresh = ptp_decoder_create(shape);
		assert_int_equal(
		    ptp_decoder_apply_c(fresh, T, delta.step, &delta, NULL, out, (size_t)n),
		    PTP_ENOKEY);
		ptp_decoder_destroy(fresh);
		/* and then follows the shared deltas: the next due tick's */
		for (int j = 0; j < 3; j++)
			e = tick(f);
		fr = &e->rec[FRAME_COMPACT][2];
		assert_int_equal(f->fs->tick, 18);
		assert_int_equal(fr->key_len, 0); /* asked once */
		delta = compact_rec(f, e, fr->off, fr->len);
		assert_int_equal(
		    ptp_decoder_apply_c(late, 18, delta.step, &delta, NULL, out, (size_t)n),
		    PTP_OK);
		ptp_decoder_destroy(late);
		seen = 1;
		break;
	}
	assert_true(seen);
	/* a classic request makes a classic record (watched or not) and no compact key */
	frame_ring_request_key(f->ring, ID, FRAME_CLASSIC, 3);
	for (int k = 0; k < 6; k++) {
		const frame_entry_t *e = tick(f);
		assert_int_equal(e->rec[FRAME_COMPACT][2].key_len, 0);
		if (f->fs->tick % 6 == 0)
			assert_true(e->rec[FRAME_CLASSIC][3].len > 0);
		else
			assert_int_equal(e->rec[FRAME_CLASSIC][3].len, 0);
	}
}

/* The gap rule per stream: a 10 Hz compact stream left unwatched over due ticks is not
 * encoded then, and its next record is a keyframe. */
static void test_gap_restarts_from_a_keyframe(void **state)
{
	fx_t *f = *state;
	frame_ring_watch(f->ring, f->slot, FRAME_COMPACT, 3, 14); /* ticks 1..14 */
	int records = 0;
	for (int k = 0; k < 14; k++) {
		const frame_entry_t *e = tick(f);
		records += e->rec[FRAME_COMPACT][3].len > 0;
		if (f->fs->tick == 12)
			assert_false(e->rec[FRAME_COMPACT][3].delta_is_key); /* a delta of 6 */
	}
	assert_int_equal(records, 2);  /* ticks 6 and 12 */
	for (int k = 0; k < 16; k++) { /* ticks 15..30: 18, 24, 30 due and unwatched */
		const frame_entry_t *e = tick(f);
		for (int c = 0; c < FRAME_CODINGS; c++)
			for (int r = c == FRAME_CLASSIC ? 1 : 0; r < FRAME_RATES; r++)
				assert_int_equal(e->rec[c][r].len, 0);
	}
	frame_ring_watch(f->ring, f->slot, FRAME_COMPACT, 3, 1000);
	const frame_entry_t *e = NULL;
	while (f->fs->tick % 6 != 0 || f->fs->tick == 30)
		e = tick(f);
	assert_int_equal(f->fs->tick, 36);
	assert_true(e->rec[FRAME_COMPACT][3].len > 0);
	assert_true(e->rec[FRAME_COMPACT][3].delta_is_key); /* 36 - 6 was never sent */
	ptp_record_c_t rec =
	    compact_rec(f, e, e->rec[FRAME_COMPACT][3].off, e->rec[FRAME_COMPACT][3].len);
	assert_int_equal(rec.step, 6);
	assert_true(rec.flags & PTP_RECORD_ABS);
}

/* Nobody watches: no record of any stream, no encoder made, whatever the tick. */
static void test_unwatched_slot_gets_nothing(void **state)
{
	fx_t *f = *state;
	const sim_inst_t *in = &f->s->inst[f->slot];
	for (int k = 0; k < 12; k++) {
		const frame_entry_t *e = tick(f);
		for (int c = 0; c < FRAME_CODINGS; c++)
			for (int r = 0; r < FRAME_RATES; r++)
				assert_int_equal(e->rec[c][r].len, 0);
		assert_null(e->snap);
	}
	for (int c = 0; c < FRAME_CODINGS; c++)
		for (int r = 0; r < FRAME_RATES; r++)
			if (c != FRAME_CLASSIC || r != 0)
				assert_null(in->enc[c][r]);
}

/* Driven heads (server/driver.c) follow their motions whether the pool evaluates them
 * (PARALLEL_MIN driven or more, two workers) or the tick thread does (fewer), and the
 * count that chooses (sim_t.ndriven) follows creates, updates both ways and deletes. */
static void expect_driven_heads(sim_t *s, int n)
{
	int driven = 0;
	for (int i = 0; i < n; i++) {
		int slot = sim_slot_of(s, (uint64_t)(100 + i));
		if (slot < 0)
			continue;
		sim_inst_t *in = &s->inst[slot];
		driven += in->driver.enabled != 0;
		if (!in->driver.enabled)
			continue;
		pt_pose want = driver_pose(&in->driver, (double)(s->tick - in->drive_origin) / 60.0);
		pt_pose got;
		pt_world_get_head(s->world, in->pid, &got);
		assert_float_equal(got.p.x, want.p.x, 1e-6);
		assert_float_equal(got.p.y, want.p.y, 1e-6);
		assert_float_equal(got.q.y, want.q.y, 1e-6);
	}
	assert_int_equal(s->ndriven, driven);
}

static void test_drivers_counted_and_evaluated(void **state)
{
	(void)state;
	enum { N = PARALLEL_MIN + PARALLEL_MIN / 3 + 8 }; /* 69 driven, then 60, then 61 */
	sim_config_t cfg = {.tick_hz = 60, .substeps = 1, .workers = 2, .keyframe_interval = 60};
	fx_t *f = fx_open(&cfg);
	sim_t *s = f->s;
	driver_t drv = {1, pt_motion_default(PT_MOTION_SHAKE)}, none = {0};
	pt_instance_def d;
	tdef_init(&d);
	d.prewarm_s = 0;
	for (int i = 0; i < N; i++) /* every fourth undriven */
		assert_int_equal(sim_preload(s, (uint64_t)(100 + i), &d, i % 4 ? &drv : &none, NULL), 0);
	for (int round = 0; round < 3; round++) {
		for (int k = 0; k < 3; k++) {
			tick(f);
			expect_driven_heads(s, N);
		}
		/* round 0 -> 1: below PARALLEL_MIN driven (undriven updates, a delete);
		 * round 1 -> 2: one undriven instance gets a driver */
		if (round == 0) {
			assert_true(s->ndriven >= PARALLEL_MIN);
			for (int i = 1; i < 12; i++)
				if (i % 4)
					assert_int_equal(inst_update(s, sim_slot_of(s, (uint64_t)(100 + i)), &d, &none, NULL), CMD_OK);
			inst_delete(s, sim_slot_of(s, 100 + 13));
			assert_true(s->ndriven < PARALLEL_MIN);
		} else if (round == 1) {
			int before = s->ndriven;
			assert_int_equal(inst_update(s, sim_slot_of(s, 100 + 4), &d, &drv, NULL), CMD_OK);
			assert_int_equal(s->ndriven, before + 1);
		}
	}
	pt_instance_def_fini(&d);
	fx_close(f);
}

/* frame_set_find_room_hint: a right hint answers without the search, a stale, negative or
 * out-of-range one still finds the room and is corrected, a missing room gives -1 and
 * leaves the hint; the answer always equals frame_set_find_room's. */
static void test_room_hint_lookup(void **state)
{
	(void)state;
	static const char *names[] = {"alpha", "bravo", "charlie", "delta"};
	sim_config_t cfg = {.tick_hz = 60, .substeps = 1, .workers = 1, .keyframe_interval = 60};
	fx_t *f = fx_open(&cfg);
	driver_t none = {0};
	pt_instance_def d;
	tdef_init(&d);
	d.prewarm_s = 0;
	for (int i = 0; i < 8; i++) {
		snprintf(d.room, sizeof d.room, "%s", names[i % 4]);
		assert_int_equal(sim_preload(f->s, (uint64_t)(200 + i), &d, &none, NULL), 0);
	}
	tick(f);
	const frame_set_t *fs = f->fs;
	assert_int_equal(fs->nrooms, 4);
	for (int k = 0; k < 4; k++) {
		int want = frame_set_find_room(fs, names[k]);
		assert_true(want >= 0);
		assert_string_equal(fs->rooms[want].room, names[k]);
		int hints[] = {-1, (want + 1) % 4, 99, want};
		for (size_t h = 0; h < sizeof hints / sizeof hints[0]; h++) {
			int hint = hints[h];
			assert_int_equal(frame_set_find_room_hint(fs, names[k], &hint), want);
			assert_int_equal(hint, want);
		}
	}
	int hint = 2;
	assert_int_equal(frame_set_find_room_hint(fs, "zulu", &hint), -1);
	assert_int_equal(hint, 2);
	pt_instance_def_fini(&d);
	fx_close(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_divisors_and_shared_streams),
	    cmocka_unit_test(test_drivers_counted_and_evaluated),
	    cmocka_unit_test(test_room_hint_lookup),
	    cmocka_unit_test_setup_teardown(test_compact_streams_per_rate, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_keyframe_request_per_stream, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_gap_restarts_from_a_keyframe, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unwatched_slot_gets_nothing, setup, teardown),
	};
	return cmocka_run_group_tests_name("sim_rates", tests, NULL, NULL);
}
