/* Issue 38 item 3: the caps real avatars hit. 256 strands, 4,096 points and 128 colliders
 * per instance are accepted and simulated, a strand's collider selection reaches past
 * index 31 (asserted physically), one more of anything is refused naming the field and
 * the limit, and an instance's memory follows what it has, not the caps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ponytail/schema.h"
#include "ponytail/world.h"
#include "testdef.h"

enum { STRANDS = PT_MAX_STRANDS, POINTS = PT_MAX_JOINTS / PT_MAX_STRANDS, NCOL = PT_MAX_COLLIDERS };

static const pt_vec3 C99 = {0.0f, -0.12f, 0.0f}; /* sphere 99's centre */
static const float R99 = 0.05f;
static const float PLANE_Y = -0.30f; /* collider 100: the floor y = PLANE_Y, normal +Y */
static const float HIT = 0.01f;      /* springbone hit_radius and verlet radius */

/* The whole definition: 256 strands of 16 points (4,096 points) and 128 colliders. Strand
 * 0 hangs from the origin, 0.45 m long, starting almost level, and sees collider 100
 * only: the floor 0.30 m below, with sphere 99 in the way of its fall. Strand 1 hangs
 * the same and sees nothing. Strand 2 sees every collider (the default), strands 3..
 * one each, index s % 128, all hanging 1 m or more to the side of sphere 99; colliders other than 99 and 100 are spheres
 * 5 m and further away. */
static void full_def(pt_instance_def *d, pt_solver solver)
{
	tdef_init(d);
	d->solver = solver;
	d->prewarm_s = 0.0f;
	tdef_strands(d, STRANDS);
	d->collider_count = NCOL;
	for (int k = 0; k < NCOL; k++) {
		pt_collider_def *c = &d->colliders[k];
		memset(c, 0, sizeof *c);
		c->attach = PT_ATTACH_HEAD;
		c->radius_b = -1.0f;
		c->shape = PT_SHAPE_SPHERE;
		c->center = pt_v3(5.0f + 0.3f * (float)k, 0.0f, 0.0f);
		c->radius = 0.1f;
	}
	d->colliders[99].center = C99;
	d->colliders[99].radius = R99;
	d->colliders[100].shape = PT_SHAPE_PLANE;
	d->colliders[100].center = pt_v3(0.0f, PLANE_Y, 0.0f);
	d->colliders[100].normal = pt_v3(0.0f, 1.0f, 0.0f);
	pt_joint_def j = pt_joint_def_default();
	j.stiffness = 0.0f;
	j.gravity_power = 1.0f;
	j.hit_radius = HIT;
	for (int s = 0; s < STRANDS; s++) {
		pt_strand_def *st = &d->strands[s];
		st->points = POINTS;
		st->segment_length = 0.03f;
		st->radius = HIT;
		st->anchor = s < 2 ? pt_v3(0, 0, 0) : pt_v3(-1.0f - 0.01f * (float)s, 0.0f, 0.0f);
		st->direction = pt_v3(1.0f, -0.2f, 0.0f); /* starts above the floor */
		pt_strand_set_joints(st, j);
		int one = s % NCOL;
		if (s == 0) {
			one = 100;
			assert_true(pt_strand_set_colliders(st, &one, 1));
		} else if (s == 1) {
			assert_true(pt_strand_set_colliders(st, NULL, 0));
		} else if (s > 2) {
			assert_true(pt_strand_set_colliders(st, &one, 1));
		}
	}
}

static double dist(pt_vec3 a, pt_vec3 b)
{
	double x = a.x - b.x, y = a.y - b.y, z = a.z - b.z;
	return sqrt(x * x + y * y + z * z);
}

/* Both solvers: strand 0's tip lies on the floor (collider 100) while its upper points
 * pass through sphere 99, which it does not list; strand 1, listing nothing, hangs
 * through the floor. */
static void test_256_strands_128_colliders_collider_100_only(void **state)
{
	(void)state;
	for (int solver = 0; solver < 2; solver++) {
		pt_instance_def *d = tdef_new();
		pt_instance_def_fini(d);
		full_def(d, (pt_solver)solver);
		pt_error e = pt_instance_validate(d);
		assert_true(e.ok);
		pt_world *w = pt_world_create(NULL);
		pt_pose head = {{0, 0, 0}, {0, 0, 0, 1}};
		pt_id id = pt_world_create_instance(w, d, head);
		assert_true(pt_world_valid(w, id));
		for (int t = 0; t < 300; t++)
			pt_world_step(w, 1.0f / 60.0f, 4);
		pt_vec3 *p = malloc(sizeof *p * PT_MAX_JOINTS);
		assert_int_equal(pt_world_read_points(w, id, p, PT_MAX_JOINTS), STRANDS * POINTS);
		const pt_vec3 *s0 = p, *s1 = p + POINTS;
		/* resting on the floor: its tip within 2 mm of the floor plus its radius */
		double tip = s0[POINTS - 1].y - PLANE_Y;
		print_message("solver %d: strand 0's tip %.4f m above the floor, strand 1's "
		              "%.4f\n",
		              solver, tip, s1[POINTS - 1].y - PLANE_Y);
		assert_true(tip > HIT - 1e-3 && tip < HIT + 2e-3);
		double lowest = 1e9;
		for (int i = 0; i < POINTS; i++)
			lowest = fmin(lowest, s0[i].y - PLANE_Y);
		print_message("lowest point %.5f m above the floor\n", lowest);
		/* verlet keeps every particle's radius clear; a spring-bone tail is pushed out
		 * to its hit radius but the tail lying on the floor after it may press it
		 * back by up to that radius (no joint pulls a parent up): on, not through */
		assert_true(lowest > (solver == PT_SOLVER_VERLET ? HIT : 0.0) - 1e-3);
		/* through sphere 99: some point of strand 0 well inside it */
		double inside = 1e9;
		for (int i = 0; i < POINTS; i++)
			inside = fmin(inside, dist(s0[i], C99));
		assert_true(inside < R99 - HIT);
		/* strand 1 sees neither: hangs through the floor */
		assert_true(s1[POINTS - 1].y < PLANE_Y - 0.05f);
		free(p);
		pt_world_destroy(w);
		tdef_free(d);
	}
}

