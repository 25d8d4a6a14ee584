/* The one door for every change to an instance: create, patch, delete, reset and head
 * poses, plus the reads the edges need (get, list, count, authorize, frame). REST
 * (rest_instances.c, rest.c) and WebSocket (ws.c) handlers translate a request into one
 * of these calls and its result into an answer; they never touch the store, the registry
 * or the command queue themselves (`make check-layers` greps for it).
 *
 * A write keeps one order for the three places an instance lives outside the sim thread:
 * under the writer lock it writes the store (durable, fsync'ed), updates the registry and
 * pushes the sim command; then, outside the lock, it waits for the sim to apply it. When
 * the sim cannot (out of memory) the write is rolled back in the store and the registry
 * before the call returns. server/README.md draws the map of ids and tables.
 *
 * Poses are admitted here and nowhere else, in this order: p finite and within
 * PTP_POSE_MAX_M on each axis, q finite with |q|^2 in [PTP_QUAT_NORM2_MIN,
 * PTP_QUAT_NORM2_MAX] (ptp/proto.h), seq in [0, 2^32); at most PTP_MAX_POSE_BONES body
 * bones, each a pt_bone with p and q under the head's rules (fields "bones[i].bone", ".p",
 * ".q"; "bones.<name>", ".p", ".q" for a bone the edge took by name); a bone the instance
 * does not use is admitted (core holds it; it moves nothing there);
 * the instance exists; it has no driver; the caller's rate bucket (when given) has a
 * token. Then q (and every bone's) is normalised and the pose goes to the sim's inbox,
 * bones with it, once. Every outcome is counted in the pose metrics.
 *
 * Errors: one type, inst_err_t; inst_http_status() and inst_ptp_code() map its status
 * for the two edges. The message is ready to show ("no instance 7", "strands: ...").
 *
 * Threading (all calls take the app_t of main.c, borrowed):
 *  - instances_create/patch/delete/reset/frame: any thread except the sim thread and the
 *    WebSocket service thread. They block on the writer lock (held by another writer
 *    through its store write and fsync), their own store write, and the sim's next tick
 *    (cmdq_wait, outside the lock): usually a disk write plus up to one tick.
 *  - instances_pose/authorize/get/list/count: any thread except the sim thread; they take
 *    only the registry's read lock and the inbox mutex, never wait for a tick, and are
 *    what the WebSocket service thread may call.
 *  - instances_load: the main thread, before the sim starts.
 * The door owns one thing, the writer lock (lock order: writer lock -> registry rwlock ->
 * command queue); everything a call returns is owned by the caller (free with the named
 * function). The store, registry, queue and sim are main.c's, borrowed through app_t.
 */
#ifndef SERVER_INSTANCES_H
#define SERVER_INSTANCES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "app.h"
#include "ptp/proto.h"
#include "shared_limits.h"

typedef enum inst_status_t {
	INST_OK = 0,
	INST_INVALID,   /* the definition or pose breaks a rule; field names it */
	INST_NOT_FOUND, /* no instance with that id */
	INST_FORBIDDEN, /* the token does not grant writes to the instance */
	INST_DRIVEN,    /* a pose for an instance its driver moves */
	INST_RATE,      /* the caller's pose rate bucket is empty */
	INST_BUSY,      /* the pose inbox is full this tick */
	INST_FULL,      /* --max-instances reached */
	INST_CLOSED,    /* the server is shutting down */
	INST_NO_MEMORY, /* out of memory, or no random bytes for a token */
	INST_STORE,     /* the store could not write */
	INST_CONFLICT,  /* a grab the instance's state refuses now (limit, point taken, no hand) */
} inst_status_t;

typedef struct inst_err_t {
	inst_status_t status;
	int has_field;  /* 0: about the request as a whole (REST "field": null) */
	char field[96]; /* JSON path of the offending value ("strands[0].points", "p", "id") */
	char message[384];
} inst_err_t;

