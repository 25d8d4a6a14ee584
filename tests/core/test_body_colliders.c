/* Colliders on body bones (issue 12 item 1): a chest collider stops the hair a head turn
 * sweeps into it, with the chest's pose given (the body stays while the head turns) and
 * with it absent (no posed ancestor: the chest keeps its rest rotation and follows the
 * head's translation, at its rest offset from the "bones" table; world.h).
 *
 * Every scenario is run twice: without the chest collider, to show the hair really does
 * pass through where the chest is (by several centimetres), and with it, where no particle
 * may be inside the chest by more than 1 mm at any tick. The same scenario goes through
 * each path that transforms colliders: the verlet lanes (AVX2 and scalar), the verlet
 * per-instance path (nonlinear stretch) and the spring-bone frame stepper. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "ponytail/collider.h"
#include "ponytail/world.h"
#include "ptp/proto.h"
#include "testdef.h"

#define PI_F 3.14159265f
#define RADIUS 0.005f /* particle / hit radius */

enum path { LANES_AVX2, LANES_SCALAR, VERLET_NONLINEAR, SPRINGBONE };

static pt_quat yaw(float a)
{
	pt_quat q = {0.0f, sinf(a / 2), 0.0f, cosf(a / 2)};
	return q;
}

/* A 12-point, 0.385 m strand hanging from head-local `anchor`; a chest sphere of radius
 * 0.12 m at the origin of the chest bone, whose rest pose is head-local `chest_rest`. */
static void scene(pt_instance_def *dp, enum path path, pt_vec3 anchor, pt_vec3 chest_rest,
                  int with_chest)
{
	tdef_init(dp);
#define d (*dp)
	d.prewarm_s = 0.5f;
	d.substeps = 4;
	pt_strand_def *s = &d.strands[0];
	s->anchor = anchor;
	s->points = 12;
	s->segment_length = 0.035f;
	s->radius = RADIUS;
	pt_joint_def j = pt_joint_def_default();
	j.hit_radius = RADIUS;
	j.gravity_power = 1.0f;
	j.stiffness = 0.2f;
	pt_strand_set_joints(s, j);
	if (path == VERLET_NONLINEAR)
		d.verlet.stretch = PT_STRETCH_NONLINEAR;
	if (path == SPRINGBONE)
		d.solver = PT_SOLVER_SPRINGBONE;
	d.bone_count = 1;
	d.bones[0].bone = PT_BONE_CHEST;
	d.bones[0].position = chest_rest;
	d.bones[0].rotation = pt_quat_identity();
	if (with_chest) {
		d.collider_count = 1;
		d.colliders[0].shape = PT_SHAPE_SPHERE;
		d.colliders[0].attach = PT_ATTACH_BONE;
		d.colliders[0].bone = PT_BONE_CHEST;
		d.colliders[0].center = pt_v3(0, 0, 0);
		d.colliders[0].radius = 0.12f;
		d.colliders[0].radius_b = -1.0f;
	}
	pt_error e = pt_instance_validate(&d);
	assert_true(e.ok);
#undef d
}

typedef struct outcome {
	float deepest;  /* largest penetration of any particle into the chest, any tick, m */
	float closest;  /* smallest signed gap (distance - radius) at the last tick, m */
	pt_pose chest;  /* the chest's pose at the last tick (pt_world_get_bone_pose) */
	int chest_ok;
} outcome;

/* Head at (0, 1.6, 0) turns by `turn` radians about +Y over `turn_s` seconds at 60 Hz,
 * then holds for a second. `posed`: the client sends the chest's rest pose every tick
 * (the body does not turn); else no chest pose ever arrives. */
