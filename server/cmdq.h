/* The seam door -> sim: a command queue applied at the start of a tick, and an inbox of
 * head poses read at the tick. Only instances.c submits and posts.
 *
 * The door fills a cmd_t (usually on its stack), calls cmdq_submit (or cmdq_push under its
 * writer lock, then cmdq_wait), and blocks until the sim thread has applied it and
 * published that tick's frames; the result is then in the cmd. Head poses are
 * fire-and-forget: cmdq_post_pose copies them into a bounded inbox; the sim takes the
 * whole inbox once per tick, and the newest pose per instance wins.
 *
 * Threading: cmdq_submit / cmdq_post_pose from any thread except the sim thread;
 * cmdq_take*, cmdq_complete from the sim thread only; cmdq_close from the sim thread
 * when it stops (every pending and later submit then fails with CMD_CLOSED).
 */
#ifndef SERVER_CMDQ_H
#define SERVER_CMDQ_H

#include <stdint.h>

#include "driver.h"
#include "interact.h"
#include "ponytail/instance.h"
#include "ponytail/types.h"
#include "ponytail/wind.h"
#include "shared_limits.h"

typedef enum cmd_kind_t {
	CMD_CREATE, /* id (already stored), def, driver */
	CMD_UPDATE, /* id, def, driver: replaces the definition at a tick boundary */
	CMD_DELETE, /* id */
	CMD_RESET,  /* id: strands back to the settled rest pose */
	CMD_FRAME,  /* id: copy the latest frame into cmd.frame */
	CMD_WIND,   /* room, zones: the room's wind, given at a tick boundary to every
	             * instance of the room and to those that join it later */
	CMD_GRAB,   /* id (the grabbed), grab: a new grab, checked by the sim (sim_touch.c) */
	CMD_UNGRAB, /* id, grab->gid: ends that grab of instance id */
	CMD_GRABS,  /* id: the grabs of instance id into grab->list */
	CMD_CONN_GONE, /* grab->conn: a WebSocket connection closed: its grabs end and the
	                * hands it sent are dropped (posted without a wait: cmdq_post_cmd) */
} cmd_kind_t;

/* One grab as the sim keeps it (server/README.md "Touch and grabs"). */
typedef struct grab_info_t {
	uint64_t gid;      /* the grab's id: unique in this daemon's run, never reused */
	uint64_t instance; /* the grabbed instance */
	uint64_t by;       /* the grabbing instance, whose hand bone it follows */
	int strand, point;
	int bone;          /* pt_bone: a hand or finger bone of `by` */
} grab_info_t;

/* CMD_GRAB/UNGRAB/GRABS in and out. The sim's refusal names a field as the door's errors
 * do (refused: GRAB_*). */
enum { GRAB_OK = 0, GRAB_FORBIDDEN, GRAB_INVALID, GRAB_CONFLICT, GRAB_NOT_FOUND };
typedef struct cmd_grab_t {
	grab_info_t g;     /* CMD_GRAB: instance, by, strand, point, bone in; gid out.
	                    * CMD_UNGRAB: gid in; the grab as it was out */
	uint64_t conn;     /* CMD_GRAB: the WebSocket connection that asked (0: REST);
	                    * CMD_CONN_GONE: the connection */
	int refused;       /* out: GRAB_* */
	char field[64];    /* out, when refused: "interaction.grab", "point", ... ("" none) */
	char message[256]; /* out, when refused */
	grab_info_t *list; /* CMD_GRABS out: malloc'ed (the submitter frees), n of them */
	int n;
	/* a WebSocket grab or release (detached): the sim answers with frame_ring_reply */
	int reply;
	uint32_t ref;
	int nmay;          /* CMD_UNGRAB: the ids authorized on the connection; the grab's
	                    * instance or grabber must be one of them */
	uint64_t may[64];
} cmd_grab_t;

typedef enum cmd_result_t {
	CMD_OK = 0,
	CMD_NOT_FOUND = 1, /* no instance with that id in the sim */
	CMD_NO_MEMORY = 2, /* core or the codec could not allocate; nothing changed */
	CMD_CLOSED = 3,    /* the sim has stopped (shutting down) */
} cmd_result_t;

/* CMD_FRAME output: the state after the newest completed tick. xyz is malloc'ed by the
 * sim thread and owned by the submitter after cmdq_submit returns (free it). */
typedef struct cmd_frame_t {
	uint64_t tick; /* the tick this frame is the state after */
	double t;      /* tick / tick_hz, s */
	pt_pose head;  /* head pose used for that tick */
	uint32_t last_seq;
	uint64_t state_hash; /* pt_world_state_hash after that tick */
	int strand_count;
	int points[SERVER_MAX_STRANDS];
	int n;        /* points in xyz */
	pt_vec3 *xyz; /* strand by strand, root first, world metres */
	struct frame_snap_t *snap; /* instances_frame: the published snapshot it was read from
	                            * (a reference, frame_ring.h), or NULL; never set by the sim */
} cmd_frame_t;

