/* Ponytail core: basic math types and limits.
 *
 * Right-handed, +Y up, metres, seconds, kilograms (glTF / three.js conventions).
 * Quaternions are [x, y, z, w] and must be unit length where the API says so.
 */
#ifndef PONYTAIL_TYPES_H
#define PONYTAIL_TYPES_H

#include <stdint.h>

typedef struct pt_vec3 {
	float x, y, z;
} pt_vec3;

typedef struct pt_quat {
	float x, y, z, w;
} pt_quat;

/* A rigid pose: world position of a point p_local is p + rotate(q, p_local). */
typedef struct pt_pose {
	pt_vec3 p; /* metres */
	pt_quat q; /* unit quaternion */
} pt_pose;

/* Hard limits of one instance. Validation rejects definitions beyond them. They are
 * ceilings, not sizes: an instance's memory follows the strands, points and colliders it
 * has (a three-strand ponytail does not pay for 256). */
enum {
	PT_MAX_STRANDS = 256,   /* strands per instance */
	PT_MAX_POINTS = 64,     /* points per strand, including the root */
	PT_MAX_JOINTS = 4096,   /* points per instance, every strand's root included */
	PT_MAX_COLLIDERS = 128, /* colliders per instance (a strand selects a subset) */
	PT_MAX_BONES = 54,      /* body-bone rest poses per instance (def->bones): one per
	                         * humanoid body bone (PT_BONE_COUNT) */
	PT_NAME_MAX = 64,      /* bytes of name/room/anchor_bone including the terminating NUL */
	PT_MAX_SUBSTEPS = 16   /* substeps per step (pt_world_step, an instance's "substeps") */
};

/* A set of collider indices 0 .. PT_MAX_COLLIDERS - 1, bit k of word k / 32 for index k. */
enum { PT_COLLIDER_MASK_WORDS = (PT_MAX_COLLIDERS + 31) / 32 };
typedef struct pt_collider_mask {
	uint32_t w[PT_COLLIDER_MASK_WORDS];
} pt_collider_mask;

/* 1 when index k (in [0, PT_MAX_COLLIDERS)) is in m. */
static inline int pt_mask_test(const pt_collider_mask *m, int k)
{
	return (int)((m->w[k >> 5] >> (k & 31)) & 1u);
}

static inline void pt_mask_set(pt_collider_mask *m, int k)
{
	m->w[k >> 5] |= 1u << (k & 31);
}

/* Every index (the default selection: all colliders). */
static inline pt_collider_mask pt_mask_all(void)
{
	pt_collider_mask m;
	for (int i = 0; i < PT_COLLIDER_MASK_WORDS; i++)
		m.w[i] = 0xffffffffu;
	return m;
}

static inline pt_collider_mask pt_mask_none(void)
{
	pt_collider_mask m;
	for (int i = 0; i < PT_COLLIDER_MASK_WORDS; i++)
		m.w[i] = 0u;
	return m;
}

/* Indices 0 .. 31 from the bits of `bits` (bit k: index k), none above. */
static inline pt_collider_mask pt_mask_bits(uint32_t bits)
{
	pt_collider_mask m = pt_mask_none();
	m.w[0] = bits;
	return m;
}

static inline pt_vec3 pt_v3(float x, float y, float z)
{
	pt_vec3 v = {x, y, z};
	return v;
}

static inline pt_quat pt_quat_identity(void)
{
	pt_quat q = {0.0f, 0.0f, 0.0f, 1.0f};
	return q;
}

#endif
