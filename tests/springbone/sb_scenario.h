/* Spring-bone scenarios and measurements shared by tests/springbone and the benchmark
 * (header-only: tests.mk links each test file on its own). */
#ifndef PT_SB_SCENARIO_H
#define PT_SB_SCENARIO_H

#include <math.h>
#include <stdlib.h>

#include "ponytail/instance.h"
#include "ponytail/motion.h"
#include "ponytail/world.h"
#include "scenario.h"

/* Initialises *d (the caller finishes it) as a springbone instance with one strand of
 * `points` x `seg` m from `anchor` along `dir`, joints `j`, no colliders, no prewarm, its
 * own substep count `substeps`, stepped at every substep ("rate": "substep": these tests
 * measure the per-substep conversion; test_sb_rate.c covers the default frame rate). */
static inline void sb_def_strand(pt_instance_def *d, pt_vec3 anchor, pt_vec3 dir, int points,
                                 float seg, pt_joint_def j, int substeps)
{
	tdef_init(d);
	d->solver = PT_SOLVER_SPRINGBONE;
	d->prewarm_s = 0.0f;
	d->substeps = substeps;
	d->springbone.rate = PT_SPRINGBONE_RATE_SUBSTEP;
	d->strands[0].anchor = anchor;
	d->strands[0].direction = dir;
	d->strands[0].points = points;
	d->strands[0].segment_length = seg;
	pt_strand_set_joints(&d->strands[0], j);
}

/* Initialises *d (the caller finishes it) as the benchmark's avatar: 4 chains of
 * `joints` joints (12 in the bench) round the back of the head, a head sphere (r 0.1)
 * and a neck capsule (r 0.05), vrm form, 1 substep. */
static inline void sb_def_avatar(pt_instance_def *d, int joints)
{
	tdef_init(d);
	d->solver = PT_SOLVER_SPRINGBONE;
	d->prewarm_s = 0.0f;
	d->substeps = 1;
	tdef_strands(d, 4);
	const float ax[4] = {-0.06f, -0.02f, 0.02f, 0.06f};
	for (int s = 0; s < 4; s++) {
		d->strands[s].anchor = pt_v3(ax[s], 0.05f, -0.1f);
		d->strands[s].direction = pt_v3(ax[s], -1.0f, -0.3f);
		d->strands[s].points = joints + 1;
		d->strands[s].segment_length = 0.025f;
		pt_joint_def j = pt_joint_def_default();
		j.stiffness = 1.0f;
		j.drag_force = 0.4f;
		j.gravity_power = 0.3f;
		pt_strand_set_joints(&d->strands[s], j);
	}
	scenario_head_and_neck(d);
}

/* Angle in radians between two vectors (atan2 form: accurate near 0 and pi). */
static inline double sb_angle(pt_vec3 a, pt_vec3 b)
{
	double cx = (double)a.y * b.z - (double)a.z * b.y,
	       cy = (double)a.z * b.x - (double)a.x * b.z;
	double cz = (double)a.x * b.y - (double)a.y * b.x;
	double dot = (double)a.x * b.x + (double)a.y * b.y + (double)a.z * b.z;
	return atan2(sqrt(cx * cx + cy * cy + cz * cz), dot);
}

static inline pt_vec3 sb_sub(pt_vec3 a, pt_vec3 b)
{
	return pt_v3(a.x - b.x, a.y - b.y, a.z - b.z);
}

static inline double sb_dist(pt_vec3 a, pt_vec3 b)
{
	pt_vec3 d = sb_sub(a, b);
	return sqrt((double)d.x * d.x + (double)d.y * d.y + (double)d.z * d.z);
}

/* Fixtures live in tests/fixtures under the repository root ($PT_ROOT, else "."). */
static inline const char *sb_root(void)
{
	const char *r = getenv("PT_ROOT");
	return r && *r ? r : ".";
}

#endif
