/* Benchmark: the springbone solver, 1,000 avatars x 4 chains x 12 joints.
 *
 * Each avatar (sb_def_avatar: vrm form, head sphere r 0.1 + neck capsule r 0.05, one
 * substep) is shaken with its own phase; only pt_world_step is timed (setting the heads
 * is the caller's cost, not the solver's). A joint-substep is one joint's tail advanced
 * by one substep with both colliders tested, so with one substep per 1/60 s step it is
 * directly comparable to three-vrm's update per joint and frame: the peer
 * tests/bench/peers/springbone_threevrm.mjs runs this scene with @pixiv/three-vrm, and
 * run-bench.sh writes core.springbone.peer_threevrm_ratio from the two runs of a round.
 * The time includes the world's per-instance work (head interpolation, colliders to
 * world space). Best of REPS repetitions after a warm-up; single thread.
 *
 *   bench_springbone                     the benchmark
 *   bench_springbone --callgrind N STEPS the vrm form only, N avatars, a warm-up of 10
 *                                        steps, then STEPS steps through bench_step for
 *                                        callgrind's --toggle-collect=bench_step* (run-bench.sh
 *                                        divides its count by the joint-substeps printed)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../springbone/sb_scenario.h"
#include "benchutil.h"

enum { AVATARS = 1000, CHAINS = 4, JOINTS = 12, WARMUP = 60, STEPS = 120, REPS = 7 };

/* The timed step, never inlined (callgrind counts inside it only). */
static __attribute__((noinline)) void bench_step(pt_world *w, float dt, int substeps)
{
	pt_world_step(w, dt, substeps);
}

typedef enum variant { PLAIN, CENTER, LIMITS, PULL } variant;

static void set_heads(pt_world *w, const pt_motion *m, int tick)
{
	for (int i = 0; i < pt_world_count(w); i++) {
		pt_pose h = pt_motion_pose(m, tick / 60.0 + 0.013 * i);
		h.p.x += 0.5f * (float)(i % 40);
		h.p.z += 0.5f * (float)(i / 40);
		pt_world_set_head(w, pt_world_id_at(w, i), h);
	}
}

/* Best ns per joint-substep for the variant: `reps` runs of `steps` after `warmup`. */
static double run(variant v, int avatars, int warmup, int steps, int reps)
{
	pt_world_def wd = pt_world_def_default();
	wd.initial_capacity = avatars;
	pt_world *w = pt_world_create(&wd);
	pt_motion m = pt_motion_default(PT_MOTION_SHAKE);
	pt_instance_def d = sb_def_avatar(JOINTS);
	for (int s = 0; s < d.strand_count; s++)
		for (int j = 0; j < JOINTS; j++) {
			pt_joint_def *jd = &d.strands[s].joints[j];
			if (v == LIMITS)
				jd->limit = j % 2 ? PT_LIMIT_CONE : PT_LIMIT_HINGE,
				jd->limit_angle = 0.6f;
			if (v == PULL)
				jd->stiffness = 0.1f;
		}
	d.springbone.center_head = v == CENTER;
	d.springbone.form = v == PULL ? PT_SPRINGBONE_PULL : PT_SPRINGBONE_VRM;
	for (int i = 0; i < avatars; i++)
		if (pt_id_is_null(pt_world_create_instance(w, &d, m.base))) {
			fprintf(stderr, "bench_springbone: out of memory\n");
			return -1.0;
		}
	int tick = 0;
	for (; tick < warmup; tick++) {
		set_heads(w, &m, tick);
		pt_world_step(w, 1.0f / 60.0f, 1);
	}
	double best = 1e30;
	for (int r = 0; r < reps; r++) {
		double el = 0.0;
		for (int k = 0; k < steps; k++, tick++) {
			set_heads(w, &m, tick);
			double t0 = bench_now();
			bench_step(w, 1.0f / 60.0f, 1);
			el += bench_now() - t0;
		}
		if (el < best)
			best = el;
	}
	unsigned long long h = (unsigned long long)pt_world_hash(w);
	pt_world_destroy(w);
	printf("springbone %-6s: %.2f ms per step for %d joints (state hash %016llx)\n",
	       (const char *[]){"vrm", "center", "limits", "pull"}[v], best / steps * 1e3,
	       avatars * CHAINS * JOINTS, h);
	return best / steps / (double)(avatars * CHAINS * JOINTS) * 1e9;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--callgrind") == 0) {
		int n = argc > 2 ? atoi(argv[2]) : 0, steps = argc > 3 ? atoi(argv[3]) : 0;
		if (n < 1 || steps < 1) {
			fprintf(stderr, "usage: bench_springbone --callgrind AVATARS(>=1) STEPS(>=1)\n");
			return 2;
		}
		if (run(PLAIN, n, 10, steps, 1) < 0.0)
			return 1;
		printf("CALLGRIND point_substeps %lld\n", (long long)n * CHAINS * JOINTS * steps);
		return 0;
	}
	double ns = run(PLAIN, AVATARS, WARMUP, STEPS, REPS);
	double center = run(CENTER, AVATARS, WARMUP, STEPS, REPS);
	double limits = run(LIMITS, AVATARS, WARMUP, STEPS, REPS);
	double pull = run(PULL, AVATARS, WARMUP, STEPS, REPS);
	if (ns < 0.0 || center < 0.0 || limits < 0.0 || pull < 0.0)
		return 1;
	printf("METRIC core.springbone.ns_per_joint_substep %.3f ns 1000 avatars x 4 chains x 12 "
	       "joints, sphere + capsule, vrm form, 1 substep, single thread (target <= 25)\n",
	       ns);
	printf("METRIC core.springbone.ns_per_joint_substep_center %.3f ns same, center = head\n",
	       center);
	printf("METRIC core.springbone.ns_per_joint_substep_limits %.3f ns same, cone/hinge on "
	       "every joint\n",
	       limits);
	printf("METRIC core.springbone.ns_per_joint_substep_pull %.3f ns same, pull form\n", pull);
	/* core.springbone.peer_threevrm_ratio: run-bench.sh, from the peer's run in the same round */
	printf("METRIC core.springbone.avatars_per_core_60hz %.0f avatars (48 joints) one core "
	       "steps at 60 Hz x 1 substep\n",
	       1e9 / 60.0 / (ns * CHAINS * JOINTS));
	return 0;
}
