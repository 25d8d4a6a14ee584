/* Which instructions the CPU has, asked once by pt_world_create: the verlet and spring-bone
 * lane kernels (verlet_lanes.inc, springbone_lanes.inc) run on AVX2 + FMA where it has
 * them, else on the plain-C emulation (with the scalar FMA instruction where there is one).
 */
#include "world_internal.h"

#if !defined(PT_NO_SIMD) && (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
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

#else
int pt_cpu_has_avx2(void) { return 0; }
int pt_cpu_has_fma(void) { return 0; }
#endif
