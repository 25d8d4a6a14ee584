/* Every documented range excludes what makes a solver non-finite: each numeric field of
 * the definition, alone at each end of its range (and at the smallest positive float,
 * which a range open at 0 would let in), under violent head motion, keeps every point finite and near
 * the head — or the validator refuses it. test_robust.c mixes fields; this isolates them,
 * so a failure names the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ponytail/world.h"
#include "testdef.h"
#include "vecmath.h"

#define TOP(f) offsetof(pt_instance_def, f)
#define STR(f) (offsetof(pt_instance_def, strands) + offsetof(pt_strand_def, f))
#define COL(f) (offsetof(pt_instance_def, colliders) + offsetof(pt_collider_def, f))
enum { JOINT = 1 }; /* the field is in every joint of strand 0 */

static const struct field {
	const char *name;
	size_t off;
	int joint;
	float lo, hi;
} fields[] = {
    {"prewarm_s", TOP(prewarm_s), 0, 0, 10},
    {"wind.turbulence", TOP(wind.turbulence), 0, 0, 2},
    {"wind.drag", TOP(wind.drag), 0, 0, 100},
    {"verlet.damping", TOP(verlet.damping), 0, 0, 1},
    {"verlet.bend_stiffness", TOP(verlet.bend_stiffness), 0, 0, 1},
    {"verlet.stretch.stiffness", TOP(verlet.stretch_stiffness), 0, 0, 1},
    {"verlet.stretch.max_strain", TOP(verlet.stretch_max_strain), 0, 0.001f, 1},
    {"teleport.distance", TOP(teleport.distance), 0, 0, 1000},
    {"teleport.angle_deg", TOP(teleport.angle_deg), 0, 0, 180},
    {"strands[0].segment_length", STR(segment_length), 0, 0.001f, 1},
    {"strands[0].mass.root", STR(mass_root), 0, 0.001f, 100},
    {"strands[0].mass.tip", STR(mass_tip), 0, 0.001f, 100},
    {"springbone.mass (per point)", offsetof(pt_joint_def, mass), JOINT, 0.001f, 100},
    {"strands[0].radius", STR(radius), 0, 0, 0.1f},
    {"strands[0].gravity_scale (low)", STR(gravity_scale), 0, -10, 0},
    {"strands[0].gravity_scale (high)", STR(gravity_scale), 0, 0, 10},
    {"springbone.radius (per point)", offsetof(pt_joint_def, radius), JOINT, 0, 0.1f},
    {"colliders[0].radius", COL(radius), 0, 0, 10},
    {"springbone.stiffness", offsetof(pt_joint_def, stiffness), JOINT, 0, 100},
    {"springbone.drag_force", offsetof(pt_joint_def, drag_force), JOINT, 0, 1},
    {"springbone.gravity_power", offsetof(pt_joint_def, gravity_power), JOINT, 0, 100},
    {"springbone.hit_radius", offsetof(pt_joint_def, hit_radius), JOINT, 0, 1},
    {"springbone.limit.angle", offsetof(pt_joint_def, limit_angle), JOINT, 0, 3.1415926f},
};

static uint32_t rng = 12345u;
static float frand(void)
{
	rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
	return (float)(rng >> 8) / 16777216.0f;
}

static void base(pt_instance_def *d, pt_solver solver)
{
	tdef_init(d);
	d->solver = solver;
	d->verlet.stretch = PT_STRETCH_NONLINEAR;
	d->verlet.self_collision = 1;
	d->gravity = pt_v3(0, -99.9f, 0);
	d->wind.velocity = pt_v3(99.9f, 0, 0);
	d->wind.turbulence = 2;
	tdef_strands(d, 2);
	for (int s = 0; s < 2; s++) {
		pt_strand_def_reset(&d->strands[s]);
		d->strands[s].points = PT_MAX_POINTS;
		d->strands[s].anchor = pt_v3(s ? 0.05f : -0.05f, 0.06f, -0.09f);
		for (int j = 0; j < PT_MAX_POINTS - 1; j++)
			d->strands[s].joints[j].limit = PT_LIMIT_CONE;
	}
	d->collider_count = 1;
	memset(&d->colliders[0], 0, sizeof d->colliders[0]);
	d->colliders[0].shape = PT_SHAPE_SPHERE;
	d->colliders[0].radius = 0.1f;
}

static void set(pt_instance_def *d, const struct field *f, float v)
{
	if (f->joint) {
		for (int j = 0; j < PT_MAX_POINTS - 1; j++)
			memcpy((char *)&d->strands[0].joints[j] + f->off, &v, sizeof v);
	} else {
		memcpy((char *)d + f->off, &v, sizeof v);
	}
}

/* Steps the instance 2 s under violent motion; returns the first bad point, or -1. */
static int run(pt_world *w, const pt_instance_def *d)
{
	pt_pose head = {pt_v3(0, 1.5f, 0), pt_quat_identity()};
	pt_id id = pt_world_create_instance(w, d, head);
	assert_false(pt_id_is_null(id));
	static pt_vec3 pts[PT_MAX_JOINTS];
	int bad = -1;
	for (int t = 0; t < 120 && bad < 0; t++) {
		if (t % 3 == 0) {
			pt_vec3 jump = pt_v3(frand() - 0.5f, frand() - 0.5f, frand() - 0.5f);
			head.p = v3_add(head.p, v3_scale(jump, 4.0f));
			head.q = q_norm((pt_quat){frand() - 0.5f, frand() - 0.5f, frand() - 0.5f, 0.6f});
		}
		pt_world_set_head(w, id, head);
		pt_world_step(w, 1.0f / 60.0f, 4);
		int n = pt_world_read_points(w, id, pts, PT_MAX_JOINTS);
		for (int i = 0; i < n && bad < 0; i++)
			if (!v3_finite(pts[i]) || v3_len(v3_sub(pts[i], head.p)) > 1e3f)
				bad = i;
	}
	pt_world_destroy_instance(w, id);
	return bad;
}

static void test_each_range_end_stays_finite(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL);
	int failures = 0;
	for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
		const struct field *f = &fields[i];
		/* The tiny ones are refused by a range closed above 0, and test the open ones. */
		float ends[] = {f->lo, FLT_TRUE_MIN, 1e-30f, f->hi};
		for (int solver = 0; solver < 2; solver++)
			for (size_t k = 0; k < sizeof ends / sizeof ends[0]; k++) {
				pt_instance_def d;
				base(&d, (pt_solver)solver);
				set(&d, f, ends[k]);
				if (!pt_instance_validate(&d).ok) {
					pt_instance_def_fini(&d);
					continue; /* refused: fine */
				}
				int bad = run(w, &d);
				if (bad >= 0) {
					printf("FAIL %s = %g (solver %d): point %d not finite or far away\n",
					       f->name, (double)ends[k], solver, bad);
					failures++;
				}
				pt_instance_def_fini(&d);
			}
	}
	pt_world_destroy(w);
	assert_int_equal(failures, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_each_range_end_stays_finite),
	};
	return cmocka_run_group_tests_name("ranges", tests, NULL, NULL);
}