/* REST: the HTTP status of s (422, 404, 403, 409, 429, 503; 200 for INST_OK). */
unsigned inst_http_status(inst_status_t s);

/* WebSocket: the protocol error code of s (PTP_CODE_LIMIT for INST_INVALID, ...; 0 for
 * INST_OK). */
ptp_code_t inst_ptp_code(inst_status_t s);

/* One instance as the edges show it. doc: its canonical definition text (malloc'ed);
 * token: set by instances_create only, shown once. Release with inst_view_free. */
typedef struct inst_view_t {
	reg_info_t info;
	char *doc;
	char token[TOKEN_LEN + 1];
} inst_view_t;

void inst_view_free(inst_view_t *v); /* frees doc, wipes the token; NULL ok */

/* Creates an instance from a definition document (borrowed JSON object). route_room: the
 * room a proxy routed the request by (NULL when none); the definition's room must equal
 * it. Checks --max-points and --max-instances. Returns INST_OK with *out filled (a new
 * public id and its token), or the error (nothing stored). */
inst_status_t instances_create(app_t *app, const json_t *doc, const char *route_room,
                               inst_view_t *out, inst_err_t *err);

/* Applies a JSON merge patch (RFC 7386, borrowed) to instance id's stored document,
 * validates the result as a whole and replaces the definition at a tick boundary. A
 * patch that changes nothing writes nothing. INST_OK with *out = the new state. */
inst_status_t instances_patch(app_t *app, uint64_t id, const json_t *patch, const char *route_room,
                              inst_view_t *out, inst_err_t *err);

/* Deletes id from the store, the registry and the sim. */
inst_status_t instances_delete(app_t *app, uint64_t id, inst_err_t *err);

/* Puts id's strands back to their settled rest pose at the next tick. */
inst_status_t instances_reset(app_t *app, uint64_t id, inst_err_t *err);

/* The state after the newest published tick into *out; release it with
 * inst_frame_release (also on error). Never waits for a tick when the newest frame set
 * holds a snapshot of id (frame_ring_snapshot: the sim keeps making them for one second
 * after any read of id); otherwise (the first read, or the first after a quiet second)
 * it reads through the command queue and waits for the next tick. Both give the same
 * state: the points after the newest completed tick. */
inst_status_t instances_frame(app_t *app, uint64_t id, cmd_frame_t *out, inst_err_t *err);

/* A body rendered for out's tick by an earlier reader (NUL-terminated), or NULL. When
 * NULL, the caller may offer its rendering with inst_frame_keep_text (ownership of the
 * malloc'ed text moves; the kept text is returned) so that later reads of the same tick
 * copy it instead of rendering again. Without a snapshot keep frees text and returns
 * NULL. */
const char *inst_frame_text(const cmd_frame_t *f);
const char *inst_frame_keep_text(cmd_frame_t *f, char *text);
void inst_frame_release(cmd_frame_t *f); /* frees xyz, drops the snapshot */

/* A head pose as an edge received it, not yet checked. REST passes NaN for a p or q it
 * could not read and -1 for an unreadable seq, so every rule is checked in one order. */
typedef struct inst_pose_t {
	uint64_t id;
	int64_t seq; /* [0, 2^32); 0 = none given */
	double p[3]; /* metres */
	double q[4]; /* x, y, z, w; need not be unit */
	int moving;  /* v and w given: the tick extrapolates the head from this pose */
	double v[3]; /* m/s, world; |v| <= 100 */
	double w[3]; /* rad/s, world axes; |w| <= 100 */
	uint64_t conn; /* the WebSocket connection it came by (0: REST): hand bones it
	                * carries stop colliding when it closes (instances_conn_gone) */
	int nbones;  /* body-bone poses (protocol 1.2), [0, PTP_MAX_POSE_BONES] */
	struct {
		int bone;    /* pt_bone; -1 when the edge could not read it */
		const char *name; /* REST: the name it came by (borrowed, names the error
		                   * field); NULL: the wire's id, named by index */
		double p[3]; /* world, m: the head's rules */
		double q[4]; /* need not be unit */
	} bones[PTP_MAX_POSE_BONES];
} inst_pose_t;

