/* Ponytail wire protocol (proto/PROTOCOL.md is the contract): messages.
 *
 * Every message is one binary WebSocket message: a 10-byte header (magic "PT", major,
 * minor, type, reserved, u32 payload length) and a payload whose fields are written one
 * by one, little-endian. This header declares the message structs, the encoder and the
 * decoder. The strand codec (what goes inside a frame record's data) is ptp/strand.h.
 *
 * Threading: every function here is pure (no globals, no allocation); call from any thread.
 * Ownership: a decoded message BORROWS from the input buffer (strings, frame records):
 * it is valid only while that buffer is alive and unchanged. Encoders never keep pointers.
 */
#ifndef PTP_PROTO_H
#define PTP_PROTO_H

#include <stddef.h>
#include <stdint.h>

enum {
	PTP_MAJOR = 1,                 /* a different major is a different protocol */
	PTP_MINOR = 5,                 /* newer minors only append; see PROTOCOL.md section 3 */
	PTP_MINOR_HASH = 4,            /* the minor from which key records carry the state hash */
	PTP_MINOR_GRAB = 5,            /* the minor of grab, release, grab_result and error's ref */
	PTP_STATE_HASH_SIZE = 8,       /* bytes of a record's state hash (a u64) */
	PTP_HEADER_SIZE = 10,          /* bytes before the payload */
	PTP_MAX_PAYLOAD = 1 << 20,     /* largest payload either side accepts, bytes */
	PTP_MAX_CLIENT_MESSAGE = 4096, /* largest client->server message the server accepts */
	PTP_MAX_IDS = 256,    /* instance ids in one subscribe/unsubscribe/keyframe request */
	PTP_MAX_NAME = 64,    /* bytes of a client/instance name or room (UTF-8, no NUL) */
	PTP_MAX_TOKEN = 128,  /* bytes of an instance write token */
	PTP_MAX_TEXT = 255,   /* bytes of an error text or server version */
	PTP_MAX_STRANDS = 256,   /* strands per instance since 1.3 (= core's PT_MAX_STRANDS) */
	PTP_MAX_STRANDS_1_2 = 32, /* strands per instance in a 1.0 to 1.2 message */
	PTP_MAX_POINTS = 64,  /* points per strand incl. the root (= PT_MAX_POINTS) */
	PTP_RECORD_MIN = 33,  /* bytes of a frame record with empty strand data */
	PTP_BONE_COUNT = 54,     /* bone ids 0..53: PROTOCOL.md's table (= core's pt_bone) */
	PTP_MAX_POSE_BONES = PTP_BONE_COUNT, /* body-bone poses in one head_pose (since 1.2):
	                                      * every bone once; a repeated id is allowed, the
	                                      * later wins */
	PTP_BONE_SIZE = 29       /* bytes of one bone pose on the wire */
};

/* Head pose bounds, shared by the decoder (q), the server's pose admission (p and q) and
 * the clients that check before sending: |q|^2 in [PTP_QUAT_NORM2_MIN, PTP_QUAT_NORM2_MAX]
 * (the server normalises), and a head further than PTP_POSE_MAX_M from the origin on any
 * axis is refused by the server (a unit mix-up, not a place). */
#define PTP_QUAT_NORM2_MIN 0.25
#define PTP_QUAT_NORM2_MAX 4.0
#define PTP_POSE_MAX_M 1e4

/* Decoder and encoder results. Values are stable (they appear in the golden vectors by
 * name, see ptp_err_name). */
