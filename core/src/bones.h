/* Body-bone poses of one instance (private to core).
 *
 * Colliders attached to a body bone (PT_ATTACH_BONE) move with that bone. Each bone a
 * collider uses gets an entry here: its rest pose relative to the head (from the
 * definition's "bones" table) and, once pt_world_set_bone_pose gave one, its world pose
 * at the previous step and the newest one. A step interpolates a posed bone like the
 * head (lerp + slerp, same alpha); an unposed bone sits at head * rest at every substep.
 * The table is allocated only for instances with a bone-attached collider, so pt_inst
 * carries one pointer and nothing else (the per-instance layout stays the lead's).
 */
#ifndef PT_BONES_H
#define PT_BONES_H

#include "collide.h"
#include "ponytail/instance.h"

typedef struct pt_bone_rt {
	pt_bone bone;
	int posed;            /* a pose arrived: prev/target hold world poses */
	pt_pose rest;         /* head-local, q unit */
	pt_pose prev, target; /* world, when posed */
	pt_pose sub[PT_MAX_SUBSTEPS]; /* step scratch: the pose at the end of each substep */
	pt_mat3 sub_rot[PT_MAX_SUBSTEPS];
} pt_bone_rt;

/* Allocated for the bones the instance's colliders use: `count` entries of b. */
typedef struct pt_bones_rt {
	int count;
	signed char of_collider[PT_MAX_COLLIDERS]; /* index into b, -1: not bone-attached */
	pt_bone_rt b[];
} pt_bones_rt;
_Static_assert(PT_MAX_BONES <= 127, "of_collider holds a bone entry as a signed char");

struct pt_inst;

/* Rebuilds *bones for definition d (which passed pt_instance_validate), keeping the
 * poses of bones that stay; frees it (NULL) when no collider is bone-attached. Returns 0
 * on allocation failure, *bones then unchanged. */
int pt_bones_load(pt_bones_rt **bones, const pt_instance_def *d);
void pt_bones_free(pt_bones_rt **bones);

/* The newest world pose of `bone` (q unit). 1 when the instance uses it, 0 when not
 * (nothing to move). b may be NULL. */
int pt_bones_set(pt_bones_rt *b, pt_bone bone, pt_pose pose);

/* End of a step (and a teleport): the newest poses become the previous ones. NULL ok. */
void pt_bones_settle(pt_bones_rt *b);

/* World pose of entry k at fraction alpha of the step, the head then being at `head`. */
pt_pose pt_bones_pose(const pt_bones_rt *b, int k, const pt_pose *head, float alpha);

/* Fills every bone's sub[s] / sub_rot[s], s < n, for the head at head[s] and fraction
 * alpha[s] of the step (alpha NULL: (s + 1) / n). NULL b ok. */
void pt_bones_substeps(pt_bones_rt *b, const pt_pose *head, const float *alpha, int n);

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
