/* The whole avatar (tests/common/avatar_scene.h: 40 chains on 8 bones, a branch on the
 * tail) on the spring-bone wide path against the per-chain path (issue 38 item 9).
 *
 * Branches step in lanes after their parents (springbone_lanes.h): the parent's lane
 * writes the frame each branch hangs from at every step, with the per-chain path's own
 * pt_sb_branch_frame on points that are bit-identical on both paths, so the claim is
 * exact: the same bits after every tick, in lanes on AVX2 (where the CPU has it), in
 * lanes on the plain-C emulation, and chain by chain. Bitwise, not within a tolerance,
 * because nothing on the wide path rounds differently (no FMA contraction, the same
 * operations in the same order); a tolerance would hide a step taken in the wrong order
 * (a branch stepped before its parent, or at the frame of another step), which moves a
 * point by far more than rounding but can still be small after a few ticks.
 *
 * Cases: the spring bone at every substep with 1, 2, 4 and 16 substeps (a batch steps its
 * chains through all of them, so a branch reads its parent's frame at each), and at the
 * default frame rate with ticks of 1/60 and 1/30 s (two steps a tick); the scene's one
 * branch alone, and with two more (a branch on the branch, level 2, and a second branch
 * on the tail's tip) and center = head; a keep-mode teleport half-way. One case has 70
 * avatars, more than a batcher keeps waiting for their branches (PT_SB_BRANCHY), so the
 * early flush runs too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "avatar_scene.h"
#include "springbone_lanes.h"
#include "testdef.h"
#include "world_internal.h"

enum { TICKS = 60, MAX_AVATARS = 70 };

typedef struct scase {
	int substeps;     /* > 0: rate substep with that many; 0: frame rate, 4 substeps */
	float dt;         /* tick */
	int more;         /* 1: the two extra branches and center = head */
	int avatars;
} scase;

static void avatar_def(pt_instance_def *d, const scase *c)
{
	avatar_scene_def(d, c->substeps > 0 ? c->substeps : 4);
	d->springbone.rate = c->substeps > 0 ? PT_SPRINGBONE_RATE_SUBSTEP : PT_SPRINGBONE_RATE_FRAME;
	if (!c->more)
		return;
	d->springbone.center_head = 1;
	int tail = -1, branch = -1;
	for (int s = 0; s < d->strand_count; s++)
		if (d->strands[s].parent_strand >= 0)
			branch = s, tail = d->strands[s].parent_strand;
	assert_true(branch > tail && tail >= 0);
	static const int legs[2] = {8, 9}; /* the upper legs' capsules */
	for (int k = 0; k < 2; k++) {
		pt_strand_def *s = pt_instance_def_add_strand(d);
		assert_non_null(s);
		s->anchor = k ? pt_v3(0.0f, -0.95f, -0.40f) : pt_v3(0.03f, -0.85f, -0.30f);
		s->direction = pt_v3(k ? -0.5f : 0.5f, -1.0f, 0.2f);
		s->points = 5;
		s->segment_length = 0.035f;
		assert_true(pt_strand_set_colliders(s, legs, 2));
		pt_joint_def j = pt_joint_def_default();
		j.stiffness = 0.7f, j.drag_force = 0.3f, j.gravity_power = 0.4f, j.hit_radius = 0.02f;
		pt_strand_set_joints(s, j);
		s->parent_strand = k ? tail : branch;
		s->parent_point = k ? 8 : 3;
	}
}

typedef struct run {
	pt_world *w;
	uint64_t hash[TICKS];
} run;

static pt_vec3 place(int i, int tick)
{
	/* 20 m along z half-way: a teleport (keep mode carries every point) */
	return pt_v3(2.0f * (float)i, 1.62f, tick >= TICKS / 2 ? 20.0f : 0.0f);
}

