/* server/jutil.c + instdoc.c + driver.c: JSON merge patch (RFC 7386, every example of its
 * appendix A), and PATCH semantics on stored instance documents: a patch merges into the
 * canonical document, arrays replace, null removes, the result is validated as a whole
 * and errors name the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/driver.c"
#include "../../server/instdoc.c"
#include "../../server/interact.c"
#include "../../server/jutil.c"
#include "testdef.h"

static json_t *J(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, JSON_DECODE_ANY, &e);
	if (!j)
		fail_msg("bad test JSON %s: %s", text, e.text);
	return j;
}

static void merge_case(const char *target, const char *patch, const char *want)
{
	json_t *t = J(target), *p = J(patch), *w = J(want);
	json_t *got = jutil_merge_patch(t, p);
	if (!json_equal(got, w)) {
		char *g = json_dumps(got, JSON_ENCODE_ANY);
		fail_msg("%s + %s = %s, want %s", target, patch, g, want);
	}
	/* Neither input is modified. */
	json_t *t2 = J(target);
	assert_true(json_equal(t, t2));
	json_decref(t2);
	json_decref(t), json_decref(p), json_decref(w), json_decref(got);
}

static void rfc7386_appendix_a(void **state)
{
	(void)state;
	merge_case("{\"a\":\"b\"}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
	merge_case("{\"a\":\"b\"}", "{\"b\":\"c\"}", "{\"a\":\"b\",\"b\":\"c\"}");
	merge_case("{\"a\":\"b\"}", "{\"a\":null}", "{}");
	merge_case("{\"a\":\"b\",\"b\":\"c\"}", "{\"a\":null}", "{\"b\":\"c\"}");
	merge_case("{\"a\":[\"b\"]}", "{\"a\":\"c\"}", "{\"a\":\"c\"}");
	merge_case("{\"a\":\"c\"}", "{\"a\":[\"b\"]}", "{\"a\":[\"b\"]}");
	merge_case("{\"a\":{\"b\":\"c\"}}", "{\"a\":{\"b\":\"d\",\"c\":null}}",
	           "{\"a\":{\"b\":\"d\"}}");
	merge_case("{\"a\":[{\"b\":\"c\"}]}", "{\"a\":[1]}", "{\"a\":[1]}");
	merge_case("[\"a\",\"b\"]", "[\"c\",\"d\"]", "[\"c\",\"d\"]");
	merge_case("{\"a\":\"b\"}", "[\"c\"]", "[\"c\"]");
	merge_case("{\"a\":\"foo\"}", "null", "null");
	merge_case("{\"a\":\"foo\"}", "\"bar\"", "\"bar\"");
	merge_case("{\"e\":null}", "{\"a\":1}", "{\"e\":null,\"a\":1}");
	merge_case("[1,2]", "{\"a\":\"b\",\"c\":null}", "{\"a\":\"b\"}");
	merge_case("{}", "{\"a\":{\"bb\":{\"ccc\":null}}}", "{\"a\":{\"bb\":{}}}");
}

static void floats_are_short(void **state)
{
	(void)state;
	json_t *a = json_pack("[o,o,o,o]", jutil_float(0.6f), jutil_float(0.96f),
	                      jutil_float(-9.81f), jutil_float(1e-7f));
	char *s = json_dumps(a, JSON_COMPACT | JSON_REAL_PRECISION(15));
	assert_string_equal(s, "[0.6,0.96,-9.81,1e-7]");
	free(s);
	json_decref(a);
}

/* Stored document of `create` (canonical), then `patch` applied. */
typedef struct doc_t {
	pt_instance_def def;
	driver_t drv;
	char *text;
	pt_error err;
	int rc;
} doc_t;

static char *canonical_of(const char *create)
{
	json_t *j = J(create);
	pt_instance_def *def = tdef_new();
	driver_t drv = {0};
	pt_error e;
	assert_int_equal(instdoc_parse(j, def, &drv, NULL, &e), 0);
	char *text = instdoc_canonical(def, &drv, NULL);
	assert_non_null(text);
	json_decref(j);
	tdef_free(def);
	return text;
}

static doc_t *patched(const char *create, const char *patch)
{
	doc_t *d = calloc(1, sizeof *d);
	assert_non_null(d);
	tdef_init(&d->def);
	char *stored = canonical_of(create);
	json_t *p = J(patch);
	d->rc = instdoc_patch(stored, p, &d->def, &d->drv, NULL, &d->text, &d->err);
	json_decref(p);
	free(stored);
	return d;
}

static void doc_free(doc_t *d)
{
	free(d->text);
	pt_instance_def_fini(&d->def);
	free(d);
}

static void patch_merges_one_field(void **state)
{
	(void)state;
	const char *create =
	    "{\"name\":\"a\",\"room\":\"r\",\"strands\":[{\"points\":8},{\"points\":5}]}";
	doc_t *d = patched(create, "{\"verlet\":{\"damping\":0.9}}");
	assert_int_equal(d->rc, 0);
	assert_true(d->def.verlet.damping == 0.9f);
	assert_int_equal(d->def.verlet.iterations, 3); /* siblings kept */
	assert_int_equal(d->def.strand_count, 2);      /* the rest of the document kept */
	assert_int_equal(d->def.strands[1].points, 5);
	assert_string_equal(d->def.name, "a");
	/* Only damping differs from the stored document. */
	char *stored = canonical_of(create);
	json_t *before = J(stored), *after = J(d->text);
	free(stored);
	json_object_set_new(json_object_get(before, "verlet"), "damping", json_real(0.9));
	assert_true(json_equal(before, after));
	json_decref(before), json_decref(after);
	doc_free(d);
}

static void patch_arrays_replace_and_null_removes(void **state)
{
	(void)state;
	doc_t *d = patched(
	    "{\"strands\":[{\"points\":8},{\"points\":5}],\"driver\":{\"motion\":\"shake\"}}",
	    "{\"strands\":[{\"points\":4}],\"driver\":null}");
	assert_int_equal(d->rc, 0);
	assert_int_equal(d->def.strand_count, 1);
	assert_int_equal(d->def.strands[0].points, 4);
	assert_int_equal(d->drv.enabled, 0);
	assert_null(strstr(d->text, "driver"));
	doc_free(d);

	d = patched("{}", "{\"driver\":{\"motion\":\"nod\",\"amplitude\":20,\"period\":0.5}}");
	assert_int_equal(d->rc, 0);
	assert_int_equal(d->drv.enabled, 1);
	assert_int_equal(d->drv.motion.kind, PT_MOTION_NOD);
	assert_true(d->drv.motion.amplitude == 20.0f);
	assert_non_null(
	    strstr(d->text, "\"driver\":{\"motion\":\"nod\",\"amplitude\":20.0,\"period\":0.5"));
	doc_free(d);
}

static void patch_errors_name_the_field(void **state)
{
	(void)state;
	static const struct {
		const char *patch, *field;
	} cases[] = {
	    {"{\"strands\":[{\"points\":100}]}", "strands[0].points"},
	    {"{\"verlet\":{\"dampingg\":1}}", "verlet.dampingg"},
	    {"{\"verlet\":{\"damping\":\"x\"}}", "verlet.damping"},
	    {"{\"gravity\":[0,-200,0]}", "gravity"},
	    {"{\"colour\":\"red\"}", "colour"},
	    {"{\"driver\":{\"motion\":\"fly\"}}", "driver.motion"},
	    {"{\"driver\":{\"motion\":\"shake\",\"period\":0}}", "driver.period"},
	    {"{\"driver\":{\"motion\":\"shake\",\"amplitude\":500}}", "driver.amplitude"},
	    {"{\"driver\":{\"motion\":\"jump\",\"amplitude\":60}}", "driver.amplitude"},
	    {"{\"driver\":{\"motion\":\"jog\",\"amplitude\":0.5}}", "driver.amplitude"},
	    {"{\"driver\":{\"motion\":\"stress\",\"amplitude\":3}}", "driver.amplitude"},
	    {"{\"driver\":{\"motion\":\"circle\",\"position\":[0,1]}}", "driver.position"},
	    {"{\"driver\":{\"motion\":\"still\",\"speed\":1}}", "driver.speed"},
	    {"{\"driver\":7}", "driver"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		doc_t *d = patched("{\"name\":\"n\"}", cases[i].patch);
		if (d->rc != -1 || strcmp(d->err.field, cases[i].field) != 0)
			fail_msg("%s: rc %d field '%s' (%s), want field '%s'", cases[i].patch,
			         d->rc, d->err.field, d->err.message, cases[i].field);
		assert_null(d->text);
		doc_free(d);
	}
}

/* The canonical form is a fixed point: parsing it and writing it again changes nothing. */
static void canonical_is_stable(void **state)
{
	(void)state;
	char *a = canonical_of(
	    "{\"name\":\"x\",\"solver\":\"springbone\",\"strands\":[{\"points\":6,"
	    "\"segment_length\":0.05}],\"driver\":{\"motion\":\"circle\",\"amplitude\":0.3,"
	    "\"position\":[1,1.5,-2]}}");
	char *b = canonical_of(a);
	assert_string_equal(a, b);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(rfc7386_appendix_a),
	    cmocka_unit_test(floats_are_short),
	    cmocka_unit_test(patch_merges_one_field),
	    cmocka_unit_test(patch_arrays_replace_and_null_removes),
	    cmocka_unit_test(patch_errors_name_the_field),
	    cmocka_unit_test(canonical_is_stable),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
