/* Collider shapes: signed distance closed forms and push-out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "collide.h"
#include "ponytail/collider.h"

static pt_collider_rt to_world(pt_collider_def k, pt_pose head)
{
	pt_mat3 R = m3_from_quat(head.q);
	pt_collider_rt c;
	pt_colliders_to_world(&k, 1, &head, &R, &c);
	return c;
}

static pt_pose identity_at(float x, float y, float z)
{
	pt_pose p = {pt_v3(x, y, z), pt_quat_identity()};
	return p;
}

static pt_collider_def def(pt_shape s)
{
	pt_collider_def k;
	memset(&k, 0, sizeof k);
	k.shape = s;
	k.radius_b = -1.0f;
	return k;
}

static void test_sphere_distance(void **state)
{
	(void)state;
	pt_collider_def k = def(PT_SHAPE_SPHERE);
	k.center = pt_v3(0, 0.1f, 0);
	k.radius = 0.2f;
	pt_collider_rt c = to_world(k, identity_at(1, 0, 0));
	pt_vec3 dir;
	assert_float_equal(pt_collider_distance(&c, pt_v3(1, 0.1f, 0.5f), &dir), 0.3f, 1e-6f);
	assert_float_equal(dir.z, 1.0f, 1e-6f);
	assert_float_equal(pt_collider_distance(&c, pt_v3(1.05f, 0.1f, 0), &dir), -0.15f, 1e-6f);
	k.shape = PT_SHAPE_INSIDE_SPHERE;
	c = to_world(k, identity_at(1, 0, 0));
	assert_float_equal(pt_collider_distance(&c, pt_v3(1.05f, 0.1f, 0), &dir), 0.15f, 1e-6f);
	assert_float_equal(dir.x, -1.0f, 1e-6f); /* inward is the free side */
}

static void test_capsule_distance_rotated(void **state)
{
	(void)state;
	pt_collider_def k = def(PT_SHAPE_CAPSULE);
	k.a = pt_v3(0, 0, 0);
	k.b = pt_v3(0, -1, 0);
	k.radius = 0.1f;
	/* head rotated 90 deg about Z: the capsule axis -Y becomes +X */
	pt_pose head = identity_at(0, 0, 0);
	head.q = q_axis_angle(pt_v3(0, 0, 1), 1.5707963f);
	pt_collider_rt c = to_world(k, head);
	pt_vec3 dir;
	assert_float_equal(pt_collider_distance(&c, pt_v3(0.5f, 0.3f, 0), &dir), 0.2f, 1e-5f);
	assert_float_equal(pt_collider_distance(&c, pt_v3(1.5f, 0, 0), &dir), 0.4f, 1e-5f); /* past b */
	/* tapered: radius 0.1 at a, 0.3 at b; at the middle 0.2 */
	k.radius_b = 0.3f;
	c = to_world(k, identity_at(0, 0, 0));
	assert_float_equal(pt_collider_distance(&c, pt_v3(0.5f, -0.5f, 0), &dir), 0.3f, 1e-5f);
}

static void test_plane_and_ellipsoid(void **state)
{
	(void)state;
	pt_collider_def k = def(PT_SHAPE_PLANE);
	k.center = pt_v3(0, 1, 0);
	k.normal = pt_v3(0, 2, 0); /* normalised on the way */
	pt_collider_rt c = to_world(k, identity_at(0, 0, 0));
	pt_vec3 dir;
	assert_float_equal(pt_collider_distance(&c, pt_v3(5, 0.5f, 3), &dir), -0.5f, 1e-6f);
	k = def(PT_SHAPE_ELLIPSOID);
	k.radii = pt_v3(0.1f, 0.2f, 0.3f);
	c = to_world(k, identity_at(0, 0, 0));
	/* on each axis the distance is exact */
	assert_float_equal(pt_collider_distance(&c, pt_v3(0.15f, 0, 0), &dir), 0.05f, 1e-6f);
	assert_float_equal(pt_collider_distance(&c, pt_v3(0, -0.1f, 0), &dir), -0.1f, 1e-6f);
	assert_float_equal(dir.y, -1.0f, 1e-6f);
	assert_float_equal(pt_collider_distance(&c, pt_v3(0, 0, 0.5f), &dir), 0.2f, 1e-6f);
}

