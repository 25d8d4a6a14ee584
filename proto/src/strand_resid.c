/* The encoder's per-tick integer passes over the codes (strand_enc.c): the residual sums
 * of the four predictors, the chosen predictor's zigzag residuals, the codes' change, and
 * the finiteness check of the input. SSE2 (every x86-64) four lanes at a time, else the
 * plain loops; both give the same integers (tests/proto: the stream vectors fix every
 * encoder byte).
 *
 * Codes are in [-M, M] with M < 2^15 and velocities in [-2M, 2M], so every residual
 * below is < 2^18 in magnitude, its zigzag < 2^19, and a lane's sum over at most 32
 * segment pairs stays far inside 32 bits. */
#include <string.h>

#include "bits.h"
#include "strand_internal.h"

#if !defined(PT_NO_SIMD) && defined(__SSE2__)
#define RESID_SIMD 1
#include <emmintrin.h>
#else
#define RESID_SIMD 0
#endif

static inline uint32_t zig(int32_t v)
{
	uint32_t u = (uint32_t)v;
	return (u << 1) ^ (0u - (u >> 31));
}

#if PTP_RESID_AVX2
#include <immintrin.h>

#define RESID_AVX2 __attribute__((target("avx2")))

RESID_AVX2 static void ptp_pred_sums_avx2(const int32_t *cur, const int32_t *pc, const int32_t *pv, int n,
                               uint64_t sum[4]);
RESID_AVX2 static void ptp_pred_residuals_avx2(const int32_t *cur, const int32_t *pc,
                                               const int32_t *pv, int n, int pred, uint32_t *z);
RESID_AVX2 static int ptp_all_finite_avx2(const float *f, int n);
#endif

#if RESID_SIMD
static inline __m128i zig4(__m128i v)
{
	return _mm_xor_si128(_mm_slli_epi32(v, 1), _mm_srai_epi32(v, 31));
}

/* [a's upper two lanes, b's lower two]: the previous segment's (u, v) beside this one's */
static inline __m128i prev_pair(__m128i a, __m128i b)
{
	return _mm_castpd_si128(_mm_shuffle_pd(_mm_castsi128_pd(a), _mm_castsi128_pd(b), 1));
}

static inline uint64_t hsum(__m128i v)
{
	uint32_t t[4];
	_mm_storeu_si128((__m128i *)t, v);
	return (uint64_t)t[0] + t[1] + t[2] + t[3];
}
#endif

void ptp_pred_sums(const int32_t *cur, const int32_t *pc, const int32_t *pv, int n,
                   uint64_t sum[4])
{
	int32_t lu0 = 0, lv0 = 0, lu1 = 0, lv1 = 0;
	int i = 0;
#if PTP_RESID_AVX2
	if (n >= 8 && ptp_resid_avx2()) {
		ptp_pred_sums_avx2(cur, pc, pv, n, sum);
		return;
	}
#endif
	sum[0] = sum[1] = sum[2] = sum[3] = 0;
#if RESID_SIMD
	{
		/* two segments (u, v, u, v) a step; l0, l1: last step's r0, r1 */
		__m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0, l0 = a0, l1 = a0;
		for (; i + 4 <= n; i += 4) {
			__m128i r0 = _mm_sub_epi32(_mm_loadu_si128((const __m128i *)(cur + i)),
			                           _mm_loadu_si128((const __m128i *)(pc + i)));
			__m128i r1 = _mm_sub_epi32(r0, _mm_loadu_si128((const __m128i *)(pv + i)));
			a0 = _mm_add_epi32(a0, zig4(r0));
			a1 = _mm_add_epi32(a1, zig4(r1));
			a2 = _mm_add_epi32(a2, zig4(_mm_sub_epi32(r0, prev_pair(l0, r0))));
			a3 = _mm_add_epi32(a3, zig4(_mm_sub_epi32(r1, prev_pair(l1, r1))));
			l0 = r0, l1 = r1;
		}
		sum[0] = hsum(a0), sum[1] = hsum(a1), sum[2] = hsum(a2), sum[3] = hsum(a3);
		if (i > 0) {
			int32_t t[4];
			_mm_storeu_si128((__m128i *)t, l0);
			lu0 = t[2], lv0 = t[3];
			_mm_storeu_si128((__m128i *)t, l1);
			lu1 = t[2], lv1 = t[3];
		}
	}
#endif
	for (; i < n; i += 2) {
		int32_t u0 = cur[i] - pc[i], u1 = u0 - pv[i];
		int32_t v0 = cur[i + 1] - pc[i + 1], v1 = v0 - pv[i + 1];
		sum[0] += (uint64_t)zig(u0) + zig(v0);
		sum[1] += (uint64_t)zig(u1) + zig(v1);
		sum[2] += (uint64_t)zig(u0 - lu0) + zig(v0 - lv0);
		sum[3] += (uint64_t)zig(u1 - lu1) + zig(v1 - lv1);
		lu0 = u0, lv0 = v0, lu1 = u1, lv1 = v1;
	}
}

