/* What a valid document means: defaults for missing fields, where joint values come
 * from, units (degrees in JSON, radians in C), collider lists and masks; and reading
 * JSON text and files with errors that say where. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../clients/cli/jsonfile.c"
#include "schema_test.h"

static pt_instance_def *parse_ok(const char *text)
{
	pt_instance_def *d = tdef_new();
	pt_error e;
	assert_non_null(d);
	if (parse_text(text, d, NULL, &e) != 0)
		fail_msg("%s: %s: %s", text, e.field, e.message);
	assert_true(e.ok);
	return d;
}

static void assert_same(const pt_instance_def *a, const pt_instance_def *b)
{
	char diff[128];
	if (!defs_equal(a, b, diff, sizeof diff))
		fail_msg("definitions differ at %s", diff);
}

/* Colliders on body bones: the bone lands in the collider, the rest table in def->bones
 * (head-local, as written), and the dump writes both back. */
static void test_body_bones(void **state)
{
	(void)state;
	pt_instance_def *d = parse_ok(
	    "{\"bones\": {\"upper_chest\": {\"position\": [0, -0.25, 0.02], \"rotation\": "
	    "[0, 0, 0.6, 0.8]}, \"left_shoulder\": {\"position\": [0.05, -0.2, 0], "
	    "\"rotation\": [0, 0, 0, 1]}}, \"colliders\": [{\"shape\": \"sphere\", "
	    "\"radius\": 0.1, \"attach\": \"upper_chest\"}, {\"shape\": \"capsule\", \"a\": "
	    "[0, 0, 0], \"b\": [0.1, 0, 0], \"radius\": 0.04, \"attach\": \"left_shoulder\"}, "
	    "{\"shape\": \"sphere\", \"radius\": 0.08}]}");
	assert_int_equal(d->bone_count, 2);
	assert_int_equal(d->bones[0].bone, PT_BONE_UPPER_CHEST);
	assert_true(v3_same(d->bones[0].position, pt_v3(0, -0.25f, 0.02f)));
	assert_true(d->bones[0].rotation.z == 0.6f && d->bones[0].rotation.w == 0.8f);
	assert_int_equal(d->bones[1].bone, PT_BONE_LEFT_SHOULDER);
	assert_int_equal(d->colliders[0].attach, PT_ATTACH_BONE);
	assert_int_equal(d->colliders[0].bone, PT_BONE_UPPER_CHEST);
	assert_int_equal(d->colliders[1].attach, PT_ATTACH_BONE);
	assert_int_equal(d->colliders[1].bone, PT_BONE_LEFT_SHOULDER);
	assert_int_equal(d->colliders[2].attach, PT_ATTACH_HEAD);
	json_t *j = pt_schema_dump(d);
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(json_object_get(j, "colliders"), 1),
	                                      "attach")),
	    "left_shoulder");
	assert_non_null(json_object_get(json_object_get(j, "bones"), "upper_chest"));
	json_decref(j);
	/* no bones: no "bones" key, older documents read back as they were */
	pt_instance_def def;
	tdef_init(&def);
	j = pt_schema_dump(&def);
	assert_null(json_object_get(j, "bones"));
	json_decref(j);
	pt_instance_def_fini(&def);
	tdef_free(d);
}

static void test_empty_document_is_the_default(void **state)
{
	(void)state;
	pt_instance_def *d = parse_ok("{}");
	pt_instance_def def;
	tdef_init(&def);
	assert_same(d, &def);
	pt_instance_def_fini(&def);
	tdef_free(d);
}

static void test_listed_strand_starts_from_strand_default(void **state)
{
	(void)state;
	pt_instance_def *d = parse_ok("{\"strands\": [{}, {\"points\": 5}]}");
	pt_instance_def dflt;
	const pt_strand_def *s = &tdef_init(&dflt)->strands[0];
	assert_int_equal(d->strand_count, 2);
	assert_true(v3_same(d->strands[0].anchor, s->anchor));
	assert_int_equal(d->strands[0].points, s->points);
	assert_true(d->strands[1].segment_length == s->segment_length);
	assert_int_equal(d->strands[1].points, 5);
	assert_true(d->strands[1].mass_tip == s->mass_tip);
	pt_instance_def_fini(&dflt);
	tdef_free(d);
}

