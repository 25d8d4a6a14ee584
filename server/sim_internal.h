/* Private to sim.c and sim_frame.c: the sim thread's instance table.
 * Everything here is touched by the sim thread only (and by pool workers during
 * pool_run, each on its own disjoint range of slots). */
#ifndef SERVER_SIM_INTERNAL_H
#define SERVER_SIM_INTERNAL_H

#include <pthread.h>

#include "ponytail/world.h"
#include "pool.h"
#include "record.h"
#include "ptp/strand.h"
#include "shared_limits.h"
#include "sim.h"

typedef struct sim_inst_t {
	uint64_t id; /* public id; 0 = free slot */
	pt_id pid;   /* core id */
	driver_t driver;
	uint64_t born_tick;    /* first tick of this instance/shape in the slot (frame_ring.h) */
	uint64_t drive_origin; /* tick at which the driver's t = 0 */
	uint32_t last_seq;     /* seq of the newest pose applied (in frame records) */
	uint32_t pending_seq;  /* seq of the pose waiting in `pose` */
	uint32_t seq_seen;     /* newest seq taken from the inbox (0 = none) */
	int has_pose;          /* `pose` arrived since the last tick */
	pt_pose pose;
	int moving;            /* `pose` came with velocities (v, w) */
	pt_vec3 v, w;
	int64_t arrival_ns;
	int64_t first_arrival_ns;   /* arrival of the oldest pose taken since the last applied */
	int64_t applied_arrival_ns; /* this tick: first_arrival_ns of what it applied, 0 = none */
	pt_pose drive_pose; /* the driver's pose for the tick being computed */
	/* Stream bits (SIM_STREAM_BIT): bit coding * FRAME_RATES + r for stream r of a coding. */
	unsigned key_wanted; /* a subscriber needs a keyframe record of that stream */
	unsigned enc_gap;    /* a due tick of that stream was not encoded (nobody watched):
	                      * its next record is a key (the gap rule, PROTOCOL.md 8) */
	int encode_failed;  /* logged once */
	int nonfinite;      /* gather_one found non-finite points: sim_guard_sweep resets */
	int npoints;
	/* One encoder per coding and rate stream (frame_ring.h): the classic enc[0][0] always,
	 * the others made when a subscriber first asks for that coding and rate, freed with
	 * the instance or its shape (compact ones: its strands are quantised against the
	 * compact grid's head position, so the codings cannot share an encoder). */
	ptp_encoder_t *enc[FRAME_CODINGS][FRAME_RATES];
	inst_meta_t *meta; /* current name/room/shape; the table holds one reference */
	uint64_t state_hash; /* after the last tick (the encode pass, sim_frame.c) */
	rec_room_t *rec;   /* its room's recording (record.h), NULL when not recorded */
	char *rec_def;     /* its definition's JSON form, for its records */
	size_t rec_def_len;
	/* touch and grabs (sim_touch.c): its grants, and everything else it has to do with
	 * hands, made when first needed (NULL: default grants, no hands, never touched) */
	uint8_t touch_mode, grab_mode; /* INTERACT_* (interact.h) */
	float touch_margin;            /* the largest radius its points collide with, m */
	struct sim_tx_t *tx;
} sim_inst_t;

typedef struct sim_wind_t sim_wind_t; /* a room's wind zones (sim_wind.c) */
typedef struct sim_touch_t sim_touch_t; /* the hands and grabs of every room (sim_touch.c) */

typedef struct id_slot_t {
	uint64_t id;
	int slot;
} id_slot_t;

/* Per worker: room for one instance's points (SERVER_MAX_POINTS). The
 * counters come first and have a cache line to themselves: at the end they shared one
 * with the next worker's pts, which that worker writes for every instance it encodes. */
typedef struct sim_scratch_t {
	uint64_t bytes, keys; /* this tick's output, summed into metrics after the run */
	char pad_[64 - 2 * sizeof(uint64_t)];
	pt_vec3 pts[SERVER_MAX_POINTS];
	/* the points of the instances waiting to be encoded together (sim_frame.c) */
	float xyz[PTP_TICK_MANY_MAX][SERVER_MAX_POINTS * 3];
} sim_scratch_t;

