/* Benchmark: touch (core/README.md "Touch and grabs"). 8 users each touching 50 instances
 * with both hands: 400 instances of the default definition (one 12 x 3 cm verlet
 * ponytail), each given two hand capsules (r 4 cm, 8 cm long) swept to and fro through its
 * hair at up to 1 m/s every tick, heads swaying; 60 Hz ticks of 4 substeps, one thread.
 * The same world untouched (same heads, no touch) runs in the same process, alternating
 * repetitions, so the two are measured seconds apart on the same machine.
 *
 *   bench_touch [reps]                  per-tick step time, median and p99 of each
 *                                       repetition (TICKS ticks), touched and untouched;
 *                                       reported as the median over repetitions with
 *                                       their min and max
 *   bench_touch --callgrind touched|untouched TICKS
 *                                       one pass for callgrind: count inside bench_step
 *                                       (--toggle-collect=bench_step*) and divide by the
 *                                       instance-ticks printed ("CALLGRIND point_substeps N"
 *                                       is that count, the name run-bench.sh reads)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"
#include "ponytail/touch.h"
#include "scenario.h"

enum { USERS = 8, PER_USER = 50, INSTANCES = USERS * PER_USER, TICKS = 300, REPS = 5 };

static __attribute__((noinline)) void bench_step(pt_world *w, float dt, int substeps)
{
	pt_world_step(w, dt, substeps);
}

typedef struct scene {
	pt_world *w;
	pt_id ids[INSTANCES];
	int tick;
} scene;

static pt_vec3 head_pos(int i)
{
	return pt_v3((float)(i % 20), 1.5f, (float)(i / 20));
}

static void scene_init(scene *s)
{
	pt_world_def wd = pt_world_def_default();
	wd.initial_capacity = INSTANCES;
	s->w = pt_world_create(&wd);
	pt_instance_def d;
	tdef_init(&d);
	d.prewarm_s = 0.25f;
	for (int i = 0; i < INSTANCES; i++) {
		pt_pose p = {head_pos(i), pt_quat_identity()};
		s->ids[i] = pt_world_create_instance(s->w, &d, p);
	}
	pt_instance_def_fini(&d);
	s->tick = 0;
}

/* Hand j of instance i at time t: a capsule across the ponytail (along z, at the hair's
 * z), at 10 or 20 cm below its root, at x = head x + 0.15 sin(w t + phase), w = 6.67 /s
 * (1 m/s at the middle of the swing). */
static void hand(int i, int j, double t, pt_vec3 *a, pt_vec3 *b)
{
	pt_vec3 h = head_pos(i);
	float x = h.x + 0.15f * (float)sin(6.67 * t + 0.7 * j + 0.1 * i);
	float y = h.y + 0.06f - 0.1f * (float)(j + 1), z = h.z - 0.09f;
	*a = pt_v3(x, y, z - 0.04f);
	*b = pt_v3(x, y, z + 0.04f);
}

/* One tick: heads sway; touched, each instance's two hands are set; returns the step's
 * seconds. */
