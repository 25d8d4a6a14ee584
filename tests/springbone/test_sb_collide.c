/* The chain step's collider test (pt_sb_penetrates) against collide.c's signed distance:
 * every shape, points near and far, inside and out, tapered capsules, hit radii. Where
 * pt_collider_distance says "push", the fast test pushes by the same bits; where it says
 * "no push", so does the fast test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "springbone.h"

static uint32_t rng = 12345u;

static float uniform(float lo, float hi)
{
	rng = rng * 1664525u + 1013904223u;
	return lo + (hi - lo) * (float)(rng >> 8) / 16777216.0f;
}

static void test_fast_test_is_collide_c(void **state)
{
	(void)state;
	pt_collider_def defs[PT_SHAPE_COUNT];
	memset(defs, 0, sizeof defs);
	for (int s = 0; s < PT_SHAPE_COUNT; s++) {
		defs[s].shape = (pt_shape)s;
		defs[s].attach = PT_ATTACH_HEAD;
		defs[s].center = pt_v3(0.01f, 0.02f, -0.03f);
		defs[s].radii = pt_v3(0.08f, 0.11f, 0.1f);
		defs[s].a = pt_v3(0, -0.08f, 0);
		defs[s].b = pt_v3(0.02f, -0.2f, 0.01f);
		defs[s].normal = pt_v3(0.1f, 1, 0);
		defs[s].radius = 0.1f;
		defs[s].radius_b = s == PT_SHAPE_CAPSULE ? 0.05f : -1.0f;
	}
	pt_pose head = {pt_v3(0.3f, 1.5f, -0.2f), q_norm((pt_quat){0.1f, 0.4f, -0.2f, 0.9f})};
	pt_mat3 R = m3_from_quat(head.q);
	pt_collider_rt cols[PT_SHAPE_COUNT];
	pt_colliders_to_world(defs, PT_SHAPE_COUNT, &head, &R, cols);
	int pushes = 0, near_misses = 0;
	for (int s = 0; s < PT_SHAPE_COUNT; s++)
		for (int i = 0; i < 20000; i++) {
			/* most points within a few cm of the surface, where the two must agree */
			float span = i % 4 == 0 ? 0.5f : 0.2f;
			pt_vec3 p =
			    pt_v3(head.p.x + uniform(-span, span), head.p.y + uniform(-span, span),
			          head.p.z + uniform(-span, span));
			float hr = i % 3 == 0 ? 0.0f : uniform(0.0f, 0.03f);
			pt_vec3 dir_ref, dir = pt_v3(0, 0, 0);
			float ref = pt_collider_distance(&cols[s], p, &dir_ref) - hr, d = 0.0f;
			int hit = pt_sb_penetrates(&cols[s], p, hr, &d, &dir);
			assert_int_equal(hit, ref < 0.0f);
			if (hit) {
				assert_memory_equal(&d, &ref, sizeof d);
				assert_memory_equal(&dir, &dir_ref, sizeof dir);
				pushes++;
			} else if (ref < 1e-3f) {
				near_misses++;
			}
		}
	assert_true(pushes > 10000 && near_misses > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fast_test_is_collide_c),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
