/* The seam sim -> WebSocket: each tick's encoded frames ("frame set") and the instance
 * events, handed over through a ring of three frame sets and lws_cancel_service().
 *
 * Latest wins: the WebSocket thread only ever reads the newest frame set, so a slow
 * reader skips ticks instead of making the sim wait or queueing frames. Three sets are
 * enough for that: one the WS thread may be reading, the newest published one, and one the
 * sim fills. Events (added/removed/changed/reset) are never skipped: they queue in order
 * and are taken together with the frame set they belong to, so a client always learns
 * an instance's shape before it sees frames of that shape.
 *
 * Every frame set is laid out by sim slot (the index of the instance in the sim's table,
 * sim_internal.h; the only thing called a "slot" in the server): entries[s] describes the
 * instance living in sim slot s (id 0 = empty). A sim slot's instance keeps its index for
 * life, so "did this connection receive slot s last tick" is one bit per slot; born_tick
 * tells a newly created (or re-shaped) instance from the old occupant of a reused slot.
 *
 * The demand back-channel, the one deliberate exception to "state flows edge -> door ->
 * queue -> tick -> ring -> WebSocket" (server/README.md): the WebSocket thread tells the
 * sim, through this ring, which sim slots someone watches (frame_ring_watch) and which ids
 * need a keyframe record next tick (frame_ring_request_key). Both are hints about
 * encoding, never changes to an instance, so they bypass the door and the command queue:
 * a lost or late hint costs one tick's encoding, not correctness.
 *
 * Threading: frame_ring_begin/publish/take_key_requests/watched on the sim thread;
 * frame_ring_acquire/release/request_key/watch on the WebSocket thread. meta_ref/unref on
 * any.
 */
#ifndef SERVER_FRAME_RING_H
#define SERVER_FRAME_RING_H

#include <stddef.h>
#include <stdint.h>

#include "ponytail/types.h"
#include "ptp/proto.h"

/* What a subscriber must know about an instance: immutable once published, shared by
 * frame sets and events through a reference count. */
typedef struct inst_meta_t {
	int refs; /* atomic; use meta_ref/meta_unref */
	uint64_t id;
	char name[PT_NAME_MAX];
	char room[PT_NAME_MAX];
	ptp_shape_t shape;
} inst_meta_t;

/* A new meta with one reference, or NULL. */
inst_meta_t *meta_new(void);
inst_meta_t *meta_ref(inst_meta_t *m);
void meta_unref(inst_meta_t *m); /* NULL ok; frees at zero */

enum { FRAME_MAX_WORKERS = 64 };

typedef struct frame_entry_t {
	uint64_t id;               /* public id; 0 = empty slot */
	inst_meta_t *meta;         /* held by the frame set */
	uint64_t born_tick;        /* first tick of this instance (and shape) in this slot */
	uint32_t last_seq;         /* newest head_pose seq applied */
	uint8_t buf;               /* which data buffer holds the records */
	uint8_t delta_is_key;      /* the shared record is itself a keyframe */
	uint32_t off, len;         /* the shared (delta) record */
	uint32_t key_off, key_len; /* a keyframe record of the same tick; key_len 0 = none */
	/* The compact coding's records (proto/PROTOCOL.md 11), encoded only while a compact
	 * connection watches the slot (frame_ring_watch_c); c_len 0 = none this tick. */
	uint8_t c_delta_is_key;
	uint32_t c_off, c_len, c_key_off, c_key_len;
} frame_entry_t;

typedef struct frame_room_t {
	const char *room; /* points into an entry's meta */
	int first, count; /* range of room_slots */
} frame_room_t;

typedef struct frame_buf_t {
	uint8_t *data;
	size_t len, cap;
} frame_buf_t;

typedef struct frame_set_t {
	uint64_t tick;
	int64_t server_time_us; /* CLOCK_REALTIME at the tick's deadline */
	int nslots;             /* entries[0, nslots) */
	frame_entry_t *entries;
	int nlive;
	int *by_id;      /* nlive slot indices sorted by id */
	int *room_slots; /* nlive slot indices sorted by (room, id) */
	frame_room_t *rooms;
	int nrooms;
	frame_buf_t bufs[FRAME_MAX_WORKERS];
	/* internal */
	int cap_slots, cap_rooms, readers;
} frame_set_t;

typedef struct frame_event_t {
	uint8_t kind;      /* ptp_event_kind_t */
	uint64_t tick;     /* first tick it applies to */
	inst_meta_t *meta; /* owned reference */
	inst_meta_t *old;  /* CHANGED: the meta before (owned; its room may differ), else NULL */
} frame_event_t;

typedef struct frame_ring_t frame_ring_t;

/* max_slots: sim slots that can exist at once (the instance limit); bounds the watch
 * table below. */
frame_ring_t *frame_ring_create(int max_slots);
void frame_ring_destroy(frame_ring_t *r); /* NULL ok; after both threads stopped */

/* Called (on the sim thread) after each publish: the WebSocket module sets it to wake
 * its loop with lws_cancel_service(). Set before the sim starts. */
void frame_ring_set_notify(frame_ring_t *r, void (*fn)(void *), void *ctx);

/* Sim: a frame set nobody reads, with the previous contents released and bufs emptied, sized
 * for nslots entries and nrooms rooms. NULL when out of memory. */
frame_set_t *frame_ring_begin(frame_ring_t *r, int nslots, int nrooms);

/* Sim: makes fs the newest and appends events (their meta references move to the ring).
 * Returns -1 when the event queue could not grow (events dropped, logged), else 0. */
int frame_ring_publish(frame_ring_t *r, frame_set_t *fs, frame_event_t *events, int nevents);

/* WS: releases `held` (NULL ok), returns the newest frame set (NULL before the first
 * tick) held until released, and moves every queued event into *events (*nevents; the
 * array is owned by the ring and valid until the next acquire; the meta references now
 * belong to the caller). */
frame_set_t *frame_ring_acquire(frame_ring_t *r, frame_set_t *held, frame_event_t **events,
                                int *nevents);
void frame_ring_release(frame_ring_t *r, frame_set_t *fs);

/* WS: asks the sim to encode a keyframe record for id next tick. */
void frame_ring_request_key(frame_ring_t *r, uint64_t id);

/* Sim: the ids asked for since the last call (array owned by the ring, valid until the
 * next call). Returns the count. */
int frame_ring_take_key_requests(frame_ring_t *r, const uint64_t **ids);

/* Demand: the WebSocket thread marks a slot watched until a tick whenever a connection
 * wants its record; the sim encodes only watched slots (and keyframe requests). Encoding is
 * most of a tick's work, and nobody needs the frames of an instance nobody watches. A slot
 * beyond max_slots counts as always watched. */
void frame_ring_watch(frame_ring_t *r, int slot, uint64_t until_tick);
int frame_ring_watched(const frame_ring_t *r, int slot, uint64_t tick);
/* The same demand for the compact coding (connections whose hello asked for it). */
void frame_ring_watch_c(frame_ring_t *r, int slot, uint64_t until_tick);
int frame_ring_watched_c(const frame_ring_t *r, int slot, uint64_t tick);

/* Slot of id in fs (binary search of by_id), or -1. */
int frame_set_find(const frame_set_t *fs, uint64_t id);

/* Index into fs->rooms of room, or -1. */
int frame_set_find_room(const frame_set_t *fs, const char *room);

#endif