static outcome run(enum path path, pt_vec3 anchor, pt_vec3 chest_rest, int with_chest,
                   float turn, float turn_s, int posed)
{
	pt_world_def wd = pt_world_def_default();
	wd.kernel = path == LANES_SCALAR ? PT_KERNEL_SCALAR : PT_KERNEL_AUTO;
	pt_world *w = pt_world_create(&wd);
	pt_instance_def d, pd;
	scene(&d, path, anchor, chest_rest, with_chest);
	pt_pose head = {pt_v3(0, 1.6f, 0), pt_quat_identity()};
	pt_id id = pt_world_create_instance(w, &d, head);
	assert_false(pt_id_is_null(id));
	/* the chest's world pose at rest, which the body keeps while the head turns */
	pt_pose chest_world = {pt_v3(chest_rest.x, 1.6f + chest_rest.y, chest_rest.z),
	                       pt_quat_identity()};
	scene(&pd, path, anchor, chest_rest, 1);
	pt_collider_def probe = pd.colliders[0];
	pt_instance_def_fini(&pd);
	outcome o = {0.0f, 1e9f, {{0, 0, 0}, {0, 0, 0, 1}}, 0};
	int turn_ticks = (int)lroundf(turn_s * 60.0f);
	pt_vec3 pts[12];
	for (int t = 1; t <= turn_ticks + 60; t++) {
		float f = t < turn_ticks ? (float)t / (float)turn_ticks : 1.0f;
		/* smoothstep: no infinite angular acceleration at the ends */
		head.q = yaw(turn * f * f * (3.0f - 2.0f * f));
		assert_int_equal(pt_world_set_head(w, id, head), 1);
		if (posed)
			assert_int_equal(pt_world_set_bone_pose(w, id, PT_BONE_CHEST, chest_world), 1);
		pt_world_step(w, 1.0f / 60.0f, 4);
		/* where the chest is this tick: as given, or, unposed, the head's position plus
		 * the rest offset, unrotated (its rest rotation is the identity) */
		pt_pose frame = chest_world;
		if (!posed) {
			frame.p = pt_v3(head.p.x + chest_rest.x, head.p.y + chest_rest.y,
			                head.p.z + chest_rest.z);
			frame.q = pt_quat_identity();
		}
		assert_int_equal(pt_world_read_points(w, id, pts, 12), 12);
		float closest = 1e9f;
		for (int i = 1; i < 12; i++) {
			float gap = pt_collider_signed_distance(&probe, frame, pts[i], NULL) - RADIUS;
			if (-gap > o.deepest)
				o.deepest = -gap;
			if (gap < closest)
				closest = gap;
		}
		o.closest = closest;
		if (with_chest && t == turn_ticks + 60) {
			o.chest_ok = pt_world_get_bone_pose(w, id, PT_BONE_CHEST, &o.chest);
			/* the core's idea of the chest agrees with the closed form above */
			assert_true(o.chest_ok);
			assert_float_equal(o.chest.p.x, frame.p.x, 1e-5f);
			assert_float_equal(o.chest.p.y, frame.p.y, 1e-5f);
			assert_float_equal(o.chest.p.z, frame.p.z, 1e-5f);
			assert_float_equal(fabsf(o.chest.q.y * frame.q.y + o.chest.q.w * frame.q.w),
			                   1.0f, 1e-5f);
		}
	}
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
	return o;
}

static const char *const path_name[] = {"lanes avx2", "lanes scalar", "verlet nonlinear",
                                        "springbone"};

/* 1 mm for verlet. VRMC_springBone restores each bone's length after pushing its tail out
 * of a collider (the specification's order, which the reference follows), so a chain
 * draped over a sphere rests a few mm inside it whatever the collider is attached to:
 * 5 mm there, and test_absent_equals_world_attached shows the bone path adds nothing. */
static float limit(enum path path)
{
	return path == SPRINGBONE ? 0.005f : 0.001f;
}

/* Given pose: hair hanging behind the head; the head turns 180 degrees while the body
 * stays, which carries the strand's root to right above the chest's centre. */
