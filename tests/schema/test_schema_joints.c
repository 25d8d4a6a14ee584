/* Joint names ("joints": one bone name per point, the root bone first; C root_joint and
 * joints[j].name): what the schema reads lands in the right C fields, dumps write them
 * back in point order, core's validation refuses names a C caller could set but JSON
 * cannot carry (unterminated, not UTF-8), and a rename is not a topology change. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>

#include "ponytail/world.h"
#include "schema_test.h"

static const char *const three =
    "{\"strands\": [{\"rest\": [[0, 0, -0.1], [0, -0.05, -0.11], [0, -0.09, -0.13]],"
    " \"anchor_bone\": \"Head\", \"joints\": [\"J_Sec_Hair1_01\", \"J_Sec_Hair1_02\", \"\"]}]}";

static void test_names_land_per_point(void **state)
{
	(void)state;
	pt_instance_def *d = malloc(sizeof *d);
	pt_error e;
	assert_int_equal(parse_text(three, d, NULL, &e), 0);
	const pt_strand_def *s = &d->strands[0];
	assert_int_equal(s->points, 3);
	assert_string_equal(s->root_joint, "J_Sec_Hair1_01"); /* point 0 */
	assert_string_equal(s->joints[0].name, "J_Sec_Hair1_02"); /* point 1 */
	assert_string_equal(s->joints[1].name, "");              /* point 2: no bone */
	json_t *j = pt_schema_dump(d);
	const json_t *names = json_object_get(json_array_get(json_object_get(j, "strands"), 0),
	                                      "joints");
	assert_int_equal(json_array_size(names), 3);
	assert_string_equal(json_string_value(json_array_get(names, 0)), "J_Sec_Hair1_01");
	assert_string_equal(json_string_value(json_array_get(names, 1)), "J_Sec_Hair1_02");
	assert_string_equal(json_string_value(json_array_get(names, 2)), "");
	json_decref(j);
	free(d);
}

static void test_unnamed_strands_dump_no_joints(void **state)
{
	(void)state;
	pt_instance_def *d = malloc(sizeof *d);
	*d = pt_instance_def_default();
	json_t *j = pt_schema_dump(d);
	assert_null(json_object_get(json_array_get(json_object_get(j, "strands"), 0), "joints"));
	json_decref(j);
	/* one named point is enough to write all of them, the others as "" */
	strcpy(d->strands[0].joints[10].name, "tip");
	j = pt_schema_dump(d);
	const json_t *names = json_object_get(json_array_get(json_object_get(j, "strands"), 0),
	                                      "joints");
	assert_int_equal(json_array_size(names), 12);
	assert_string_equal(json_string_value(json_array_get(names, 0)), "");
	assert_string_equal(json_string_value(json_array_get(names, 11)), "tip");
	json_decref(j);
	free(d);
}

static void expect_invalid(const pt_instance_def *d, const char *field, const char *says)
{
	pt_error v = pt_instance_validate(d);
	assert_false(v.ok);
	assert_string_equal(v.field, field);
	if (!strstr(v.message, says))
		fail_msg("%s: \"%s\" does not say \"%s\"", v.field, v.message, says);
}

static void test_core_refuses_bad_names(void **state)
{
	(void)state;
	static const char *const bad[] = {
	    "\xff",             /* not a UTF-8 byte */
	    "J_\xc3",           /* cut sequence */
	    "\xc0\xaf",         /* overlong '/' */
	    "\xed\xa0\x80",     /* a surrogate */
	    "\xf4\x90\x80\x80", /* past U+10FFFF */
	    "a\x80z",           /* a stray continuation byte */
	};
	pt_instance_def *d = malloc(sizeof *d);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		*d = pt_instance_def_default();
		strcpy(d->strands[0].joints[4].name, bad[i]);
		expect_invalid(d, "strands[0].joints[5]", "not valid UTF-8");
		*d = pt_instance_def_default();
		strcpy(d->strands[0].root_joint, bad[i]);
		expect_invalid(d, "strands[0].joints[0]", "not valid UTF-8");
	}
	*d = pt_instance_def_default();
	memset(d->strands[0].joints[0].name, 'a', PT_NAME_MAX); /* no NUL */
	expect_invalid(d, "strands[0].joints[1]", "longer than 63 bytes");
	/* the good ones: 4-byte sequences, the largest code point, exactly 63 bytes */
	*d = pt_instance_def_default();
	strcpy(d->strands[0].root_joint, "\xf0\x9f\x92\x87\xf4\x8f\xbf\xbf\xe9\xab\xaa");
	memset(d->strands[0].joints[0].name, 'b', PT_NAME_MAX - 1);
	d->strands[0].joints[0].name[PT_NAME_MAX - 1] = '\0';
	assert_true(pt_instance_validate(d).ok);
	/* names past the last point are not looked at */
	strcpy(d->strands[0].joints[20].name, "\xff");
	assert_true(pt_instance_validate(d).ok);
	free(d);
}

/* Renaming the bones keeps the instance's motion: names are not topology. */
static void test_rename_keeps_motion(void **state)
{
	(void)state;
	pt_instance_def *d = malloc(sizeof *d);
	pt_error e;
	assert_int_equal(parse_text(three, d, NULL, &e), 0);
	d->solver = PT_SOLVER_SPRINGBONE;
	d->prewarm_s = 0;
	pt_world *w = pt_world_create(NULL);
	pt_pose head = {{0, 1.5f, 0}, {0, 0, 0, 1}};
	pt_id id = pt_world_create_instance(w, d, head);
	head.p.x = 0.2f;
	for (int k = 0; k < 10; k++) {
		pt_world_set_head(w, id, head);
		pt_world_step(w, 1.0f / 60.0f, 4);
	}
	pt_vec3 before[3], after[3];
	pt_world_read_points(w, id, before, 3);
	strcpy(d->strands[0].root_joint, "renamed");
	strcpy(d->strands[0].joints[1].name, "tip");
	assert_int_equal(pt_world_update_instance(w, id, d), 1);
	pt_world_read_points(w, id, after, 3);
	assert_memory_equal(before, after, sizeof before);
	pt_world_destroy(w);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names_land_per_point),
	    cmocka_unit_test(test_unnamed_strands_dump_no_joints),
	    cmocka_unit_test(test_core_refuses_bad_names),
	    cmocka_unit_test(test_rename_keeps_motion),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
