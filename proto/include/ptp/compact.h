/* Ponytail wire protocol 1.2: the compact frame coding (PROTOCOL.md section 11).
 *
 * A connection that announces PTP_FEATURE_COMPACT in its hello gets `frame_batch_c`
 * messages instead of `frame_batch`: varint ids, a tick gap instead of a u64 tick, and
 * records whose head pose and seq are predicted from the stream's last two frames like
 * the strand codes already are. The strand blocks inside are those of section 7.
 *
 * Encoder: ptp_encoder_create_compact() makes an encoder of this coding (its strands are
 * quantised against the head position on the compact grid, so the classic coding needs
 * its own encoder); feed it with ptp_encoder_tick_c() and write records with
 * ptp_encoder_record_c(). Every other ptp_encoder_* call works on it as on a classic one.
 * Decoder: any ptp_decoder_t; ptp_decoder_apply_c() for compact records.
 */
#ifndef PTP_COMPACT_H
#define PTP_COMPACT_H

#include <stddef.h>
#include <stdint.h>

#include "ptp/proto.h"
#include "ptp/strand.h"

enum {
	PTP_FRAME_BATCH_C = 0x87,   /* message type of a compact frame batch */
	PTP_MINOR_COMPACT = 2,      /* the minor that defines it (written in its header) */
	PTP_FEATURE_COMPACT = 1,    /* hello.features bit: send me frame_batch_c */
	PTP_HEAD_GRID = 65536,      /* compact head position: units per metre (2^16) */
	PTP_RECORD_ABS = 1 << 1,    /* compact record flag: the head block is absolute */
	PTP_RECORD_C_STEP_MAX = 16, /* compact step, flags bits 2..5 + 1 (PROTOCOL.md 11.2) */
	PTP_RECORD_C_MIN = 4,       /* bytes of the smallest compact record */
	PTP_RECORD_C_MAX_BODY = 65535
};

/* A decoded frame_batch_c: records stay as validated bytes (ptp_record_c_next). */
typedef struct ptp_batch_c_t {
	uint64_t tick_gap; /* tick - previous batch's tick (0: same tick, continued) */
	int64_t time_dev;  /* server_time_us minus its nominal value, us (PROTOCOL.md 11.1) */
	uint16_t count;
	const uint8_t *records; /* borrowed */
	size_t records_len;
	uint8_t minor; /* the header's minor: encode writes PTP_MINOR_COMPACT for 0 (and 3:
	                * 1.2's layout), else 4..PTP_MINOR for a connection of that minor,
	                * whose key records carry the state hash (PTP_MINOR_HASH); decode
	                * sets it, and ptp_record_c_next reads the records as of it */
} ptp_batch_c_t;

/* One compact record, borrowed from its batch. */
typedef struct ptp_record_c_t {
	uint64_t id;
	uint8_t flags;          /* PTP_RECORD_KEY | PTP_RECORD_ABS | dropped component << 6 */
	const uint8_t *body;    /* head block, strand blocks, padding (a bit stream) */
	uint16_t body_len;
	uint8_t step; /* 1..16: the stream's tick step (flags bits 2..5 + 1) */
	uint8_t has_hash;    /* batch minor >= PTP_MINOR_HASH and PTP_RECORD_KEY: the body's
	                      * last 8 bytes were the state hash (not in body/body_len) */
	uint64_t state_hash; /* the instance's state hash after this tick, when has_hash */
} ptp_record_c_t;

/* The head pose a compact record decodes to. */
typedef struct ptp_head_c_t {
	uint32_t last_seq;
	double head_p[3];      /* exact: grid units / 2^16 */
	ptp_quat16_t head_q;
} ptp_head_c_t;

/* The absolute tick and server time of the batches of one connection: start from
 * welcome's tick and server_time_us, then advance once per frame_batch_c in order. */
typedef struct ptp_batch_clock_t {
	uint64_t tick;
	int64_t time_us;
	uint16_t tick_hz;
} ptp_batch_clock_t;

/* Whole-message encode/decode, conventions of ptp_msg_encode/ptp_msg_decode (header
 * checks in PROTOCOL.md section 2's order, type PTP_FRAME_BATCH_C else PTP_ETYPE). The
 * encoder checks that records holds exactly count valid compact records. */
ptp_err_t ptp_batch_c_encode(const ptp_batch_c_t *b, uint8_t *buf, size_t cap, size_t *needed);
ptp_err_t ptp_batch_c_decode(const uint8_t *buf, size_t len, ptp_batch_c_t *out);
/* Iterates records like ptp_record_next. */
int ptp_record_c_next(const ptp_batch_c_t *b, size_t *offset, ptp_record_c_t *out);
/* Advances the clock by one batch (PTP_ERANGE for a gap above 2^32: the clock is kept). */
ptp_err_t ptp_batch_clock_advance(ptp_batch_clock_t *c, const ptp_batch_c_t *b);
/* The inverse, for the server: the gap and deviation of a batch at (tick, time_us). */
ptp_err_t ptp_batch_clock_delta(const ptp_batch_clock_t *c, uint64_t tick, int64_t time_us,
                                uint64_t *gap, int64_t *dev);

ptp_encoder_t *ptp_encoder_create_compact(const ptp_shape_t *shape,
                                          const ptp_encoder_params_t *params);
/* ptp_encoder_tick plus the seq the record will carry; PTP_ERANGE also for a head
 * further than 2^14 m from the origin on an axis, PTP_EINVAL for a classic encoder. */
ptp_err_t ptp_encoder_tick_c(ptp_encoder_t *enc, uint32_t last_seq, const float head_p[3],
                             const float head_q[4], const float *xyz, size_t n_points);
/* This tick's compact record (key = 0 shared delta, 1 keyframe), as ptp_encoder_record. */
ptp_err_t ptp_encoder_record_c(const ptp_encoder_t *enc, int key, uint64_t id, uint8_t *buf,
                               size_t cap, size_t *needed);

/* Sets the step (1..PTP_RECORD_C_STEP_MAX) of a compact record written by
 * ptp_encoder_record_c (flags bits 2..5; the server's per-viewer rates, PROTOCOL.md 11.2).
 * PTP_EINVAL for a step out of range or bytes that do not start a record. */
ptp_err_t ptp_record_c_set_step(uint8_t *rec, size_t len, unsigned step);

/* The 1.4 form of a compact key record (ptp_record_add_hash's twin): rec[0, len), one
 * whole record with PTP_RECORD_KEY set, copied to out with `hash` appended to its body
 * (body_len + 8, its varint re-written). PTP_EINVAL when rec is not one whole record or
 * not flagged key, PTP_ERANGE when the body would pass PTP_RECORD_C_MAX_BODY. */
ptp_err_t ptp_record_c_add_hash(const uint8_t *rec, size_t len, uint64_t hash, uint8_t *out,
                                size_t cap, size_t *needed);

/* Applies a compact record of batch tick `tick`; `step` is the stream's tick step (the
 * record's: rec->step; 1 at the full rate): a delta needs the record of tick - step
 * applied. Head pose to *head (optional). Errors as ptp_decoder_apply; on any
 * error nothing changes. */
ptp_err_t ptp_decoder_apply_c(ptp_decoder_t *dec, uint64_t tick, uint64_t step,
                              const ptp_record_c_t *rec, ptp_head_c_t *head, float *out,
                              size_t n_points);

#endif
