/* Private to core/schema: a JSON reader that knows the path of the value it is reading,
 * so every error names the field ("strands[2].springbone.limit[0].angle_deg").
 *
 * Convention: every reader returns 0 on success and -1 after filling the error; callers
 * return -1 at once, so the first error wins and nothing later overwrites it.
 */
#ifndef PT_SCHEMA_INTERNAL_H
#define PT_SCHEMA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ponytail/instance.h"
#include "ponytail/schema.h"

#if defined(__GNUC__)
#define PT_SCHEMA_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PT_SCHEMA_PRINTF(f, a)
#endif

#define PT_SCHEMA_PI 3.14159265358979323846

/* Radians (C) <-> degrees (JSON). Parse and dump use these two exact expressions so that
 * the dumped decimal reads back to the same float. */
static inline float pt_schema_deg_to_rad(double deg)
{
	return (float)(deg * (PT_SCHEMA_PI / 180.0));
}
static inline double pt_schema_rad_to_deg(float rad)
{
	return (double)rad * (180.0 / PT_SCHEMA_PI);
}

typedef struct pt_schema_rd {
	pt_error *err;
	char path[sizeof(((pt_error *)0)->field)];
	size_t len; /* strlen(path); may exceed the buffer when a path is truncated */
} pt_schema_rd;

/* dump.c: f as the shortest decimal that reads back to it (a new reference, NULL out of
 * memory). */
json_t *pt_schema_real(float f);

/* Path building: push returns the previous length, pop restores it. */
size_t pt_schema_push_key(pt_schema_rd *r, const char *key);
size_t pt_schema_push_index(pt_schema_rd *r, size_t i);
void pt_schema_pop(pt_schema_rd *r, size_t saved);

/* Sets err (field = current path) and returns -1. */
int pt_schema_fail(pt_schema_rd *r, const char *fmt, ...) PT_SCHEMA_PRINTF(2, 3);

/* Fails with "unknown field" (plus a did-you-mean) for the first key of `obj` that is in
 * neither NULL-ended list (`extra` may be NULL). */
int pt_schema_check_keys(pt_schema_rd *r, const json_t *obj, const char *const *known,
                         const char *const *extra);

/* Value readers: check the type of `v` (the value at the current path) and convert. */
int pt_schema_num(pt_schema_rd *r, const json_t *v, double *out);
int pt_schema_float(pt_schema_rd *r, const json_t *v, float *out);
int pt_schema_int(pt_schema_rd *r, const json_t *v, long long lo, long long hi, long long *out);
int pt_schema_bool(pt_schema_rd *r, const json_t *v, int *out);
int pt_schema_vec3(pt_schema_rd *r, const json_t *v, pt_vec3 *out);
int pt_schema_enum(pt_schema_rd *r, const json_t *v, const char *const *names, int *out);
int pt_schema_string(pt_schema_rd *r, const json_t *v, char *buf, size_t cap);
int pt_schema_object(pt_schema_rd *r, const json_t *v);

/* Keyed readers: a missing key leaves *out unchanged and succeeds. */
int pt_schema_get_float(pt_schema_rd *r, const json_t *obj, const char *key, float *out);
int pt_schema_get_int(pt_schema_rd *r, const json_t *obj, const char *key, int lo, int hi,
                      int *out);
int pt_schema_get_u32(pt_schema_rd *r, const json_t *obj, const char *key, uint32_t *out);
int pt_schema_get_bool(pt_schema_rd *r, const json_t *obj, const char *key, int *out);
int pt_schema_get_vec3(pt_schema_rd *r, const json_t *obj, const char *key, pt_vec3 *out);
int pt_schema_get_enum(pt_schema_rd *r, const json_t *obj, const char *key,
                       const char *const *names, int *out);
int pt_schema_get_string(pt_schema_rd *r, const json_t *obj, const char *key, char *buf,
                         size_t cap);
/* *out = the object at key (borrowed) or NULL when absent; fails when not an object. */
int pt_schema_get_object(pt_schema_rd *r, const json_t *obj, const char *key, const json_t **out);

/* jansson's iteration API takes non-const pointers although it only reads. */
static inline json_t *pt_schema_unconst(const json_t *v)
{
	return (json_t *)(uintptr_t)v;
}

/* Enum names, indexed by the C enum value, NULL-ended. */
extern const char *const pt_schema_solver_names[];
extern const char *const pt_schema_form_names[];
extern const char *const pt_schema_center_names[];
extern const char *const pt_schema_rate_names[];
extern const char *const pt_schema_length_names[];
extern const char *const pt_schema_shape_names[];
extern const char *const pt_schema_attach_names[];
extern const char *const pt_schema_teleport_names[];
extern const char *const pt_schema_stretch_names[];
extern const char *const pt_schema_limit_names[];

/* Strand and collider parts of pt_schema_parse (parse_strand.c, parse_collider.c).
 * `base` holds the top-level springbone joint defaults. parse_strands returns -2 (err
 * set) when out of memory: it sizes def's strands. */
int pt_schema_parse_strands(pt_schema_rd *r, const json_t *arr, pt_joint_def base,
                            pt_instance_def *def);
int pt_schema_parse_colliders(pt_schema_rd *r, const json_t *arr, pt_instance_def *def);
int pt_schema_parse_bones(pt_schema_rd *r, const json_t *obj, pt_instance_def *def);
int pt_schema_parse_joint_object(pt_schema_rd *r, const json_t *obj, pt_joint_def *j);
int pt_schema_parse_limit(pt_schema_rd *r, const json_t *v, pt_joint_def *j);

/* Rewrites a field name from pt_instance_validate() ("strands[0].springbone.stiffness[3]")
 * into the JSON path the user wrote, looking at `doc` to see where a value came from. */
void pt_schema_field_from_core(const json_t *doc, const char *core_field, char *out, size_t cap);

/* Core's message without a leading "<core_field>: " (the field is reported separately). */
void pt_schema_message_from_core(const char *core_field, const char *msg, char *out, size_t cap);

#endif
