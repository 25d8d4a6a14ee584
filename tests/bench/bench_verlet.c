/* Benchmark: the verlet solver at scale.
 * 10,000 instances x 3 strands x 12 points, 3 iterations, head sphere + neck capsule,
 * single thread, 1 and 4 substeps per 1/60 s step, heads shaking with different phases so
 * that strands touch the colliders. Reports the best of several repetitions; run-bench.sh
 * runs the program several times and reports the median of those with their spread.
 *
 *   bench_verlet [instances [auto]]      the benchmark (auto: only the default kernel at
 *                                        1 substep, for profiling)
 *   bench_verlet --callgrind N SUBSTEPS STEPS
 *                                        one pass of STEPS steps of N instances, default
 *                                        kernel, for callgrind: run-bench.sh counts the
 *                                        instructions inside bench_step (--toggle-collect)
 *                                        and divides by the point-substeps printed here
 *
 * The peer (tests/bench/peers/verlet_plugin.mjs) runs this scene in plain JavaScript. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"
#include "scenario.h"

enum { INSTANCES = 10000, STRANDS = 3, POINTS = 12, STEPS = 30, REPS = 5 };

/* The timed step, never inlined, so that callgrind's --toggle-collect=bench_step* counts
 * exactly the steps (not creation, prewarm or the head poses). */
static __attribute__((noinline)) void bench_step(pt_world *w, float dt, int substeps)
{
	pt_world_step(w, dt, substeps);
}

/* Best ns per point-substep over `reps` repetitions of `steps` steps. */
static double run(pt_kernel kernel, int instances, int substeps, int steps, int reps)
{
	pt_world_def wd = pt_world_def_default();
	wd.kernel = kernel;
	wd.initial_capacity = instances;
	pt_world *w = pt_world_create(&wd);
	pt_instance_def d = scenario_twin_tails();
	d.strand_count = STRANDS;
	d.strands[2] = pt_strand_def_default();
	d.strands[2].anchor = pt_v3(0, 0.09f, -0.08f);
	d.prewarm_s = 0.25f;
	pt_motion m = pt_motion_default(PT_MOTION_SHAKE);
	pt_id *ids = malloc(sizeof *ids * (size_t)instances);
	for (int i = 0; i < instances; i++) {
		m.base.p.x = (float)(i % 100);
		ids[i] = pt_world_create_instance(w, &d, pt_motion_pose(&m, 0));
	}
	double best = 1e30;
	int tick = 0;
	for (int r = 0; r < reps; r++) {
		double t0 = bench_now();
		for (int s = 0; s < steps; s++, tick++) {
			for (int i = 0; i < instances; i++) {
				m.base.p.x = (float)(i % 100);
				pt_world_set_head(w, ids[i], pt_motion_pose(&m, tick / 60.0 + i * 0.01));
			}
			bench_step(w, 1.0f / 60.0f, substeps);
		}
		double el = bench_now() - t0;
		if (el < best)
			best = el;
	}
	free(ids);
	pt_world_destroy(w);
	return best * 1e9 / ((double)instances * STRANDS * POINTS * steps * substeps);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--callgrind") == 0) {
		int n = argc > 2 ? atoi(argv[2]) : 0, sub = argc > 3 ? atoi(argv[3]) : 0;
		int steps = argc > 4 ? atoi(argv[4]) : 0;
		if (n < 1 || sub < 1 || sub > 16 || steps < 1) {
			fprintf(stderr, "usage: bench_verlet --callgrind INSTANCES(>=1) SUBSTEPS(1..16) "
			                "STEPS(>=1)\n");
			return 2;
		}
		run(PT_KERNEL_AUTO, n, sub, steps, 1);
		printf("CALLGRIND point_substeps %lld\n", (long long)n * STRANDS * POINTS * steps * sub);
		return 0;
	}
	int n = argc > 1 ? atoi(argv[1]) : INSTANCES;
	if (n < 1)
		n = INSTANCES;
	/* argv[2] = "auto" runs only the default kernel (for profiling) */
	int only_auto = argc > 2 && argv[2][0] == 'a';
	double ns = run(PT_KERNEL_AUTO, n, 1, STEPS, REPS);
	double ns_scalar = only_auto ? 0.0 : run(PT_KERNEL_SCALAR, n, 1, STEPS, REPS);
	double ns4 = only_auto ? 0.0 : run(PT_KERNEL_AUTO, n, 4, STEPS, REPS);
	double per_core = 1e9 / (ns4 * 60.0 * 4.0 * STRANDS * POINTS);
	printf("verlet: %d instances x %d strands x %d points, 3 iterations, sphere + capsule\n", n,
	       STRANDS, POINTS);
	printf("METRIC core.verlet.ns_per_point_substep %.3f ns per point-substep, 1 substep (AVX2 "
	       "where available; includes setting head poses)\n",
	       ns);
	if (only_auto)
		return 0;
	printf("METRIC core.verlet.ns_per_point_substep_scalar %.3f ns scalar kernel, 1 substep\n",
	       ns_scalar);
	printf("METRIC core.verlet.ns_per_point_substep_x4 %.3f ns same, stepped 4 substeps per tick "
	       "(the server's default)\n",
	       ns4);
	printf("METRIC core.verlet.instances_per_core_60hz_x4 %.0f instances one core steps at 60 Hz "
	       "x 4 substeps\n",
	       per_core);
	/* core.verlet.peer_js_ratio: run-bench.sh, from the peer's run in the same round */
	return 0;
}
