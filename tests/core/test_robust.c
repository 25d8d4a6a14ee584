/* "Nothing a caller passes can make the state NaN": random valid definitions, pushed to
 * the edges of every range, under violent head motion, stay finite. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "ponytail/world.h"
#include "testdef.h"
#include "vecmath.h"

static uint32_t rng = 0x9e3779b9u;
static float frand(void) /* [0, 1) */
{
	rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
	return (float)(rng >> 8) / 16777216.0f;
}
/* Mostly the ends of a range, sometimes inside it. */
static float edge(float lo, float hi)
{
	float r = frand();
	return r < 0.35f ? lo : r < 0.7f ? hi : lo + (hi - lo) * frand();
}
static int iedge(int lo, int hi) { return (int)lroundf(edge((float)lo, (float)hi)); }
static pt_vec3 rvec(float len)
{
	pt_vec3 v = pt_v3(frand() - 0.5f, frand() - 0.5f, frand() - 0.5f);
	return v3_scale(v3_norm_or(v, pt_v3(0, 1, 0)), len);
}

static void random_def(pt_instance_def *d)
{
	tdef_init(d);
	d->solver = frand() < 0.5f ? PT_SOLVER_VERLET : PT_SOLVER_SPRINGBONE;
	d->springbone.form = frand() < 0.5f ? PT_SPRINGBONE_VRM : PT_SPRINGBONE_PULL;
	d->springbone.center_head = frand() < 0.5f;
	d->substeps = iedge(0, 16);
	d->prewarm_s = edge(0, 0.5f);
	d->gravity = rvec(edge(0, 99.9f));
	d->wind.velocity = rvec(edge(0, 99.9f));
	d->wind.turbulence = edge(0, 2);
	d->wind.drag = edge(0, 100);
	d->verlet.damping = edge(0, 1);
	d->verlet.iterations = iedge(1, 32);
	d->verlet.bend_stiffness = edge(0, 1);
	d->verlet.stretch = frand() < 0.5f ? PT_STRETCH_EXACT : PT_STRETCH_NONLINEAR;
	d->verlet.stretch_stiffness = edge(0.001f, 1);
	d->verlet.stretch_max_strain = edge(0.001f, 1);
	d->verlet.self_collision = frand() < 0.3f;
	tdef_strands(d, iedge(1, 4));
	d->collider_count = iedge(0, 6);
	for (int c = 0; c < d->collider_count; c++) {
		pt_collider_def *k = &d->colliders[c];
		memset(k, 0, sizeof *k);
		k->shape = (pt_shape)(rng % PT_SHAPE_COUNT);
		k->attach = frand() < 0.7f ? PT_ATTACH_HEAD : PT_ATTACH_WORLD;
		k->center = rvec(edge(0, 0.3f));
		k->radii = pt_v3(edge(0.001f, 0.3f), edge(0.001f, 0.3f), edge(0.001f, 0.3f));
		k->a = rvec(edge(0, 0.2f));
		k->b = frand() < 0.2f ? k->a : rvec(edge(0, 0.2f)); /* degenerate capsules too */
		k->normal = rvec(1);
		k->radius = edge(0.001f, 0.3f);
		k->radius_b = frand() < 0.5f ? -1.0f : edge(0, 0.3f);
	}
	for (int s = 0; s < d->strand_count; s++) {
		pt_strand_def *st = &d->strands[s];
		pt_strand_def_reset(st);
		st->anchor = rvec(edge(0, 0.2f));
		st->direction = rvec(1);
		st->points = iedge(2, PT_MAX_POINTS);
		st->segment_length = edge(0.001f, 0.2f);
		st->mass_root = edge(0.01f, 100), st->mass_tip = edge(0.01f, 100);
		st->radius = edge(0, 0.1f);
		for (int j = 0; j < st->points - 1; j++) {
			pt_joint_def *jt = &st->joints[j];
			jt->stiffness =
			    d->springbone.form == PT_SPRINGBONE_PULL ? edge(0, 1) : edge(0, 100);
			jt->drag_force = edge(0, 1);
			jt->gravity_power = edge(0, 100);
			jt->hit_radius = edge(0, 0.3f);
			jt->gravity_dir = rvec(1);
			jt->limit = (pt_limit_type)(rng % 3);
			jt->limit_angle = edge(0, 3.14159f);
			jt->limit_axis = rvec(1);
		}
	}
	d->teleport.distance = edge(0.01f, 1000);
	d->teleport.angle_deg = edge(1, 180);
	d->teleport.mode = frand() < 0.5f ? PT_TELEPORT_KEEP : PT_TELEPORT_RESET;
}

static void test_random_definitions_stay_finite(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL);
	pt_vec3 pts[PT_MAX_JOINTS];
	for (int trial = 0; trial < 120; trial++) {
		pt_instance_def d;
		random_def(&d);
		pt_error e = pt_instance_validate(&d);
		if (!e.ok)
			fail_msg("trial %d: generator made an invalid def: %s", trial, e.message);
		pt_pose head = {pt_v3(0, 1.5f, 0), pt_quat_identity()};
		pt_id id = pt_world_create_instance(w, &d, head);
		assert_false(pt_id_is_null(id));
		for (int t = 0; t < 90; t++) {
			/* violent: random jumps up to 5 m and spins, sometimes still */
			if (frand() < 0.8f) {
				head.p = v3_add(head.p, rvec(edge(0, 5)));
				head.q = q_norm((pt_quat){frand() - 0.5f, frand() - 0.5f, frand() - 0.5f, frand() - 0.5f + 1e-3f});
			}
			pt_world_set_head(w, id, head);
			pt_world_step(w, 1.0f / 60.0f, 4);
		}
		int n = pt_world_read_points(w, id, pts, PT_MAX_JOINTS);
		for (int i = 0; i < n; i++)
			if (!v3_finite(pts[i]) || fabsf(pts[i].x - head.p.x) > 1e3f)
				fail_msg("trial %d (solver %d): point %d is %g %g %g", trial, d.solver, i,
					 (double)pts[i].x, (double)pts[i].y, (double)pts[i].z);
		pt_world_destroy_instance(w, id);
		pt_instance_def_fini(&d);
	}
	pt_world_destroy(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_random_definitions_stay_finite),
	};
	return cmocka_run_group_tests_name("robust", tests, NULL, NULL);
}
