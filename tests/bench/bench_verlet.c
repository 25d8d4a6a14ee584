/* Benchmark: the verlet solver at scale.
 * 10,000 instances x 3 strands x 12 points, 3 iterations, head sphere + neck capsule,
 * single thread, one substep per step, heads shaking with different phases so that
 * strands touch the colliders. Reports the best of several repetitions. */
#include <stdio.h>
#include <stdlib.h>

#include "benchutil.h"
#include "scenario.h"

enum { INSTANCES = 10000, STRANDS = 3, POINTS = 12, STEPS = 30, REPS = 5 };

static double run(pt_kernel kernel, int instances, int substeps)
{
	pt_world_def wd = pt_world_def_default();
	wd.kernel = kernel;
	wd.initial_capacity = instances;
	pt_world *w = pt_world_create(&wd);
	pt_instance_def d;
	scenario_twin_tails(&d);
	tdef_strands(&d, STRANDS);
	pt_strand_def_reset(&d.strands[2]);
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
	for (int r = 0; r < REPS; r++) {
		double t0 = bench_now();
		for (int s = 0; s < STEPS; s++, tick++) {
			for (int i = 0; i < instances; i++) {
				m.base.p.x = (float)(i % 100);
				pt_world_set_head(w, ids[i], pt_motion_pose(&m, tick / 60.0 + i * 0.01));
			}
			pt_world_step(w, 1.0f / 60.0f, substeps);
		}
		double el = bench_now() - t0;
		if (el < best)
			best = el;
	}
	free(ids);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
	return best * 1e9 / ((double)instances * STRANDS * POINTS * STEPS * substeps);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : INSTANCES;
	if (n < 1)
		n = INSTANCES;
	/* argv[2] = "auto" runs only the default kernel (for profiling) */
	int only_auto = argc > 2 && argv[2][0] == 'a';
	double ns = run(PT_KERNEL_AUTO, n, 1);
	double ns_scalar = only_auto ? 0.0 : run(PT_KERNEL_SCALAR, n, 1);
	double ns4 = only_auto ? 0.0 : run(PT_KERNEL_AUTO, n, 4);
	double per_core = 1e9 / (ns4 * 60.0 * 4.0 * STRANDS * POINTS);
	printf("verlet: %d instances x %d strands x %d points, 3 iterations, sphere + capsule\n", n,
	       STRANDS, POINTS);
	printf("METRIC core.verlet.ns_per_point_substep %.3f ns per point-substep (AVX2 where available; "
	       "includes setting head poses)\n", ns);
	printf("METRIC core.verlet.ns_per_point_substep_scalar %.3f ns scalar kernel\n", ns_scalar);
	printf("METRIC core.verlet.ns_per_point_substep_x4 %.3f ns same, stepped 4 substeps per tick (the server's default)\n",
	       ns4);
	printf("METRIC core.verlet.instances_per_core_60hz_x4 %.0f instances one core steps at 60 Hz x 4 substeps\n",
	       per_core);
	printf("METRIC core.verlet.peer_js_ratio %.1f x faster than the plugin's algorithm in JS (~80 ns per point-frame)\n",
	       80.0 / ns);
	return 0;
}