/* A pose rate token bucket, held by the caller per (connection, instance): --pose-rate
 * per second, a quarter second of burst (at least 8). Fill with inst_rate_init. */
typedef struct inst_rate_t {
	double tokens;
	int64_t last_ns;
} inst_rate_t;

void inst_rate_init(const app_t *app, inst_rate_t *r);

/* Admits a pose (see the header comment) and posts it for the next tick. rate: the
 * caller's bucket, or NULL for none (REST: its --write-rate applies per request). */
inst_status_t instances_pose(app_t *app, const inst_pose_t *pose, inst_rate_t *rate,
                             inst_err_t *err);

/* The write check of REST and WebSocket alike: the instance's own token, or the
 * --admin-token. INST_OK, INST_FORBIDDEN or INST_NOT_FOUND. */
inst_status_t instances_authorize(const app_t *app, uint64_t id, const char *token, size_t len,
                                  inst_err_t *err);

/* Reads: id's info and canonical document into *out. */
inst_status_t instances_get(const app_t *app, uint64_t id, inst_view_t *out, inst_err_t *err);

/* The info of every instance of `room` (NULL: all), in id order: *out malloc'ed (caller
 * frees), *n entries. */
inst_status_t instances_list(const app_t *app, const char *room, reg_info_t **out, int *n,
                             inst_err_t *err);

int instances_count(const app_t *app);

/* ---- avatars (instances_avatar.c) ----
 * An avatar file (.vrm) per instance, kept in the store, deleted with the instance. Any
 * thread but the sim thread; they block on the store's mutex (a write: one fsync). */

/* The spring bones of a VRM (GLB bytes, borrowed) as an instance definition and the
 * importer's report (new references into *definition, *report), the code of `ponytail
 * import-vrm`. INST_INVALID (field "body", the importer's reason) when it is not a file the
 * importer accepts or larger than --max-avatar. Changes nothing. */
inst_status_t instances_import_vrm(const app_t *app, const uint8_t *glb, size_t len,
                                   json_t **definition, json_t **report, inst_err_t *err);

/* Stores (replaces) id's avatar after checking it as instances_import_vrm does. INST_OK,
 * INST_INVALID, INST_NOT_FOUND, INST_CLOSED or INST_STORE. */
inst_status_t instances_avatar_put(app_t *app, uint64_t id, const uint8_t *glb, size_t len,
                                   inst_err_t *err);

/* id's avatar into *glb (malloc'ed, caller frees) and *len; INST_NOT_FOUND when the
 * instance or its avatar does not exist (field "id" only for the instance). */
inst_status_t instances_avatar_get(const app_t *app, uint64_t id, uint8_t **glb, size_t *len,
                                   inst_err_t *err);

/* The bytes of id's avatar, or -1 when it has none (or the store cannot say). */
int64_t instances_avatar_size(const app_t *app, uint64_t id);

/* ---- rooms (instances_room.c) ----
 * A room's settings: its wind (server/README.md "Room wind"), kept in the store's rooms
 * table and the registry, given by the sim to every instance of the room. */

/* The write check of a room's settings: the --admin-token when one is set, else the token
 * of any instance in the room. INST_OK or INST_FORBIDDEN. */
inst_status_t instances_room_authorize(const app_t *app, const char *room, const char *token,
                                       size_t len, inst_err_t *err);

/* The room's wind document, {"zones": [...]} ({"zones": []} for a room without), into
 * *doc (malloc'ed, caller frees). INST_INVALID for a bad room name (field "room"). */
inst_status_t instances_wind_get(const app_t *app, const char *room, char **doc,
                                 inst_err_t *err);

