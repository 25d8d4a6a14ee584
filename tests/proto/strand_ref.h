/* The strand codec as it was before the encoder was made fast (commit f0336ca), kept as
 * the reference the fast one must equal byte for byte: proto/src/bits.[ch], strand_geo.c,
 * strand_enc.c and strand_dec.c of that commit, with every ptp_ name of theirs renamed
 * ref_ (PTP_ constants of the private header REF_) and every function static. Only the
 * public API (ptp/proto.h: quaternion packing, record encoding, shapes) is shared.
 * Do not "fix" or speed up anything here: its whole value is that it does not change. */
#ifndef TESTS_PROTO_STRAND_REF_H
#define TESTS_PROTO_STRAND_REF_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptp/proto.h"
#include "ptp/strand.h" /* ptp_encoder_params_t */

typedef struct ref_encoder_t ref_encoder_t;
typedef struct ref_decoder_t ref_decoder_t;
static void ref_encoder_destroy(ref_encoder_t *e);
static void ref_decoder_destroy(ref_decoder_t *d);

static uint32_t ref_f32_bits(float f)
{
	uint32_t b;
	memcpy(&b, &f, sizeof b);
	return b;
}

static float ref_f32_from_bits(uint32_t b)
{
	float f;
	memcpy(&f, &b, sizeof f);
	return f;
}

static int ref_f32_finite(float f)
{
	return (ref_f32_bits(f) & 0x7f800000u) != 0x7f800000u;
}

/* ---- proto/src/bits.h as of the original encoder ---- */
/* Private: LSB-first bit streams and Exp-Golomb codes for strand data.
 *
 * Bit i of a stream is bit (i mod 8) of byte (i / 8); a multi-bit field is written least
 * significant bit first. The writer only stores bits inside cap but always counts them;
 * the reader never reads past its end (PTP_ETRUNC) and keeps the first error.
 */

/* Exp-Golomb values are limited to n = floor(log2(v + 2^k)) <= REF_EG_MAX_BITS, enough
 * for every residual a valid stream produces (|residual| < 2^19, see PROTOCOL.md). */
enum { REF_EG_MAX_BITS = 20 };

typedef struct ref_bitw_t {
	uint8_t *buf;
	size_t cap;  /* bytes */
	size_t bits; /* bits produced so far */
} ref_bitw_t;

typedef struct ref_bitr_t {
	const uint8_t *buf;
	size_t nbits; /* bits available */
	size_t pos;   /* next bit */
	ptp_err_t err;
} ref_bitr_t;

/* Writes the low n (<= 32) bits of v. */
/* Writes v (< 2^REF_EG_MAX_BITS) as Exp-Golomb of order k (0..15). */
/* Bytes used, padding included (the pad bits are written as zero). */

/* PTP_ERANGE for a prefix longer than REF_EG_MAX_BITS - k zeros. */

/* floor(log2 u) + 1 for u > 0; 0 for 0. */

/* Length in bits of v as Exp-Golomb of order k. */

/* Signed <-> unsigned: 0, -1, 1, -2, 2 ... -> 0, 1, 2, 3, 4 ... */
static inline uint32_t ref_zigzag(int32_t v)
{
	return v >= 0 ? (uint32_t)v * 2u : (uint32_t)(-(int64_t)v) * 2u - 1u;
}

static inline int32_t ref_unzigzag(uint32_t u)
{
	return (u & 1u) ? -(int32_t)((u - 1u) / 2u) - 1 : (int32_t)(u / 2u);
}

/* ---- proto/src/bits.c as of the original encoder ---- */
/* LSB-first bit streams and Exp-Golomb codes (see bits.h). */

static void ref_bitw_init(ref_bitw_t *w, uint8_t *buf, size_t cap)
{
	w->buf = buf;
	w->cap = buf ? cap : 0;
	w->bits = 0;
}

static void ref_bitw_put(ref_bitw_t *w, uint32_t v, int n)
{
	uint64_t x = n < 32 ? v & ((1u << n) - 1u) : v;
	while (n > 0) {
		size_t byte = w->bits >> 3;
		int bit = (int)(w->bits & 7), take = 8 - bit < n ? 8 - bit : n;
		if (byte < w->cap) {
			if (bit == 0)
				w->buf[byte] = 0; /* a fresh byte: pad bits end up zero */
			w->buf[byte] |= (uint8_t)((x & ((1u << take) - 1u)) << bit);
		}
		x >>= take;
		w->bits += (size_t)take;
		n -= take;
	}
}

/* Order-k Exp-Golomb, LSB-first: with u = v + 2^k and n = floor(log2 u), write n - k zero
 * bits, a one bit, then the low n bits of u. */
/* One instruction where the compiler offers it; else by halving the range. */
static int ref_bit_length(uint32_t u)
{
#if defined(__GNUC__) || defined(__clang__)
	return u ? 32 - __builtin_clz(u) : 0;
#else
	int n = 0;
	for (int step = 16; step > 0; step >>= 1) {
		if (u >> step) {
			n += step;
			u >>= step;
		}
	}
	return n + (int)u;
#endif
}

