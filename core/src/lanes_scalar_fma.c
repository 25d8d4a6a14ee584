/* The verlet wide kernel on the plain-C eight-lane emulation, with the CPU's scalar
 * fused multiply-add (selected at run time for the scalar kernel when the CPU has FMA;
 * without it lanes_scalar.c emulates the fused operation exactly, several times slower).
 * Results are bit-identical to both other kernels: a fused operation has one correct
 * result. */
#include <stddef.h>
#include <string.h>

#include "verlet_lanes.h"

#if !defined(PT_NO_SIMD) && (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#pragma GCC target("fma")
#define PT_FMAF __builtin_fmaf
#include "wide.h"

#define LANES_FN pt_verlet_lanes_scalar_fma
#define LANES_ATTR
#include "verlet_lanes.inc"
#else
void pt_verlet_lanes_scalar_fma(pt_world *w, const pt_lanes *b, int s0, int s1, int phases)
{
	pt_verlet_lanes_scalar(w, b, s0, s1, phases);
}
#endif
