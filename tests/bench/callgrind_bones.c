/* Cost of body-bone colliders, in instructions (not built by make; core/README.md
 * "Body colliders"):
 *   cc -std=c11 -O2 -ffp-contract=off -fno-math-errno -Icore/include -Icore/src \
 *      tests/bench/callgrind_bones.c core/src/*.c -lm -o /tmp/bb [-DBONES]
 *   valgrind --tool=callgrind /tmp/bb
 * 256 verlet instances, one strand of 12 points, two head-attached colliders (sphere,
 * capsule); 60 ticks x 4 substeps. With -DBONES the capsule is on the chest bone (no pose
 * given: it follows the head at its rest offset, the same place), so the printed state
 * hash is the same in both builds and only the cost differs. */
#include <math.h>
#include <stdio.h>
#include "ponytail/instance.h"
#include "ponytail/world.h"
int main(void)
{
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	if (!pt_instance_def_init(&d))
		return 1;
	d.prewarm_s = 0;
	d.collider_count = 2;
	d.colliders[0].shape = PT_SHAPE_SPHERE, d.colliders[0].radius = 0.1f, d.colliders[0].radius_b = -1;
	d.colliders[1].shape = PT_SHAPE_CAPSULE, d.colliders[1].radius = 0.05f, d.colliders[1].radius_b = -1;
	d.colliders[1].a = pt_v3(-0.1f, -0.3f, 0), d.colliders[1].b = pt_v3(0.1f, -0.3f, 0);
#ifdef BONES
	d.bone_count = 1;
	d.bones[0].bone = PT_BONE_CHEST, d.bones[0].position = pt_v3(0, -0.3f, 0), d.bones[0].rotation.w = 1;
	d.colliders[1].attach = PT_ATTACH_BONE, d.colliders[1].bone = PT_BONE_CHEST;
	d.colliders[1].a = pt_v3(-0.1f, 0, 0), d.colliders[1].b = pt_v3(0.1f, 0, 0);
#endif
	pt_id ids[256];
	pt_pose h = {{0, 1.6f, 0}, {0, 0, 0, 1}};
	for (int i = 0; i < 256; i++)
		ids[i] = pt_world_create_instance(w, &d, h);
	for (int t = 0; t < 60; t++) {
		float a = 0.5f * sinf(t * 0.2f);
		pt_pose p = {{0, 1.6f, 0}, {0, sinf(a / 2), 0, cosf(a / 2)}};
		for (int i = 0; i < 256; i++)
			pt_world_set_head(w, ids[i], p);
		pt_world_step(w, 1.0f / 60, 4);
	}
	printf("%016llx\n", (unsigned long long)pt_world_hash(w));
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
	return 0;
}
