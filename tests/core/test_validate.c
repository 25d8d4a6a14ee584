/* pt_instance_validate: every invalid field is named, with its allowed range. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "scenario.h"

typedef void (*mutate_fn)(pt_instance_def *d);

#define CASE(fieldname, body)                                                                      \
	static void m_##fieldname(pt_instance_def *d) { body; }
#define F(v) ((float)(v))

CASE(name, memset(d->name, 'a', sizeof d->name))
CASE(room, strcpy(d->room, "no spaces"))
CASE(solver, d->solver = (pt_solver)7)
CASE(substeps, d->substeps = 17)
CASE(substeps_neg, d->substeps = -1)
CASE(prewarm, d->prewarm_s = F(11))
CASE(prewarm_nan, d->prewarm_s = F(NAN))
CASE(gravity, d->gravity = pt_v3(0, -200, 0))
CASE(gravity_inf, d->gravity.x = F(INFINITY))
CASE(wind_velocity, d->wind.velocity = pt_v3(0, 0, 1000))
CASE(wind_turbulence, d->wind.turbulence = F(3))
CASE(wind_drag, d->wind.drag = F(-1))
CASE(damping, d->verlet.damping = F(1.5))
CASE(iterations, d->verlet.iterations = 0)
CASE(bend, d->verlet.bend_stiffness = F(2))
CASE(stretch_mode, d->verlet.stretch = (pt_stretch_mode)5)
CASE(stretch_stiffness, d->verlet.stretch_stiffness = F(0))
CASE(stretch_max_strain, d->verlet.stretch_max_strain = F(2))
CASE(self_collision, d->verlet.self_collision = 2)
CASE(form, d->springbone.form = (pt_springbone_form)3)
CASE(center, d->springbone.center_head = 5)
CASE(strand_count, d->strand_count = 0)
CASE(strand_count_big, d->strand_count = PT_MAX_STRANDS + 1)
CASE(collider_count, d->collider_count = PT_MAX_COLLIDERS + 1)
CASE(anchor, d->strands[1].anchor = pt_v3(F(NAN), 0, 0))
CASE(direction, d->strands[0].direction = pt_v3(0, 0, 0))
CASE(points, d->strands[1].points = 1)
CASE(points_big, d->strands[0].points = PT_MAX_POINTS + 1)
CASE(segment_length, d->strands[0].segment_length = F(0))
CASE(mass_root, d->strands[0].mass_root = F(0))
CASE(mass_tip, d->strands[1].mass_tip = F(-1))
CASE(radius, d->strands[0].radius = F(0.5))
CASE(strand_colliders, pt_strand_set_colliders(&d->strands[0], (int[]){5}, 1))
CASE(anchor_bone, memset(d->strands[0].anchor_bone, 'b', PT_NAME_MAX))
CASE(col_shape, d->colliders[0].shape = (pt_shape)9)
CASE(col_attach, d->colliders[1].attach = (pt_attach)4)
CASE(col_radius, d->colliders[0].radius = F(-0.1))
CASE(col_center, d->colliders[0].center = pt_v3(0, F(NAN), 0))
CASE(col_capsule_a, d->colliders[1].a = pt_v3(F(INFINITY), 0, 0))
CASE(col_radius_b, d->colliders[1].radius_b = F(20))
CASE(col_ellipsoid,
     (d->colliders[0].shape = PT_SHAPE_ELLIPSOID, d->colliders[0].radii = pt_v3(0.1f, 0, 0.1f)))
CASE(col_plane_normal, (d->colliders[0].shape = PT_SHAPE_PLANE, d->colliders[0].normal = pt_v3(0, 0, 0)))
CASE(col_inside_radius, (d->colliders[0].shape = PT_SHAPE_INSIDE_SPHERE, d->colliders[0].radius = 0))
CASE(teleport_distance, d->teleport.distance = F(0))
CASE(teleport_angle, d->teleport.angle_deg = F(181))
CASE(teleport_mode, d->teleport.mode = (pt_teleport_mode)2)
CASE(sb_stiffness, (d->solver = PT_SOLVER_SPRINGBONE, d->strands[1].joints[3].stiffness = F(-1)))
CASE(sb_pull_stiffness, (d->solver = PT_SOLVER_SPRINGBONE, d->springbone.form = PT_SPRINGBONE_PULL,
			 d->strands[0].joints[0].stiffness = F(1.5)))
CASE(sb_drag, (d->solver = PT_SOLVER_SPRINGBONE, d->strands[0].joints[2].drag_force = F(1.1)))
CASE(sb_gravity_power, (d->solver = PT_SOLVER_SPRINGBONE, d->strands[0].joints[0].gravity_power = F(NAN)))
CASE(sb_hit_radius, (d->solver = PT_SOLVER_SPRINGBONE, d->strands[0].joints[0].hit_radius = F(2)))
CASE(sb_gravity_dir, (d->solver = PT_SOLVER_SPRINGBONE, d->strands[0].joints[10].gravity_dir = pt_v3(0, 0, 0)))
CASE(sb_limit, (d->solver = PT_SOLVER_SPRINGBONE, d->strands[0].joints[1].limit = (pt_limit_type)4))
CASE(sb_limit_angle, (d->solver = PT_SOLVER_SPRINGBONE, d->strands[0].joints[1].limit = PT_LIMIT_CONE,
		      d->strands[0].joints[1].limit_angle = F(4)))
CASE(sb_limit_axis, (d->solver = PT_SOLVER_SPRINGBONE, d->strands[0].joints[1].limit = PT_LIMIT_HINGE,
		     d->strands[0].joints[1].limit_axis = pt_v3(0, 0, 0)))

static const struct {
	mutate_fn fn;
	const char *field;
} cases[] = {
    {m_name, "name"},
    {m_room, "room"},
    {m_solver, "solver"},
    {m_substeps, "substeps"},
    {m_substeps_neg, "substeps"},
    {m_prewarm, "prewarm_s"},
    {m_prewarm_nan, "prewarm_s"},
    {m_gravity, "gravity"},
    {m_gravity_inf, "gravity"},
    {m_wind_velocity, "wind.velocity"},
    {m_wind_turbulence, "wind.turbulence"},
    {m_wind_drag, "wind.drag"},
    {m_damping, "verlet.damping"},
    {m_iterations, "verlet.iterations"},
    {m_bend, "verlet.bend_stiffness"},
    {m_stretch_mode, "verlet.stretch.mode"},
    {m_stretch_stiffness, "verlet.stretch.stiffness"},
    {m_stretch_max_strain, "verlet.stretch.max_strain"},
    {m_self_collision, "verlet.self_collision"},
    {m_form, "springbone.form"},
    {m_center, "springbone.center"},
    {m_strand_count, "strands"},
    {m_strand_count_big, "strands"},
    {m_collider_count, "colliders"},
    {m_anchor, "strands[1].anchor"},
    {m_direction, "strands[0].direction"},
    {m_points, "strands[1].points"},
    {m_points_big, "strands[0].points"},
    {m_segment_length, "strands[0].segment_length"},
    {m_mass_root, "strands[0].mass.root"},
    {m_mass_tip, "strands[1].mass.tip"},
    {m_radius, "strands[0].radius"},
    {m_strand_colliders, "strands[0].colliders[0]"},
    {m_anchor_bone, "strands[0].anchor_bone"},
    {m_col_shape, "colliders[0].shape"},
    {m_col_attach, "colliders[1].attach"},
    {m_col_radius, "colliders[0].radius"},
    {m_col_center, "colliders[0].center"},
    {m_col_capsule_a, "colliders[1].a"},
    {m_col_radius_b, "colliders[1].radius_b"},
    {m_col_ellipsoid, "colliders[0].radii[1]"},
    {m_col_plane_normal, "colliders[0].normal"},
    {m_col_inside_radius, "colliders[0].radius"},
    {m_teleport_distance, "teleport.distance"},
    {m_teleport_angle, "teleport.angle_deg"},
    {m_teleport_mode, "teleport.mode"},
    {m_sb_stiffness, "strands[1].springbone.stiffness[3]"},
    {m_sb_pull_stiffness, "strands[0].springbone.stiffness[0]"},
    {m_sb_drag, "strands[0].springbone.drag_force[2]"},
    {m_sb_gravity_power, "strands[0].springbone.gravity_power[0]"},
    {m_sb_hit_radius, "strands[0].springbone.hit_radius[0]"},
    {m_sb_gravity_dir, "strands[0].springbone.gravity_dir[10]"},
    {m_sb_limit, "strands[0].springbone.limit[1].type"},
    {m_sb_limit_angle, "strands[0].springbone.limit[1].angle_deg"},
    {m_sb_limit_axis, "strands[0].springbone.limit[1].axis"},
};

static void test_defaults_are_valid(void **state)
{
	(void)state;
	pt_instance_def d;
	tdef_init(&d);
	assert_true(pt_instance_validate(&d).ok);
	pt_instance_def_fini(&d);
	scenario_twin_tails(&d);
	assert_true(pt_instance_validate(&d).ok);
	d.solver = PT_SOLVER_SPRINGBONE;
	assert_true(pt_instance_validate(&d).ok);
	assert_false(pt_instance_validate(NULL).ok);
	pt_instance_def_fini(&d);
}

static void test_every_field_is_named(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		pt_instance_def d;
		scenario_twin_tails(&d);
		cases[i].fn(&d);
		pt_error e = pt_instance_validate(&d);
		if (e.ok || strcmp(e.field, cases[i].field) != 0)
			fail_msg("case %zu: expected field %s, got %s (%s)", i, cases[i].field,
				 e.ok ? "ok" : e.field, e.message);
		/* the message names the field and says what is allowed */
		assert_non_null(strstr(e.message, cases[i].field));
		assert_true(strlen(e.message) > strlen(cases[i].field) + 5);
		pt_instance_def_fini(&d);
	}
}

