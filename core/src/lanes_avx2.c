/* The verlet wide kernel on AVX2 + FMA (selected at run time when the CPU has both). */
#include <stddef.h>
#include <string.h>

#include "verlet_lanes.h"

#if !defined(PT_NO_SIMD) && (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define WIDE_AVX2
#include "wide.h"

#define LANES_FN pt_verlet_lanes_avx2
#define LANES_ATTR __attribute__((target("avx2,fma")))
#include "verlet_lanes.inc"
#else
void pt_verlet_lanes_avx2(pt_world *w, const pt_lanes *b, int s0, int s1, int phases)
{
	pt_verlet_lanes_scalar(w, b, s0, s1, phases);
}
#endif