/* Replaces the room's wind with `body` (merge = 0, PUT) or with the stored document
 * merge-patched by it (merge = 1, PATCH; RFC 7386), checked as a whole (field names like
 * "zones[2].radius"), stored, and given to every instance of the room at a tick boundary;
 * {"zones": []} removes it. route_room: as for instances_create. INST_OK with *doc = the
 * new document (malloc'ed); on any error nothing changed. */
inst_status_t instances_wind_set(app_t *app, const char *room, const json_t *body, int merge,
                                 const char *route_room, char **doc, inst_err_t *err);

/* ---- grabs (instances_grab.c) ----
 * One instance's hand holding a point of another (server/README.md "Touch and grabs").
 * Kept by the sim only (a restart ends them); each call waits for the tick that applies
 * it, so it is not for the WebSocket service thread (instances_grab_post is). */

/* pt_bone of a hand or finger bone's name ("right_hand", "left_index_distal"), else -1. */
int instances_grab_bone(const char *name);

/* POST /v1/instances/{id}/grabs: body {"by", "strand", "point", "bone"} (borrowed), token
 * the grabber's (or the admin token). INST_OK with *out (its gid), or: INST_NOT_FOUND
 * ("id"), INST_INVALID naming "by", "strand", "point", "bone" or an unknown field,
 * INST_FORBIDDEN (a wrong token: no field; no grant: "interaction.grab"), INST_CONFLICT
 * ("grabs": the instance's limit, PT_MAX_GRABS; "point": already grabbed; "bone": no fresh
 * pose of that bone from the grabber). */
inst_status_t instances_grab(app_t *app, uint64_t id, const json_t *body, const char *token,
                             size_t len, grab_info_t *out, inst_err_t *err);
/* The same from a request already read (req: instance, by, strand, point, bone); conn: the
 * WebSocket connection asking (its grabs end when it closes), 0 for none. */
inst_status_t instances_grab_new(app_t *app, const grab_info_t *req, const char *token,
                                 size_t len, uint64_t conn, grab_info_t *out, inst_err_t *err);
/* The grabs of instance id (*list malloc'ed, the caller frees; at most PT_MAX_GRABS). */
inst_status_t instances_grabs(app_t *app, uint64_t id, grab_info_t **list, int *n,
                              inst_err_t *err);
/* Ends grab gid of instance id; token: the grabbed instance's, the grabber's or the admin
 * token. INST_NOT_FOUND ("id" or "grab"), INST_FORBIDDEN. */
inst_status_t instances_release(app_t *app, uint64_t id, uint64_t gid, const char *token,
                                size_t len, inst_err_t *err);
/* WebSocket (protocol 1.5) grab and release: checked here as far as the registry can
 * (INST_NOT_FOUND "id", INST_INVALID), then posted without waiting; the sim answers at the
 * tick that applies it with frame_ring_reply (grab_result, or the error with the REST
 * refusal's text), to connection `conn` with its `ref`. The grabber must be authorized on
 * the connection (the caller checks); a release names the ids authorized there (`may`):
 * the grabbed instance or the grabber must be among them. */
inst_status_t instances_grab_post(app_t *app, const grab_info_t *req, uint64_t conn,
                                  uint32_t ref, inst_err_t *err);
inst_status_t instances_release_post(app_t *app, uint64_t id, uint64_t gid, uint64_t conn,
                                     uint32_t ref, const uint64_t *may, int nmay,
                                     inst_err_t *err);
/* A WebSocket connection closed: at the next tick its grabs end and the hand bones it
 * sent stop colliding. Never waits (any thread, the WebSocket service thread included). */
void instances_conn_gone(app_t *app, uint64_t conn);

/* Start-up, before instances_load (main.c): every stored room wind into the registry and
 * the sim. A row that no longer parses is logged and skipped. 0 or -1. */
int instances_load_rooms(app_t *app);

/* Start-up: every stored instance into the registry and the sim (sim_preload). A row that
 * no longer parses is logged and skipped (the row is kept). Returns 0, or -1 when the
 * store cannot be read or memory runs out. */
int instances_load(app_t *app, int *loaded, int *skipped);

#endif
