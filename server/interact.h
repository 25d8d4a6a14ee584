/* Who may touch and who may grab an instance (issue 40; server/README.md "Touch and
 * grabs"): the daemon's own top-level key of the stored document, next to "driver":
 *
 *   "interaction": {"touch": "none" | "room" | "listed",
 *                   "grab":  "none" | "room" | "listed",
 *                   "allow": [instance ids]}
 *
 * touch (default "room"): whose hands collide with the instance's strands: nobody, every
 * other instance of its room, or the instances of its room listed in allow. grab (default
 * "none"): who may grab a point of it (POST /v1/instances/{id}/grabs), the same choices.
 * allow: at most INTERACT_MAX_ALLOW distinct instance ids (integers in [1, 2^53)), kept
 * sorted; ids need not exist (an instance created later with that id is allowed). An
 * instance is never touched by its own hands nor grabbed by itself.
 *
 * The canonical document always carries the member, every field explicit.
 *
 * Threading: pure; any thread.
 */
#ifndef SERVER_INTERACT_H
#define SERVER_INTERACT_H

#include <jansson.h>
#include <stdint.h>

#include "ponytail/instance.h"

enum { INTERACT_NONE = 0, INTERACT_ROOM = 1, INTERACT_LISTED = 2 };
enum { INTERACT_MAX_ALLOW = 64 };

typedef struct interact_t {
	uint8_t touch, grab; /* INTERACT_* */
	int nallow;
	uint64_t allow[INTERACT_MAX_ALLOW]; /* ascending, distinct */
} interact_t;

/* touch room, grab none, allow []. */
interact_t interact_default(void);

/* Reads doc's "interaction" member (doc borrowed); absent or null: the defaults. Returns
 * 0, or -1 with err naming the field ("interaction.touch", "interaction.allow[3]") and the
 * rule. */
int interact_parse(const json_t *doc, interact_t *out, pt_error *err);

/* The canonical member, every field explicit (new reference), or NULL when out of memory. */
json_t *interact_dump(const interact_t *ia);

/* Whether mode (ia->touch or ia->grab) lets instance `who` (not the owner itself) act on
 * the owner: room: `same_room`; listed: same_room and who in allow; none: never. */
int interact_grants(const interact_t *ia, int mode, uint64_t who, int same_room);

#endif
