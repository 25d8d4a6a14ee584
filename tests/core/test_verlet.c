/* Closed forms and the stress sequence for the verlet solver. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "scenario.h"
#include "vecmath.h"
#include "world_internal.h"
#include "wide.h" /* the plain-C emulation (WIDE_AVX2 not defined) */

static pt_pose head_at(float x, float y, float z)
{
	pt_pose p = {pt_v3(x, y, z), pt_quat_identity()};
	return p;
}

/* World level: a short pendulum released horizontally loses amplitude to `damping` and
 * air drag; a damped oscillator's amplitude decays at half the velocity rate, so the
 * peak speed kept per second is sqrt(damping^60 e^-drag). The length solve projects
 * along the start-of-substep direction (no numerical dissipation), so the decay is the
 * same at every substep count, 1 included (within 1 %). Peak speed in one-second windows
 * of a 90-degree swing reads about 5 % above the small-angle closed form whatever the
 * step; test_hairstyles.c fits turning points of a 30-degree swing to 3 %. */
static void test_world_decay_matches_closed_form_at_any_substeps(void **state)
{
	(void)state;
	const float damping = 0.99f, drag = 0.5f;
	const double closed = sqrt(pow(damping, 60.0) * exp(-drag));
	double decay[4];
	int idx = 0;
	for (int n = 1; n <= 8; n *= 2, idx++) {
		pt_world *w = pt_world_create(NULL);
		pt_instance_def d;
		tdef_init(&d);
		d.prewarm_s = 0;
		d.verlet.damping = damping;
		d.wind.drag = drag;
		d.strands[0].points = 2;
		d.strands[0].segment_length = 0.2f;
		d.strands[0].direction = pt_v3(1, 0, 0);
		pt_id id = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
		pt_vec3 pts[2], prev[2];
		pt_world_read_points(w, id, prev, 2);
		double peak[3] = {0, 0, 0};
		for (int t = 0; t < 180; t++) {
			pt_world_step(w, 1.0f / 60.0f, n);
			pt_world_read_points(w, id, pts, 2);
			double v = v3_len(v3_sub(pts[1], prev[1])) * 60.0;
			if (v > peak[t / 60])
				peak[t / 60] = v;
			prev[1] = pts[1];
		}
		decay[idx] = peak[2] / peak[1];
		pt_world_destroy(w);
		pt_instance_def_fini(&d);
	}
	print_message("peak speed kept per second at 1/2/4/8 substeps: %.4f %.4f %.4f %.4f "
	              "(closed form %.4f)\n",
	              decay[0], decay[1], decay[2], decay[3], closed);
	for (int i = 0; i < 4; i++) {
		assert_true(fabs(decay[i] / decay[3] - 1.0) < 0.01);
		assert_true(fabs(decay[i] / closed - 1.0) < 0.06);
	}
}

/* At rest under gravity a strand released sideways hangs straight down, every segment
 * exactly segment_length long. */
