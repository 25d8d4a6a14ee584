/* Private to the encoder's closed loop (strand_quant.c, strand_quant_avx2.c,
 * strand_quant_avx2_pair.c): which SIMD kernels this build has, the two-lane loop state
 * the SSE2 and two-lane AVX2 kernels run on, the four-lane AVX2 kernel's, the small
 * inline helpers they share, and the AVX2 kernels' entry points.
 *
 * The helpers are static inline and used inside the kernels' per-point loops: each
 * kernel's file inlines them as before. The AVX2 kernels are functions of their own
 * either way (target("avx2") keeps them out of their caller), so only those calls cross
 * files.
 */
#ifndef PTP_STRAND_QUANT_H
#define PTP_STRAND_QUANT_H

#include <stdint.h>

#include "strand_internal.h"

#if !defined(PT_NO_SIMD) && defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#define QUANT_SSE2 1
#include <immintrin.h>
#if defined(__x86_64__) || defined(__i386__)
#define QUANT_AVX2 1
#else
#define QUANT_AVX2 0
#endif
#else
#define QUANT_SSE2 0
#define QUANT_AVX2 0
#endif

#if QUANT_SSE2

/* Two strands' loop state, lane 0 and lane 1 of every pair below. A lane whose strand
 * has fewer segments keeps computing on its last point, but its codes go to scratch and
 * its error is left alone. */
typedef struct lanes_t {
	double f[9][2];    /* frame, row-major */
	double prev[3][2]; /* reconstructed point so far */
	double len[2], md[2], err2[2];
	const float *pts[2]; /* each lane's points, root first */
	int32_t *codes[2];
	int segs[2];
} lanes_t;

/* Where lane's codes of segment i go, and the point it aims at. */
static inline int32_t *lane_codes(const lanes_t *q, int lane, int i, int32_t *scratch)
{
	return i < q->segs[lane] ? q->codes[lane] + 2 * i : scratch;
}

static inline const float *lane_target(const lanes_t *q, int lane, int i)
{
	return q->pts[lane] + 3 * ((i < q->segs[lane] ? i : q->segs[lane] - 1) + 1);
}

/* codes of one lane: fu + (second pair taken), fv + (second of the pair taken). Bit
 * arithmetic, not a conditional: the choice is data, and a branch on it would be
 * mispredicted half the time, flushing both chains. */
static inline void put_codes(int32_t *c, int32_t fu, int32_t fv, int lane, int gm, int hm, int km)
{
	int j = (hm & km) | (gm & ~km);
	c[0] = fu + ((km >> lane) & 1);
	c[1] = fv + ((j >> lane) & 1);
}

static inline __m128d pd_abs(__m128d x)
{
	return _mm_andnot_pd(_mm_set1_pd(-0.0), x);
}

/* The sign bit where x < 0 (not for -0: sgn 0 = +1 in PROTOCOL.md 7.3). */
static inline __m128d neg_sign(__m128d x)
{
	return _mm_and_pd(_mm_cmplt_pd(x, _mm_setzero_pd()), _mm_set1_pd(-0.0));
}

/* l = frame^T d of both lanes, each component ((a + b) + c) as in the reference. */
static inline void lanes_frame_t(const lanes_t *q, __m128d d0, __m128d d1, __m128d d2,
                                 __m128d *l0, __m128d *l1, __m128d *l2)
{
	*l0 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(_mm_loadu_pd(q->f[0]), d0),
	                            _mm_mul_pd(_mm_loadu_pd(q->f[3]), d1)),
	                 _mm_mul_pd(_mm_loadu_pd(q->f[6]), d2));
	*l1 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(_mm_loadu_pd(q->f[1]), d0),
	                            _mm_mul_pd(_mm_loadu_pd(q->f[4]), d1)),
	                 _mm_mul_pd(_mm_loadu_pd(q->f[7]), d2));
	*l2 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(_mm_loadu_pd(q->f[2]), d0),
	                            _mm_mul_pd(_mm_loadu_pd(q->f[5]), d1)),
	                 _mm_mul_pd(_mm_loadu_pd(q->f[8]), d2));
}

#if QUANT_AVX2

#define AVX2 __attribute__((target("avx2")))

/* Helpers both AVX2 kernels inline: |x|, the sign bit where x < 0 (not for -0, as
 * neg_sign), a where mask (per lane) else b. */
AVX2 static inline __m256d abs4(__m256d x)
{
	return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x);
}

AVX2 static inline __m256d neg_sign4(__m256d x)
{
	return _mm256_and_pd(_mm256_cmp_pd(x, _mm256_setzero_pd(), _CMP_LT_OQ),
	                     _mm256_set1_pd(-0.0));
}

AVX2 static inline __m256d pick4(__m256d mask, __m256d a, __m256d b)
{
	return _mm256_blendv_pd(b, a, mask);
}

/* Four strands' loop state for the AVX2 kernel, lanes 0..3 of every row: lanes_t with
 * four lanes. A lane may repeat another's strand (a group of fewer than four): its codes
 * then point at a scratch array of the caller's and its error is not read. */
typedef struct lanes4_t {
	double f[9][4];    /* frame, row-major */
	double prev[3][4]; /* reconstructed point so far */
	double len[4], md[4], err2[4];
	const float *pts[4]; /* each lane's points, root first */
	int32_t *codes[4];
	int segs[4];
} lanes4_t;

/* The AVX2 kernel (strand_quant_avx2.c): q's four strands through steps segments, their
 * codes and squared errors into q; scratch (2 ints) takes the codes of a lane past its
 * strand's end. Call it only where ptp_quant_available says AVX2. */
AVX2 void ptp_quant_run_avx2(lanes4_t *q, int steps, int32_t *scratch);
/* The two-lane kernel for a group of one or two strands (strand_quant_avx2_pair.c), on
 * lanes_t as the SSE2 kernel: a lane with segs 0 repeats lane 0's strand, never stored.
 * Its init: the frames and roots of both lanes, strand ga of an instance at rot[0],
 * hp[0] and gb at rot[1], hp[1]. */
AVX2 void ptp_quant_run_avx2_pair(lanes_t *q, int steps, int32_t *scratch);
AVX2 void ptp_lanes_init_avx2_pair(lanes_t *q, const ptp_strand_geo_t *ga,
                                   const ptp_strand_geo_t *gb, const double *const rot[2],
                                   const double *const hp[2]);
/* The frames and roots of q's four lanes (strand g[j] of an instance at rot[j], hp[j]),
 * as lanes_init sets them: each element the same ((a + b) + c) of the same products as
 * ptp_frame and ptp_strand_root. */
AVX2 void ptp_lanes_init_avx2(lanes4_t *q, const ptp_strand_geo_t *const g[4],
                              const double *const rot[4], const double *const hp[4]);

#endif /* QUANT_AVX2 */
#endif /* QUANT_SSE2 */

#endif
