/* pt_schema_dump is the inverse of pt_schema_parse: parse(dump(d)) == d for valid
 * definitions, through json_t and through text; the text is readable; and running out of
 * memory at any allocation fails cleanly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>

#include "schema_test.h"

static void assert_round_trip(const pt_instance_def *d)
{
	pt_instance_def *back = tdef_new();
	pt_error e;
	char diff[128];
	json_t *j = pt_schema_dump(d);
	assert_non_null(j);
	if (pt_schema_parse(j, back, NULL, &e) != 0)
		fail_msg("dump does not parse: %s: %s", e.field, e.message);
	if (!defs_equal(d, back, diff, sizeof diff))
		fail_msg("json_t round trip differs at %s", diff);
	/* through text, with and without the recommended flags */
	size_t flags[] = {PT_SCHEMA_DUMP_FLAGS, 0, JSON_COMPACT};
	for (size_t i = 0; i < 3; i++) {
		char *text = json_dumps(j, flags[i]);
		assert_non_null(text);
		if (parse_text(text, back, NULL, &e) != 0)
			fail_msg("text does not parse: %s: %s", e.field, e.message);
		if (!defs_equal(d, back, diff, sizeof diff))
			fail_msg("text round trip (flags %zx) differs at %s", flags[i], diff);
		free(text);
	}
	json_decref(j);
	tdef_free(back);
}

static void test_default_round_trips(void **state)
{
	(void)state;
	pt_instance_def d;
	tdef_init(&d);
	assert_round_trip(&d);
	pt_instance_def_fini(&d);
}

static const char *const rich =
    "{\"name\": \"bob \\u00e9\", \"room\": \"r1\", \"solver\": \"springbone\", \"substeps\": 3,"
    " \"prewarm_s\": 0.1, \"gravity\": [0.1, -9.7, 0.2],"
    " \"wind\": {\"velocity\": [1.5, 0, -0.25], \"turbulence\": 0.3, \"drag\": 1, \"seed\": 7},"
    " \"verlet\": {\"damping\": 0.97, \"iterations\": 5, \"bend_stiffness\": 0.1,"
    "   \"stretch\": {\"mode\": \"nonlinear\", \"stiffness\": 0.3, \"max_strain\": 0.2},"
    "   \"self_collision\": true},"
    " \"springbone\": {\"form\": \"vrm\", \"center\": \"head\", \"stiffness\": 0.8,"
    "   \"drag_force\": 0.3, \"gravity_power\": 0.1, \"gravity_dir\": [0, -1, 0.1],"
    "   \"hit_radius\": 0.015, \"limit\": {\"type\": \"cone\", \"angle_deg\": 33.3, \"axis\": [0, "
    "0, 1]}},"
    " \"colliders\": ["
    "   {\"shape\": \"sphere\", \"attach\": \"head\", \"center\": [0, 0.01, 0], \"radius\": 0.1},"
    "   {\"shape\": \"ellipsoid\", \"center\": [0, 0, 0.01], \"radii\": [0.08, 0.11, 0.1]},"
    "   {\"shape\": \"capsule\", \"a\": [0, -0.08, 0], \"b\": [0, -0.2, 0], \"radius\": 0.05,"
    "    \"radius_b\": 0.04},"
    "   {\"shape\": \"capsule\", \"a\": [0, -0.08, 0], \"b\": [0, -0.2, 0.1], \"radius\": 0.05},"
    "   {\"shape\": \"plane\", \"attach\": \"world\", \"point\": [0, 0.5, 0], \"normal\": [0, 1, "
    "0]},"
    "   {\"shape\": \"inside_sphere\", \"attach\": \"world\", \"center\": [0, 1, 0], \"radius\": "
    "3},"
    "   {\"shape\": \"inside_capsule\", \"a\": [0, 0, 0], \"b\": [0, 2, 0], \"radius\": 1.5}],"
    " \"strands\": ["
    "   {\"anchor\": [0, 0.06, -0.09], \"direction\": [0, -1, -0.2], \"points\": 5,"
    "    \"segment_length\": 0.033, \"colliders\": [0, 2, 6], \"anchor_bone\": \"hair_01\","
    "    \"joints\": [\"J_Sec_Hair1_01\", \"\u9aea_02\", \"\", \"J_Sec_Hair1_04\","
    "     \"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
    "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
    "\u00e9\u00e9\u00e9a\"],"
    "    \"mass\": {\"root\": 1.5, \"tip\": 0.3}, \"radius\": 0.004,"
    "    \"springbone\": {\"stiffness\": [1, 0.9, 0.8, 0.7], \"drag_force\": 0.5,"
    "      \"gravity_dir\": [[0, -1, 0], [0, -1, 0], [1, 0, 0], [0, -1, 0]],"
    "      \"limit\": [{\"type\": \"hinge\", \"axis\": [1, 0, 0], \"angle_deg\": 10},"
    "        {\"type\": \"none\"}, {}, {\"angle_deg\": 179.99}]}},"
    "   {\"points\": 64, \"colliders\": []},"
    "   {\"points\": 2, \"springbone\": {\"hit_radius\": [0]}}],"
    " \"teleport\": {\"distance\": 0.75, \"angle_deg\": 45.5, \"mode\": \"reset\"}}";