/* Push-out leaves every point on or outside every selected collider. */
static void test_push_out_all_shapes(void **state)
{
	(void)state;
	pt_collider_def ks[6];
	for (int s = 0; s < PT_SHAPE_COUNT; s++) {
		ks[s] = def((pt_shape)s);
		ks[s].radius = 0.1f;
		ks[s].radii = pt_v3(0.1f, 0.15f, 0.08f);
		ks[s].a = pt_v3(0, 0, 0);
		ks[s].b = pt_v3(0, -0.2f, 0);
		ks[s].normal = pt_v3(0.3f, 1, 0);
	}
	ks[PT_SHAPE_INSIDE_SPHERE].radius = 0.5f;
	ks[PT_SHAPE_INSIDE_CAPSULE].radius = 0.5f;
	pt_pose head = identity_at(0.2f, 1.0f, -0.1f);
	head.q = q_norm((pt_quat){0.1f, 0.3f, -0.2f, 0.9f});
	pt_collider_rt cs[6];
	pt_mat3 R = m3_from_quat(head.q);
	pt_colliders_to_world(ks, 6, &head, &R, cs);
	uint32_t seed = 12345;
	for (int s = 0; s < PT_SHAPE_COUNT; s++)
		for (int i = 0; i < 2000; i++) {
			float v[3];
			for (int j = 0; j < 3; j++) {
				seed = seed * 1664525u + 1013904223u;
				v[j] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * 1.4f;
			}
			pt_vec3 p = v3_add(head.p, pt_v3(v[0], v[1], v[2]));
			pt_collide_point(&cs[s], 1, &(pt_collider_mask){{1u}}, 0.01f, &p);
			pt_vec3 dir;
			float d = pt_collider_distance(&cs[s], p, &dir) - 0.01f;
			/* the ellipsoid's ray distance is exact on the surface: pushing along it lands there */
			if (d < -1e-5f)
				fail_msg("shape %d point %d still %g inside", s, i, (double)d);
		}
	/* the mask selects colliders: bit clear -> no push */
	pt_vec3 p = head.p;
	assert_int_equal(pt_collide_point(cs, 1, &(pt_collider_mask){{0u}}, 0.0f, &p), 0);
	assert_int_equal(pt_collide_point(cs, 1, &(pt_collider_mask){{1u}}, 0.0f, &p), 1);
}

/* The public signed distance moves head-attached colliders with the head. */
static void test_public_signed_distance(void **state)
{
	(void)state;
	pt_collider_def k = def(PT_SHAPE_SPHERE);
	k.center = pt_v3(0, 0, 0.1f);
	k.radius = 0.1f;
	pt_pose head = identity_at(0, 1.5f, 0);
	head.q = q_axis_angle(pt_v3(0, 1, 0), 1.5707963f); /* +Z turns to +X */
	pt_vec3 dir;
	float d = pt_collider_signed_distance(&k, head, pt_v3(0.5f, 1.5f, 0), &dir);
	assert_float_equal(d, 0.3f, 1e-5f);
	assert_float_equal(dir.x, 1.0f, 1e-5f);
	k.attach = PT_ATTACH_WORLD;
	assert_float_equal(pt_collider_signed_distance(&k, head, pt_v3(0, 0, 0.5f), NULL), 0.3f, 1e-6f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sphere_distance),
	    cmocka_unit_test(test_capsule_distance_rotated),
	    cmocka_unit_test(test_plane_and_ellipsoid),
	    cmocka_unit_test(test_push_out_all_shapes),
	    cmocka_unit_test(test_public_signed_distance),
	};
	return cmocka_run_group_tests_name("collide", tests, NULL, NULL);
}
