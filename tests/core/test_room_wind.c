/* Room wind (ponytail/wind.h, issue 40 item 4): a steady wind tilts a free strand to the
 * angle where its air drag balances gravity, in both solvers; a spring bone's own wind
 * adds to the room's as a zone would; a sphere zone blows only
 * inside; turbulence is deterministic per seed; only the instance given the zones moves;
 * the zones are checked field by field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "ponytail/wind.h"
#include "scenario.h"
#include "vecmath.h"

#define DEG (180.0 / 3.14159265358979323846)

static pt_pose head_at(float x, float y, float z)
{
	pt_pose p = {pt_v3(x, y, z), pt_quat_identity()};
	return p;
}

static pt_wind_zone global_wind(float u, float turbulence, uint32_t seed)
{
	pt_wind_zone z = pt_wind_zone_default();
	z.direction = pt_v3(1, 0, 0);
	z.strength = u;
	z.turbulence = turbulence;
	z.seed = seed;
	return z;
}

/* One free strand hanging along -Y from a still head at y = 1.5 (12 points, 3 cm). */
static void free_strand(pt_instance_def *d, pt_solver solver)
{
	tdef_init(d);
	d->solver = solver;
	d->prewarm_s = 0;
	d->strands[0].points = 12;
	d->strands[0].segment_length = 0.03f;
	d->strands[0].anchor = pt_v3(0, 0, 0);
	d->strands[0].direction = pt_v3(0, -1, 0);
}

/* The angle from straight down, degrees, of the line from root to tip in the XY plane. */
static double tilt_deg(const pt_vec3 *p, int n)
{
	pt_vec3 d = v3_sub(p[n - 1], p[0]);
	return atan2((double)d.x, (double)-d.y) * DEG;
}

/* Verlet: at rest every free point feels a = g + D (W - 0) (core/SCHEMA.md's drag law,
 * a = drag (wind - v)), the same at every point, so the chain hangs straight along it:
 * tan(theta) = D u / |g|. D = 2 /s, u = 3 m/s: atan(6 / 9.81) = 31.45 deg. The room wind
 * is the only wind (the instance's own velocity is 0; its drag D is the one used).
 * Tolerance 0.002 deg, at 1 to 8 substeps: after 20 s the swing has decayed by
 * (0.96^60 e^-2)^20 ~ 1e-40 of itself, so what is left is float rounding of 3 cm segments
 * at 1.5 m from the origin (~1e-7 m, 2e-4 deg); a formula error would show far beyond it
 * (the angle for D = 2.1 would be 32.7 deg). */
static void test_verlet_steady_tilt(void **state)
{
	(void)state;
	const float D = 2.0f, u = 3.0f, g = 9.81f;
	for (int sub = 1; sub <= 8; sub *= 2) {
		pt_world *w = pt_world_create(NULL);
		pt_instance_def d;
		free_strand(&d, PT_SOLVER_VERLET);
		d.wind.drag = D;
		pt_id id = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
		pt_wind_zone z = global_wind(u, 0, 1);
		assert_int_equal(pt_world_set_room_wind(w, id, &z, 1), 1);
		for (int t = 0; t < 1200; t++)
			pt_world_step(w, 1.0f / 60.0f, sub);
		pt_vec3 p[12];
		pt_world_read_points(w, id, p, 12);
		double want = atan((double)(D * u / g)) * DEG;
		assert_true(fabs(tilt_deg(p, 12) - want) < 0.002);
		/* straight: the middle point on the root-tip line within 0.1 mm */
		pt_vec3 mid = v3_scale(v3_add(p[0], p[11]), 0.5f);
		assert_true(v3_len(v3_sub(v3_scale(v3_add(p[5], p[6]), 0.5f), mid)) < 1e-4f);
		pt_world_destroy(w);
		pt_instance_def_fini(&d);
	}
}