static void test_every_field_lands_in_its_c_field(void **state)
{
	(void)state;
	pt_instance_def *d = parse_ok(
	    "{\"name\": \"alice\", \"room\": \"lobby-1.a_b\", \"solver\": \"springbone\","
	    " \"substeps\": 2, \"prewarm_s\": 0.5, \"gravity\": [0, -5, 1],"
	    " \"wind\": {\"velocity\": [1, 0, 0], \"turbulence\": 0.5, \"drag\": 3, \"seed\": "
	    "4000000000},"
	    " \"verlet\": {\"damping\": 0.9, \"iterations\": 7, \"bend_stiffness\": 0.25,"
	    "   \"stretch\": {\"mode\": \"nonlinear\", \"stiffness\": 0.5, \"max_strain\": 0.1},"
	    "   \"self_collision\": true},"
	    " \"springbone\": {\"form\": \"pull\", \"center\": \"head\"},"
	    " \"colliders\": [{\"shape\": \"plane\", \"attach\": \"world\", \"point\": [0, 1, 0],"
	    "   \"normal\": [0, 0, 2]}],"
	    " \"strands\": [{\"anchor\": [0.1, 0.2, 0.3], \"direction\": [1, 0, 0], \"points\": 3,"
	    "   \"segment_length\": 0.05, \"anchor_bone\": \"J_Bip_C_Head\", \"mass\": {\"root\": "
	    "2,"
	    "   \"tip\": 0.5}, \"radius\": 0.01, \"colliders\": []}],"
	    " \"teleport\": {\"distance\": 2, \"angle_deg\": 90, \"mode\": \"reset\"}}");
	assert_string_equal(d->name, "alice");
	assert_string_equal(d->room, "lobby-1.a_b");
	assert_int_equal(d->solver, PT_SOLVER_SPRINGBONE);
	assert_int_equal(d->substeps, 2);
	assert_true(d->prewarm_s == 0.5f);
	assert_true(v3_same(d->gravity, pt_v3(0, -5, 1)));
	assert_true(v3_same(d->wind.velocity, pt_v3(1, 0, 0)));
	assert_true(d->wind.turbulence == 0.5f && d->wind.drag == 3.0f);
	assert_true(d->wind.seed == 4000000000u);
	assert_true(d->verlet.damping == 0.9f && d->verlet.iterations == 7);
	assert_true(d->verlet.bend_stiffness == 0.25f);
	assert_int_equal(d->verlet.stretch, PT_STRETCH_NONLINEAR);
	assert_true(d->verlet.stretch_stiffness == 0.5f && d->verlet.stretch_max_strain == 0.1f);
	assert_int_equal(d->verlet.self_collision, 1);
	assert_int_equal(d->springbone.form, PT_SPRINGBONE_PULL);
	assert_int_equal(d->springbone.center_head, 1);
	assert_int_equal(d->collider_count, 1);
	assert_int_equal(d->colliders[0].shape, PT_SHAPE_PLANE);
	assert_int_equal(d->colliders[0].attach, PT_ATTACH_WORLD);
	assert_true(v3_same(d->colliders[0].center, pt_v3(0, 1, 0))); /* a plane's point */
	assert_true(v3_same(d->colliders[0].normal, pt_v3(0, 0, 2)));
	const pt_strand_def *s = &d->strands[0];
	assert_true(v3_same(s->anchor, pt_v3(0.1f, 0.2f, 0.3f)));
	assert_true(v3_same(s->direction, pt_v3(1, 0, 0)));
	assert_int_equal(s->points, 3);
	assert_true(s->segment_length == 0.05f);
	assert_string_equal(s->anchor_bone, "J_Bip_C_Head");
	assert_true(s->mass_root == 2.0f && s->mass_tip == 0.5f && s->radius == 0.01f);
	assert_int_equal(s->collider_n, 0); /* an empty list: collides with nothing */
	assert_true(d->teleport.distance == 2.0f && d->teleport.angle_deg == 90.0f);
	assert_int_equal(d->teleport.mode, PT_TELEPORT_RESET);
	tdef_free(d);
}

static void test_collider_list_is_ordered_default_all(void **state)
{
	(void)state;
	pt_instance_def *d = parse_ok(
	    "{\"colliders\": [{\"shape\": \"sphere\", \"radius\": 0.1},"
	    " {\"shape\": \"capsule\", \"a\": [0, 0, 0], \"b\": [0, -0.1, 0], \"radius\": 0.05},"
	    " {\"shape\": \"ellipsoid\", \"radii\": [0.1, 0.2, 0.3]}],"
	    " \"strands\": [{}, {\"colliders\": [2, 0]}]}");
	assert_int_equal(d->collider_count, 3);
	pt_instance_def dflt;
	assert_int_equal(d->strands[0].collider_n, tdef_init(&dflt)->strands[0].collider_n);
	assert_int_equal(d->strands[0].collider_n, PT_COLLIDERS_ALL);
	pt_instance_def_fini(&dflt);
	/* in the order given */
	assert_int_equal(d->strands[1].collider_n, 2);
	assert_int_equal(d->strands[1].collider_list[0], 2);
	assert_int_equal(d->strands[1].collider_list[1], 0);
	/* defaults of optional collider fields */
	assert_int_equal(d->colliders[0].attach, PT_ATTACH_HEAD);
	assert_true(v3_same(d->colliders[0].center, pt_v3(0, 0, 0)));
	assert_true(d->colliders[1].radius_b < 0.0f); /* same as radius */
	tdef_free(d);
}

