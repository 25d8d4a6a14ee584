/* Ponytail client library: a WebSocket client of ponytaild for native apps, engine plugins
 * and load generators. It speaks proto/PROTOCOL.md (subprotocol ponytail.v1) through the
 * proto codec, over libwebsockets (client side).
 *
 * What it does for a connection: connects, says hello, waits for welcome; authorizes
 * instances with their write tokens and publishes head poses for them; subscribes to
 * instances and rooms; decodes every frame record into world points and hands it to a
 * callback; measures latency; and, when the connection drops, reconnects with exponential
 * back-off and restores its authorizations and subscriptions.
 *
 * Model. A context (ptc_ctx_t) owns one libwebsockets client context and any number of
 * connections (ptc_conn_t) on it. Nothing runs in the background: the caller drives the
 * context with ptc_service() -- once per rendered frame with timeout 0, or in a loop of
 * its own with a timeout -- and every callback runs inside ptc_service(). One thread can
 * therefore hold thousands of connections (the load generator does), and no lock is ever
 * taken. An application that wants the network off its main thread runs ptc_service()
 * in a thread of its own and hands that thread work through its own queue, waking it
 * with ptc_wake().
 *
 * Threads. A context and its connections belong to the thread that calls ptc_service()
 * on it: every function here takes effect on that thread only, except ptc_wake(), which
 * any thread may call. Contexts are independent of each other. libwebsockets' log level
 * is process-wide; ptc_ctx_create() sets it to errors only, less the certificate
 * failures a connection reports itself (PTC_LWS_LOG=1 in the environment keeps all of
 * lws' errors, warnings and notices). From inside a callback, any function
 * may be called (ptc_close of the connection itself included) except ptc_service() and
 * ptc_ctx_destroy().
 *
 * Ownership. Every string and array passed in is copied; nothing passed to a callback
 * outlives the callback. A connection is freed by ptc_close() (or with its context).
 *
 * Latency. Input-to-frame latency is measured per frame record: the time from the
 * ptc_publish() call that produced a record's last_seq to the receipt, on each connection,
 * of the first record carrying it (latency_us), and per pose for every pose a record is
 * the first to reflect (first_new_seq .. last_seq, ptc_pose_latency_us()). Send times are kept per context, so a record received on one
 * connection is matched with a pose published on another connection of the same context. Poses
 * published from another process give no latency (-1); delivery latency (tick deadline to
 * receipt, from a clock offset measured by ping/pong) works for any frame.
 *
 * Sequence numbers. ptc_publish() numbers the poses of each instance; the first number
 * is taken from the wall clock in milliseconds, so a restarted publisher continues above
 * the numbers of the one before (the server drops a pose older than one it applied).
 */
#ifndef PONYTAIL_CLIENT_H
#define PONYTAIL_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "ptp/proto.h"

typedef struct ptc_ctx_t ptc_ctx_t;
typedef struct ptc_conn_t ptc_conn_t;

/* Results of the functions returning int: 0 or one of these (negative). */
enum {
	PTC_OK = 0,
	PTC_EINVAL = -1,    /* an argument outside its documented range */
	PTC_ENOMEM = -2,    /* allocation failed */
	PTC_ENOTREADY = -3, /* the connection has no welcome yet (poses are not queued) */
	PTC_EFULL = -4,     /* the send queue is full (the socket does not drain) */
	PTC_ELIMIT = -5,    /* too many authorizations or subscriptions for this connection */
	PTC_ECLOSED = -6,   /* the connection gave up (see ptc_conn_last_error) */
};

/* "ok", "invalid argument", ...; never NULL. */
const char *ptc_strerror(int rc);

typedef enum ptc_state_t {
	PTC_CONNECTING = 1, /* TCP + WebSocket handshake, then hello until welcome */
	PTC_READY = 2,      /* welcome received: publishing and frames flow */
	PTC_RETRYING = 3,   /* lost; the next attempt is scheduled (back-off) */
	PTC_CLOSED = 4,     /* lost for good: reconnect off, or a server that will not talk */
} ptc_state_t;

/* "connecting", "ready", "retrying", "closed". */
const char *ptc_state_name(ptc_state_t s);

/* One instance's frame, decoded. Everything pointed to is borrowed until the callback
 * returns. */
