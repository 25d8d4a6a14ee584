/* Angle limits (draft VRMC_springBone_limit cone and hinge): never exceeded, whatever the
 * head does, at any substep count. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "sb_scenario.h"
#include "vecmath.h"

#define DEG (180.0 / 3.14159265358979323846)
#define POINTS 9

/* An 8-joint strand behind a head sphere, joints stiff enough to hang but soft enough
 * to be thrown about, with `lim` on every joint. */
static void limited(pt_instance_def *d, pt_limit_type type, float angle_deg, pt_vec3 axis,
                    int substeps)
{
	pt_joint_def j = pt_joint_def_default();
	j.stiffness = 0.5f;
	j.drag_force = 0.2f;
	j.gravity_power = 0.5f;
	j.limit = type;
	j.limit_angle = angle_deg / (float)DEG;
	j.limit_axis = axis;
	sb_def_strand(d, pt_v3(0, 0, -0.125f), pt_v3(0, -1, 0), POINTS, 0.04f, j, substeps);
	d->collider_count = 1;
	d->colliders[0].shape = PT_SHAPE_SPHERE;
	d->colliders[0].radius = 0.1f;
	d->colliders[0].radius_b = -1.0f;
	d->teleport.angle_deg = 180.0f; /* the stress motion is fast: no teleports wanted */
	d->teleport.distance = 1000.0f;
}

/* Independent of the solver: the shortest arc from unit a to unit b. */
static pt_quat arc(pt_vec3 a, pt_vec3 b)
{
	pt_vec3 k = v3_cross(a, b);
	pt_quat q = {k.x, k.y, k.z, 1.0f + v3_dot(a, b)};
	return q_norm(q);
}

typedef struct excess {
	double angle_deg; /* largest angle beyond the limit (negative: always inside) */
	double plane;     /* hinge: largest |e . n| */
	double max_angle; /* largest angle from the rest direction seen */
} excess;

/* Checks every joint of the strand: cone, the angle between the segment and its rest
 * direction turned by the parent; hinge, the segment's distance from the plane normal
 * to the axis in the parent's frame, and its angle from the rest direction within that
 * plane. The parent frame is rebuilt here (head rotation, then each parent's shortest
 * arc from its rest direction to its segment). */
static void check(const pt_vec3 *p, pt_pose head, const pt_instance_def *d, const pt_joint_def *j,
                  excess *x)
{
	pt_quat W = head.q;
	pt_vec3 dir = v3_norm_or(d->strands[0].direction, pt_v3(0, -1, 0));
	for (int i = 0; i + 1 < POINTS; i++) {
		pt_vec3 rest = q_rotate(W, dir);
		pt_vec3 e = v3_norm_or(sb_sub(p[i + 1], p[i]), rest);
		double a;
		if (j->limit == PT_LIMIT_HINGE) {
			pt_vec3 n = q_rotate(W, v3_norm_or(j->limit_axis, pt_v3(1, 0, 0)));
			x->plane = fmax(x->plane, fabs(v3_dot(e, n)));
			pt_vec3 r = v3_sub(rest, v3_scale(n, v3_dot(rest, n)));
			pt_vec3 ep = v3_sub(e, v3_scale(n, v3_dot(e, n)));
			a = sb_angle(ep, r) * DEG;
		} else {
			a = sb_angle(e, rest) * DEG;
		}
		x->max_angle = fmax(x->max_angle, a);
		x->angle_deg = fmax(x->angle_deg, a - j->limit_angle * DEG);
		W = q_norm(q_mul(arc(rest, e), W));
	}
}

/* The stress sequence (shake 45 deg in 0.3 s, nod 30 deg in 0.2 s, a 2.5 g jump) plus a
 * fast 90 deg shake; every joint measured against limit `j` (NULL: d's own). */
static excess run(const pt_instance_def *d, const pt_joint_def *j)
{
	if (!j)
		j = &d->strands[0].joints[0];
	excess x = {-1e9, 0.0, 0.0};
	pt_motion m[2] = {{PT_MOTION_STRESS, 0, 1, {pt_v3(0, 1.5f, 0), pt_quat_identity()}},
	                  pt_motion_default(PT_MOTION_SHAKE)};
	m[1].amplitude = 90.0f;
	m[1].period = 0.4f;
	pt_vec3 p[POINTS];
	for (int k = 0; k < 2; k++) {
		pt_world *w = pt_world_create(NULL);
		pt_id id = pt_world_create_instance(w, d, pt_motion_pose(&m[k], 0.0));
		for (int t = 0; t < 240; t++) {
			pt_pose h = pt_motion_pose(&m[k], t / 60.0);
			pt_world_set_head(w, id, h);
			pt_world_step(w, 1.0f / 60.0f, 1);
			pt_world_read_points(w, id, p, POINTS);
			pt_world_get_head(w, id, &h);
			check(p, h, d, j, &x);
		}
		pt_world_destroy(w);
	}
	return x;
}