struct sim_t {
	sim_config_t cfg;
	cmdq_t *q;
	frame_ring_t *ring;
	pt_world *world;
	pool_t *pool;
	sim_scratch_t *scratch; /* [cfg.workers] */
	float dt;
	int div[FRAME_CODINGS][FRAME_RATES]; /* frame_rate_divisor per coding and stream */
	unsigned own; /* stream bits of the streams frame_rate_stream maps some rate to */
	unsigned due; /* stream bits of the own streams due this tick (set by sim_publish) */
	pthread_t th;
	int started, stop;      /* stop: atomic */
	uint64_t tick;          /* newest completed tick; atomic for readers */
	int64_t tick_done_ns;   /* atomic */
	int64_t wall_offset_us; /* CLOCK_REALTIME - CLOCK_MONOTONIC at start, us */

	sim_inst_t *inst; /* [nslots], slots never move */
	int nslots, cap;
	int *free_slots; /* [nfree] */
	int nfree;
	id_slot_t *index; /* [nindex] sorted by id */
	int nindex;
	int ndriven; /* instances with a driver (their motions are evaluated on the pool) */
	int *room_order; /* [nindex] slots sorted by (room, id), rebuilt when order_dirty */
	int order_dirty;
	frame_room_t *rooms; /* room directory of room_order (room pointers into metas) */
	int nrooms, cap_rooms;
	sim_wind_t *winds; /* the rooms that have a wind (sim_wind.c), unordered */
	int nwinds, cap_winds;
	sim_touch_t *touch; /* hands and grabs (sim_touch.c), NULL until first needed */

	frame_event_t *ev; /* events of the tick in progress */
	int nev, cap_ev;
	cmd_t *backlog;  /* taken from the queue, not applied yet (over budget) */
	frame_set_t *fs; /* the frame set being filled (during sim_publish) */
	rec_t *rec;      /* the recordings (record.h), NULL when off; borrowed */
	int realtime_on; /* the pool runs under SCHED_FIFO (cfg.realtime, until it falls behind) */

	/* Work handed out during pool_run (SIM_FOR_SLOTS, step_part): the next block or
	 * chunk a worker takes, atomic, on a cache line of its own (every worker bumps it). */
	char pad0_[64];
	int next_work; /* pieces: pool_take_piece */
	char pad1_[64];

	int64_t poses_arrival_sum_ns; /* this tick's applied poses: sum of arrival times */
	uint64_t poses_applied;       /* and their count (metrics.pose_to_publish_*) */

	int guard_next;           /* sim_guard_sweep's round-robin cursor (a slot) */
	uint64_t guard_unlogged;  /* non-finite resets since the last log line */
	int64_t guard_logged_ns;  /* when that line was written */
};

/* Work over sim slots is dealt to the pool in blocks of SIM_BLOCK consecutive slots, each
 * worker taking the next block (s->next_work, reset to 0 before pool_run) until none is
 * left: neighbouring slots, whose per-slot records share cache lines, stay on one worker
 * (slot by slot, the workers would keep stealing each other's lines), and a worker that
 * the machine delays (it is shared) leaves its blocks to the others instead of holding up
 * the tick, as a fixed deal (block b to worker b % n) did. Iterate with
 * SIM_FOR_SLOTS(s, slot): pool_take_piece with pieces fixed at SIM_BLOCK, the dealer the
 * step's shrinking pieces use too. */
enum { SIM_BLOCK = 32 };
#define SIM_FOR_SLOTS(s, slot)                                                                     \
	for (int b_, e_; pool_take_piece(&(s)->next_work, (s)->nslots, 1, SIM_BLOCK, SIM_BLOCK, &b_,  \
	                                 &e_);)                                                    \
		for (int slot = b_; slot < e_; slot++)

/* Bit of stream `stream` (a rate index) of `coding` in key_wanted, enc_gap, own, due. */
#define SIM_STREAM_BIT(coding, stream) (1u << ((coding)*FRAME_RATES + (stream)))

/* A new encoder of stream `stream` of `coding` for m's shape (keyframe spacing kept in
 * time). */
ptp_encoder_t *sim_make_encoder(const sim_t *s, const inst_meta_t *m, int coding, int stream);

/* Every encoder of the instance: forced to a keyframe next (sim.c), destroyed. */
void sim_enc_force_key(sim_inst_t *in);
void sim_enc_destroy(sim_inst_t *in);