typedef struct ptc_frame_t {
	uint64_t id;              /* instance id */
	uint64_t tick;            /* the server tick this frame is the state after */
	double t;                 /* tick / tick_hz, s */
	int64_t server_time_us;   /* server clock at the tick's deadline, us */
	uint32_t last_seq;        /* seq of the newest head pose applied (0: none yet) */
	int key;                  /* 1: a keyframe record */
	float head_p[3];          /* head position used for this tick, m */
	double head_q[4];         /* head orientation used (x, y, z, w), unit */
	const ptp_shape_t *shape; /* the instance's shape (from its instance_event) */
	const float *xyz;         /* 3 * n_points world positions, strand by strand, root
	                             first; NULL when decoding is off, or when this record could
	                             not be applied (a keyframe has then been requested) */
	size_t n_points;
	int64_t recv_us;     /* monotonic clock when the message arrived, us (ptc_now_us) */
	int64_t latency_us;  /* input-to-frame latency (see top), or -1: last_seq was not
	                        published through this context, or is not new on this
	                        connection */
	uint32_t first_new_seq; /* this record is the first on its connection to reflect the
	                           poses first_new_seq .. last_seq (0: none is new; only
	                           last_seq on the instance's first record): each pose's own
	                           latency is ptc_pose_latency_us() */
	int64_t delivery_us; /* receipt minus the tick deadline (clock offset from ping/pong),
	                        or -1 before the first pong */
	int has_hash;        /* protocol 1.4 and a keyframe record: state_hash was sent */
	uint64_t state_hash; /* the instance's state hash after this tick (the REST frame's
	                        "state_hash"), when has_hash */
} ptc_frame_t;

/* An instance_event: kind is PTP_EVENT_ADDED, _REMOVED, _CHANGED or _RESET. */
typedef struct ptc_event_t {
	int kind;
	uint64_t id;
	uint64_t tick;            /* first tick the event applies to */
	const char *name, *room;  /* NUL-terminated; "" for REMOVED */
	const ptp_shape_t *shape; /* NULL for REMOVED */
} ptc_event_t;

/* An error message from the server (PROTOCOL.md section 9). */
typedef struct ptc_error_t {
	int code;             /* ptp_code_t; other values are shown as "error N" */
	const char *name;     /* "unauthorized", ... */
	int closing;          /* the server closes the connection after it */
	int about_type;       /* message type that caused it, 0 if none */
	uint64_t instance_id; /* instance concerned, 0 if none */
	const char *text;     /* NUL-terminated */
} ptc_error_t;

/* Callbacks, all optional (NULL). `user` is ptc_conn_params_t.user. */
typedef struct ptc_callbacks_t {
	/* The state changed; why is a short reason for RETRYING/CLOSED ("" otherwise). */
	void (*on_state)(ptc_conn_t *c, ptc_state_t state, const char *why, void *user);
	/* A frame_batch begins: `records` on_frame calls follow for this tick. */
	void (*on_batch)(ptc_conn_t *c, uint64_t tick, int64_t server_time_us, int records,
	                 void *user);
	void (*on_frame)(ptc_conn_t *c, const ptc_frame_t *f, void *user);
	void (*on_event)(ptc_conn_t *c, const ptc_event_t *e, void *user);
	void (*on_error)(ptc_conn_t *c, const ptc_error_t *e, void *user);
} ptc_callbacks_t;

typedef struct ptc_conn_params_t {
	const char *url;         /* ws://host[:port][/path] (port default 80), or wss://...
	                            (TLS, port default 443; see ptc_tls_t) */
	const char *client_name; /* hello's client_name, at most 64 bytes of UTF-8 */
	int decode;              /* 1: reconstruct strand points (~50 ns per point); 0: records
	                            only (load generators) */
	int reconnect;           /* 1: reconnect after a loss; 0: go to PTC_CLOSED */
	int backoff_min_ms;      /* first retry delay, [10, 60000]; doubles per failed attempt */
	int backoff_max_ms;      /* largest retry delay, [backoff_min_ms, 600000] */
	int ping_interval_ms;    /* ping/pong for RTT and clock offset, [100, 600000]; 0 off */
	ptc_callbacks_t cb;
	void *user;
} ptc_conn_params_t;

/* decode 1, reconnect 1, back-off 250 ms .. 10 s, ping every 2 s, client_name
 * "ponytail-client", url NULL (to be set). */
ptc_conn_params_t ptc_conn_params_default(void);