/* Spring bone, vrm form, stiffness 0: at rest each tail's push per step must be radial
 * (springbone_chain.c), and the push is c h (1 - kept) / d with c = gravity_power
 * gravity_dir, plus the wind's W h (1 - kept): the segment lies along
 * gravity_power gravity_dir + d W, tan(theta) = d u / gravity_power. d = 0.4, u = 2,
 * gravity_power 1: atan(0.8) = 38.66 deg, at the authored frame rate and at "substep"
 * rate. Tolerance: at frame rate 0.002 deg (the drag 0.4 a frame leaves nothing of the
 * start in 20 s; measured 2e-5 deg, every segment alike). At "substep" rate 0.05 deg: there
 * a chain held at rest length keeps stirring by microns around its steady state
 * (core/README.md "Known limit"); measured, the segments scatter by +-0.06 deg around the
 * closed form and the root-to-tip line is 0.005 deg off. */
static void test_springbone_steady_tilt(void **state)
{
	(void)state;
	const float drag = 0.4f, u = 2.0f, power = 1.0f;
	for (int rate = 0; rate < 2; rate++) {
		pt_world *w = pt_world_create(NULL);
		pt_instance_def d;
		free_strand(&d, PT_SOLVER_SPRINGBONE);
		d.springbone.rate = rate ? PT_SPRINGBONE_RATE_SUBSTEP : PT_SPRINGBONE_RATE_FRAME;
		for (int j = 0; j < 11; j++) {
			d.strands[0].joints[j].stiffness = 0;
			d.strands[0].joints[j].drag_force = drag;
			d.strands[0].joints[j].gravity_power = power;
			d.strands[0].joints[j].gravity_dir = pt_v3(0, -1, 0);
		}
		assert_true(pt_instance_validate(&d).ok);
		pt_id id = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
		pt_wind_zone z = global_wind(u, 0, 1);
		assert_int_equal(pt_world_set_room_wind(w, id, &z, 1), 1);
		for (int t = 0; t < 1200; t++)
			pt_world_step(w, 1.0f / 60.0f, 4);
		pt_vec3 p[12];
		pt_world_read_points(w, id, p, 12);
		double want = atan((double)(drag * u / power)) * DEG;
		assert_true(fabs(tilt_deg(p, 12) - want) < (rate ? 0.05 : 0.002));
		/* and the wind gone, it hangs straight down again */
		assert_int_equal(pt_world_set_room_wind(w, id, NULL, 0), 1);
		for (int t = 0; t < 1200; t++)
			pt_world_step(w, 1.0f / 60.0f, 4);
		pt_world_read_points(w, id, p, 12);
		assert_true(fabs(tilt_deg(p, 12)) < 0.05);
		pt_world_destroy(w);
		pt_instance_def_fini(&d);
	}
}

/* A sphere zone (r 0.5 around (5, 1.3, 0)) blows on the strand inside it and not at all
 * on the one outside: that one stays bit for bit as in a world without wind. With a 0.2 m
 * falloff, a point 0.1 m inside the edge gets half the strength. */
