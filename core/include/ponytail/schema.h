/* Ponytail schema: the JSON form of pt_instance_def (core/SCHEMA.md).
 *
 * The field-by-field reference is core/SCHEMA.md. JSON names are the C field names of
 * ponytail/instance.h, with a few grouped into objects ("mass": {"root", "tip"},
 * "verlet.stretch": {"mode", "stiffness", "max_strain"}, "limit": {"type", "angle_deg",
 * "axis"}) and angles in degrees where C holds radians (limit.angle_deg).
 *
 * Errors come back in a pt_error (ponytail/instance.h): `field` is the JSON path of the
 * offending value ("strands[0].springbone.stiffness[3]", "" for the document itself) and
 * `message` says what was expected ("unknown field", "expected a number", "must be in
 * [0, 1]"). Range checks are core's pt_instance_validate(); this module adds everything
 * JSON-level (types, enums, unknown fields, array lengths) and renames core's field names
 * to the JSON paths a user wrote.
 *
 * Built on jansson (libpt_schema.a; link -ljansson), but this header does not include it:
 * core/include stays free of I/O libraries (the core-deps-check rule), so json_t is
 * declared here the way jansson declares it. No global state: any thread may call.
 */
#ifndef PONYTAIL_SCHEMA_H
#define PONYTAIL_SCHEMA_H

#include <stddef.h>

#include "ponytail/instance.h"
#include "ponytail/wind.h"

typedef struct json_t json_t; /* jansson's value type (same declaration as jansson.h) */

/* Reads an instance definition from `obj` (borrowed; not modified) into `out`, an
 * initialised definition (pt_instance_def_init; the caller owns and finishes it).
 *
 * Every field is optional: a missing one keeps pt_instance_def_init()'s value. A
 * "strands" array replaces the default strand list, each listed strand starting from
 * the strand defaults (pt_strand_def_reset) and the top-level "springbone" joint
 * defaults. Unknown fields
 * at any level are rejected, except top-level keys listed in `extra_keys` (a NULL-ended
 * array, or NULL for none): those are the caller's to read (e.g. the server's "driver").
 * The result is checked with pt_instance_validate().
 *
 * Returns 0 and replaces *out on success (err->ok = 1; its old storage is freed);
 * returns -1 on any error in the document, -2 when out of memory, and leaves *out
 * untouched either way (err->ok = 0, field and message set). `err` may be NULL. */
int pt_schema_parse(const json_t *obj, pt_instance_def *out, const char *const *extra_keys,
                    pt_error *err);

/* The JSON form of `def`: a new reference (the caller json_decref()s it), or NULL when
 * out of memory or when name, room or an anchor_bone is not UTF-8. Every field is
 * written explicitly, except a strand's "colliders" when it sees all of them, an empty
 * "anchor_bone", and per-strand "springbone" overrides equal to
 * the top-level joint defaults (taken from strands[0]'s first joint). Floats are written
 * as the shortest decimal that reads back to the same float, so for every def that
 * passes pt_instance_validate(), pt_schema_parse(pt_schema_dump(def)) gives `def` back
 * (in every field that has a meaning: unused joints and collider fields that the shape
 * ignores are not written). Serialise it with PT_SCHEMA_DUMP_FLAGS to print those
 * decimals as written. */
json_t *pt_schema_dump(const pt_instance_def *def);

/* json_dumps()/json_dumpf() flags that print pt_schema_dump's reals without noise
 * (0.96, not 0.95999999999999996); OR in JSON_INDENT(n) etc. as wanted. */
#define PT_SCHEMA_DUMP_FLAGS 0x7800 /* == JSON_REAL_PRECISION(15), checked in dump.c */

/* Room wind (ponytail/wind.h) as JSON, {"zones": [{"type": "global" | "sphere" | "box",
 * "direction": [x, y, z], "strength": m/s, "turbulence": 0, "seed": 1, "center": [x, y, z],
 * "radius": m, "size": [x, y, z], "falloff": m}, ...]}: type, direction and strength
 * required; center and radius required for a sphere, center and size for a box, and
 * neither allowed for a global zone (nor radius on a box, size on a sphere, falloff on a
 * global zone); turbulence, seed and falloff optional (0, 1, 0). Unknown fields are
 * errors. Parses into zones (PT_MAX_WIND_ZONES of room) and *n, checked with
 * pt_wind_zones_validate: 0, or -1 with err naming the field ("zones[2].radius"). */
int pt_schema_wind_parse(const json_t *obj, pt_wind_zone *zones, int *n, pt_error *err);
/* The JSON form of n zones (only the fields their type has): a new reference, or NULL out
 * of memory. pt_schema_wind_parse reads it back to the same zones (floats as the
 * shortest decimals that read back to them). */
json_t *pt_schema_wind_dump(const pt_wind_zone *zones, int n);

/* Reads a JSON document from `len` bytes of JSON text at `buf` (a file the caller read, a
 * REST body): a new reference, or NULL with `err` set (err->field = "", message such as
 * "line 3, column 14: '}' expected near ','"). Duplicate object keys are an error. `err`
 * may be NULL. Reading files is the caller's: core does no I/O (the CLI's helper is
 * clients/cli/jsonfile.h). */
json_t *pt_schema_read_buffer(const char *buf, size_t len, pt_error *err);

#endif