static void test_rich_definition_round_trips(void **state)
{
	(void)state;
	pt_instance_def *d = tdef_new();
	pt_error e;
	if (parse_text(rich, d, NULL, &e) != 0)
		fail_msg("%s: %s", e.field, e.message);
	assert_round_trip(d);
	tdef_free(d);
}

/* Definitions built in C (not from JSON) with arbitrary floats in range: the dump must
 * find a decimal for each that reads back to the same float, including angles that go
 * through degrees. */
static float uni(unsigned *seed, float lo, float hi)
{
	*seed = *seed * 1103515245u + 12345u;
	return lo + (hi - lo) * (float)((*seed >> 8) & 0xffffff) / (float)0x1000000;
}

static void test_random_definitions_round_trip(void **state)
{
	(void)state;
	unsigned seed = 12345;
	pt_instance_def *d = tdef_new();
	for (int n = 0; n < 200; n++) {
		pt_instance_def_fini(d);
		tdef_init(d);
		d->solver = n & 1 ? PT_SOLVER_SPRINGBONE : PT_SOLVER_VERLET;
		d->prewarm_s = uni(&seed, 0, 10);
		d->gravity = pt_v3(uni(&seed, -5, 5), uni(&seed, -50, 0), uni(&seed, -5, 5));
		d->verlet.damping = uni(&seed, 0, 1);
		d->teleport.angle_deg = uni(&seed, 1, 180);
		d->collider_count = 2;
		d->colliders[0].shape = PT_SHAPE_SPHERE;
		d->colliders[0].radius = uni(&seed, 0, 1);
		d->colliders[0].center = pt_v3(uni(&seed, -1, 1), uni(&seed, -1, 1), 0);
		d->colliders[1].shape = PT_SHAPE_CAPSULE;
		d->colliders[1].radius = uni(&seed, 0, 1);
		d->colliders[1].radius_b = uni(&seed, -1, 1);
		/* body bones: a rest table of up to 3 bones, colliders on some of them */
		d->bone_count = n % 4;
		for (int b = 0; b < d->bone_count; b++) {
			d->bones[b].bone = (pt_bone)((n * 7 + b * 11) % PT_BONE_COUNT);
			d->bones[b].position = pt_v3(uni(&seed, -1, 1), uni(&seed, -1, 0), uni(&seed, -1, 1));
			d->bones[b].rotation = (pt_quat){uni(&seed, -0.5f, 0.5f), uni(&seed, -0.5f, 0.5f),
			                                 uni(&seed, -0.5f, 0.5f), 1.0f};
		}
		if (d->bone_count > 0) {
			d->colliders[n % 2].attach = PT_ATTACH_BONE;
			d->colliders[n % 2].bone = d->bones[d->bone_count - 1].bone;
		}
		tdef_strands(d, 1 + n % 3);
		for (int s = 0; s < d->strand_count; s++) {
			pt_strand_def *st = &d->strands[s];
			pt_strand_def_reset(st);
			st->points = 2 + (int)uni(&seed, 0, 62);
			st->segment_length = uni(&seed, 0.001f, 1);
			/* a subset of colliders 0 and 1, in either order */
			static const int lists[4][2] = {{0, 1}, {1, 0}, {1, 1}, {0, 0}};
			int pick = (n + s) & 3, len = pick < 2 ? 2 : (n + s) & 1;
			pt_strand_set_colliders(st, lists[pick], len);
			for (int j = 0; j < st->points - 1; j++) {
				pt_joint_def *jt = &st->joints[j];
				jt->stiffness = uni(&seed, 0, 100);
				jt->drag_force = n % 4 == 1 ? 0.25f : uni(&seed, 0, 1);
				jt->limit = (pt_limit_type)(j % 3);
				jt->limit_angle = uni(&seed, 0, 3.14159f);
				jt->gravity_dir = pt_v3(uni(&seed, -1, 1), -1, uni(&seed, -1, 1));
			}
		}
		pt_error v = pt_instance_validate(d);
		if (!v.ok)
			fail_msg("generator made an invalid def: %s: %s", v.field, v.message);
		assert_round_trip(d);
	}
	tdef_free(d);
}