void ptp_pred_residuals(const int32_t *cur, const int32_t *pc, const int32_t *pv, int n,
                        int pred, uint32_t *z)
{
	int32_t lin = (pred & PTP_PRED_LINEAR) ? -1 : 0, lu = 0, lv = 0;
	int spatial = (pred & PTP_PRED_SPATIAL) != 0, i = 0;
#if PTP_RESID_AVX2
	if (n >= 8 && ptp_resid_avx2()) {
		ptp_pred_residuals_avx2(cur, pc, pv, n, pred, z);
		return;
	}
#endif
#if RESID_SIMD
	{
		const __m128i lm = _mm_set1_epi32(lin), sm = _mm_set1_epi32(spatial ? -1 : 0);
		__m128i last = _mm_setzero_si128();
		for (; i + 4 <= n; i += 4) {
			__m128i r = _mm_sub_epi32(
			    _mm_sub_epi32(_mm_loadu_si128((const __m128i *)(cur + i)),
			                  _mm_loadu_si128((const __m128i *)(pc + i))),
			    _mm_and_si128(_mm_loadu_si128((const __m128i *)(pv + i)), lm));
			__m128i d = _mm_sub_epi32(r, _mm_and_si128(prev_pair(last, r), sm));
			_mm_storeu_si128((__m128i *)(z + i), zig4(d));
			last = r;
		}
		if (i > 0) {
			int32_t t[4];
			_mm_storeu_si128((__m128i *)t, last);
			lu = t[2], lv = t[3];
		}
	}
#endif
	for (; i < n; i += 2) {
		int32_t ru = cur[i] - pc[i] - (pv[i] & lin);
		int32_t rv = cur[i + 1] - pc[i + 1] - (pv[i + 1] & lin);
		z[i] = zig(spatial ? ru - lu : ru);
		z[i + 1] = zig(spatial ? rv - lv : rv);
		lu = ru, lv = rv;
	}
}

void ptp_code_delta(int32_t *vel, const int32_t *cur, const int32_t *prev, int n)
{
	int i = 0;
#if RESID_SIMD
	for (; i + 4 <= n; i += 4)
		_mm_storeu_si128((__m128i *)(vel + i),
		                 _mm_sub_epi32(_mm_loadu_si128((const __m128i *)(cur + i)),
		                               _mm_loadu_si128((const __m128i *)(prev + i))));
#endif
	for (; i < n; i++)
		vel[i] = cur[i] - prev[i];
}

int ptp_all_finite(const float *f, size_t n)
{
	uint32_t bad = 0;
	size_t i = 0;
#if PTP_RESID_AVX2
	if (ptp_resid_avx2() && n <= (size_t)INT32_MAX)
		return ptp_all_finite_avx2(f, (int)n);
#endif
#if RESID_SIMD
	{
		const __m128i exp = _mm_set1_epi32(0x7f800000);
		__m128i acc = _mm_setzero_si128();
		for (; i + 4 <= n; i += 4) {
			__m128i b = _mm_and_si128(_mm_loadu_si128((const __m128i *)(f + i)), exp);
			acc = _mm_or_si128(acc, _mm_cmpeq_epi32(b, exp));
		}
		bad = (uint32_t)_mm_movemask_epi8(acc);
	}
#endif
	for (; i < n; i++) {
		uint32_t b;
		memcpy(&b, &f[i], sizeof b);
		bad |= (b & 0x7f800000u) == 0x7f800000u;
	}
	return !bad;
}

#if PTP_RESID_AVX2

/* ptp_best_k (strand_enc.c) with eight orders k per register: E(k), the sum of
 * floor(log2(v + 2^k)) over the values, is the exponent field of (float)(v + 2^k), exact
 * while v + 2^k < 2^24 (v < 2^21, PTP_EG_MAX_BITS). The order chosen is the first of the
 * cheapest among 0 .. min(bit length of the largest value, PTP_K_MAX), as there. */