static void ref_bitw_eg(ref_bitw_t *w, uint32_t v, int k)
{
	uint32_t u = v + (1u << k);
	int n = ref_bit_length(u) - 1;
	ref_bitw_put(w, 0, n - k);
	ref_bitw_put(w, 1, 1);
	ref_bitw_put(w, u, n); /* bits above n - 1 are not written: the leading one is implied */
}

static int ref_eg_len(uint32_t v, int k)
{
	return 2 * (ref_bit_length(v + (1u << k)) - 1) - k + 1;
}

static void ref_bitr_init(ref_bitr_t *r, const uint8_t *buf, size_t nbytes)
{
	r->buf = buf;
	r->nbits = nbytes * 8;
	r->pos = 0;
	r->err = PTP_OK;
}

static uint32_t ref_bitr_get(ref_bitr_t *r, int n)
{
	uint32_t v = 0;
	if (r->err != PTP_OK)
		return 0;
	if ((size_t)n > r->nbits - r->pos) {
		r->err = PTP_ETRUNC;
		return 0;
	}
	for (int i = 0; i < n; i++, r->pos++)
		v |= (uint32_t)((r->buf[r->pos >> 3] >> (r->pos & 7)) & 1u) << i;
	return v;
}

static uint32_t ref_bitr_eg(ref_bitr_t *r, int k)
{
	int zeros = 0;
	uint32_t low;
	for (;;) {
		uint32_t b = ref_bitr_get(r, 1);
		if (r->err != PTP_OK)
			return 0;
		if (b)
			break;
		if (++zeros > REF_EG_MAX_BITS - k) {
			r->err = PTP_ERANGE;
			return 0;
		}
	}
	low = ref_bitr_get(r, zeros + k);
	if (r->err != PTP_OK)
		return 0;
	return ((1u << (zeros + k)) | low) - (1u << k);
}

/* ---- proto/src/strand_internal.h as of the original encoder ---- */
/* Private: what the strand encoder and decoder share — the stream modes, the per-strand
 * integer state, and the geometry (octahedral codes, frames, reconstruction).
 *
 * The geometry is the part that must give bit-identical doubles in C and in JS
 * (proto/js/strand.mjs mirrors it line by line): only + - * / sqrt and comparisons, in
 * the order written, no trigonometry, no fused multiply-add.
 */

enum {
	REF_MODE_HOLD = 0,    /* codes = cur + vel: nothing else sent */
	REF_MODE_DELTA = 1,   /* 2-bit predictor, 4-bit k, Exp-Golomb residuals */
	REF_MODE_KEY = 2,     /* 4-bit b - 2, absolute codes, 4-bit k, Exp-Golomb velocities */
	REF_MODE_RAW = 3,     /* every point as three f32, root included */
	REF_PRED_LINEAR = 1,  /* predictor bit: add the last tick's velocity */
	REF_PRED_SPATIAL = 2, /* predictor bit: residual relative to the previous segment's */
	REF_BITS_MIN = 2,
	REF_BITS_MAX = 16,
	REF_K_MAX = 15
};

/* One strand's geometry, derived from the shape once. */
typedef struct ref_strand_geo_t {
	int points;       /* root included */
	double length;    /* segment length, m */
	double anchor[3]; /* head-local, m */
	double basis[9];  /* row-major 3x3, columns t1, t2, n (n = unit rest direction) */
} ref_strand_geo_t;

/* Codec state of one strand: codes of the last tick and their change from the tick before,
 * two ints (u, v) per segment. */
typedef struct ref_strand_state_t {
	int valid; /* decoder: a keyframe has been applied since the last raw/reset */
	int bits;  /* b of the last keyframe; the grid is [-M, M], M = 2^(b-1) - 1 */
	int32_t *cur;
	int32_t *vel;
} ref_strand_state_t;

/* Row-major rotation matrix of a unit quaternion (x, y, z, w). */

/* frame = rot * basis (row-major): strand-local code space -> world. */

/* Unit direction of octahedral code (cu, cv) on the grid [-m, m]^2 (local frame). */

/* The code whose direction is closest to local vector l (any length) among the four grid
 * neighbours of its octahedral projection; dir gets ref_oct_decode of that code. */

/* Root of a strand: head_p + rot * anchor. */
static void ref_strand_root(const ref_strand_geo_t *g, const double rot[9], const double head_p[3],
                            double out[3]);

/* next = prev + length * (frame * d), d a decoded code. */
static void ref_strand_step(const ref_strand_geo_t *g, const double frame[9], const double d[3],
                            const double prev[3], double next[3]);

/* Points of one strand from its codes: out[0] = head_p + rot * anchor, then
 * out[i+1] = out[i] + length * (frame * decode(code i)). codes: 2 per segment. */
static void ref_strand_points(const ref_strand_geo_t *g, const double rot[9],
                              const double head_p[3], const double frame[9], const int32_t *codes,
                              int32_t m, double *out);

static inline int32_t ref_grid_m(int bits)
{
	return (int32_t)((1u << (bits - 1)) - 1u);
}

/* ---- proto/src/strand_geo.c as of the original encoder ---- */
/* Strand geometry shared by encoder and decoder. Mirrored exactly by proto/js/strand.mjs:
 * keep every expression's order when editing either. */

static double sgn(double x)
{
	return x < 0.0 ? -1.0 : 1.0;
}

