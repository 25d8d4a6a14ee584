/* Spring bones at their authored frame rate whatever the tick rate: a 30 Hz tick takes two
 * 1/60 s steps, a 120 Hz tick one every other tick, and both give the 60 Hz trajectory at
 * the instants they share when the head moves so that interpolation is exact (constant
 * linear and angular velocity). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>

#include "sb_scenario.h"
#include "vecmath.h"

enum { POINTS = 8 };

/* Head at time t: drifting at 0.3 m/s along x while turning 90 deg/s about y. */
static pt_pose head_at(double t)
{
	pt_pose p = {pt_v3((float)(0.3 * t), 1.5f, 0), q_axis_angle(pt_v3(0, 1, 0), (float)(1.5708 * t))};
	return p;
}

/* Runs 2 s at tick_hz with `substeps`; writes the points at every multiple of 1/30 s. */
static void run(int tick_hz, int substeps, pt_springbone_form form, pt_vec3 out[60][POINTS])
{
	pt_joint_def j = pt_joint_def_default();
	j.gravity_power = 0.5f;
	pt_instance_def d;
	sb_def_strand(&d, pt_v3(0, 0, -0.1f), pt_v3(0, -1, -0.2f), POINTS, 0.04f, j, 0);
	d.springbone.rate = PT_SPRINGBONE_RATE_FRAME;
	d.springbone.form = form;
	if (form == PT_SPRINGBONE_PULL)
		for (int k = 0; k < POINTS - 1; k++)
			d.strands[0].joints[k].stiffness = 0.1f;
	scenario_head_and_neck(&d);
	pt_world *w = pt_world_create(NULL);
	pt_id id = pt_world_create_instance(w, &d, head_at(0));
	int per = tick_hz / 30;
	for (int k = 1; k <= 2 * tick_hz; k++) {
		pt_world_set_head(w, id, head_at((double)k / tick_hz));
		pt_world_step(w, 1.0f / (float)tick_hz, substeps);
		if (k % per == 0)
			pt_world_read_points(w, id, out[k / per - 1], POINTS);
	}
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

static void test_tick_rate_does_not_change_the_motion(void **state)
{
	(void)state;
	static pt_vec3 ref[60][POINTS], got[60][POINTS];
	for (int form = 0; form < 2; form++) {
		run(60, 1, (pt_springbone_form)form, ref);
		const int hz[] = {30, 60, 120, 240}, subs[] = {1, 4, 2, 1};
		for (int c = 0; c < 4; c++) {
			run(hz[c], subs[c], (pt_springbone_form)form, got);
			double worst = 0;
			for (int t = 0; t < 60; t++)
				for (int p = 0; p < POINTS; p++)
					worst = fmax(worst, v3_len(v3_sub(got[t][p], ref[t][p])));
			print_message("%s form, %3d Hz x %d substeps: %.2g m from 60 Hz\n",
				      form ? "pull" : "vrm", hz[c], subs[c], worst);
			assert_true(worst <= 1e-4);
		}
	}
}

/* Between its 1/60 s steps at 120 Hz the roots stay on the head (only the tails wait). */
static void test_roots_follow_the_head_between_steps(void **state)
{
	(void)state;
	pt_instance_def d;
	sb_def_strand(&d, pt_v3(0, 0, -0.1f), pt_v3(0, -1, 0), POINTS, 0.04f,
	    pt_joint_def_default(), 0);
	d.springbone.rate = PT_SPRINGBONE_RATE_FRAME;
	pt_world *w = pt_world_create(NULL);
	pt_id id = pt_world_create_instance(w, &d, head_at(0));
	for (int k = 1; k <= 12; k++) {
		pt_pose h = head_at(k / 120.0);
		pt_world_set_head(w, id, h);
		pt_world_step(w, 1.0f / 120.0f, 1);
		pt_vec3 p[POINTS];
		pt_world_read_points(w, id, p, POINTS);
		pt_vec3 root = v3_add(h.p, q_rotate(h.q, pt_v3(0, 0, -0.1f)));
		assert_true(v3_len(v3_sub(p[0], root)) < 1e-6f);
	}
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_tick_rate_does_not_change_the_motion),
	    cmocka_unit_test(test_roots_follow_the_head_between_steps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
