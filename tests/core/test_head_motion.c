/* Head extrapolation from a pose's velocities (pt_world_set_head_motion): a head turning
 * at a constant rate, fed at 20 Hz with its angular velocity, moves the strands as the same
 * turn fed at 60 Hz without; fed at 20 Hz without it, the head jumps every third tick. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "scenario.h"
#include "vecmath.h"

static const float RATE = 3.0f;                    /* rad/s about +y */
static const pt_vec3 DRIFT = {0.2f, 0.0f, -0.1f}; /* m/s */

static pt_pose turning(double t)
{
	pt_pose p = {v3_add(pt_v3(0, 1.5f, 0), v3_scale(DRIFT, (float)t)),
	             q_axis_angle(pt_v3(0, 1, 0), RATE * (float)t)};
	return p;
}

enum { TICKS = 120, NP = 24 };

/* mode 0: every tick's pose; 1: every third tick with v and w; 2: every third, plain. */
static void run(int mode, pt_vec3 out[TICKS][NP])
{
	pt_instance_def d;
	scenario_twin_tails(&d);
	pt_world *w = pt_world_create(NULL);
	pt_id id = pt_world_create_instance(w, &d, turning(0));
	for (int k = 1; k <= TICKS; k++) {
		if (mode == 0) {
			pt_world_set_head(w, id, turning(k / 60.0));
		} else if ((k - 1) % 3 == 0) {
			double sampled = (k - 1) / 60.0; /* a 20 Hz camera, sampled at this step's start */
			if (mode == 1)
				assert_int_equal(pt_world_set_head_motion(w, id, turning(sampled), DRIFT,
				                                          pt_v3(0, RATE, 0), 0.0f),
				                 1);
			else
				pt_world_set_head(w, id, turning(sampled));
		}
		pt_world_step(w, 1.0f / 60.0f, 4);
		pt_world_read_points(w, id, out[k - 1], NP);
	}
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

static double worst_between(pt_vec3 a[TICKS][NP], pt_vec3 b[TICKS][NP])
{
	double worst = 0;
	for (int t = 0; t < TICKS; t++)
		for (int i = 0; i < NP; i++)
			worst = fmax(worst, v3_len(v3_sub(a[t][i], b[t][i])));
	return worst;
}

static void test_20hz_with_w_matches_60hz(void **state)
{
	(void)state;
	static pt_vec3 ref[TICKS][NP], imu[TICKS][NP], plain[TICKS][NP];
	run(0, ref), run(1, imu), run(2, plain);
	double with = worst_between(imu, ref), without = worst_between(plain, ref);
	print_message("20 Hz poses with v, w: %.2g m from 60 Hz; without: %.3f m\n", with, without);
	assert_true(with <= 0.005);
	assert_true(without > 0.02); /* the effect is real: a plain 20 Hz head lags and jumps */
}

/* Extrapolation stops after PT_EXTRAPOLATE_MAX_S: a silent tracker's head is held there. */
static void test_extrapolation_is_bounded(void **state)
{
	(void)state;
	pt_instance_def d;
	tdef_init(&d);
	pt_world *w = pt_world_create(NULL);
	pt_id id = pt_world_create_instance(w, &d, turning(0));
	assert_int_equal(pt_world_set_head_motion(w, id, turning(0), DRIFT, pt_v3(0, RATE, 0), 0), 1);
	for (int k = 0; k < 30; k++)
		pt_world_step(w, 1.0f / 60.0f, 4);
	pt_pose h;
	assert_int_equal(pt_world_get_head(w, id, &h), 1);
	pt_pose want = turning(PT_EXTRAPOLATE_MAX_S);
	assert_true(v3_len(v3_sub(h.p, want.p)) < 1e-5f);
	assert_true(q_angle_between(h.q, want.q) < 1e-4f);
	/* bad input is refused and changes nothing */
	pt_vec3 nan = pt_v3(NAN, 0, 0);
	assert_int_equal(pt_world_set_head_motion(w, id, turning(1), nan, pt_v3(0, 0, 0), 0), 0);
	assert_int_equal(pt_world_set_head_motion(w, id, turning(1), pt_v3(0, 0, 0), pt_v3(0, 200, 0), 0), 0);
	assert_int_equal(pt_world_set_head_motion(w, id, turning(1), DRIFT, pt_v3(0, 0, 0), -2.0f), 0);
	assert_int_equal(pt_world_get_head(w, id, &h), 1);
	assert_true(v3_len(v3_sub(h.p, want.p)) < 1e-5f);
	/* a plain pose ends the extrapolation */
	pt_world_set_head(w, id, turning(0));
	pt_world_step(w, 1.0f / 60.0f, 4);
	assert_int_equal(pt_world_get_head(w, id, &h), 1);
	assert_true(v3_len(v3_sub(h.p, turning(0).p)) < 1e-6f);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_20hz_with_w_matches_60hz),
	    cmocka_unit_test(test_extrapolation_is_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