/* A head pose. q need not be unit (|q|^2 in [0.25, 4]); v and w are sent when has_v /
 * has_w. bones (protocol 1.2): world poses of body bones sent with it (bone ids of
 * PROTOCOL.md, ptp_bone_from_name), moving the colliders attached to them; dropped when
 * the server negotiated 1.0 / 1.1 (it would ignore them). */
typedef struct ptc_pose_t {
	float p[3]; /* world position, m */
	float q[4]; /* x, y, z, w */
	int has_v, has_w;
	float v[3]; /* linear velocity, m/s, world axes */
	float w[3]; /* angular velocity, rad/s, world axes */
	int nbones; /* [0, PTP_MAX_POSE_BONES] */
	ptp_bone_pose_t bones[PTP_MAX_POSE_BONES];
} ptc_pose_t;

/* What the server said in welcome. */
typedef struct ptc_server_t {
	int minor; /* negotiated minor version */
	int tick_hz, substeps, keyframe_interval;
	uint32_t max_message;
	int max_subscriptions;
	uint64_t tick; /* server tick at welcome */
	char version[PTP_MAX_TEXT + 1];
	float max_error_m; /* decoded points lie within this of the server's, m (1.0: 0.001) */
} ptc_server_t;

/* Counters since ptc_connect(), over every reconnection. Bytes and messages count
 * protocol messages (WebSocket framing not included). */
typedef struct ptc_stats_t {
	uint64_t connects;         /* welcomes received */
	uint64_t connect_failures; /* attempts lost before their welcome */
	uint64_t disconnects;      /* ready connections lost */
	uint64_t bytes_in, bytes_out, msgs_in, msgs_out;
	uint64_t batches, records, keyframes;
	uint64_t ticks_skipped;   /* gaps between consecutive batch ticks while ready */
	uint64_t decode_errors;   /* messages or records that failed to decode */
	uint64_t poses_sent;      /* head_pose messages written */
	uint64_t poses_coalesced; /* poses replaced by a newer one before they were written */
	uint64_t server_errors[PTP_CODE_SHUTDOWN + 1]; /* by code; [0]: unknown codes */
	int64_t rtt_us;                                /* latest ping round trip, -1 none */
} ptc_stats_t;

/* Monotonic clock, us: the clock of recv_us. */
int64_t ptc_now_us(void);

/* Input-to-frame latency of pose `seq` of frame f's instance, if f is the first record
 * on c to reflect it (f->first_new_seq <= seq <= f->last_seq, see ptc_frame_t): f's
 * receipt minus that pose's ptc_publish() on any connection of c's context, us; -1
 * otherwise (not new, not published here, or older than the ~8 s of times kept). When
 * two poses reach one tick, the frame reflects both and the older waited longer: a
 * latency distribution over poses takes every seq of the range, not only last_seq. */
int64_t ptc_pose_latency_us(const ptc_conn_t *c, const ptc_frame_t *f, uint32_t seq);

/* A new context. NULL on failure, with a reason in err (errlen > 0). Same as
 * ptc_ctx_create_tls(NULL, ...): wss:// URLs are verified against the system's CAs. */
ptc_ctx_t *ptc_ctx_create(char *err, size_t errlen);

/* TLS for the wss:// connections of a context (OpenSSL, through libwebsockets). The
 * server's certificate is verified by default: its chain must lead to a trusted CA and its
 * name (DNS or IP subjectAltName) must match the URL's host. */
typedef struct ptc_tls_t {
	const char *ca_file; /* PEM file of the CA(s) to trust instead of the system's; NULL:
	                        the system's (/etc/ssl/certs) */
	int insecure;        /* 1: skip verification (any certificate, any name, expired):
	                        the traffic is encrypted but the server is not authenticated */
} ptc_tls_t;

/* A context whose wss:// connections use tls (NULL: the defaults above). NULL on failure
 * with a reason in err: the CA file cannot be read or holds no certificate. A certificate
 * the server presents that does not verify ends the connection attempt for good
 * (PTC_CLOSED, reconnect or not) with a reason that starts "TLS: ". */
ptc_ctx_t *ptc_ctx_create_tls(const ptc_tls_t *tls, char *err, size_t errlen);

/* Closes every connection (without callbacks) and frees the context. NULL ok. */
void ptc_ctx_destroy(ptc_ctx_t *ctx);

/* Waits up to timeout_ms (0: do not wait; < 0: until something happens) for network
 * activity and timers, handles what is ready (calling the callbacks) and returns: early
 * after any activity. Returns 0, or -1 when the event loop failed. */