/* kernel: PT_KERNEL_AUTO or SCALAR; lanes 0: every instance per chain. */
static void run_case(run *r, const scase *c, pt_kernel kernel, int lanes)
{
	pt_world_def wd = pt_world_def_default();
	wd.kernel = kernel;
	r->w = pt_world_create(&wd);
	assert_non_null(r->w);
	pt_instance_def d;
	avatar_def(&d, c);
	assert_true(pt_instance_validate(&d).ok);
	for (int i = 0; i < c->avatars; i++) {
		pt_pose head;
		pt_bone bones[AVATAR_POSED];
		pt_pose poses[AVATAR_POSED];
		avatar_scene_pose(0.0, 0.37 * i, place(i, 0), &head, bones, poses);
		assert_false(pt_id_is_null(pt_world_create_instance(r->w, &d, head)));
		pt_sb_data *sd = r->w->inst[i].solver_data;
		assert_int_equal(sd->lanes_ok, 1); /* branches and all */
		assert_int_equal(sd->levels, c->more ? 3 : 2);
		sd->lanes_off = !lanes;
	}
	pt_instance_def_fini(&d);
	for (int k = 0; k < TICKS; k++) {
		for (int i = 0; i < c->avatars; i++)
			assert_true(avatar_scene_drive(r->w, pt_world_id_at(r->w, i),
			                               (k + 1) * (double)c->dt, 0.37 * i, place(i, k + 1)));
		pt_world_step(r->w, c->dt, c->substeps > 0 ? c->substeps : 4);
		r->hash[k] = pt_world_hash(r->w);
	}
}

/* Largest coordinate difference between the points of two worlds, m. */
static double max_diff(const pt_world *a, const pt_world *b)
{
	static pt_vec3 pa[PT_MAX_JOINTS], pb[PT_MAX_JOINTS];
	double m = 0.0;
	for (int i = 0; i < pt_world_count(a); i++) {
		int n = pt_world_read_points(a, pt_world_id_at(a, i), pa, PT_MAX_JOINTS);
		assert_int_equal(pt_world_read_points(b, pt_world_id_at(b, i), pb, PT_MAX_JOINTS), n);
		for (int p = 0; p < n; p++) {
			double d[3] = {fabs(pa[p].x - pb[p].x), fabs(pa[p].y - pb[p].y),
			               fabs(pa[p].z - pb[p].z)};
			for (int e = 0; e < 3; e++)
				m = d[e] > m ? d[e] : m;
		}
	}
	return m;
}

static void check_case(const scase *c)
{
	static run avx, emu, chain_path;
	run_case(&avx, c, PT_KERNEL_AUTO, 1);
	run_case(&emu, c, PT_KERNEL_SCALAR, 1);
	run_case(&chain_path, c, PT_KERNEL_AUTO, 0);
	double dmax = fmax(max_diff(avx.w, chain_path.w), max_diff(emu.w, chain_path.w));
	print_message("substeps %d, tick %.4f s, %s, %d avatars: lanes on %s, emulation, per "
	              "chain %016llx %016llx %016llx (largest difference %.3g m)\n",
	              c->substeps, (double)c->dt, c->more ? "3 branches + center" : "1 branch",
	              c->avatars,
	              pt_world_kernel(avx.w) == PT_KERNEL_AVX2 ? "AVX2" : "the scalar kernel",
	              (unsigned long long)avx.hash[TICKS - 1],
	              (unsigned long long)emu.hash[TICKS - 1],
	              (unsigned long long)chain_path.hash[TICKS - 1], dmax);
	int moved = 0;
	for (int k = 0; k < TICKS; k++) {
		if (avx.hash[k] != chain_path.hash[k] || emu.hash[k] != chain_path.hash[k])
			fail_msg("tick %d: lanes (AVX2 %016llx, emulation %016llx) != per chain %016llx",
			         k, (unsigned long long)avx.hash[k], (unsigned long long)emu.hash[k],
			         (unsigned long long)chain_path.hash[k]);
		moved += k > 0 && avx.hash[k] != avx.hash[k - 1];
	}
	assert_true(dmax == 0.0);
	assert_int_equal(moved, TICKS - 1); /* the state changes every tick */
	pt_world_destroy(avx.w), pt_world_destroy(emu.w), pt_world_destroy(chain_path.w);
}

static void test_substep_rate(void **state)
{
	(void)state;
	static const int n[4] = {1, 2, 4, 16};
	for (int k = 0; k < 4; k++)
		for (int more = 0; more < 2; more++) {
			scase c = {n[k], 1.0f / 60.0f, more, 17};
			check_case(&c);
		}
}

static void test_frame_rate(void **state)
{
	(void)state;
	scase c60 = {0, 1.0f / 60.0f, 0, MAX_AVATARS}, c30 = {0, 1.0f / 30.0f, 1, 20};
	check_case(&c60);
	check_case(&c30);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_substep_rate),
	    cmocka_unit_test(test_frame_rate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