static void given_pose(enum path path)
{
	pt_vec3 anchor = pt_v3(0, -0.02f, -0.10f), rest = pt_v3(0, -0.30f, 0.10f);
	outcome free_fall = run(path, anchor, rest, 0, PI_F, 0.5f, 1);
	outcome held = run(path, anchor, rest, 1, PI_F, 0.5f, 1);
	print_message("%-16s given: without chest %.1f mm deep, with %.3f mm; last gap %.2f mm\n",
	              path_name[path], free_fall.deepest * 1e3, held.deepest * 1e3,
	              held.closest * 1e3);
	assert_true(free_fall.deepest > 0.05f); /* the hair hangs through the chest's middle */
	assert_true(held.deepest <= limit(path));
	assert_true(held.closest < 0.005f); /* and it rests on the chest, not elsewhere */
}

/* Absent pose: the chest stays in front of the body (no pose, no posed ancestor), close in
 * front of a strand at the side of the head; a fast turn of the head by -90 degrees
 * carries the strand's root from (0.10, 0) to (0, 0.10) in x-z, over the chest's centre
 * at (0.10, 0.15): 0.11 m from it, inside its 0.12 m. */
static void absent_pose(enum path path)
{
	pt_vec3 anchor = pt_v3(0.10f, -0.02f, 0.0f), rest = pt_v3(0.10f, -0.30f, 0.15f);
	outcome free_fall = run(path, anchor, rest, 0, -PI_F / 2, 0.2f, 0);
	outcome held = run(path, anchor, rest, 1, -PI_F / 2, 0.2f, 0);
	print_message("%-16s absent: without chest %.1f mm deep, with %.3f mm\n", path_name[path],
	              free_fall.deepest * 1e3, held.deepest * 1e3);
	assert_true(free_fall.deepest > 0.01f); /* the turn sweeps the strand into it */
	assert_true(held.deepest <= limit(path));
}

/* A bone whose pose never arrives, nothing above it posed, keeps its rest rotation at the
 * head's position plus its rest offset: with the head turning in place, the same run as a
 * world-attached collider there, within float rounding (1e-5 m), every path. */
static void test_absent_equals_world_attached(void **st)
{
	(void)st;
	pt_vec3 anchor = pt_v3(0.10f, -0.02f, 0.0f), rest = pt_v3(0.10f, -0.30f, 0.15f);
	for (int path = 0; path <= SPRINGBONE; path++) {
		pt_world_def wd = pt_world_def_default();
		wd.kernel = path == LANES_SCALAR ? PT_KERNEL_SCALAR : PT_KERNEL_AUTO;
		pt_world *w = pt_world_create(&wd);
		pt_instance_def bone, head_att = {0};
		scene(&bone, (enum path)path, anchor, rest, 1);
		tdef_copy(&head_att, &bone);
		head_att.colliders[0].attach = PT_ATTACH_WORLD;
		head_att.colliders[0].center = pt_v3(rest.x, 1.6f + rest.y, rest.z);
		pt_pose head = {pt_v3(0, 1.6f, 0), pt_quat_identity()};
		pt_id a = pt_world_create_instance(w, &bone, head);
		pt_id b = pt_world_create_instance(w, &head_att, head);
		float worst = 0.0f;
		for (int t = 1; t <= 72; t++) {
			float f = t < 12 ? (float)t / 12.0f : 1.0f;
			head.q = yaw(PI_F / 2 * f * f * (3.0f - 2.0f * f));
			pt_world_set_head(w, a, head);
			pt_world_set_head(w, b, head);
			pt_world_step(w, 1.0f / 60.0f, 4);
			pt_vec3 pa[12], pb[12];
			pt_world_read_points(w, a, pa, 12);
			pt_world_read_points(w, b, pb, 12);
			for (int i = 0; i < 12; i++) {
				float dx = pa[i].x - pb[i].x, dy = pa[i].y - pb[i].y, dz = pa[i].z - pb[i].z;
				float d = sqrtf(dx * dx + dy * dy + dz * dz);
				worst = d > worst ? d : worst;
			}
		}
		print_message("%-16s bone vs world-attached: %.2g m\n", path_name[path], worst);
		assert_true(worst <= 1e-5f);
		pt_world_destroy(w);
		pt_instance_def_fini(&bone), pt_instance_def_fini(&head_att);
	}
}