RESID_AVX2 int ptp_best_k_avx2(const uint32_t *z, int n, long *bits)
{
	const __m256i pow0 = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
	const __m256i pow1 = _mm256_slli_epi32(pow0, 8);
	const __m256i ks0 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	const __m256i ks1 = _mm256_add_epi32(ks0, _mm256_set1_epi32(8));
	__m256i any8 = _mm256_setzero_si256(), a0 = any8, b0 = any8, a1 = any8, b1 = any8;
	__m128i any4;
	uint32_t any;
	int i = 0, nk;
	for (; i + 8 <= n; i += 8)
		any8 = _mm256_or_si256(any8, _mm256_loadu_si256((const __m256i *)(z + i)));
	any4 = _mm_or_si128(_mm256_castsi256_si128(any8), _mm256_extracti128_si256(any8, 1));
	any4 = _mm_or_si128(any4, _mm_shuffle_epi32(any4, 0x4e));
	any4 = _mm_or_si128(any4, _mm_shuffle_epi32(any4, 0xb1));
	any = (uint32_t)_mm_cvtsi128_si32(any4);
	for (; i < n; i++)
		any |= z[i];
	nk = ptp_bit_length(any);
	nk = (nk < PTP_K_MAX ? nk : PTP_K_MAX) + 1;
#define EXPONENTS(v, p) \
	_mm256_srli_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(_mm256_add_epi32(v, p))), 23)
	/* two values a step into two accumulators each: shorter chains, half the loop */
	i = 0;
	if (nk <= 8) {
		for (; i + 2 <= n; i += 2) {
			a0 = _mm256_add_epi32(a0, EXPONENTS(_mm256_set1_epi32((int)z[i]), pow0));
			b0 = _mm256_add_epi32(b0, EXPONENTS(_mm256_set1_epi32((int)z[i + 1]), pow0));
		}
	} else {
		for (; i + 2 <= n; i += 2) {
			__m256i v = _mm256_set1_epi32((int)z[i]), w = _mm256_set1_epi32((int)z[i + 1]);
			a0 = _mm256_add_epi32(a0, EXPONENTS(v, pow0));
			b0 = _mm256_add_epi32(b0, EXPONENTS(w, pow0));
			a1 = _mm256_add_epi32(a1, EXPONENTS(v, pow1));
			b1 = _mm256_add_epi32(b1, EXPONENTS(w, pow1));
		}
	}
	if (i < n) {
		__m256i v = _mm256_set1_epi32((int)z[i]);
		a0 = _mm256_add_epi32(a0, EXPONENTS(v, pow0));
		a1 = _mm256_add_epi32(a1, EXPONENTS(v, pow1));
	}
#undef EXPONENTS
	{
		/* total bits 2 E(k) + n (1 - k), E(k) = exponents - 127 n (the bias), for each
		 * k < nk; the others INT32_MAX. Then the least, and its first k. */
		const __m256i nv = _mm256_set1_epi32(n), bias = _mm256_set1_epi32(127 * n);
		const __m256i big = _mm256_set1_epi32(INT32_MAX), nkv = _mm256_set1_epi32(nk);
		__m256i e0 = _mm256_sub_epi32(_mm256_add_epi32(a0, b0), bias);
		__m256i e1 = _mm256_sub_epi32(_mm256_add_epi32(a1, b1), bias);
		__m256i s0 = _mm256_add_epi32(_mm256_add_epi32(e0, e0),
		                              _mm256_mullo_epi32(nv, _mm256_sub_epi32(_mm256_set1_epi32(1), ks0)));
		__m256i s1 = _mm256_add_epi32(_mm256_add_epi32(e1, e1),
		                              _mm256_mullo_epi32(nv, _mm256_sub_epi32(_mm256_set1_epi32(1), ks1)));
		__m256i m, mm;
		__m128i m4;
		int32_t least;
		unsigned hit;
		s0 = _mm256_blendv_epi8(big, s0, _mm256_cmpgt_epi32(nkv, ks0));
		s1 = _mm256_blendv_epi8(big, s1, _mm256_cmpgt_epi32(nkv, ks1));
		m = _mm256_min_epi32(s0, s1);
		m4 = _mm_min_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
		m4 = _mm_min_epi32(m4, _mm_shuffle_epi32(m4, 0x4e));
		m4 = _mm_min_epi32(m4, _mm_shuffle_epi32(m4, 0xb1));
		least = _mm_cvtsi128_si32(m4);
		mm = _mm256_set1_epi32(least);
		hit = (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(s0, mm))) |
		      (unsigned)_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(s1, mm)))
		          << 8;
		*bits = least;
		return __builtin_ctz(hit);
	}
}
#endif

