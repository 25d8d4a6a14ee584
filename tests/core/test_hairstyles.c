/* The verlet solver beyond the default ponytail: hair resting in contact, the same decay at
 * any substep count, exact lengths on the stress sequence at every setting, and mass
 * distribution changing the motion as a double pendulum's closed form says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"
#include "vecmath.h"
#include "world_internal.h"

static pt_pose still_head(void)
{
	pt_pose p = {pt_v3(0, 1.5f, 0), pt_quat_identity()};
	return p;
}

/* Largest speed of any point (m/s, per tick) from `from` s to `to` s, head still. */
static double max_speed_after(const pt_instance_def *d, int substeps, double from, double to)
{
	pt_world *w = pt_world_create(NULL);
	pt_id id = pt_world_create_instance(w, d, still_head());
	int n = pt_world_shape(w, id, NULL, NULL);
	pt_vec3 *a = malloc(sizeof *a * (size_t)n), *b = malloc(sizeof *b * (size_t)n);
	pt_world_read_points(w, id, a, n);
	double worst = 0;
	for (int t = 1; t <= (int)(to * 60.0); t++) {
		pt_world_step(w, 1.0f / 60.0f, substeps);
		pt_world_read_points(w, id, b, n);
		for (int i = 0; i < n; i++) {
			double v = v3_len(v3_sub(b[i], a[i])) * 60.0;
			if (t / 60.0 >= from && v > worst)
				worst = v;
			assert_true(v3_finite(b[i]));
		}
		memcpy(a, b, sizeof *a * (size_t)n);
	}
	free(a), free(b);
	pt_world_destroy(w);
	return worst;
}

/* Every point slower than 1 cm/s from 3 s on, and it stays so to 8 s. Fails before the
 * contact fix: bangs kept 0.9 m/s at 4 substeps and 2.7 m/s at 8; long hair at 1 substep
 * kept 0.54 m/s (its first point sliding to and fro every tick) before friction acted on
 * the position (solver_verlet.c, step 6). */
static void test_resting_contact_settles(void **state)
{
	(void)state;
	const int subs[] = {1, 2, 4, 8, 16};
	for (int k = 0; k < SCENARIO_STYLES; k++)
		for (size_t si = 0; si < sizeof subs / sizeof subs[0]; si++) {
			double worst = 0;
			for (int it = 1; it <= 8; it++) {
				pt_instance_def d;
				scenario_resting_style(&d, k);
				d.verlet.iterations = it;
				double v = max_speed_after(&d, subs[si], 3.0, 8.0);
				worst = v > worst ? v : worst;
				pt_instance_def_fini(&d);
			}
			print_message("%-11s %2d substeps: max speed after 3 s %.4f m/s\n", scenario_style_name[k],
				      subs[si], worst);
			assert_true(worst < 0.01);
		}
}

/* Decay per second of a free swing: the tip's turning-point amplitudes fitted log-linear
 * while above 2 % of the first (18 s at most). */
static double swing_decay(int substeps, int points, float len, float mass_root, float mass_tip,
			  float damping, float drag)
{
	pt_instance_def d;
	tdef_init(&d);
	d.prewarm_s = 0;
	d.verlet.damping = damping, d.wind.drag = drag;
	d.strands[0].points = points, d.strands[0].segment_length = len;
	d.strands[0].mass_root = mass_root, d.strands[0].mass_tip = mass_tip;
	d.strands[0].direction = pt_v3(sinf(0.5235988f), -cosf(0.5235988f), 0); /* 30 deg */
	pt_world *w = pt_world_create(NULL);
	pt_id id = pt_world_create_instance(w, &d, still_head());
	enum { T = 60 * 18 };
	static double x[T];
	pt_vec3 p[PT_MAX_POINTS];
	for (int t = 0; t < T; t++) {
		pt_world_step(w, 1.0f / 60.0f, substeps);
		pt_world_read_points(w, id, p, points);
		x[t] = p[points - 1].x;
	}
	pt_world_destroy(w);
	double sx = 0, sy = 0, sxx = 0, sxy = 0, first = -1;
	int m = 0;
	for (int t = 1; t + 1 < T; t++) {
		if ((x[t] - x[t - 1]) * (x[t + 1] - x[t]) > 0 || !(fabs(x[t]) > 1e-9))
			continue;
		double amp = fabs(x[t]), tt = t / 60.0;
		if (first < 0)
			first = amp;
		if (amp < 0.02 * first)
			break;
		sx += tt, sy += log(amp), sxx += tt * tt, sxy += tt * log(amp), m++;
	}
	assert_true(m >= 3);
	pt_instance_def_fini(&d);
	return exp((m * sxy - sx * sy) / (m * sxx - sx * sx));
}