static void test_hangs_straight_down(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	tdef_init(&d);
	d.strands[0].direction = pt_v3(1, 0, 0);
	d.prewarm_s = 8.0f;
	pt_id id = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
	for (int i = 0; i < 120; i++)
		pt_world_step(w, 1.0f / 60.0f, 4);
	pt_vec3 p[12];
	assert_int_equal(pt_world_read_points(w, id, p, 12), 12);
	for (int j = 1; j < 12; j++) {
		assert_float_equal(p[j].x, p[0].x, 1e-4f);
		assert_float_equal(p[j].z, p[0].z, 1e-4f);
		assert_float_equal(p[j - 1].y - p[j].y, 0.03f, 0.03f * 1e-4f);
	}
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* The stress sequence on the twin-tail instance. */
static void test_stress_sequence(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	scenario_twin_tails(&d);
	pt_motion m = pt_motion_default(PT_MOTION_STRESS);
	pt_id id = pt_world_create_instance(w, &d, pt_motion_pose(&m, 0));
	double settle;
	double end = pt_motion_stress_end();
	scenario_stats st = scenario_run(w, id, &d, &m, end + 5.0, 60.0, 4, end, &settle);
	print_message(
	    "stress: penetration %.3g m, segment error %.3g, tip %.3g m/s, settle %.3g s\n",
	    st.max_penetration_m, st.max_segment_error, st.max_tip_speed, settle);
	assert_int_equal(st.nan_count, 0);
	assert_true(st.max_penetration_m <= 1e-3);
	assert_true(st.max_segment_error <= 0.01);
	assert_true(settle >= 0.0 && settle <= 3.0);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* Same, with the neck capsule tapered and an ellipsoid head, at 2 substeps. */
static void test_stress_other_shapes(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	scenario_twin_tails(&d);
	d.colliders[0].shape = PT_SHAPE_ELLIPSOID;
	d.colliders[0].radii = pt_v3(0.09f, 0.11f, 0.1f);
	d.colliders[1].radius_b = 0.07f;
	pt_motion m = pt_motion_default(PT_MOTION_STRESS);
	pt_id id = pt_world_create_instance(w, &d, pt_motion_pose(&m, 0));
	double end = pt_motion_stress_end(), settle;
	scenario_stats st = scenario_run(w, id, &d, &m, end + 4.0, 60.0, 2, end, &settle);
	assert_int_equal(st.nan_count, 0);
	assert_true(st.max_penetration_m <= 1e-3);
	assert_true(st.max_segment_error <= 0.01);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* Nonlinear stretch: soft at small strain, but never beyond max_strain by much. */
static void test_nonlinear_stretch_bounded(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	scenario_twin_tails(&d);
	d.verlet.stretch = PT_STRETCH_NONLINEAR;
	d.verlet.iterations = 8;
	d.verlet.stretch_max_strain = 0.05f;
	pt_motion m = pt_motion_default(PT_MOTION_STRESS);
	pt_id id = pt_world_create_instance(w, &d, pt_motion_pose(&m, 0));
	scenario_stats st = scenario_run(w, id, &d, &m, 5.0, 60.0, 4, 1e9, NULL);
	assert_int_equal(st.nan_count, 0);
	assert_true(st.max_segment_error > 1e-4); /* it does stretch: not the exact mode */
	assert_true(st.max_segment_error < 0.10);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* Bending stiffness keeps a horizontal strand closer to straight than without, more the
 * stiffer it is, and at stiffness 1 straight within 1 cm over its 33 cm. (Bending pushes
 * back on the parent, so a stiffness sags more than the old one-way pull did at the same
 * value: that pull was a follower force, which spun curved rest shapes forever.) */
static void test_bending_resists_gravity(void **state)
{
	(void)state;
	const float stiff[3] = {0.0f, 0.5f, 1.0f};
	float tip_y[3], root_y = 0;
	for (int b = 0; b < 3; b++) {
		pt_world *w = pt_world_create(NULL);
		pt_instance_def d;
		tdef_init(&d);
		d.strands[0].direction = pt_v3(1, 0, 0);
		d.verlet.bend_stiffness = stiff[b];
		d.prewarm_s = 3.0f;
		pt_id id = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
		pt_vec3 p[12];
		pt_world_read_points(w, id, p, 12);
		tip_y[b] = p[11].y, root_y = p[0].y;
		pt_world_destroy(w);
		pt_instance_def_fini(&d);
	}
	assert_true(tip_y[1] > tip_y[0] + 0.03f);
	assert_true(tip_y[2] > tip_y[1] + 0.03f);
	assert_true(fabsf(tip_y[2] - root_y) < 0.01f);
}

/* Wind along +X pushes the strand to +X; turbulence is deterministic per seed. */
static void test_wind(void **state)
{
	(void)state;
	uint64_t hashes[3];
	for (int i = 0; i < 3; i++) {
		pt_world *w = pt_world_create(NULL);
		pt_instance_def d;
		tdef_init(&d);
		d.wind.velocity = pt_v3(4, 0, 0);
		d.wind.turbulence = 0.5f;
		d.wind.seed = i == 2 ? 7u : 1u;
		pt_id id = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
		for (int t = 0; t < 60; t++)
			pt_world_step(w, 1.0f / 60.0f, 4);
		pt_vec3 p[12];
		pt_world_read_points(w, id, p, 12);
		assert_true(p[11].x > p[0].x + 0.05f);
		hashes[i] = pt_world_hash(w);
		pt_world_destroy(w);
		pt_instance_def_fini(&d);
	}
	assert_true(hashes[0] == hashes[1]);
	assert_true(hashes[0] != hashes[2]);
}

/* A world-attached floor plane: a strand dropped to it never goes through. */
static void test_world_plane(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	tdef_init(&d);
	d.collider_count = 1;
	d.colliders[0].shape = PT_SHAPE_PLANE;
	d.colliders[0].attach = PT_ATTACH_WORLD;
	d.colliders[0].center = pt_v3(0, 1.3f, 0);
	d.colliders[0].normal = pt_v3(0, 1, 0);
	pt_id id = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
	for (int t = 0; t < 120; t++) {
		pt_world_step(w, 1.0f / 60.0f, 4);
		pt_vec3 p[12];
		pt_world_read_points(w, id, p, 12);
		for (int j = 1; j < 12; j++)
			assert_true(p[j].y >= 1.3f + 0.005f - 1e-3f);
	}
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* Self-collision keeps two crossing strands apart. */
static void test_self_collision(void **state)
{
	(void)state;
	double mind[2];
	for (int sc = 0; sc < 2; sc++) {
		pt_world *w = pt_world_create(NULL);
		pt_instance_def d;
		tdef_init(&d);
		tdef_strands(&d, 2);
		pt_strand_def_reset(&d.strands[1]);
		d.strands[0].anchor = pt_v3(-0.05f, 0, 0);
		d.strands[0].direction = pt_v3(1, -0.2f, 0);
		d.strands[1].anchor = pt_v3(0.05f, 0, 0);
		d.strands[1].direction = pt_v3(-1, -0.2f, 0);
		d.strands[0].radius = d.strands[1].radius = 0.01f;
		d.verlet.self_collision = sc;
		d.prewarm_s = 0;
		pt_id id = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
		mind[sc] = 1e9;
		for (int t = 0; t < 90; t++) {
			pt_world_step(w, 1.0f / 60.0f, 4);
			pt_vec3 p[24];
			pt_world_read_points(w, id, p, 24);
			for (int i = 3; i < 12; i++)
				for (int j = 15; j < 24; j++) {
					double dd = v3_len(v3_sub(p[i], p[j]));
					if (dd < mind[sc])
						mind[sc] = dd;
				}
		}
		pt_world_destroy(w);
		pt_instance_def_fini(&d);
	}
	print_message("closest approach without/with self-collision: %.4g / %.4g m\n", mind[0],
	              mind[1]);
	assert_true(mind[0] < 0.01); /* without it they pass through each other */
	/* With it they stay more than one radius apart; the exact-length pass that follows
	 * the hash may give back part of the full two-radius separation. */
	assert_true(mind[1] > 0.01);
}

/* The emulation's fused multiply-add (wide.h, fma_odd) is the correctly rounded
 * a * b + c that libm's fmaf and the FMA instruction give, bit for bit: on random
 * operands over many magnitudes (products and addends that cancel, nearly cancel or
 * dwarf each other), ties, subnormals, and infinities. */
static void test_fused_multiply_add_emulation(void **state)
{
	(void)state;
	uint64_t seed = 0x9e3779b97f4a7c15u;
	int checked = 0;
	for (int i = 0; i < 2000000; i++) {
		float v[3];
		for (int k = 0; k < 3; k++) {
			seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
			uint32_t bits = (uint32_t)(seed >> 16);
			/* exponents within +-40 of 1 mostly; a few anywhere */
			if ((seed & 15u) != 0)
				bits = (bits & 0x807fffffu) | ((uint32_t)(87 + (seed >> 58) + (seed >> 60)) << 23);
			memcpy(&v[k], &bits, sizeof bits);
		}
		if (i % 3 == 0) /* c close to -a b: cancellation */
			v[2] = -v[0] * v[1] * (1.0f + (float)((int)(seed & 7u) - 3) * 1e-7f);
		float want = fmaf(v[0], v[1], v[2]), got = fma_odd(v[0], v[1], v[2]);
		if (isnan(want)) {
			assert_true(isnan(got));
			continue;
		}
		uint32_t a, b;
		memcpy(&a, &want, sizeof a), memcpy(&b, &got, sizeof b);
		if (a != b)
			print_message("fma(%a, %a, %a): libm %a, emulation %a\n", (double)v[0], (double)v[1],
			              (double)v[2], (double)want, (double)got);
		assert_int_equal(a, b);
		checked++;
	}
	const float edge[][3] = {{1.0f + 0x1p-23f, 1.0f - 0x1p-23f, -1.0f},
	                         {0x1p-126f, 0x1p-10f, 0x1p-149f},
	                         {3.0f, 0x1p-149f, 0x1p-149f},
	                         {0x1p100f, 0x1p100f, -INFINITY},
	                         {1.0f, 1.0f, 0x1p-25f},
	                         {1.0f, 1.0f + 0x1p-23f, 0x1p-24f}};
	for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
		float want = fmaf(edge[i][0], edge[i][1], edge[i][2]);
		float got = fma_odd(edge[i][0], edge[i][1], edge[i][2]);
		assert_memory_equal(&want, &got, sizeof want);
	}
	print_message("fma emulation: %d random cases and the edge cases agree with fmaf\n", checked);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fused_multiply_add_emulation),
	    cmocka_unit_test(test_world_decay_matches_closed_form_at_any_substeps),
	    cmocka_unit_test(test_hangs_straight_down),
	    cmocka_unit_test(test_stress_sequence),
	    cmocka_unit_test(test_stress_other_shapes),
	    cmocka_unit_test(test_nonlinear_stretch_bounded),
	    cmocka_unit_test(test_bending_resists_gravity),
	    cmocka_unit_test(test_wind),
	    cmocka_unit_test(test_world_plane),
	    cmocka_unit_test(test_self_collision),
	};
	return cmocka_run_group_tests_name("verlet", tests, NULL, NULL);
}