#if PTP_RESID_AVX2
/* ptp_pred_sums and ptp_pred_residuals four segments a step (eight ints), then the same
 * plain tail: the same integers. */
RESID_AVX2 static inline __m256i zig8(__m256i v)
{
	return _mm256_xor_si256(_mm256_slli_epi32(v, 1), _mm256_srai_epi32(v, 31));
}

/* [the last segment of a, the first three of b]: each segment's previous one */
RESID_AVX2 static inline __m256i prev_seg8(__m256i a, __m256i b)
{
	return _mm256_alignr_epi8(b, _mm256_permute2x128_si256(a, b, 0x21), 8);
}

/* Lanes i .. i + 7 that are below n (a strand's last, partial step loads and stores
 * only those) */
RESID_AVX2 static inline __m256i below8(int i, int n)
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32(n - i), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

RESID_AVX2 static void ptp_pred_sums_avx2(const int32_t *cur, const int32_t *pc,
                                          const int32_t *pv, int n, uint64_t sum[4])
{
	__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0, l0 = a0, l1 = a0;
	__m128i t;
	for (int i = 0; i < n; i += 8) {
		/* past n: zeros loaded, so r0 = r1 = 0 there, and the spatial terms masked */
		__m256i in = below8(i, n);
		__m256i r0 = _mm256_sub_epi32(_mm256_maskload_epi32(cur + i, in),
		                              _mm256_maskload_epi32(pc + i, in));
		__m256i r1 = _mm256_sub_epi32(r0, _mm256_maskload_epi32(pv + i, in));
		a0 = _mm256_add_epi32(a0, zig8(r0));
		a1 = _mm256_add_epi32(a1, zig8(r1));
		a2 = _mm256_add_epi32(
		    a2, _mm256_and_si256(in, zig8(_mm256_sub_epi32(r0, prev_seg8(l0, r0)))));
		a3 = _mm256_add_epi32(
		    a3, _mm256_and_si256(in, zig8(_mm256_sub_epi32(r1, prev_seg8(l1, r1)))));
		l0 = r0, l1 = r1;
	}
	/* the four sums (each < 2^32: see the top of this file) side by side */
	a0 = _mm256_hadd_epi32(_mm256_hadd_epi32(a0, a1), _mm256_hadd_epi32(a2, a3));
	t = _mm_add_epi32(_mm256_castsi256_si128(a0), _mm256_extracti128_si256(a0, 1));
	sum[0] = (uint32_t)_mm_extract_epi32(t, 0);
	sum[1] = (uint32_t)_mm_extract_epi32(t, 1);
	sum[2] = (uint32_t)_mm_extract_epi32(t, 2);
	sum[3] = (uint32_t)_mm_extract_epi32(t, 3);
}

RESID_AVX2 static void ptp_pred_residuals_avx2(const int32_t *cur, const int32_t *pc,
                                               const int32_t *pv, int n, int pred, uint32_t *z)
{
	const __m256i lm = _mm256_set1_epi32((pred & PTP_PRED_LINEAR) ? -1 : 0);
	const __m256i sm = _mm256_set1_epi32((pred & PTP_PRED_SPATIAL) ? -1 : 0);
	__m256i last = _mm256_setzero_si256();
	for (int i = 0; i < n; i += 8) {
		__m256i in = below8(i, n);
		__m256i r = _mm256_sub_epi32(
		    _mm256_sub_epi32(_mm256_maskload_epi32(cur + i, in),
		                     _mm256_maskload_epi32(pc + i, in)),
		    _mm256_and_si256(_mm256_maskload_epi32(pv + i, in), lm));
		__m256i d = _mm256_sub_epi32(r, _mm256_and_si256(prev_seg8(last, r), sm));
		_mm256_maskstore_epi32((int *)(z + i), in, zig8(d));
		last = r;
	}
}

/* ptp_all_finite eight floats a step, the last step by a masked load (zeros are finite) */
RESID_AVX2 static int ptp_all_finite_avx2(const float *f, int n)
{
	const __m256i exp = _mm256_set1_epi32(0x7f800000);
	__m256i acc = _mm256_setzero_si256();
	for (int i = 0; i < n; i += 8) {
		__m256i b = _mm256_and_si256(_mm256_maskload_epi32((const int *)(f + i), below8(i, n)),
		                             exp);
		acc = _mm256_or_si256(acc, _mm256_cmpeq_epi32(b, exp));
	}
	return _mm256_testz_si256(acc, acc);
}
#endif
