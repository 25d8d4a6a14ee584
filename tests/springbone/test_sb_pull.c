/* The "pull" form against the spring-bone lesson (tests/fixtures/springbone_lesson.json):
 * tables 1-3 through the chain step with the lesson's options (no gravity, no length
 * step, an initial velocity), which the instance schema does not expose, and the same
 * closed forms through the world API. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <float.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "sb_scenario.h"
#include "springbone.h"

#define DEG (180.0 / 3.14159265358979323846)

static json_t *lesson;

static int load_lesson(void **state)
{
	(void)state;
	char path[512];
	snprintf(path, sizeof path, "%s/tests/fixtures/springbone_lesson.json", sb_root());
	json_error_t e;
	lesson = json_load_file(path, 0, &e);
	if (!lesson)
		fprintf(stderr, "%s: %s\n", path, e.text);
	return lesson ? 0 : -1;
}

static int free_lesson(void **state)
{
	(void)state;
	json_decref(lesson);
	return 0;
}

static double num(const json_t *o, const char *path)
{
	/* "table2.inputs.L" style lookups into the lesson */
	char buf[128];
	snprintf(buf, sizeof buf, "%s", path);
	const json_t *v = o;
	for (char *tok = strtok(buf, "."); tok; tok = strtok(NULL, "."))
		v = json_object_get(v, tok);
	assert_non_null(v);
	return json_number_value(v);
}

/* A 2D lesson chain in the x-y plane: root at the origin, rest direction +x, head at
 * rest at the origin. */
typedef struct lesson_chain {
	pt_sb_chain c;
	pt_sb_param par[8];
	pt_sb_joint run[8];
	float x[9], y[9], z[9], px[9], py[9], pz[9];
} lesson_chain;

static void lesson_init(lesson_chain *l, int n, float L, float stiff, float drag, int gravity,
                        int length_step, float h)
{
	memset(l, 0, sizeof *l);
	for (int j = 0; j < n; j++) {
		l->par[j].stiffness = stiff;
		l->par[j].drag = drag;
		l->par[j].gravity_dir = pt_v3(0, -1, 0);
	}
	float g = gravity ? -(float)num(lesson, "constants.g") : 0.0f;
	pt_sb_convert(PT_SPRINGBONE_PULL, l->par, n, h, pt_v3(0, g, 0), l->run);
	l->c.form = PT_SPRINGBONE_PULL;
	l->c.joints = n;
	l->c.length = L;
	l->c.anchor = pt_v3(0, 0, 0);
	l->c.direction = pt_v3(1, 0, 0);
	l->c.j = l->run;
	l->c.cols = NULL, l->c.ncols = 0; /* no colliders */
	l->c.free_length = !length_step;
	for (int i = 0; i <= n; i++)
		l->x[i] = l->px[i] = (float)i * L;
}

static void lesson_step(lesson_chain *l)
{
	pt_pose head = {pt_v3(0, 0, 0), pt_quat_identity()};
	pt_mat3 R = m3_from_quat(head.q);
	pt_sb_frame f;
	memset(&f, 0, sizeof f);
	f.head = &head;
	f.rot = &R;
	pt_sb_step_chain(&l->c, &f, l->x, l->y, l->z, l->px, l->py, l->pz);
}

/* The lesson's angle below horizontal of segment i (degrees). */
static double seg_angle_deg(const lesson_chain *l, int i)
{
	return atan2(-((double)l->y[i + 1] - l->y[i]), (double)l->x[i + 1] - l->x[i]) * DEG;
}

static double seg_len(const lesson_chain *l, int i)
{
	return sb_dist(pt_v3(l->x[i + 1], l->y[i + 1], 0), pt_v3(l->x[i], l->y[i], 0));
}

/* Table 1: free inertia, consecutive displacements shrink by exactly 1 - drag. The
 * lesson's tails are matched to 1e-8 m (float positions near 0.03 m have an ulp of
 * 2e-9 m, a few roundings per frame); each ratio to the float error of its two
 * displacements, 4 ulp(y) / displacement. */
static void test_table1_inertia_ratio(void **state)
{
	(void)state;
	const json_t *t1 = json_object_get(lesson, "table1");
	const json_t *rows = json_object_get(t1, "rows");
	int frames = (int)num(t1, "inputs.frames");
	float L = (float)num(t1, "inputs.L");
	float v0 = (float)json_number_value(json_array_get(
	    json_object_get(json_object_get(t1, "inputs"), "initial_velocity_per_frame"), 1));
	for (size_t r = 0; r < json_array_size(rows); r++) {
		const json_t *row = json_array_get(rows, r);
		float drag = (float)num(row, "drag");
		lesson_chain l;
		lesson_init(&l, 1, L, 0.0f, drag, 0, 0, 1.0f / 60.0f);
		l.py[1] = -v0; /* initial velocity: prev = cur - v */
		const json_t *tails = json_object_get(row, "tails");
		double prev_disp = v0, worst_ratio = 0.0;
		for (int k = 1; k <= frames; k++) {
			float before = l.y[1];
			lesson_step(&l);
			const json_t *ref = json_array_get(tails, (size_t)k);
			assert_true(fabs(l.x[1] - json_number_value(json_array_get(ref, 0))) <
			            1e-7);
			assert_true(fabs(l.y[1] - json_number_value(json_array_get(ref, 1))) <
			            1e-8);
			double disp = (double)l.y[1] - before;
			double ratio = disp / prev_disp, tol = 4.0 * 4e-9 / disp;
			assert_true(fabs(ratio - (1.0 - drag)) <= tol);
			if (fabs(ratio - (1.0 - drag)) > worst_ratio)
				worst_ratio = fabs(ratio - (1.0 - drag));
			prev_disp = disp;
		}
		printf("# table1 drag %.1f: max |ratio - (1 - drag)| %.2g\n", drag, worst_ratio);
	}
}

