/* Wide floats: eight lanes in an AVX2 register (sixteen in two with WIDE_PAIR), or eight
 * in a plain-C emulation with identical rounding.
 *
 * Included once per implementation (WIDE_AVX2 defined or not: lanes_avx2.c,
 * lanes_scalar.c, lanes_scalar_fma.c and the spring bone's twins), so the lane kernels
 * (verlet_lanes.inc, springbone_lanes.inc) are compiled for each from one source. Every
 * operation is an IEEE single-precision add, sub, mul, div, sqrt, fused multiply-add
 * (wf_fma: fmaf in plain C), compare or select, each correctly rounded in both, and the
 * build disables FMA contraction, so a fused operation is only where the source says:
 * the two implementations produce bit-identical results, which the determinism test
 * checks. The AVX2 path needs FMA too (every AVX2 CPU but a few early VIA ones has it).
 * wide_gather / wide_scatter move strands between the pool and lane-interleaved
 * buffers (pure data movement: transposes on AVX2, loops in plain C).
 */
#ifdef WIDE_AVX2
#include <immintrin.h>

/* Eight lanes in one AVX2 register, or with WIDE_PAIR defined sixteen in two. A pair
 * gives each instruction stream two independent dependency chains, which a kernel bound
 * by the latency of its serial passes along a strand needs (the spring bone's); but a
 * 3-vector of pairs is six of the sixteen registers, and a kernel that keeps several
 * live spills the rest to the stack (the verlet kernel's contact loop runs faster with
 * one register each: core/README.md "SIMD lanes"). WF_B(...) adds the second register's
 * part of an expression where there is one. */
#ifdef WIDE_PAIR
typedef struct wf {
	__m256 a, b;
} wf;
#define WF_LANES 16
#define WF_B(...) , __VA_ARGS__
#else
typedef struct wf {
	__m256 a;
} wf;
#define WF_LANES 8
#define WF_B(...)
#endif
#define WATTR __attribute__((target("avx2,fma"), always_inline)) static inline
#define WF2(f, x, y)                                                                               \
	{                                                                                          \
		f((x).a, (y).a) WF_B(f((x).b, (y).b))                                              \
	}
WATTR wf wf_set(float v)
{
	wf r = {_mm256_set1_ps(v) WF_B(_mm256_set1_ps(v))};
	return r;
}
WATTR wf wf_load(const float *p)
{
	wf r = {_mm256_loadu_ps(p) WF_B(_mm256_loadu_ps(p + 8))};
	return r;
}
WATTR void wf_store(float *p, wf v)
{
	_mm256_storeu_ps(p, v.a);
#ifdef WIDE_PAIR
	_mm256_storeu_ps(p + 8, v.b);
#endif
}
WATTR wf wf_add(wf x, wf y)
{
	wf r = WF2(_mm256_add_ps, x, y);
	return r;
}
WATTR wf wf_sub(wf x, wf y)
{
	wf r = WF2(_mm256_sub_ps, x, y);
	return r;
}
WATTR wf wf_mul(wf x, wf y)
{
	wf r = WF2(_mm256_mul_ps, x, y);
	return r;
}
WATTR wf wf_div(wf x, wf y)
{
	wf r = WF2(_mm256_div_ps, x, y);
	return r;
}
/* Fused multiply-add, one rounding: a * b + c and c - a * b. */
WATTR wf wf_fma(wf a, wf b, wf c)
{
	wf r = {_mm256_fmadd_ps(a.a, b.a, c.a) WF_B(_mm256_fmadd_ps(a.b, b.b, c.b))};
	return r;
}
WATTR wf wf_fnma(wf a, wf b, wf c)
{
	wf r = {_mm256_fnmadd_ps(a.a, b.a, c.a) WF_B(_mm256_fnmadd_ps(a.b, b.b, c.b))};
	return r;
}
WATTR wf wf_sqrt(wf x)
{
	wf r = {_mm256_sqrt_ps(x.a) WF_B(_mm256_sqrt_ps(x.b))};
	return r;
}
WATTR wf wf_min(wf x, wf y)
{
	wf r = WF2(_mm256_min_ps, x, y);
	return r;
}
WATTR wf wf_max(wf x, wf y)
{
	wf r = WF2(_mm256_max_ps, x, y);
	return r;
}
/* Comparisons give all-ones / all-zeros lanes. */
WATTR __m256 gt8(__m256 x, __m256 y)
{
	return _mm256_cmp_ps(x, y, _CMP_GT_OQ);
}
WATTR __m256 lt8(__m256 x, __m256 y)
{
	return _mm256_cmp_ps(x, y, _CMP_LT_OQ);
}
WATTR wf wf_gt(wf x, wf y)
{
	wf r = WF2(gt8, x, y);
	return r;
}
WATTR wf wf_lt(wf x, wf y)
{
	wf r = WF2(lt8, x, y);
	return r;
}
WATTR __m256 nlt8(__m256 x, __m256 y)
{
	return _mm256_cmp_ps(x, y, _CMP_NLT_UQ);
}
WATTR wf wf_not_lt(wf x, wf y)
{
	wf r = WF2(nlt8, x, y);
	return r;
}
/* |x - y| (clears the sign bit, as fabsf does) */
WATTR __m256 absd8(__m256 x, __m256 y)
{
	return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_sub_ps(x, y));
}
WATTR wf wf_abs_diff(wf x, wf y)
{
	wf r = WF2(absd8, x, y);
	return r;
}
WATTR wf wf_and(wf x, wf y)
{
	wf r = WF2(_mm256_and_ps, x, y);
	return r;
}
WATTR wf wf_or(wf x, wf y)
{
	wf r = WF2(_mm256_or_ps, x, y);
	return r;
}
/* m ? x : y */
WATTR wf wf_sel(wf m, wf x, wf y)
{
	wf r = {_mm256_blendv_ps(y.a, x.a, m.a) WF_B(_mm256_blendv_ps(y.b, x.b, m.b))};
	return r;
}
WATTR int wf_any(wf m)
{
	int bits = _mm256_movemask_ps(m.a);
#ifdef WIDE_PAIR
	bits |= _mm256_movemask_ps(m.b);
#endif
	return bits != 0;
}
#undef WF2
#undef WF_B