static void ref_geo_init(ref_strand_geo_t *g, const ptp_shape_strand_t *s)
{
	double x = s->direction[0], y = s->direction[1], z = s->direction[2];
	double len = sqrt(x * x + y * y + z * z);
	double n0 = x / len, n1 = y / len, n2 = z / len;
	/* Duff et al. 2017, "Building an Orthonormal Basis, Revisited": continuous everywhere
	 * except n2 = -1 exactly, branch-free apart from the sign. */
	double sign = n2 < 0.0 ? -1.0 : 1.0;
	double a = -1.0 / (sign + n2);
	double b = n0 * n1 * a;
	g->points = s->points;
	g->length = s->segment_length;
	for (int i = 0; i < 3; i++)
		g->anchor[i] = s->anchor[i];
	g->basis[0] = 1.0 + sign * n0 * n0 * a;
	g->basis[3] = sign * b;
	g->basis[6] = -sign * n0;
	g->basis[1] = b;
	g->basis[4] = sign + n1 * n1 * a;
	g->basis[7] = -n1;
	g->basis[2] = n0;
	g->basis[5] = n1;
	g->basis[8] = n2;
}

static void ref_quat_matrix(const double q[4], double m[9])
{
	double x = q[0], y = q[1], z = q[2], w = q[3];
	m[0] = 1.0 - 2.0 * (y * y + z * z);
	m[1] = 2.0 * (x * y - z * w);
	m[2] = 2.0 * (x * z + y * w);
	m[3] = 2.0 * (x * y + z * w);
	m[4] = 1.0 - 2.0 * (x * x + z * z);
	m[5] = 2.0 * (y * z - x * w);
	m[6] = 2.0 * (x * z - y * w);
	m[7] = 2.0 * (y * z + x * w);
	m[8] = 1.0 - 2.0 * (x * x + y * y);
}

static void ref_frame(const double rot[9], const double basis[9], double frame[9])
{
	for (int r = 0; r < 3; r++)
		for (int c = 0; c < 3; c++)
			frame[r * 3 + c] = rot[r * 3 + 0] * basis[0 + c] +
			                   rot[r * 3 + 1] * basis[3 + c] +
			                   rot[r * 3 + 2] * basis[6 + c];
}

static void ref_oct_decode(int32_t cu, int32_t cv, int32_t m, double out[3])
{
	double u = (double)cu / m, v = (double)cv / m;
	double z = 1.0 - fabs(u) - fabs(v);
	double n;
	if (z < 0.0) {
		double fu = (1.0 - fabs(v)) * sgn(u);
		double fv = (1.0 - fabs(u)) * sgn(v);
		u = fu;
		v = fv;
	}
	n = sqrt(u * u + v * v + z * z);
	out[0] = u / n;
	out[1] = v / n;
	out[2] = z / n;
}

static void ref_oct_encode(const double l[3], int32_t m, int32_t *cu, int32_t *cv, double dir[3])
{
	double s = fabs(l[0]) + fabs(l[1]) + fabs(l[2]);
	double u = 0.0, v = 0.0, best = -INFINITY;
	int32_t fu, fv;
	if (s > 0.0) {
		u = l[0] / s;
		v = l[1] / s;
		if (l[2] < 0.0) {
			double ou = (1.0 - fabs(v)) * sgn(u);
			double ov = (1.0 - fabs(u)) * sgn(v);
			u = ou;
			v = ov;
		}
	}
	/* floor(u * m) lies in [-m, m]; its cell's four corners hold the nearest code. */
	fu = (int32_t)floor(u * m);
	fv = (int32_t)floor(v * m);
	*cu = fu;
	*cv = fv;
	for (int i = 0; i < 2; i++) {
		for (int j = 0; j < 2; j++) {
			double d[3], dot;
			if (fu + i > m || fv + j > m)
				continue;
			ref_oct_decode(fu + i, fv + j, m, d);
			dot = d[0] * l[0] + d[1] * l[1] + d[2] * l[2];
			if (dot > best) {
				best = dot;
				*cu = fu + i;
				*cv = fv + j;
				memcpy(dir, d, sizeof d);
			}
		}
	}
}

static void ref_strand_root(const ref_strand_geo_t *g, const double rot[9], const double head_p[3],
                            double out[3])
{
	for (int r = 0; r < 3; r++)
		out[r] =
		    head_p[r] + (rot[r * 3 + 0] * g->anchor[0] + rot[r * 3 + 1] * g->anchor[1] +
		                 rot[r * 3 + 2] * g->anchor[2]);
}

static void ref_strand_step(const ref_strand_geo_t *g, const double frame[9], const double d[3],
                            const double prev[3], double next[3])
{
	for (int r = 0; r < 3; r++)
		next[r] = prev[r] + g->length * (frame[r * 3 + 0] * d[0] + frame[r * 3 + 1] * d[1] +
		                                 frame[r * 3 + 2] * d[2]);
}

static void ref_strand_points(const ref_strand_geo_t *g, const double rot[9],
                              const double head_p[3], const double frame[9], const int32_t *codes,
                              int32_t m, double *out)
{
	ref_strand_root(g, rot, head_p, out);
	for (int i = 0; i + 1 < g->points; i++) {
		double d[3];
		ref_oct_decode(codes[2 * i], codes[2 * i + 1], m, d);
		ref_strand_step(g, frame, d, out + 3 * i, out + 3 * (i + 1));
	}
}