typedef enum ptp_err_t {
	PTP_OK = 0,
	PTP_ETRUNC = 1,    /* the bytes end before a field does */
	PTP_EMAGIC = 2,    /* the message does not start with "PT" */
	PTP_EVERSION = 3,  /* major version other than PTP_MAJOR */
	PTP_ETYPE = 4,     /* unknown message type (the connection may continue) */
	PTP_ETOOBIG = 5,   /* declared payload longer than PTP_MAX_PAYLOAD */
	PTP_ELENGTH = 6,   /* bytes after the payload length the header declares */
	PTP_ETRAILING = 7, /* payload longer than its fields (same or older minor) */
	PTP_ECOUNT = 8,    /* a count needs more bytes than are left */
	PTP_ELIMIT = 9,    /* a count or length above its protocol limit */
	PTP_EFLOAT = 10,   /* NaN or infinity in a float field */
	PTP_ERANGE = 11,   /* a value outside its documented range */
	PTP_EUTF8 = 12,    /* a string that is not UTF-8 or contains NUL */
	PTP_EFLAGS = 13,   /* reserved bits or bytes not zero */
	PTP_ESHAPE = 14,   /* strand data does not match the instance shape */
	PTP_ENOKEY = 15,   /* strand delta without the keyframe it builds on */
	PTP_ENOSPACE = 16, /* encoder: caller buffer too small (size needed is reported) */
	PTP_EINVAL = 17,   /* encoder: argument outside its documented range */
	PTP_ENOMEM = 18,   /* allocation failed */
	PTP_ERR_COUNT
} ptp_err_t;

/* "ok", "truncated", ... (the names used by PROTOCOL.md and the vectors). Never NULL. */
const char *ptp_err_name(ptp_err_t e);

/* The message catalogue, declared once: X(NAME, code, lower_name). Client -> server codes
 * are 0x01..0x7f, server -> client 0x81..0xff. */
#define PTP_MESSAGES(X)                                                                            \
	X(HELLO, 0x01, hello)                                                                      \
	X(AUTHORIZE, 0x02, authorize)                                                              \
	X(SUBSCRIBE, 0x03, subscribe)                                                              \
	X(UNSUBSCRIBE, 0x04, unsubscribe)                                                          \
	X(HEAD_POSE, 0x05, head_pose)                                                              \
	X(KEYFRAME_REQUEST, 0x06, keyframe_request)                                                \
	X(PING, 0x07, ping)                                                                        \
	X(GRAB, 0x08, grab)                                                                        \
	X(RELEASE, 0x09, release)                                                                  \
	X(WELCOME, 0x81, welcome)                                                                  \
	X(FRAME_BATCH, 0x82, frame_batch)                                                          \
	X(INSTANCE_EVENT, 0x83, instance_event)                                                    \
	X(PONG, 0x84, pong)                                                                        \
	X(ERROR, 0x85, error)                                                                      \
	X(GRAB_RESULT, 0x88, grab_result)

typedef enum ptp_type_t {
#define PTP_X_ENUM(NAME, code, name) PTP_##NAME = code,
	PTP_MESSAGES(PTP_X_ENUM)
#undef PTP_X_ENUM
} ptp_type_t;

/* "hello", ...; NULL for a code that is not a message type. */
const char *ptp_type_name(int type);
/* Body-bone id <-> snake_case VRM name ("chest", "left_upper_arm"); NULL / -1 when
 * unknown. The ids of head_pose's bones (since 1.2), PROTOCOL.md section 5. */
const char *ptp_bone_name(int id);
int ptp_bone_from_name(const char *name);
/* The type for a name, or -1. */
int ptp_type_from_name(const char *name);

/* A borrowed UTF-8 string, not NUL-terminated. */
typedef struct ptp_str_t {
	const char *ptr;
	size_t len;
} ptp_str_t;

/* Error codes carried by ERROR messages (PROTOCOL.md "Errors"). */
typedef enum ptp_code_t {
	PTP_CODE_BAD_MESSAGE = 1,    /* undecodable message: closes (1002) */
	PTP_CODE_VERSION = 2,        /* unsupported major version: closes (1002) */
	PTP_CODE_UNKNOWN_TYPE = 3,   /* unknown message type: kept open */
	PTP_CODE_TOO_LARGE = 4,      /* message above the limit: closes (1009) */
	PTP_CODE_UNAUTHORIZED = 5,   /* bad token, or pose without authorize: kept open */
	PTP_CODE_NOT_FOUND = 6,      /* no such instance or room: kept open */
	PTP_CODE_LIMIT = 7,          /* too many subscriptions / authorizations: kept open */
	PTP_CODE_RATE = 8,           /* poses arrive faster than allowed: kept open */
	PTP_CODE_HELLO_REQUIRED = 9, /* a message before hello: closes (1002) */
	PTP_CODE_INTERNAL = 10,      /* server fault: closes (1011) */
	PTP_CODE_SHUTDOWN = 11,      /* server going away: closes (1001) */
} ptp_code_t;

