/* The one file with SIMD intrinsics: the Verlet integration kernel.
 *
 * Both kernels evaluate x' = (x + (x - px) * k) + ah2 with the same operations in the
 * same order, and the build disables FMA contraction (-ffp-contract=off), so their
 * results are bit-identical; the determinism tests compare them.
 */
#include "world_internal.h"

void pt_integrate_scalar(float *x, float *px, int n, float k, float ah2)
{
	for (int i = 0; i < n; i++) {
		float xi = x[i];
		float v = (xi - px[i]) * k;
		px[i] = xi;
		x[i] = (xi + v) + ah2;
	}
}

#if !defined(PT_NO_SIMD) && (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#include <immintrin.h>

int pt_cpu_has_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

int pt_cpu_has_fma(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("fma");
}

__attribute__((target("avx2"))) void pt_integrate_avx2(float *x, float *px, int n, float k, float ah2)
{
	__m256 vk = _mm256_set1_ps(k), va = _mm256_set1_ps(ah2);
	int i = 0;
	for (; i + 8 <= n; i += 8) {
		__m256 xi = _mm256_loadu_ps(x + i);
		__m256 v = _mm256_mul_ps(_mm256_sub_ps(xi, _mm256_loadu_ps(px + i)), vk);
		_mm256_storeu_ps(px + i, xi);
		_mm256_storeu_ps(x + i, _mm256_add_ps(_mm256_add_ps(xi, v), va));
	}
	pt_integrate_scalar(x + i, px + i, n - i, k, ah2);
}
#else
int pt_cpu_has_avx2(void) { return 0; }
int pt_cpu_has_fma(void) { return 0; }
void pt_integrate_avx2(float *x, float *px, int n, float k, float ah2)
{
	pt_integrate_scalar(x, px, n, k, ah2);
}
#endif