/* Slot of a public id, or -1. */
int sim_slot_of(const sim_t *s, uint64_t id);

/* Queues an instance event for the next tick's publish; takes the caller's references
 * (old: CHANGED only, else NULL). sim.c. */
void sim_push_event(sim_t *s, ptp_event_kind_t kind, inst_meta_t *m, inst_meta_t *old);

/* sim_record.c: the recordings' hooks, each made where sim.c makes the call into core it
 * records (record.h). */
void simrec_create(sim_t *s, sim_inst_t *in, const pt_instance_def *def, pt_pose head);
void simrec_update(sim_t *s, sim_inst_t *in, const pt_instance_def *def, const char *old_room);
void simrec_delete(sim_t *s, sim_inst_t *in); /* before the slot is cleared */
void simrec_end_tick(sim_t *s);               /* after sim_publish */
static inline void simrec_id(sim_inst_t *in, pt_rec_type t)
{
	if (in->rec)
		pt_rec_put_id(rec_stage(in->rec), t, in->id);
}
static inline void simrec_head(sim_inst_t *in, pt_pose p)
{
	if (in->rec)
		pt_rec_put_head(rec_stage(in->rec), in->id, p);
}

/* sim_wind.c: the rooms' winds. join: after the instance was created in `room` or moved
 * to it (moved = 1: it may hold its old room's wind), gives it the room's zones (or
 * none) and records the call. zones: the room's zones into out (PT_MAX_WIND_ZONES), their
 * count. set: CMD_WIND, the room's zones to every instance of it, all or none. */
void simwind_join(sim_t *s, sim_inst_t *in, const char *room, int moved);
int simwind_zones(const sim_t *s, const char *room, pt_wind_zone *out);
cmd_result_t simwind_set(sim_t *s, const char *room, const pt_wind_zone *z, int n);

/* sim_touch.c: touch and grabs (server/README.md "Touch and grabs").
 * def: at create and update, the instance's grants (ia NULL: default) and the colliders
 * its definition puts on hand and finger bones; 0 or -1 out of memory (nothing changed).
 * bone: a body-bone pose the tick took for the instance (only hand and finger bones are
 * kept), conn the WebSocket connection it came by (0: REST). tick: before the step, every
 * instance's touch colliders and grabs for it (pt_world_set_touch/_grabs), recorded.
 * forget: the instance is deleted (its grabs end at the next tick). cmd: CMD_GRAB,
 * CMD_UNGRAB, CMD_GRABS, CMD_CONN_GONE. snapshot: after a recording's SNAPSHOT of the
 * instance (its touch is recorded again). destroy: at sim_destroy. */
int simtouch_def(sim_t *s, sim_inst_t *in, const pt_instance_def *def, const interact_t *ia);
void simtouch_bone(sim_t *s, sim_inst_t *in, pt_bone bone, pt_pose pose, uint64_t conn);
void simtouch_tick(sim_t *s);
void simtouch_forget(sim_t *s, sim_inst_t *in);
cmd_result_t simtouch_cmd(sim_t *s, cmd_t *c);
void simtouch_snapshot(sim_inst_t *in);
void simtouch_destroy(sim_t *s);

/* sim_frame.c: room_order and the room directory brought up to date. 0 or -1. */
int sim_rebuild_order(sim_t *s);

/* sim_guard.c (see there): 1 when the n points are all finite. */
int sim_points_finite(const pt_vec3 *p, int n);

/* Puts the instance in slot at rest: a keyframe and a RESET event next, logged (at most
 * once a second) and counted. found_by names the check, for the log. */
void sim_guard_reset(sim_t *s, int slot, const char *found_by);

/* Reads the instance's points into scratch (room for SERVER_MAX_POINTS);
 * resets it when one is not finite. Returns 1 when it was reset. */
int sim_guard_check(sim_t *s, int slot, pt_vec3 *scratch, const char *found_by);

/* Once per tick, after publishing: resets what gather_one flagged, checks a few more. */
void sim_guard_sweep(sim_t *s);

/* Encodes every instance's record for tick s->tick and publishes the frame set and the
 * pending events (sim_frame.c). deadline_ns: the tick's CLOCK_MONOTONIC deadline. */
void sim_publish(sim_t *s, int64_t deadline_ns);

#endif