static void test_sphere_zone(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL), *still = pt_world_create(NULL);
	pt_instance_def d;
	free_strand(&d, PT_SOLVER_VERLET);
	pt_id in = pt_world_create_instance(w, &d, head_at(5, 1.5f, 0));
	pt_id out = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
	pt_id ref = pt_world_create_instance(still, &d, head_at(0, 1.5f, 0));
	pt_wind_zone z = global_wind(5, 0, 1);
	z.type = PT_WIND_SPHERE;
	z.center = pt_v3(5, 1.3f, 0);
	z.radius = 0.5f;
	assert_int_equal(pt_world_set_room_wind(w, in, &z, 1), 1);
	assert_int_equal(pt_world_set_room_wind(w, out, &z, 1), 1);
	for (int t = 0; t < 120; t++) {
		pt_world_step(w, 1.0f / 60.0f, 4);
		pt_world_step(still, 1.0f / 60.0f, 4);
	}
	pt_vec3 a[12], b[12], c[12];
	pt_world_read_points(w, in, a, 12);
	pt_world_read_points(w, out, b, 12);
	pt_world_read_points(still, ref, c, 12);
	assert_true(a[11].x > a[0].x + 0.05f); /* blown along +X */
	assert_memory_equal(b, c, sizeof b);   /* outside: nothing */
	z.falloff = 0.2f;
	pt_vec3 v = pt_wind_at(&z, 1, pt_v3(5.4f, 1.3f, 0), 0, 0.0);
	assert_true(fabsf(v.x - 2.5f) < 1e-4f && v.y == 0.0f && v.z == 0.0f);
	v = pt_wind_at(&z, 1, pt_v3(5.51f, 1.3f, 0), 0, 0.0);
	assert_true(v.x == 0.0f);
	/* a box: inside its 1 x 2 x 1 m extent, not beyond */
	z.type = PT_WIND_BOX, z.size = pt_v3(1, 2, 1), z.falloff = 0;
	assert_true(pt_wind_at(&z, 1, pt_v3(5.45f, 2.25f, 0.45f), 0, 0.0).x == 5.0f);
	assert_true(pt_wind_at(&z, 1, pt_v3(5.55f, 1.3f, 0), 0, 0.0).x == 0.0f);
	pt_world_destroy(w);
	pt_world_destroy(still);
	pt_instance_def_fini(&d);
}

/* Turbulence from the seed: two worlds with the same zones step to the same bits, another
 * seed to other bits; both solvers. An instance without zones beside them is untouched. */
static void test_turbulence_deterministic(void **state)
{
	(void)state;
	for (int solver = 0; solver < 2; solver++) {
		uint64_t h[3], plain[3];
		for (int i = 0; i < 3; i++) {
			pt_world *w = pt_world_create(NULL);
			pt_instance_def d;
			free_strand(&d, solver ? PT_SOLVER_SPRINGBONE : PT_SOLVER_VERLET);
			pt_id id = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
			pt_id other = pt_world_create_instance(w, &d, head_at(3, 1.5f, 0));
			pt_wind_zone z[2] = {global_wind(4, 1.0f, i == 2 ? 9u : 3u), global_wind(1, 0.5f, 5)};
			z[1].direction = pt_v3(0, 0, 1);
			assert_int_equal(pt_world_set_room_wind(w, id, z, 2), 1);
			pt_wind_zone back[PT_MAX_WIND_ZONES];
			assert_int_equal(pt_world_get_room_wind(w, id, back, PT_MAX_WIND_ZONES), 2);
			assert_memory_equal(back, z, sizeof z);
			assert_int_equal(pt_world_get_room_wind(w, other, back, PT_MAX_WIND_ZONES), 0);
			for (int t = 0; t < 90; t++)
				pt_world_step(w, 1.0f / 60.0f, 4);
			h[i] = pt_world_instance_hash(w, id);
			plain[i] = pt_world_instance_hash(w, other);
			pt_world_destroy(w);
			pt_instance_def_fini(&d);
		}
		assert_true(h[0] == h[1]);
		assert_true(h[0] != h[2]);
		assert_true(plain[0] == plain[2]);
	}
}

/* The state hash covers the zones (the same points with other zones are another next
 * tick); an instance without zones hashes as before any were set and removed. */
