/* Limits the server shares with core and the wire protocol, in one place, each checked at
 * compile time where two modules must agree (core and proto never see each other, so the
 * server, which sees both, holds the checks). config.c's option ranges use these names.
 *
 * Threading: constants only.
 */
#ifndef SERVER_SHARED_LIMITS_H
#define SERVER_SHARED_LIMITS_H

#include <stdint.h>

#include "ponytail/types.h"
#include "ptp/proto.h"
#include "token.h"

/* One instance's size: a shape message and a frame record carry at most PTP_MAX_STRANDS
 * strands (the wire's u8 strand count, limited by PROTOCOL.md), which may be fewer than
 * core simulates (PT_MAX_STRANDS): the server then refuses the strands past it
 * (instances.c, admissible). Points per strand are the same on both sides. */
_Static_assert((int)PTP_MAX_STRANDS <= (int)PT_MAX_STRANDS,
               "the wire carries more strands than core holds");
_Static_assert((int)PT_MAX_POINTS == (int)PTP_MAX_POINTS, "core and proto disagree on points");

enum {
	/* strands per instance the daemon accepts: what both core and the wire carry */
	SERVER_MAX_STRANDS = PTP_MAX_STRANDS,
	/* --max-points at most: everything core can hold in one instance. */
	SERVER_MAX_POINTS = PT_MAX_JOINTS,
	/* --tick-hz at most (welcome carries a u16). */
	SERVER_MAX_TICK_HZ = 1000,
	/* --keyframe-interval and --max-subscriptions at most (u16 in welcome). */
	SERVER_MAX_U16 = UINT16_MAX,
	/* hands (an instance's left or right hand with its fingers) whose colliders a room's
	 * instances feel in one tick (server/README.md "Touch and grabs"; /v1/info
	 * limits.hands); more are left out, the highest ids first */
	SERVER_MAX_ROOM_HANDS = 64,
};

/* Names and rooms: core keeps PT_NAME_MAX - 1 bytes and a NUL; the wire's str8 carries up to
 * PTP_MAX_NAME bytes, so every stored name reaches clients whole. */
_Static_assert(PT_NAME_MAX - 1 <= PTP_MAX_NAME, "names longer than the wire carries");
_Static_assert(PTP_MAX_NAME <= 255, "a str8 holds 255 bytes");

/* Substeps: --substeps [1, SERVER_MAX_SUBSTEPS] is what core steps (PT_MAX_SUBSTEPS);
 * welcome carries a u8. */
enum { SERVER_MAX_SUBSTEPS = 16 };
_Static_assert((int)SERVER_MAX_SUBSTEPS == (int)PT_MAX_SUBSTEPS, "--substeps beyond what core steps");
_Static_assert(SERVER_MAX_SUBSTEPS <= UINT8_MAX, "substeps do not fit welcome's u8");
_Static_assert(SERVER_MAX_TICK_HZ <= UINT16_MAX, "tick_hz does not fit welcome's u16");

/* Tokens: an instance token, or the --admin-token, travels in a bearer header and in the
 * wire's authorize message. */
_Static_assert((int)TOKEN_LEN <= (int)TOKEN_MAX_BEARER, "tokens longer than a bearer accepts");
_Static_assert((int)TOKEN_MAX_BEARER == (int)PTP_MAX_TOKEN, "REST and the wire disagree on tokens");

#endif
