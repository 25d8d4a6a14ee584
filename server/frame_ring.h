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
 * REST frame reads (GET /v1/instances/{id}/frame, through instances_frame) are the other
 * reader: frame_ring_snapshot looks the id up in the newest frame set under the ring's
 * mutex and takes a reference to the entry's snapshot, a plain copy of the instance's
 * points after that tick (frame_snap_t). The sim makes snapshots only for sim slots read
 * over REST in the last second (the same demand idea as the watch table), so the first
 * read of an instance waits for a tick (instances.c falls back to the command queue) and
 * every later one answers from the newest published tick at once.
 *
 * Threading: frame_ring_begin/publish/take_key_requests/watched/snap_wanted on the sim
 * thread (frame_snap_new on its pool workers too); frame_ring_acquire/release/request_key/
 * watch on the WebSocket thread; frame_ring_snapshot on any other thread (libmicrohttpd's
 * connection threads). meta_ref/unref and frame_snap_* on any.
 */
#ifndef SERVER_FRAME_RING_H
#define SERVER_FRAME_RING_H

#include <stddef.h>
#include <stdint.h>

#include "ponytail/types.h"
#include "ptp/proto.h"

/* What a subscriber must know about an instance: immutable once published, shared by
 * frame sets and events through a reference count. Allocated for the strands it has
 * (meta_new): read shape.strands only below shape.strand_count, copy the shape with
 * ptp_shape_copy, never the struct whole. */
typedef struct inst_meta_t {
	int refs; /* atomic; use meta_ref/meta_unref */
	uint64_t id;
	char name[PT_NAME_MAX];
	char room[PT_NAME_MAX];
	ptp_shape_t shape; /* last: holds `strands` strands (meta_new) */
} inst_meta_t;

/* A new meta with one reference and room for `strands` strands (shape.strand_count set),
 * or NULL. */
inst_meta_t *meta_new(int strands);
inst_meta_t *meta_ref(inst_meta_t *m);
void meta_unref(inst_meta_t *m); /* NULL ok; frees at zero */

enum { FRAME_MAX_WORKERS = 64 };

/* Per-viewer rates (PROTOCOL.md 5, 1.2): a subscription asks for 60, 30, 20 or 10 Hz
 * (rate index 0..3; rate_hz 0 = index 0 = every tick, whatever the tick rate). Each rate is its own stream of records per
 * coding (classic frame_batch records, or compact ones, PROTOCOL.md 11), encoded once per
 * tick it is due (tick % divisor == 0) and shared by every subscriber of that rate and
 * coding; a delta at rate r refers to the same stream's record `divisor` ticks before.
 * Rates whose divisors coincide (a tick rate below 60 Hz) share the stream of the lowest
 * index: frame_rate_stream gives it. The divisor is capped by the step a record can say:
 * 32 for classic records (flags bits 1..5), 16 for compact ones (bits 2..5); the two
 * differ only above a 160 Hz tick. */
enum { FRAME_RATES = 4 };
enum { FRAME_CLASSIC = 0, FRAME_COMPACT = 1, FRAME_CODINGS = 2 };
extern const int frame_rate_hz[FRAME_RATES]; /* 60, 30, 20, 10 */
/* 1 for index 0 (every tick, at any tick_hz); else round(tick_hz / hz), halves up, in
 * [1, 32] (classic) or [1, 16] (compact) */
int frame_rate_divisor(int tick_hz, int coding, int rate);
int frame_rate_stream(int tick_hz, int coding, int rate); /* the index whose stream rate uses */
int frame_rate_index(int rate_hz); /* 0 for 0 and 60, ..., 3 for 10; -1 else */

/* One stream's records of an instance in one tick. */
typedef struct frame_rec_t {
	uint32_t off, len;         /* the shared (delta) record; len 0 = none this tick */
	uint32_t key_off, key_len; /* a keyframe record of the same tick; key_len 0 = none */
	uint8_t delta_is_key;      /* the shared record is itself a keyframe */
} frame_rec_t;

