/* Typed JSON readers that name the field on every error (see schema_internal.h). */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "schema_internal.h"

const char *const pt_schema_solver_names[] = {"verlet", "springbone", NULL};
const char *const pt_schema_form_names[] = {"vrm", "pull", NULL};
const char *const pt_schema_center_names[] = {"world", "head", NULL};
const char *const pt_schema_rate_names[] = {"frame", "substep", NULL};
const char *const pt_schema_length_names[] = {"rest", "three-vrm", NULL};
const char *const pt_schema_shape_names[] = {"sphere",        "ellipsoid",      "capsule", "plane",
                                             "inside_sphere", "inside_capsule", NULL};
const char *const pt_schema_attach_names[] = {"head", "world", NULL};
const char *const pt_schema_teleport_names[] = {"keep", "reset", NULL};
const char *const pt_schema_stretch_names[] = {"exact", "nonlinear", NULL};
const char *const pt_schema_limit_names[] = {"none", "cone", "hinge", NULL};

static void append(pt_schema_rd *r, const char *s)
{
	size_t n = strlen(s);
	if (r->len < sizeof r->path) {
		size_t room = sizeof r->path - 1 - r->len;
		size_t k = n < room ? n : room;
		memcpy(r->path + r->len, s, k);
		r->path[r->len + k] = '\0';
	}
	r->len += n;
}

size_t pt_schema_push_key(pt_schema_rd *r, const char *key)
{
	size_t saved = r->len;
	if (r->len > 0)
		append(r, ".");
	append(r, key);
	return saved;
}

size_t pt_schema_push_index(pt_schema_rd *r, size_t i)
{
	size_t saved = r->len;
	char buf[32];
	snprintf(buf, sizeof buf, "[%zu]", i);
	append(r, buf);
	return saved;
}

void pt_schema_pop(pt_schema_rd *r, size_t saved)
{
	r->len = saved;
	if (saved < sizeof r->path)
		r->path[saved] = '\0';
}

int pt_schema_fail(pt_schema_rd *r, const char *fmt, ...)
{
	if (!r->err)
		return -1;
	va_list ap;
	r->err->ok = 0;
	snprintf(r->err->field, sizeof r->err->field, "%s", r->path);
	va_start(ap, fmt);
	vsnprintf(r->err->message, sizeof r->err->message, fmt, ap);
	va_end(ap);
	return -1;
}

/* Levenshtein distance, capped: only small distances matter for a suggestion. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t row[64];
	if (la >= 64 || lb >= 64)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static int in_list(const char *key, const char *const *list)
{
	for (; list && *list; list++)
		if (strcmp(key, *list) == 0)
			return 1;
	return 0;
}

int pt_schema_check_keys(pt_schema_rd *r, const json_t *obj, const char *const *known,
                         const char *const *extra)
{
	const char *key;
	json_t *v;
	json_object_foreach(pt_schema_unconst(obj), key, v)
	{
		if (in_list(key, known) || in_list(key, extra))
			continue;
		const char *near = NULL;
		size_t best = 3; /* suggest only within two edits */
		for (const char *const *k = known; *k; k++) {
			size_t d = edit_distance(key, *k);
			if (d < best) {
				best = d;
				near = *k;
			}
		}
		pt_schema_push_key(r, key);
		if (near)
			return pt_schema_fail(r, "unknown field (did you mean \"%s\"?)", near);
		return pt_schema_fail(r, "unknown field");
	}
	return 0;
}

int pt_schema_num(pt_schema_rd *r, const json_t *v, double *out)
{
	if (!json_is_number(v))
		return pt_schema_fail(r, "expected a number");
	*out = json_number_value(v);
	return 0;
}

int pt_schema_float(pt_schema_rd *r, const json_t *v, float *out)
{
	double d;
	if (pt_schema_num(r, v, &d))
		return -1;
	/* Converting a double beyond FLT_MAX to float is undefined behaviour in C. */
	if (!isfinite(d) || fabs(d) > FLT_MAX)
		return pt_schema_fail(r, "%g is out of range (beyond a 32-bit float)", d);
	*out = (float)d;
	return 0;
}

int pt_schema_int(pt_schema_rd *r, const json_t *v, long long lo, long long hi, long long *out)
{
	long long x;
	if (json_is_integer(v)) {
		x = json_integer_value(v);
	} else if (json_is_real(v)) {
		/* Tolerate 4.0 (some encoders write every number as a real), nothing else. */
		double d = json_real_value(v);
		if (d != floor(d) || fabs(d) > 9.0e15)
			return pt_schema_fail(r, "expected an integer, got %g", d);
		x = (long long)d;
	} else {
		return pt_schema_fail(r, "expected an integer");
	}
	if (x < lo || x > hi)
		return pt_schema_fail(r, "must be an integer in [%lld, %lld], got %lld", lo, hi, x);
	*out = x;
	return 0;
}