static void test_joint_values_layer_default_strand_joint(void **state)
{
	(void)state;
	pt_instance_def *d = parse_ok(
	    "{\"solver\": \"springbone\","
	    " \"springbone\": {\"stiffness\": 2, \"gravity_power\": 0.5,"
	    "   \"limit\": {\"type\": \"cone\", \"angle_deg\": 45}},"
	    " \"strands\": [{\"points\": 4, \"springbone\": {\"drag_force\": [0.1, 0.2, 0.3],"
	    "   \"gravity_power\": 0.25, \"gravity_dir\": [[0, -1, 0], [1, 0, 0], [0, 0, 1]],"
	    "   \"limit\": [{}, {\"angle_deg\": 90}, {\"type\": \"hinge\", \"axis\": [0, 0, 1]}]}},"
	    "   {\"points\": 2}]}");
	pt_joint_def def = pt_joint_def_default();
	const pt_joint_def *j = d->strands[0].joints;
	for (int i = 0; i < 3; i++) {
		assert_true(j[i].stiffness == 2.0f);            /* top level */
		assert_true(j[i].gravity_power == 0.25f);       /* strand scalar beats top level */
		assert_true(j[i].hit_radius == def.hit_radius); /* core default */
	}
	assert_true(j[0].drag_force == 0.1f && j[1].drag_force == 0.2f && j[2].drag_force == 0.3f);
	assert_true(v3_same(j[1].gravity_dir, pt_v3(1, 0, 0)));
	/* a limit object overrides only the fields it names */
	assert_int_equal(j[0].limit, PT_LIMIT_CONE);
	assert_true(j[0].limit_angle == (float)(45.0 * (3.14159265358979323846 / 180.0)));
	assert_int_equal(j[1].limit, PT_LIMIT_CONE);
	assert_true(j[1].limit_angle == (float)(3.14159265358979323846 / 2.0));
	assert_int_equal(j[2].limit, PT_LIMIT_HINGE);
	assert_true(j[2].limit_angle == j[0].limit_angle);
	assert_true(v3_same(j[2].limit_axis, pt_v3(0, 0, 1)));
	/* the second strand sees only the top level */
	assert_true(d->strands[1].joints[0].stiffness == 2.0f);
	assert_true(d->strands[1].joints[0].gravity_power == 0.5f);
	tdef_free(d);
}

static void test_springbone_defaults_reach_default_strands(void **state)
{
	(void)state;
	pt_instance_def *d = parse_ok("{\"springbone\": {\"stiffness\": 3, \"hit_radius\": 0}}");
	assert_int_equal(d->strand_count, 1);
	for (int i = 0; i < d->strands[0].points - 1; i++) {
		assert_true(d->strands[0].joints[i].stiffness == 3.0f);
		assert_true(d->strands[0].joints[i].hit_radius == 0.0f);
	}
	tdef_free(d);
}

static void test_integral_reals_are_integers(void **state)
{
	(void)state;
	pt_instance_def *d = parse_ok("{\"substeps\": 4.0, \"strands\": [{\"points\": 6.0}]}");
	assert_int_equal(d->substeps, 4);
	assert_int_equal(d->strands[0].points, 6);
	tdef_free(d);
}

static void test_fixture_instance_parses(void **state)
{
	(void)state;
	pt_error e;
	json_t *doc = cli_read_json_file("tests/fixtures/vrm/basic_shake.json", &e);
	if (!doc)
		fail_msg("%s", e.message);
	pt_instance_def *d = tdef_new();
	assert_int_equal(pt_schema_parse(json_object_get(doc, "instance"), d, NULL, &e), 0);
	assert_int_equal(d->solver, PT_SOLVER_SPRINGBONE);
	assert_true(d->prewarm_s == 0.0f);
	assert_int_equal(d->strands[0].points, 8);
	assert_true(d->strands[0].joints[6].drag_force == 0.4f);
	assert_int_equal(d->collider_count, 1);
	json_decref(doc);
	tdef_free(d);
}

