/* Private: what the strand encoder and decoder share — the stream modes, the per-strand
 * integer state, and the geometry (octahedral codes, frames, reconstruction).
 *
 * The geometry is the part that must give bit-identical doubles in C and in JS
 * (proto/js/strand.mjs mirrors it line by line): only + - * / sqrt and comparisons, in
 * the order written, no trigonometry, no fused multiply-add.
 */
#ifndef PTP_STRAND_INTERNAL_H
#define PTP_STRAND_INTERNAL_H

#include <stdint.h>

#include "ptp/proto.h"
#include "ptp/strand.h"

enum {
	PTP_MODE_HOLD = 0,    /* codes = cur + vel: nothing else sent */
	PTP_MODE_DELTA = 1,   /* 2-bit predictor, 4-bit k, Exp-Golomb residuals */
	PTP_MODE_KEY = 2,     /* 4-bit b - 2, absolute codes, 4-bit k, Exp-Golomb velocities */
	PTP_MODE_RAW = 3,     /* every point as three f32, root included */
	PTP_PRED_LINEAR = 1,  /* predictor bit: add the last tick's velocity */
	PTP_PRED_SPATIAL = 2, /* predictor bit: residual relative to the previous segment's */
	PTP_BITS_MIN = 2,
	PTP_BITS_MAX = 16,
	PTP_K_MAX = 15
};

/* One strand's geometry, derived from the shape once. */
typedef struct ptp_strand_geo_t {
	int points;       /* root included */
	double length;    /* segment length, m */
	double anchor[3]; /* head-local, m */
	double basis[9];  /* row-major 3x3, columns t1, t2, n (n = unit rest direction) */
} ptp_strand_geo_t;

/* Codec state of one strand: codes of the last tick and their change from the tick before,
 * two ints (u, v) per segment. */
typedef struct ptp_strand_state_t {
	int valid; /* decoder: a keyframe has been applied since the last raw/reset */
	int bits;  /* b of the last keyframe; the grid is [-M, M], M = 2^(b-1) - 1 */
	int32_t *cur;
	int32_t *vel;
} ptp_strand_state_t;

void ptp_geo_init(ptp_strand_geo_t *g, const ptp_shape_strand_t *s);

/* Row-major rotation matrix of a unit quaternion (x, y, z, w). */
void ptp_quat_matrix(const double q[4], double m[9]);

/* frame = rot * basis (row-major): strand-local code space -> world. */
void ptp_frame(const double rot[9], const double basis[9], double frame[9]);

/* Unit direction of octahedral code (cu, cv) on the grid [-m, m]^2 (local frame). */
void ptp_oct_decode(int32_t cu, int32_t cv, int32_t m, double out[3]);

/* The code whose direction is closest to local vector l (any length) among the four grid
 * neighbours of its octahedral projection; dir gets ptp_oct_decode of that code. */
void ptp_oct_encode(const double l[3], int32_t m, int32_t *cu, int32_t *cv, double dir[3]);

/* Root of a strand: head_p + rot * anchor. */
void ptp_strand_root(const ptp_strand_geo_t *g, const double rot[9], const double head_p[3],
                     double out[3]);

/* next = prev + length * (frame * d), d a decoded code. */
void ptp_strand_step(const ptp_strand_geo_t *g, const double frame[9], const double d[3],
                     const double prev[3], double next[3]);

/* Points of one strand from its codes: out[0] = head_p + rot * anchor, then
 * out[i+1] = out[i] + length * (frame * decode(code i)). codes: 2 per segment. */
void ptp_strand_points(const ptp_strand_geo_t *g, const double rot[9], const double head_p[3],
                       const double frame[9], const int32_t *codes, int32_t m, double *out);

/* The encoder's closed loop over every strand of an instance (strand_quant.c): codes (2 per
 * segment, strands back to back) chosen by ptp_oct_encode against the reconstruction so
 * far, and per strand the largest distance between an input point (pts, root included)
 * and its reconstruction; bits[s] is strand s's b. Every kernel gives bit-identical
 * results to the plain loop of ptp_oct_encode and ptp_strand_step (PTP_QUANT_REFERENCE);
 * PTP_QUANT_AUTO picks the fastest this build and CPU have, and a kernel that is not
 * available falls back to the reference. */
enum { PTP_QUANT_AUTO, PTP_QUANT_REFERENCE, PTP_QUANT_SSE2, PTP_QUANT_AVX2, PTP_QUANT_COUNT };
int ptp_quant_available(int kernel);
void ptp_quantise(int kernel, const ptp_strand_geo_t *geo, int strands, const int *bits,
                  const double rot[9], const double hp[3], const float *pts, int32_t *codes,
                  double *err);

/* For tests: makes an encoder use one kernel of ptp_quantise (default PTP_QUANT_AUTO). */
void ptp_encoder_set_kernel(ptp_encoder_t *e, int kernel);

static inline int32_t ptp_grid_m(int bits)
{
	return (int32_t)((1u << (bits - 1)) - 1u);
}

#endif
