/* The stored form of an instance: its definition document (core/SCHEMA.md, read by
 * core's pt_schema_parse) plus the server's own top-level key "driver" (driver.h).
 *
 * The store keeps the canonical document: pt_schema_dump of the parsed definition (every
 * field explicit, so GET shows the effective values) with the driver appended. A merge
 * patch applies to this document, and the result is parsed and validated as a whole.
 *
 * Threading: pure; any thread.
 */
#ifndef SERVER_INSTDOC_H
#define SERVER_INSTDOC_H

#include <jansson.h>

#include "driver.h"
#include "ponytail/instance.h"

/* Reads and validates doc (borrowed). Returns 0, or -1 with err naming the field
 * ("strands[0].points", "driver.period", "" for the document) and the rule. */
int instdoc_parse(const json_t *doc, pt_instance_def *def, driver_t *drv, pt_error *err);

/* The canonical JSON text (malloc'ed, caller frees), or NULL when out of memory. */
char *instdoc_canonical(const pt_instance_def *def, const driver_t *drv);

/* Applies a merge patch (RFC 7386) to the stored document text and parses the result.
 * Returns 0 with *def, *drv and *canonical (malloc'ed) set; -1 with err set when the
 * result is invalid; -2 when out of memory or the stored text is unreadable. */
int instdoc_patch(const char *stored, const json_t *patch, pt_instance_def *def, driver_t *drv,
                  char **canonical, pt_error *err);

/* What a client needs to put an instance's strands on its own skeleton (core/SCHEMA.md
 * "Joint names"): per strand {"anchor_bone", "joints": [one name per point] or null when
 * the strand names none, "rest": [[x, y, z] per point, head-local, point 0 the anchor]},
 * rest given for straight strands too (built segment by segment as core does). A new
 * array, or NULL when doc does not parse or memory runs out. */
json_t *instdoc_bones(const json_t *doc);

#endif