enum {
	PTP_POSE_HAS_VELOCITY = 1 << 0, /* head_pose carries v (m/s, world) */
	PTP_POSE_HAS_ANGULAR = 1 << 1,  /* head_pose carries w (rad/s, world) */
	PTP_POSE_HAS_BONES = 1 << 2,    /* since 1.2: head_pose carries body-bone poses */
	PTP_ERROR_CLOSING = 1 << 0,     /* the server closes the connection after this error */
	PTP_RECORD_KEY = 1 << 0         /* frame record decodes without history (a keyframe) */
};

typedef enum ptp_event_kind_t {
	PTP_EVENT_ADDED = 1,   /* carries name, room and shape */
	PTP_EVENT_REMOVED = 2, /* carries nothing more */
	PTP_EVENT_CHANGED = 3, /* parameters changed: carries name, room and (maybe new) shape */
	PTP_EVENT_RESET = 4,   /* strands put back to rest: carries name, room and shape */
} ptp_event_kind_t;

/* What a client needs to turn strand data into points. Matches the instance definition:
 * strand s has points[s] points (root included) spaced segment_length apart; its root is
 * head.p + rotate(head.q, anchor); direction is its rest direction (head-local). */
typedef struct ptp_shape_strand_t {
	uint8_t points;       /* [2, PTP_MAX_POINTS] */
	float segment_length; /* m, finite, (0, 10] */
	float anchor[3];      /* head-local, m, finite */
	float direction[3];   /* head-local rest direction, finite, non-zero (need not be unit) */
} ptp_shape_strand_t;

typedef struct ptp_shape_t {
	uint16_t strand_count; /* [1, PTP_MAX_STRANDS]; at most PTP_MAX_STRANDS_1_2 before 1.3 */
	ptp_shape_strand_t strands[PTP_MAX_STRANDS];
} ptp_shape_t;

/* Checks every range above. PTP_OK, PTP_ELIMIT (counts) or PTP_EFLOAT / PTP_ERANGE. */
ptp_err_t ptp_shape_validate(const ptp_shape_t *shape);

/* The bytes of a shape with n strands (the count and strands[0, n)): a holder of many
 * shapes may allocate just that much (the server's instance metadata does). Every function
 * here reads a shape's strands only up to its strand_count; ptp_shape_copy copies that
 * part (strand_count clamped to [0, PTP_MAX_STRANDS]) into a whole ptp_shape_t. */
size_t ptp_shape_size(int n);
void ptp_shape_copy(ptp_shape_t *dst, const ptp_shape_t *src);

/* Total points of a shape (sum of points over strands). */
int ptp_shape_point_count(const ptp_shape_t *shape);

/* A head orientation quantised "smallest three": the largest-magnitude component is
 * dropped (made positive by negating q), the other three, in x,y,z,w order without the
 * dropped one, are stored as round(c * 46340) in [-32767, 32767]. */
typedef struct ptp_quat16_t {
	uint8_t largest; /* index 0..3 of the dropped component (x, y, z, w) */
	int16_t c[3];    /* the other three, each in [-32767, 32767] */
} ptp_quat16_t;

/* One instance's frame inside a FRAME_BATCH (fixed 33 bytes + data). In a message of
 * minor >= PTP_MINOR_HASH a record with PTP_RECORD_KEY set carries the instance's state
 * hash in the last 8 bytes of its wire data (its data_len counts them; PROTOCOL.md 6):
 * decoded, they are state_hash (has_hash 1) and data/data_len are the strand data alone.
 * Encoding, has_hash 1 (which needs PTP_RECORD_KEY) appends it the same way. */
