/* Ponytail wire protocol: the strand codec (the data of a frame record).
 *
 * Each segment's direction is sent, not each point: the segment length is known from the
 * shape, so point i+1 = point i + segment_length * direction i, and the root is
 * head.p + rotate(head.q, anchor). Directions are octahedral codes on a (2M+1)^2 grid in a
 * head-local frame whose pole is the strand's rest direction, predicted from the previous
 * ticks and sent as Exp-Golomb residuals; a keyframe carries the codes themselves.
 * PROTOCOL.md "Strand data" is the bit-level contract.
 *
 * The encoder is closed-loop: it picks each code against the points the decoder will
 * reconstruct, so errors do not add up along a strand, and it falls back to raw floats
 * for a strand it cannot hold within max_error_m (e.g. a stretching strand).
 *
 * Encoder state is per instance and shared by every subscriber: call ptp_encoder_tick()
 * once per tick, then ptp_encoder_record() for the delta record (all subscribers that
 * received the previous tick) and, only if someone needs it, the keyframe record of the
 * same tick. Both leave a decoder in the same state.
 *
 * Threading: an encoder or decoder is used by one thread at a time. All arithmetic is
 * IEEE double in a fixed order (build with -ffp-contract=off), so the JS module
 * (proto/js) produces the same bytes and the same decoded floats.
 */
#ifndef PTP_STRAND_H
#define PTP_STRAND_H

#include <stddef.h>
#include <stdint.h>

#include "ptp/proto.h"

typedef struct ptp_encoder_t ptp_encoder_t;
typedef struct ptp_decoder_t ptp_decoder_t;

typedef struct ptp_encoder_params_t {
	float max_error_m;     /* largest distance of a decoded point from the input, m,
	                          [1e-5, 1]. Default 0.001 */
	int keyframe_interval; /* every Nth tick's delta record is a keyframe, [1, 65535].
	                          Default 60 (one per second at 60 Hz) */
} ptp_encoder_params_t;

ptp_encoder_params_t ptp_encoder_params_default(void);

/* New encoder for an instance of this shape (copied). NULL when the shape or the params
 * fail validation or on allocation failure. Free with ptp_encoder_destroy (NULL ok). */
ptp_encoder_t *ptp_encoder_create(const ptp_shape_t *shape, const ptp_encoder_params_t *params);
void ptp_encoder_destroy(ptp_encoder_t *enc);

/* Quantisation bits per code component the encoder uses for strand s (for tests/bench). */
int ptp_encoder_bits(const ptp_encoder_t *enc, int s);

/* Feeds one tick: the head pose used (p in m, q any non-zero quaternion) and the world
 * positions of every point, strand by strand, root first (xyz, n_points =
 * ptp_shape_point_count). Returns PTP_OK, PTP_EINVAL (wrong count), PTP_EFLOAT
 * (non-finite input) or PTP_ERANGE (zero quaternion); on error the state is unchanged. */
ptp_err_t ptp_encoder_tick(ptp_encoder_t *enc, const float head_p[3], const float head_q[4],
                           const float *xyz, size_t n_points);

/* One encoder's input to ptp_encoder_tick_many: as ptp_encoder_tick's arguments, or
 * with compact = 1 as ptp_encoder_tick_c's (last_seq, a compact encoder). */
typedef struct ptp_tick_in_t {
	ptp_encoder_t *enc;
	int compact;
	uint32_t last_seq;
	const float *head_p, *head_q, *xyz;
	size_t n_points;
} ptp_tick_in_t;

enum { PTP_TICK_MANY_MAX = 4 };

/* Ticks n distinct encoders (at most PTP_TICK_MANY_MAX; further ones get PTP_EINVAL):
 * err[i] and each encoder's state afterwards are exactly what ptp_encoder_tick (or
 * ptp_encoder_tick_c) called on each in turn gives, but their strands go through the
 * closed loop side by side. The loop runs several strands at once (four with AVX2), and
 * one instance rarely fills it: two strands of twin tails use half of it. */
void ptp_encoder_tick_many(const ptp_tick_in_t *in, int n, ptp_err_t *err);