static void test_state_hash(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	free_strand(&d, PT_SOLVER_VERLET);
	pt_id id = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
	uint64_t h0 = pt_world_state_hash(w, id);
	pt_wind_zone z = global_wind(3, 0, 1);
	pt_world_set_room_wind(w, id, &z, 1);
	uint64_t h1 = pt_world_state_hash(w, id);
	pt_world_set_room_wind(w, id, NULL, 0);
	assert_true(h1 != h0);
	assert_true(pt_world_state_hash(w, id) == h0);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* A spring bone's own `wind` blows through the same drag as a room's, added to the
 * zones' sum: an instance with own wind V (turbulence 0.5, seed 7) moves bit for bit as
 * one with a global zone of V and the same gusts; own V1 with a zone Z as zones {Z, V1};
 * at the closed-form tilt atan(drag u / gravity_power) of test_springbone_steady_tilt.
 * The own wind starts and stops with updates of the definition, and stays when the
 * room's zones are taken away. Both spring-bone rates. */
static void test_springbone_own_wind(void **state)
{
	(void)state;
	const float drag = 0.4f, u = 2.0f;
	for (int rate = 0; rate < 2; rate++) {
		pt_world *w = pt_world_create(NULL);
		pt_instance_def d, own, mixed;
		free_strand(&d, PT_SOLVER_SPRINGBONE);
		d.springbone.rate = rate ? PT_SPRINGBONE_RATE_SUBSTEP : PT_SPRINGBONE_RATE_FRAME;
		for (int j = 0; j < 11; j++) {
			d.strands[0].joints[j].stiffness = 0;
			d.strands[0].joints[j].drag_force = drag;
			d.strands[0].joints[j].gravity_power = 1;
		}
		pt_instance_def_init(&own);
		pt_instance_def_init(&mixed);
		assert_true(pt_instance_def_copy(&own, &d) && pt_instance_def_copy(&mixed, &d));
		own.wind.velocity = pt_v3(u, 0, 0);
		own.wind.turbulence = 0.5f;
		own.wind.seed = 7;
		mixed.wind.velocity = pt_v3(1, 0, 0);
		assert_true(pt_instance_validate(&own).ok && pt_instance_validate(&mixed).ok);
		pt_id a = pt_world_create_instance(w, &own, head_at(0, 1.5f, 0));
		pt_id b = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
		pt_id c = pt_world_create_instance(w, &mixed, head_at(0, 1.5f, 0));
		pt_id e = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
		pt_id still = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
		pt_wind_zone zb = global_wind(u, 0.5f, 7), z2 = global_wind(1.5f, 0, 1);
		z2.direction = pt_v3(0, 0, 1);
		pt_wind_zone ze[2] = {z2, global_wind(1, 0, 1)};
		assert_int_equal(pt_world_set_room_wind(w, b, &zb, 1), 1);
		assert_int_equal(pt_world_set_room_wind(w, c, &z2, 1), 1);
		assert_int_equal(pt_world_set_room_wind(w, e, ze, 2), 1);
		for (int t = 0; t < 1200; t++) {
			pt_world_step(w, 1.0f / 60.0f, 4);
			if (t % 100 == 0) {
				assert_true(pt_world_instance_hash(w, a) == pt_world_instance_hash(w, b));
				assert_true(pt_world_instance_hash(w, c) == pt_world_instance_hash(w, e));
			}
		}
		assert_true(pt_world_instance_hash(w, a) != pt_world_instance_hash(w, still));
		/* the steady tilt: without gusts, at the closed form */
		own.wind.turbulence = 0;
		assert_int_equal(pt_world_update_instance(w, a, &own), 1);
		for (int t = 0; t < 1200; t++)
			pt_world_step(w, 1.0f / 60.0f, 4);
		pt_vec3 p[12];
		pt_world_read_points(w, a, p, 12);
		double want = atan((double)(drag * u)) * DEG;
		assert_true(fabs(tilt_deg(p, 12) - want) < (rate ? 0.05 : 0.002));
		/* the room's zones taken away from c: its own wind still blows */
		assert_int_equal(pt_world_set_room_wind(w, c, NULL, 0), 1);
		assert_int_equal(pt_world_get_room_wind(w, c, ze, 2), 0);
		/* the own wind stopped by an update: a hangs straight down again */
		own.wind.velocity = pt_v3(0, 0, 0);
		assert_int_equal(pt_world_update_instance(w, a, &own), 1);
		for (int t = 0; t < 1200; t++)
			pt_world_step(w, 1.0f / 60.0f, 4);
		pt_world_read_points(w, a, p, 12);
		assert_true(fabs(tilt_deg(p, 12)) < 0.05);
		pt_world_read_points(w, c, p, 12);
		assert_true(fabs(tilt_deg(p, 12) - atan((double)drag) * DEG) < (rate ? 0.05 : 0.002));
		/* and started by one: b's twin again (b keeps its zone: both blow u) */
		assert_int_equal(pt_world_set_room_wind(w, b, NULL, 0), 1);
		own.wind.velocity = pt_v3(u, 0, 0);
		assert_int_equal(pt_world_update_instance(w, a, &own), 1);
		for (int t = 0; t < 600; t++)
			pt_world_step(w, 1.0f / 60.0f, 4);
		pt_world_read_points(w, a, p, 12);
		assert_true(fabs(tilt_deg(p, 12) - want) < (rate ? 0.05 : 0.002));
		pt_world_destroy(w);
		pt_instance_def_fini(&d);
		pt_instance_def_fini(&own);
		pt_instance_def_fini(&mixed);
	}
}

/* Every range names its field and the allowed range; nothing is set on a refusal. */
static void test_validate(void **state)
{
	(void)state;
	static const struct {
		const char *field;
		int k;
	} cases[] = {{"zones[1].type", 0},      {"zones[1].direction", 1}, {"zones[1].strength", 2},
	             {"zones[1].turbulence", 3}, {"zones[1].center", 4},   {"zones[1].radius", 5},
	             {"zones[1].size", 6},       {"zones[1].falloff", 7}};
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	free_strand(&d, PT_SOLVER_VERLET);
	pt_id id = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		pt_wind_zone z[2] = {global_wind(1, 0, 1), global_wind(1, 0, 1)};
		z[1].type = cases[i].k == 6 ? PT_WIND_BOX : PT_WIND_SPHERE;
		switch (cases[i].k) {
		case 0: z[1].type = 7; break;
		case 1: z[1].direction = pt_v3(0, 0, 0); break;
		case 2: z[1].strength = 101; break;
		case 3: z[1].turbulence = -1; break;
		case 4: z[1].center = pt_v3(NAN, 0, 0); break;
		case 5: z[1].radius = 0; break;
		case 6: z[1].size = pt_v3(1, -1, 1); break;
		default: z[1].falloff = 2000; break;
		}
		pt_error e = pt_wind_zones_validate(z, 2);
		assert_false(e.ok);
		assert_string_equal(e.field, cases[i].field);
		assert_non_null(strstr(e.message, cases[i].field));
		assert_int_equal(pt_world_set_room_wind(w, id, z, 2), 0);
		assert_int_equal(pt_world_get_room_wind(w, id, z, 2), 0);
	}
	pt_wind_zone many[PT_MAX_WIND_ZONES + 1];
	for (int i = 0; i <= PT_MAX_WIND_ZONES; i++)
		many[i] = global_wind(1, 0, 1);
	pt_error e = pt_wind_zones_validate(many, PT_MAX_WIND_ZONES + 1);
	assert_false(e.ok);
	assert_string_equal(e.field, "zones");
	assert_true(pt_wind_zones_validate(many, PT_MAX_WIND_ZONES).ok);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* A topology update keeps the zones (and the wind keeps blowing on the new points). */
static void test_update_keeps_wind(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	free_strand(&d, PT_SOLVER_VERLET);
	pt_id id = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
	pt_wind_zone z = global_wind(4, 0, 1);
	pt_world_set_room_wind(w, id, &z, 1);
	d.strands[0].points = 20;
	assert_int_equal(pt_world_update_instance(w, id, &d), 1);
	assert_int_equal(pt_world_get_room_wind(w, id, &z, 1), 1);
	for (int t = 0; t < 120; t++)
		pt_world_step(w, 1.0f / 60.0f, 4);
	pt_vec3 p[20];
	assert_int_equal(pt_world_read_points(w, id, p, 20), 20);
	assert_true(p[19].x > p[0].x + 0.1f);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_verlet_steady_tilt),
	    cmocka_unit_test(test_springbone_steady_tilt),
	    cmocka_unit_test(test_springbone_own_wind),
	    cmocka_unit_test(test_sphere_zone),
	    cmocka_unit_test(test_turbulence_deterministic),
	    cmocka_unit_test(test_state_hash),
	    cmocka_unit_test(test_validate),
	    cmocka_unit_test(test_update_keeps_wind),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
