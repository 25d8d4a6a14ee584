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

/* "attach": "head", "world" or a body bone's name (PT_ATTACH_BONE). */
static int parse_attach(pt_schema_rd *r, const json_t *o, pt_collider_def *c)
{
	const json_t *v = json_object_get(o, "attach");
	if (!v)
		return 0;
	const char *s = json_is_string(v) ? json_string_value(v) : NULL;
	int bone = pt_bone_from_name(s);
	if (s && strcmp(s, "head") == 0)
		c->attach = PT_ATTACH_HEAD;
	else if (s && strcmp(s, "world") == 0)
		c->attach = PT_ATTACH_WORLD;
	else if (bone >= 0)
		c->attach = PT_ATTACH_BONE, c->bone = (pt_bone)bone;
	else {
		pt_schema_push_key(r, "attach");
		return pt_schema_fail(r, "expected " PT_ATTACH_ALLOWED);
	}
	return 0;
}

/* [x, y, z, w]: four numbers (the range is core's). */
static int parse_quat(pt_schema_rd *r, const json_t *v, pt_quat *q)
{
	float f[4];
	if (!json_is_array(v) || json_array_size(v) != 4)
		return pt_schema_fail(r, "expected [x, y, z, w], four numbers");
	for (size_t i = 0; i < 4; i++) {
		size_t saved = pt_schema_push_index(r, i);
		if (pt_schema_float(r, json_array_get(v, i), &f[i]))
			return -1;
		pt_schema_pop(r, saved);
	}
	*q = (pt_quat){f[0], f[1], f[2], f[3]};
	return 0;
}

/* "bones": {"chest": {"position": [x, y, z], "rotation": [x, y, z, w]}, ...}, the rest
 * poses (head-local) of the bones colliders attach to. Both fields are required. */
int pt_schema_parse_bones(pt_schema_rd *r, const json_t *obj, pt_instance_def *def)
{
	static const char *const keys[] = {"position", "rotation", NULL};
	const char *name;
	const json_t *v;
	if (pt_schema_object(r, obj))
		return -1;
	if (json_object_size(obj) > PT_MAX_BONES)
		return pt_schema_fail(r, "must hold at most %d bones, got %zu", PT_MAX_BONES,
		                      json_object_size(obj));
	def->bone_count = 0;
	json_object_foreach(pt_schema_unconst(obj), name, v)
	{
		size_t saved = pt_schema_push_key(r, name);
		int bone = pt_bone_from_name(name);
		if (bone < 0)
			return pt_schema_fail(r, "not a body bone: expected a VRM bone other than "
			                         "the head: hips spine chest upper_chest neck jaw "
			                         "{left,right}_{shoulder upper_arm ...} (core/SCHEMA.md)");
		pt_bone_def *b = &def->bones[def->bone_count++];
		b->bone = (pt_bone)bone;
		if (pt_schema_object(r, v) || pt_schema_check_keys(r, v, keys, NULL))
			return -1;
		for (int k = 0; k < 2; k++) {
			if (!json_object_get(v, keys[k])) {
				pt_schema_push_key(r, keys[k]);
				return pt_schema_fail(r, k ? "required: [x, y, z, w], head-local"
				                           : "required: [x, y, z] in metres, head-local");
			}
		}
		if (pt_schema_get_vec3(r, v, "position", &b->position))
			return -1;
		size_t s2 = pt_schema_push_key(r, "rotation");
		if (parse_quat(r, json_object_get(v, "rotation"), &b->rotation))
			return -1;
		pt_schema_pop(r, s2);
		pt_schema_pop(r, saved);
	}
	return 0;
}

static int parse_collider(pt_schema_rd *r, const json_t *o, pt_collider_def *c)
{
	static const char *const keys[] = {"shape", "attach",   "center", "radius", "radii", "a",
	                                   "b",     "radius_b", "point",  "normal", NULL};
	int shape = 0;
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
	c->attach = PT_ATTACH_HEAD;
	if (parse_attach(r, o, c) || pt_schema_get_vec3(r, o, "center", &c->center) ||
	    pt_schema_get_vec3(r, o, "point", &c->center) || /* a plane's point is its centre */
	    pt_schema_get_float(r, o, "radius", &c->radius) ||
	    pt_schema_get_vec3(r, o, "radii", &c->radii) || pt_schema_get_vec3(r, o, "a", &c->a) ||
	    pt_schema_get_vec3(r, o, "b", &c->b) ||
	    pt_schema_get_float(r, o, "radius_b", &c->radius_b) ||
	    pt_schema_get_vec3(r, o, "normal", &c->normal))
		return -1;
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
