/* The whole-avatar scene: avatar_scene.h says what it is. */
#include "avatar_scene.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "testdef.h"
#include "vecmath.h"

/* Rest poses, head-local (the head at the origin; T-pose, arms along +-X, +Z forward). */
static const struct {
	pt_bone bone;
	float p[3];
} rest[AVATAR_BONES] = {
    {PT_BONE_HIPS, {0.0f, -0.62f, 0.0f}},
    {PT_BONE_SPINE, {0.0f, -0.50f, 0.0f}},
    {PT_BONE_CHEST, {0.0f, -0.38f, 0.01f}},
    {PT_BONE_UPPER_CHEST, {0.0f, -0.26f, 0.01f}},
    {PT_BONE_NECK, {0.0f, -0.10f, 0.0f}},
    {PT_BONE_LEFT_SHOULDER, {0.04f, -0.18f, 0.0f}},
    {PT_BONE_LEFT_UPPER_ARM, {0.16f, -0.20f, 0.0f}},
    {PT_BONE_LEFT_LOWER_ARM, {0.42f, -0.20f, 0.0f}},
    {PT_BONE_LEFT_HAND, {0.66f, -0.20f, 0.0f}},
    {PT_BONE_RIGHT_SHOULDER, {-0.04f, -0.18f, 0.0f}},
    {PT_BONE_RIGHT_UPPER_ARM, {-0.16f, -0.20f, 0.0f}},
    {PT_BONE_RIGHT_LOWER_ARM, {-0.42f, -0.20f, 0.0f}},
    {PT_BONE_RIGHT_HAND, {-0.66f, -0.20f, 0.0f}},
    {PT_BONE_LEFT_UPPER_LEG, {0.09f, -0.68f, 0.0f}},
    {PT_BONE_LEFT_LOWER_LEG, {0.09f, -1.10f, 0.0f}},
    {PT_BONE_RIGHT_UPPER_LEG, {-0.09f, -0.68f, 0.0f}},
    {PT_BONE_RIGHT_LOWER_LEG, {-0.09f, -1.10f, 0.0f}},
};

/* Collider indices (the masks below name them). */
enum {
	C_HEAD, C_FACE, C_NECK, C_UCHEST, C_BUST_L, C_BUST_R, C_SPINE, C_HIPS, C_ULEG_L,
	C_ULEG_R, C_LLEG_L, C_LLEG_R, C_UARM_L, C_UARM_R, C_LARM_L, C_LARM_R, C_HAND_L,
	C_HAND_R, C_SHOULDER_L, C_SHOULDER_R
};
#define BIT(c) (1u << (c))

static void sphere(pt_collider_def *c, int bone, pt_vec3 center, float r)
{
	memset(c, 0, sizeof *c);
	c->shape = PT_SHAPE_SPHERE;
	c->attach = bone < 0 ? PT_ATTACH_HEAD : PT_ATTACH_BONE;
	c->bone = bone < 0 ? (pt_bone)0 : (pt_bone)bone;
	c->center = center;
	c->radius = r;
	c->radius_b = -1.0f;
}

static void capsule(pt_collider_def *c, int bone, pt_vec3 a, pt_vec3 b, float r, float rb)
{
	sphere(c, bone, pt_v3(0, 0, 0), r);
	c->shape = PT_SHAPE_CAPSULE;
	c->a = a;
	c->b = b;
	c->radius_b = rb;
}