/* ---- proto/src/strand_enc.c as of the original encoder ---- */
/* Strand encoder: closed-loop quantisation, mode and predictor choice, record writing.
 *
 * Per tick: the head pose is quantised first (the decoder only sees the quantised one),
 * then every segment's code is chosen against the point reconstructed so far, so each
 * point's error stays that of one quantisation step instead of the sum along the strand.
 * A strand whose reconstruction misses by more than max_error_m (it stretched, or its
 * root left the anchor) is sent raw. Everything the records need is decided here, so
 * writing a record is a pure function of the state and every subscriber gets the same
 * bytes.
 */

/* Largest angle between a unit vector and its code, times M: measured 1.411 over 2e6
 * random directions for every b in [5, 12] with the four-neighbour search of
 * ref_oct_encode (plain rounding: 2.11). */
#define OCT_MAX_ANGLE_M 1.42
/* Share of max_error_m one segment's quantisation may use; the rest absorbs the part of
 * the previous point's error a direction cannot correct (along the segment). */
#define SEGMENT_ERROR_SHARE 0.5

struct ref_encoder_t {
	ptp_shape_t shape;
	ptp_encoder_params_t params;
	ref_strand_geo_t geo[PTP_MAX_STRANDS];
	int bits[PTP_MAX_STRANDS];
	int seg_off[PTP_MAX_STRANDS + 1]; /* first segment of each strand */
	int n_points;
	int32_t *cur, *vel, *prev_cur, *prev_vel, *next; /* 2 ints per segment each */
	float *xyz;                                      /* last input, for raw strands */
	uint64_t ticks;
	int force_key;
	uint8_t need_key[PTP_MAX_STRANDS]; /* sent raw last tick: no history to build on */
	uint8_t raw[PTP_MAX_STRANDS];
	uint8_t mode[PTP_MAX_STRANDS], pred[PTP_MAX_STRANDS], k[PTP_MAX_STRANDS];
	uint32_t *zz;                /* delta residuals of this tick, zigzag, 2 per segment */
	long dbits[PTP_MAX_STRANDS]; /* bits of each strand in the delta record, -1: unknown */
	float head_p[3];
	ptp_quat16_t head_q;
	double last_error;
};

static ptp_encoder_params_t ref_encoder_params_default(void)
{
	ptp_encoder_params_t p = {0.001f, 60};
	return p;
}

static int choose_bits(double length, double max_error)
{
	double need = OCT_MAX_ANGLE_M * length / (SEGMENT_ERROR_SHARE * max_error);
	int b = REF_BITS_MIN;
	while (b < REF_BITS_MAX && (double)ref_grid_m(b) < need)
		b++;
	return b;
}

static ref_encoder_t *ref_encoder_create(const ptp_shape_t *shape,
                                         const ptp_encoder_params_t *params)
{
	ref_encoder_t *e;
	size_t segs;
	if (!shape || ptp_shape_validate(shape) != PTP_OK)
		return NULL;
	if (params && (!(params->max_error_m >= 1e-5f && params->max_error_m <= 1.0f) ||
	               params->keyframe_interval < 1 || params->keyframe_interval > 65535))
		return NULL;
	e = calloc(1, sizeof *e);
	if (!e)
		return NULL;
	e->shape = *shape;
	e->params = params ? *params : ref_encoder_params_default();
	for (int s = 0; s < shape->strand_count; s++) {
		ref_geo_init(&e->geo[s], &shape->strands[s]);
		e->bits[s] = choose_bits(e->geo[s].length, e->params.max_error_m);
		e->seg_off[s + 1] = e->seg_off[s] + shape->strands[s].points - 1;
	}
	e->n_points = ptp_shape_point_count(shape);
	segs = (size_t)e->seg_off[shape->strand_count];
	e->cur = calloc(segs * 2, sizeof(int32_t));
	e->vel = calloc(segs * 2, sizeof(int32_t));
	e->prev_cur = calloc(segs * 2, sizeof(int32_t));
	e->prev_vel = calloc(segs * 2, sizeof(int32_t));
	e->next = calloc(segs * 2, sizeof(int32_t));
	e->zz = calloc(segs * 2, sizeof(uint32_t));
	e->xyz = calloc((size_t)e->n_points * 3, sizeof(float));
	if (!e->cur || !e->vel || !e->prev_cur || !e->prev_vel || !e->next || !e->zz || !e->xyz) {
		ref_encoder_destroy(e);
		return NULL;
	}
	return e;
}

static void ref_encoder_destroy(ref_encoder_t *e)
{
	if (!e)
		return;
	free(e->cur);
	free(e->vel);
	free(e->prev_cur);
	free(e->prev_vel);
	free(e->next);
	free(e->zz);
	free(e->xyz);
	free(e);
}

static int ref_encoder_bits(const ref_encoder_t *e, int s)
{
	return (s >= 0 && s < e->shape.strand_count) ? e->bits[s] : 0;
}

static double ref_encoder_last_error(const ref_encoder_t *e)
{
	return e->last_error;
}