/* The example at the top of core/SCHEMA.md is a valid definition. */
static void test_documented_example_parses(void **state)
{
	(void)state;
	FILE *f = fopen("core/SCHEMA.md", "rb");
	static char doc[65536];
	assert_non_null(f);
	size_t n = fread(doc, 1, sizeof doc - 1, f);
	fclose(f);
	doc[n] = '\0';
	char *start = strstr(doc, "```json\n");
	assert_non_null(start);
	start += strlen("```json\n");
	char *end = strstr(start, "```");
	assert_non_null(end);
	*end = '\0';
	pt_instance_def *d = parse_ok(start);
	assert_string_equal(d->name, "alice");
	assert_int_equal(d->strands[0].collider_n, 2);
	assert_int_equal(d->strands[0].collider_list[0], 0);
	assert_int_equal(d->strands[0].collider_list[1], 1);
	assert_true(d->strands[0].joints[10].stiffness == 0.5f);
	assert_true(d->colliders[1].radius_b == 0.04f);
	tdef_free(d);
}

/* --- reading text and files ----------------------------------------------------------- */

/* Core reads no files: the CLI's helper reads, the schema library parses. */
static int load_file(const char *path, pt_instance_def *d, pt_error *e)
{
	json_t *j = cli_read_json_file(path, e);
	int rc = j ? pt_schema_parse(j, d, NULL, e) : -1;
	json_decref(j);
	return rc;
}

static void assert_read_error(const char *text, const char *says)
{
	pt_error e;
	json_t *j = pt_schema_read_buffer(text, strlen(text), &e);
	if (j)
		fail_msg("accepted: %s", text);
	assert_false(e.ok);
	assert_string_equal(e.field, "");
	if (!strstr(e.message, says))
		fail_msg("%s: got '%s', want '%s'", text, e.message, says);
}

static void test_syntax_errors_say_line_and_column(void **state)
{
	(void)state;
	assert_read_error("{\n  \"name\": \"a\",\n}", "line 3, column 1");
	assert_read_error("{\"a\": 1, \"a\": 2}", "duplicate");
	/* JSON has no NaN or infinity: an overflowing number is a syntax error, not inf */
	assert_read_error("{\"prewarm_s\": 1e999}", "line 1");
	assert_read_error("{\"prewarm_s\": 1e999}", "overflow");
	assert_read_error("{\"prewarm_s\": NaN}", "line 1");
	assert_read_error("{\"substeps\": 99999999999999999999999}", "too big");
	assert_read_error("", "line 1");
}

static void test_files(void **state)
{
	(void)state;
	pt_error e;
	pt_instance_def *d = tdef_new();
	char path[] = "/tmp/pt_schema_test_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *text = "{\"name\": \"f\",\n \"strands\": [{\"points\": 3}\n  {}]}\n";
	assert_int_equal(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
	assert_int_equal(load_file(path, d, &e), -1);
	if (!strstr(e.message, "line 3"))
		fail_msg("got '%s'", e.message);
	FILE *f = fopen(path, "w");
	fputs("{\"name\": \"f\", \"strands\": [{\"points\": 3, \"lenght\": 1}]}", f);
	fclose(f);
	assert_int_equal(load_file(path, d, &e), -1);
	assert_string_equal(e.field, "strands[0].lenght");
	assert_string_equal(e.message, "unknown field");
	f = fopen(path, "w");
	fputs("{\"name\": \"f\", \"strands\": [{\"points\": 3}]}", f);
	fclose(f);
	assert_int_equal(load_file(path, d, &e), 0);
	assert_int_equal(d->strands[0].points, 3);
	unlink(path);
	assert_int_equal(load_file(path, d, &e), -1);
	assert_string_equal(e.message, "cannot open: No such file or directory");
	assert_null(cli_read_json_file(path, NULL)); /* err may be NULL */
	tdef_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_empty_document_is_the_default),
	    cmocka_unit_test(test_body_bones),
	    cmocka_unit_test(test_listed_strand_starts_from_strand_default),
	    cmocka_unit_test(test_every_field_lands_in_its_c_field),
	    cmocka_unit_test(test_collider_list_is_ordered_default_all),
	    cmocka_unit_test(test_joint_values_layer_default_strand_joint),
	    cmocka_unit_test(test_springbone_defaults_reach_default_strands),
	    cmocka_unit_test(test_integral_reals_are_integers),
	    cmocka_unit_test(test_fixture_instance_parses),
	    cmocka_unit_test(test_documented_example_parses),
	    cmocka_unit_test(test_syntax_errors_say_line_and_column),
	    cmocka_unit_test(test_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
