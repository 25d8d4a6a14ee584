/* The spring-bone solver's wide path: sixteen chains (usually of several instances) step
 * together, one per SIMD lane, as verlet_lanes.h does for verlet strands (private to
 * core).
 *
 * A chain is follow-the-leader, joint j waiting for joint j - 1: one chain at a time it
 * is a chain of dependent square roots and divisions. Across lanes sixteen of them run
 * side by side. The kernel (springbone_lanes.inc) is pt_sb_step_chain's arithmetic,
 * operation for operation in the same order, so a chain's result is bit-identical on
 * the wide path (AVX2 or its plain-C emulation) and on the per-chain path
 * (tests/springbone/test_sb_lanes.c holds them equal).
 *
 * What the wide path takes: chains of the world's spring-bone instances (fixed length)
 * whose colliders are spheres, capsules and planes, with or without cone and hinge
 * limits, on the head, a body bone or a branch. Instances with ellipsoids or inside
 * shapes step per chain.
 *
 * Branches (pt_sb_chain.parent): a batch steps its chains through all the steps of the
 * tick, so a branch cannot wait for its parent within a batch. Instead the chains of
 * level 0 step first; after each of its steps a parent's lane writes the frame each of
 * its branches hangs from at that step (pt_sb_branch_roots: pt_sb_branch_frame on the
 * lane's stepped points, as the per-chain path computes it), and the branches of level L
 * step in batches of their own once every chain of level L - 1 has, reading those
 * frames as their roots (pt_sb_root_frame). The result is the per-chain path's, bit for bit.
 *
 * Per-instance state lives in pt_sb_data (in->solver_data): the chain descriptions of
 * springbone.h, the per-joint terms in a lane-friendly block, and the rigid carries of
 * center = head for every step of the pending batch.
 */
#ifndef PT_SPRINGBONE_LANES_H
#define PT_SPRINGBONE_LANES_H

#include "springbone.h"
#include "world_internal.h"

enum { PT_SB_LANES = 16, PT_SB_BATCH_SLOTS = 8 };

/* Per-joint fields of a chain's block, `joints` floats each, field after field: the
 * substep terms (pt_sb_joint), the rest segment length, and the head-local rest
 * direction of the segment (the straight chain's direction when it has no rest shape),
 * and the joint's angle limit. */
enum {
	PT_SBF_KEPT,
	PT_SBF_STIFF,
	PT_SBF_PUSHX,
	PT_SBF_PUSHY,
	PT_SBF_PUSHZ,
	PT_SBF_HITR,
	PT_SBF_LEN,
	PT_SBF_DIRX,
	PT_SBF_DIRY,
	PT_SBF_DIRZ,
	/* the angle limit: type (pt_limit_type as a float), cos, sin and -sin of its angle,
	 * hinge axis (head-local) */
	PT_SBF_LTYPE,
	PT_SBF_COS,
	PT_SBF_SIN,
	PT_SBF_NSIN,
	PT_SBF_LAXX,
	PT_SBF_LAXY,
	PT_SBF_LAXZ,
	PT_SBF_COUNT
};

/* A collider in world space at one step as the kernel reads it, PT_SB_CREC floats: centre
 * (or capsule end a, or plane point) x y z, axis (capsule b - a, or plane normal) x y z,
 * radius, radius at b and 1 / |b - a|^2 (both 0 unless a capsule), its kind
 * (PT_SB_KIND_*), a bounding sphere's centre x y z and radius (a sphere's own; a
 * capsule's about its middle), two zeros: two sets of eight floats the AVX2 kernel
 * transposes eight lanes at a time. */
enum {
	PT_SB_CREC = 16,
	PT_SB_CC = 0,
	PT_SB_CD = 3,
	PT_SB_CR = 6,
	PT_SB_CRB = 7,
	PT_SB_CIL = 8,
	PT_SB_CKIND = 9,
	PT_SB_CBC = 10,
	PT_SB_CBR = 13
};
enum { PT_SB_KIND_NONE = -1, PT_SB_KIND_SPHERE, PT_SB_KIND_CAPSULE, PT_SB_KIND_PLANE };

