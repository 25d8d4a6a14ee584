/* The spring-bone chain step, shared by the world solver (solver_springbone.c) and the
 * tests that need options the instance schema does not expose (private to core).
 *
 * A chain is a straight strand of `joints` segments of equal length: point 0 is the root
 * (joint 0's position, pinned to the head), point j + 1 is the tail of joint j. Both
 * forms (core/README.md "Solvers", core/SCHEMA.md) are defined per 1/60 s frame;
 * pt_sb_convert() turns the per-frame parameters into the terms of one substep of any
 * length, and at exactly h = 1/60 s it gives the per-frame terms themselves.
 */
#ifndef PT_SPRINGBONE_H
#define PT_SPRINGBONE_H

#include <stdint.h>

#include "collide.h"

/* One joint's parameters as authored: per 1/60 s frame (pt_joint_def's units). */
typedef struct pt_sb_param {
	float stiffness;     /* vrm: m/s push along the rest axis; pull: fraction per frame */
	float drag;          /* fraction of the tail's motion removed per frame, [0, 1] */
	float gravity_power; /* vrm: m/s push along gravity_dir; unused by pull */
	pt_vec3 gravity_dir; /* unit, world */
	float hit_radius;    /* m */
} pt_sb_param;

/* One joint's terms for one substep (pt_sb_convert's output; hot data). */
typedef struct pt_sb_joint {
	float kept;       /* inertia factor: tail motion kept from the last substep */
	float stiff;      /* vrm: push along the rest axis, m; pull: fraction toward rest */
	pt_vec3 push;     /* constant displacement, world m (vrm gravity; pull g h^2) */
	float hit_radius; /* m: colliders push the tail out to their surface + this */
} pt_sb_joint;

/* One joint's angle limit (draft VRMC_springBone_limit cone / hinge). */
typedef struct pt_sb_limit {
	pt_limit_type type;
	float cos_a, sin_a; /* of the limit angle */
	pt_vec3 axis;       /* hinge: plane normal in the parent's frame (head-local at rest) */
} pt_sb_limit;

typedef struct pt_sb_chain {
	pt_springbone_form form;
	int joints;                /* segments; the chain has joints + 1 points */
	float length;              /* segment length, m (every segment's when len is NULL) */
	pt_vec3 anchor, direction; /* head-local root position and unit rest direction */
	/* A rest shape that is not straight: per joint, segment length and head-local unit
	 * rest direction (`joints` entries each), or NULL for the straight chain above. */
	const float *len;
	const pt_vec3 *dir;
	const pt_sb_joint *j;      /* `joints` entries */
	const pt_sb_limit *lim;    /* `joints` entries, or NULL when no joint has a limit */
	int hinge;                 /* 1 when some joint's limit is a hinge */
	const uint8_t *cols;       /* the chain's colliders, indices into cols[], in the order */
	int ncols;                 /* its tails are pushed out of them (ncols entries) */
	int free_length;           /* 1: skip the length step (the lesson's table 3 only) */
	/* What the root hangs from (instance.h, pt_strand_def.bone / parent), zero for the
	 * head: frame k > 0, the frame f->frames[k - 1] (a body bone's) instead of the head;
	 * parent p + 1 > 0, a branch: point parent_point of chain p < this one, stepped
	 * first, whose head-local rest position is parent_rest (pt_sb_branch_frame) */
	int frame;
	int parent, parent_point;
	pt_vec3 parent_rest;
	/* the wide path's (springbone_lanes.h): 0 on the head or a bone, a branch one more
	 * than its parent; how many branches hang from this chain; the first chain of the
	 * instance whose collider list is this one's, in the same order */
	int level, children, cols_id;
	/* PT_SPRINGBONE_LENGTH_THREEVRM: the tails (current and previous, world, `joints`
	 * each), apart from the points, which are the bones at their rest lengths; each
	 * joint's tail is kept at the distance from the joint to its child bone's position
	 * before the step. NULL: the points are the tails (the rest length) */
	pt_vec3 *tail, *ptail;
} pt_sb_chain;

