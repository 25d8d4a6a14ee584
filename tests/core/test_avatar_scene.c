/* The benchmark's whole avatar (tests/common/avatar_scene.h, issue 38 item 9) is what it
 * says it is, and moves as the schema says chains on bones move:
 *
 * - its definition validates and holds 40 chains (32 where strands are capped at 32), 200
 *   joints, 20 colliders (8 spheres, 12 capsules, 18 on body bones), chains on 8 distinct
 *   bones and one branch; its JSON form (what the daemon's benchmark creates) reads back
 *   to the same counts;
 * - its motion is a rigid skeleton: every posed bone keeps its rest distance to its parent
 *   and the head its distance to the neck at every tick, while the body turns (the hips'
 *   yaw spans more than 60 degrees) and the arms swing (a hand rises and falls > 10 cm);
 * - stepped over 3 s of that motion: every point finite, every segment at its rest
 *   length (the VRM form keeps lengths exact), the root of a chain on a body bone where
 *   its bone's pose puts it (bone pose x rest^-1 x anchor: SCHEMA.md "Strands on body
 *   bones and branches"), and the branch's root at its rest distance (2 cm) from the
 *   tail's point 4 it hangs from. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "avatar_scene.h"
#include "ponytail/schema.h"
#include "testdef.h"
#include "vecmath.h"

static void test_counts_and_json(void **st)
{
	(void)st;
	pt_instance_def d;
	int chains = avatar_scene_def(&d, 0);
	pt_error e = pt_instance_validate(&d);
	if (!e.ok)
		print_message("%s: %s\n", e.field, e.message);
	assert_true(e.ok);
	int want = (int)PT_MAX_STRANDS >= (int)AVATAR_CHAINS ? 40 : 32;
	assert_int_equal(chains, want);
	assert_int_equal(d.strand_count, want);
	int joints = 0, branches = 0, on[PT_BONE_COUNT + 1] = {0}, bones = 0;
	for (int s = 0; s < d.strand_count; s++) {
		joints += d.strands[s].points - 1;
		if (d.strands[s].parent_strand >= 0) {
			branches++;
			continue; /* it hangs from a chain, not a bone */
		}
		int b = d.strands[s].bone + 1; /* 0: the head */
		bones += !on[b];
		on[b] = 1;
	}
	assert_int_equal(joints, 200);
	assert_int_equal(branches, 1);
	assert_int_equal(bones, 8);
	int spheres = 0, capsules = 0, body = 0;
	for (int c = 0; c < d.collider_count; c++) {
		spheres += d.colliders[c].shape == PT_SHAPE_SPHERE;
		capsules += d.colliders[c].shape == PT_SHAPE_CAPSULE;
		body += d.colliders[c].attach == PT_ATTACH_BONE;
	}
	assert_int_equal(d.collider_count, 20);
	assert_int_equal(spheres, 8);
	assert_int_equal(capsules, 12);
	assert_int_equal(body, 18);

	json_t *j = pt_schema_dump(&d);
	assert_non_null(j);
	pt_instance_def back;
	tdef_init(&back);
	assert_int_equal(pt_schema_parse(j, &back, NULL, &e), 0);
	json_decref(j);
	assert_int_equal(back.strand_count, want);
	assert_int_equal(back.collider_count, 20);
	assert_int_equal(back.bone_count, AVATAR_BONES);
	pt_instance_def_fini(&back);
	pt_instance_def_fini(&d);
}

static const pt_bone_def *rest_of(const pt_instance_def *d, pt_bone b)
{
	for (int i = 0; i < d->bone_count; i++)
		if (d->bones[i].bone == b)
			return &d->bones[i];
	fail_msg("bone %d not in the avatar's bones", (int)b);
	return NULL;
}

static int posed(const pt_bone *bones, pt_bone b)
{
	for (int i = 0; i < AVATAR_POSED; i++)
		if (bones[i] == b)
			return i;
	return -1;
}

static float dist(pt_vec3 a, pt_vec3 b)
{
	return v3_len(v3_sub(a, b));
}

