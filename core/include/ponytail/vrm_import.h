/* Ponytail VRM import: a VRM avatar's spring bones as an instance definition
 * (core/SCHEMA.md), from the avatar's bytes in memory.
 *
 * The one importer: `ponytail import-vrm` (clients/cli/import_vrm.c reads the file and
 * prints the result) and the daemon's POST /v1/import/vrm and avatar uploads
 * (server/instances_avatar.c) both call vrm_import(). Part of the schema library
 * (libpt_schema.a, core/schema/vrm/; link -ljansson); like ponytail/schema.h this header
 * does not include jansson, so json_t is declared here as jansson declares it. No I/O, no
 * global state: any thread may call.
 *
 * What it makes of an avatar: core/SCHEMA.md's instance schema, "springbone" solver, form
 * "vrm":
 * - Coordinates are head-local: from the head bone's rest world position, along the axes
 *   of its rest world rotation (scale dropped), metres, +Y up, the face looking +Z. VRM
 *   1.0 models face +Z already; VRM 0.x models face -Z and are turned 180° about Y.
 *   gravity_dir (world-space in the schema) is expressed in the frame where the head at
 *   rest has the identity pose, so the instance at pose identity is the avatar at rest.
 * - One strand per chain: VRM 1.0 one per spring, VRM 0.x one per path down from each
 *   listed root bone (children[0] continues a chain, further children start their own),
 *   plus the 7 cm virtual tail after a leaf.
 * - A strand is straight with one segment length: the mean of the chain's, along its
 *   first segment; per-segment lengths and the rest bend are in the report.
 * - Colliders are written only when a kept strand uses them, each attached to the
 *   humanoid bone it sits on (its node or the nearest mapped ancestor: "head", "chest",
 *   ..., core/schema/vrm/vrm_humanoid.h), in that bone's frame: its origin the bone's rest
 *   position, the head's rest axes; the definition's "bones" gives those rest positions.
 * Whatever is approximated is listed in the report's "warnings", never dropped silently;
 * informational remarks go to its "notes".
 */
#ifndef PONYTAIL_VRM_IMPORT_H
#define PONYTAIL_VRM_IMPORT_H

#include <stddef.h>
#include <stdint.h>

typedef struct json_t json_t; /* jansson's value type (same declaration as jansson.h) */

/* The prewarm_s vrm_import() writes into the definition (core/SCHEMA.md's default). */
#define VRM_IMPORT_PREWARM_S 1.0

typedef struct vrm_report {
	/* New reference owned by the report: {"source", "coordinates", "strands" (every chain,
	 * kept or not, with its index in the instance or null), "colliders", "notes",
	 * "warnings"}. NULL before an import and after vrm_report_free. */
	json_t *json;
	int warning_count; /* entries of json.warnings */
} vrm_report;

/* Releases report->json; NULL-safe, idempotent. */
void vrm_report_free(vrm_report *report);

/* Imports the avatar (a GLB: .vrm / .glb) in data[0 .. len). Returns a new reference to
 * the instance definition, one that pt_schema_parse() and pt_instance_validate() accept,
 * and fills *report (the caller frees it with vrm_report_free), or returns NULL with a
 * one-line message "where: what" in err (errlen bytes) and report->json NULL. Every
 * index, count and length it reads is checked before use (what it does not read cannot
 * reject the file: vrm_graph_load in core/schema/vrm/vrm_gltf.h); data is only read. */
json_t *vrm_import(const uint8_t *data, size_t len, vrm_report *report, char *err, size_t errlen);

/* The same for an instance of at most max_strands strands (clamped to [1, PT_MAX_STRANDS];
 * vrm_import: PT_MAX_STRANDS): the daemon's, whose frames carry fewer than core holds.
 * Chains past it are dropped as past PT_MAX_STRANDS are, head chains kept first, and the
 * report's warning names the limit. */
json_t *vrm_import_max(const uint8_t *data, size_t len, int max_strands, vrm_report *report,
                       char *err, size_t errlen);

#endif