static void colliders(pt_instance_def *d)
{
	pt_collider_def *c = d->colliders;
	d->collider_count = AVATAR_COLLIDERS;
	sphere(&c[C_HEAD], -1, pt_v3(0, 0.02f, 0), 0.1f);
	sphere(&c[C_FACE], -1, pt_v3(0, -0.02f, 0.05f), 0.07f);
	capsule(&c[C_NECK], PT_BONE_NECK, pt_v3(0, 0.02f, 0), pt_v3(0, -0.08f, 0), 0.05f, -1.0f);
	capsule(&c[C_UCHEST], PT_BONE_UPPER_CHEST, pt_v3(-0.08f, 0, 0), pt_v3(0.08f, 0, 0), 0.1f,
	        -1.0f);
	for (int s = 0; s < 2; s++) {
		float x = s ? -1.0f : 1.0f;
		sphere(&c[C_BUST_L + s], PT_BONE_UPPER_CHEST, pt_v3(0.07f * x, -0.04f, 0.08f), 0.06f);
		capsule(&c[C_ULEG_L + s], s ? PT_BONE_RIGHT_UPPER_LEG : PT_BONE_LEFT_UPPER_LEG,
		        pt_v3(0, 0, 0), pt_v3(0, -0.40f, 0), 0.08f, 0.06f);
		capsule(&c[C_LLEG_L + s], s ? PT_BONE_RIGHT_LOWER_LEG : PT_BONE_LEFT_LOWER_LEG,
		        pt_v3(0, 0, 0), pt_v3(0, -0.40f, 0), 0.055f, -1.0f);
		capsule(&c[C_UARM_L + s], s ? PT_BONE_RIGHT_UPPER_ARM : PT_BONE_LEFT_UPPER_ARM,
		        pt_v3(0, 0, 0), pt_v3(0.26f * x, 0, 0), 0.045f, -1.0f);
		capsule(&c[C_LARM_L + s], s ? PT_BONE_RIGHT_LOWER_ARM : PT_BONE_LEFT_LOWER_ARM,
		        pt_v3(0, 0, 0), pt_v3(0.24f * x, 0, 0), 0.04f, -1.0f);
		sphere(&c[C_HAND_L + s], s ? PT_BONE_RIGHT_HAND : PT_BONE_LEFT_HAND,
		       pt_v3(0.06f * x, 0, 0), 0.05f);
		sphere(&c[C_SHOULDER_L + s], s ? PT_BONE_RIGHT_SHOULDER : PT_BONE_LEFT_SHOULDER,
		       pt_v3(0.08f * x, 0, 0), 0.06f);
	}
	capsule(&c[C_SPINE], PT_BONE_SPINE, pt_v3(0, 0.05f, 0), pt_v3(0, -0.05f, 0), 0.11f, -1.0f);
	capsule(&c[C_HIPS], PT_BONE_HIPS, pt_v3(-0.06f, 0, 0), pt_v3(0.06f, 0, 0), 0.1f, -1.0f);
}

/* Selects colliders 0..31 by the bits of `bits`, in index order. */
static void select_colliders(pt_strand_def *s, uint32_t bits)
{
	int idx[32], n = 0;
	for (int i = 0; i < 32; i++)
		if (bits >> i & 1u)
			idx[n++] = i;
	if (!pt_strand_set_colliders(s, idx, n))
		abort(); /* distinct indices in range: cannot fail */
}

/* Appends a straight chain of `joints` joints x seg m from `anchor` along `dir`, hanging
 * from `bone` (-1: the head), colliding with `mask`. */
static pt_strand_def *chain(pt_instance_def *d, int bone, pt_vec3 anchor, pt_vec3 dir,
                            int joints, float seg, uint32_t mask, float stiffness)
{
	pt_strand_def *s = pt_instance_def_add_strand(d);
	if (!s) {
		fprintf(stderr, "avatar_scene: out of memory or too many strands\n");
		abort();
	}
	s->bone = bone;
	s->anchor = anchor;
	s->direction = dir;
	s->points = joints + 1;
	s->segment_length = seg;
	select_colliders(s, mask);
	pt_joint_def j = pt_joint_def_default();
	j.stiffness = stiffness;
	j.drag_force = 0.4f;
	j.gravity_power = 0.3f;
	j.hit_radius = 0.02f;
	pt_strand_set_joints(s, j);
	return s;
}