static void test_motion_is_a_rigid_skeleton(void **st)
{
	(void)st;
	pt_instance_def d;
	avatar_scene_def(&d, 0);
	/* parent -> child pairs among the posed bones */
	const pt_bone pairs[][2] = {
	    {PT_BONE_HIPS, PT_BONE_SPINE},
	    {PT_BONE_SPINE, PT_BONE_CHEST},
	    {PT_BONE_CHEST, PT_BONE_UPPER_CHEST},
	    {PT_BONE_UPPER_CHEST, PT_BONE_NECK},
	    {PT_BONE_LEFT_UPPER_ARM, PT_BONE_LEFT_LOWER_ARM},
	    {PT_BONE_LEFT_LOWER_ARM, PT_BONE_LEFT_HAND},
	    {PT_BONE_RIGHT_UPPER_ARM, PT_BONE_RIGHT_LOWER_ARM},
	    {PT_BONE_HIPS, PT_BONE_LEFT_UPPER_LEG},
	    {PT_BONE_LEFT_UPPER_LEG, PT_BONE_LEFT_LOWER_LEG},
	};
	float yaw_lo = 10.0f, yaw_hi = -10.0f, hand_lo = 10.0f, hand_hi = -10.0f;
	for (int t = 0; t < 600; t++) {
		pt_pose head, poses[AVATAR_POSED];
		pt_bone bones[AVATAR_POSED];
		avatar_scene_pose(t / 60.0, 0.0, pt_v3(1.0f, 1.62f, -2.0f), &head, bones, poses);
		for (size_t k = 0; k < sizeof pairs / sizeof pairs[0]; k++) {
			int a = posed(bones, pairs[k][0]), b = posed(bones, pairs[k][1]);
			assert_true(a >= 0 && b >= 0);
			float want = dist(rest_of(&d, pairs[k][0])->position,
			                  rest_of(&d, pairs[k][1])->position);
			assert_float_equal(dist(poses[a].p, poses[b].p), want, 1e-5);
		}
		int neck = posed(bones, PT_BONE_NECK), hips = posed(bones, PT_BONE_HIPS);
		assert_float_equal(dist(head.p, poses[neck].p),
		                   v3_len(rest_of(&d, PT_BONE_NECK)->position), 1e-5);
		/* the hips' yaw: their +Z axis turned about Y */
		pt_vec3 fwd = q_rotate(poses[hips].q, pt_v3(0, 0, 1));
		float yaw = atan2f(fwd.x, fwd.z);
		yaw_lo = fminf(yaw_lo, yaw), yaw_hi = fmaxf(yaw_hi, yaw);
		float hy = poses[posed(bones, PT_BONE_LEFT_HAND)].p.y;
		hand_lo = fminf(hand_lo, hy), hand_hi = fmaxf(hand_hi, hy);
	}
	assert_true(yaw_hi - yaw_lo > 60.0f * 3.14159265f / 180.0f);
	assert_true(hand_hi - hand_lo > 0.10f);
	pt_instance_def_fini(&d);
}

static void test_stepped_avatar(void **st)
{
	(void)st;
	pt_instance_def d;
	avatar_scene_def(&d, 4);
	pt_world *w = pt_world_create(NULL);
	assert_non_null(w);
	pt_vec3 at = pt_v3(0.0f, 1.62f, 0.0f);
	pt_pose head, poses[AVATAR_POSED];
	pt_bone bones[AVATAR_POSED];
	avatar_scene_pose(0.0, 0.0, at, &head, bones, poses);
	pt_id id = pt_world_create_instance(w, &d, head);
	assert_false(pt_id_is_null(id));
	int sleeve = -1, branch = -1;
	for (int s = 0; s < d.strand_count; s++) {
		if (sleeve < 0 && d.strands[s].bone == PT_BONE_LEFT_LOWER_ARM)
			sleeve = s;
		if (d.strands[s].parent_strand >= 0)
			branch = s;
	}
	assert_true(sleeve >= 0 && branch >= 0);
	int first[PT_MAX_STRANDS + 1] = {0};
	for (int s = 0; s < d.strand_count; s++)
		first[s + 1] = first[s] + d.strands[s].points;
	static pt_vec3 pts[PT_MAX_STRANDS * PT_MAX_POINTS];
	const pt_bone_def *arm = rest_of(&d, PT_BONE_LEFT_LOWER_ARM);
	const pt_strand_def *bs = &d.strands[branch];
	float branch_rest = 0.02f; /* avatar_scene.c: 2 cm sideways of the tail's point 4 */
	for (int t = 1; t <= 180; t++) {
		assert_true(avatar_scene_drive(w, id, t / 60.0, 0.0, at));
		pt_world_step(w, 1.0f / 60.0f, 4);
		assert_int_equal(pt_world_read_points(w, id, pts, PT_MAX_STRANDS * PT_MAX_POINTS),
		                 first[d.strand_count]);
		for (int s = 0; s < d.strand_count; s++)
			for (int p = first[s]; p < first[s + 1]; p++) {
				assert_true(v3_finite(pts[p]));
				if (p > first[s])
					assert_float_equal(dist(pts[p], pts[p - 1]),
					                   d.strands[s].segment_length,
					                   1e-4 * d.strands[s].segment_length + 1e-6);
			}
		pt_pose bp;
		assert_true(pt_world_get_bone_pose(w, id, PT_BONE_LEFT_LOWER_ARM, &bp));
		pt_vec3 root = v3_add(bp.p, q_rotate(bp.q, v3_sub(d.strands[sleeve].anchor,
		                                                   arm->position)));
		assert_float_equal(dist(pts[first[sleeve]], root), 0.0f, 1e-4);
		assert_float_equal(dist(pts[first[branch]], pts[first[bs->parent_strand] + 4]),
		                   branch_rest, 1e-4);
	}
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_counts_and_json),
	    cmocka_unit_test(test_motion_is_a_rigid_skeleton),
	    cmocka_unit_test(test_stepped_avatar),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
