/* Benchmark harness for callgrind (no timing): the sim's encode pass (server/sim_frame.c
 * encode_part / gather_one / encode_pending) over N default instances for T ticks, in-process, one worker.
 *
 *   bench_sim_encode MODE [N] [T]
 *   MODE idle     nobody watches (the cost the demand back-channel leaves: issue 15 asks
 *                 that it stay flat with per-rate compact streams)
 *        c60      every instance watched by a compact 60 Hz viewer
 *        c10      every instance watched by a compact 10 Hz viewer
 *        k60      every instance watched by a classic 60 Hz viewer
 *
 * Count instructions with
 *   valgrind --tool=callgrind --toggle-collect=encode_part bench_sim_encode idle 1000 60
 * (`make callgrind-encode` does it for every mode) and divide by N x T. The same file
 * also builds on a tree from before the per-rate compact streams (no FRAME_KEY_CODING),
 * with idle, c60 and k60 only, to count a change against that tree.
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
#include "../../server/sim_record.c"
#include "../../server/sim_frame.c"
#include "../../server/sim_guard.c"
#include "../../server/sim_wind.c"
#include "../../server/sim_touch.c"
#include "../../server/sim_grab.c"
#include "../../server/interact.c"
#include "testdef.h"

int log_min_level = LOG_ERROR;
void log_emit(int level, const char *file, const char *fmt, ...)
{
	(void)level, (void)file, (void)fmt;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "idle";
	int n = argc > 2 ? atoi(argv[2]) : 1000, ticks = argc > 3 ? atoi(argv[3]) : 60;
	int coding = -1, rate = 0;
	if (n < 1 || n > 100000 || ticks < 1 || ticks > 100000) {
		fprintf(stderr, "usage: bench_sim_encode idle|c60|c10|k60 [N 1..100000] [T]\n");
		return 2;
	}
	if (strcmp(mode, "idle") != 0) {
#ifdef FRAME_KEY_CODING
		coding = mode[0] == 'c' ? FRAME_COMPACT : FRAME_CLASSIC;
		rate = frame_rate_index(atoi(mode + 1));
		if ((mode[0] != 'c' && mode[0] != 'k') || rate < 0) {
			fprintf(stderr, "bench_sim_encode: unknown mode %s\n", mode);
			return 2;
		}
#else /* main before issue 15's compact rates (ce45faf): one compact stream */
		coding = mode[0] == 'c';
		if (strcmp(mode + 1, "60") != 0) {
			fprintf(stderr, "bench_sim_encode: this tree has idle, c60 and k60\n");
			return 2;
		}
#endif
	}
	sim_config_t cfg = {.tick_hz = 60, .substeps = 4, .workers = 1, .keyframe_interval = 60};
	cmdq_t *q = cmdq_create(64);
	frame_ring_t *ring = frame_ring_create(n);
	sim_t *s = sim_create(&cfg, q, ring);
	driver_t drv = {1, pt_motion_default(PT_MOTION_SHAKE)};
	if (!q || !ring || !s)
		return 1;
	for (int i = 0; i < n; i++) {
		pt_instance_def d;
		tdef_init(&d);
		d.prewarm_s = 0;
		if (sim_preload(s, (uint64_t)i + 1, &d, &drv, NULL) != 0)
			return 1;
		pt_instance_def_fini(&d);
#ifdef FRAME_KEY_CODING
		if (coding >= 0)
			frame_ring_watch(ring, sim_slot_of(s, (uint64_t)i + 1), coding, rate,
			                 (uint64_t)ticks + 1);
#else
		if (coding == 1)
			frame_ring_watch_c(ring, sim_slot_of(s, (uint64_t)i + 1), (uint64_t)ticks + 1);
		else if (coding == 0)
			frame_ring_watch(ring, sim_slot_of(s, (uint64_t)i + 1), 0, (uint64_t)ticks + 1);
		(void)rate;
#endif
	}
	int64_t deadline = sim_mono_ns();
	uint64_t bytes = metrics_get(&metrics.frame_bytes_encoded);
	for (int t = 0; t < ticks; t++) {
		deadline += 1000000000 / 60;
		tick_once(s, deadline, 1000000000 / 60);
	}
	printf("bench_sim_encode %s: %d instances x %d ticks, %llu bytes encoded\n", mode, n, ticks,
	       (unsigned long long)(metrics_get(&metrics.frame_bytes_encoded) - bytes));
	sim_destroy(s);
	frame_ring_destroy(ring);
	cmdq_destroy(q);
	return 0;
}
