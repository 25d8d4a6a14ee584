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

/* The VRM humanoid hierarchy (VRMC_vrm 1.0 humanoid): each bone's parent. */
static const signed char parent_of[PT_BONE_COUNT] = {
    [PT_BONE_HIPS] = PT_BONE_UP_NONE,
    [PT_BONE_SPINE] = PT_BONE_HIPS,
    [PT_BONE_CHEST] = PT_BONE_SPINE,
    [PT_BONE_UPPER_CHEST] = PT_BONE_CHEST,
    [PT_BONE_NECK] = PT_BONE_UPPER_CHEST,
    [PT_BONE_LEFT_EYE] = PT_BONE_UP_HEAD,
    [PT_BONE_RIGHT_EYE] = PT_BONE_UP_HEAD,
    [PT_BONE_JAW] = PT_BONE_UP_HEAD,
    [PT_BONE_LEFT_UPPER_LEG] = PT_BONE_HIPS,
    [PT_BONE_LEFT_LOWER_LEG] = PT_BONE_LEFT_UPPER_LEG,
    [PT_BONE_LEFT_FOOT] = PT_BONE_LEFT_LOWER_LEG,
    [PT_BONE_LEFT_TOES] = PT_BONE_LEFT_FOOT,
    [PT_BONE_RIGHT_UPPER_LEG] = PT_BONE_HIPS,
    [PT_BONE_RIGHT_LOWER_LEG] = PT_BONE_RIGHT_UPPER_LEG,
    [PT_BONE_RIGHT_FOOT] = PT_BONE_RIGHT_LOWER_LEG,
    [PT_BONE_RIGHT_TOES] = PT_BONE_RIGHT_FOOT,
    [PT_BONE_LEFT_SHOULDER] = PT_BONE_UPPER_CHEST,
    [PT_BONE_LEFT_UPPER_ARM] = PT_BONE_LEFT_SHOULDER,
    [PT_BONE_LEFT_LOWER_ARM] = PT_BONE_LEFT_UPPER_ARM,
    [PT_BONE_LEFT_HAND] = PT_BONE_LEFT_LOWER_ARM,
    [PT_BONE_RIGHT_SHOULDER] = PT_BONE_UPPER_CHEST,
    [PT_BONE_RIGHT_UPPER_ARM] = PT_BONE_RIGHT_SHOULDER,
    [PT_BONE_RIGHT_LOWER_ARM] = PT_BONE_RIGHT_UPPER_ARM,
    [PT_BONE_RIGHT_HAND] = PT_BONE_RIGHT_LOWER_ARM,
#define FINGERS(side, S)                                                                         \
	[PT_BONE_##S##_THUMB_METACARPAL] = PT_BONE_##S##_HAND,                                   \
	[PT_BONE_##S##_THUMB_PROXIMAL] = PT_BONE_##S##_THUMB_METACARPAL,                         \
	[PT_BONE_##S##_THUMB_DISTAL] = PT_BONE_##S##_THUMB_PROXIMAL,                             \
	[PT_BONE_##S##_INDEX_PROXIMAL] = PT_BONE_##S##_HAND,                                     \
	[PT_BONE_##S##_INDEX_INTERMEDIATE] = PT_BONE_##S##_INDEX_PROXIMAL,                       \
	[PT_BONE_##S##_INDEX_DISTAL] = PT_BONE_##S##_INDEX_INTERMEDIATE,                         \
	[PT_BONE_##S##_MIDDLE_PROXIMAL] = PT_BONE_##S##_HAND,                                    \
	[PT_BONE_##S##_MIDDLE_INTERMEDIATE] = PT_BONE_##S##_MIDDLE_PROXIMAL,                     \
	[PT_BONE_##S##_MIDDLE_DISTAL] = PT_BONE_##S##_MIDDLE_INTERMEDIATE,                       \
	[PT_BONE_##S##_RING_PROXIMAL] = PT_BONE_##S##_HAND,                                      \
	[PT_BONE_##S##_RING_INTERMEDIATE] = PT_BONE_##S##_RING_PROXIMAL,                         \
	[PT_BONE_##S##_RING_DISTAL] = PT_BONE_##S##_RING_INTERMEDIATE,                           \
	[PT_BONE_##S##_LITTLE_PROXIMAL] = PT_BONE_##S##_HAND,                                    \
	[PT_BONE_##S##_LITTLE_INTERMEDIATE] = PT_BONE_##S##_LITTLE_PROXIMAL,                     \
	[PT_BONE_##S##_LITTLE_DISTAL] = PT_BONE_##S##_LITTLE_INTERMEDIATE
    FINGERS(left, LEFT),
    FINGERS(right, RIGHT),
#undef FINGERS
};

int pt_bone_parent(pt_bone b)
{
	return (unsigned)b < PT_BONE_COUNT ? parent_of[b] : PT_BONE_UP_NONE;
}

/* inline (as node_pose): called for every node of every instance at every step, where
 * the calls and the poses passed and returned through memory showed in callgrind */
static inline pt_pose compose(pt_pose a, pt_pose b)
{
	pt_pose r = {v3_add(a.p, q_rotate(a.q, b.p)), q_norm(q_mul(a.q, b.q))};
	return r;
}

static pt_pose inverse(pt_pose a)
{
	pt_quat c = q_conj(a.q);
	pt_pose r = {v3_scale(q_rotate(c, a.p), -1.0f), c};
	return r;
}

int pt_bones_node(const pt_bones_rt *b, pt_bone bone)
{
	for (int n = 0; b && n < b->nodes; n++)
		if (b->node[n].bone == bone)
			return n;
	return -1;
}

static int find_used(const pt_bones_rt *b, int node)
{
	for (int k = 0; k < b->count; k++)
		if (b->b[k].node == node)
			return k;
	return -1;
}

static const pt_bone_def *rest_of(const pt_instance_def *d, int bone)
{
	for (int i = 0; i < d->bone_count; i++)
		if ((int)d->bones[i].bone == bone)
			return &d->bones[i];
	return NULL;
}

int pt_bones_load(pt_bones_rt **bones, const pt_instance_def *d)
{
	/* the used bones: those a collider or a strand is on */
	int used[PT_BONE_COUNT] = {0}, any = 0;
	for (int c = 0; c < d->collider_count; c++)
		if (d->colliders[c].attach == PT_ATTACH_BONE)
			used[d->colliders[c].bone] = 1, any = 1;
	for (int s = 0; s < d->strand_count; s++)
		if (d->strands[s].bone >= 0)
			used[d->strands[s].bone] = 1, any = 1;
	if (!any) {
		pt_bones_free(bones);
		return 1;
	}
	int nodes = 0, count = 0;
	for (int bone = 0; bone < PT_BONE_COUNT; bone++)
		if (rest_of(d, bone)) /* validation guarantees a rest for every used bone */
			nodes++, count += used[bone];
	size_t size = sizeof(pt_bones_rt) + sizeof(pt_bone_rt) * (size_t)count +
	              sizeof(pt_bone_node) * (size_t)nodes + (size_t)d->collider_count +
	              (size_t)d->strand_count;
	pt_bones_rt *nb = malloc(size);
	if (!nb)
		return 0;
	memset(nb, 0, size);
	nb->b = (pt_bone_rt *)(nb + 1);
	nb->node = (pt_bone_node *)(nb->b + count);
	nb->of_collider = (signed char *)(nb->node + nodes);
	nb->of_strand = nb->of_collider + d->collider_count;
	nb->ncolliders = d->collider_count, nb->nstrands = d->strand_count;
	int node_of[PT_BONE_COUNT];
	for (int bone = 0; bone < PT_BONE_COUNT; bone++) {
		node_of[bone] = -1;
		const pt_bone_def *r = rest_of(d, bone);
		if (!r)
			continue;
		int n = node_of[bone] = nb->nodes++;
		pt_bone_node *nd = &nb->node[n];
		nd->bone = (pt_bone)bone;
		nd->rest.p = r->position;
		nd->rest.q = q_norm(r->rotation);
		/* the nearest ancestor with a rest pose; parents come before children */
		int up = parent_of[bone];
		while (up >= 0 && node_of[up] < 0)
			up = parent_of[up];
		nd->up = up >= 0 ? node_of[up] : up;
		if (nd->up >= 0)
			nd->rel = compose(inverse(nb->node[nd->up].rest), nd->rest);
		int old = *bones ? pt_bones_node(*bones, (pt_bone)bone) : -1;
		if (old >= 0 && (*bones)->node[old].posed) {
			nd->posed = 1;
			nd->prev = (*bones)->node[old].prev;
			nd->target = (*bones)->node[old].target;
		}
		if (used[bone]) {
			pt_bone_rt *br = &nb->b[nb->count++];
			br->bone = (pt_bone)bone;
			br->node = n;
			br->inv_rest = inverse(nd->rest);
		}
	}
	for (int c = 0; c < d->collider_count; c++) {
		const pt_collider_def *k = &d->colliders[c];
		nb->of_collider[c] = (signed char)(k->attach == PT_ATTACH_BONE
		                                       ? find_used(nb, node_of[k->bone])
		                                       : -1);
		if (nb->of_collider[c] >= 0)
			nb->b[nb->of_collider[c]].holds |= PT_BONE_HOLDS_COLLIDER;
	}
	for (int s = 0; s < d->strand_count; s++) {
		int bone = d->strands[s].bone;
		nb->of_strand[s] = (signed char)(bone >= 0 ? find_used(nb, node_of[bone]) : -1);
		if (nb->of_strand[s] >= 0)
			nb->b[nb->of_strand[s]].holds |= PT_BONE_HOLDS_STRAND;
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
	int n = pt_bones_node(b, bone);
	if (n < 0)
		return 0;
	pt_bone_node *nd = &b->node[n];
	if (!nd->posed)
		nd->prev = pose; /* the first pose: no sweep from where it was */
	nd->posed = 1;
	nd->target = pose;
	return 1;
}

void pt_bones_settle(pt_bones_rt *b)
{
	for (int n = 0; b && n < b->nodes; n++)
		b->node[n].prev = b->node[n].target;
}

/* Node n's pose, its ancestors' already in `at` (parents before children). */
static inline pt_pose node_pose(const pt_bones_rt *b, int n, const pt_pose *at,
                                const pt_pose *head, float alpha)
{
	const pt_bone_node *nd = &b->node[n];
	if (nd->posed) {
		pt_pose p;
		p.p = v3_lerp(nd->prev.p, nd->target.p, alpha);
		p.q = alpha >= 1.0f ? nd->target.q : q_slerp(nd->prev.q, nd->target.q, alpha);
		return p;
	}
	if (nd->up >= 0)
		return compose(at[nd->up], nd->rel);
	if (nd->up == PT_BONE_UP_HEAD)
		return compose(*head, nd->rest);
	pt_pose body = {head->p, pt_quat_identity()};
	return compose(body, nd->rest);
}

/* Every node's pose at alpha, into at[0 .. nodes). */
static void all_poses(const pt_bones_rt *b, const pt_pose *head, float alpha, pt_pose *at)
{
	for (int n = 0; n < b->nodes; n++)
		at[n] = node_pose(b, n, at, head, alpha);
}

pt_pose pt_bones_node_pose(const pt_bones_rt *b, int n, const pt_pose *head, float alpha)
{
	pt_pose at[PT_BONE_COUNT];
	for (int i = 0; i <= n; i++) /* only ancestors (lower indices) matter */
		at[i] = node_pose(b, i, at, head, alpha);
	return at[n];
}

pt_pose pt_bones_pose(const pt_bones_rt *b, int k, const pt_pose *head, float alpha)
{
	return pt_bones_node_pose(b, b->b[k].node, head, alpha);
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
	if (!b)
		return;
	pt_pose at[PT_BONE_COUNT];
	for (int s = 0; s < n; s++) {
		all_poses(b, &head[s], alpha ? alpha[s] : (float)(s + 1) / (float)n, at);
		for (int k = 0; k < b->count; k++) {
			pt_bone_rt *br = &b->b[k];
			br->sub[s] = at[br->node];
			if (br->holds & PT_BONE_HOLDS_COLLIDER)
				br->sub_rot[s] = m3_from_quat(br->sub[s].q);
			if (br->holds & PT_BONE_HOLDS_STRAND) {
				br->frame[s] = compose(br->sub[s], br->inv_rest);
				br->frame_rot[s] = m3_from_quat(br->frame[s].q);
			}
		}
	}
}

pt_pose pt_strand_frame(const pt_inst *in, int s, const pt_pose *head, float alpha)
{
	while (in->strands[s].parent >= 0)
		s = in->strands[s].parent;
	int k = in->bones ? in->bones->of_strand[s] : -1;
	if (k < 0)
		return *head;
	return compose(pt_bones_pose(in->bones, k, head, alpha), in->bones->b[k].inv_rest);
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