/* The pose API: unknown ids, bones out of range and bad poses are refused; a bone no
 * collider uses is accepted and moves nothing; a pose is held until the next. */
static void test_set_bone_pose_api(void **st)
{
	(void)st;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	scene(&d, LANES_AVX2, pt_v3(0, 0, -0.1f), pt_v3(0, -0.3f, 0.1f), 1);
	pt_pose head = {pt_v3(0, 1.6f, 0), pt_quat_identity()};
	pt_id id = pt_world_create_instance(w, &d, head);
	pt_pose p = {pt_v3(0.5f, 1.0f, 0.0f), {0, 0, 0, 2.0f}}, got;
	pt_id stale = {id.index, id.generation + 1};
	assert_int_equal(pt_world_set_bone_pose(w, stale, PT_BONE_CHEST, p), 0);
	assert_int_equal(pt_world_set_bone_pose(w, id, PT_BONE_COUNT, p), 0);
	assert_int_equal(pt_world_set_bone_pose(w, id, (pt_bone)-1, p), 0);
	pt_pose bad = p;
	bad.q = (pt_quat){0, 0, 0, 0};
	assert_int_equal(pt_world_set_bone_pose(w, id, PT_BONE_CHEST, bad), 0);
	bad = p, bad.p.x = NAN;
	assert_int_equal(pt_world_set_bone_pose(w, id, PT_BONE_CHEST, bad), 0);
	/* before any pose: head * rest */
	assert_int_equal(pt_world_get_bone_pose(w, id, PT_BONE_CHEST, &got), 1);
	assert_float_equal(got.p.y, 1.3f, 1e-6f);
	assert_float_equal(got.p.z, 0.1f, 1e-6f);
	assert_int_equal(pt_world_get_bone_pose(w, id, PT_BONE_NECK, &got), 0);
	assert_int_equal(pt_world_set_bone_pose(w, id, PT_BONE_NECK, p), 1); /* unused: no-op */
	assert_int_equal(pt_world_set_bone_pose(w, id, PT_BONE_CHEST, p), 1);
	assert_int_equal(pt_world_get_bone_pose(w, id, PT_BONE_CHEST, &got), 1);
	assert_float_equal(got.p.x, 0.5f, 0.0f);
	assert_float_equal(got.q.w, 1.0f, 1e-7f); /* normalised */
	/* held while the head moves on */
	head.p.x = 0.2f;
	pt_world_set_head(w, id, head);
	pt_world_step(w, 1.0f / 60.0f, 4);
	assert_int_equal(pt_world_get_bone_pose(w, id, PT_BONE_CHEST, &got), 1);
	assert_float_equal(got.p.x, 0.5f, 0.0f);
	/* a definition update keeps the pose; removing the collider drops the bone */
	assert_int_equal(pt_world_update_instance(w, id, &d), 1);
	assert_int_equal(pt_world_get_bone_pose(w, id, PT_BONE_CHEST, &got), 1);
	assert_float_equal(got.p.x, 0.5f, 0.0f);
	d.strands[0].points = 8; /* a topology change re-creates the state: poses stay */
	assert_int_equal(pt_world_update_instance(w, id, &d), 1);
	assert_int_equal(pt_world_get_bone_pose(w, id, PT_BONE_CHEST, &got), 1);
	assert_float_equal(got.p.x, 0.5f, 0.0f);
	d.collider_count = 0;
	assert_int_equal(pt_world_update_instance(w, id, &d), 1);
	assert_int_equal(pt_world_get_bone_pose(w, id, PT_BONE_CHEST, &got), 0);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* Validation: a bone-attached collider needs the bone's rest pose; the table is checked. */
static void test_validate_bones(void **st)
{
	(void)st;
	pt_instance_def d, x = {0};
	scene(&d, LANES_AVX2, pt_v3(0, 0, -0.1f), pt_v3(0, -0.3f, 0.1f), 1);
	tdef_copy(&x, &d);
	x.bone_count = 0;
	pt_error e = pt_instance_validate(&x);
	assert_false(e.ok);
	assert_string_equal(e.field, "colliders[0].attach");
	assert_non_null(strstr(e.message, "\"chest\" has no rest pose"));
	tdef_copy(&x, &d), x.colliders[0].bone = PT_BONE_COUNT;
	e = pt_instance_validate(&x);
	assert_string_equal(e.field, "colliders[0].attach");
	assert_non_null(strstr(e.message, "upper_chest"));
	assert_non_null(strstr(e.message, "{left,right}_{index,middle,ring,little}"));
	tdef_copy(&x, &d), x.bones[0].rotation = (pt_quat){0, 0, 0, 0.4f};
	e = pt_instance_validate(&x);
	assert_string_equal(e.field, "bones.chest.rotation");
	tdef_copy(&x, &d), x.bones[0].position.y = 11.0f;
	e = pt_instance_validate(&x);
	assert_string_equal(e.field, "bones.chest.position");
	tdef_copy(&x, &d), x.bone_count = 2, x.bones[1] = x.bones[0];
	e = pt_instance_validate(&x);
	assert_string_equal(e.field, "bones.chest");
	assert_non_null(strstr(e.message, "listed twice"));
	tdef_copy(&x, &d), x.bone_count = PT_MAX_BONES + 1;
	e = pt_instance_validate(&x);
	assert_string_equal(e.field, "bones");
	pt_instance_def_fini(&x), pt_instance_def_fini(&d);
	assert_int_equal(pt_bone_from_name("left_little_distal"), PT_BONE_LEFT_LITTLE_DISTAL);
	assert_string_equal(pt_bone_name(PT_BONE_RIGHT_LITTLE_DISTAL), "right_little_distal");
	assert_int_equal(PT_BONE_COUNT, 54);
	assert_int_equal(pt_bone_from_name("head"), -1);
	/* core's names and ids are the wire protocol's (proto keeps its own table) */
	assert_int_equal(PT_BONE_COUNT, PTP_BONE_COUNT);
	for (int b = 0; b < PT_BONE_COUNT; b++) {
		assert_string_equal(pt_bone_name((pt_bone)b), ptp_bone_name(b));
		assert_int_equal(pt_bone_from_name(ptp_bone_name(b)), b);
	}
}

static void test_given_lanes_avx2(void **s) { (void)s, given_pose(LANES_AVX2); }
static void test_given_lanes_scalar(void **s) { (void)s, given_pose(LANES_SCALAR); }
static void test_given_nonlinear(void **s) { (void)s, given_pose(VERLET_NONLINEAR); }
static void test_given_springbone(void **s) { (void)s, given_pose(SPRINGBONE); }
static void test_absent_lanes_avx2(void **s) { (void)s, absent_pose(LANES_AVX2); }
static void test_absent_lanes_scalar(void **s) { (void)s, absent_pose(LANES_SCALAR); }
static void test_absent_nonlinear(void **s) { (void)s, absent_pose(VERLET_NONLINEAR); }
static void test_absent_springbone(void **s) { (void)s, absent_pose(SPRINGBONE); }

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_given_lanes_avx2),   cmocka_unit_test(test_given_lanes_scalar),
	    cmocka_unit_test(test_given_nonlinear),    cmocka_unit_test(test_given_springbone),
	    cmocka_unit_test(test_absent_lanes_avx2),  cmocka_unit_test(test_absent_lanes_scalar),
	    cmocka_unit_test(test_absent_nonlinear),   cmocka_unit_test(test_absent_springbone),
	    cmocka_unit_test(test_absent_equals_world_attached),
	    cmocka_unit_test(test_set_bone_pose_api),  cmocka_unit_test(test_validate_bones),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