/* A damped oscillator's amplitude decays at half the velocity rate: per second
 * sqrt(damping^60 e^-drag). The 2-point pendulum must give it at every substep count (the
 * old nearest-point projection gave 0.38 at 1 substep and 0.55 at 8 against 0.576); a
 * 12-point chain must decay alike at 2..16 substeps (5 %) and at 1 (15 %), uniform and
 * root-heavy. */
static void test_decay_same_at_any_substep_count(void **state)
{
	(void)state;
	const float damp[2] = {0.99f, 0.96f}, drag[2] = {0.5f, 2.0f};
	for (int c = 0; c < 2; c++) {
		double closed = sqrt(pow(damp[c], 60.0) * exp(-drag[c]));
		for (int s = 1; s <= 16; s *= 2) {
			double pend = swing_decay(s, 2, 0.2f, 1, 1, damp[c], drag[c]);
			print_message("pendulum damping %.2f drag %.1f, %2d substeps: %.4f (closed %.4f)\n",
				      damp[c], drag[c], s, pend, closed);
			assert_true(fabs(pend / closed - 1.0) < 0.03);
		}
		for (int mass = 0; mass < 2; mass++) {
			float mr = mass ? 1.2f : 1.0f, mt = mass ? 0.1f : 1.0f;
			double ref = swing_decay(4, 12, 0.03f, mr, mt, damp[c], drag[c]);
			for (int s = 1; s <= 16; s *= 2) {
				double dec = swing_decay(s, 12, 0.03f, mr, mt, damp[c], drag[c]);
				print_message("chain mass %.1f->%.1f, %2d substeps: %.4f\n", mr, mt, s, dec);
				assert_true(fabs(dec / ref - 1.0) < (s == 1 ? 0.15 : 0.05));
			}
		}
	}
}

/* The stress sequence at every substep count 1..16 and iteration count 1..8, with uniform
 * and root-heavy (mass.root 1.2, mass.tip 0.1) strands: stretch <= 1 %, penetration <= 1 mm. */
static void test_stress_every_setting(void **state)
{
	(void)state;
	double worst_len = 0, worst_pen = 0;
	for (int mass = 0; mass < 2; mass++)
		for (int s = 1; s <= 16; s++)
			for (int it = 1; it <= 8; it++) {
				pt_instance_def d;
				scenario_twin_tails(&d);
				d.verlet.iterations = it;
				for (int i = 0; mass && i < d.strand_count; i++)
					d.strands[i].mass_root = 1.2f, d.strands[i].mass_tip = 0.1f;
				pt_world *w = pt_world_create(NULL);
				pt_motion m = pt_motion_default(PT_MOTION_STRESS);
				pt_id id = pt_world_create_instance(w, &d, pt_motion_pose(&m, 0));
				double settle, end = pt_motion_stress_end();
				scenario_stats st =
				    scenario_run(w, id, &d, &m, end + 1.0, 60.0, s, end, &settle);
				pt_world_destroy(w);
				assert_int_equal(st.nan_count, 0);
				if (st.max_segment_error > 0.01 || st.max_penetration_m > 1e-3)
					print_message("mass %d substeps %d iterations %d: stretch %.4f pen %.5f\n",
						      mass, s, it, st.max_segment_error, st.max_penetration_m);
				worst_len = fmax(worst_len, st.max_segment_error);
				worst_pen = fmax(worst_pen, st.max_penetration_m);
				pt_instance_def_fini(&d);
			}
	print_message("stress, all settings: stretch %.4f %%, penetration %.4f mm\n", worst_len * 100,
		      worst_pen * 1000);
	assert_true(worst_len <= 0.01);
	assert_true(worst_pen <= 1e-3);
}