static void expect_error(const pt_instance_def *d, const char *field, const char *part)
{
	pt_error e = pt_instance_validate(d);
	assert_false(e.ok);
	print_message("%s\n", e.message);
	assert_string_equal(e.field, field);
	assert_non_null(strstr(e.message, part));
}

/* One more strand, collider, point or bone than the caps is refused, the error naming
 * the field and the limit; duplicate entries in a strand's list too. */
static void test_over_the_caps_is_refused(void **state)
{
	(void)state;
	pt_instance_def *d = tdef_new();
	pt_instance_def_fini(d);
	full_def(d, PT_SOLVER_SPRINGBONE);
	assert_true(pt_instance_validate(d).ok);
	assert_false(pt_instance_def_set_strand_count(d, PT_MAX_STRANDS + 1));
	assert_null(pt_instance_def_add_strand(d));
	d->strand_count = PT_MAX_STRANDS + 1; /* set directly */
	expect_error(d, "strands", "at most 256");
	d->strand_count = PT_MAX_STRANDS;
	d->collider_count = PT_MAX_COLLIDERS + 1;
	expect_error(d, "colliders", "at most 128");
	d->collider_count = PT_MAX_COLLIDERS;
	d->strands[7].points = POINTS + 1; /* 4,097 points */
	expect_error(d, "strands", "at most 4096");
	d->strands[7].points = POINTS;
	d->bone_count = PT_MAX_BONES + 1;
	expect_error(d, "bones", "at most 54");
	d->bone_count = 0;
	int twice[3] = {4, 100, 4};
	assert_true(pt_strand_set_colliders(&d->strands[5], twice, 3));
	expect_error(d, "strands[5].colliders[2]", "listed twice");
	assert_true(pt_strand_set_colliders(&d->strands[5], twice, 2));
	int past = PT_MAX_COLLIDERS;
	assert_false(pt_strand_set_colliders(&d->strands[5], &past, 1));
	assert_true(pt_instance_validate(d).ok); /* unchanged by the refused list */
	tdef_free(d);
}

/* The JSON form says the same: 257 strands, 129 colliders. */
static void test_json_over_the_caps_is_refused(void **state)
{
	(void)state;
	for (int what = 0; what < 2; what++) {
		json_t *doc = json_object(), *arr = json_array();
		int n = what == 0 ? PT_MAX_STRANDS + 1 : PT_MAX_COLLIDERS + 1;
		for (int i = 0; i < n; i++)
			json_array_append_new(arr, what == 0 ? json_pack("{s:i}", "points", 2)
			                                     : json_pack("{s:s,s:f}", "shape",
			                                                 "sphere", "radius", 0.1));
		json_object_set_new(doc, what == 0 ? "strands" : "colliders", arr);
		pt_instance_def d;
		tdef_init(&d);
		pt_error e;
		assert_int_not_equal(pt_schema_parse(doc, &d, NULL, &e), 0);
		print_message("%s: %s\n", e.field, e.message);
		assert_string_equal(e.field, what == 0 ? "strands" : "colliders");
		assert_non_null(strstr(e.message, what == 0 ? "256" : "128"));
		pt_instance_def_fini(&d);
		json_decref(doc);
	}
}

/* A springbone instance of n strands x 12 points with no collider: its heap bytes. */
static size_t bytes_of(int n, pt_solver solver)
{
	pt_instance_def d;
	tdef_init(&d);
	d.solver = solver;
	d.prewarm_s = 0.0f;
	tdef_strands(&d, n);
	pt_world *w = pt_world_create(NULL);
	pt_pose head = {{0, 0, 0}, {0, 0, 0, 1}};
	pt_id id = pt_world_create_instance(w, &d, head);
	assert_true(pt_world_valid(w, id));
	size_t b = pt_world_instance_bytes(w, id);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
	return b;
}

/* Memory follows use: an instance's bytes are a fixed part plus the same amount per
 * strand, the fixed part small (no table sized for 256 strands or 128 colliders). The
 * definition holds its strands on the heap too. */
static void test_memory_follows_what_an_instance_has(void **state)
{
	(void)state;
	for (int solver = 0; solver < 2; solver++) {
		size_t b3 = bytes_of(3, (pt_solver)solver), b6 = bytes_of(6, (pt_solver)solver);
		size_t b9 = bytes_of(9, (pt_solver)solver);
		assert_int_equal(b6 - b3, b9 - b6);
		size_t per = (b6 - b3) / 3, fixed = b3 - 3 * per;
		print_message("solver %d: %zu bytes for 3 strands: %zu fixed + %zu per strand\n",
		              solver, b3, fixed, per);
		assert_true(fixed < 4096);
		assert_true(b3 < 16384);
	}
	/* the definition: its strands are not an array of PT_MAX_STRANDS */
	assert_true(sizeof(pt_instance_def) < 16 * 1024);
	assert_true(sizeof(pt_instance_def) < (size_t)PT_MAX_STRANDS * sizeof(pt_strand_def));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_256_strands_128_colliders_collider_100_only),
	    cmocka_unit_test(test_over_the_caps_is_refused),
	    cmocka_unit_test(test_json_over_the_caps_is_refused),
	    cmocka_unit_test(test_memory_follows_what_an_instance_has),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
