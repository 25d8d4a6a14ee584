/* The verlet solver's wide path: eight strands (usually of eight different instances)
 * step one substep together, one per SIMD lane (private to core).
 *
 * The serial passes along a strand (Gauss-Seidel distances, follow-the-leader) are
 * chains of dependent square roots and divisions; run one strand at a time they are
 * latency-bound. Across lanes the same chains run side by side. Strands enter a batch
 * through pt_verlet_batch_add() and batches run when full or on flush.
 */
#ifndef PT_VERLET_LANES_H
#define PT_VERLET_LANES_H

#include "world_internal.h"

enum { PT_LANES = 8 };

/* Mueller's s_damping: the share of a point's follow-the-leader correction removed from
 * its parent's velocity (1 removes all of it; 0.9 keeps a little liveliness). */
#define PT_FTL_VELOCITY_FIX 0.9f

typedef struct pt_lane {
	int base;      /* pool index of the root */
	int iterations;
	float k;       /* kept velocity factor for this substep */
	float length;  /* segment length */
	float bend;    /* bend fraction for this substep */
	float radius;  /* particle radius */
	pt_vec3 ah2;   /* acceleration x h^2 */
	pt_vec3 root;  /* anchor in world space */
	pt_vec3 rest;  /* rest direction in world space */
	const pt_collider_rt *cols;
	int ncols;
	uint32_t mask;
} pt_lane;

/* Pending partial batches, one per point count; lives on the stepping thread's stack. */
typedef struct pt_batcher {
	int count[PT_MAX_POINTS + 1];
	pt_lane lane[PT_MAX_POINTS + 1][PT_LANES];
} pt_batcher;

/* Steps `count` (1..8) strands of `n` points each by one substep. */
void pt_verlet_lanes_scalar(pt_world *w, const pt_lane *lanes, int count, int n);
void pt_verlet_lanes_avx2(pt_world *w, const pt_lane *lanes, int count, int n);

/* 1 when an instance can take the wide path: exact stretch, no self-collision, and only
 * sphere, capsule and plane colliders (others use the per-instance path). */
int pt_verlet_lanes_eligible(const pt_inst *in);

/* Adds every strand of a verlet instance for its current substep (pose, colliders and h
 * in the instance's step scratch); runs batches that fill up. */
void pt_verlet_batch_add(pt_world *w, pt_batcher *b, pt_inst *in);
/* Runs every partial batch. */
void pt_verlet_batch_flush(pt_world *w, pt_batcher *b);

#endif