static int ref_encoder_raw_strands(const ref_encoder_t *e)
{
	int n = 0;
	for (int s = 0; s < e->shape.strand_count; s++)
		n += e->raw[s];
	return n;
}

static void ref_encoder_force_key(ref_encoder_t *e)
{
	e->force_key = 1;
}

static double dist(const double a[3], const float b[3])
{
	double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
	return sqrt(dx * dx + dy * dy + dz * dz);
}

/* Closed-loop codes of strand s into e->next; returns the largest point error. */
static double quantise_strand(ref_encoder_t *e, int s, const double rot[9], const double hp[3],
                              const float *pts)
{
	const ref_strand_geo_t *g = &e->geo[s];
	int32_t m = ref_grid_m(e->bits[s]), *codes = e->next + 2 * e->seg_off[s];
	double frame[9], prev[3], err;
	ref_frame(rot, g->basis, frame);
	ref_strand_root(g, rot, hp, prev);
	err = dist(prev, pts);
	for (int i = 0; i + 1 < g->points; i++) {
		const float *t = pts + 3 * (i + 1);
		double d[3], l[3], next[3], dir[3], pe;
		for (int r = 0; r < 3; r++)
			d[r] = t[r] - prev[r];
		for (int c = 0; c < 3; c++)
			l[c] = frame[0 + c] * d[0] + frame[3 + c] * d[1] + frame[6 + c] * d[2];
		ref_oct_encode(l, m, &codes[2 * i], &codes[2 * i + 1], dir);
		ref_strand_step(g, frame, dir, prev, next);
		pe = dist(next, t);
		if (pe > err)
			err = pe;
		memcpy(prev, next, sizeof prev);
	}
	return err;
}

/* Order k (the first of the cheapest) for n zigzag values; *bits gets their total length.
 * Orders above the longest value's bit length only cost more (every value then takes
 * k + 1 bits), so the search stops there; the result equals an exhaustive search. */
static int best_k(const uint32_t *z, int n, long *bits)
{
	int best = 0, top = 0;
	long least = -1;
	for (int i = 0; i < n; i++)
		if (ref_bit_length(z[i]) > top)
			top = ref_bit_length(z[i]);
	for (int k = 0; k <= top && k <= REF_K_MAX; k++) {
		long sum = 0;
		for (int i = 0; i < n; i++)
			sum += ref_eg_len(z[i], k);
		if (least < 0 || sum < least) {
			least = sum;
			best = k;
		}
	}
	*bits = least;
	return best;
}

/* Delta-record mode of strand s, its predictor, k and zigzag residuals (kept in e->zz for
 * the record writer) and its size in bits (e->dbits; -1 = count when writing). */
static void choose_mode(ref_encoder_t *e, int s, int key_tick)
{
	int off = 2 * e->seg_off[s], n = 2 * (e->geo[s].points - 1);
	const int32_t *cur = e->cur + off, *pc = e->prev_cur + off, *pv = e->prev_vel + off;
	uint32_t *z = e->zz + off;
	long sum[4] = {0, 0, 0, 0}, bits;
	int32_t last[2][2] = {{0, 0}, {0, 0}};
	int pred = 0;
	if (e->raw[s] || key_tick || e->need_key[s]) {
		e->mode[s] = e->raw[s] ? REF_MODE_RAW : REF_MODE_KEY;
		e->dbits[s] = -1;
		return;
	}
	/* Residual size of all four predictors in one pass: temporal r (with and without the
	 * velocity), optionally minus the previous segment's r of the same component. */
	for (int i = 0; i < n; i++) {
		int32_t r0 = cur[i] - pc[i], r1 = r0 - pv[i];
		sum[0] += ref_zigzag(r0);
		sum[1] += ref_zigzag(r1);
		sum[2] += ref_zigzag(r0 - last[0][i & 1]);
		sum[3] += ref_zigzag(r1 - last[1][i & 1]);
		last[0][i & 1] = r0;
		last[1][i & 1] = r1;
	}
	if (sum[REF_PRED_LINEAR] == 0) {
		e->mode[s] = REF_MODE_HOLD;
		e->dbits[s] = 2;
		return;
	}
	/* The smallest sum of zigzag residuals stands in for the coded size. */
	for (int p = 1; p < 4; p++)
		if (sum[p] < sum[pred])
			pred = p;
	last[0][0] = last[0][1] = 0;
	for (int i = 0; i < n; i++) {
		int32_t r = cur[i] - pc[i] - ((pred & REF_PRED_LINEAR) ? pv[i] : 0);
		z[i] = ref_zigzag((pred & REF_PRED_SPATIAL) ? r - last[0][i & 1] : r);
		last[0][i & 1] = r;
	}
	e->mode[s] = REF_MODE_DELTA;
	e->pred[s] = (uint8_t)pred;
	e->k[s] = (uint8_t)best_k(z, n, &bits);
	e->dbits[s] = 2 + 2 + 4 + bits;
}