/* 8x8 transpose of rows r[0..7] in place (the classic unpack / shuffle / permute). */
WATTR void wf_transpose8(__m256 r[8])
{
	__m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
	__m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
	__m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
	__m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
	__m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
	__m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
	__m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
	__m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
	r[0] = _mm256_permute2f128_ps(u0, u4, 0x20), r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
	r[2] = _mm256_permute2f128_ps(u2, u6, 0x20), r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
	r[4] = _mm256_permute2f128_ps(u0, u4, 0x31), r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
	r[6] = _mm256_permute2f128_ps(u2, u6, 0x31), r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

WATTR __m256i wf_prefix_mask(int m)
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32(m), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* 4x4 transposes in both 128-bit halves of r[0..3] in place: rows [lane k | lane k + 4]
 * of four points become points [lanes 0-3 | lanes 4-7], and back (it is its own
 * inverse). */
WATTR void wf_transpose4x2(__m256 r[4])
{
	__m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
	__m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
	r[0] = _mm256_shuffle_ps(t0, t2, 0x44), r[1] = _mm256_shuffle_ps(t0, t2, 0xEE);
	r[2] = _mm256_shuffle_ps(t1, t3, 0x44), r[3] = _mm256_shuffle_ps(t1, t3, 0xEE);
}

/* dst[j][l] = src[base[l] + j] - o[l] for j < n (o NULL: nothing subtracted): rows in,
 * transposed to lane columns, eight lanes and eight points at a time, a last four or
 * fewer points four at a time. Masked loads never touch memory past a strand's last
 * point; every store is a whole register, so the buffer's rows past n, up to the next
 * multiple of four or eight (within PT_MAX_POINTS), receive -o: nothing reads them (the
 * plain-C gather does not write them at all). The loops are unrolled so that the rows
 * stay in registers. */
WATTR void wide_gather(const float *src, const int base[WF_LANES], int n, float (*dst)[WF_LANES],
                       const float *o)
{
	for (int j0 = 0; j0 < n; j0 += 8) {
		__m256i mask = wf_prefix_mask(n - j0);
		for (int h = 0; h < WF_LANES; h += 8) {
			__m256 r[8], oh = o ? _mm256_loadu_ps(o + h) : _mm256_setzero_ps();
			if (n - j0 <= 4) {
				__m128i m4 = _mm256_castsi256_si128(mask);
#pragma GCC unroll 4
				for (int l = 0; l < 4; l++)
					r[l] = _mm256_insertf128_ps(
					    _mm256_castps128_ps256(
					        _mm_maskload_ps(src + base[h + l] + j0, m4)),
					    _mm_maskload_ps(src + base[h + l + 4] + j0, m4), 1);
				wf_transpose4x2(r);
#pragma GCC unroll 4
				for (int j = 0; j < 4; j++)
					_mm256_storeu_ps(dst[j0 + j] + h, _mm256_sub_ps(r[j], oh));
				continue;
			}
#pragma GCC unroll 8
			for (int l = 0; l < 8; l++)
				r[l] = _mm256_maskload_ps(src + base[h + l] + j0, mask);
			wf_transpose8(r);
#pragma GCC unroll 8
			for (int j = 0; j < 8; j++)
				_mm256_storeu_ps(dst[j0 + j] + h, _mm256_sub_ps(r[j], oh));
		}
	}
}

/* The inverse for the first `count` lanes: dst[base[l] + j] = src[j][l] + o[l] (o NULL:
 * nothing added). Reads whole registers of the buffer (rows past n, whatever they hold,
 * are never stored) and writes only the n points of each strand. */
WATTR void wide_scatter(float *dst, const int base[WF_LANES], int count, int n,
                        float (*src)[WF_LANES], const float *o)
{
	for (int j0 = 0; j0 < n; j0 += 8) {
		__m256i mask = wf_prefix_mask(n - j0);
		for (int h = 0; h < count; h += 8) {
			__m256 r[8], oh = o ? _mm256_loadu_ps(o + h) : _mm256_setzero_ps();
			int lanes = count - h < 8 ? count - h : 8;
			if (n - j0 <= 4) {
				__m128i m4 = _mm256_castsi256_si128(mask);
#pragma GCC unroll 4
				for (int j = 0; j < 4; j++)
					r[j] = _mm256_add_ps(_mm256_loadu_ps(src[j0 + j] + h), oh);
				wf_transpose4x2(r);
				for (int l = 0; l < lanes && l < 4; l++)
					_mm_maskstore_ps(dst + base[h + l] + j0, m4,
					                 _mm256_castps256_ps128(r[l]));
				for (int l = 4; l < lanes; l++)
					_mm_maskstore_ps(dst + base[h + l] + j0, m4,
					                 _mm256_extractf128_ps(r[l - 4], 1));
				continue;
			}
#pragma GCC unroll 8
			for (int j = 0; j < 8; j++)
				r[j] = _mm256_add_ps(_mm256_loadu_ps(src[j0 + j] + h), oh);
			wf_transpose8(r);
			if (lanes == 8) {
#pragma GCC unroll 8
				for (int l = 0; l < 8; l++)
					_mm256_maskstore_ps(dst + base[h + l] + j0, mask, r[l]);
			} else
				for (int l = 0; l < lanes; l++)
					_mm256_maskstore_ps(dst + base[h + l] + j0, mask, r[l]);
		}
	}
}

#else
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Eight lanes: a kernel's lanes are independent of each other, so the emulation may
 * run a sixteen-strand batch as two halves and still match AVX2 bit for bit. */
typedef struct wf {
	float v[8];
} wf;
#define WF_LANES 8
#define WATTR __attribute__((always_inline)) static inline
#define WF_MAP(expr)                                                                               \
	wf r;                                                                                      \
	for (int i = 0; i < 8; i++)                                                                \
		r.v[i] = (expr);                                                                   \
	return r
WATTR wf wf_set(float a)
{
	WF_MAP(a);
}
WATTR wf wf_load(const float *p)
{
	WF_MAP(p[i]);
}
WATTR void wf_store(float *p, wf a)
{
	memcpy(p, a.v, sizeof a.v);
}
WATTR wf wf_add(wf a, wf b)
{
	WF_MAP(a.v[i] + b.v[i]);
}
WATTR wf wf_sub(wf a, wf b)
{
	WF_MAP(a.v[i] - b.v[i]);
}
WATTR wf wf_mul(wf a, wf b)
{
	WF_MAP(a.v[i] * b.v[i]);
}
WATTR wf wf_div(wf a, wf b)
{
	WF_MAP(a.v[i] / b.v[i]);
}
/* a * b + c rounded once, as the FMA instruction does (bit-identical results), without
 * one: the product of two floats is exact in a double; the sum is rounded to odd in the
 * double (TwoSum gives its exact error; an inexact even result steps one ulp towards
 * it), and a double rounded to odd has enough spare bits (53 >= 24 + 2) that rounding it
 * to float is the correctly rounded fused result (Boldo and Melquiond, 2008). libm's
 * fmaf without the instruction does the same through the floating-point environment,
 * several times slower. */
WATTR float fma_odd(float a, float b, float c)
{
	double p = (double)a * (double)b, s = p + (double)c, bb = s - p;
	double err = (p - (s - bb)) + ((double)c - bb);
	if (err != 0.0 && isfinite(s)) {
		uint64_t u;
		memcpy(&u, &s, sizeof u);
		if (!(u & 1u)) {
			u += (err > 0.0) == (s > 0.0) ? 1u : (uint64_t)-1;
			memcpy(&s, &u, sizeof s);
		}
	}
	return (float)s;
}
/* Where the compiler has a fused instruction (aarch64, or x86 built with -mfma) fmaf is
 * that one instruction; elsewhere the emulation above (about 25 instructions). */
#ifndef PT_FMAF /* lanes_scalar_fma.c sets the instruction */
#ifdef __FP_FAST_FMAF
#define PT_FMAF fmaf
#else
#define PT_FMAF fma_odd
#endif
#endif
WATTR wf wf_fma(wf a, wf b, wf c)
{
	WF_MAP(PT_FMAF(a.v[i], b.v[i], c.v[i]));
}
WATTR wf wf_fnma(wf a, wf b, wf c)
{
	WF_MAP(PT_FMAF(-a.v[i], b.v[i], c.v[i]));
}
WATTR wf wf_sqrt(wf a)
{
	WF_MAP(sqrtf(a.v[i]));
}
/* min/max follow the SSE convention (second operand when unordered or equal). */
WATTR wf wf_min(wf a, wf b)
{
	WF_MAP(a.v[i] < b.v[i] ? a.v[i] : b.v[i]);
}
WATTR wf wf_max(wf a, wf b)
{
	WF_MAP(a.v[i] > b.v[i] ? a.v[i] : b.v[i]);
}
/* Masks are 1.0f / 0.0f here: only wf_and, wf_or, wf_sel and wf_any read them. */
WATTR wf wf_gt(wf a, wf b)
{
	WF_MAP(a.v[i] > b.v[i] ? 1.0f : 0.0f);
}
WATTR wf wf_lt(wf a, wf b)
{
	WF_MAP(a.v[i] < b.v[i] ? 1.0f : 0.0f);
}
WATTR wf wf_not_lt(wf a, wf b)
{
	WF_MAP(!(a.v[i] < b.v[i]) ? 1.0f : 0.0f);
}
WATTR wf wf_abs_diff(wf a, wf b)
{
	WF_MAP(fabsf(a.v[i] - b.v[i]));
}
WATTR wf wf_and(wf a, wf b)
{
	WF_MAP(a.v[i] != 0.0f && b.v[i] != 0.0f ? 1.0f : 0.0f);
}
WATTR wf wf_or(wf a, wf b)
{
	WF_MAP(a.v[i] != 0.0f || b.v[i] != 0.0f ? 1.0f : 0.0f);
}
WATTR wf wf_sel(wf m, wf a, wf b)
{
	WF_MAP(m.v[i] != 0.0f ? a.v[i] : b.v[i]);
}
WATTR int wf_any(wf m)
{
	for (int i = 0; i < 8; i++)
		if (m.v[i] != 0.0f)
			return 1;
	return 0;
}
#undef WF_MAP

WATTR void wide_gather(const float *src, const int base[8], int n, float (*dst)[8], const float *o)
{
	for (int l = 0; l < 8; l++)
		for (int j = 0; j < n; j++)
			dst[j][l] = o ? src[base[l] + j] - o[l] : src[base[l] + j];
}

WATTR void wide_scatter(float *dst, const int base[8], int count, int n, float (*src)[8],
                        const float *o)
{
	for (int l = 0; l < count; l++)
		for (int j = 0; j < n; j++)
			dst[base[l] + j] = o ? src[j][l] + o[l] : src[j][l];
}
#endif