/* Table 2: one joint under gravity settles at tan(theta) = g h^2 (1 - s) / (s L). */
static void test_table2_steady_angle(void **state)
{
	(void)state;
	const json_t *t2 = json_object_get(lesson, "table2");
	const json_t *rows = json_object_get(t2, "rows");
	double L = num(t2, "inputs.L"), g = num(t2, "inputs.g"), h = num(t2, "inputs.h");
	float drag = (float)num(t2, "inputs.drag");
	int frames = (int)num(t2, "inputs.frames");
	for (size_t r = 0; r < json_array_size(rows); r++) {
		const json_t *row = json_array_get(rows, r);
		double s = num(row, "stiffness");
		lesson_chain l;
		lesson_init(&l, 1, (float)L, (float)s, drag, 1, 1, 1.0f / 60.0f);
		for (int k = 0; k < frames; k++)
			lesson_step(&l);
		double closed = atan(g * h * h * (1.0 - s) / (s * L)) * DEG;
		double th = seg_angle_deg(&l, 0);
		assert_true(fabs(closed - num(row, "theta_closed_deg")) < 1e-9);
		assert_true(fabs(th - closed) < 1e-3);
		assert_true(fabs(th - num(row, "theta_sim_deg")) < 1e-3);
		const json_t *tail = json_object_get(row, "tail");
		assert_true(fabs(l.x[1] - json_number_value(json_array_get(tail, 0))) < 1e-6);
		assert_true(fabs(l.y[1] - json_number_value(json_array_get(tail, 1))) < 1e-6);
		assert_true(fabs(seg_len(&l, 0) - L) < 1e-6);
		printf("# table2 stiffness %.2f: %.5f deg (closed %.5f)\n", s, th, closed);
	}
}

/* Table 3: four joints; with the length step every segment is L, without it the lengths
 * grow toward the tip as the table (and its closed form) says. */
static void test_table3_lengths(void **state)
{
	(void)state;
	const json_t *t3 = json_object_get(lesson, "table3");
	int n = (int)num(t3, "inputs.n"), frames = (int)num(t3, "inputs.frames");
	float L = (float)num(t3, "inputs.L"), s = (float)num(t3, "inputs.stiffness");
	float drag = (float)num(t3, "inputs.drag");
	for (int length_step = 0; length_step < 2; length_step++) {
		lesson_chain l;
		lesson_init(&l, n, L, s, drag, 1, length_step, 1.0f / 60.0f);
		for (int k = 0; k < frames; k++)
			lesson_step(&l);
		const json_t *ref = json_object_get(
		    json_object_get(t3, length_step ? "with_constraint" : "without_constraint"),
		    "lengths");
		for (int i = 0; i < n; i++) {
			double want = json_number_value(json_array_get(ref, (size_t)i));
			printf("# table3 %s segment %d: %.7f (lesson %.7f)\n",
			       length_step ? "with" : "without", i, seg_len(&l, i), want);
			assert_true(fabs(seg_len(&l, i) - want) < 2e-6);
		}
	}
}

/* The instance level: a horizontal 0.30 m strand, stiffness 0.05, drag 0.2 under the
 * instance's gravity settles at 9.7918 deg at 1, 2, 4 and 8 substeps (the conversion
 * keeps the spring constant, see springbone_chain.c). With the head at the origin (the
 * lesson's setting) to 1e-3 deg. Higher up, float positions limit it: a fixed point c of
 * the rounded step is only within ulp / 2 of the exact step's, and the step restores a
 * tangential offset by the pull fraction s_s per substep, so the steady tail may sit
 * anywhere within ulp(|x|) / (2 s_s) of the exact one: at 1.5 m (ulp 1.2e-7 m) and 8
 * substeps (s_s = 8.2e-4) that is 7e-5 m, 0.014 deg. The test allows twice that bound. */
