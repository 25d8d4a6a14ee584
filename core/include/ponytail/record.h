/* Recordings: a room's instances at one tick (their definitions and bit-exact state) and
 * every input core was given from then on, with the state hash of every instance after
 * every tick (issue 39). The daemon writes them (server/record.c), `ponytail replay`
 * re-simulates them; the format is documented in core/RECORDING.md, and this library is
 * its one home: writer, reader (every length and value checked, errors naming the byte
 * offset) and the replay of one record into a world.
 *
 * Part of the schema library (libpt_schema.a: definitions travel as their JSON form). No
 * I/O: buffers in memory. No global state: any thread may call.
 */
#ifndef PONYTAIL_RECORD_H
#define PONYTAIL_RECORD_H

#include <stddef.h>
#include <stdint.h>

#include "ponytail/instance.h"
#include "ponytail/touch.h"
#include "ponytail/world.h"

enum { PT_REC_VERSION = 1, PT_REC_HEADER_BYTES = 48 };
enum { PT_REC_MAX_HANDS = 4096 }; /* touch colliders in one HANDS record */

typedef enum pt_rec_type {
	PT_REC_SNAPSHOT = 1, /* id, definition, state: the instance is now this */
	PT_REC_CREATE = 2,   /* id, head, definition: created (at rest, prewarmed) */
	PT_REC_UPDATE = 3,   /* id, definition: pt_world_update_instance */
	PT_REC_DELETE = 4,   /* id: destroyed, or gone to another room */
	PT_REC_RESET = 5,    /* id: pt_world_reset_instance */
	PT_REC_HEAD = 6,     /* id, pose: pt_world_set_head */
	PT_REC_MOTION = 7,   /* id, pose, v, w, age: pt_world_set_head_motion */
	PT_REC_BONE = 8,     /* id, bone, pose: pt_world_set_bone_pose */
	PT_REC_STEP = 9,     /* tick, then (id, state hash) of every instance after it */
	PT_REC_WIND = 10,    /* id, zones: pt_world_set_room_wind */
	PT_REC_HANDS = 11,   /* the room's hand colliders (pt_touch) of this tick */
	PT_REC_TOUCH = 12,   /* id, indices into the tick's HANDS: its touch from now on */
	PT_REC_GRABS = 13,   /* id, grabs: pt_world_set_grabs for the next step */
	PT_REC_TYPES
} pt_rec_type;

typedef struct pt_rec_info {
	uint32_t version;
	double tick_hz;      /* ticks per second */
	int substeps;        /* the world step's substeps (an instance's own win) */
	uint64_t first_tick; /* the snapshots are the state after this tick */
	uint64_t last_tick;  /* the last STEP's tick; 0 when the writer did not know it */
	char room[PT_NAME_MAX];
} pt_rec_info;

/* A growable buffer; `failed` is set (and nothing more written) when out of memory. */
typedef struct pt_rec_buf {
	unsigned char *p;
	size_t n, cap;
	int failed;
} pt_rec_buf;

void pt_rec_buf_free(pt_rec_buf *b);
/* Appends k raw bytes (whole records copied from another buffer). */
void pt_rec_buf_put(pt_rec_buf *b, const void *v, size_t k);

/* Writers: each appends one record (the header: the file's first 48 bytes + room). */
void pt_rec_put_header(pt_rec_buf *b, const pt_rec_info *info);
void pt_rec_put_snapshot(pt_rec_buf *b, uint64_t id, const char *def_json, size_t def_len,
                         const void *state, size_t state_len);
void pt_rec_put_create(pt_rec_buf *b, uint64_t id, pt_pose head, const char *def_json,
                       size_t def_len);
void pt_rec_put_update(pt_rec_buf *b, uint64_t id, const char *def_json, size_t def_len);
void pt_rec_put_id(pt_rec_buf *b, pt_rec_type type, uint64_t id); /* DELETE, RESET */
void pt_rec_put_head(pt_rec_buf *b, uint64_t id, pt_pose pose);
void pt_rec_put_motion(pt_rec_buf *b, uint64_t id, pt_pose pose, pt_vec3 v, pt_vec3 w,
                       float age_s);
