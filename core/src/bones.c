/* Body bones: names, and the per-instance pose table (bones.h). */
#include <stdlib.h>
#include <string.h>

#include "bones.h"
#include "world_internal.h"

static const char *const bone_names[PT_BONE_COUNT] = {
    "hips", "spine", "chest", "upper_chest", "neck", "left_eye", "right_eye", "jaw",
    "left_upper_leg", "left_lower_leg", "left_foot", "left_toes", "right_upper_leg",
    "right_lower_leg", "right_foot", "right_toes", "left_shoulder", "left_upper_arm",
    "left_lower_arm", "left_hand", "right_shoulder", "right_upper_arm", "right_lower_arm",
    "right_hand", "left_thumb_metacarpal", "left_thumb_proximal", "left_thumb_distal",
    "left_index_proximal", "left_index_intermediate", "left_index_distal",
    "left_middle_proximal", "left_middle_intermediate", "left_middle_distal",
    "left_ring_proximal", "left_ring_intermediate", "left_ring_distal",
    "left_little_proximal", "left_little_intermediate", "left_little_distal",
    "right_thumb_metacarpal", "right_thumb_proximal", "right_thumb_distal",
    "right_index_proximal", "right_index_intermediate", "right_index_distal",
    "right_middle_proximal", "right_middle_intermediate", "right_middle_distal",
    "right_ring_proximal", "right_ring_intermediate", "right_ring_distal",
    "right_little_proximal", "right_little_intermediate", "right_little_distal"};

int pt_bone_from_name(const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < PT_BONE_COUNT; i++)
		if (strcmp(bone_names[i], name) == 0)
			return i;
	return -1;
}

const char *pt_bone_name(pt_bone b)
{
	return (unsigned)b < PT_BONE_COUNT ? bone_names[b] : NULL;
}

static int find(const pt_bones_rt *b, pt_bone bone)
{
	for (int k = 0; k < b->count; k++)
		if (b->b[k].bone == bone)
			return k;
	return -1;
}

int pt_bones_load(pt_bones_rt **bones, const pt_instance_def *d)
{
	/* the distinct bones the colliders use: the table's size */
	int used = 0;
	unsigned char seen[PT_BONE_COUNT] = {0};
	for (int c = 0; c < d->collider_count; c++) {
		const pt_collider_def *k = &d->colliders[c];
		if (k->attach == PT_ATTACH_BONE && (unsigned)k->bone < PT_BONE_COUNT &&
		    !seen[k->bone])
			seen[k->bone] = 1, used++;
	}
	if (used == 0) {
		pt_bones_free(bones);
		return 1;
	}
	pt_bones_rt *nb = calloc(1, sizeof *nb + sizeof(pt_bone_rt) * (size_t)used);
	if (!nb)
		return 0;
	for (int c = 0; c < PT_MAX_COLLIDERS; c++)
		nb->of_collider[c] = -1;
	for (int c = 0; c < d->collider_count; c++) {
		const pt_collider_def *k = &d->colliders[c];
		if (k->attach != PT_ATTACH_BONE || (unsigned)k->bone >= PT_BONE_COUNT)
			continue;
		int e = find(nb, k->bone);
		if (e < 0) {
			const pt_bone_def *r = NULL;
			for (int i = 0; i < d->bone_count && !r; i++)
				if (d->bones[i].bone == k->bone)
					r = &d->bones[i];
			/* validation guarantees r; a bone per collider at most fits */
			e = nb->count++;
			pt_bone_rt *br = &nb->b[e];
			br->bone = k->bone;
			br->rest.p = r ? r->position : pt_v3(0, 0, 0);
			br->rest.q = r ? q_norm(r->rotation) : pt_quat_identity();
			int old = *bones ? find(*bones, k->bone) : -1;
			if (old >= 0 && (*bones)->b[old].posed) {
				br->posed = 1;
				br->prev = (*bones)->b[old].prev;
				br->target = (*bones)->b[old].target;
			}
		}
		nb->of_collider[c] = (signed char)e;
	}
	pt_bones_free(bones);
	*bones = nb;
	return 1;
}

void pt_bones_free(pt_bones_rt **bones)
{
	free(*bones);
	*bones = NULL;
}

int pt_bones_set(pt_bones_rt *b, pt_bone bone, pt_pose pose)
{
	int k = b ? find(b, bone) : -1;
	if (k < 0)
		return 0;
	if (!b->b[k].posed)
		b->b[k].prev = pose; /* the first pose: no sweep from the rest offset */
	b->b[k].posed = 1;
	b->b[k].target = pose;
	return 1;
}

void pt_bones_settle(pt_bones_rt *b)
{
	if (!b)
		return;
	for (int k = 0; k < b->count; k++)
		b->b[k].prev = b->b[k].target;
}

pt_pose pt_bones_pose(const pt_bones_rt *b, int k, const pt_pose *head, float alpha)
{
	const pt_bone_rt *br = &b->b[k];
	pt_pose p;
	if (br->posed) {
		p.p = v3_lerp(br->prev.p, br->target.p, alpha);
		p.q = alpha >= 1.0f ? br->target.q : q_slerp(br->prev.q, br->target.q, alpha);
	} else {
		p.p = v3_add(head->p, q_rotate(head->q, br->rest.p));
		p.q = q_norm(q_mul(head->q, br->rest.q));
	}
	return p;
}

void pt_bone_collider_world(const pt_inst *in, int c, const pt_pose *head, float alpha,
                            pt_collider_rt *out)
{
	const pt_collider_def *k = &in->colliders[c];
	pt_pose f = *head; /* no table entry (cannot happen for a valid def): the head */
	if (in->bones && in->bones->of_collider[c] >= 0)
		f = pt_bones_pose(in->bones, in->bones->of_collider[c], head, alpha);
	pt_mat3 R = m3_from_quat(f.q);
	pt_collider_to_world(k, &f, &R, out);
}

void pt_bones_substeps(pt_bones_rt *b, const pt_pose *head, const float *alpha, int n)
{
	for (int k = 0; b && k < b->count; k++)
		for (int s = 0; s < n; s++) {
			float a = alpha ? alpha[s] : (float)(s + 1) / (float)n;
			b->b[k].sub[s] = pt_bones_pose(b, k, &head[s], a);
			b->b[k].sub_rot[s] = m3_from_quat(b->b[k].sub[s].q);
		}
}

void pt_collider_world_sub(const pt_inst *in, int c, int s, pt_collider_rt *out)
{
	const pt_collider_def *k = &in->colliders[c];
	if (k->attach == PT_ATTACH_BONE && in->bones && in->bones->of_collider[c] >= 0) {
		const pt_bone_rt *br = &in->bones->b[in->bones->of_collider[c]];
		pt_collider_to_world(k, &br->sub[s], &br->sub_rot[s], out);
	} else {
		pt_collider_to_world(k, &in->sub_pose[s], &in->sub_rot[s], out);
	}
}

void pt_inst_colliders_world(const pt_inst *in, const pt_pose *head, const pt_mat3 *rot,
                             float alpha, pt_collider_rt *out)
{
	for (int c = 0; c < in->collider_count; c++)
		pt_collider_world_at(in, c, &in->colliders[c], head, rot, alpha, &out[c]);
}
