/* Benchmark: whole avatars (issue 38 item 9), 1,000 of them in one world.
 *
 * The avatar is tests/common/avatar_scene.h's: one springbone instance of 40 chains,
 * 200 joints, 20 colliders, chains on 8 bones (hair, hood, bust, ribbon, sash, skirt, a
 * tail with a branch, sleeves on both forearms), VRM form. Every tick each avatar gets its
 * head pose and 15 body bone poses (avatar_scene_drive: the body turns, bends, swings its
 * arms and legs; each avatar with its own phase), then the world steps 1/60 s at the
 * daemon's default of 4 substeps (and at 1). The VRM form steps once per 1/60 s whatever
 * the substeps (SCHEMA.md "rate"), so a joint-substep here is one joint's tail advanced by
 * one spring-bone step with its chain's colliders tested, as in bench_springbone.
 *
 * Only pt_world_step is in the ns figure (as bench_springbone); the avatars-per-core
 * figure adds the time spent setting the 16 poses, which a daemon pays per avatar too.
 * Best of REPS repetitions after a warm-up; single thread. The run fails when a point is
 * not finite or a segment has left its rest length (the VRM form keeps lengths exact).
 *
 *   bench_avatar                          the benchmark
 *   bench_avatar --callgrind N STEPS      N avatars at 4 substeps, a warm-up of 10 steps,
 *                                         then STEPS steps through bench_step for callgrind's
 *                                         --toggle-collect=bench_step* (run-bench.sh divides
 *                                         by the joint-substeps printed)
 *   bench_avatar --json                   the avatar's instance definition (pt_schema_dump),
 *                                         for the daemon's benchmark (bench_avatars.mjs)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "avatar_scene.h"
#include "benchutil.h"
#include "ponytail/schema.h"

enum { AVATARS = 1000, WARMUP = 60, STEPS = 120, REPS = 5 };

/* The timed step, never inlined (callgrind counts inside it only). */
static __attribute__((noinline)) void bench_step(pt_world *w, float dt, int substeps)
{
	pt_world_step(w, dt, substeps);
}

static pt_vec3 place(int i)
{
	return pt_v3(2.0f * (float)(i % 40), 1.62f, 2.0f * (float)(i / 40));
}

static int drive_all(pt_world *w, int tick)
{
	int ok = 1;
	for (int i = 0; i < pt_world_count(w); i++)
		ok &= avatar_scene_drive(w, pt_world_id_at(w, i), tick / 60.0, 0.37 * i, place(i));
	return ok;
}

/* 0 when every point is finite and every segment within 1e-3 of its rest length. */
static int check(const pt_world *w, const pt_instance_def *d)
{
	static pt_vec3 pts[PT_MAX_STRANDS * PT_MAX_POINTS];
	for (int i = 0; i < pt_world_count(w); i++) {
		int n = pt_world_read_points(w, pt_world_id_at(w, i), pts,
		                             PT_MAX_STRANDS * PT_MAX_POINTS);
		for (int s = 0, o = 0; s < d->strand_count; o += d->strands[s].points, s++)
			for (int p = o; p < o + d->strands[s].points; p++) {
				if (p >= n || !isfinite(pts[p].x) || !isfinite(pts[p].y) ||
				    !isfinite(pts[p].z)) {
					fprintf(stderr, "bench_avatar: avatar %d strand %d: no finite point\n",
					        i, s);
					return 1;
				}
				if (p == o)
					continue;
				double dx = pts[p].x - pts[p - 1].x, dy = pts[p].y - pts[p - 1].y,
				       dz = pts[p].z - pts[p - 1].z;
				double err = fabs(sqrt(dx * dx + dy * dy + dz * dz) -
				                  d->strands[s].segment_length);
				if (err > 1e-3 * d->strands[s].segment_length) {
					fprintf(stderr, "bench_avatar: avatar %d strand %d point %d: "
					        "segment off its rest length by %.3g m\n", i, s, p - o, err);
					return 1;
				}
			}
	}
	return 0;
}

typedef struct result {
	double step_ns; /* per joint-substep, pt_world_step only */
	double tick_ns; /* per avatar and tick, poses set + step */
} result;