static double world_pull_angle(int n, float head_y, double *s_sub)
{
	pt_joint_def j = pt_joint_def_default();
	j.stiffness = 0.05f;
	j.drag_force = 0.2f;
	pt_instance_def d;
	sb_def_strand(&d, pt_v3(0, 0, 0), pt_v3(1, 0, 0), 2, 0.30f, j, n);
	d.springbone.form = PT_SPRINGBONE_PULL;
	d.gravity = pt_v3(0, -9.81f, 0);
	pt_world *w = pt_world_create(NULL);
	pt_pose head = {pt_v3(0, head_y, 0), pt_quat_identity()};
	pt_id id = pt_world_create_instance(w, &d, head);
	for (int k = 0; k < 600; k++)
		pt_world_step(w, 1.0f / 60.0f, 4);
	pt_vec3 p[2];
	assert_int_equal(pt_world_read_points(w, id, p, 2), 2);
	assert_true(fabs(sb_dist(p[1], p[0]) - 0.30) < 1e-6);
	pt_world_destroy(w);
	double f = 1.0 / n;
	*s_sub = 0.05 * f * f / (0.95 + 0.05 * f * f);
	pt_instance_def_fini(&d);
	return atan2(-((double)p[1].y - p[0].y), (double)p[1].x - p[0].x) * DEG;
}

static void test_world_steady_angle_substeps(void **state)
{
	(void)state;
	double closed = atan(9.81 / 3600.0 * 0.95 / (0.05 * 0.30)) * DEG, s_sub;
	assert_true(fabs(closed - 9.7918) < 1e-4);
	for (int n = 1; n <= 8; n *= 2) {
		double at0 = world_pull_angle(n, 0.0f, &s_sub);
		double at15 = world_pull_angle(n, 1.5f, &s_sub);
		double bound = 1e-3 + 2.0 * (FLT_EPSILON / (2.0 * s_sub * 0.30)) * DEG;
		printf("# world pull, %d substeps: %.5f deg at the origin, %.5f deg at 1.5 m "
		       "(closed %.5f, float bound there %.4f)\n",
		       n, at0, at15, closed, bound);
		assert_true(fabs(at0 - closed) < 1e-3);
		assert_true(fabs(at15 - closed) < bound);
	}
}

/* Longer chains follow the same rule joint by joint: the world's 4-joint pull strand at
 * 60 Hz is the lesson chain of table 3 (with the length step), point for point. */
static void test_world_matches_chain_step(void **state)
{
	(void)state;
	pt_joint_def j = pt_joint_def_default();
	j.stiffness = 0.05f;
	j.drag_force = 0.2f;
	pt_instance_def d;
	sb_def_strand(&d, pt_v3(0, 0, 0), pt_v3(1, 0, 0), 5, 0.30f, j, 1);
	d.springbone.form = PT_SPRINGBONE_PULL;
	d.gravity = pt_v3(0, -(float)num(lesson, "constants.g"), 0);
	pt_world *w = pt_world_create(NULL);
	pt_pose head = {pt_v3(0, 0, 0), pt_quat_identity()};
	pt_id id = pt_world_create_instance(w, &d, head);
	lesson_chain l;
	lesson_init(&l, 4, 0.30f, 0.05f, 0.2f, 1, 1, 1.0f / 60.0f);
	pt_vec3 p[5];
	for (int k = 0; k < 240; k++) {
		pt_world_step(w, 1.0f / 60.0f, 1);
		lesson_step(&l);
		pt_world_read_points(w, id, p, 5);
		for (int i = 0; i < 5; i++)
			assert_true(p[i].x == l.x[i] && p[i].y == l.y[i] && p[i].z == l.z[i]);
	}
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* Steady states of a 4-joint pull chain under gravity are the same at 1, 2, 4, 8
 * substeps, joint by joint (each joint's balance is the single joint's, whose spring
 * constant the conversion keeps). */
static void test_world_chain_steady_substeps(void **state)
{
	(void)state;
	pt_vec3 ref[5];
	for (int n = 1; n <= 8; n *= 2) {
		pt_joint_def j = pt_joint_def_default();
		j.stiffness = 0.1f;
		j.drag_force = 0.3f;
		pt_instance_def d;
		sb_def_strand(&d, pt_v3(0, 0, 0), pt_v3(1, 0, 0), 5, 0.05f, j, n);
		d.springbone.form = PT_SPRINGBONE_PULL;
		pt_world *w = pt_world_create(NULL);
		pt_pose head = {pt_v3(0, 0, 0), pt_quat_identity()};
		pt_id id = pt_world_create_instance(w, &d, head);
		for (int k = 0; k < 1200; k++)
			pt_world_step(w, 1.0f / 60.0f, 1);
		pt_vec3 p[5];
		pt_world_read_points(w, id, p, 5);
		double worst = 0.0;
		for (int i = 0; i < 5; i++) {
			if (n == 1)
				ref[i] = p[i];
			worst = fmax(worst, sb_dist(p[i], ref[i]));
		}
		printf("# pull chain steady state, %d substeps: max %.2g m from 1 substep (tip y "
		       "%.5f)\n",
		       n, worst, p[4].y);
		assert_true(worst < 1e-5);
		pt_world_destroy(w);
		pt_instance_def_fini(&d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table1_inertia_ratio),
	    cmocka_unit_test(test_table2_steady_angle),
	    cmocka_unit_test(test_table3_lengths),
	    cmocka_unit_test(test_world_steady_angle_substeps),
	    cmocka_unit_test(test_world_matches_chain_step),
	    cmocka_unit_test(test_world_chain_steady_substeps),
	};
	return cmocka_run_group_tests(tests, load_lesson, free_lesson);
}
