/* What recordings cost (issue 39 item 6), in-process on the daemon's own tick
 * (server/sim.c tick_once, one worker):
 *
 *   bench_record                 both figures below, as METRIC lines (make bench)
 *   bench_record tick on|off N T [KEEP WARM]
 *                                callgrind: N driven instances for T ticks with recording
 *                                on or off (valgrind --tool=callgrind --toggle-collect=tick_once;
 *                                prints "CALLGRIND point_substeps N*T": per instance-tick)
 *
 * 1. The tick's work at 1,000 instances with recording on and off: rounds alternate, the
 *    median of each, their ratio; in the steady state (the ring full, its chunks reused)
 *    and while a ring fills (fresh pages fault in: ~16 a tick here). Every instance is
 *    driven (the driver's pose is recorded every tick, as a client's would be), watched
 *    by nobody.
 * 2. Replay: an hour of a 10-instance room (216,000 ticks, a pose per instance per tick)
 *    recorded by the sim, then re-simulated and every hash checked (ponytail replay
 *    --verify's loop, pt_replay_*), timed.
 */
#define _GNU_SOURCE /* server/pool.c, included below, binds threads to CPUs */
#include <stdio.h>
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
#include "../../server/sim_frame.c"
#include "../../server/sim_guard.c"
#include "../../server/sim_wind.c"
#include "../../server/sim_touch.c"
#include "../../server/sim_grab.c"
#include "../../server/interact.c"
#include "../../server/sim_record.c"
#include "benchutil.h"
#include "testdef.h"

int log_min_level = LOG_ERROR;
void log_emit(int level, const char *file, const char *fmt, ...)
{
	(void)level, (void)file, (void)fmt;
}

typedef struct room {
	cmdq_t *q;
	frame_ring_t *ring;
	rec_t *rec;
	sim_t *s;
} room;

static void room_open(room *r, int n, int record, int seconds)
{
	sim_config_t cfg = {.tick_hz = 60, .substeps = 4, .workers = 1, .keyframe_interval = 60};
	r->q = cmdq_create(64);
	r->ring = frame_ring_create(n);
	r->rec = record ? rec_create(seconds, (size_t)4 << 30, 60, 4, NULL) : NULL;
	cfg.rec = r->rec;
	r->s = sim_create(&cfg, r->q, r->ring);
	if (!r->q || !r->ring || !r->s || (record && !r->rec))
		exit(1);
	for (int i = 0; i < n; i++) {
		pt_instance_def d;
		tdef_init(&d);
		d.prewarm_s = 0;
		snprintf(d.room, sizeof d.room, "room%d", i / 20); /* rooms of 20 */
		driver_t drv = {1, pt_motion_default(i % 2 ? PT_MOTION_SHAKE : PT_MOTION_NOD)};
		drv.motion.period = 0.5 + 0.01 * i;
		if (sim_preload(r->s, (uint64_t)i + 1, &d, &drv, NULL) != 0)
			exit(1);
		pt_instance_def_fini(&d);
	}
}

static void room_close(room *r)
{
	sim_destroy(r->s);
	rec_destroy(r->rec);
	frame_ring_destroy(r->ring);
	cmdq_destroy(r->q);
}

static void ticks(room *r, int t)
{
	int64_t deadline = sim_mono_ns();
	for (int k = 0; k < t; k++) {
		deadline += 1000000000 / 60;
		tick_once(r->s, deadline, 1000000000 / 60);
	}
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The tick's work, us per tick, on and off, ROUNDS alternating rounds of T ticks. keep:
 * the recording's seconds; warm: ticks first. With keep 1 and 1,300 ticks of warm-up, a
 * room's ring is full and recycles its chunks (the daemon's state once --record-seconds
 * have passed); with keep 300 and none, every chunk is fresh memory whose pages fault in
 * (the first --record-seconds of a room). */
