/* The signed distances behind `ponytail sim --summary`'s max_penetration_m, against
 * distances worked out on paper and against core's. The CLI is not a library, so its
 * one file is compiled in here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "../../clients/cli/sdf.c"
#include "ponytail/collider.h"

#define M_PI_ 3.14159265358979323846
#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static pt_collider_def shape(pt_shape s)
{
	pt_collider_def c;
	memset(&c, 0, sizeof c);
	c.shape = s;
	c.radius_b = -1;
	return c;
}

static const pt_pose still = {{0, 0, 0}, {0, 0, 0, 1}};

static void test_sphere_and_inside_sphere(void **state)
{
	(void)state;
	pt_collider_def c = shape(PT_SHAPE_SPHERE);
	c.center = pt_v3(0, 1, 0);
	c.radius = 0.5f;
	NEAR(sim_sdf(&c, &still, pt_v3(0, 3, 0)), 1.5);
	NEAR(sim_sdf(&c, &still, pt_v3(0.3f, 1, 0)), (double)0.3f - 0.5);
	c.shape = PT_SHAPE_INSIDE_SPHERE;
	NEAR(sim_sdf(&c, &still, pt_v3(0.3f, 1, 0)), 0.5 - (double)0.3f);
	NEAR(sim_sdf(&c, &still, pt_v3(0, 3, 0)), -1.5);
}

static void test_capsule_equal_and_tapered(void **state)
{
	(void)state;
	double a[3] = {0, 0, 0}, b[3] = {0, 1, 0};
	double side[3] = {1, 0.5, 0}, beyond[3] = {0, 2, 0}, below[3] = {0, -1, 0};
	NEAR(sim_sdf_round_cone(side, a, b, 0.2, 0.2), 0.8);
	NEAR(sim_sdf_round_cone(beyond, a, b, 0.2, 0.2), 0.8);
	/* Tapered 0.2 -> 0.1 over length 1: the side line's normal is (sqrt(0.99), 0.1), so
	 * (1, 0.5) lies sqrt(0.99) + 0.05 - 0.2 from it. */
	NEAR(sim_sdf_round_cone(side, a, b, 0.2, 0.1), sqrt(0.99) + 0.05 - 0.2);
	NEAR(sim_sdf_round_cone(beyond, a, b, 0.2, 0.1), 0.9); /* nearest: the b cap */
	NEAR(sim_sdf_round_cone(below, a, b, 0.2, 0.1), 0.8);  /* nearest: the a cap */
	/* One sphere inside the other: the big one alone */
	NEAR(sim_sdf_round_cone(beyond, a, b, 2.0, 0.1), 0.0);
	/* Through the def: radius_b < 0 means the same radius; inside_capsule flips */
	pt_collider_def c = shape(PT_SHAPE_CAPSULE);
	c.b = pt_v3(0, 1, 0);
	c.radius = 0.25f;
	NEAR(sim_sdf(&c, &still, pt_v3(0, 0.5f, 0.25f)), 0.0);
	c.shape = PT_SHAPE_INSIDE_CAPSULE;
	NEAR(sim_sdf(&c, &still, pt_v3(0, 0.5f, 0.0f)), 0.25);
}

static void test_ellipsoid(void **state)
{
	(void)state;
	double r[3] = {1, 2, 3};
	double on_x[3] = {2, 0, 0}, in_x[3] = {0.5, 0, 0}, on_z[3] = {0, 0, 3.5},
	       centre[3] = {0, 0, 0};
	NEAR(sim_sdf_ellipsoid(on_x, r), 1.0);
	NEAR(sim_sdf_ellipsoid(in_x, r), -0.5);
	NEAR(sim_sdf_ellipsoid(on_z, r), 0.5);
	assert_true(fabs(sim_sdf_ellipsoid(centre, r) + 1.0) < 1e-8); /* nearest: the short axis */
	/* A sphere as an ellipsoid: |p| - r anywhere */
	double s[3] = {0.3, 0.3, 0.3}, p[3] = {0.4, -0.7, 0.2};
	NEAR(sim_sdf_ellipsoid(p, s), sqrt(0.16 + 0.49 + 0.04) - 0.3);
	/* Anywhere else: against the nearest of a fine sampling of the surface (which can
	 * only overestimate the distance, by well under 1e-3 m at this density). */
	const double pts[][3] = {{0.5, 2.5, 0}, {0.9, 0.9, 0.9}, {0.2, -0.3, 0.1}, {-1.5, 0.1, 2}};
	const double rr[3] = {1, 2, 0.5};
	for (size_t k = 0; k < sizeof pts / sizeof pts[0]; k++) {
		double best = INFINITY, inside = 0;
		for (int i = 0; i <= 600; i++) {
			double th = M_PI_ * i / 600;
			for (int j = 0; j < 1200; j++) {
				double ph = 2 * M_PI_ * j / 1200;
				double x = rr[0] * sin(th) * cos(ph), y = rr[1] * sin(th) * sin(ph),
				       z = rr[2] * cos(th);
				double dx = pts[k][0] - x, dy = pts[k][1] - y, dz = pts[k][2] - z;
				best = fmin(best, sqrt(dx * dx + dy * dy + dz * dz));
			}
		}
		for (int i = 0; i < 3; i++)
			inside += pts[k][i] * pts[k][i] / (rr[i] * rr[i]);
		double d = sim_sdf_ellipsoid(pts[k], rr), want = inside < 1 ? -best : best;
		if (!(fabs(d) <= fabs(want) + 1e-12 && fabs(d - want) < 1e-3))
			fail_msg("point %zu: %.9f, sampled %.9f", k, d, want);
	}
}