int avatar_scene_def(pt_instance_def *d, int substeps)
{
	tdef_init(d);
	snprintf(d->name, sizeof d->name, "bench whole avatar");
	d->solver = PT_SOLVER_SPRINGBONE;
	d->springbone.form = PT_SPRINGBONE_VRM;
	d->prewarm_s = 0.0f;
	d->substeps = substeps;
	tdef_strands(d, 0);
	d->bone_count = AVATAR_BONES;
	for (int b = 0; b < AVATAR_BONES; b++) {
		d->bones[b].bone = rest[b].bone;
		d->bones[b].position = pt_v3(rest[b].p[0], rest[b].p[1], rest[b].p[2]);
		d->bones[b].rotation = pt_quat_identity();
	}
	colliders(d);
	const float pi = 3.14159265f;
	/* hair on the head: 16 x 6, or 8 x 12 where strands are capped at 32 */
	int hair = (int)PT_MAX_STRANDS >= (int)AVATAR_CHAINS ? 16 : 8, hj = 96 / hair;
	uint32_t hm = BIT(C_HEAD) | BIT(C_FACE) | BIT(C_NECK) | BIT(C_UCHEST) | BIT(C_SHOULDER_L) |
	              BIT(C_SHOULDER_R);
	for (int k = 0; k < hair; k++) {
		float a = 2.0f * pi * ((float)k + 0.5f) / (float)hair, sa = sinf(a), ca = cosf(a);
		chain(d, -1, pt_v3(0.11f * sa, 0.06f, 0.11f * ca), pt_v3(0.4f * sa, -1.0f, 0.4f * ca),
		      hj, 0.04f, hm, 0.8f);
	}
	uint32_t skirt = BIT(C_HIPS) | BIT(C_ULEG_L) | BIT(C_ULEG_R) | BIT(C_LLEG_L) |
	                 BIT(C_LLEG_R) | BIT(C_HAND_L) | BIT(C_HAND_R);
	for (int k = 0; k < 10; k++) {
		float a = 2.0f * pi * (float)k / 10.0f, sa = sinf(a), ca = cosf(a);
		chain(d, PT_BONE_HIPS, pt_v3(0.2f * sa, -0.64f, 0.16f * ca),
		      pt_v3(0.35f * sa, -1.0f, 0.35f * ca), 5, 0.07f, skirt, 1.2f);
	}
	uint32_t legs = BIT(C_HIPS) | BIT(C_ULEG_L) | BIT(C_ULEG_R);
	pt_vec3 tail0 = pt_v3(0, -0.68f, -0.14f), tdir = v3_norm_or(pt_v3(0, -0.6f, -1.0f),
	                                                            pt_v3(0, -1.0f, 0));
	int tail = d->strand_count;
	chain(d, PT_BONE_HIPS, tail0, tdir, 8, 0.06f, legs, 1.5f);
	pt_strand_def *branch = chain(d, -1, v3_add(v3_add(tail0, v3_scale(tdir, 4 * 0.06f)),
	                                            pt_v3(0.02f, 0, 0)),
	                              pt_v3(1.0f, -1.0f, -0.5f), 6, 0.04f,
	                              BIT(C_ULEG_L) | BIT(C_ULEG_R), 1.0f);
	branch->parent_strand = tail;
	branch->parent_point = 4;
	for (int s = 0; s < 2; s++) {
		float x = s ? -1.0f : 1.0f;
		chain(d, PT_BONE_SPINE, pt_v3(0.08f * x, -0.50f, -0.11f), pt_v3(0, -1.0f, -0.2f), 4,
		      0.06f, legs, 1.0f);
		chain(d, PT_BONE_CHEST, pt_v3(0.02f * x, -0.40f, 0.13f), pt_v3(0.3f * x, -1.0f, 0.3f),
		      4, 0.04f, BIT(C_UCHEST) | BIT(C_BUST_L) | BIT(C_BUST_R), 0.8f);
		chain(d, PT_BONE_UPPER_CHEST, pt_v3(0.07f * x, -0.28f, 0.10f), pt_v3(0, -0.3f, 1.0f),
		      2, 0.04f, BIT(C_UARM_L) | BIT(C_UARM_R), 4.0f);
		chain(d, PT_BONE_NECK, pt_v3(0.05f * x, -0.12f, -0.10f), pt_v3(0, -1.0f, -0.5f), 4,
		      0.05f, BIT(C_NECK) | BIT(C_UCHEST), 1.0f);
		for (int k = 0; k < 2; k++)
			chain(d, s ? PT_BONE_RIGHT_LOWER_ARM : PT_BONE_LEFT_LOWER_ARM,
			      pt_v3(0.46f * x, -0.20f, k ? -0.05f : 0.05f), pt_v3(0, -1.0f, 0), 3, 0.05f,
			      BIT(C_SPINE) | BIT(C_HIPS), 1.0f);
	}
	return d->strand_count;
}

/* Pose helpers: a x b, and b rotated by q about its own origin. */
static pt_pose compose(pt_pose a, pt_pose b)
{
	pt_pose r = {v3_add(a.p, q_rotate(a.q, b.p)), q_norm(q_mul(a.q, b.q))};
	return r;
}

static pt_quat rot(float x, float y, float z, double angle)
{
	return q_axis_angle(pt_v3(x, y, z), (float)angle);
}

/* Posed body bones and their parents in the hierarchy (an index into this table, or -1:
 * the avatar's root; shoulders are here too, for the arms' chain, but not sent). */