static double scene_tick(scene *s, int touched)
{
	double t = s->tick / 60.0, dt = 1.0 / 60.0;
	for (int i = 0; i < INSTANCES; i++) {
		pt_pose p = {head_pos(i), pt_quat_identity()};
		p.p.x += 0.02f * (float)sin(2.0 * t + i);
		pt_world_set_head(s->w, s->ids[i], p);
		if (!touched)
			continue;
		pt_touch h[2];
		memset(h, 0, sizeof h);
		for (int j = 0; j < 2; j++) {
			h[j].shape = PT_SHAPE_CAPSULE;
			h[j].radius = 0.04f;
			hand(i, j, t, &h[j].a0, &h[j].b0);
			hand(i, j, t + dt, &h[j].a1, &h[j].b1);
		}
		pt_world_set_touch(s->w, s->ids[i], h, 2);
	}
	double t0 = bench_now();
	bench_step(s->w, (float)dt, 4);
	s->tick++;
	return bench_now() - t0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median and p99 (us) of one repetition of TICKS ticks. */
static void rep(scene *s, int touched, double *median, double *p99)
{
	double us[TICKS];
	for (int k = 0; k < TICKS; k++)
		us[k] = scene_tick(s, touched) * 1e6;
	qsort(us, TICKS, sizeof us[0], cmp);
	*median = us[TICKS / 2];
	*p99 = us[(TICKS * 99) / 100];
}

static void stats(double *v, int n, double *med, double *lo, double *hi)
{
	qsort(v, (size_t)n, sizeof v[0], cmp);
	*med = v[n / 2], *lo = v[0], *hi = v[n - 1];
}

int main(int argc, char **argv)
{
	static scene s[2];
	if (argc > 1 && strcmp(argv[1], "--callgrind") == 0) {
		int touched = argc > 2 && strcmp(argv[2], "touched") == 0;
		int ticks = argc > 3 ? atoi(argv[3]) : 0;
		if (argc < 4 || ticks < 1) {
			fprintf(stderr, "usage: bench_touch --callgrind touched|untouched TICKS(>=1)\n");
			return 2;
		}
		scene_init(&s[0]);
		for (int k = 0; k < ticks; k++)
			scene_tick(&s[0], touched);
		printf("CALLGRIND point_substeps %lld\n", (long long)INSTANCES * ticks);
		pt_world_destroy(s[0].w);
		return 0;
	}
	int reps = argc > 1 ? atoi(argv[1]) : REPS;
	if (reps < 1 || reps > 100)
		reps = REPS;
	double med[2][100], p99[2][100], ratio[100];
	for (int k = 0; k < 2; k++) {
		scene_init(&s[k]);
		for (int t = 0; t < 60; t++) /* settle, and warm the caches */
			scene_tick(&s[k], k);
	}
	for (int r = 0; r < reps; r++) {
		for (int k = 0; k < 2; k++)
			rep(&s[k], k, &med[k][r], &p99[k][r]);
		ratio[r] = med[1][r] / med[0][r];
	}
	double m[2], ml[2], mh[2], p[2], pl[2], ph[2], q, ql, qh;
	for (int k = 0; k < 2; k++) {
		stats(med[k], reps, &m[k], &ml[k], &mh[k]);
		stats(p99[k], reps, &p[k], &pl[k], &ph[k]);
	}
	stats(ratio, reps, &q, &ql, &qh);
	printf("touch: %d users x %d instances (default verlet ponytail), 2 hand capsules each, "
	       "60 Hz x 4 substeps, %d reps of %d ticks\n",
	       USERS, PER_USER, reps, TICKS);
	const char *what[2] = {"untouched", "touched"};
	for (int k = 0; k < 2; k++) {
		printf("  %-9s step median %.1f us (%.1f-%.1f), p99 %.1f us (%.1f-%.1f)\n", what[k], m[k],
		       ml[k], mh[k], p[k], pl[k], ph[k]);
		printf("METRIC core.touch.%s_step_us_median %.1f us per tick, %d instances %s (median "
		       "of %d reps: %.1f-%.1f)\n",
		       what[k], m[k], INSTANCES, k ? "each touched by two hands" : "without touch",
		       reps, ml[k], mh[k]);
		printf("METRIC core.touch.%s_step_us_p99 %.1f us p99 tick (median of %d reps: "
		       "%.1f-%.1f)\n",
		       what[k], p[k], reps, pl[k], ph[k]);
	}
	printf("METRIC core.touch.touched_over_untouched %.2f x median step time, same run (%.2f-%.2f)\n",
	       q, ql, qh);
	printf("METRIC core.touch.us_per_touched_instance_tick %.2f us extra per touched "
	       "instance-tick (median difference / %d)\n",
	       (m[1] - m[0]) / INSTANCES, INSTANCES);
	for (int k = 0; k < 2; k++)
		pt_world_destroy(s[k].w);
	return 0;
}
