/* The whole-avatar scene (issue 38 item 9), shared by the benchmark
 * (tests/bench/bench_avatar.c, the daemon's tests/server/js/bench_avatars.mjs through its
 * --json dump) and tests/core/test_avatar_scene.c: one springbone instance holding a
 * VRoid-style avatar's chains on the body, with the bone poses that move it.
 *
 * A body in T-pose (VRM 1.0 normalised bones: every rest rotation the identity), the head
 * at the origin; 17 body bones in "bones". 40 chains, 200 joints, on 8 bones:
 *
 *   head         hair: 16 chains x 6 joints round the head
 *   neck         hood: 2 x 4
 *   upper_chest  bust: 2 x 2
 *   chest        ribbon: 2 x 4
 *   spine        sash: 2 x 4
 *   hips         skirt ring: 10 x 5; tail: 1 x 8, and a branch of 6 joints hanging
 *                from the tail's point 4 ("parent")
 *   left_lower_arm, right_lower_arm   sleeves: 2 x 3 each
 *
 * 20 colliders (8 spheres, 12 capsules; 2 on the head, 18 on 12 body bones through
 * "attach"); each chain selects the few a VRM collider group would give it (5.3 per joint
 * on average). VRM form, default rate (one spring-bone step per 1/60 s), no prewarm.
 *
 * Where the build caps strands below 40 (PT_MAX_STRANDS 32 before issue 38 item 3) the
 * hair is 8 chains x 12 joints instead: still 200 joints, 32 chains (avatar_scene_def
 * returns the chain count, the benchmark prints it). */
#ifndef PT_TEST_AVATAR_SCENE_H
#define PT_TEST_AVATAR_SCENE_H

#include "ponytail/instance.h"
#include "ponytail/world.h"

enum {
	AVATAR_CHAINS = 40,     /* with PT_MAX_STRANDS >= 40; else AVATAR_CHAINS_CAPPED */
	AVATAR_CHAINS_CAPPED = 32,
	AVATAR_JOINTS = 200,
	AVATAR_COLLIDERS = 20,
	AVATAR_CHAIN_BONES = 8, /* distinct bones chains hang from, the head included */
	AVATAR_BONES = 17,      /* entries of "bones" */
	AVATAR_POSED = 15,      /* body bones posed every tick (the shoulders follow the rule) */
};

/* Initialises *d (the caller finishes it with pt_instance_def_fini) as the avatar, its
 * substeps `substeps` (0: the world step's). Returns the number of chains. */
int avatar_scene_def(pt_instance_def *d, int substeps);

/* The avatar's poses at time t (s) of its motion, shifted by `phase` (s), its head at
 * `at` in the rest pose (the hips 0.62 m below, bobbing 2 cm): the whole body turns (+-34 deg
 * about the hips), bends (spine, chest, neck), bobs, swings its arms (lowered 40-80 deg,
 * +-29 deg forward and back, elbows bending) and legs, and the head looks round. Writes
 * the head's world pose and the AVATAR_POSED body bones' (bones[i] gets poses[i]). */
void avatar_scene_pose(double t, double phase, pt_vec3 at, pt_pose *head,
                       pt_bone bones[AVATAR_POSED], pt_pose poses[AVATAR_POSED]);

/* Sets instance id's head and body bone poses to avatar_scene_pose's (what a client's
 * head_pose with bones does every tick). Returns 0 when the world refused one. */
int avatar_scene_drive(pt_world *w, pt_id id, double t, double phase, pt_vec3 at);

#endif