/* Mass matters as physics says. A 3-point strand is a double pendulum (equal lengths l,
 * masses m1 at point 1, m2 at the tip). Linearised, its slow normal mode has
 *   omega^2 = (g / l) (1 + mu - sqrt(mu (1 + mu))),  mu = m2 / m1,
 * with shape theta2 / theta1 = (1 + mu)(1 - lam) / (mu lam), lam = omega^2 l / g (from
 * (1+mu)(1-lam) A1 = mu lam A2). Started in that shape with no damping, the tip's period
 * must be 2 pi / omega: mu = 1 gives lam = 2 - sqrt 2, a light tip (mu = 0.1) lam = 0.768,
 * a period 13 % shorter. */
static double double_pendulum_period(float mu, int substeps)
{
	const float l = 0.1f, g = 9.81f, eps = 0.03f;
	double lam = 1.0 + mu - sqrt(mu * (1.0 + mu));
	double ratio = (1.0 + mu) * (1.0 - lam) / (mu * lam);
	pt_instance_def d;
	tdef_init(&d);
	d.prewarm_s = 0, d.verlet.damping = 1.0f, d.wind.drag = 0.0f;
	d.strands[0].points = 3, d.strands[0].segment_length = l;
	d.strands[0].mass_root = 1.0f, d.strands[0].mass_tip = mu;
	pt_world *w = pt_world_create(NULL);
	pt_id id = pt_world_create_instance(w, &d, still_head());
	const pt_inst *in = &w->inst[0];
	pt_vec3 root = pt_v3(w->x[in->offset], w->y[in->offset], w->z[in->offset]);
	float t1 = eps, t2 = (float)(eps * ratio);
	pt_vec3 p1 = v3_add(root, pt_v3(l * sinf(t1), -l * cosf(t1), 0));
	pt_vec3 p2 = v3_add(p1, pt_v3(l * sinf(t2), -l * cosf(t2), 0));
	pt_vec3 pts[2] = {p1, p2};
	for (int j = 0; j < 2; j++) {
		int i = in->offset + 1 + j;
		w->x[i] = w->px[i] = pts[j].x, w->y[i] = w->py[i] = pts[j].y;
		w->z[i] = w->pz[i] = pts[j].z;
	}
	double prev = p2.x - root.x, first = -1, last = -1;
	int crossings = 0;
	pt_vec3 p[3];
	for (int t = 1; t <= 60 * 20; t++) {
		pt_world_step(w, 1.0f / 60.0f, substeps);
		pt_world_read_points(w, id, p, 3);
		double x = p[2].x - root.x;
		if (prev > 0 && x <= 0) { /* downward zero crossing, interpolated */
			double tc = (t - 1 + prev / (prev - x)) / 60.0;
			if (first < 0)
				first = tc;
			last = tc, crossings++;
		}
		prev = x;
	}
	pt_world_destroy(w);
	assert_true(crossings >= 5);
	double measured = (last - first) / (crossings - 1);
	double expected = 2.0 * 3.14159265358979 / sqrt(g / l * lam);
	print_message("double pendulum mu %.2f, %d substeps: period %.4f s (closed form %.4f)\n", mu,
		      substeps, measured, expected);
	assert_true(fabs(measured / expected - 1.0) < 0.01);
	pt_instance_def_fini(&d);
	return measured;
}

static void test_mass_changes_double_pendulum_period(void **state)
{
	(void)state;
	for (int s = 1; s <= 16; s *= 4) {
		double even = double_pendulum_period(1.0f, s), light = double_pendulum_period(0.1f, s);
		double predicted = sqrt((2.0 - sqrt(2.0)) / (1.1 - sqrt(0.11)));
		assert_true(fabs(light / even / predicted - 1.0) < 0.01);
	}
}

