/* Rest shapes given point by point (curved, unequal segments, as VRM chains are), per-point
 * masses and radii, per-strand gravity, and the nonlinear mode's strain limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "ponytail/schema.h"
#include "scenario.h"
#include "vecmath.h"

enum { N = 8 };

static pt_pose head_at(pt_vec3 p, pt_quat q)
{
	pt_pose h = {p, q};
	return h;
}

/* A curved, uneven strand: segments 2, 3, 4, 5, 4, 3, 2 cm, each turned 25 degrees further
 * about x from hanging straight down behind the head. */
static void curved_rest(pt_vec3 rest[N])
{
	const float len[N - 1] = {0.02f, 0.03f, 0.04f, 0.05f, 0.04f, 0.03f, 0.02f};
	rest[0] = pt_v3(0, 0.02f, -0.11f);
	for (int j = 1; j < N; j++) {
		float a = 0.436f * (float)j;
		rest[j] = v3_add(rest[j - 1], v3_scale(pt_v3(0, -cosf(a), -sinf(a)), len[j - 1]));
	}
}

static void curved_def(pt_instance_def *d, pt_solver solver)
{
	tdef_init(d);
	pt_vec3 rest[N];
	curved_rest(rest);
	d->solver = solver;
	d->prewarm_s = 0;
	pt_strand_def *s = &d->strands[0];
	s->points = N, s->has_rest = 1, s->anchor = rest[0];
	for (int j = 1; j < N; j++)
		s->joints[j - 1].rest = rest[j];
	pt_strand_rest_segment(s, 0, &s->segment_length, &s->direction);
}

/* Largest distance of a point from where the rest shape puts it at `head`. */
static float off_rest(const pt_world *w, pt_id id, pt_pose head)
{
	pt_vec3 rest[N], p[N];
	curved_rest(rest);
	assert_int_equal(pt_world_read_points(w, id, p, N), N);
	float worst = 0;
	for (int j = 0; j < N; j++) {
		pt_vec3 want = v3_add(head.p, q_rotate(head.q, rest[j]));
		worst = fmaxf(worst, v3_len(v3_sub(p[j], want)));
	}
	return worst;
}

static void assert_at_rest(const pt_world *w, pt_id id, pt_pose head, float tol)
{
	assert_true(off_rest(w, id, head) <= tol);
}

/* Creation and reset put every point where the rest shape says, in both solvers, under a
 * turned head. */
static void test_created_and_reset_at_rest_shape(void **state)
{
	(void)state;
	pt_pose head = head_at(pt_v3(0.3f, 1.5f, -0.2f), q_axis_angle(pt_v3(0, 1, 0), 0.7f));
	for (int solver = 0; solver < 2; solver++) {
		pt_instance_def d;
		curved_def(&d, (pt_solver)solver);
		assert_true(pt_instance_validate(&d).ok);
		pt_world *w = pt_world_create(NULL);
		pt_id id = pt_world_create_instance(w, &d, head);
		assert_at_rest(w, id, head, 1e-6f);
		for (int t = 0; t < 30; t++)
			pt_world_step(w, 1.0f / 60.0f, 4);
		assert_int_equal(pt_world_reset_instance(w, id), 1);
		assert_at_rest(w, id, head, 1e-6f);
		pt_world_destroy(w);
		pt_instance_def_fini(&d);
	}
}

/* Each segment keeps its own length on the stress sequence, at 1, 4 and 16 substeps. */
static void test_unequal_segments_keep_their_lengths(void **state)
{
	(void)state;
	pt_vec3 rest[N];
	curved_rest(rest);
	for (int sub = 1; sub <= 16; sub *= 4) {
		pt_instance_def d;
		curved_def(&d, PT_SOLVER_VERLET);
		scenario_head_and_neck(&d);
		pt_world *w = pt_world_create(NULL);
		pt_motion m = pt_motion_default(PT_MOTION_STRESS);
		pt_id id = pt_world_create_instance(w, &d, pt_motion_pose(&m, 0));
		double worst = 0;
		for (int t = 1; t <= 240; t++) {
			pt_world_step(w, 1.0f / 60.0f, sub);
			pt_world_set_head(w, id, pt_motion_pose(&m, t / 60.0));
			pt_vec3 p[N];
			pt_world_read_points(w, id, p, N);
			for (int j = 1; j < N; j++) {
				double want = v3_len(v3_sub(rest[j], rest[j - 1]));
				double got = v3_len(v3_sub(p[j], p[j - 1]));
				worst = fmax(worst, fabs(got / want - 1.0));
			}
		}
		print_message("unequal segments, %2d substeps: worst length error %.5f %%\n", sub,
			      worst * 100);
		assert_true(worst <= 0.01);
		pt_world_destroy(w);
		pt_instance_def_fini(&d);
	}
}