typedef struct ptp_record_t {
	uint64_t id;         /* instance id (core: generation << 32 | slot + 1) */
	uint8_t flags;       /* PTP_RECORD_KEY; other bits zero */
	uint8_t step;        /* since 1.2 (flags bits 1..5 = step - 1): its deltas refer to the
	                      * instance's record of tick - step (a per-viewer rate's stream,
	                      * PROTOCOL.md 5); 1..32, and 0 is read as 1 when writing */
	uint32_t last_seq;   /* seq of the newest head_pose applied (0 = none yet) */
	float head_p[3];     /* head position used for this tick, m, finite */
	ptp_quat16_t head_q; /* head orientation used for this tick */
	const uint8_t *data; /* strand data (ptp/strand.h), borrowed */
	uint16_t data_len;   /* bytes of data (without the state hash) */
	uint8_t has_hash;    /* since 1.4: state_hash was sent (every key record of a 1.4
	                      * message has one; none before 1.4) */
	uint64_t state_hash; /* the instance's state hash after this tick (core's
	                      * pt_world_state_hash), when has_hash */
} ptp_record_t;

typedef struct ptp_hello_t {
	uint8_t major, minor;  /* the version the client speaks: major must be PTP_MAJOR
	                          (PTP_EVERSION), minor its highest */
	ptp_str_t client_name; /* <= PTP_MAX_NAME bytes */
	uint8_t features;      /* header minor >= 2: bit 0 asks for compact frames
	                          (ptp/compact.h, PTP_FEATURE_COMPACT); 0 before */
} ptp_hello_t;

typedef struct ptp_authorize_t {
	uint64_t instance_id;
	ptp_str_t token; /* 1..PTP_MAX_TOKEN bytes */
} ptp_authorize_t;

/* subscribe, unsubscribe and keyframe_request (which ignores room). */
typedef struct ptp_ids_t {
	ptp_str_t room; /* subscribe/unsubscribe: a whole room, or empty for none */
	uint16_t count; /* [0, PTP_MAX_IDS] */
	uint64_t ids[PTP_MAX_IDS];
	uint8_t rate_hz; /* subscribe, since 1.2: 0 (every tick), 60, 30, 20 or 10 (else range);
	                  * absent (0) before 1.2 and in unsubscribe / keyframe_request */
} ptp_ids_t;

/* One body bone's world pose in a head_pose (since 1.2). */
typedef struct ptp_bone_pose_t {
	uint8_t bone; /* [0, PTP_BONE_COUNT): VRM humanoid bone id (ptp_bone_name) */
	float p[3];   /* world position, m */
	float q[4];   /* x, y, z, w; |q|^2 in [0.25, 4] (the server normalises) */
} ptp_bone_pose_t;

typedef struct ptp_head_pose_t {
	uint64_t instance_id;
	uint32_t seq;           /* client's sequence number, echoed as a record's last_seq */
	int64_t client_time_us; /* client clock when the pose was sampled, microseconds */
	uint8_t flags;          /* PTP_POSE_HAS_VELOCITY | PTP_POSE_HAS_ANGULAR */
	float p[3];             /* world position, m */
	float q[4];             /* x, y, z, w; |q|^2 in [0.25, 4] (the server normalises) */
	float v[3];             /* linear velocity, m/s (when flagged; else zero) */
	float w[3];             /* angular velocity, rad/s, world axes (when flagged; else zero) */
	uint8_t bone_count;     /* PTP_POSE_HAS_BONES (minor >= 2): [1, PTP_MAX_POSE_BONES];
	                           else 0 */
	ptp_bone_pose_t bones[PTP_MAX_POSE_BONES];
} ptp_head_pose_t;

/* grab (since 1.5): point `point` of strand `strand` of instance_id follows bone `bone` of
 * instance `by`, which this connection must have authorized. */
