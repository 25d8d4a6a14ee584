/* Body-bone poses of one instance (private to core).
 *
 * Colliders (PT_ATTACH_BONE) and strands (pt_strand_def.bone) move with body bones. An
 * instance that has any gets a table of every bone in its definition's "bones" (their
 * rest poses relative to the head, the head at the origin unrotated): the nodes, in bone
 * id order, which is the VRM humanoid hierarchy's parent-before-child order. A node's
 * pose is, at fraction alpha of a step with the head then at H:
 *   - posed (pt_world_set_bone_pose gave one, ever): lerp + slerp from the previous
 *     step's pose to the newest, as the head;
 *   - else, with a posed ancestor node A (the nearest): A's pose x A.rest^-1 x rest,
 *     rigidly by the rest hierarchy; the head counts as posed for the bones under it
 *     (eyes, jaw);
 *   - else (nothing above it is posed; with only a head pose that is the hips and every
 *     bone not under the head): (H.p, no rotation) x rest: the body keeps its rest
 *     rotation and follows the head's translation, so a turned head does not swing the
 *     hips.
 * The bones something is attached to are the used entries (b[]): each carries the step
 * scratch, its pose (a collider's frame) and its pose x rest^-1 (a strand's frame: the
 * head's at rest) at the end of every substep.
 */
#ifndef PT_BONES_H
#define PT_BONES_H

#include "collide.h"
#include "ponytail/instance.h"

enum { PT_BONE_UP_NONE = -1, PT_BONE_UP_HEAD = -2 };

typedef struct pt_bone_node {
	pt_bone bone;
	int up;               /* nearest ancestor node, or PT_BONE_UP_HEAD / PT_BONE_UP_NONE */
	int posed;            /* a pose arrived: prev/target hold world poses */
	pt_pose rest;         /* head-local, q unit */
	pt_pose rel;          /* up's rest^-1 x rest (up >= 0) */
	pt_pose prev, target; /* world, when posed */
} pt_bone_node;

/* What a used bone carries, so that a step fills only the scratch that is read: sub_rot
 * for colliders (sub is always filled), frame / frame_rot for strands. */
enum { PT_BONE_HOLDS_COLLIDER = 1, PT_BONE_HOLDS_STRAND = 2 };

typedef struct pt_bone_rt {
	pt_bone bone;
	int node;                       /* its node */
	pt_pose inv_rest;               /* rest^-1 */
	int holds;                      /* PT_BONE_HOLDS_*: what is on it */
	pt_pose sub[PT_MAX_SUBSTEPS];   /* step scratch: the pose at the end of each substep */
	pt_mat3 sub_rot[PT_MAX_SUBSTEPS];
	pt_pose frame[PT_MAX_SUBSTEPS]; /* sub[s] x rest^-1: the frame of strands on it */
	pt_mat3 frame_rot[PT_MAX_SUBSTEPS];
} pt_bone_rt;

/* One allocation: this header, then the arrays it points into. */
typedef struct pt_bones_rt {
	int count;            /* used entries */
	pt_bone_rt *b;
	int nodes;
	pt_bone_node *node;
	signed char *of_collider; /* per collider: index into b, -1 when not bone-attached */
	signed char *of_strand;   /* per strand: index into b, -1 when not on a bone */
	int ncolliders, nstrands;
} pt_bones_rt;

struct pt_inst;

/* The humanoid parent of a bone: another pt_bone, PT_BONE_UP_HEAD (eyes, jaw) or
 * PT_BONE_UP_NONE (hips). */
int pt_bone_parent(pt_bone b);

/* Rebuilds *bones for definition d (which passed pt_instance_validate), keeping the
 * poses of bones that stay; frees it (NULL) when no collider or strand is on a bone.
 * Returns 0 on allocation failure, *bones then unchanged. */
int pt_bones_load(pt_bones_rt **bones, const pt_instance_def *d);
void pt_bones_free(pt_bones_rt **bones);

/* The newest world pose of `bone` (q unit). 1 when the bone is in the table, 0 when not
 * (nothing to move). b may be NULL. */
int pt_bones_set(pt_bones_rt *b, pt_bone bone, pt_pose pose);

/* The node of `bone`, or -1. */
int pt_bones_node(const pt_bones_rt *b, pt_bone bone);

/* End of a step (and a teleport): the newest poses become the previous ones. NULL ok. */
void pt_bones_settle(pt_bones_rt *b);

/* World pose of node n at fraction alpha of the step, the head then being at `head`. */
pt_pose pt_bones_node_pose(const pt_bones_rt *b, int n, const pt_pose *head, float alpha);

/* World pose of used entry k (the same for its node). */
pt_pose pt_bones_pose(const pt_bones_rt *b, int k, const pt_pose *head, float alpha);

/* Fills every used entry's sub / sub_rot / frame / frame_rot [s], s < n, for the head at
 * head[s] and fraction alpha[s] of the step (alpha NULL: (s + 1) / n); sub_rot only on a
 * bone that holds a collider, frame and frame_rot only on one that holds a strand (the
 * others are never read). NULL b ok. */
void pt_bones_substeps(pt_bones_rt *b, const pt_pose *head, const float *alpha, int n);

/* The frame strand s of `in` hangs from at fraction alpha of the step, the head then at
 * `head`: the head, or its bone's pose x rest^-1. A branch gets its top ancestor's (the
 * frame it has at rest). */
pt_pose pt_strand_frame(const struct pt_inst *in, int s, const pt_pose *head, float alpha);

/* Collider c of `in` at the end of substep s (in->sub_pose[s], and for a bone the frame
 * pt_bones_substeps made): what the lane kernels read. */
void pt_collider_world_sub(const struct pt_inst *in, int c, int s, pt_collider_rt *out);

/* A bone-attached collider in world space (pt_inst_collider_world's slow path). */
void pt_bone_collider_world(const struct pt_inst *in, int c, const pt_pose *head, float alpha,
                            pt_collider_rt *out);

/* Collider c (definition k = &in->colliders[c]) in world space at fraction alpha of the
 * step, the head then at `head` (rotation `rot`): head-, world- and bone-attached alike.
 * Inline so head- and world-attached colliders cost what they did before bones. */
static inline void pt_collider_world_at(const struct pt_inst *in, int c,
                                        const pt_collider_def *k, const pt_pose *head,
                                        const pt_mat3 *rot, float alpha, pt_collider_rt *out)
{
	if (k->attach == PT_ATTACH_BONE)
		pt_bone_collider_world(in, c, head, alpha, out);
	else
		pt_collider_to_world(k, head, rot, out);
}
void pt_inst_colliders_world(const struct pt_inst *in, const pt_pose *head, const pt_mat3 *rot,
                             float alpha, pt_collider_rt *out);

#endif