/* Where the head is for one substep, and how to read the stored tails. */
typedef struct pt_sb_frame {
	const pt_pose *head; /* head pose at the end of the substep */
	const pt_mat3 *rot;  /* its rotation matrix */
	const pt_collider_rt *cols;
	int ncols;
	/* center = head: the stored tails x (previous tails px) were computed with the head at
	 * another pose; cur = mc x + tc and prev = mp px + tp carry them rigidly to `head`, so
	 * that inertia is the tail's motion relative to the head. 0: world space. */
	int center;
	pt_mat3 mc, mp;
	pt_vec3 tc, tp;
	/* the frames chains with frame >= 0 hang from (poses and their rotations) */
	const pt_pose *frames;
	const pt_mat3 *frame_rots;
} pt_sb_frame;

/* pt_collider_distance(c, p) - hr and its direction, bit for bit, except that sphere and
 * capsule tails clearly outside their reach (most tails, most of the time) are rejected
 * without a square root. Returns 1 when p is to be pushed (distance < 0). Mirrors
 * collide.c's sphere and capsule; tests/springbone/test_sb_collide.c holds them equal. */
static inline int pt_sb_penetrates(const pt_collider_rt *c, pt_vec3 p, float hr, float *d,
                                   pt_vec3 *dir)
{
	pt_vec3 delta;
	float r;
	if (c->shape == PT_SHAPE_SPHERE) {
		delta = v3_sub(p, c->c);
		r = c->r;
	} else if (c->shape == PT_SHAPE_CAPSULE) {
		pt_vec3 ap = v3_sub(p, c->c);
		float t = v3_dot(ap, c->d) * c->inv_len2;
		t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
		delta = v3_sub(ap, v3_scale(c->d, t));
		r = c->r + (c->rb - c->r) * t;
	} else {
		*d = pt_collider_distance(c, p, dir) - hr;
		return *d < 0.0f;
	}
	/* |delta| > reach (1 + 5e-5) leaves a margin far above the rounding of the exact
	 * test below (a few ulp of |delta|), so the two agree on every rejected tail. */
	float reach = r + hr, l2 = v3_len2(delta);
	if (l2 > reach * reach * 1.0001f)
		return 0;
	float l = sqrtf(l2);
	*dir = l > 1e-9f ? v3_scale(delta, 1.0f / l) : pt_v3(0.0f, 1.0f, 0.0f);
	*d = (l - r) - hr;
	return *d < 0.0f;
}

/* The terms of `n` joints for one substep of h seconds (h > 0). `gravity` is the
 * instance's acceleration (pull form only), m/s^2. */
void pt_sb_convert(pt_springbone_form form, const pt_sb_param *p, int n, float h, pt_vec3 gravity,
                   pt_sb_joint *out);

/* The limit of a joint definition (angle in radians, axis normalised here). */
pt_sb_limit pt_sb_limit_from_def(const pt_joint_def *j);

/* Advances one chain by one substep: pins the root to the head, then joint by joint,
 * root to tip, updates tails x (previous px) in place: arrays of joints + 1 floats,
 * point 0 the root. Never allocates. */
void pt_sb_step_chain(const pt_sb_chain *c, const pt_sb_frame *f, float *x, float *y, float *z,
                      float *px, float *py, float *pz);

/* The same for n <= PT_MAX_STRANDS chains at once, chain s starting at index first[s]
 * of the arrays; each chain's result is exactly pt_sb_step_chain's. Branches (parent
 * > 0) step after the chains they hang from, level by level. */
void pt_sb_step_chains(const pt_sb_chain *c, int n, const pt_sb_frame *f, const int *first,
                       float *x, float *y, float *z, float *px, float *py, float *pz);

/* The frame a branch hangs from, its parent chain p having been stepped (points at x,
 * y, z from p's root): the rotation R of the parent's point k bone (the parent's frame
 * turned joint by joint onto the stepped segments, as the step turns it, through joint
 * k, or joint k - 1 at the tip) and the position that puts p's head-local rest point k,
 * rest_k, on the stepped one: (x_k - R rest_k, R). `root` is the parent's own frame. */
pt_pose pt_sb_branch_frame(const pt_sb_chain *p, pt_pose root, int k, pt_vec3 rest_k,
                           const float *x, const float *y, const float *z);

#endif
