/* The stored form of an instance: its definition document (core/SCHEMA.md, read by
 * core's pt_schema_parse) plus the server's own top-level keys "driver" (driver.h) and
 * "interaction" (interact.h).
 *
 * The store keeps the canonical document: pt_schema_dump of the parsed definition (every
 * field explicit, so GET shows the effective values) with the driver (when enabled) and
 * the interaction (always) appended. A merge
 * patch applies to this document, and the result is parsed and validated as a whole.
 *
 * Threading: pure; any thread.
 */
#ifndef SERVER_INSTDOC_H
#define SERVER_INSTDOC_H

#include <jansson.h>

#include "driver.h"
#include "interact.h"
#include "ponytail/instance.h"

/* Reads and validates doc (borrowed) into def, an initialised definition the caller
 * owns (pt_instance_def_init / _fini), *drv and *ia (NULL: checked, not kept). Returns 0,
 * or -1 with err naming the field ("strands[0].points", "driver.period",
 * "interaction.touch", "" for the document) and the rule, or -2 when out of memory. */
int instdoc_parse(const json_t *doc, pt_instance_def *def, driver_t *drv, interact_t *ia,
                  pt_error *err);

/* The canonical JSON text (malloc'ed, caller frees), or NULL when out of memory. ia NULL:
 * the default interaction. */
char *instdoc_canonical(const pt_instance_def *def, const driver_t *drv, const interact_t *ia);

/* Applies a merge patch (RFC 7386) to the stored document text and parses the result
 * into def (initialised, as for instdoc_parse).
 * Returns 0 with *def, *drv, *ia (NULL: not kept) and *canonical (malloc'ed) set; -1 with err set when the
 * result is invalid; -2 when out of memory or the stored text is unreadable. */
int instdoc_patch(const char *stored, const json_t *patch, pt_instance_def *def, driver_t *drv,
                  interact_t *ia, char **canonical, pt_error *err);

/* What a client needs to put an instance's strands on its own skeleton (core/SCHEMA.md
 * "Joint names"): per strand {"anchor_bone", "joints": [one name per point] or null when
 * the strand names none, "rest": [[x, y, z] per point, head-local, point 0 the anchor]},
 * rest given for straight strands too (built segment by segment as core does). A new
 * array, or NULL when doc does not parse or memory runs out. */
json_t *instdoc_bones(const json_t *doc);

#endif