static void test_ranges_in_message(void **state)
{
	(void)state;
	pt_instance_def d;
	tdef_init(&d);
	d.verlet.iterations = 99;
	pt_error e = pt_instance_validate(&d);
	assert_string_equal(e.message, "verlet.iterations: 99 is out of range [1, 32]");
	pt_instance_def_fini(&d);
}

/* A joint beyond the strand's points is not looked at (arrays are fixed-size). */
static void test_unused_joints_ignored(void **state)
{
	(void)state;
	pt_instance_def d;
	tdef_init(&d);
	d.solver = PT_SOLVER_SPRINGBONE;
	d.strands[0].joints[20].stiffness = NAN;
	assert_true(pt_instance_validate(&d).ok);
	pt_instance_def_fini(&d);
}

static void test_names(void **state)
{
	(void)state;
	assert_int_equal(pt_solver_from_name("springbone"), PT_SOLVER_SPRINGBONE);
	assert_int_equal(pt_solver_from_name("euler"), -1);
	assert_int_equal(pt_solver_from_name(NULL), -1);
	assert_int_equal(pt_shape_from_name("inside_capsule"), PT_SHAPE_INSIDE_CAPSULE);
	assert_string_equal(pt_shape_name(PT_SHAPE_ELLIPSOID), "ellipsoid");
	assert_null(pt_shape_name(PT_SHAPE_COUNT));
	assert_null(pt_solver_name((pt_solver)9));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults_are_valid), cmocka_unit_test(test_every_field_is_named),
	    cmocka_unit_test(test_ranges_in_message),  cmocka_unit_test(test_unused_joints_ignored),
	    cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests_name("validate", tests, NULL, NULL);
}