static ptp_err_t ref_encoder_tick(ref_encoder_t *e, const float head_p[3], const float head_q[4],
                                  const float *xyz, size_t n_points)
{
	ptp_quat16_t q16;
	double q[4], rot[9], hp[3], worst = 0.0;
	int key_tick, segs = e->seg_off[e->shape.strand_count];
	uint8_t raw[PTP_MAX_STRANDS];
	ptp_err_t err;
	if (!xyz || n_points != (size_t)e->n_points)
		return PTP_EINVAL;
	for (size_t i = 0; i < 3 * n_points; i++)
		if (!ref_f32_finite(xyz[i]))
			return PTP_EFLOAT;
	for (int i = 0; i < 3; i++)
		if (!ref_f32_finite(head_p[i]))
			return PTP_EFLOAT;
	err = ptp_quat16_pack(head_q, &q16);
	if (err != PTP_OK)
		return err;
	ptp_quat16_unpack(&q16, q);
	ref_quat_matrix(q, rot);
	for (int i = 0; i < 3; i++)
		hp[i] = head_p[i];

	for (int s = 0, p = 0; s < e->shape.strand_count; p += e->geo[s].points, s++) {
		double se = quantise_strand(e, s, rot, hp, xyz + 3 * p);
		raw[s] = se > (double)e->params.max_error_m;
		if (!raw[s] && se > worst)
			worst = se;
	}

	/* Commit: from here on nothing fails. */
	memcpy(e->prev_cur, e->cur, sizeof(int32_t) * 2 * (size_t)segs);
	memcpy(e->prev_vel, e->vel, sizeof(int32_t) * 2 * (size_t)segs);
	for (int i = 0; i < 2 * segs; i++) {
		e->vel[i] = e->ticks == 0 ? 0 : e->next[i] - e->cur[i];
		e->cur[i] = e->next[i];
	}
	memcpy(e->xyz, xyz, sizeof(float) * 3 * n_points);
	memcpy(e->head_p, head_p, sizeof e->head_p);
	e->head_q = q16;
	e->last_error = worst;
	key_tick = e->ticks % (uint64_t)e->params.keyframe_interval == 0 || e->force_key;
	for (int s = 0; s < e->shape.strand_count; s++) {
		e->raw[s] = raw[s];
		choose_mode(e, s, key_tick);
		e->need_key[s] = raw[s];
	}
	e->force_key = 0;
	e->ticks++;
	return PTP_OK;
}

static void write_strand(const ref_encoder_t *e, int s, int mode, ref_bitw_t *w, int point0)
{
	uint32_t z[2 * (PTP_MAX_POINTS - 1)] = {0};
	int n = 2 * (e->geo[s].points - 1), off = 2 * e->seg_off[s];
	ref_bitw_put(w, (uint32_t)mode, 2);
	if (mode == REF_MODE_DELTA) {
		ref_bitw_put(w, e->pred[s], 2);
		ref_bitw_put(w, e->k[s], 4);
		for (int i = 0; i < n; i++)
			ref_bitw_eg(w, e->zz[off + i], e->k[s]);
	} else if (mode == REF_MODE_KEY) {
		int32_t m = ref_grid_m(e->bits[s]);
		long bits;
		int k;
		ref_bitw_put(w, (uint32_t)(e->bits[s] - REF_BITS_MIN), 4);
		for (int i = 0; i < n; i++)
			ref_bitw_put(w, (uint32_t)(e->cur[off + i] + m), e->bits[s]);
		for (int i = 0; i < n; i++)
			z[i] = ref_zigzag(e->vel[off + i]);
		k = best_k(z, n, &bits);
		ref_bitw_put(w, (uint32_t)k, 4);
		for (int i = 0; i < n; i++)
			ref_bitw_eg(w, z[i], k);
	} else if (mode == REF_MODE_RAW) {
		for (int i = 0; i < 3 * e->geo[s].points; i++)
			ref_bitw_put(w, ref_f32_bits(e->xyz[3 * point0 + i]), 32);
	}
}

/* Strand data (count byte + bit stream) into buf[0, cap); returns its size in bits. */
static size_t write_data(const ref_encoder_t *e, int key, uint8_t *buf, size_t cap)
{
	ref_bitw_t w;
	ref_bitw_init(&w, buf, cap);
	if (e->shape.strand_count <= 255) { /* 1.3: 0 and a u16 for 256 strands and more */
		ref_bitw_put(&w, e->shape.strand_count, 8);
	} else {
		ref_bitw_put(&w, 0, 8);
		ref_bitw_put(&w, e->shape.strand_count, 16);
	}
	for (int s = 0, p = 0; s < e->shape.strand_count; p += e->geo[s].points, s++) {
		int mode = e->mode[s];
		if (key)
			mode = e->raw[s] ? REF_MODE_RAW : REF_MODE_KEY;
		write_strand(e, s, mode, &w, p);
	}
	return w.bits;
}

/* Size of the strand data in bits: summed from choose_mode when every strand's size is
 * known, else by a dry run of the writer. */
static size_t data_bits(const ref_encoder_t *e, int key)
{
	size_t bits = e->shape.strand_count <= 255 ? 8 : 24;
	for (int s = 0; s < e->shape.strand_count; s++) {
		if (key || e->dbits[s] < 0)
			return write_data(e, key, NULL, 0);
		bits += (size_t)e->dbits[s];
	}
	return bits;
}

static size_t ref_encoder_data_bits(const ref_encoder_t *e, int key)
{
	return data_bits(e, key);
}

