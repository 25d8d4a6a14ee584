/* Whole avatars (issue 38 items 1 and 2): strands on body bones and branching strands.
 *
 * - The unposed-bone rule (world.h, pt_world_set_bone_pose), in closed form: with only a
 *   head pose the hips keep their rest rotation and follow the head's translation; a bone
 *   follows its nearest posed ancestor rigidly by the rest poses; the eyes follow the head.
 * - A skirt on the hips keeps still while the head turns 60 degrees; the same strand on
 *   the head swings.
 * - A strand on a posed forearm moves as the same strand on a head posed at the forearm's
 *   frame (pose x rest^-1) does, on the lanes (AVX2 and plain C) and per chain.
 * - A branch hanging from the tip of a chain moves as one longer chain does (the branch's
 *   first joint is the longer chain's next joint), with a collider in the way; a branch
 *   from a middle point stays rigidly on that point's bone: its root keeps its rest
 *   distance and angle to the parent's segment.
 * - Validation and the JSON form of "bone" and "parent".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include <jansson.h>

#include "ponytail/schema.h"
#include "ponytail/world.h"
#include "testdef.h"

#define PI_F 3.14159265f

static pt_quat axis_angle(float x, float y, float z, float a)
{
	float n = sqrtf(x * x + y * y + z * z), s = sinf(a / 2) / n;
	pt_quat q = {x * s, y * s, z * s, cosf(a / 2)};
	return q;
}

static pt_quat qmul(pt_quat a, pt_quat b)
{
	pt_quat r = {a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
	             a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
	             a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
	             a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
	return r;
}

static pt_vec3 qrot(pt_quat q, pt_vec3 v)
{
	pt_quat p = {v.x, v.y, v.z, 0.0f}, c = {-q.x, -q.y, -q.z, q.w};
	pt_quat r = qmul(qmul(q, p), c);
	return pt_v3(r.x, r.y, r.z);
}

static pt_vec3 vadd(pt_vec3 a, pt_vec3 b) { return pt_v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static pt_vec3 vsub(pt_vec3 a, pt_vec3 b) { return pt_v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static float vlen(pt_vec3 a) { return sqrtf(a.x * a.x + a.y * a.y + a.z * a.z); }
static float vdist(pt_vec3 a, pt_vec3 b) { return vlen(vsub(a, b)); }

/* a x b for poses */
static pt_pose compose(pt_pose a, pt_pose b)
{
	pt_pose r = {vadd(a.p, qrot(a.q, b.p)), qmul(a.q, b.q)};
	return r;
}

static pt_pose inverse(pt_pose a)
{
	pt_quat c = {-a.q.x, -a.q.y, -a.q.z, a.q.w};
	pt_vec3 p = qrot(c, a.p);
	pt_pose r = {pt_v3(-p.x, -p.y, -p.z), c};
	return r;
}

static void assert_pose_near(pt_pose got, pt_pose want, float tol)
{
	assert_float_equal(got.p.x, want.p.x, tol);
	assert_float_equal(got.p.y, want.p.y, tol);
	assert_float_equal(got.p.z, want.p.z, tol);
	float d = fabsf(got.q.x * want.q.x + got.q.y * want.q.y + got.q.z * want.q.z +
	                got.q.w * want.q.w);
	assert_float_equal(d, 1.0f, tol);
}

/* The body's rest poses, head-local (the head at the origin, unrotated). */
static const struct {
	pt_bone bone;
	float p[3];
	float axis[3], deg;
} rest_table[] = {
    {PT_BONE_HIPS, {0.0f, -0.60f, 0.0f}, {0, 1, 0}, 0.0f},
    {PT_BONE_SPINE, {0.0f, -0.48f, 0.0f}, {1, 0, 0}, 5.0f},
    {PT_BONE_CHEST, {0.0f, -0.35f, 0.01f}, {1, 0, 0}, -5.0f},
    {PT_BONE_UPPER_CHEST, {0.0f, -0.22f, 0.01f}, {0, 1, 0}, 0.0f},
    {PT_BONE_LEFT_UPPER_ARM, {0.18f, -0.20f, 0.0f}, {0, 0, 1}, 80.0f},
    {PT_BONE_LEFT_LOWER_ARM, {0.44f, -0.22f, 0.0f}, {0, 0, 1}, 85.0f},
    {PT_BONE_LEFT_EYE, {0.03f, 0.04f, 0.08f}, {0, 1, 0}, 0.0f},
};
enum { NREST = sizeof rest_table / sizeof rest_table[0] };