typedef struct ptp_grab_t {
	uint32_t ref;         /* the client's, echoed by grab_result or error */
	uint64_t instance_id; /* the grabbed instance */
	uint64_t by;          /* the grabbing instance */
	uint16_t strand;      /* [0, PTP_MAX_STRANDS) (range) */
	uint8_t point;        /* [1, PTP_MAX_POINTS) (range): the root cannot be grabbed */
	uint8_t bone;         /* a hand or finger bone id: 19, 23, 24..53 (range) */
} ptp_grab_t;

/* release (since 1.5): ends grab grab_id of instance_id. */
typedef struct ptp_release_t {
	uint32_t ref;
	uint64_t instance_id;
	uint64_t grab_id;
} ptp_release_t;

/* grab_result (since 1.5): a grab or release with this ref took effect at the tick before
 * this message: grab_id is the grab made (or ended). */
typedef struct ptp_grab_result_t {
	uint32_t ref;
	uint64_t instance_id;
	uint64_t grab_id;
} ptp_grab_result_t;

typedef struct ptp_ping_t {
	int64_t client_time_us; /* echoed by pong */
} ptp_ping_t;

typedef struct ptp_welcome_t {
	uint8_t major, minor;       /* the version both sides now speak */
	uint16_t tick_hz;           /* server ticks per second, >= 1 */
	uint8_t substeps;           /* default substeps per tick */
	uint16_t keyframe_interval; /* ticks between periodic keyframes, >= 1 */
	uint32_t max_message;       /* largest message the server accepts from this client */
	uint16_t max_subscriptions; /* instances + rooms one connection may subscribe to */
	int64_t server_time_us;     /* server clock at sending, microseconds */
	uint64_t tick;              /* the current tick number */
	ptp_str_t server_version;   /* free text, <= PTP_MAX_TEXT bytes */
	float max_error_m;          /* minor >= 1: every decoded point is within this distance
	                               of the server's point, m, (0, 1]; 0 in a minor-0 message
	                               (not sent: a client then assumes 0.001) */
} ptp_welcome_t;

/* Records are kept as validated bytes; walk them with ptp_record_next(). */
typedef struct ptp_frame_batch_t {
	uint64_t tick;
	int64_t server_time_us; /* server clock at the tick's deadline, microseconds */
	uint16_t count;         /* records */
	const uint8_t *records; /* count records back to back, borrowed */
	size_t records_len;     /* bytes */
	uint8_t minor;          /* decode: the header's minor (ptp_record_next reads the
	                         * records as of that minor: key records carry a state hash
	                         * from PTP_MINOR_HASH on); ignored when encoding (the
	                         * message's minor is ptp_msg_t.minor) */
} ptp_frame_batch_t;

typedef struct ptp_instance_event_t {
	uint8_t kind; /* ptp_event_kind_t */
	uint64_t instance_id;
	uint64_t tick;     /* first tick the event applies to */
	ptp_str_t name;    /* not for REMOVED */
	ptp_str_t room;    /* not for REMOVED */
	ptp_shape_t shape; /* not for REMOVED */
} ptp_instance_event_t;

typedef struct ptp_pong_t {
	int64_t client_time_us; /* from the ping */
	int64_t server_time_us;
} ptp_pong_t;

typedef struct ptp_error_t {
	uint16_t code;        /* ptp_code_t (unknown codes are kept, not rejected) */
	uint8_t flags;        /* PTP_ERROR_CLOSING */
	uint8_t about_type;   /* type of the message that caused it, 0 if none */
	uint64_t instance_id; /* the instance concerned, 0 if none */
	ptp_str_t text;       /* human-readable, <= PTP_MAX_TEXT bytes */
	uint32_t ref;         /* since 1.5: the ref of the grab or release it answers, 0 else */
} ptp_error_t;

