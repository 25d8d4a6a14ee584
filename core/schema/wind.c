/* Room wind as JSON (ponytail/schema.h: pt_schema_wind_parse, pt_schema_wind_dump). */
#include <stdio.h> /* snprintf only */
#include <string.h>

#include "schema_internal.h"

/* The fields each type takes beyond type, direction, strength, turbulence and seed. */
static const char *const shape_keys[PT_WIND_TYPES][4] = {
    [PT_WIND_GLOBAL] = {NULL},
    [PT_WIND_SPHERE] = {"center", "radius", "falloff", NULL},
    [PT_WIND_BOX] = {"center", "size", "falloff", NULL},
};
static const char *const all_keys[] = {"type",   "direction", "strength", "turbulence", "seed",
                                       "center", "radius",    "size",     "falloff",    NULL};
static const char *const type_names[] = {"global", "sphere", "box", NULL};

static int in_list(const char *key, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(key, *list) == 0)
			return 1;
	return 0;
}

static int required(pt_schema_rd *r, const json_t *o, const char *key, const char *what)
{
	if (json_object_get(o, key))
		return 0;
	size_t saved = pt_schema_push_key(r, key);
	pt_schema_fail(r, "required (%s)", what);
	pt_schema_pop(r, saved);
	return -1;
}

static int parse_zone(pt_schema_rd *r, const json_t *o, pt_wind_zone *z)
{
	if (pt_schema_object(r, o) || pt_schema_check_keys(r, o, all_keys, NULL) ||
	    required(r, o, "type", "\"global\", \"sphere\" or \"box\""))
		return -1;
	int type = 0;
	if (pt_schema_get_enum(r, o, "type", type_names, &type))
		return -1;
	*z = pt_wind_zone_default();
	z->type = type;
	const char *key;
	json_t *v;
	json_object_foreach(pt_schema_unconst(o), key, v)
	{
		if (!in_list(key, all_keys + 5) || in_list(key, shape_keys[type]))
			continue;
		size_t saved = pt_schema_push_key(r, key);
		pt_schema_fail(r, "not allowed for type \"%s\"", type_names[type]);
		pt_schema_pop(r, saved);
		return -1;
	}
	if (required(r, o, "direction", "[x, y, z], the way the wind blows") ||
	    required(r, o, "strength", "m/s") ||
	    (type != PT_WIND_GLOBAL && required(r, o, "center", "[x, y, z], world metres")) ||
	    (type == PT_WIND_SPHERE && required(r, o, "radius", "metres")) ||
	    (type == PT_WIND_BOX && required(r, o, "size", "[x, y, z] edge lengths, metres")))
		return -1;
	if (pt_schema_get_vec3(r, o, "direction", &z->direction) ||
	    pt_schema_get_float(r, o, "strength", &z->strength) ||
	    pt_schema_get_float(r, o, "turbulence", &z->turbulence) ||
	    pt_schema_get_vec3(r, o, "center", &z->center) ||
	    pt_schema_get_float(r, o, "radius", &z->radius) ||
	    pt_schema_get_vec3(r, o, "size", &z->size) ||
	    pt_schema_get_float(r, o, "falloff", &z->falloff) ||
	    pt_schema_get_u32(r, o, "seed", &z->seed))
		return -1;
	return 0;
}

int pt_schema_wind_parse(const json_t *obj, pt_wind_zone *zones, int *n, pt_error *err)
{
	pt_error local;
	pt_schema_rd r = {err ? err : &local, "", 0};
	static const char *const keys[] = {"zones", NULL};
	if (pt_schema_object(&r, obj) || pt_schema_check_keys(&r, obj, keys, NULL) ||
	    required(&r, obj, "zones", "an array of zones"))
		return -1;
	const json_t *arr = json_object_get(obj, "zones");
	size_t saved = pt_schema_push_key(&r, "zones");
	if (!json_is_array(arr))
		return pt_schema_fail(&r, "expected an array of zones");
	if (json_array_size(arr) > PT_MAX_WIND_ZONES)
		return pt_schema_fail(&r, "%zu zones; at most %d per room", json_array_size(arr),
		                      (int)PT_MAX_WIND_ZONES);
	pt_wind_zone z[PT_MAX_WIND_ZONES];
	int count = (int)json_array_size(arr);
	for (int i = 0; i < count; i++) {
		size_t at = pt_schema_push_index(&r, (size_t)i);
		if (parse_zone(&r, json_array_get(arr, (size_t)i), &z[i]))
			return -1;
		pt_schema_pop(&r, at);
	}
	pt_schema_pop(&r, saved);
	pt_error v = pt_wind_zones_validate(z, count);
	if (!v.ok) {
		/* core's message starts with the field; the schema's never does */
		size_t fl = strlen(v.field);
		const char *m = strncmp(v.message, v.field, fl) == 0 && v.message[fl] == ':'
		                    ? v.message + fl + 2
		                    : v.message;
		r.err->ok = 0;
		memcpy(r.err->field, v.field, sizeof r.err->field);
		snprintf(r.err->message, sizeof r.err->message, "%s", m);
		return -1;
	}
	memcpy(zones, z, (size_t)count * sizeof *z);
	*n = count;
	r.err->ok = 1;
	r.err->field[0] = r.err->message[0] = '\0';
	return 0;
}

static json_t *vec(pt_vec3 v)
{
	return json_pack("[o,o,o]", pt_schema_real(v.x), pt_schema_real(v.y), pt_schema_real(v.z));
}

json_t *pt_schema_wind_dump(const pt_wind_zone *zones, int n)
{
	json_t *arr = json_array();
	for (int i = 0; arr && i < n; i++) {
		const pt_wind_zone *z = &zones[i];
		json_t *o = json_pack("{s:s,s:o,s:o,s:o,s:I}", "type", pt_wind_type_name(z->type),
		                      "direction", vec(z->direction), "strength",
		                      pt_schema_real(z->strength), "turbulence",
		                      pt_schema_real(z->turbulence), "seed", (json_int_t)z->seed);
		int bad = !o;
		if (o && z->type != PT_WIND_GLOBAL)
			bad = json_object_set_new(o, "center", vec(z->center)) ||
			      (z->type == PT_WIND_SPHERE
			           ? json_object_set_new(o, "radius", pt_schema_real(z->radius))
			           : json_object_set_new(o, "size", vec(z->size))) ||
			      json_object_set_new(o, "falloff", pt_schema_real(z->falloff));
		if (bad)
			json_decref(o);
		if (bad || json_array_append_new(arr, o)) { /* append takes o even on failure */
			json_decref(arr);
			return NULL;
		}
	}
	return arr ? json_pack("{s:o}", "zones", arr) : NULL;
}