static pt_pose rest_of(pt_bone b)
{
	for (int i = 0; i < NREST; i++)
		if (rest_table[i].bone == b) {
			pt_pose r = {pt_v3(rest_table[i].p[0], rest_table[i].p[1], rest_table[i].p[2]),
			             axis_angle(rest_table[i].axis[0], rest_table[i].axis[1],
			                        rest_table[i].axis[2],
			                        rest_table[i].deg * PI_F / 180.0f)};
			return r;
		}
	fail();
	return (pt_pose){{0, 0, 0}, {0, 0, 0, 1}};
}

/* A spring-bone definition with the body's bones and one straight strand of `points`
 * hanging -Y from `anchor` on `bone` (-1: the head), no prewarm, world-space inertia. */
static void body_def(pt_instance_def *d, int bone, pt_vec3 anchor, int points)
{
	tdef_init(d);
	d->solver = PT_SOLVER_SPRINGBONE;
	d->springbone.center_head = 0;
	d->prewarm_s = 0.0f;
	d->substeps = 1;
	d->bone_count = NREST;
	for (int i = 0; i < NREST; i++) {
		pt_pose r = rest_of(rest_table[i].bone);
		d->bones[i].bone = rest_table[i].bone;
		d->bones[i].position = r.p;
		d->bones[i].rotation = r.q;
	}
	pt_strand_def *s = &d->strands[0];
	s->anchor = anchor;
	s->direction = pt_v3(0.0f, -1.0f, 0.2f);
	s->points = points;
	s->segment_length = 0.05f;
	s->bone = bone;
	pt_joint_def j = pt_joint_def_default();
	j.stiffness = 0.8f;
	j.gravity_power = 0.5f;
	j.drag_force = 0.3f;
	pt_strand_set_joints(s, j);
}

static pt_id create(pt_world *w, pt_instance_def *d, pt_pose head)
{
	pt_error e = pt_instance_validate(d);
	if (!e.ok)
		print_message("%s: %s\n", e.field, e.message);
	assert_true(e.ok);
	pt_id id = pt_world_create_instance(w, d, head);
	assert_false(pt_id_is_null(id));
	return id;
}