/* The verlet step has one definition, the lane kernel (verlet_lanes.inc), compiled for
 * AVX2 and for the plain-C emulation. Held here: on scenes covering every option (rest
 * contact, bending, every collider shape, nonlinear stretch, self-collision), an
 * instance stepped alone on the scalar emulation reaches bit for bit the state of the
 * same instance stepped on the default kernel in a world full of neighbours that share
 * its batches (other gravity, so their lanes hold other numbers; every other one with
 * its first collider world-attached; every fourth with a capsule over the head put
 * first, so that each of its collider slots holds another shape than the instance's in
 * the same lane group), at 1, 4 and 16 substeps. */
static void lane_scene(pt_instance_def *d, int k)
{
	pt_collider_def *c;
	switch (k) {
	case 0:
		scenario_twin_tails(d);
		break;
	case 1:
		scenario_resting_style(d, SCENARIO_STYLE_BANGS);
		d->verlet.bend_stiffness = 0.3f;
		break;
	case 2:
		scenario_resting_style(d, SCENARIO_STYLE_LONG);
		break;
	case 3:
		scenario_resting_style(d, SCENARIO_STYLE_ELLIPSOID);
		break;
	case 4: /* nonlinear stretch inside a capsule, on a plane */
		scenario_resting_style(d, SCENARIO_STYLE_PLANE);
		d->verlet.stretch = PT_STRETCH_NONLINEAR;
		c = scenario_add_collider(d, PT_SHAPE_INSIDE_CAPSULE, PT_ATTACH_HEAD);
		c->a = pt_v3(0, -0.5f, 0), c->b = pt_v3(0.3f, -0.5f, 0), c->radius = 0.05f;
		c = scenario_add_collider(d, PT_SHAPE_INSIDE_SPHERE, PT_ATTACH_HEAD);
		c->radius = 0.6f;
		break;
	default: /* self-collision */
		scenario_twin_tails(d);
		d->verlet.self_collision = 1;
		for (int s = 0; s < d->strand_count; s++)
			d->strands[s].radius = 0.01f;
		break;
	}
}

/* A capsule across the head, where the hair lies, as collider 0 (the others and every
 * strand's selection move up one): a lane group's slots then mix shapes across lanes
 * (a sphere beside a capsule, a plane beside a capsule), and its pushes are shared
 * round state with the other lanes' (lv_contact_push's skipped slots). */
static void prepend_head_capsule(pt_instance_def *d)
{
	assert_true(d->collider_count < PT_MAX_COLLIDERS);
	memmove(&d->colliders[1], &d->colliders[0],
	        sizeof d->colliders[0] * (size_t)d->collider_count);
	d->collider_count++;
	pt_collider_def *c = &d->colliders[0];
	memset(c, 0, sizeof *c);
	c->shape = PT_SHAPE_CAPSULE, c->attach = PT_ATTACH_HEAD, c->radius_b = -1.0f;
	c->a = pt_v3(-0.1f, 0.02f, 0), c->b = pt_v3(0.1f, 0.02f, 0), c->radius = 0.09f;
	for (int s = 0; s < d->strand_count; s++) { /* indices move up by one; all see 0 */
		pt_strand_def *st = &d->strands[s];
		if (st->collider_n == PT_COLLIDERS_ALL)
			continue;
		int idx[PT_MAX_COLLIDERS] = {0};
		for (int k = 0; k < st->collider_n && k + 1 < PT_MAX_COLLIDERS; k++)
			idx[k + 1] = st->collider_list[k] + 1;
		pt_strand_set_colliders(st, idx, st->collider_n + 1);
	}
}

