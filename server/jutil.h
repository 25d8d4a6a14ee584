/* Small jansson helpers: JSON merge patch (RFC 7386), floats written short, and the
 * refusal of a document member the daemon parses itself ("driver", "interaction").
 *
 * Threading: pure; any thread.
 */
#ifndef SERVER_JUTIL_H
#define SERVER_JUTIL_H

#include <jansson.h>

#include "ponytail/instance.h" /* pt_error */

/* The result of applying `patch` to `target` (both borrowed, neither modified): a new
 * reference, or NULL when out of memory. Objects merge member by member, a null member
 * removes the key, anything else (arrays included) replaces the target wholesale. */
json_t *jutil_merge_patch(const json_t *target, const json_t *patch);

/* A JSON real holding the shortest decimal that reads back as the same float, so 0.6f is
 * written 0.6 and not 0.60000002384185791 (dump with JSON_REAL_PRECISION(15) or more).
 * New reference, or NULL when out of memory. */
json_t *jutil_float(float f);

/* Fills *err with a refusal of `field` (its JSON path, e.g. "interaction.touch") and
 * `msg` (what is allowed); returns -1, for `return jutil_reject(...)` in a parser. */
int jutil_reject(pt_error *err, const char *field, const char *msg);

#endif