/* The rule, in closed form, before and after ancestors get poses. */
static void test_unposed_rule(void **st)
{
	(void)st;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	body_def(&d, PT_BONE_HIPS, pt_v3(0.1f, -0.62f, 0.1f), 4);
	pt_pose head = {pt_v3(0.3f, 1.6f, -0.2f), axis_angle(0, 1, 0, PI_F / 3)};
	pt_id id = create(w, &d, head);
	pt_pose got, body = {head.p, pt_quat_identity()};
	/* only a head pose: everything not under the head keeps its rest rotation at the
	 * head's position plus its rest offset; the eye turns with the head */
	pt_bone free_bones[] = {PT_BONE_HIPS, PT_BONE_CHEST, PT_BONE_LEFT_LOWER_ARM};
	for (int i = 0; i < 3; i++) {
		assert_int_equal(pt_world_get_bone_pose(w, id, free_bones[i], &got), 1);
		assert_pose_near(got, compose(body, rest_of(free_bones[i])), 1e-6f);
	}
	assert_int_equal(pt_world_get_bone_pose(w, id, PT_BONE_LEFT_EYE, &got), 1);
	assert_pose_near(got, compose(head, rest_of(PT_BONE_LEFT_EYE)), 1e-6f);
	/* not in the definition's "bones": no pose */
	assert_int_equal(pt_world_get_bone_pose(w, id, PT_BONE_NECK, &got), 0);
	/* the hips posed: the chest and the forearm follow them by the rest hierarchy (the
	 * forearm's nearest ancestors in the table: upper arm, then upper chest ... hips) */
	pt_pose hips = {pt_v3(1.0f, 0.9f, 0.5f), axis_angle(0.2f, 1, 0.1f, 0.5f)};
	assert_int_equal(pt_world_set_bone_pose(w, id, PT_BONE_HIPS, hips), 1);
	pt_pose hips_rel = compose(hips, inverse(rest_of(PT_BONE_HIPS)));
	assert_int_equal(pt_world_get_bone_pose(w, id, PT_BONE_CHEST, &got), 1);
	assert_pose_near(got, compose(hips_rel, rest_of(PT_BONE_CHEST)), 1e-5f);
	assert_int_equal(pt_world_get_bone_pose(w, id, PT_BONE_LEFT_LOWER_ARM, &got), 1);
	assert_pose_near(got, compose(hips_rel, rest_of(PT_BONE_LEFT_LOWER_ARM)), 1e-5f);
	/* the upper arm posed too: the forearm now follows it, not the hips */
	pt_pose arm = {pt_v3(1.3f, 1.2f, 0.4f), axis_angle(1, 0, 0.3f, -1.1f)};
	assert_int_equal(pt_world_set_bone_pose(w, id, PT_BONE_LEFT_UPPER_ARM, arm), 1);
	pt_pose arm_rel = compose(arm, inverse(rest_of(PT_BONE_LEFT_UPPER_ARM)));
	assert_int_equal(pt_world_get_bone_pose(w, id, PT_BONE_LEFT_LOWER_ARM, &got), 1);
	assert_pose_near(got, compose(arm_rel, rest_of(PT_BONE_LEFT_LOWER_ARM)), 1e-5f);
	/* and the strand on the hips hangs from them once a step has run */
	pt_world_step(w, 1.0f / 60.0f, 1);
	pt_vec3 pts[4];
	assert_int_equal(pt_world_read_points(w, id, pts, 4), 4);
	pt_vec3 root = vadd(hips_rel.p, qrot(hips_rel.q, d.strands[0].anchor));
	assert_true(vdist(pts[0], root) < 1e-5f);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* A skirt strand on the hips and the same strand on the head; the head turns 60 degrees
 * in 0.5 s and holds. The skirt does not move (1e-5 m); the head's strand swings. */
static void test_head_turn_leaves_skirt(void **st)
{
	(void)st;
	for (int rate = 0; rate < 2; rate++) {
		pt_world *w = pt_world_create(NULL);
		pt_instance_def d;
		body_def(&d, PT_BONE_HIPS, pt_v3(0.12f, -0.64f, 0.08f), 6);
		d.substeps = 4;
		d.springbone.rate = rate ? PT_SPRINGBONE_RATE_SUBSTEP : PT_SPRINGBONE_RATE_FRAME;
		tdef_strands(&d, 2);
		pt_strand_def_copy(&d.strands[1], &d.strands[0]);
		d.strands[1].bone = -1;
		pt_pose head = {pt_v3(0.0f, 1.6f, 0.0f), pt_quat_identity()};
		d.prewarm_s = 2.0f; /* both at rest under gravity first */
		pt_id id = create(w, &d, head);
		pt_vec3 start[12], pts[12];
		assert_int_equal(pt_world_read_points(w, id, start, 12), 12);
		float skirt = 0.0f, hair = 0.0f;
		for (int t = 1; t <= 90; t++) {
			float f = t < 30 ? (float)t / 30.0f : 1.0f;
			head.q = axis_angle(0, 1, 0, PI_F / 3 * f * f * (3.0f - 2.0f * f));
			pt_world_set_head(w, id, head);
			pt_world_step(w, 1.0f / 60.0f, 4);
			assert_int_equal(pt_world_read_points(w, id, pts, 12), 12);
			for (int i = 0; i < 6; i++) {
				skirt = fmaxf(skirt, vdist(pts[i], start[i]));
				hair = fmaxf(hair, vdist(pts[6 + i], start[6 + i]));
			}
		}
		print_message("rate %d: skirt moved %.2g m, the same strand on the head %.3f m\n",
		              rate, skirt, hair);
		assert_true(skirt <= 1e-5f);
		assert_true(hair > 0.1f);
		pt_world_destroy(w);
		pt_instance_def_fini(&d);
	}
}

/* A teleport ("keep": 5 m and 90 degrees in one tick) carries each strand with its own
 * frame: the skirt on the unposed hips by the head's translation only (the hips keep their
 * rotation), the same strand on the head turned with it. Shapes kept within 1e-5 m. */
static void test_teleport_carries_by_frame(void **st)
{
	(void)st;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	body_def(&d, PT_BONE_HIPS, pt_v3(0.12f, -0.64f, 0.08f), 6);
	d.prewarm_s = 1.0f;
	tdef_strands(&d, 2);
	pt_strand_def_copy(&d.strands[1], &d.strands[0]);
	d.strands[1].bone = -1;
	pt_pose head = {pt_v3(0.0f, 1.6f, 0.0f), pt_quat_identity()};
	pt_id id = create(w, &d, head);
	pt_vec3 before[12], after[12];
	assert_int_equal(pt_world_read_points(w, id, before, 12), 12);
	pt_pose jump = {pt_v3(5.0f, 1.6f, 0.0f), axis_angle(0, 1, 0, PI_F / 2)};
	assert_int_equal(pt_world_set_head(w, id, jump), 1);
	pt_world_step(w, 1.0f / 60.0f, 1);
	assert_int_equal(pt_world_read_points(w, id, after, 12), 12);
	float skirt = 0.0f, hair = 0.0f;
	for (int i = 0; i < 6; i++) {
		/* the skirt: moved by (5, 0, 0), not turned */
		skirt = fmaxf(skirt, vdist(after[i], vadd(before[i], pt_v3(5.0f, 0.0f, 0.0f))));
		/* the head strand: turned about the head and moved with it */
		pt_vec3 want = vadd(jump.p, qrot(jump.q, vsub(before[6 + i], head.p)));
		hair = fmaxf(hair, vdist(after[6 + i], want));
	}
	print_message("teleport: skirt off by %.2g m, head strand by %.2g m\n", skirt, hair);
	/* one step of motion after the carry: the chains were at rest, so it stays small */
	assert_true(skirt <= 1e-4f);
	assert_true(hair <= 1e-4f);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* The forearm's world pose at tick t: swinging and travelling. */
static pt_pose forearm_at(int t)
{
	float s = (float)t / 60.0f;
	pt_pose p = {pt_v3(0.5f + 0.2f * sinf(3.0f * s), 1.3f + 0.1f * sinf(5.0f * s), 0.3f * s),
	             qmul(axis_angle(0, 0, 1, 1.4f + 0.8f * sinf(4.0f * s)),
	                  axis_angle(1, 0, 0, 0.5f * sinf(2.0f * s)))};
	return p;
}

/* Instance A: a strand on the posed left forearm, head still. Instance B: the same strand
 * on the head, the head posed at the forearm's frame, pose x rest^-1. One step a tick
 * (every pose taken at its end), so the two see the same frames: the same points within
 * 1e-5 m, on the AVX2 and plain-C lanes and per chain (an ellipsoid far away). */
static void test_bone_chain_equals_head_chain(void **st)
{
	(void)st;
	const char *const name[] = {"lanes auto", "lanes scalar", "per chain"};
	for (int path = 0; path < 3; path++) {
		pt_world_def wd = pt_world_def_default();
		wd.kernel = path == 1 ? PT_KERNEL_SCALAR : PT_KERNEL_AUTO;
		pt_world *w = pt_world_create(&wd);
		pt_instance_def a, b = {0};
		body_def(&a, PT_BONE_LEFT_LOWER_ARM, pt_v3(0.50f, -0.25f, 0.02f), 8);
		a.springbone.rate = PT_SPRINGBONE_RATE_SUBSTEP;
		if (path == 2) {
			a.collider_count = 1;
			a.colliders[0].shape = PT_SHAPE_ELLIPSOID;
			a.colliders[0].attach = PT_ATTACH_WORLD;
			a.colliders[0].center = pt_v3(50.0f, 50.0f, 50.0f);
			a.colliders[0].radii = pt_v3(0.1f, 0.2f, 0.3f);
		}
		tdef_copy(&b, &a);
		b.strands[0].bone = -1;
		pt_pose rest_inv = inverse(rest_of(PT_BONE_LEFT_LOWER_ARM));
		pt_pose still = {pt_v3(0.0f, 1.6f, 0.0f), pt_quat_identity()};
		pt_id ia = create(w, &a, still);
		assert_int_equal(pt_world_set_bone_pose(w, ia, PT_BONE_LEFT_LOWER_ARM, forearm_at(0)),
		                 1);
		pt_world_reset_instance(w, ia); /* at rest on the forearm's first pose */
		pt_id ib = create(w, &b, compose(forearm_at(0), rest_inv));
		float worst = 0.0f, moved = 0.0f;
		pt_vec3 pa[8], pb[8], first[8];
		pt_world_read_points(w, ia, first, 8);
		for (int t = 1; t <= 120; t++) {
			pt_pose f = forearm_at(t);
			assert_int_equal(pt_world_set_bone_pose(w, ia, PT_BONE_LEFT_LOWER_ARM, f), 1);
			assert_int_equal(pt_world_set_head(w, ib, compose(f, rest_inv)), 1);
			pt_world_step(w, 1.0f / 60.0f, 1);
			pt_world_read_points(w, ia, pa, 8);
			pt_world_read_points(w, ib, pb, 8);
			for (int i = 0; i < 8; i++) {
				worst = fmaxf(worst, vdist(pa[i], pb[i]));
				moved = fmaxf(moved, vdist(pa[i], first[i]));
			}
		}
		print_message("%-12s forearm strand vs head strand: %.2g m (moved %.2f m)\n",
		              name[path], worst, moved);
		assert_true(worst <= 1e-5f);
		assert_true(moved > 0.2f);
		pt_world_destroy(w);
		pt_instance_def_fini(&a), pt_instance_def_fini(&b);
	}
}

/* A curved rest shape: point k of a chain hanging from (0.05, -0.02, -0.10) on the head. */
static pt_vec3 curve(int k)
{
	float a = 0.25f * (float)k;
	return pt_v3(0.05f + 0.01f * (float)k, -0.02f - 0.04f * (float)k * cosf(a * 0.5f),
	             -0.10f - 0.03f * sinf(a));
}

static void set_rest(pt_strand_def *s, int from, int points)
{
	s->has_rest = 1;
	s->points = points;
	s->anchor = curve(from);
	for (int j = 0; j < points - 1; j++)
		s->joints[j].rest = curve(from + j + 1);
}

/* The head's pose at tick t: shaking +-45 degrees and bobbing. */
static pt_pose shake_at(int t)
{
	float s = (float)t / 60.0f;
	pt_pose p = {pt_v3(0.0f, 1.6f + 0.05f * sinf(6.0f * s), 0.1f * sinf(2.0f * s)),
	             axis_angle(0.2f, 1, 0, 0.785f * sinf(2.0f * PI_F * s))};
	return p;
}

/* One chain of 9 points, and the same cut at point 5 into a chain of 6 and a branch of 4
 * hanging from its tip: the branch's first joint is the long chain's sixth, the same
 * terms, the frame of the parent's tip bone. A head sphere sits in the way. Same points
 * within 1e-4 m (float rounding of the replayed frame), at 1 to 16 substeps, with the
 * tails kept at rest length and as three-vrm keeps them. */
static void test_branch_at_tip_equals_long_chain(void **st)
{
	(void)st;
	static const int subs[] = {1, 2, 3, 4, 6, 8, 12, 16};
	for (int c = 0; c < 2 * (int)(sizeof subs / sizeof subs[0]); c++) {
		int sub = subs[c / 2];
		pt_springbone_length len =
		    c % 2 ? PT_SPRINGBONE_LENGTH_THREEVRM : PT_SPRINGBONE_LENGTH_REST;
		pt_world *w = pt_world_create(NULL);
		pt_instance_def a, b;
		body_def(&a, -1, pt_v3(0, 0, 0), 9);
		a.substeps = sub;
		a.springbone.rate = PT_SPRINGBONE_RATE_SUBSTEP;
		a.springbone.length = len;
		set_rest(&a.strands[0], 0, 9);
		a.collider_count = 1;
		a.colliders[0].shape = PT_SHAPE_SPHERE;
		a.colliders[0].center = pt_v3(0.0f, -0.05f, 0.0f);
		a.colliders[0].radius = 0.11f;
		a.colliders[0].radius_b = -1.0f;
		body_def(&b, -1, pt_v3(0, 0, 0), 6);
		b.substeps = sub;
		b.springbone.rate = PT_SPRINGBONE_RATE_SUBSTEP;
		b.springbone.length = len;
		b.collider_count = 1;
		b.colliders[0] = a.colliders[0];
		tdef_strands(&b, 2);
		pt_strand_def_copy(&b.strands[1], &b.strands[0]);
		set_rest(&b.strands[0], 0, 6);
		set_rest(&b.strands[1], 5, 4);
		b.strands[1].parent_strand = 0;
		b.strands[1].parent_point = 5;
		pt_id ia = create(w, &a, shake_at(0)), ib = create(w, &b, shake_at(0));
		float worst = 0.0f, moved = 0.0f;
		pt_vec3 pa[9], pb[10], first[9];
		pt_world_read_points(w, ia, first, 9);
		for (int t = 1; t <= 150; t++) {
			pt_world_set_head(w, ia, shake_at(t));
			pt_world_set_head(w, ib, shake_at(t));
			pt_world_step(w, 1.0f / 60.0f, sub);
			assert_int_equal(pt_world_read_points(w, ia, pa, 9), 9);
			assert_int_equal(pt_world_read_points(w, ib, pb, 10), 10);
			for (int i = 0; i < 9; i++) {
				pt_vec3 q = i < 6 ? pb[i] : pb[6 + i - 5];
				worst = fmaxf(worst, vdist(pa[i], q));
				moved = fmaxf(moved, vdist(pa[i], first[i]));
			}
			/* the branch's root is the parent's tip */
			worst = fmaxf(worst, vdist(pb[6], pb[5]));
		}
		print_message("substeps %d, length %s: branch at the tip vs one chain %.2g m (moved "
		              "%.2f m)\n",
		              sub, c % 2 ? "three-vrm" : "rest", worst, moved);
		assert_true(worst <= 1e-4f);
		assert_true(moved > 0.1f);
		pt_world_destroy(w);
		pt_instance_def_fini(&a), pt_instance_def_fini(&b);
	}
}

/* A branch from the parent's point 2, its root 3 cm to the side: through a shake its root
 * stays on point 2's bone, at the rest distance from point 2 and the rest angle to the
 * parent's segment 2 (which point 2's bone turns with). */
static void test_branch_rigid_on_its_bone(void **st)
{
	(void)st;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	body_def(&d, -1, pt_v3(0, 0, 0), 7);
	d.substeps = 4;
	set_rest(&d.strands[0], 0, 7);
	tdef_strands(&d, 2);
	pt_strand_def_copy(&d.strands[1], &d.strands[0]);
	pt_vec3 off = pt_v3(0.03f, 0.0f, 0.0f);
	d.strands[1].has_rest = 0;
	d.strands[1].anchor = vadd(curve(2), off);
	d.strands[1].direction = pt_v3(1.0f, -1.0f, 0.0f);
	d.strands[1].points = 5;
	d.strands[1].parent_strand = 0;
	d.strands[1].parent_point = 2;
	pt_vec3 seg = vsub(curve(3), curve(2));
	float rest_cos = (seg.x * off.x + seg.y * off.y + seg.z * off.z) / (vlen(seg) * vlen(off));
	pt_id id = create(w, &d, shake_at(0));
	pt_vec3 p[12], first[12];
	pt_world_read_points(w, id, first, 12);
	float worst_d = 0.0f, worst_c = 0.0f, moved = 0.0f;
	for (int t = 1; t <= 150; t++) {
		pt_world_set_head(w, id, shake_at(t));
		pt_world_step(w, 1.0f / 60.0f, 4);
		assert_int_equal(pt_world_read_points(w, id, p, 12), 12);
		pt_vec3 r = vsub(p[7], p[2]), s = vsub(p[3], p[2]);
		worst_d = fmaxf(worst_d, fabsf(vlen(r) - vlen(off)));
		float c = (r.x * s.x + r.y * s.y + r.z * s.z) / (vlen(r) * vlen(s));
		worst_c = fmaxf(worst_c, fabsf(c - rest_cos));
		moved = fmaxf(moved, vdist(p[7], first[7]));
	}
	print_message("branch root: distance off by %.2g m, cosine by %.2g; moved %.2f m\n",
	              worst_d, worst_c, moved);
	assert_true(worst_d <= 1e-5f);
	assert_true(worst_c <= 1e-4f);
	assert_true(moved > 0.05f);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

static void expect_error(pt_instance_def *d, const char *field)
{
	pt_error e = pt_instance_validate(d);
	assert_false(e.ok);
	if (strcmp(e.field, field) != 0)
		print_message("field %s (%s), expected %s\n", e.field, e.message, field);
	assert_string_equal(e.field, field);
}

static void test_validation(void **st)
{
	(void)st;
	pt_instance_def d;
	body_def(&d, PT_BONE_LEFT_LOWER_ARM, pt_v3(0.5f, -0.25f, 0.0f), 5);
	tdef_strands(&d, 2);
	pt_strand_def_copy(&d.strands[1], &d.strands[0]);
	d.strands[1].bone = -1;
	d.strands[1].parent_strand = 0;
	d.strands[1].parent_point = 4;
	assert_true(pt_instance_validate(&d).ok);
	d.strands[0].bone = PT_BONE_NECK; /* not in "bones" */
	expect_error(&d, "strands[0].bone");
	d.strands[0].bone = PT_BONE_COUNT;
	expect_error(&d, "strands[0].bone");
	d.strands[0].bone = PT_BONE_HIPS;
	d.strands[1].parent_point = 5; /* strand 0 has points 0..4 */
	expect_error(&d, "strands[1].parent.point");
	d.strands[1].parent_point = 1;
	d.strands[1].parent_strand = 1; /* itself */
	expect_error(&d, "strands[1].parent.strand");
	d.strands[1].parent_strand = 0;
	d.strands[1].bone = PT_BONE_HIPS; /* both */
	expect_error(&d, "strands[1].bone");
	d.strands[1].bone = -1;
	d.springbone.length = PT_SPRINGBONE_LENGTH_THREEVRM;
	assert_true(pt_instance_validate(&d).ok);
	d.springbone.form = PT_SPRINGBONE_PULL; /* three-vrm's length is the vrm form's */
	expect_error(&d, "springbone.length");
	d.springbone.form = PT_SPRINGBONE_VRM;
	d.springbone.length = PT_SPRINGBONE_LENGTH_REST;
	d.solver = PT_SOLVER_VERLET;
	expect_error(&d, "strands[0].bone");
	pt_instance_def_fini(&d);
}

/* "bone" and "parent" read and written by the schema; bad values name their field. */
static void test_json(void **st)
{
	(void)st;
	const char *src =
	    "{\"solver\": \"springbone\", \"bones\": {\"hips\": {\"position\": [0, -0.6, 0], "
	    "\"rotation\": [0, 0, 0, 1]}}, \"strands\": [{\"anchor\": [0.1, -0.6, 0], "
	    "\"bone\": \"hips\", \"points\": 4}, {\"anchor\": [0.1, -0.7, 0], \"points\": 3, "
	    "\"parent\": {\"strand\": 0, \"point\": 2}}]}";
	pt_instance_def d;
	tdef_init(&d);
	pt_error e;
	json_t *doc = pt_schema_read_buffer(src, strlen(src), &e);
	assert_non_null(doc);
	int rc = pt_schema_parse(doc, &d, NULL, &e);
	json_decref(doc);
	if (rc != 0)
		print_message("%s: %s\n", e.field, e.message);
	assert_int_equal(rc, 0);
	assert_int_equal(d.strands[0].bone, PT_BONE_HIPS);
	assert_int_equal(d.strands[0].parent_strand, -1);
	assert_int_equal(d.strands[1].bone, -1);
	assert_int_equal(d.strands[1].parent_strand, 0);
	assert_int_equal(d.strands[1].parent_point, 2);
	json_t *out = pt_schema_dump(&d);
	assert_non_null(out);
	json_t *s0 = json_array_get(json_object_get(out, "strands"), 0);
	json_t *s1 = json_array_get(json_object_get(out, "strands"), 1);
	assert_string_equal(json_string_value(json_object_get(s0, "bone")), "hips");
	assert_null(json_object_get(s0, "parent"));
	assert_null(json_object_get(s1, "bone"));
	json_t *par = json_object_get(s1, "parent");
	assert_int_equal(json_integer_value(json_object_get(par, "strand")), 0);
	assert_int_equal(json_integer_value(json_object_get(par, "point")), 2);
	json_decref(out);
	const char *bad[][2] = {
	    {"{\"strands\": [{\"bone\": \"tail\"}]}", "strands[0].bone"},
	    {"{\"strands\": [{\"parent\": {\"strand\": 0}}]}", "strands[0].parent"},
	    {"{\"strands\": [{\"parent\": {\"strand\": 0, \"point\": 1, \"x\": 1}}]}",
	     "strands[0].parent.x"},
	    {"{\"solver\": \"springbone\", \"strands\": [{}, {\"parent\": {\"strand\": 1, "
	     "\"point\": 1}}]}",
	     "strands[1].parent.strand"},
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		pt_instance_def x;
		tdef_init(&x);
		json_t *b = pt_schema_read_buffer(bad[i][0], strlen(bad[i][0]), &e);
		assert_non_null(b);
		assert_int_equal(pt_schema_parse(b, &x, NULL, &e), -1);
		json_decref(b);
		if (strcmp(e.field, bad[i][1]) != 0)
			print_message("%s: field %s (%s)\n", bad[i][0], e.field, e.message);
		assert_string_equal(e.field, bad[i][1]);
		pt_instance_def_fini(&x);
	}
	pt_instance_def_fini(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unposed_rule),
	    cmocka_unit_test(test_head_turn_leaves_skirt),
	    cmocka_unit_test(test_teleport_carries_by_frame),
	    cmocka_unit_test(test_bone_chain_equals_head_chain),
	    cmocka_unit_test(test_branch_at_tip_equals_long_chain),
	    cmocka_unit_test(test_branch_rigid_on_its_bone),
	    cmocka_unit_test(test_validation),
	    cmocka_unit_test(test_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
