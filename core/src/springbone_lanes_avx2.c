/* The spring-bone wide kernel on AVX2 (selected at run time when the CPU has it). */
#include <stddef.h>
#include <string.h>

#include "springbone_lanes.h"

#if !defined(PT_NO_SIMD) && (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define WIDE_AVX2
#define WIDE_PAIR /* sixteen lanes: this kernel is latency-bound (wide.h) */
#include "wide.h"

#define SB_LANES_FN pt_sb_lanes_avx2
#define SB_LANES_ATTR __attribute__((target("avx2,fma")))
#include "springbone_lanes.inc"
#else
void pt_sb_lanes_avx2(pt_world *w, const pt_sb_lanes *b)
{
	pt_sb_lanes_scalar(w, b);
}
#endif