int ptc_service(ptc_ctx_t *ctx, int timeout_ms);

/* Makes a ptc_service() blocked in another thread return soon. Any thread. */
void ptc_wake(ptc_ctx_t *ctx);

/* Starts a connection (the first attempt happens in the next ptc_service). Returns NULL
 * with a reason in err when a parameter is invalid or memory is short. */
ptc_conn_t *ptc_connect(ptc_ctx_t *ctx, const ptc_conn_params_t *p, char *err, size_t errlen);

/* Closes the connection (a normal WebSocket close) and frees it once libwebsockets lets
 * go; no callback runs for it after this call. NULL ok. */
void ptc_close(ptc_conn_t *c);

ptc_state_t ptc_conn_state(const ptc_conn_t *c);

/* The last reason the connection was lost or an attempt failed ("" if none); borrowed
 * until the next ptc_service. */
const char *ptc_conn_last_error(const ptc_conn_t *c);

/* The welcome of the current (or last) session; NULL before the first. */
const ptc_server_t *ptc_conn_server(const ptc_conn_t *c);

void ptc_conn_stats(const ptc_conn_t *c, ptc_stats_t *out);

/* Grants this connection the right to publish poses for instance id (token: 1..128
 * bytes). Remembered and sent again after every reconnect; a wrong token is reported by
 * on_error (unauthorized). PTC_ELIMIT beyond 64 instances. */
int ptc_authorize(ptc_conn_t *c, uint64_t id, const char *token);

/* Subscribes to a whole room (NULL or "" for none) and/or n instance ids (n <= 256).
 * Remembered and sent again after every reconnect; PTC_ELIMIT past the server's
 * max_subscriptions (1024 before the first welcome). Unknown ids are reported by
 * on_error (not_found). */
int ptc_subscribe(ptc_conn_t *c, const char *room, const uint64_t *ids, int n);
int ptc_unsubscribe(ptc_conn_t *c, const char *room, const uint64_t *ids, int n);

/* Queues a head pose for an authorized instance; *seq (optional) receives its sequence
 * number. A pose of the same instance still waiting in the queue is replaced (the newest
 * pose wins). PTC_ENOTREADY when not READY, PTC_EINVAL for a non-finite pose or an
 * instance not authorized on this connection. */
int ptc_publish(ptc_conn_t *c, uint64_t id, const ptc_pose_t *pose, uint32_t *seq);

/* Sends a ping now (pongs update rtt_us and the clock offset). */
int ptc_ping(ptc_conn_t *c);

/* Joint rotations for a skinned hair chain (joints.c; the JS module's jointRotations):
 * joint i sits at point i, bone i runs to point i + 1; every joint's rest rotation is the
 * identity, so bone i's rest direction is rest[i+1] - rest[i] in the frame of the chain's
 * parent. out[i] (x, y, z, w) is joint i's local rotation, as a glTF node rotation: the
 * shortest arc from the bone's rest direction to its direction in the frame (pts) seen
 * from the parent joint, composed root to tip as VRMC_springBone does. With
 * W_i = parent_q * out[0] * ... * out[i], p[0] = pts[0] and
 * p[i+1] = p[i] + W_i (rest[i+1] - rest[i]) give back pts (when the segment lengths are the
 * rest ones). out[n-1] is the identity (no bone to aim). For a joint with rest rotation
 * I_i, use I_i * (C_i^-1 * out[i] * C_i), C_i = I_0 * ... * I_i.
 * rest (parent frame), pts (world): n points (x, y, z); parent_q: the parent's world
 * rotation (normalised here; NULL = identity). PTC_OK, or PTC_EINVAL (out untouched) for
 * n < 2, a NULL array, a non-finite value, a segment shorter than 1 nm (rest or frame) or
 * a parent rotation of norm ~0. Pure: any thread. */
int ptc_joint_rotations(const float *rest, const float *pts, int n, const float parent_q[4],
                        float *out);

/* ws://host:port/path (or wss://) split into its parts (copied into the caller's
 * buffers); the port defaults to 80 (443 for wss://). 0, or -1 with a reason in err.
 * Exposed for the CLI, which builds WebSocket URLs from REST ones. */
int ptc_url_parse(const char *url, char *host, size_t host_cap, int *port, char *path,
                  size_t path_cap, char *err, size_t errlen);

#endif