static ptp_err_t ref_encoder_record(const ref_encoder_t *e, int key, uint64_t id, uint32_t last_seq,
                                    uint8_t *buf, size_t cap, size_t *needed)
{
	uint8_t head[PTP_RECORD_MIN];
	ptp_record_t r;
	size_t data_len, total;
	int is_key = 1;
	ptp_err_t err;
	if (e->ticks == 0)
		return PTP_EINVAL;
	for (int s = 0; s < e->shape.strand_count; s++)
		is_key &= key || e->mode[s] == REF_MODE_KEY || e->mode[s] == REF_MODE_RAW;
	data_len = (data_bits(e, key) + 7) / 8;
	total = PTP_RECORD_MIN + data_len;
	if (needed)
		*needed = total;
	if (data_len > 65535)
		return PTP_ELIMIT;
	memset(&r, 0, sizeof r);
	r.id = id;
	r.flags = is_key ? PTP_RECORD_KEY : 0;
	r.last_seq = last_seq;
	memcpy(r.head_p, e->head_p, sizeof r.head_p);
	r.head_q = e->head_q;
	err = ptp_record_encode(&r, head, sizeof head, NULL);
	if (err != PTP_OK)
		return err;
	if (!buf || cap < total)
		return PTP_ENOSPACE;
	head[PTP_RECORD_MIN - 2] = (uint8_t)data_len;
	head[PTP_RECORD_MIN - 1] = (uint8_t)(data_len >> 8);
	memcpy(buf, head, sizeof head);
	write_data(e, key, buf + PTP_RECORD_MIN, data_len);
	return PTP_OK;
}

/* ---- proto/src/strand_dec.c as of the original encoder ---- */
/* Strand decoder: reads a record's strand data against the instance shape.
 *
 * The whole record is decoded into scratch state first and committed only when every
 * strand, the padding and the length check out, so a bad record leaves the decoder as it
 * was (the client then asks for a keyframe). Every code is range-checked before it is
 * used; the bit reader cannot run past the data.
 */

struct ref_decoder_t {
	ptp_shape_t shape;
	ref_strand_geo_t geo[PTP_MAX_STRANDS];
	int seg_off[PTP_MAX_STRANDS + 1];
	int n_points;
	ref_strand_state_t st[PTP_MAX_STRANDS], tmp[PTP_MAX_STRANDS];
	int32_t *mem;  /* cur/vel of st and tmp */
	double *pts;   /* scratch positions */
	int have_tick; /* last_tick is set */
	uint64_t last_tick;
};

static ref_decoder_t *ref_decoder_create(const ptp_shape_t *shape)
{
	ref_decoder_t *d;
	size_t segs;
	if (!shape || ptp_shape_validate(shape) != PTP_OK)
		return NULL;
	d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	d->shape = *shape;
	for (int s = 0; s < shape->strand_count; s++) {
		ref_geo_init(&d->geo[s], &shape->strands[s]);
		d->seg_off[s + 1] = d->seg_off[s] + shape->strands[s].points - 1;
	}
	d->n_points = ptp_shape_point_count(shape);
	segs = (size_t)d->seg_off[shape->strand_count];
	d->mem = calloc(segs * 8, sizeof(int32_t));
	d->pts = calloc((size_t)d->n_points * 3, sizeof(double));
	if (!d->mem || !d->pts) {
		ref_decoder_destroy(d);
		return NULL;
	}
	for (int s = 0; s < shape->strand_count; s++) {
		size_t o = 2 * (size_t)d->seg_off[s];
		d->st[s].cur = d->mem + o;
		d->st[s].vel = d->mem + 2 * segs + o;
		d->tmp[s].cur = d->mem + 4 * segs + o;
		d->tmp[s].vel = d->mem + 6 * segs + o;
	}
	return d;
}

static void ref_decoder_destroy(ref_decoder_t *d)
{
	if (!d)
		return;
	free(d->mem);
	free(d->pts);
	free(d);
}

static void ref_decoder_reset(ref_decoder_t *d)
{
	for (int s = 0; s < d->shape.strand_count; s++)
		d->st[s].valid = 0;
	d->have_tick = 0;
}

static int in_grid(int64_t c, int32_t m)
{
	return c >= -m && c <= m;
}

