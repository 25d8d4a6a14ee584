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

/* Starts loading the cache line of p (a hint). A volatile asm on x86: GCC 12's dead-code
 * pass can drop __builtin_prefetch from loops (core/src/world_internal.h says where). */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define PTP_PREFETCH(p) __asm__ __volatile__("prefetcht0 %0" : : "m"(*(const char *)(p)))
#else
#define PTP_PREFETCH(p) __builtin_prefetch(p)
#endif

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

/* The encoder's closed loop over every strand of an instance (strand_quant.c, its AVX2
 * kernel in strand_quant_avx2.c): codes (2 per segment, strands back to back) chosen by
 * ptp_oct_encode against the reconstruction so far, and per strand the largest distance
 * between an input point (pts, root included) and its reconstruction; bits[s] is strand
 * s's b. Every kernel gives bit-identical results to the plain loop of ptp_oct_encode and
 * ptp_strand_step (PTP_QUANT_REFERENCE); PTP_QUANT_AUTO picks the fastest this build and
 * CPU have, and a kernel that is not available falls back to the reference. */
enum { PTP_QUANT_AUTO, PTP_QUANT_REFERENCE, PTP_QUANT_SSE2, PTP_QUANT_AVX2, PTP_QUANT_COUNT };
int ptp_quant_available(int kernel);
void ptp_quantise(int kernel, const ptp_strand_geo_t *geo, int strands, const int *bits,
                  const double rot[9], const double hp[3], const float *pts, int32_t *codes,
                  double *err);

/* One strand of the closed loop, whichever instance it belongs to: ptp_quantise_tasks
 * runs strands of several instances side by side (the AVX2 kernel has four lanes; an
 * instance of two strands fills half of them), each with its instance's head rotation
 * and position. Results are those of ptp_quantise, strand by strand. */
typedef struct ptp_quant_task_t {
	const ptp_strand_geo_t *geo;
	int32_t m;                     /* ptp_grid_m of the strand's bits */
	const double *rot, *hp;        /* the instance's rot[9] and root position hp[3] */
	const float *pts;              /* the strand's points, root first */
	int32_t *codes;                /* 2 per segment */
	double *err;                   /* its largest distance */
} ptp_quant_task_t;
void ptp_quantise_tasks(int kernel, const ptp_quant_task_t *tasks, int n);

/* For tests: makes an encoder use one kernel of ptp_quantise (default PTP_QUANT_AUTO). */
void ptp_encoder_set_kernel(ptp_encoder_t *e, int kernel);

/* The compact coding's head pose (PROTOCOL.md 11.3): position on the 2^-16 m grid, the
 * quaternion's smallest three, the pose's seq; cur and the change over the last tick. */
typedef struct ptp_head_state_t {
	int valid;
	uint32_t seq;
	uint8_t largest;
	int64_t cur[6]; /* p x, y, z (grid units), then the three quaternion ints */
	int64_t vel[6];
} ptp_head_state_t;

/* The encoder's state, shared by strand_enc.c (classic records) and strand_enc_c.c.
 *
 * One allocation, in the order a tick reads it (ptp_encoder_prefetch loads it ahead in
 * two stages, the second knowing where the first ends): this header, then the per-strand
 * arrays (strand_count entries each) and code arrays (2 ints per segment each), then
 * the cold last input, read only for a raw strand. A server encodes a few
 * thousand of these a tick from beyond its caches: a header of fixed 32-entry arrays
 * (5.6 KB, ~20 lines loaded for the ~10 a three-strand instance uses) and seven
 * separate buffers kept the loads-ahead waiting for line-fill buffers. */