/* What a batch reads of each chain once per run, PT_SB_LREC floats (pt_sb_data.lrec):
 * joint 0's terms KEPT .. LEN (the block's fields: every joint's on a uniform chain), the
 * largest hit radius of its joints; the lane masks of its form pull, center = head, rest
 * shape, and a frame to turn (rest shape or hinge), -1.0f or 0.0f (true for both
 * kernels' selects: AVX2's blend reads the sign bit, the emulation compares with zero),
 * four zeros; its head-local anchor and first rest direction x y z, two zeros. And as
 * bits (pt_sb_data.lflags), for the batch's "any lane" tests. */
enum {
	PT_SB_LREC = 24,
	PT_SB_LHRMAX = 7,
	PT_SB_LPULL = 8,
	PT_SB_LCENTER,
	PT_SB_LREST,
	PT_SB_LTURN,
	PT_SB_LANCHOR = 16, /* then the direction at 19 */
};
enum {
	PT_SB_F_PULL = 1,
	PT_SB_F_VRM = 2,
	PT_SB_F_CENTER = 4,
	PT_SB_F_REST = 8,
	PT_SB_F_LIM = 16,
	PT_SB_F_TURN = 32,
	PT_SB_F_KIDS = 64,   /* branches hang from it */
	PT_SB_F_UNIFORM = 128 /* pt_sb_data.uniform */
};

/* center = head: the rigid motions carrying the stored tails x (mc, tc) and px (mp, tp)
 * to the head pose of one step (springbone.h, pt_sb_frame). */
typedef struct pt_sb_carry {
	pt_mat3 mc, mp;
	pt_vec3 tc, tp;
} pt_sb_carry;

/* The frame a branch hangs from at one step of the batch (pt_sb_branch_frame) and its
 * rotation matrix. */
typedef struct pt_sb_root {
	pt_pose pose;
	pt_mat3 rot;
} pt_sb_root;

/* A spring-bone instance's solver data (solver_springbone.c owns it). */
typedef struct pt_sb_data {
	pt_springbone_form form;
	int center_head;
	int njoints;
	float h;                 /* substep the `run` terms were converted for; 0 = stale */
	uint32_t teleports;      /* in->teleports when pose_x / pose_px were last valid */
	pt_pose pose_x, pose_px; /* head poses at which x and px were written */
	/* per strand (strand_count entries each, allocated with the data: an instance pays
	 * for the strands it has) */
	pt_sb_chain *chain;
	pt_sb_param *par; /* authored, per joint, strand after strand */
	pt_sb_joint *run; /* per substep (hot) */
	pt_sb_limit *lim;
	float *len;   /* per joint: rest segment length (chains with a rest shape) */
	pt_vec3 *dir; /* per joint: head-local unit rest direction */
	int threevrm;           /* springbone.length three-vrm: tails apart from the points */
	int tails_stale;        /* 1: take the tails from the points at the next step */
	pt_vec3 *tail, *ptail;  /* per joint, those tails (pt_sb_chain.tail) */
	float *gravity_scale;
	/* the wide path */
	int branches;   /* 1: some chain hangs from another */
	int levels;     /* 1 + the deepest branch's level */
	/* per branch (slot bslot[s] of strand s, -1 for a chain of level 0), the frames its
	 * parent's lane wrote at each step of the batch: broot[PT_MAX_SUBSTEPS * slot + step];
	 * nbroot slots, as many as the definition at init had branches */
	int *bslot;
	pt_sb_root *broot;
	int nbroot;
	/* the strands by level, then joint count (then index): the chains of level 0 first;
	 * cut into runs of one level and joint count, each added to one batch at once
	 * (add_level): run r is by_level[run_at[r] .. run_at[r + 1]), nruns of them */
	int *by_level;
	int *run_at;
	int nruns;
	int lanes_ok;   /* 1: the chains may step in lanes (pt_sb_lanes_eligible) */
	int lanes_off;  /* tests: 1 forces the per-chain path */
	float *block;   /* PT_SBF_COUNT x njoints: chain s's block at block + PT_SBF_COUNT * k_s */
	/* 1: chain s's terms KEPT .. LEN are the same at every joint (bit for bit): a batch
	 * of such chains reads one value per lane instead of gathering every joint's */
	int *uniform;
	float *lrec; /* per chain, PT_SB_LREC floats (above), and its flags */
	int *lflags;
	pt_sb_carry carry[PT_MAX_SUBSTEPS]; /* per step of the batch the instance is in */
	/* its colliders at each step of the batch, computed once for all its chains:
	 * record c of step s at cw + PT_SB_CREC * (s * collider_count + c); room for cw_cap
	 * colliders (NULL and 0 without any) */
	float *cw;
	int cw_cap;
} pt_sb_data;