/* Reads strand s into d->tmp[s] (codes) or, raw, into d->pts; returns PTP_OK or why not. */
static ptp_err_t read_strand(ref_decoder_t *d, int s, ref_bitr_t *r, double *pts, int *raw,
                             int in_sequence)
{
	const ref_strand_state_t *old = &d->st[s];
	ref_strand_state_t *t = &d->tmp[s];
	int n = 2 * (d->geo[s].points - 1);
	uint32_t mode = ref_bitr_get(r, 2);
	*raw = 0;
	if (r->err != PTP_OK)
		return r->err;
	if (mode == REF_MODE_RAW) {
		for (int i = 0; i < 3 * d->geo[s].points; i++) {
			float f = ref_f32_from_bits(ref_bitr_get(r, 32));
			if (r->err != PTP_OK)
				return r->err;
			if (!ref_f32_finite(f))
				return PTP_EFLOAT;
			pts[i] = f;
		}
		t->valid = 0;
		t->bits = old->bits;
		*raw = 1;
		return PTP_OK;
	}
	if (mode == REF_MODE_KEY) {
		uint32_t bits = ref_bitr_get(r, 4) + REF_BITS_MIN, k;
		int32_t m;
		if (r->err == PTP_OK && bits > REF_BITS_MAX)
			return PTP_ERANGE;
		m = ref_grid_m((int)bits);
		for (int i = 0; i < n; i++) {
			int64_t c = (int64_t)ref_bitr_get(r, (int)bits) - m;
			if (r->err != PTP_OK)
				return r->err;
			if (!in_grid(c, m))
				return PTP_ERANGE;
			t->cur[i] = (int32_t)c;
		}
		k = ref_bitr_get(r, 4);
		for (int i = 0; i < n; i++) {
			int32_t v = ref_unzigzag(ref_bitr_eg(r, (int)k));
			if (r->err != PTP_OK)
				return r->err;
			if (v < -2 * m || v > 2 * m)
				return PTP_ERANGE;
			t->vel[i] = v;
		}
		t->valid = 1;
		t->bits = (int)bits;
		return PTP_OK;
	}
	if (!old->valid || !in_sequence)
		return PTP_ENOKEY;
	t->valid = 1;
	t->bits = old->bits;
	{
		int32_t m = ref_grid_m(old->bits), last[2] = {0, 0};
		uint32_t pred = REF_PRED_LINEAR, k = 0;
		if (mode == REF_MODE_DELTA) {
			pred = ref_bitr_get(r, 2);
			k = ref_bitr_get(r, 4);
		}
		for (int i = 0; i < n; i++) {
			int64_t p = old->cur[i] + ((pred & REF_PRED_LINEAR) ? old->vel[i] : 0);
			int64_t e = 0, c;
			if (mode == REF_MODE_DELTA) {
				e = ref_unzigzag(ref_bitr_eg(r, (int)k));
				if (r->err != PTP_OK)
					return r->err;
				if (pred & REF_PRED_SPATIAL)
					e += last[i & 1];
			}
			c = p + e;
			if (!in_grid(c, m))
				return PTP_ERANGE;
			/* |e| <= |c| + |p| <= 4m here, so last[] stays far inside int32 */
			last[i & 1] = (int32_t)e;
			t->cur[i] = (int32_t)c;
			t->vel[i] = (int32_t)(c - old->cur[i]);
		}
	}
	return r->err;
}

static ptp_err_t ref_decoder_apply(ref_decoder_t *d, uint64_t tick, const ptp_record_t *rec,
                                   float *out, size_t n_points)
{
	ref_bitr_t r;
	double q[4], rot[9], hp[3];
	int raw[PTP_MAX_STRANDS];
	if (!rec || !out || n_points != (size_t)d->n_points)
		return PTP_EINVAL;
	if (!rec->data || rec->data_len < 1)
		return PTP_ETRUNC;
	size_t at = 1;
	int count = rec->data[0];
	if (count == 0 && d->shape.strand_count > 255) {
		if (rec->data_len < 3)
			return PTP_ETRUNC;
		count = rec->data[1] | rec->data[2] << 8, at = 3;
	}
	if (count != d->shape.strand_count)
		return PTP_ESHAPE;
	ref_bitr_init(&r, rec->data + at, rec->data_len - at);
	for (int s = 0, p = 0; s < d->shape.strand_count; p += d->geo[s].points, s++) {
		ptp_err_t e = read_strand(d, s, &r, d->pts + 3 * p, &raw[s],
		                          d->have_tick && tick == d->last_tick + 1);
		if (e != PTP_OK)
			return e;
	}
	if (r.nbits - r.pos >= 8)
		return PTP_ETRAILING;
	if (ref_bitr_get(&r, (int)(r.nbits - r.pos)) != 0)
		return PTP_EFLAGS;

	ptp_quat16_unpack(&rec->head_q, q);
	ref_quat_matrix(q, rot);
	for (int i = 0; i < 3; i++)
		hp[i] = rec->head_p[i];
	for (int s = 0, p = 0; s < d->shape.strand_count; p += d->geo[s].points, s++) {
		double frame[9];
		if (raw[s])
			continue;
		ref_frame(rot, d->geo[s].basis, frame);
		ref_strand_points(&d->geo[s], rot, hp, frame, d->tmp[s].cur,
		                  ref_grid_m(d->tmp[s].bits), d->pts + 3 * p);
	}
	/* A far-away head plus long strands can leave float range: refuse, do not emit inf. */
	for (size_t i = 0; i < 3 * n_points; i++)
		if (!(fabs(d->pts[i]) <= FLT_MAX))
			return PTP_ERANGE;

	for (int s = 0; s < d->shape.strand_count; s++) {
		ref_strand_state_t *st = &d->st[s], *t = &d->tmp[s];
		size_t n = 2 * (size_t)(d->geo[s].points - 1);
		if (!raw[s]) {
			memcpy(st->cur, t->cur, n * sizeof(int32_t));
			memcpy(st->vel, t->vel, n * sizeof(int32_t));
		}
		st->valid = t->valid;
		st->bits = t->bits;
	}
	d->have_tick = 1;
	d->last_tick = tick;
	for (size_t i = 0; i < 3 * n_points; i++)
		out[i] = (float)d->pts[i];
	return PTP_OK;
}

#endif
