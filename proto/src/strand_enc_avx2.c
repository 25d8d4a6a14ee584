/* The delta record's residuals as Exp-Golomb codes, eight at a time (AVX2), for
 * ptp_enc_write_strand (strand_enc.c): the same fields, in the same order, written by
 * the same 64-bit accumulator steps as its plain loop, so the same bits.
 *
 * The plain loop's cost is per value: the code's length from the bit length of
 * v + 2^k, the code itself, and joining a segment's two codes into one field. Those do
 * not depend on the writer, so they are computed here for a whole strand with vector
 * operations (floor(log2 u) as the exponent field of (float)u, exact for u < 2^24), and
 * only the accumulator's chain (or, add, store, shift) is left per segment. */
#include <string.h>

#include "bits.h"
#include "strand_internal.h"

#if PTP_RESID_AVX2
#include <immintrin.h>

#define ENC_AVX2 __attribute__((target("avx2,bmi2")))

enum { MAX_VALS = 2 * (PTP_MAX_POINTS - 1), MAX_SEGS = PTP_MAX_POINTS - 1 };

/* Writes n (even) zigzag residuals z (each < 2^PTP_EG_MAX_BITS) as Exp-Golomb of order k,
 * a segment's two as one field, as ptp_enc_write_strand's plain loop does. Returns 0,
 * writing nothing, where that loop would split a segment's field (over 56 bits): the
 * caller then runs the plain loop. */
ENC_AVX2 int ptp_put_eg_pairs_avx2(ptp_bitw_t *w, const uint32_t *z, int n, int k)
{
	uint64_t code[MAX_SEGS + 5] __attribute__((aligned(32)));
	uint32_t len[MAX_SEGS + 5] __attribute__((aligned(32)));
	const __m256i kv = _mm256_set1_epi32(k), one = _mm256_set1_epi32(1);
	const __m256i pk = _mm256_sllv_epi32(one, kv), bias = _mm256_set1_epi32(127);
	const __m256i evens = _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0);
	__m256i over = _mm256_setzero_si256();
	int segs = n / 2;
	if (n <= 0 || n > MAX_VALS || (n & 1))
		return 0;
	for (int i = 0; i < n; i += 8) {
		/* past n: zeros (their codes land past segs, never written) */
		__m256i in = _mm256_cmpgt_epi32(_mm256_set1_epi32(n - i),
		                                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
		__m256i v = _mm256_maskload_epi32((const int *)(z + i), in);
		__m256i u = _mm256_add_epi32(v, pk);
		/* nb = floor(log2 u); the code: (2 (u - 2^nb) + 1) << (nb - k), 2 nb - k + 1 bits */
		__m256i nb = _mm256_sub_epi32(
		    _mm256_srli_epi32(_mm256_castps_si256(_mm256_cvtepi32_ps(u)), 23), bias);
		__m256i ln = _mm256_add_epi32(_mm256_sub_epi32(_mm256_add_epi32(nb, nb), kv), one);
		__m256i lo = _mm256_or_si256(
		    _mm256_slli_epi32(_mm256_xor_si256(u, _mm256_sllv_epi32(one, nb)), 1), one);
		__m256i sh = _mm256_sub_epi32(nb, kv);
		/* a segment's two lengths summed, in the even 32-bit lanes */
		__m256i pl = _mm256_add_epi32(ln, _mm256_srli_epi64(ln, 32));
		over = _mm256_or_si256(over, _mm256_cmpgt_epi32(pl, _mm256_set1_epi32(56)));
		_mm_storeu_si128((__m128i *)(len + i / 2),
		                 _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(pl, evens)));
		for (int h = 0; h < 2; h++) {
			/* four values (two segments) in 64-bit lanes: each code shifted, the second
			 * of a segment by the first's length, then joined */
			__m128i lo4 = h ? _mm256_extracti128_si256(lo, 1) : _mm256_castsi256_si128(lo);
			__m128i sh4 = h ? _mm256_extracti128_si256(sh, 1) : _mm256_castsi256_si128(sh);
			__m128i ln4 = h ? _mm256_extracti128_si256(ln, 1) : _mm256_castsi256_si128(ln);
			__m256i c = _mm256_sllv_epi64(_mm256_cvtepu32_epi64(lo4), _mm256_cvtepu32_epi64(sh4));
			c = _mm256_sllv_epi64(c, _mm256_slli_si256(_mm256_cvtepu32_epi64(ln4), 8));
			c = _mm256_or_si256(c, _mm256_srli_si256(c, 8));
			_mm_storeu_si128((__m128i *)(code + i / 2 + 2 * h),
			                 _mm256_castsi256_si128(_mm256_permute4x64_epi64(c, 0x08)));
		}
	}
	/* a field over 56 bits: the plain loop splits it (padding values, and the odd lanes
	 * of pl, are single codes of at most 41 bits: never over) */
	if (!_mm256_testz_si256(over, over))
		return 0;
	{
		/* ptp_bitw_put_bits, field after field, with the writer in locals */
		ptp_bitw_t lw = *w;
		for (int s = 0; s < segs; s++) {
			lw.acc |= code[s] << lw.pending;
			lw.pending += len[s];
			if (lw.stored + 8 <= lw.cap) {
				unsigned whole = lw.pending >> 3;
				ptp_store_le64(lw.buf + lw.stored, lw.acc);
				lw.stored += whole;
				lw.acc >>= 8 * whole;
				lw.pending &= 7;
			} else {
				ptp_bitw_put_slow(&lw);
			}
		}
		*w = lw;
	}
	return 1;
}
#else
/* Nothing to build without AVX2: ISO C wants a translation unit to declare something. */
typedef int ptp_strand_enc_avx2_unused;
#endif