/* One instance's state after one tick, for REST reads: immutable once published, except
 * `text`, which the first reader may set once (the answer's body, shared by every later
 * read of the same tick: one JSON rendering per tick however many read it). */
typedef struct frame_snap_t {
	int refs; /* atomic; frame_snap_unref */
	uint64_t id, tick;
	uint32_t last_seq;
	uint64_t state_hash; /* pt_world_state_hash after the tick (REST "state_hash") */
	pt_pose head;
	int strand_count;
	uint8_t points[PTP_MAX_STRANDS]; /* per strand, root included */
	int n;                          /* points in xyz */
	char *text;                     /* atomic: NULL until frame_snap_set_text */
	pt_vec3 xyz[];                  /* strand by strand, root first, world metres */
} frame_snap_t;

frame_snap_t *frame_snap_new(int n); /* one reference; NULL when out of memory */
void frame_snap_unref(frame_snap_t *s); /* NULL ok */
/* The cached body, or NULL. */
const char *frame_snap_text(frame_snap_t *s);
/* Offers text (malloc'ed, NUL-terminated; ownership moves): the first offer is kept,
 * a later one is freed. Returns the text that is kept. */
const char *frame_snap_set_text(frame_snap_t *s, char *text);

typedef struct frame_entry_t {
	uint64_t id;               /* public id; 0 = empty slot */
	inst_meta_t *meta;         /* held by the frame set */
	uint64_t born_tick;        /* first tick of this instance (and shape) in this slot */
	uint32_t last_seq;         /* newest head_pose seq applied */
	uint64_t state_hash;       /* pt_world_state_hash after this tick: every key record
	                            * of a 1.4 connection carries it (PROTOCOL.md 6) */
	int64_t pose_arrival_ns;   /* sim_mono_ns() arrival of the oldest pose this tick's
	                            * record answers (several may have come since the last
	                            * tick; the newest is applied), 0 = none: the fan-out
	                            * sends the oldest inputs first (ws_order.c) */
	uint8_t buf;               /* which data buffer holds the records */
	/* per coding (FRAME_CLASSIC, FRAME_COMPACT) and rate stream: only streams due this
	 * tick and watched (or asked for a keyframe) have any */
	frame_rec_t rec[FRAME_CODINGS][FRAME_RATES];
	frame_snap_t *snap; /* held by the set; NULL unless REST reads it */
} frame_entry_t;

typedef struct frame_room_t {
	const char *room; /* points into an entry's meta */
	int first, count; /* range of room_slots */
	int64_t pose_arrival_ns; /* the oldest of its entries' (0 = no pose this tick) */
} frame_room_t;

/* One worker's records. 64 bytes apart: workers append to their own buffers at once, and
 * side by side (24 bytes each) two workers' `len` shared a cache line. */