int pt_schema_bool(pt_schema_rd *r, const json_t *v, int *out)
{
	if (!json_is_boolean(v))
		return pt_schema_fail(r, "expected true or false");
	*out = json_is_true(v);
	return 0;
}

int pt_schema_vec3(pt_schema_rd *r, const json_t *v, pt_vec3 *out)
{
	float c[3];
	if (!json_is_array(v) || json_array_size(v) != 3)
		return pt_schema_fail(r, "expected an array of 3 numbers [x, y, z]");
	for (size_t i = 0; i < 3; i++) {
		size_t saved = pt_schema_push_index(r, i);
		if (pt_schema_float(r, json_array_get(v, i), &c[i]))
			return -1;
		pt_schema_pop(r, saved);
	}
	*out = pt_v3(c[0], c[1], c[2]);
	return 0;
}

int pt_schema_enum(pt_schema_rd *r, const json_t *v, const char *const *names, int *out)
{
	char allowed[120] = "";
	size_t used = 0;
	if (json_is_string(v)) {
		for (int i = 0; names[i]; i++) {
			if (strcmp(json_string_value(v), names[i]) == 0) {
				*out = i;
				return 0;
			}
		}
	}
	for (int i = 0; names[i] && used < sizeof allowed; i++) {
		int n = snprintf(allowed + used, sizeof allowed - used, "%s\"%s\"", i ? ", " : "",
		                 names[i]);
		used += n > 0 ? (size_t)n : 0;
	}
	return pt_schema_fail(r, "expected one of %s", allowed);
}

int pt_schema_string(pt_schema_rd *r, const json_t *v, char *buf, size_t cap)
{
	if (!json_is_string(v))
		return pt_schema_fail(r, "expected a string");
	size_t n = json_string_length(v);
	if (n >= cap)
		return pt_schema_fail(r, "must be at most %zu bytes, got %zu", cap - 1, n);
	if (memchr(json_string_value(v), '\0', n))
		return pt_schema_fail(r, "must not contain NUL characters");
	memcpy(buf, json_string_value(v), n + 1);
	return 0;
}

int pt_schema_object(pt_schema_rd *r, const json_t *v)
{
	if (!json_is_object(v))
		return pt_schema_fail(r, "expected an object");
	return 0;
}

/* The keyed readers share one shape: look up, push the key, read, pop. */
#define KEYED(obj, key, call)                                                                      \
	do {                                                                                       \
		const json_t *v_ = json_object_get(obj, key);                                      \
		if (!v_)                                                                           \
			return 0;                                                                  \
		size_t saved_ = pt_schema_push_key(r, key);                                        \
		if (call)                                                                          \
			return -1;                                                                 \
		pt_schema_pop(r, saved_);                                                          \
		return 0;                                                                          \
	} while (0)

int pt_schema_get_float(pt_schema_rd *r, const json_t *obj, const char *key, float *out)
{
	KEYED(obj, key, pt_schema_float(r, v_, out));
}

static int int_into(pt_schema_rd *r, const json_t *v, int lo, int hi, int *out)
{
	long long x;
	if (pt_schema_int(r, v, lo, hi, &x))
		return -1;
	*out = (int)x;
	return 0;
}

int pt_schema_get_int(pt_schema_rd *r, const json_t *obj, const char *key, int lo, int hi, int *out)
{
	KEYED(obj, key, int_into(r, v_, lo, hi, out));
}

static int u32_into(pt_schema_rd *r, const json_t *v, uint32_t *out)
{
	long long x;
	if (pt_schema_int(r, v, 0, 4294967295LL, &x))
		return -1;
	*out = (uint32_t)x;
	return 0;
}

int pt_schema_get_u32(pt_schema_rd *r, const json_t *obj, const char *key, uint32_t *out)
{
	KEYED(obj, key, u32_into(r, v_, out));
}

int pt_schema_get_bool(pt_schema_rd *r, const json_t *obj, const char *key, int *out)
{
	KEYED(obj, key, pt_schema_bool(r, v_, out));
}

int pt_schema_get_vec3(pt_schema_rd *r, const json_t *obj, const char *key, pt_vec3 *out)
{
	KEYED(obj, key, pt_schema_vec3(r, v_, out));
}

int pt_schema_get_enum(pt_schema_rd *r, const json_t *obj, const char *key,
                       const char *const *names, int *out)
{
	KEYED(obj, key, pt_schema_enum(r, v_, names, out));
}

int pt_schema_get_string(pt_schema_rd *r, const json_t *obj, const char *key, char *buf, size_t cap)
{
	KEYED(obj, key, pt_schema_string(r, v_, buf, cap));
}

int pt_schema_get_object(pt_schema_rd *r, const json_t *obj, const char *key, const json_t **out)
{
	*out = NULL;
	const json_t *v = json_object_get(obj, key);
	if (!v)
		return 0;
	size_t saved = pt_schema_push_key(r, key);
	if (pt_schema_object(r, v))
		return -1;
	pt_schema_pop(r, saved);
	*out = v;
	return 0;
}