static const struct {
	pt_bone bone;
	int parent;
	int sent;
} fk[] = {
    {PT_BONE_HIPS, -1, 1},             /* 0 */
    {PT_BONE_SPINE, 0, 1},             /* 1 */
    {PT_BONE_CHEST, 1, 1},             /* 2 */
    {PT_BONE_UPPER_CHEST, 2, 1},       /* 3 */
    {PT_BONE_NECK, 3, 1},              /* 4 */
    {PT_BONE_LEFT_SHOULDER, 3, 0},     /* 5 */
    {PT_BONE_LEFT_UPPER_ARM, 5, 1},    /* 6 */
    {PT_BONE_LEFT_LOWER_ARM, 6, 1},    /* 7 */
    {PT_BONE_LEFT_HAND, 7, 1},         /* 8 */
    {PT_BONE_RIGHT_SHOULDER, 3, 0},    /* 9 */
    {PT_BONE_RIGHT_UPPER_ARM, 9, 1},   /* 10 */
    {PT_BONE_RIGHT_LOWER_ARM, 10, 1},  /* 11 */
    {PT_BONE_RIGHT_HAND, 11, 1},       /* 12 */
    {PT_BONE_LEFT_UPPER_LEG, 0, 1},    /* 13 */
    {PT_BONE_LEFT_LOWER_LEG, 13, 1},   /* 14 */
    {PT_BONE_RIGHT_UPPER_LEG, 0, 1},   /* 15 */
    {PT_BONE_RIGHT_LOWER_LEG, 15, 1},  /* 16 */
};
enum { NFK = sizeof fk / sizeof fk[0] };

static pt_vec3 rest_p(pt_bone b)
{
	for (int i = 0; i < AVATAR_BONES; i++)
		if (rest[i].bone == b)
			return pt_v3(rest[i].p[0], rest[i].p[1], rest[i].p[2]);
	return pt_v3(0, 0, 0);
}

void avatar_scene_pose(double t, double phase, pt_vec3 at, pt_pose *head,
                       pt_bone bones[AVATAR_POSED], pt_pose poses[AVATAR_POSED])
{
	const double tau = 6.283185307179586;
	double u = t + phase;
	double turn = 0.6 * sin(tau * 0.25 * u), bend = sin(tau * 0.4 * u);
	double arm = sin(tau * 0.8 * u), walk = sin(tau * 0.8 * u + 1.0);
	pt_quat local[NFK];
	for (int i = 0; i < NFK; i++)
		local[i] = pt_quat_identity();
	local[0] = rot(0, 1, 0, turn);
	local[1] = rot(1, 0, 0, 0.25 * bend);
	local[2] = rot(1, 0, 0, 0.15 * bend);
	local[4] = rot(1, 0, 0, -0.2 * bend);
	for (int s = 0; s < 2; s++) {
		float x = s ? -1.0f : 1.0f;
		double sw = s ? -arm : arm;
		/* lowered 40-80 deg from the T-pose, swung forward and back, elbow bending */
		local[6 + 4 * s] = q_mul(rot(0, 1, 0, 0.5 * sw * x), rot(0, 0, x, -(1.05 + 0.35 * arm)));
		local[7 + 4 * s] = rot(0, x, 0, -(0.4 + 0.4 * sw));
		local[8 + 4 * s] = rot(1, 0, 0, 0.3 * sw);
		local[13 + 2 * s] = rot(1, 0, 0, 0.4 * (s ? -walk : walk));
		local[14 + 2 * s] = rot(1, 0, 0, 0.3 + 0.3 * (s ? walk : -walk));
	}
	pt_pose world[NFK];
	for (int i = 0; i < NFK; i++) {
		pt_vec3 p = rest_p(fk[i].bone);
		pt_pose parent = {v3_add(at, pt_v3(0, 0.02f * (float)sin(tau * 1.6 * u), 0)),
		                  pt_quat_identity()};
		if (fk[i].parent >= 0) {
			parent = world[fk[i].parent];
			p = v3_sub(p, rest_p(fk[fk[i].parent].bone));
		} /* else the hips, at their rest offset from `at` */
		pt_pose off = {p, local[i]};
		world[i] = compose(parent, off);
	}
	pt_pose neck_to_head = {v3_sub(pt_v3(0, 0, 0), rest_p(PT_BONE_NECK)),
	                        q_mul(rot(0, 1, 0, 0.5 * sin(tau * 0.6 * u)),
	                              rot(1, 0, 0, 0.2 * sin(tau * 0.9 * u)))};
	*head = compose(world[4], neck_to_head);
	int n = 0;
	for (int i = 0; i < NFK; i++)
		if (fk[i].sent) {
			bones[n] = fk[i].bone;
			poses[n++] = world[i];
		}
}

int avatar_scene_drive(pt_world *w, pt_id id, double t, double phase, pt_vec3 at)
{
	pt_pose head, poses[AVATAR_POSED];
	pt_bone bones[AVATAR_POSED];
	avatar_scene_pose(t, phase, at, &head, bones, poses);
	int ok = pt_world_set_head(w, id, head);
	for (int i = 0; i < AVATAR_POSED; i++)
		ok &= pt_world_set_bone_pose(w, id, bones[i], poses[i]);
	return ok;
}