/* Without gravity, a shaken strand returns to its curved rest shape: verlet through its
 * bending toward the rest shape, both spring-bone forms through stiffness along the rest
 * directions turned by the parent frame. */
static void test_returns_to_curved_rest_shape(void **state)
{
	(void)state;
	for (int k = 0; k < 3; k++) {
		pt_instance_def d;
		curved_def(&d, k == 0 ? PT_SOLVER_VERLET : PT_SOLVER_SPRINGBONE);
		d.gravity = pt_v3(0, 0, 0);
		d.verlet.bend_stiffness = 0.5f;
		d.springbone.form = k == 2 ? PT_SPRINGBONE_PULL : PT_SPRINGBONE_VRM;
		pt_joint_def j = pt_joint_def_default();
		j.stiffness = k == 2 ? 0.2f : 2.0f;
		for (int i = 0; i < N - 1; i++) {
			pt_vec3 r = d.strands[0].joints[i].rest;
			d.strands[0].joints[i] = j;
			d.strands[0].joints[i].rest = r;
		}
		pt_world *w = pt_world_create(NULL);
		pt_motion m = pt_motion_default(PT_MOTION_SHAKE);
		pt_id id = pt_world_create_instance(w, &d, pt_motion_pose(&m, 0));
		for (int t = 1; t <= 60 * 8; t++) {
			double tt = t <= 60 ? t / 60.0 : 0.0; /* one second of shaking, then still */
			pt_world_set_head(w, id, pt_motion_pose(&m, tt));
			pt_world_step(w, 1.0f / 60.0f, 4);
		}
		float off = off_rest(w, id, pt_motion_pose(&m, 0));
		print_message("%s: %.2g m from the curved rest shape after shaking\n",
			      k == 0 ? "verlet" : k == 1 ? "springbone vrm" : "springbone pull", off);
		assert_true(off <= 1e-3f);
		pt_world_destroy(w);
		pt_instance_def_fini(&d);
	}
}

/* gravity_scale: -1 makes a strand stand straight up above its root; 0 leaves it where
 * its rest pose put it. */