typedef struct cmd_t {
	cmd_kind_t kind;
	uint64_t id;
	const pt_instance_def *def; /* CREATE/UPDATE: borrowed until cmdq_submit (or
	                             * cmdq_wait) returns; the sim copies what it keeps
	                             * into the world, the submitter finishes the def */
	driver_t driver;            /* CREATE/UPDATE */
	const interact_t *interaction; /* CREATE/UPDATE: borrowed like def; NULL: default */
	cmd_grab_t *grab;           /* GRAB, UNGRAB, GRABS, CONN_GONE: borrowed like def */
	char room[PT_NAME_MAX];     /* WIND */
	const pt_wind_zone *zones;  /* WIND: nzones of them (0: none), borrowed like def */
	int nzones;
	cmd_result_t result;        /* written by the sim thread */
	cmd_frame_t frame;          /* CMD_FRAME output */
	int done;                   /* internal */
	int detached;               /* internal: cmdq_post_detached's, freed when done */
	struct cmd_t *next;         /* internal */
} cmd_t;

/* One body bone's world pose that came with a head pose (protocol 1.2). */
typedef struct bone_in_t {
	pt_bone bone; /* admitted: [0, PT_BONE_COUNT) */
	pt_pose pose; /* admitted like the head's: finite, |p| <= 1e4 m, |q| = 1 */
} bone_in_t;

typedef struct pose_in_t {
	uint64_t id;
	uint32_t seq; /* echoed in frame records as last_seq; 0 = none given */
	pt_pose pose; /* admitted by instances_pose: finite, |p| <= 1e4 m, |q| = 1 */
	int moving;   /* v and w apply: the tick extrapolates from the pose's arrival */
	pt_vec3 v, w; /* m/s world, rad/s world axes; |v|, |w| <= 100 */
	int64_t arrival_ns; /* sim_mono_ns() when the door admitted it */
	uint64_t conn;      /* the WebSocket connection it came by (0: REST): hands it sends
	                     * are dropped when it closes (CMD_CONN_GONE) */
	int nbones;              /* body-bone poses, [0, PTP_MAX_POSE_BONES] */
	const bone_in_t *bones;  /* posting: the caller's; taken: the inbox's own copy */
} pose_in_t;

typedef struct cmdq_t cmdq_t;

/* pose_cap: poses the inbox holds between two ticks (more are refused). */
cmdq_t *cmdq_create(int pose_cap);
void cmdq_destroy(cmdq_t *q); /* NULL ok; no submitter may still be waiting */

/* Enqueues cmd and waits until the sim has applied it. Returns cmd->result. */
cmd_result_t cmdq_submit(cmdq_t *q, cmd_t *cmd);

/* The two halves of cmdq_submit, for writers that must enqueue under a lock (to keep the
 * store's order) but not wait under it: cmdq_push, release the lock, cmdq_wait. Every
 * pushed cmd must be waited for. */
void cmdq_push(cmdq_t *q, cmd_t *cmd);
cmd_result_t cmdq_wait(cmdq_t *q, cmd_t *cmd);

/* Enqueues a heap cmd (calloc'ed, its grab too) without waiting: the sim frees both once
 * applied (or at close). */
void cmdq_post_detached(cmdq_t *q, cmd_t *cmd);

/* Copies a pose (and its bones, into a side inbox of CMDQ_BONE_CAP bones) into the inbox.
 * Returns 0, -1 when the inbox is full, -2 when closed. */
enum { CMDQ_BONE_CAP = 1 << 16 }; /* 1213 poses of all 54 bones; pages touched as used */
int cmdq_post_pose(cmdq_t *q, const pose_in_t *p);

/* Sim thread: takes every queued command (oldest first, linked by next). */
cmd_t *cmdq_take(cmdq_t *q);

/* Sim thread: takes the pose inbox (*out valid until the next call; *n poses, oldest
 * first). Two buffers alternate so REST threads keep posting while the sim reads. */
void cmdq_take_poses(cmdq_t *q, const pose_in_t **out, int *n);

/* Sim thread: marks every command of the list done (results already set) and wakes the
 * submitters. The cmds must not be touched afterwards. */
void cmdq_complete(cmdq_t *q, cmd_t *list);

/* Sim thread, at stop: completes every queued command with CMD_CLOSED and makes every
 * later submit return CMD_CLOSED at once. */
void cmdq_close(cmdq_t *q);

#endif
