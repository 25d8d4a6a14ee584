/* Eight-lane wide floats: AVX2 or a plain-C emulation with identical rounding.
 *
 * Included by wide.c twice, once per implementation (WIDE_AVX2 defined or not), so the
 * lane kernels (verlet_lanes.inc) are compiled for both from one source. Every
 * operation is an IEEE single-precision add, sub, mul, div, sqrt, compare or select,
 * each correctly rounded in both, and the build disables FMA contraction: the two
 * implementations produce bit-identical results, which the determinism test checks.
 * wide_gather / wide_scatter move strands between the pool and lane-interleaved
 * buffers (pure data movement: transposes on AVX2, loops in plain C).
 */
#ifdef WIDE_AVX2
#include <immintrin.h>

typedef __m256 wf;
#define WATTR __attribute__((target("avx2"), always_inline)) static inline
WATTR wf wf_set(float a) { return _mm256_set1_ps(a); }
WATTR wf wf_load(const float *p) { return _mm256_loadu_ps(p); }
WATTR void wf_store(float *p, wf a) { _mm256_storeu_ps(p, a); }
WATTR wf wf_add(wf a, wf b) { return _mm256_add_ps(a, b); }
WATTR wf wf_sub(wf a, wf b) { return _mm256_sub_ps(a, b); }
WATTR wf wf_mul(wf a, wf b) { return _mm256_mul_ps(a, b); }
WATTR wf wf_div(wf a, wf b) { return _mm256_div_ps(a, b); }
WATTR wf wf_sqrt(wf a) { return _mm256_sqrt_ps(a); }
WATTR wf wf_min(wf a, wf b) { return _mm256_min_ps(a, b); }
WATTR wf wf_max(wf a, wf b) { return _mm256_max_ps(a, b); }
/* Comparisons give all-ones / all-zeros lanes. */
WATTR wf wf_gt(wf a, wf b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
WATTR wf wf_lt(wf a, wf b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
WATTR wf wf_and(wf a, wf b) { return _mm256_and_ps(a, b); }
WATTR wf wf_or(wf a, wf b) { return _mm256_or_ps(a, b); }
/* m ? a : b */
WATTR wf wf_sel(wf m, wf a, wf b) { return _mm256_blendv_ps(b, a, m); }
WATTR int wf_any(wf m) { return _mm256_movemask_ps(m) != 0; }

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

/* dst[j][l] = src[base[l] + j] for j < n: eight rows in, transposed to lane columns.
 * Masked loads never touch memory past a strand's last point. */
WATTR void wide_gather(const float *src, const int base[8], int n, float (*dst)[8])
{
	for (int j0 = 0; j0 < n; j0 += 8) {
		int m = n - j0 < 8 ? n - j0 : 8;
		__m256i mask = wf_prefix_mask(m);
		__m256 r[8];
		for (int l = 0; l < 8; l++)
			r[l] = _mm256_maskload_ps(src + base[l] + j0, mask);
		wf_transpose8(r);
		for (int j = 0; j < m; j++)
			_mm256_storeu_ps(dst[j0 + j], r[j]);
	}
}

/* The inverse for the first `count` lanes: dst[base[l] + j] = src[j][l]. */
WATTR void wide_scatter(float *dst, const int base[8], int count, int n, float (*src)[8])
{
	for (int j0 = 0; j0 < n; j0 += 8) {
		int m = n - j0 < 8 ? n - j0 : 8;
		__m256i mask = wf_prefix_mask(m);
		__m256 r[8];
		for (int j = 0; j < 8; j++)
			r[j] = _mm256_loadu_ps(src[j0 + (j < m ? j : 0)]);
		wf_transpose8(r);
		for (int l = 0; l < count; l++)
			_mm256_maskstore_ps(dst + base[l] + j0, mask, r[l]);
	}
}

#else
#include <math.h>
#include <string.h>

typedef struct wf {
	float v[8];
} wf;
#define WATTR __attribute__((always_inline)) static inline
#define WF_MAP(expr)                                                                               \
	wf r;                                                                                      \
	for (int i = 0; i < 8; i++)                                                                \
		r.v[i] = (expr);                                                                   \
	return r
WATTR wf wf_set(float a) { WF_MAP(a); }
WATTR wf wf_load(const float *p) { WF_MAP(p[i]); }
WATTR void wf_store(float *p, wf a) { memcpy(p, a.v, sizeof a.v); }
WATTR wf wf_add(wf a, wf b) { WF_MAP(a.v[i] + b.v[i]); }
WATTR wf wf_sub(wf a, wf b) { WF_MAP(a.v[i] - b.v[i]); }
WATTR wf wf_mul(wf a, wf b) { WF_MAP(a.v[i] * b.v[i]); }
WATTR wf wf_div(wf a, wf b) { WF_MAP(a.v[i] / b.v[i]); }
WATTR wf wf_sqrt(wf a) { WF_MAP(sqrtf(a.v[i])); }
/* min/max follow the SSE convention (second operand when unordered or equal). */
WATTR wf wf_min(wf a, wf b) { WF_MAP(a.v[i] < b.v[i] ? a.v[i] : b.v[i]); }
WATTR wf wf_max(wf a, wf b) { WF_MAP(a.v[i] > b.v[i] ? a.v[i] : b.v[i]); }
/* Masks are 1.0f / 0.0f here: only wf_and, wf_or, wf_sel and wf_any read them. */
WATTR wf wf_gt(wf a, wf b) { WF_MAP(a.v[i] > b.v[i] ? 1.0f : 0.0f); }
WATTR wf wf_lt(wf a, wf b) { WF_MAP(a.v[i] < b.v[i] ? 1.0f : 0.0f); }
WATTR wf wf_and(wf a, wf b) { WF_MAP(a.v[i] != 0.0f && b.v[i] != 0.0f ? 1.0f : 0.0f); }
WATTR wf wf_or(wf a, wf b) { WF_MAP(a.v[i] != 0.0f || b.v[i] != 0.0f ? 1.0f : 0.0f); }
WATTR wf wf_sel(wf m, wf a, wf b) { WF_MAP(m.v[i] != 0.0f ? a.v[i] : b.v[i]); }
WATTR int wf_any(wf m)
{
	for (int i = 0; i < 8; i++)
		if (m.v[i] != 0.0f)
			return 1;
	return 0;
}
#undef WF_MAP

WATTR void wide_gather(const float *src, const int base[8], int n, float (*dst)[8])
{
	for (int l = 0; l < 8; l++)
		for (int j = 0; j < n; j++)
			dst[j][l] = src[base[l] + j];
}

WATTR void wide_scatter(float *dst, const int base[8], int count, int n, float (*src)[8])
{
	for (int l = 0; l < count; l++)
		for (int j = 0; j < n; j++)
			dst[base[l] + j] = src[j][l];
}
#endif