static void test_plane_and_head_frame(void **state)
{
	(void)state;
	pt_collider_def c = shape(PT_SHAPE_PLANE);
	c.center = pt_v3(0, 1, 0);
	c.normal = pt_v3(0, 2, 0); /* not unit: still metres */
	NEAR(sim_sdf(&c, &still, pt_v3(5, 1.5f, 5)), 0.5);
	NEAR(sim_sdf(&c, &still, pt_v3(0, 0.5f, 0)), -0.5);
	/* Head-attached: a sphere 0.1 in front of a head at (0, 1.5, 0) turned 90 deg about +Y
	 * sits at world (0.1, 1.5, 0); a world-attached one does not move. */
	pt_pose head = {{0, 1.5f, 0}, {0, (float)sqrt(0.5), 0, (float)sqrt(0.5)}};
	pt_collider_def s = shape(PT_SHAPE_SPHERE);
	s.center = pt_v3(0, 0, 0.1f);
	s.radius = 0.05f;
	assert_true(fabs(sim_sdf(&s, &head, pt_v3(0.1f, 1.5f, 0)) + 0.05) < 1e-6);
	s.attach = PT_ATTACH_WORLD;
	assert_true(fabs(sim_sdf(&s, &head, pt_v3(0, 0, 0.1f)) + 0.05) < 1e-9);
}

/* Against core's pt_collider_signed_distance (the solver's own): equal for the shapes
 * both compute exactly; for ellipsoids core measures along the ray from the centre,
 * which is never shorter than the true distance, and agrees in sign; tapered capsules
 * agree in sign away from the surface. */
static void test_agrees_with_core(void **state)
{
	(void)state;
	pt_collider_def cs[7];
	for (int i = 0; i < 7; i++)
		cs[i] = shape(i < 6 ? (pt_shape)i : PT_SHAPE_CAPSULE);
	cs[0].center = pt_v3(0.01f, 0.02f, -0.03f), cs[0].radius = 0.1f;
	cs[1].center = pt_v3(0, 0.01f, 0), cs[1].radii = pt_v3(0.08f, 0.11f, 0.1f);
	cs[2].a = pt_v3(0, -0.08f, 0), cs[2].b = pt_v3(0, -0.2f, 0.02f), cs[2].radius = 0.05f;
	cs[3].center = pt_v3(0, -0.1f, 0), cs[3].normal = pt_v3(0.1f, 1, 0);
	cs[4].center = pt_v3(0, 0.1f, 0), cs[4].radius = 0.3f;
	cs[5].a = pt_v3(0, 0, 0), cs[5].b = pt_v3(0.1f, 0.3f, 0), cs[5].radius = 0.2f;
	cs[6] = cs[2], cs[6].radius_b = 0.02f;
	pt_pose head = {{0.2f, 1.5f, -0.1f}, {0.1f, 0.3f, -0.2f, 0.927362f}};
	unsigned seed = 7;
	for (int i = 0; i < 7; i++) {
		cs[i].attach = i == 3 ? PT_ATTACH_WORLD : PT_ATTACH_HEAD;
		for (int n = 0; n < 2000; n++) {
			float c[3];
			for (int k = 0; k < 3; k++) {
				seed = seed * 1103515245u + 12345u;
				c[k] = ((float)((seed >> 8) & 0xffff) / 65536.0f - 0.5f) * 0.6f;
			}
			pt_vec3 p = pt_v3(head.p.x + c[0], head.p.y + c[1], head.p.z + c[2]);
			double mine = sim_sdf(&cs[i], &head, p);
			double core = pt_collider_signed_distance(&cs[i], head, p, NULL);
			int ok;
			if (i == 1)
				ok = fabs(core) >= fabs(mine) - 1e-5 &&
				     (fabs(mine) < 1e-4 || (core > 0) == (mine > 0));
			else if (i == 6)
				ok = fabs(mine) < 0.01 || (core > 0) == (mine > 0);
			else
				ok = fabs(mine - core) < 1e-5;
			if (!ok)
				fail_msg("%s #%d at (%g, %g, %g): ours %.7f, core %.7f",
				         i == 6 ? "tapered capsule" : pt_shape_name((pt_shape)i), n,
				         c[0], c[1], c[2], mine, core);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sphere_and_inside_sphere),
	    cmocka_unit_test(test_capsule_equal_and_tapered),
	    cmocka_unit_test(test_ellipsoid),
	    cmocka_unit_test(test_plane_and_head_frame),
	    cmocka_unit_test(test_agrees_with_core),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