/* 1e-3 deg: the clamp is exact on unit vectors; what is left is float rounding of the
 * stored positions (1e-7 m on 0.04 m bones, 1e-4 deg) and of the frame rebuilt here. */
static void test_cone_never_exceeded(void **state)
{
	(void)state;
	for (int n = 1; n <= 8; n *= 2) {
		pt_instance_def d;
		limited(&d, PT_LIMIT_CONE, 20.0f, pt_v3(1, 0, 0), n);
		pt_instance_def none;
		limited(&none, PT_LIMIT_NONE, 20.0f, pt_v3(1, 0, 0), n);
		excess x = run(&d, NULL), free = run(&none, &d.strands[0].joints[0]);
		printf("# cone 20 deg, %d substeps: largest angle %.4f deg (unlimited: %.1f deg)\n",
		       n, x.max_angle, free.max_angle);
		assert_true(free.max_angle > 40.0); /* the motion does try to exceed it */
		assert_true(x.angle_deg < 1e-3);
		pt_instance_def_fini(&d);
		pt_instance_def_fini(&none);
	}
}

static void test_hinge_never_exceeded(void **state)
{
	(void)state;
	/* axis x: the strand may swing back and forth in the y-z plane only, within 25 deg */
	for (int n = 1; n <= 8; n *= 2) {
		pt_instance_def d;
		limited(&d, PT_LIMIT_HINGE, 25.0f, pt_v3(1, 0, 0), n);
		pt_instance_def none;
		limited(&none, PT_LIMIT_NONE, 25.0f, pt_v3(1, 0, 0), n);
		excess x = run(&d, NULL), free = run(&none, &d.strands[0].joints[0]);
		assert_true(free.plane > 0.3 && free.max_angle > 40.0); /* it does try */
		printf("# hinge 25 deg, %d substeps: largest in-plane angle %.4f deg, off-plane "
		       "%.2g\n",
		       n, x.max_angle, x.plane);
		assert_true(x.angle_deg < 1e-3);
		assert_true(x.plane < 2e-5);
		pt_instance_def_fini(&d);
		pt_instance_def_fini(&none);
	}
}

/* A hinge of 180 deg is a pure plane constraint: the yaw shake's sideways swing is
 * removed, the chain's motion stays in the head's y-z plane. A cone of 180 deg changes
 * nothing at all (bit-identical to no limit). */
static void test_wide_limits(void **state)
{
	(void)state;
	pt_instance_def h;
	limited(&h, PT_LIMIT_HINGE, 180.0f, pt_v3(1, 0, 0), 1);
	excess x = run(&h, NULL);
	assert_true(x.plane < 2e-5);
	pt_instance_def a;
	limited(&a, PT_LIMIT_CONE, 180.0f, pt_v3(1, 0, 0), 1);
	pt_instance_def b;
	limited(&b, PT_LIMIT_NONE, 180.0f, pt_v3(1, 0, 0), 1);
	pt_world *w = pt_world_create(NULL);
	pt_motion m = pt_motion_default(PT_MOTION_SHAKE);
	pt_id ia = pt_world_create_instance(w, &a, m.base),
	      ib = pt_world_create_instance(w, &b, m.base);
	for (int t = 0; t < 120; t++) {
		pt_world_set_head(w, ia, pt_motion_pose(&m, t / 60.0));
		pt_world_set_head(w, ib, pt_motion_pose(&m, t / 60.0));
		pt_world_step(w, 1.0f / 60.0f, 1);
	}
	assert_true(pt_world_instance_hash(w, ia) == pt_world_instance_hash(w, ib));
	pt_world_destroy(w);
	pt_instance_def_fini(&h);
	pt_instance_def_fini(&a);
	pt_instance_def_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cone_never_exceeded),
	    cmocka_unit_test(test_hinge_never_exceeded),
	    cmocka_unit_test(test_wide_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