typedef struct frame_buf_t {
	uint8_t *data;
	size_t len, cap;
	char pad_[64 - sizeof(uint8_t *) - 2 * sizeof(size_t)];
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

/* The answer to a WebSocket grab or release (protocol 1.5), made by the sim at the tick
 * that applied it and handed to the WebSocket thread with that tick's frame set. */
typedef struct frame_reply_t {
	uint64_t conn;     /* the connection that asked (conn_t.serial) */
	uint32_t ref;      /* its ref */
	uint8_t about;     /* PTP_GRAB or PTP_RELEASE */
	uint16_t code;     /* 0: done (grab_result); else the error's ptp_code_t */
	uint64_t instance; /* the grabbed instance */
	uint64_t gid;      /* the grab made or ended (code 0) */
	char text[PTP_MAX_TEXT + 1]; /* the error's text */
} frame_reply_t;

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

/* Sim: the same, except that entries [0, nslots) are not released and zeroed here: the
 * caller resets each one with frame_set_reset_entry before filling it (the sim does it
 * on its workers, each for the slots it encodes, instead of one loop on the tick
 * thread). Entries beyond nslots are released. */
frame_set_t *frame_ring_begin_deferred(frame_ring_t *r, int nslots, int nrooms);
void frame_set_reset_entry(frame_set_t *fs, int slot); /* releases and zeroes one entry */

/* Sim: makes fs the newest and appends events (their meta references move to the ring).
 * Returns -1 when the event queue could not grow (events dropped, logged), else 0. */
int frame_ring_publish(frame_ring_t *r, frame_set_t *fs, frame_event_t *events, int nevents);

/* Sim: a reply, delivered with the next published frame set (copied). */
void frame_ring_reply(frame_ring_t *r, const frame_reply_t *x);
/* WS: the replies published so far (array owned by the ring, valid until the next call). */
int frame_ring_take_replies(frame_ring_t *r, const frame_reply_t **out);

/* WS: releases `held` (NULL ok), returns the newest frame set (NULL before the first
 * tick) held until released, and moves every queued event into *events (*nevents; the
 * array is owned by the ring and valid until the next acquire; the meta references now
 * belong to the caller). */
frame_set_t *frame_ring_acquire(frame_ring_t *r, frame_set_t *held, frame_event_t **events,
                                int *nevents);
void frame_ring_release(frame_ring_t *r, frame_set_t *fs);

/* WS: asks the sim to encode a keyframe record of id's stream `stream` (a rate index) of
 * `coding` the next tick that stream is due. */
void frame_ring_request_key(frame_ring_t *r, uint64_t id, int coding, int stream);

/* Sim: the requests since the last call (array owned by the ring, valid until the next
 * call): each the id, with its stream in the top two bits and its coding in bit 61 (ids
 * stay below 2^53; use FRAME_KEY_ID / FRAME_KEY_STREAM / FRAME_KEY_CODING). Returns the
 * count. */
int frame_ring_take_key_requests(frame_ring_t *r, const uint64_t **ids);
#define FRAME_KEY_ID(k) ((k) & ((UINT64_C(1) << 61) - 1))
#define FRAME_KEY_STREAM(k) ((int)((k) >> 62))
#define FRAME_KEY_CODING(k) ((int)((k) >> 61) & 1)

/* Demand: the WebSocket thread marks a slot's rate stream of a coding watched until a
 * tick whenever a connection wants its record; the sim encodes only watched streams (and
 * keyframe requests). Encoding is most of a tick's work, and nobody needs the frames of
 * an instance nobody watches. A slot beyond max_slots counts as always watched at
 * classic rate 0. frame_ring_watched_any: whether any stream of the slot is watched at
 * tick (one load: the newest mark, as marks only move forward), so that an unwatched
 * slot costs the sim one look, however many streams exist. */
void frame_ring_watch(frame_ring_t *r, int slot, int coding, int stream, uint64_t until_tick);
int frame_ring_watched(const frame_ring_t *r, int slot, int coding, int stream, uint64_t tick);
int frame_ring_watched_any(const frame_ring_t *r, int slot, uint64_t tick);

/* REST: a reference to id's snapshot in the newest frame set (NULL when it has none:
 * never read before, not read for keep_ticks, or not in the set), and a mark that keeps
 * the sim making them for keep_ticks more ticks. Never waits for a tick: the ring's mutex
 * is held for one binary search. */
frame_snap_t *frame_ring_snapshot(frame_ring_t *r, uint64_t id, uint64_t keep_ticks);

/* Sim: whether slot's snapshot is wanted for tick. */
int frame_ring_snap_wanted(const frame_ring_t *r, int slot, uint64_t tick);

/* Slot of id in fs (binary search of by_id), or -1. */
int frame_set_find(const frame_set_t *fs, uint64_t id);

/* Index into fs->rooms of room, or -1. */
int frame_set_find_room(const frame_set_t *fs, const char *room);
/* The same, trying *hint first (an index a lookup of this room gave before, in this or an
 * older frame set: rooms keep their index while none is added or removed before them),
 * and leaving the answer there. One comparison instead of a search: the fan-out looks up
 * every subscriber's rooms every tick, and each probe of the search reads another
 * entry's meta (~16 cache misses per lookup among 200 rooms). */
int frame_set_find_room_hint(const frame_set_t *fs, const char *room, int *hint);

#endif