/* Writes this tick's frame record (ptp_record_encode layout) for instance `id`:
 * key = 0 the shared delta record (itself a keyframe on the first tick, every
 * keyframe_interval ticks (ptp_encoder_set_key_phase) and after ptp_encoder_force_key),
 * key = 1 a keyframe for subscribers that missed a frame. Same buffer conventions as
 * ptp_msg_encode (PTP_ENOSPACE with *needed set). Call after ptp_encoder_tick; never
 * changes state. */
ptp_err_t ptp_encoder_record(const ptp_encoder_t *enc, int key, uint64_t id, uint32_t last_seq,
                             uint8_t *buf, size_t cap, size_t *needed);

/* Whether this tick's record (key as for ptp_encoder_record, or ptp_encoder_record_c
 * for a compact encoder) carries the key flag, i.e. decodes without history: what the
 * record's flags say, without writing or parsing it. Call after ptp_encoder_tick. */
int ptp_encoder_record_is_key(const ptp_encoder_t *enc, int key);

/* The next tick's delta record will be a keyframe (e.g. after an instance reset). */
void ptp_encoder_force_key(ptp_encoder_t *enc);

/* Moves the periodic keyframes: the first tick's record is one, then those of ticks t
 * (counted from 0) with t >= keyframe_interval and (t - phase) % keyframe_interval == 0
 * (phase taken mod keyframe_interval; 0, the default: t = interval, 2 interval ...), so
 * two periodic keyframes are always keyframe_interval apart. A server encoding many
 * instances gives each its own phase: a keyframe tick costs ~1.6 times a delta tick, and
 * encoders created together (a restart, a burst of creations) would otherwise all pay
 * it on the same tick. Call before the first tick. NULL ok. */
void ptp_encoder_set_key_phase(ptp_encoder_t *enc, uint32_t phase);

/* Strand data size in bits of this tick's record, for diagnostics: key = 0/1 as above. */
size_t ptp_encoder_data_bits(const ptp_encoder_t *enc, int key);

/* A hint for a loop that ticks many encoders one after another: starts loading an
 * encoder's state into the cache without waiting for it. stage 0: the encoder's header
 * (~0.5 KB); stage 1: the arrays a tick reads (~2 KB for 3 x 12 points), found through
 * the header, so give stage 0 time first (one encoder earlier in the loop).
 * Changes nothing. */
void ptp_encoder_prefetch(const ptp_encoder_t *enc, int stage);

/* Largest distance (m) between an input point of the last tick and its reconstruction
 * (raw strands count as exact). */
double ptp_encoder_last_error(const ptp_encoder_t *enc);

/* Strands sent raw in the last tick (their reconstruction missed max_error_m). */
int ptp_encoder_raw_strands(const ptp_encoder_t *enc);

/* New decoder for an instance of this shape (copied); NULL on invalid shape / no memory.
 * It needs a keyframe record before it can apply deltas. Free with ptp_decoder_destroy. */
ptp_decoder_t *ptp_decoder_create(const ptp_shape_t *shape);
void ptp_decoder_destroy(ptp_decoder_t *dec);

/* Applies one decoded frame record of batch tick `tick`: writes every point's world
 * position (xyz, strand by strand, root first) to out (capacity n_points, must equal
 * ptp_shape_point_count). A strand sent as a delta needs the previous tick's record to
 * have been applied (tick == last tick + rec->step, 1 unless a 1.2 rate stream says
 * otherwise: PROTOCOL.md 6) and a keyframe since the last raw/reset.
 * Returns PTP_OK, or PTP_EINVAL (wrong n_points), PTP_ESHAPE (strand count differs from
 * the shape), PTP_ENOKEY (a delta without its history: a frame was missed), PTP_ETRUNC
 * (bits end early), PTP_ERANGE (a code outside the grid, a bad header value, a point
 * beyond float range), PTP_EFLOAT (raw strand with a non-finite value), PTP_ETRAILING /
 * PTP_EFLAGS (bytes or padding bits left over). On any error neither the decoder state
 * nor out changes, and the client should send KEYFRAME_REQUEST. */
ptp_err_t ptp_decoder_apply(ptp_decoder_t *dec, uint64_t tick, const ptp_record_t *rec, float *out,
                            size_t n_points);

/* Forgets history: the next record must be a keyframe. */
void ptp_decoder_reset(ptp_decoder_t *dec);

#endif