static int run(int avatars, int substeps, int warmup, int steps, int reps, result *out)
{
	pt_world_def wd = pt_world_def_default();
	wd.initial_capacity = avatars;
	pt_world *w = pt_world_create(&wd);
	if (!w) {
		fprintf(stderr, "bench_avatar: out of memory\n");
		return 1;
	}
	pt_instance_def d;
	int chains = avatar_scene_def(&d, 0);
	pt_error e = pt_instance_validate(&d);
	if (!e.ok) {
		fprintf(stderr, "bench_avatar: %s: %s\n", e.field, e.message);
		return 1;
	}
	for (int i = 0; i < avatars; i++) {
		pt_pose head;
		pt_bone bones[AVATAR_POSED];
		pt_pose poses[AVATAR_POSED];
		avatar_scene_pose(0.0, 0.37 * i, place(i), &head, bones, poses);
		pt_id id = pt_world_create_instance(w, &d, head);
		if (pt_id_is_null(id)) {
			fprintf(stderr, "bench_avatar: out of memory\n");
			return 1;
		}
	}
	int tick = 0, ok = 1;
	for (; tick < warmup; tick++) {
		ok &= drive_all(w, tick);
		pt_world_step(w, 1.0f / 60.0f, substeps);
	}
	double best = 1e30, best_drive = 1e30;
	for (int r = 0; r < reps; r++) {
		double el = 0.0, dr = 0.0;
		for (int k = 0; k < steps; k++, tick++) {
			double t0 = bench_now();
			ok &= drive_all(w, tick);
			double t1 = bench_now();
			bench_step(w, 1.0f / 60.0f, substeps);
			el += bench_now() - t1;
			dr += t1 - t0;
		}
		if (el < best)
			best = el, best_drive = dr;
	}
	int bad = !ok || check(w, &d);
	if (!ok)
		fprintf(stderr, "bench_avatar: the world refused a pose\n");
	unsigned long long h = (unsigned long long)pt_world_hash(w);
	pt_world_destroy(w);
	printf("avatar x%d: %.2f ms per step + %.2f ms setting poses for %d avatars x %d chains x "
	       "%d joints (state hash %016llx)\n",
	       substeps, best / steps * 1e3, best_drive / steps * 1e3, avatars, chains,
	       AVATAR_JOINTS, h);
	pt_instance_def_fini(&d);
	out->step_ns = best / steps / ((double)avatars * AVATAR_JOINTS) * 1e9;
	out->tick_ns = (best + best_drive) / steps / avatars * 1e9;
	return bad;
}

static int dump_json(void)
{
	pt_instance_def d;
	avatar_scene_def(&d, 0);
	json_t *j = pt_schema_dump(&d);
	pt_instance_def_fini(&d);
	if (!j || json_dumpf(j, stdout, JSON_INDENT(1) | PT_SCHEMA_DUMP_FLAGS) != 0)
		return 1;
	json_decref(j);
	return putchar('\n') == EOF;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--json") == 0)
		return dump_json();
	if (argc > 1 && strcmp(argv[1], "--callgrind") == 0) {
		int n = argc > 2 ? atoi(argv[2]) : 0, steps = argc > 3 ? atoi(argv[3]) : 0;
		if (n < 1 || n > 100000 || steps < 1 || steps > 100000) {
			fprintf(stderr, "usage: bench_avatar --callgrind AVATARS(1-100000) "
			                "STEPS(1-100000)\n");
			return 2;
		}
		result r;
		if (run(n, 4, 10, steps, 1, &r))
			return 1;
		printf("CALLGRIND point_substeps %lld\n", (long long)n * AVATAR_JOINTS * steps);
		return 0;
	}
	pt_instance_def d;
	int chains = avatar_scene_def(&d, 0);
	pt_instance_def_fini(&d);
	result x4, x1;
	if (run(AVATARS, 4, WARMUP, STEPS, REPS, &x4) || run(AVATARS, 1, WARMUP, STEPS, REPS, &x1))
		return 1;
	printf("METRIC core.avatar.ns_per_joint_substep %.3f ns 1000 whole avatars (%d chains, "
	       "200 joints, 20 colliders, 8 bones; head + 15 bone poses a tick), vrm form, "
	       "4 substeps (one spring-bone step per 1/60 s), single thread, pt_world_step only\n",
	       x4.step_ns, chains);
	printf("METRIC core.avatar.ns_per_joint_substep_s1 %.3f ns same, 1 substep\n", x1.step_ns);
	printf("METRIC core.avatar.us_per_avatar_tick %.3f us one avatar's tick at 4 substeps: its "
	       "16 poses set + its step\n", x4.tick_ns * 1e-3);
	printf("METRIC core.avatar.avatars_per_core_60hz %.0f avatars one core poses and steps at "
	       "60 Hz (1 / (60 x time per avatar-tick)), 4 substeps\n",
	       1e9 / 60.0 / x4.tick_ns);
	return 0;
}