static void test_gravity_scale(void **state)
{
	(void)state;
	pt_instance_def d;
	tdef_init(&d);
	tdef_strands(&d, 2);
	pt_strand_def_copy(&d.strands[1], &d.strands[0]);
	d.strands[0].gravity_scale = -1.0f;
	d.strands[0].direction = pt_v3(1, 0, 0);
	d.strands[1].gravity_scale = 0.0f;
	d.strands[1].direction = pt_v3(1, 0, 0);
	d.prewarm_s = 6.0f;
	assert_true(pt_instance_validate(&d).ok);
	pt_world *w = pt_world_create(NULL);
	pt_pose head = head_at(pt_v3(0, 1.5f, 0), pt_quat_identity());
	pt_id id = pt_world_create_instance(w, &d, head);
	pt_vec3 p[24];
	pt_world_read_points(w, id, p, 24);
	for (int j = 1; j < 12; j++) {
		assert_float_equal(p[j].x, p[0].x, 1e-4f);
		assert_float_equal(p[j].y - p[j - 1].y, 0.03f, 3e-6f); /* up, exact lengths */
		assert_float_equal(p[12 + j].y, p[12].y, 1e-6f);       /* no gravity: stays */
		assert_float_equal(p[12 + j].x - p[12 + j - 1].x, 0.03f, 3e-6f);
	}
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* A per-point mass array equal to the root/tip interpolation is the same instance, to
 * the bit; per-point radii hold each point its own radius above a floor. */
static void test_per_point_mass_and_radius(void **state)
{
	(void)state;
	pt_instance_def a, b = {0};
	scenario_twin_tails(&a);
	tdef_copy(&b, &a);
	for (int s = 0; s < 2; s++) {
		a.strands[s].mass_root = 1.2f, a.strands[s].mass_tip = 0.1f;
		for (int j = 1; j < 12; j++) {
			float t = (float)(j - 1) / 10.0f;
			b.strands[s].joints[j - 1].mass = 1.2f + (0.1f - 1.2f) * t;
		}
	}
	pt_world *w = pt_world_create(NULL);
	pt_motion m = pt_motion_default(PT_MOTION_STRESS);
	pt_id ia = pt_world_create_instance(w, &a, pt_motion_pose(&m, 0));
	pt_id ib = pt_world_create_instance(w, &b, pt_motion_pose(&m, 0));
	for (int t = 1; t <= 120; t++) {
		pt_world_set_head(w, ia, pt_motion_pose(&m, t / 60.0));
		pt_world_set_head(w, ib, pt_motion_pose(&m, t / 60.0));
		pt_world_step(w, 1.0f / 60.0f, 4);
	}
	assert_true(pt_world_instance_hash(w, ia) == pt_world_instance_hash(w, ib));
	pt_world_destroy(w);

	pt_instance_def f;
	tdef_init(&f);
	f.strands[0].anchor = pt_v3(0, -0.49f, 0), f.strands[0].direction = pt_v3(1, 0, 0);
	f.collider_count = 1;
	memset(&f.colliders[0], 0, sizeof f.colliders[0]);
	f.colliders[0].shape = PT_SHAPE_PLANE, f.colliders[0].attach = PT_ATTACH_WORLD;
	f.colliders[0].center = pt_v3(0, 1.0f, 0), f.colliders[0].normal = pt_v3(0, 1, 0);
	f.colliders[0].radius_b = -1.0f;
	for (int j = 0; j < 11; j++)
		f.strands[0].joints[j].radius = 0.001f * (float)(j + 1);
	f.prewarm_s = 4.0f;
	assert_true(pt_instance_validate(&f).ok);
	w = pt_world_create(NULL);
	pt_id id = pt_world_create_instance(w, &f, head_at(pt_v3(0, 1.5f, 0), pt_quat_identity()));
	pt_vec3 p[12];
	pt_world_read_points(w, id, p, 12);
	for (int j = 2; j < 12; j++) /* resting on the floor, each at its own radius */
		assert_float_equal(p[j].y - 1.0f, 0.001f * (float)j, 2e-5f);
	pt_world_destroy(w);
	pt_instance_def_fini(&f);
	pt_instance_def_fini(&b);
	pt_instance_def_fini(&a);
}

/* Nonlinear stretch is soft, but never beyond max_strain, at any substep count. */
static void test_nonlinear_within_max_strain(void **state)
{
	(void)state;
	for (int sub = 1; sub <= 16; sub *= 2) {
		pt_instance_def d;
		scenario_twin_tails(&d);
		d.verlet.stretch = PT_STRETCH_NONLINEAR;
		d.verlet.stretch_max_strain = 0.05f;
		pt_world *w = pt_world_create(NULL);
		pt_motion m = pt_motion_default(PT_MOTION_STRESS);
		pt_id id = pt_world_create_instance(w, &d, pt_motion_pose(&m, 0));
		scenario_stats st = scenario_run(w, id, &d, &m, 5.0, 60.0, sub, 1e9, NULL);
		print_message("nonlinear, %2d substeps: strain %.4f, penetration %.5f m\n", sub,
			      st.max_segment_error, st.max_penetration_m);
		assert_true(st.max_segment_error > 1e-3); /* soft: it does stretch */
		assert_true(st.max_segment_error <= 0.05 + 1e-4);
		assert_true(st.max_penetration_m <= 1e-3);
		pt_world_destroy(w);
		pt_instance_def_fini(&d);
	}
}

/* The JSON form: rest, per-point mass and radius and gravity_scale survive a dump and a
 * parse unchanged. */
static void test_json_round_trip(void **state)
{
	(void)state;
	pt_instance_def d, back;
	curved_def(&d, PT_SOLVER_VERLET);
	tdef_init(&back);
	d.strands[0].gravity_scale = -0.5f;
	for (int j = 0; j < N - 1; j++)
		d.strands[0].joints[j].mass = 1.0f + 0.25f * (float)j,
		d.strands[0].joints[j].radius = 0.002f * (float)j;
	json_t *j = pt_schema_dump(&d);
	assert_non_null(j);
	assert_non_null(json_object_get(json_array_get(json_object_get(j, "strands"), 0), "rest"));
	pt_error e;
	assert_int_equal(pt_schema_parse(j, &back, NULL, &e), 0);
	json_decref(j);
	const pt_strand_def *a = &d.strands[0], *b = &back.strands[0];
	assert_int_equal(b->has_rest, 1);
	assert_int_equal(b->points, N);
	assert_true(b->gravity_scale == a->gravity_scale);
	assert_memory_equal(&a->anchor, &b->anchor, sizeof a->anchor);
	for (int k = 0; k < N - 1; k++) {
		assert_memory_equal(&a->joints[k].rest, &b->joints[k].rest, sizeof(pt_vec3));
		assert_true(a->joints[k].mass == b->joints[k].mass);
		assert_true(a->joints[k].radius == b->joints[k].radius);
	}
	pt_instance_def_fini(&back);
	pt_instance_def_fini(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_created_and_reset_at_rest_shape),
	    cmocka_unit_test(test_unequal_segments_keep_their_lengths),
	    cmocka_unit_test(test_returns_to_curved_rest_shape),
	    cmocka_unit_test(test_gravity_scale),
	    cmocka_unit_test(test_per_point_mass_and_radius),
	    cmocka_unit_test(test_nonlinear_within_max_strain),
	    cmocka_unit_test(test_json_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