static void test_dump_reads_well(void **state)
{
	(void)state;
	pt_instance_def d;
	tdef_init(&d);
	json_t *j = pt_schema_dump(&d);
	char *text = json_dumps(j, PT_SCHEMA_DUMP_FLAGS | JSON_COMPACT);
	/* floats as their shortest decimals, every section present, defaults explicit */
	assert_non_null(strstr(text, "\"damping\":0.96,"));
	assert_non_null(strstr(text, "\"gravity\":[0.0,-9.81,0.0]"));
	assert_null(strstr(text, "0.9599"));
	assert_non_null(strstr(text, "\"angle_deg\":180.0"));
	assert_non_null(
	    strstr(text, "\"teleport\":{\"distance\":0.5,\"angle_deg\":60.0,\"mode\":\"keep\"}"));
	/* a strand that sees every collider and uses the top-level joints says neither */
	assert_null(strstr(text, "\"colliders\":[0"));
	const json_t *s0 = json_array_get(json_object_get(j, "strands"), 0);
	assert_null(json_object_get(s0, "colliders"));
	assert_null(json_object_get(s0, "springbone"));
	assert_null(json_object_get(s0, "anchor_bone"));
	free(text);
	json_decref(j);
	pt_instance_def_fini(&d);
}

static void test_dump_survives_invalid_enums(void **state)
{
	(void)state;
	pt_instance_def d;
	tdef_init(&d);
	d.solver = (pt_solver)7;
	d.strand_count = 99;
	d.strands[0].points = 1000;
	json_t *j = pt_schema_dump(&d);
	assert_non_null(j);
	assert_true(json_is_null(json_object_get(j, "solver")));
	/* the strands it has storage for */
	assert_int_equal(json_array_size(json_object_get(j, "strands")), d.store.slots);
	json_decref(j);
	pt_instance_def_fini(&d);
}

/* jansson allocations fail from the n-th on; every n up to a complete dump. */
static int alloc_budget = -1;
static void *failing_malloc(size_t n)
{
	if (alloc_budget == 0)
		return NULL;
	if (alloc_budget > 0)
		alloc_budget--;
	return malloc(n);
}

static void test_out_of_memory_fails_cleanly(void **state)
{
	(void)state;
	pt_instance_def *d = tdef_new();
	pt_error e;
	assert_int_equal(parse_text(rich, d, NULL, &e), 0);
	json_set_alloc_funcs(failing_malloc, free);
	int n = 0;
	for (;; n++) {
		alloc_budget = n;
		json_t *j = pt_schema_dump(d);
		alloc_budget = -1;
		if (j) {
			json_decref(j);
			break;
		}
	}
	json_set_alloc_funcs(malloc, free);
	assert_true(n > 100); /* the loop really went through the dump's allocations */
	tdef_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_default_round_trips),
	    cmocka_unit_test(test_rich_definition_round_trips),
	    cmocka_unit_test(test_random_definitions_round_trip),
	    cmocka_unit_test(test_dump_reads_well),
	    cmocka_unit_test(test_dump_survives_invalid_enums),
	    cmocka_unit_test(test_out_of_memory_fails_cleanly),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