void pt_rec_put_bone(pt_rec_buf *b, uint64_t id, pt_bone bone, pt_pose pose);
/* A WIND record: the room wind core was given for instance id (n zones, 0 = none). */
void pt_rec_put_wind(pt_rec_buf *b, uint64_t id, const pt_wind_zone *zones, int n);
/* A HANDS record: the room's touch colliders of this tick (n <= PT_REC_MAX_HANDS). */
void pt_rec_put_hands(pt_rec_buf *b, const pt_touch *t, uint32_t n);
/* A TOUCH record: instance id's touch colliders are entries idx[0 .. n) of each tick's
 * HANDS from now on (n <= PT_MAX_TOUCH; 0: none), until its next TOUCH. */
void pt_rec_put_touch(pt_rec_buf *b, uint64_t id, const uint16_t *idx, int n);
/* A GRABS record: pt_world_set_grabs(id, g, n) before the next STEP (n <= PT_MAX_GRABS). */
void pt_rec_put_grabs(pt_rec_buf *b, uint64_t id, const pt_grab *g, int n);
/* A STEP record of n instances, then (id, hash) pairs as they are added. */
void pt_rec_put_step(pt_rec_buf *b, uint64_t tick, uint32_t n, const uint64_t *ids,
                     const uint64_t *hashes);

/* One record as read (pointers into the buffer read). */
typedef struct pt_rec_event {
	pt_rec_type type;
	size_t offset; /* of the record in the buffer */
	uint64_t id, tick;
	const char *def_json;
	size_t def_len;
	const void *state;
	size_t state_len;
	pt_pose pose;
	pt_vec3 v, w;
	float age_s;
	pt_bone bone;
	uint32_t n; /* STEP: instances (their ids and hashes through pt_rec_step_entry);
	             * HANDS, TOUCH, GRABS: their entries */
	const unsigned char *entries;
	int nzones; /* WIND: the zones, checked (pt_wind_zones_validate) */
	pt_wind_zone zones[PT_MAX_WIND_ZONES];
	/* HANDS: n colliders at `entries` (56 bytes each, checked); TOUCH: n indices; GRABS:
	 * n grabs (ranges checked against the instance's shape when applied) */
	uint16_t touch[PT_MAX_TOUCH];
	pt_grab grabs[PT_MAX_GRABS];
} pt_rec_event;

typedef struct pt_rec_reader {
	const unsigned char *p;
	size_t n, at;
} pt_rec_reader;

/* Reads the header. 0, or -1 with msg naming the offset and the reason (not a
 * recording, a future version, truncated). */
int pt_rec_open(pt_rec_reader *r, const void *buf, size_t n, pt_rec_info *info, char *msg,
                size_t msg_cap);
/* The next record: 1, 0 at the end, -1 with msg (offset and reason). */
int pt_rec_next(pt_rec_reader *r, pt_rec_event *ev, char *msg, size_t msg_cap);
void pt_rec_step_entry(const pt_rec_event *ev, uint32_t k, uint64_t *id, uint64_t *hash);

/* Replay: a world with the recording's instances, by their recorded ids. */
typedef struct pt_replay pt_replay;
pt_replay *pt_replay_create(const pt_rec_info *info, pt_kernel kernel);
void pt_replay_destroy(pt_replay *r);
/* Applies one record; a STEP steps the world (pt_replay_mismatch then says whether the
 * hashes agree). 0, or -1 with msg (a definition that does not parse, an id that does
 * not exist, a snapshot that does not fit its definition, out of memory). */
int pt_replay_apply(pt_replay *r, const pt_rec_event *ev, char *msg, size_t msg_cap);
/* After a STEP: the first entry whose recorded hash differs from the replayed state's (or
 * whose instance the replay does not have), its index; -1 when all agree. */
int pt_replay_mismatch(const pt_replay *r, const pt_rec_event *step);
pt_world *pt_replay_world(const pt_replay *r);
/* The core id of recorded instance id (a null id when the replay has none). */
pt_id pt_replay_find(const pt_replay *r, uint64_t id);
/* The instances, in recorded id order: count and the i-th recorded id. */
int pt_replay_count(const pt_replay *r);
uint64_t pt_replay_id_at(const pt_replay *r, int i);

#endif