/* One batch, chains of the same joint count taking the same number of steps (at most
 * PT_MAX_SUBSTEPS), the head poses of each step in their instance's sub_pose / sub_rot
 * and h already converted. Lanes past `count` repeat lane 0 and are never written back. */
typedef struct pt_sb_lanes {
	int count;
	int joints;
	int steps;
	int base[PT_SB_LANES];             /* pool index of each root */
	const pt_inst *inst[PT_SB_LANES];  /* poses (sub_pose, sub_rot) and colliders */
	pt_sb_data *data[PT_SB_LANES]; /* written: the branches' frames (broot) */
	int strand[PT_SB_LANES];
} pt_sb_lanes;

/* Pending partial batches, one per (joints, steps) in use; a ninth kind runs the fullest
 * to make room. The instances with branches whose level-0 chains are in them wait in
 * `branchy` for their branches' turn (pt_sb_batch_flush). On the stepping thread's
 * stack. */
enum { PT_SB_BRANCHY = 64 };
typedef struct pt_sb_batcher {
	int used;
	pt_sb_lanes batch[PT_SB_BATCH_SLOTS];
	int nbranchy;
	pt_inst *branchy[PT_SB_BRANCHY];
	signed char of_joints[PT_MAX_POINTS]; /* a hint: the batch last used for that many */
} pt_sb_batcher;

/* An empty batcher. */
void pt_sb_batch_init(pt_sb_batcher *b);

/* The frame chain s of instance `in` hangs from at step `step` of its batch: the head,
 * its body bone, or (a branch) what its parent's lane wrote. */
static inline void pt_sb_root_frame(const pt_inst *in, const pt_sb_data *d, int s, int step,
                              const pt_pose **pose, const pt_mat3 **rot)
{
	const pt_sb_chain *c = &d->chain[s];
	if (c->parent > 0) {
		const pt_sb_root *r = &d->broot[PT_MAX_SUBSTEPS * d->bslot[s] + step];
		*pose = &r->pose, *rot = &r->rot;
	} else if (c->frame > 0) { /* on a body bone: its frame (bones.h) */
		const pt_bone_rt *br = &in->bones->b[c->frame - 1];
		*pose = &br->frame[step], *rot = &br->frame_rot[step];
	} else {
		*pose = &in->sub_pose[step], *rot = &in->sub_rot[step];
	}
}

/* After step `step` of chain s of `in` (its points x, y, z, the root first): the frames
 * of the branches hanging from it at that step, into d->broot. */
void pt_sb_branch_roots(const pt_inst *in, pt_sb_data *d, int s, int step, const float *x,
                        const float *y, const float *z);

/* Bytes of a spring-bone instance's solver data (pt_world_instance_bytes). */
size_t pt_sb_data_bytes(const pt_inst *in);

/* The kernels: step the batch's chains by b->steps steps (lanes past count repeat 0). */
void pt_sb_lanes_scalar(pt_world *w, const pt_sb_lanes *b);
void pt_sb_lanes_avx2(pt_world *w, const pt_sb_lanes *b);

/* Adds every chain of spring-bone instance `in` for its in->sub_n steps of in->sub_h
 * seconds at the poses in->sub_pose / sub_rot; runs batches that fill up. Returns 0,
 * doing nothing, when the instance must step per chain (the caller then calls its
 * substep op). */
int pt_sb_batch_add(pt_world *w, pt_sb_batcher *b, pt_inst *in);
/* Runs every partial batch. */
void pt_sb_batch_flush(pt_world *w, pt_sb_batcher *b);

#endif
