/* Colliders. Each shape takes its own set of fields; a field the shape does not use is an
 * error (a "radii" on a sphere is a mistake worth hearing about), and the fields that
 * define the shape are required. */
#include <string.h>

#include "schema_internal.h"

enum {
	F_ATTACH = 1,
	F_CENTER = 2,
	F_RADIUS = 4,
	F_RADII = 8,
	F_A = 16,
	F_B = 32,
	F_RADIUS_B = 64,
	F_POINT = 128,
	F_NORMAL = 256
};

static const struct shape_fields {
	unsigned allowed, required;
} shape_fields[PT_SHAPE_COUNT] = {
    [PT_SHAPE_SPHERE] = {F_ATTACH | F_CENTER | F_RADIUS, F_RADIUS},
    [PT_SHAPE_ELLIPSOID] = {F_ATTACH | F_CENTER | F_RADII, F_RADII},
    [PT_SHAPE_CAPSULE] = {F_ATTACH | F_A | F_B | F_RADIUS | F_RADIUS_B, F_A | F_B | F_RADIUS},
    [PT_SHAPE_PLANE] = {F_ATTACH | F_POINT | F_NORMAL, F_NORMAL},
    [PT_SHAPE_INSIDE_SPHERE] = {F_ATTACH | F_CENTER | F_RADIUS, F_RADIUS},
    [PT_SHAPE_INSIDE_CAPSULE] = {F_ATTACH | F_A | F_B | F_RADIUS, F_A | F_B | F_RADIUS},
};

/* Field names in bit order (bit 0 = "attach"). */
static const char *const field_names[] = {"attach", "center",   "radius", "radii",  "a",
                                          "b",      "radius_b", "point",  "normal", NULL};

static int parse_collider(pt_schema_rd *r, const json_t *o, pt_collider_def *c)
{
	static const char *const keys[] = {"shape", "attach",   "center", "radius", "radii", "a",
	                                   "b",     "radius_b", "point",  "normal", NULL};
	int shape = 0, attach = (int)PT_ATTACH_HEAD;
	if (pt_schema_object(r, o) || pt_schema_check_keys(r, o, keys, NULL))
		return -1;
	if (!json_object_get(o, "shape")) {
		pt_schema_push_key(r, "shape");
		return pt_schema_fail(r, "required: one of \"sphere\", \"ellipsoid\", \"capsule\", "
		                         "\"plane\", \"inside_sphere\", \"inside_capsule\"");
	}
	if (pt_schema_get_enum(r, o, "shape", pt_schema_shape_names, &shape))
		return -1;
	const struct shape_fields *sf = &shape_fields[shape];
	for (int i = 0; field_names[i]; i++) {
		unsigned bit = 1u << i;
		int present = json_object_get(o, field_names[i]) != NULL;
		if (present && !(sf->allowed & bit)) {
			pt_schema_push_key(r, field_names[i]);
			return pt_schema_fail(r, "not a field of shape \"%s\"",
			                      pt_schema_shape_names[shape]);
		}
		if (!present && (sf->required & bit)) {
			pt_schema_push_key(r, field_names[i]);
			return pt_schema_fail(r, "required for shape \"%s\"",
			                      pt_schema_shape_names[shape]);
		}
	}
	memset(c, 0, sizeof *c);
	c->shape = (pt_shape)shape;
	c->normal = pt_v3(0.0f, 1.0f, 0.0f);
	c->radius_b = -1.0f;
	if (pt_schema_get_enum(r, o, "attach", pt_schema_attach_names, &attach) ||
	    pt_schema_get_vec3(r, o, "center", &c->center) ||
	    pt_schema_get_vec3(r, o, "point", &c->center) || /* a plane's point is its centre */
	    pt_schema_get_float(r, o, "radius", &c->radius) ||
	    pt_schema_get_vec3(r, o, "radii", &c->radii) || pt_schema_get_vec3(r, o, "a", &c->a) ||
	    pt_schema_get_vec3(r, o, "b", &c->b) ||
	    pt_schema_get_float(r, o, "radius_b", &c->radius_b) ||
	    pt_schema_get_vec3(r, o, "normal", &c->normal))
		return -1;
	c->attach = (pt_attach)attach;
	return 0;
}

int pt_schema_parse_colliders(pt_schema_rd *r, const json_t *arr, pt_instance_def *def)
{
	size_t n = json_array_size(arr);
	if (!json_is_array(arr))
		return pt_schema_fail(r, "expected an array of collider objects");
	if (n > PT_MAX_COLLIDERS)
		return pt_schema_fail(r, "must hold at most %d colliders, got %zu",
		                      PT_MAX_COLLIDERS, n);
	for (size_t i = 0; i < n; i++) {
		size_t saved = pt_schema_push_index(r, i);
		if (parse_collider(r, json_array_get(arr, i), &def->colliders[i]))
			return -1;
		pt_schema_pop(r, saved);
	}
	def->collider_count = (int)n;
	return 0;
}