static void tick_cost(int keep, int warm, const char *key, const char *what)
{
	enum { N = 1000, T = 120, ROUNDS = 7 };
	double on[ROUNDS], off[ROUNDS];
	room r[2];
	room_open(&r[0], N, 0, 0);
	room_open(&r[1], N, 1, keep);
	ticks(&r[0], 30 + warm), ticks(&r[1], 30 + warm);
	for (int k = 0; k < ROUNDS; k++)
		for (int m = 0; m < 2; m++) {
			double t0 = bench_now();
			ticks(&r[m], T);
			(m ? on : off)[k] = (bench_now() - t0) / T * 1e6;
		}
	qsort(on, ROUNDS, sizeof *on, cmp), qsort(off, ROUNDS, sizeof *off, cmp);
	double mon = on[ROUNDS / 2], moff = off[ROUNDS / 2];
	printf("METRIC server.record.%s_tick_us %.1f us 1,000 driven instances (verlet, 12 points) in "
	       "rooms of 20, recording on, %s: tick_once's wall time per tick, median of %d rounds "
	       "of %d ticks (range %.1f-%.1f)\n", key, mon, what, ROUNDS, T, on[0], on[ROUNDS - 1]);
	printf("METRIC server.record.%s_tick_us_off %.1f us same, recording off (range %.1f-%.1f)\n",
	       key, moff, off[0], off[ROUNDS - 1]);
	printf("METRIC server.record.%s_overhead_pct %.1f %% (on - off) / off of those medians%s\n",
	       key, 100.0 * (mon - moff) / moff, keep == 1 ? " (target <= 5)" : "");
	room_close(&r[0]);
	room_close(&r[1]);
}

/* An hour of a 10-instance room, recorded by the sim, replayed and verified. */
static void replay_hour(void)
{
	enum { N = 10, SECONDS = 3600 };
	room r;
	room_open(&r, N, 1, SECONDS);
	double t0 = bench_now();
	ticks(&r, SECONDS * 60);
	double rec_s = bench_now() - t0;
	unsigned char *buf;
	size_t n;
	if (rec_read(r.rec, "room0", SECONDS, &buf, &n) != 0)
		exit(1);
	room_close(&r);
	t0 = bench_now();
	char msg[256];
	pt_rec_reader rd;
	pt_rec_info info;
	pt_replay *rp = NULL;
	if (pt_rec_open(&rd, buf, n, &info, msg, sizeof msg) != 0 || !(rp = pt_replay_create(&info, PT_KERNEL_AUTO))) {
		fprintf(stderr, "bench_record: %s\n", msg);
		exit(1);
	}
	pt_rec_event ev;
	long steps = 0;
	int got;
	while ((got = pt_rec_next(&rd, &ev, msg, sizeof msg)) == 1) {
		if (pt_replay_apply(rp, &ev, msg, sizeof msg) != 0)
			break;
		if (ev.type == PT_REC_STEP) {
			steps++;
			if (pt_replay_mismatch(rp, &ev) >= 0) {
				fprintf(stderr, "bench_record: tick %llu differs\n", (unsigned long long)ev.tick);
				exit(1);
			}
		}
	}
	double replay_s = bench_now() - t0;
	if (got != 0) {
		fprintf(stderr, "bench_record: %s\n", msg);
		exit(1);
	}
	printf("METRIC server.record.replay_s_hour_10 %.1f s replay of one hour of a 10-instance room "
	       "(%ld ticks, a pose per instance per tick, every hash checked; %.1f MB), in-process "
	       "(target <= 60; recording it took %.1f s)\n", replay_s, steps, (double)n / 1e6, rec_s);
	pt_replay_destroy(rp);
	free(buf);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "tick") == 0) {
		int n = argc > 3 ? atoi(argv[3]) : 1000, t = argc > 4 ? atoi(argv[4]) : 30;
		if (argc < 3 || n < 1 || t < 1) {
			fprintf(stderr, "usage: bench_record tick on|off N T [KEEP WARM]\n");
			return 2;
		}
		int keep = argc > 5 ? atoi(argv[5]) : 300, warm = argc > 6 ? atoi(argv[6]) : 0;
		room r;
		room_open(&r, n, strcmp(argv[2], "on") == 0, keep > 0 ? keep : 300);
		ticks(&r, warm);
		ticks(&r, t);
		printf("CALLGRIND point_substeps %lld\n", (long long)n * t);
		room_close(&r);
		return 0;
	}
	tick_cost(1, 1300, "steady", "its ring full and recycling (after --record-seconds)");
	tick_cost(300, 0, "filling", "its ring filling with fresh memory (a room's first --record-seconds)");
	replay_hour();
	return 0;
}