typedef struct ptp_msg_t {
	ptp_type_t type;
	/* decode: the minor version in the header. encode: the minor to write in the header,
	 * 0..PTP_MINOR (else PTP_EINVAL); fields a later minor added are left out, so a
	 * zeroed message encodes as minor 0. A peer sends the minor negotiated by hello and
	 * welcome (PROTOCOL.md section 3). */
	uint8_t minor;
	union {
		ptp_hello_t hello;
		ptp_authorize_t authorize;
		ptp_ids_t subscribe; /* also UNSUBSCRIBE and KEYFRAME_REQUEST */
		ptp_head_pose_t head_pose;
		ptp_ping_t ping;
		ptp_grab_t grab;
		ptp_release_t release;
		ptp_grab_result_t grab_result;
		ptp_welcome_t welcome;
		ptp_frame_batch_t frame_batch;
		ptp_instance_event_t instance_event;
		ptp_pong_t pong;
		ptp_error_t error;
	} u;
} ptp_msg_t;

/* Decodes one whole WebSocket message. Checks in the order of PROTOCOL.md section 2:
 * header (truncated, magic, version, too big, truncated, length, reserved byte), type,
 * then every field in wire order, each count against its limit and against the bytes
 * left before reading, then trailing bytes. A message of a newer minor keeps its
 * reserved bits/bytes and trailing payload unchecked (out->minor tells).
 * Returns PTP_OK and fills *out (borrowing from buf), or an error and leaves *out
 * unspecified. Never reads outside buf[0, len). */
ptp_err_t ptp_msg_decode(const uint8_t *buf, size_t len, ptp_msg_t *out);

/* Encodes m (same checks as the decoder) into buf[0, cap). *needed (optional) receives
 * the message size. Returns PTP_OK, PTP_ENOSPACE when cap < *needed (buf contents then
 * unspecified; buf may be NULL with cap 0 to ask for the size), or the error the decoder
 * would report for such a message (PTP_EFLOAT, PTP_ELIMIT, ...). Never writes past cap. */
ptp_err_t ptp_msg_encode(const ptp_msg_t *m, uint8_t *buf, size_t cap, size_t *needed);

/* Frame records. ptp_record_encode writes one record (PTP_RECORD_MIN + data_len bytes,
 * + 8 with has_hash), same conventions as ptp_msg_encode. A server encodes each
 * instance's record once per tick and concatenates the records a connection subscribed
 * to into frame_batch.records. */
ptp_err_t ptp_record_encode(const ptp_record_t *r, uint8_t *buf, size_t cap, size_t *needed);

/* The 1.4 form of an encoded key record: rec[0, len) (exactly one record as a 1.0-1.3
 * message holds it, PTP_RECORD_KEY set) copied to out with `hash` appended to its data
 * (data_len + 8), for a connection of minor >= PTP_MINOR_HASH; same buffer conventions
 * as ptp_record_encode (*needed = len + 8). PTP_EINVAL when rec is not one whole record
 * or its key flag is clear (such a record is sent unchanged in every minor), PTP_ELIMIT
 * when its data_len would pass 65535. Bytes copied, nothing re-encoded. */
ptp_err_t ptp_record_add_hash(const uint8_t *rec, size_t len, uint64_t hash, uint8_t *out,
                              size_t cap, size_t *needed);

/* Iterates the records of a decoded batch: start with *offset = 0; returns 1 and fills
 * *out while records remain (already validated by ptp_msg_decode), 0 at the end. */
int ptp_record_next(const ptp_frame_batch_t *b, size_t *offset, ptp_record_t *out);

/* Quaternion quantisation. ptp_quat16_pack: q need not be unit (it is normalised in
 * double first); returns PTP_EFLOAT for non-finite, PTP_ERANGE for |q| ~ 0.
 * ptp_quat16_unpack gives the unit quaternion the receiver uses, in double (this exact
 * value drives strand reconstruction on every side). */
ptp_err_t ptp_quat16_pack(const float q[4], ptp_quat16_t *out);
void ptp_quat16_unpack(const ptp_quat16_t *in, double q[4]);

#endif
