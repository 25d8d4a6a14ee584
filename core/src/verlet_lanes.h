/* The verlet step, across lanes: a batch of sixteen strands (usually of many different
 * instances) steps as two groups of eight, one strand per SIMD lane (private to core). An
 * instance stepped alone is a batch whose other lanes repeat it: there is no other
 * implementation.
 *
 * The serial passes along a strand (Gauss-Seidel distances, follow-the-leader) are
 * chains of dependent square roots and divisions; run one strand at a time they are
 * latency-bound. Across lanes the same chains run side by side. Strands enter a batch
 * through pt_verlet_batch_add() and batches run when full or on flush.
 */
#ifndef PT_VERLET_LANES_H
#define PT_VERLET_LANES_H

#include "world_internal.h"

enum { PT_LANES = 16 };

/* Constants of the verlet step shared by both paths (solver_verlet.c explains them). */
#define PT_SHAKE_COS_MIN 0.9f        /* below: solve along the current segment direction */
#define PT_SOLVE_TOL 1e-4f           /* Newton stops at |q^2 - L^2| <= this x the least L^2 */
#define PT_CONTACT_ROUNDS 64         /* push-and-reproject rounds per point (a point wedged
                                      * between two colliders alternates slowly) */
#define PT_CONTACT_EPS 1e-6f         /* m: a round counts only deeper penetrations */
#define PT_CONTACT_TANGENT_MIN 0.05f /* 1 - cos^2 under which a push goes along the normal */
#define PT_CONTACT_FRICTION 0.3f     /* Coulomb coefficient of hair on a collider */
#define PT_CONTACT_SLOP 0.0008f      /* m a wedged point may stay inside (spec: <= 1 mm) */

/* One batch, field by field across lanes (so the kernel loads each as one register).
 * Every lane takes the same number of substeps and the same stretch mode; a batch runs
 * all of them between one gather and one scatter. Lanes past `count` repeat lane 0 and
 * are never written back. */
typedef struct pt_lanes {
	int count;
	int points;         /* points per strand */
	int substeps;       /* substeps of every lane */
	pt_stretch_mode mode;
	int base[PT_LANES]; /* pool index of each root */
	float iterations[PT_LANES];
	float k[PT_LANES];             /* kept velocity factor per substep */
	float bend[PT_LANES];          /* bend fraction per substep */
	float s0[PT_LANES], emax[PT_LANES]; /* nonlinear: stiffness at zero strain, max strain */
	pt_vec3 anchor[PT_LANES];      /* head-local root */
	pt_collider_mask mask[PT_LANES]; /* colliders the strand sees */
	const pt_inst *inst[PT_LANES]; /* substep poses (sub_pose, sub_rot) and colliders */
	/* segment lengths, radii and rest directions are per point: gathered from the pool */
	float ah2[PT_MAX_SUBSTEPS][3][PT_LANES]; /* acceleration x h^2, per substep */
	/* the room wind of the tick at the strand's points (pt_wind_rt.v, m/s), NULL for
	 * none, and its factor D h^2 (the instance's wind.drag; 1 where NULL) */
	const pt_vec3 *wind[PT_LANES];
	float wc[PT_LANES];
} pt_lanes;

/* Pending partial batches, one per (points, substeps, mode) in use; on the stepping
 * thread's stack. A ninth kind of batch runs the fullest pending one to make room. */
enum { PT_BATCH_SLOTS = 8 };
typedef struct pt_batcher {
	int used;
	pt_lanes batch[PT_BATCH_SLOTS];
} pt_batcher;

/* The two halves of a substep: PREDICT integrates, pins the roots, solves the lengths
 * and bends (steps 1-4 of solver_verlet.c); RESOLVE puts every point at its length out
 * of the colliders and sets the velocities (steps 6-7). Self-collision (step 5) runs
 * between them on the pool. */
enum { PT_PHASE_PREDICT = 1, PT_PHASE_RESOLVE = 2, PT_PHASE_ALL = 3 };

/* Steps the batch's strands (b->count of them, 1..PT_LANES) through substeps [s0, s1),
 * the given phases of each; lanes past b->count must repeat lane 0. The one definition
 * of the verlet step, compiled twice from verlet_lanes.inc: on AVX2 and on the plain-C
 * emulation, bit-identical. */
void pt_verlet_lanes_scalar(pt_world *w, const pt_lanes *b, int s0, int s1, int phases);
void pt_verlet_lanes_avx2(pt_world *w, const pt_lanes *b, int s0, int s1, int phases);
/* The plain-C emulation with the CPU's scalar FMA instruction (when it has one). */
void pt_verlet_lanes_scalar_fma(pt_world *w, const pt_lanes *b, int s0, int s1, int phases);

/* Adds every strand of a verlet instance for all its substeps of this step (poses and h
 * in the instance's step scratch); runs batches that fill up. An instance with
 * self-collision is stepped at once instead, in batches of its own, substep by substep
 * with the spatial hash between the phases. */
void pt_verlet_batch_add(pt_world *w, pt_batcher *b, pt_inst *in);
/* Runs every partial batch. */
void pt_verlet_batch_flush(pt_world *w, pt_batcher *b);

#endif