struct ptp_encoder_t {
	int strand_count, n_points;
	int compact; /* the compact coding (strand_enc_c.c, PROTOCOL.md 11) */
	int force_key;
	int kernel; /* ptp_quantise's, PTP_QUANT_AUTO but in tests */
	uint32_t next_seq; /* the seq ptp_encoder_tick_c was given */
	uint64_t ticks;
	ptp_encoder_params_t params;
	uint32_t key_phase; /* < params.keyframe_interval (ptp_encoder_set_key_phase) */
	double last_error;
	ptp_strand_geo_t *geo;
	int *bits;
	int *seg_off; /* first segment of each strand, and the total (strand_count + 1) */
	long *dbits;  /* bits of each strand in the delta record, -1: unknown */
	uint8_t *need_key; /* sent raw last tick: no history to build on */
	uint8_t *raw, *mode, *pred, *k;
	int32_t *cur, *vel, *prev_cur, *prev_vel, *next; /* 2 ints per segment each */
	uint32_t *zz; /* delta residuals of this tick, zigzag, 2 per segment */
	float *xyz;   /* last input, for raw strands */
	uint8_t head[18]; /* record bytes 13..30 of this tick: head_p (3 x f32), head_q (3 x i16) */
	uint8_t largest;  /* head_q's dropped component, record flags bits 6..7 */
	/* Compact coding: the head pose on its grid, each value with its change over the
	 * last tick, and whether this tick's delta record must carry the head block
	 * absolute. */
	int head_abs;
	ptp_head_state_t hs, hs_prev;
};

int ptp_best_k(const uint32_t *z, int n, long *bits);
/* Every strand's block of this tick's record is a keyframe's (key: the record is one). */
int ptp_enc_strands_key(const ptp_encoder_t *e, int key);

/* strand_resid.c: the AVX2 forms of the integer passes, where the build has them
 * (PTP_RESID_AVX2) and the CPU runs them (ptp_resid_avx2()): the same integers as the
 * plain and SSE2 loops. ptp_best_k_avx2 takes 8 orders k a step, one per lane. */
#if !defined(PT_NO_SIMD) && defined(__SSE2__) && (defined(__x86_64__) || defined(__i386__)) && \
    (defined(__GNUC__) || defined(__clang__))
#define PTP_RESID_AVX2 1
static inline int ptp_resid_avx2(void)
{
	/* libgcc initialises the CPU model before main; these are loads and tests. BMI2
	 * (shifts by a register without the count in cl) comes with AVX2 on every CPU so
	 * far, but is asked for. */
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2");
}
int ptp_best_k_avx2(const uint32_t *z, int n, long *bits);
/* strand_enc_avx2.c: a delta block's residuals (after pred and k), or 0 where the plain
 * loop of ptp_enc_write_strand must write them. */
struct ptp_bitw_t;
int ptp_put_eg_pairs_avx2(struct ptp_bitw_t *w, const uint32_t *z, int n, int k);
#else
#define PTP_RESID_AVX2 0
#endif

/* strand_resid.c: over n codes (2 per segment, u then v) of one strand. sum[p]: summed
 * zigzag residuals of predictor p (PTP_PRED_* bits); z: predictor pred's residuals. */
void ptp_pred_sums(const int32_t *cur, const int32_t *prev_cur, const int32_t *prev_vel, int n,
                   uint64_t sum[4]);
void ptp_pred_residuals(const int32_t *cur, const int32_t *prev_cur, const int32_t *prev_vel,
                        int n, int pred, uint32_t *z);
/* vel = cur - prev, n ints; ptp_all_finite: no NaN or infinity among n floats. */
void ptp_code_delta(int32_t *vel, const int32_t *cur, const int32_t *prev, int n);
int ptp_all_finite(const float *f, size_t n);
/* Strand s's block in `mode` (strand_enc.c); point0 is its first point. */
struct ptp_bitw_t;
void ptp_enc_write_strand(const ptp_encoder_t *e, int s, int mode, struct ptp_bitw_t *w, int point0);
/* The strand count opening classic strand data: a byte, or 0 and a u16 (256 and more). */
void ptp_enc_write_count(int n, struct ptp_bitw_t *w);

/* strand_enc_c.c: the compact coding's head pose for this tick (hs, and hp the grid
 * position as the decoder will have it; PTP_ERANGE beyond the grid), then, once the tick
 * is committed, the head state update and whether the delta record carries it absolute.
 */
ptp_err_t ptp_enc_head_prepare(const ptp_encoder_t *e, const float head_p[3],
                               const ptp_quat16_t *q16, ptp_head_state_t *hs, double hp[3]);
void ptp_enc_head_commit(ptp_encoder_t *e, const ptp_head_state_t *hs, int key_tick);

static inline int32_t ptp_grid_m(int bits)
{
	return (int32_t)((1u << (bits - 1)) - 1u);
}

#endif
