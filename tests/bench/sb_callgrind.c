/* The spring-bone step under callgrind (`make callgrind-springbone`): the bench's avatars
 * (tests/bench/bench_springbone.c: 4 chains x 12 joints, head sphere + neck capsule, one
 * substep) at a size valgrind runs in seconds. Instruction counts are stable on a loaded
 * machine where wall-clock figures are not.
 *
 * Usage: sb_callgrind VARIANT [STEPS]; VARIANT 0 vrm, 1 center = head, 2 cone/hinge
 * limits on every joint, 3 pull form. Steps 20 warm-up steps then STEPS (default 10), and
 * prints the joint-steps that run inside pt_world_step (what --toggle-collect counts) and
 * the state hash (equal before and after a change that keeps the results). */
#include <stdio.h>
#include <stdlib.h>

#include "../springbone/sb_scenario.h"

enum { AVATARS = 200, JOINTS = 12, WARMUP = 20 };

int main(int argc, char **argv)
{
	int v = argc > 1 ? atoi(argv[1]) : 0, steps = argc > 2 ? atoi(argv[2]) : 10;
	if (v < 0 || v > 3 || steps < 1 || steps > 100000) {
		fprintf(stderr, "usage: sb_callgrind VARIANT(0-3) [STEPS(1-100000)]\n");
		return 2;
	}
	pt_world *w = pt_world_create(NULL);
	pt_motion m = pt_motion_default(PT_MOTION_SHAKE);
	pt_instance_def d = sb_def_avatar(JOINTS);
	for (int s = 0; s < d.strand_count; s++)
		for (int j = 0; j < JOINTS; j++) {
			pt_joint_def *jd = &d.strands[s].joints[j];
			if (v == 2)
				jd->limit = j % 2 ? PT_LIMIT_CONE : PT_LIMIT_HINGE, jd->limit_angle = 0.6f;
			if (v == 3)
				jd->stiffness = 0.1f;
		}
	d.springbone.center_head = v == 1;
	d.springbone.form = v == 3 ? PT_SPRINGBONE_PULL : PT_SPRINGBONE_VRM;
	for (int i = 0; i < AVATARS; i++)
		if (pt_id_is_null(pt_world_create_instance(w, &d, m.base)))
			return 1;
	for (int t = 0; t < WARMUP + steps; t++) {
		for (int i = 0; i < pt_world_count(w); i++) {
			pt_pose h = pt_motion_pose(&m, t / 60.0 + 0.013 * i);
			h.p.x += 0.5f * (float)(i % 40);
			pt_world_set_head(w, pt_world_id_at(w, i), h);
		}
		pt_world_step(w, 1.0f / 60.0f, 1);
	}
	printf("joint-steps %d hash %016llx\n", AVATARS * d.strand_count * JOINTS * (WARMUP + steps),
	       (unsigned long long)pt_world_hash(w));
	pt_world_destroy(w);
	return 0;
}