static void test_one_verlet_step_definition(void **state)
{
	(void)state;
	const int subs[] = {1, 4, 16};
	for (int k = 0; k < 6 * 3; k++) {
		int substeps = subs[k / 6];
		pt_instance_def d, o = {0};
		lane_scene(&d, k % 6);
		pt_motion m = pt_motion_default(PT_MOTION_STRESS);
		pt_world_def wd = pt_world_def_default();
		wd.kernel = PT_KERNEL_SCALAR;
		pt_world *alone = pt_world_create(&wd), *alone2 = pt_world_create(&wd);
		pt_world *crowd = pt_world_create(NULL);
		pt_id a = pt_world_create_instance(alone, &d, pt_motion_pose(&m, 0));
		pt_id others[8], b = {0, 0}, a2 = {0, 0}; /* a2: neighbour 2 alone */
		for (int i = 0; i < 8; i++) {
			tdef_copy(&o, &d);
			o.gravity.y = -9.81f * (0.5f + 0.1f * (float)i);
			/* odd neighbours have their first collider in the world, so that slot's
			 * lanes take per-lane frames (verlet_lanes_slots.inc), not the head's */
			if ((i & 1) && o.collider_count > 0)
				o.colliders[0].attach = PT_ATTACH_WORLD;
			if (i % 4 == 2)
				prepend_head_capsule(&o);
			others[i] = pt_world_create_instance(crowd, &o, pt_motion_pose(&m, 0));
			if (i == 2)
				a2 = pt_world_create_instance(alone2, &o, pt_motion_pose(&m, 0));
			if (i == 4)
				b = pt_world_create_instance(crowd, &d, pt_motion_pose(&m, 0));
		}
		assert_true(!pt_id_is_null(a) && !pt_id_is_null(b) && !pt_id_is_null(a2));
		int n = pt_world_shape(alone, a, NULL, NULL);
		pt_vec3 pa[PT_MAX_JOINTS], pb[PT_MAX_JOINTS];
		int diff_tick = 0, diff2_tick = 0;
		for (int t = 1; t <= 120 && !diff_tick && !diff2_tick; t++) {
			pt_pose h = pt_motion_pose(&m, t / 60.0);
			pt_world_set_head(alone, a, h), pt_world_set_head(crowd, b, h);
			pt_world_set_head(alone2, a2, h);
			for (int i = 0; i < 8; i++)
				pt_world_set_head(crowd, others[i], h);
			pt_world_step(alone, 1.0f / 60.0f, substeps);
			pt_world_step(alone2, 1.0f / 60.0f, substeps);
			pt_world_step(crowd, 1.0f / 60.0f, substeps);
			pt_world_read_points(alone, a, pa, n), pt_world_read_points(crowd, b, pb, n);
			if (memcmp(pa, pb, sizeof(pt_vec3) * (size_t)n) != 0)
				diff_tick = t;
			pt_world_read_points(alone2, a2, pa, n);
			pt_world_read_points(crowd, others[2], pb, n);
			if (memcmp(pa, pb, sizeof(pt_vec3) * (size_t)n) != 0)
				diff2_tick = t;
		}
		print_message("scene %d, %2d substeps: alone on the scalar kernel vs in a crowd on %s: "
		              "%s; its neighbour with the capsule first: %s\n",
		              k % 6, substeps, pt_world_kernel(crowd) == PT_KERNEL_AVX2 ? "AVX2" : "scalar",
		              diff_tick ? "DIFFER" : "bit-identical for 2 s",
		              diff2_tick ? "DIFFER" : "bit-identical for 2 s");
		assert_int_equal(diff_tick, 0);
		assert_int_equal(diff2_tick, 0);
		pt_world_destroy(alone), pt_world_destroy(alone2), pt_world_destroy(crowd);
		pt_instance_def_fini(&o);
		pt_instance_def_fini(&d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_resting_contact_settles),
	    cmocka_unit_test(test_decay_same_at_any_substep_count),
	    cmocka_unit_test(test_stress_every_setting),
	    cmocka_unit_test(test_mass_changes_double_pendulum_period),
	    cmocka_unit_test(test_one_verlet_step_definition),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
