/* The instance definition's lifecycle: init, deep copy, swap, strand count changes, and
 * shallow copies caught. (Leaks and double frees are the sanitizer build's to find.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "testdef.h"

/* The struct itself is small; the joints live in the block it owns. */
static void test_definition_is_small(void **state)
{
	(void)state;
	print_message("sizeof(pt_instance_def) = %zu bytes, sizeof(pt_strand_def) = %zu, joints "
	              "per strand %zu bytes on the heap\n",
	              sizeof(pt_instance_def), sizeof(pt_strand_def),
	              sizeof(pt_joint_def) * (PT_MAX_POINTS - 1));
	assert_true(sizeof(pt_instance_def) < 16 * 1024); /* inline joints: ~270 KB */
}

static void test_init_gives_defaults_and_fini_zeroes(void **state)
{
	(void)state;
	pt_instance_def d;
	memset(&d, 0x5a, sizeof d); /* init ignores what was there */
	tdef_init(&d);
	assert_true(pt_instance_validate(&d).ok);
	assert_int_equal(d.strand_count, 1);
	assert_int_equal(d.strands[0].points, 12);
	assert_true(d.strands[0].joints[PT_MAX_POINTS - 2].drag_force == 0.4f);
	assert_true(d.store.slots < PT_MAX_STRANDS); /* storage for a few strands, not all */
	pt_instance_def_fini(&d);
	assert_null(d.strands);
	assert_int_equal(d.strand_count, 0);
	pt_instance_def_fini(&d); /* a finished (zeroed) definition: a no-op */
	pt_instance_def_fini(NULL);
}

/* A copy is deep: changing either side's joints leaves the other as it was. */
static void test_copy_is_deep(void **state)
{
	(void)state;
	pt_instance_def a, b = {0};
	tdef_init(&a);
	tdef_strands(&a, 3);
	a.strands[2].points = PT_MAX_POINTS;
	a.strands[2].joints[PT_MAX_POINTS - 2].stiffness = 7.0f;
	strcpy(a.name, "a");
	tdef_copy(&b, &a);
	assert_true(pt_instance_validate(&b).ok);
	assert_string_equal(b.name, "a");
	assert_int_equal(b.strand_count, 3);
	assert_ptr_not_equal(b.strands[2].joints, a.strands[2].joints);
	assert_true(b.strands[2].joints[PT_MAX_POINTS - 2].stiffness == 7.0f);
	b.strands[2].joints[0].stiffness = 3.0f;
	a.strands[0].joints[0].stiffness = 4.0f;
	assert_true(a.strands[2].joints[0].stiffness == 1.0f);
	assert_true(b.strands[0].joints[0].stiffness == 1.0f);
	/* into a definition that already has more storage, and onto itself */
	tdef_strands(&a, 1);
	tdef_copy(&b, &a);
	assert_int_equal(b.strand_count, 1);
	assert_true(b.strands[0].joints[0].stiffness == 4.0f);
	assert_true(pt_instance_validate(&b).ok);
	tdef_copy(&b, &b);
	assert_true(pt_instance_validate(&b).ok);
	pt_instance_def_fini(&a);
	pt_instance_def_fini(&b);
}

static void test_swap_keeps_both_valid(void **state)
{
	(void)state;
	pt_instance_def a, b;
	tdef_init(&a);
	tdef_init(&b);
	tdef_strands(&b, 2);
	b.strands[1].joints[3].gravity_power = 2.0f;
	pt_instance_def_swap(&a, &b);
	assert_int_equal(a.strand_count, 2);
	assert_int_equal(b.strand_count, 1);
	assert_true(a.strands[1].joints[3].gravity_power == 2.0f);
	assert_true(pt_instance_validate(&a).ok);
	assert_true(pt_instance_validate(&b).ok);
	pt_instance_def_fini(&a);
	pt_instance_def_fini(&b);
}

/* New strands start from the defaults; strands kept keep their values; shrinking and
 * growing again gives defaults, not what was there before. */
static void test_strand_count_changes(void **state)
{
	(void)state;
	pt_instance_def d;
	tdef_init(&d);
	d.strands[0].points = 5;
	d.strands[0].joints[2].hit_radius = 0.5f;
	tdef_strands(&d, 4);
	assert_int_equal(d.strands[0].points, 5);
	assert_true(d.strands[0].joints[2].hit_radius == 0.5f);
	assert_int_equal(d.strands[3].points, 12);
	assert_true(d.strands[3].joints[2].hit_radius == 0.02f);
	d.strands[3].points = 40;
	tdef_strands(&d, 2);
	tdef_strands(&d, 4);
	assert_int_equal(d.strands[3].points, 12);
	assert_true(pt_instance_validate(&d).ok);
	assert_false(pt_instance_def_set_strand_count(&d, PT_MAX_STRANDS + 1));
	assert_false(pt_instance_def_set_strand_count(&d, -1));
	assert_int_equal(d.strand_count, 4);
	tdef_strands(&d, PT_MAX_STRANDS);
	assert_null(pt_instance_def_add_strand(&d)); /* full */
	tdef_strands(&d, 0);
	pt_strand_def *s = pt_instance_def_add_strand(&d);
	assert_ptr_equal(s, &d.strands[0]);
	assert_int_equal(d.strand_count, 1);
	assert_int_equal(s->points, 12);
	pt_instance_def_fini(&d);
}

/* The copies the type no longer allows are caught by validation (and so by
 * pt_world_create_instance's assert), before any freed joint is read. */
static void test_shallow_copies_are_caught(void **state)
{
	(void)state;
	pt_instance_def *a = tdef_new(), *b = malloc(sizeof *b);
	assert_non_null(b);
	memcpy(b, a, sizeof *a); /* b shares a's joints */
	pt_error e = pt_instance_validate(b);
	assert_false(e.ok);
	assert_non_null(strstr(e.message, "shallow copy"));
	free(b); /* never finished: it owns nothing (pt_instance_def_fini would assert) */

	tdef_strands(a, 2);
	pt_joint_def *own = a->strands[1].joints;
	a->strands[1] = a->strands[0]; /* a strand copied with = */
	e = pt_instance_validate(a);
	assert_false(e.ok);
	assert_string_equal(e.field, "strands[1].joints");
	a->strands[1].joints = own;
	pt_strand_def_copy(&a->strands[1], &a->strands[0]);
	assert_true(pt_instance_validate(a).ok);
	int past = a->store.slots;
	tdef_strands(a, past);
	a->strand_count = past + 1; /* set directly: no storage for the last strand */
	e = pt_instance_validate(a);
	assert_false(e.ok);
	char f[32];
	snprintf(f, sizeof f, "strands[%d].joints", past);
	assert_string_equal(e.field, f);
	tdef_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_definition_is_small),
	    cmocka_unit_test(test_init_gives_defaults_and_fini_zeroes),
	    cmocka_unit_test(test_copy_is_deep),
	    cmocka_unit_test(test_swap_keeps_both_valid),
	    cmocka_unit_test(test_strand_count_changes),
	    cmocka_unit_test(test_shallow_copies_are_caught),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
