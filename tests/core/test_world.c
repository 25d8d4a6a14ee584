/* World API: ids, lifetime, updates, teleport, determinism, input safety. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "scenario.h"
#include "vecmath.h"

static pt_pose head_at(float x, float y, float z)
{
	pt_pose p = {pt_v3(x, y, z), pt_quat_identity()};
	return p;
}

static void test_ids_are_generation_checked(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	tdef_init(&d);
	d.prewarm_s = 0;
	pt_id a = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
	assert_false(pt_id_is_null(a));
	assert_true(pt_world_valid(w, a));
	assert_int_equal(pt_world_destroy_instance(w, a), 1);
	assert_false(pt_world_valid(w, a));
	assert_int_equal(pt_world_destroy_instance(w, a), 0);
	pt_id b = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
	assert_int_equal(b.index, a.index); /* slot reused ... */
	assert_int_not_equal(b.generation, a.generation);
	assert_false(pt_world_valid(w, a)); /* ... but the stale id stays stale */
	pt_vec3 buf[12];
	assert_int_equal(pt_world_read_points(w, a, buf, 12), -1);
	assert_int_equal(pt_world_set_head(w, a, head_at(0, 0, 0)), 0);
	pt_id zero = {0, 0}, wild = {999, 1};
	assert_false(pt_world_valid(w, zero));
	assert_false(pt_world_valid(w, wild));
	/* the prefetch hint reads nothing through a stale or wild id (ASan would see a read
	 * of a destroyed record), and changes nothing for a live one */
	pt_vec3 before[12], after[12];
	assert_int_equal(pt_world_read_points(w, b, before, 12), 12);
	for (int stage = 0; stage < 2; stage++) {
		pt_world_prefetch(w, a, stage);
		pt_world_prefetch(w, zero, stage);
		pt_world_prefetch(w, wild, stage);
		pt_world_prefetch(w, b, stage);
	}
	assert_int_equal(pt_world_read_points(w, b, after, 12), 12);
	assert_memory_equal(before, after, sizeof before);
	assert_true(pt_id_to_u64(pt_id_from_u64(pt_id_to_u64(b))) == pt_id_to_u64(b));
	pt_world_destroy(w);
	pt_world_destroy(NULL);
	pt_instance_def_fini(&d);
}

/* Destroying instances compacts storage; the survivors' state is untouched. */
static void test_compaction_keeps_state(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	scenario_twin_tails(&d);
	pt_id ids[20];
	for (int i = 0; i < 20; i++) {
		d.strands[0].points = 3 + i; /* different sizes */
		ids[i] = pt_world_create_instance(w, &d, head_at((float)i, 1.5f, 0));
	}
	uint64_t h[20];
	for (int i = 0; i < 20; i++)
		h[i] = pt_world_instance_hash(w, ids[i]);
	for (int i = 0; i < 20; i += 3)
		pt_world_destroy_instance(w, ids[i]);
	assert_int_equal(pt_world_count(w), 13);
	for (int i = 0; i < 20; i++) {
		if (i % 3 == 0)
			continue;
		assert_true(pt_world_instance_hash(w, ids[i]) == h[i]);
		int sc, pps[PT_MAX_STRANDS];
		assert_int_equal(pt_world_shape(w, ids[i], &sc, pps), 3 + i + 12);
		assert_int_equal(pps[0], 3 + i);
	}
	/* iteration by storage index visits exactly the live ids */
	int seen = 0;
	for (int i = 0; i < pt_world_count(w); i++)
		seen += pt_world_valid(w, pt_world_id_at(w, i));
	assert_int_equal(seen, 13);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* Drives every instance of w along m for `ticks` ticks of `substeps` substeps, then
 * returns the world's hash and frees w and d. */
static uint64_t stress_run_hash(pt_world *w, pt_instance_def *d, const pt_motion *m, int ticks,
                                int substeps)
{
	for (int t = 1; t <= ticks; t++) {
		for (int i = 0; i < pt_world_count(w); i++)
			pt_world_set_head(w, pt_world_id_at(w, i), pt_motion_pose(m, t / 60.0));
		pt_world_step(w, 1.0f / 60.0f, substeps);
	}
	uint64_t h = pt_world_hash(w);
	pt_world_destroy(w);
	pt_instance_def_fini(d);
	return h;
}

/* The stress sequence twice gives bit-identical state; so do scalar and AVX2 kernels. */
static uint64_t stress_hash(pt_kernel k, pt_kernel *used)
{
	pt_world_def wd = pt_world_def_default();
	wd.kernel = k;
	pt_world *w = pt_world_create(&wd);
	*used = pt_world_kernel(w);
	pt_instance_def d;
	scenario_twin_tails(&d);
	d.wind.velocity = pt_v3(1, 0, 0.5f);
	d.wind.turbulence = 0.5f;
	pt_motion m = pt_motion_default(PT_MOTION_STRESS);
	/* the middle one with a room wind (a gusting global zone and a sphere around the
	 * head with a falloff), beside two without in the same lane groups */
	pt_wind_zone z[2] = {pt_wind_zone_default(), pt_wind_zone_default()};
	z[0].strength = 3, z[0].turbulence = 0.8f, z[0].direction = pt_v3(1, 0.2f, -1);
	z[1].type = PT_WIND_SPHERE, z[1].strength = 6, z[1].center = pt_v3(0, 1.3f, 0);
	z[1].radius = 0.3f, z[1].falloff = 0.15f, z[1].direction = pt_v3(0, 0, 1);
	for (int i = 0; i < 3; i++) {
		pt_id id = pt_world_create_instance(w, &d, pt_motion_pose(&m, 0));
		if (i == 1)
			pt_world_set_room_wind(w, id, z, 2);
	}
	return stress_run_hash(w, &d, &m, 300, 4);
}

static void test_determinism(void **state)
{
	(void)state;
	pt_kernel k1, k2, k3;
	uint64_t a = stress_hash(PT_KERNEL_AUTO, &k1), b = stress_hash(PT_KERNEL_AUTO, &k2);
	uint64_t s = stress_hash(PT_KERNEL_SCALAR, &k3);
	assert_true(a == b);
	assert_int_equal(k3, PT_KERNEL_SCALAR);
	print_message("auto kernel: %s; scalar and auto hashes %016llx %016llx\n",
		      k1 == PT_KERNEL_AVX2 ? "avx2" : "scalar", (unsigned long long)s,
		      (unsigned long long)a);
	assert_true(a == s);
}

/* Every strand length, 2 to PT_MAX_POINTS points, each in 1 to 17 lanes (17: a full lane
 * group and one more), on the scalar and the default kernel: the same world hash. The AVX2
 * gather and scatter take eight points at a time, the last four or fewer four at a time,
 * and every lane count leaves a part of a lane group empty, so this reaches each of
 * their paths. */
static uint64_t lengths_hash(pt_kernel k, int substeps, int *count)
{
	pt_world_def wd = pt_world_def_default();
	wd.kernel = k;
	pt_world *w = pt_world_create(&wd);
	pt_instance_def d;
	scenario_twin_tails(&d);
	tdef_strands(&d, 1);
	d.prewarm_s = 0;
	pt_motion m = pt_motion_default(PT_MOTION_STRESS);
	*count = 0;
	for (int n = 2; n <= PT_MAX_POINTS; n++) {
		d.strands[0].points = n;
		for (int i = 0; i < 1 + n * 5 % 17; i++)
			*count += !pt_id_is_null(pt_world_create_instance(w, &d, pt_motion_pose(&m, 0)));
	}
	return stress_run_hash(w, &d, &m, 40, substeps);
}

static void test_every_length_both_kernels(void **state)
{
	(void)state;
	int expect = 0, ca, cs;
	for (int n = 2; n <= PT_MAX_POINTS; n++)
		expect += 1 + n * 5 % 17;
	const int subs[] = {1, 2, 16};
	for (size_t k = 0; k < sizeof subs / sizeof subs[0]; k++) {
		uint64_t a = lengths_hash(PT_KERNEL_AUTO, subs[k], &ca);
		uint64_t s = lengths_hash(PT_KERNEL_SCALAR, subs[k], &cs);
		assert_int_equal(ca, expect);
		assert_int_equal(cs, expect);
		print_message(
		    "%d instances, strands of 2 to %d points, %d substeps: scalar %016llx "
		    "auto %016llx\n",
		    ca, PT_MAX_POINTS, subs[k], (unsigned long long)s, (unsigned long long)a);
		assert_true(a == s);
	}
}

/* A 10 m jump in one tick is a teleport: with "keep" the tip's offset from the head
 * changes by less than 5 cm across it (no whip); "reset" puts the strands at rest.
 * Control: with detection off (distance 1000 m) the same jump whips the tips. */
static double teleport_tip_change(pt_teleport_mode mode, float distance, uint32_t *count)
{
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	scenario_twin_tails(&d);
	d.teleport.mode = mode;
	d.teleport.distance = distance;
	pt_motion m = pt_motion_default(PT_MOTION_SHAKE);
	pt_id id = pt_world_create_instance(w, &d, pt_motion_pose(&m, 0));
	for (int t = 1; t <= 20; t++) {
		pt_world_set_head(w, id, pt_motion_pose(&m, t / 60.0));
		pt_world_step(w, 1.0f / 60.0f, 4);
	}
	pt_pose before = pt_motion_pose(&m, 20 / 60.0), after = pt_motion_pose(&m, 21 / 60.0);
	after.p.x += 10.0f;
	pt_vec3 p0[24], p1[24];
	pt_world_read_points(w, id, p0, 24);
	pt_world_set_head(w, id, after);
	pt_world_step(w, 1.0f / 60.0f, 4);
	pt_world_read_points(w, id, p1, 24);
	double max_change = 0;
	for (int s = 0; s < 2; s++) {
		pt_vec3 o0 = q_rotate(q_conj(before.q), v3_sub(p0[s * 12 + 11], before.p));
		pt_vec3 o1 = q_rotate(q_conj(after.q), v3_sub(p1[s * 12 + 11], after.p));
		max_change = fmax(max_change, v3_len(v3_sub(o1, o0)));
	}
	*count = pt_world_teleports(w, id);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
	return max_change;
}

static void test_teleport(void **state)
{
	(void)state;
	uint32_t n_keep, n_reset, n_off;
	double keep = teleport_tip_change(PT_TELEPORT_KEEP, 0.5f, &n_keep);
	double reset = teleport_tip_change(PT_TELEPORT_RESET, 0.5f, &n_reset);
	double off = teleport_tip_change(PT_TELEPORT_KEEP, 1000.0f, &n_off);
	print_message("10 m jump, tip offset change (head frame): keep %.3f m, reset %.3f m, "
		      "undetected %.3f m\n", keep, reset, off);
	assert_int_equal(n_keep, 1);
	assert_int_equal(n_reset, 1);
	assert_int_equal(n_off, 0);
	assert_true(keep < 0.05);
	assert_true(reset < 0.3);
	assert_true(off > 0.2);
}

/* A rotation beyond teleport.angle_deg in one tick also counts. */
static void test_teleport_angle(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	tdef_init(&d);
	pt_id id = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
	pt_pose p = head_at(0, 1.5f, 0);
	p.q = q_axis_angle(pt_v3(0, 1, 0), 1.2f); /* 69 deg > 60 */
	pt_world_set_head(w, id, p);
	pt_world_step(w, 1.0f / 60.0f, 4);
	assert_int_equal(pt_world_teleports(w, id), 1);
	p.q = q_axis_angle(pt_v3(0, 1, 0), 1.9f); /* +40 deg: not a teleport */
	pt_world_set_head(w, id, p);
	pt_world_step(w, 1.0f / 60.0f, 4);
	assert_int_equal(pt_world_teleports(w, id), 1);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* A 90 degree turn inside one tick is interpolated: the root follows an arc, it does
 * not jump, and the strand keeps its lengths. */
static void test_substep_interpolation(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	tdef_init(&d);
	d.teleport.angle_deg = 180.0f;
	pt_id id = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
	pt_pose p = head_at(0, 1.5f, 0);
	p.q = q_axis_angle(pt_v3(0, 1, 0), 1.5707963f);
	pt_world_set_head(w, id, p);
	pt_world_step(w, 1.0f / 60.0f, 8);
	pt_vec3 pts[12];
	pt_world_read_points(w, id, pts, 12);
	pt_vec3 root = v3_add(p.p, q_rotate(p.q, d.strands[0].anchor));
	assert_float_equal(pts[0].x, root.x, 1e-5f);
	assert_float_equal(pts[0].z, root.z, 1e-5f);
	for (int j = 1; j < 12; j++)
		assert_float_equal(v3_len(v3_sub(pts[j], pts[j - 1])), 0.03f, 3e-4f);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* Non-finite or degenerate head poses are ignored; the state never becomes NaN. */
static void test_bad_poses_ignored(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	tdef_init(&d);
	pt_id id = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
	pt_pose bad[4] = {head_at(NAN, 0, 0), head_at(0, INFINITY, 0), head_at(0, 0, 0),
			  head_at(1e30f, 0, 0)};
	bad[2].q.w = 0.0f;
	for (int i = 0; i < 4; i++)
		assert_int_equal(pt_world_set_head(w, id, bad[i]), 0);
	pt_pose unnormalised = head_at(0, 1.5f, 0);
	unnormalised.q.w = 5.0f;
	assert_int_equal(pt_world_set_head(w, id, unnormalised), 1);
	pt_pose got;
	assert_true(pt_world_get_head(w, id, &got));
	assert_float_equal(got.q.w, 1.0f, 1e-6f);
	for (int t = 0; t < 30; t++)
		pt_world_step(w, 1.0f / 60.0f, 4);
	pt_vec3 pts[12];
	pt_world_read_points(w, id, pts, 12);
	for (int j = 0; j < 12; j++)
		assert_true(v3_finite(pts[j]));
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* Changing a parameter keeps the motion; changing the topology resets it. */
static void test_update_instance(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	scenario_twin_tails(&d);
	pt_motion m = pt_motion_default(PT_MOTION_SHAKE);
	pt_id id = pt_world_create_instance(w, &d, pt_motion_pose(&m, 0));
	for (int t = 1; t <= 10; t++) {
		pt_world_set_head(w, id, pt_motion_pose(&m, t / 60.0));
		pt_world_step(w, 1.0f / 60.0f, 4);
	}
	uint64_t h = pt_world_instance_hash(w, id);
	d.verlet.damping = 0.5f;
	d.gravity = pt_v3(0, -5, 0);
	assert_int_equal(pt_world_update_instance(w, id, &d), 1);
	assert_true(pt_world_instance_hash(w, id) == h); /* positions untouched */
	d.strands[1].points = 20;
	assert_int_equal(pt_world_update_instance(w, id, &d), 1);
	assert_true(pt_world_valid(w, id)); /* same id survives a topology change */
	int sc, pps[PT_MAX_STRANDS];
	assert_int_equal(pt_world_shape(w, id, &sc, pps), 32);
	assert_int_equal(pps[1], 20);
	pt_id stale = id;
	stale.generation++;
	assert_int_equal(pt_world_update_instance(w, stale, &d), 0);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* Colliders added or removed by an update (same topology, so the points stay): from
 * then on the instance moves exactly as one created with the new colliders, for both
 * solvers (spring bone at either rate) at 1, 4 and 16 substeps, whether the count grows
 * or shrinks (the instance's body is re-made to size). */
static void colliders_of(pt_instance_def *d, int n)
{
	scenario_head_and_neck(d); /* 2: head sphere, neck capsule */
	d->collider_count = n;
	for (int c = 2; c < n; c++) { /* spheres behind the tails and between their tips */
		memset(&d->colliders[c], 0, sizeof d->colliders[c]);
		d->colliders[c].shape = PT_SHAPE_SPHERE;
		d->colliders[c].attach = PT_ATTACH_HEAD;
		d->colliders[c].center = c < 4 ? pt_v3(c == 2 ? -0.05f : 0.05f, -0.1f, -0.15f)
		                               : pt_v3(0.0f, -0.25f, -0.1f);
		d->colliders[c].radius = c < 4 ? 0.04f : 0.05f;
		d->colliders[c].radius_b = -1.0f;
	}
}

static void test_update_collider_count(void **state)
{
	(void)state;
	const int moves[][2] = {{5, 0}, {0, 5}, {2, 5}, {5, 1}};
	const int subs[] = {1, 4, 16}; /* 16: the whole step scratch at the body's end */
	/* verlet; spring bone at 1/60 s frames (its own scratch use) and at every substep */
	for (int c = 0; c < 3 * 3; c++)
		for (size_t k = 0; k < sizeof moves / sizeof moves[0]; k++) {
			int sv = c % 3, substeps = subs[c / 3];
			pt_world *w = pt_world_create(NULL);
			pt_instance_def from, to;
			scenario_twin_tails(&from);
			scenario_twin_tails(&to);
			from.solver = to.solver = sv ? PT_SOLVER_SPRINGBONE : PT_SOLVER_VERLET;
			from.springbone.rate = to.springbone.rate =
			    sv == 2 ? PT_SPRINGBONE_RATE_SUBSTEP : PT_SPRINGBONE_RATE_FRAME;
			from.prewarm_s = to.prewarm_s = 0; /* rest is then the same for both defs */
			colliders_of(&from, moves[k][0]);
			colliders_of(&to, moves[k][1]);
			pt_motion m = pt_motion_default(PT_MOTION_SHAKE);
			pt_id fresh = pt_world_create_instance(w, &to, pt_motion_pose(&m, 0));
			pt_id updated = pt_world_create_instance(w, &from, pt_motion_pose(&m, 0));
			pt_id kept = pt_world_create_instance(w, &from, pt_motion_pose(&m, 0));
			assert_int_equal(pt_world_update_instance(w, updated, &to), 1);
			for (int t = 1; t <= 60; t++) {
				pt_id ids[3] = {fresh, updated, kept};
				for (int i = 0; i < 3; i++)
					pt_world_set_head(w, ids[i], pt_motion_pose(&m, t / 60.0));
				pt_world_step(w, 1.0f / 60.0f, substeps);
			}
			uint64_t hf = pt_world_instance_hash(w, fresh);
			assert_true(pt_world_instance_hash(w, updated) == hf);
			/* the colliders matter: one that kept the old ones moved otherwise */
			assert_true(pt_world_instance_hash(w, kept) != hf);
			pt_world_destroy(w);
			pt_instance_def_fini(&from);
			pt_instance_def_fini(&to);
		}
}

static void test_reset_and_read_capacity(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL);
	pt_instance_def d;
	tdef_init(&d);
	pt_id id = pt_world_create_instance(w, &d, head_at(0, 1.5f, 0));
	uint64_t settled = pt_world_instance_hash(w, id);
	pt_motion m = pt_motion_default(PT_MOTION_NOD);
	for (int t = 1; t <= 10; t++) {
		pt_world_set_head(w, id, pt_motion_pose(&m, t / 60.0));
		pt_world_step(w, 1.0f / 60.0f, 4);
	}
	assert_true(pt_world_instance_hash(w, id) != settled);
	pt_world_set_head(w, id, head_at(0, 1.5f, 0));
	pt_world_step(w, 1.0f / 60.0f, 4);
	assert_int_equal(pt_world_reset_instance(w, id), 1);
	assert_true(pt_world_instance_hash(w, id) == settled); /* rest + prewarm is a function of the head */
	pt_vec3 small[4];
	assert_int_equal(pt_world_read_points(w, id, small, 4), 12); /* needs 12, copied nothing */
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
}

/* Built-in motions: the stress sequence reaches its amplitudes. */
static void test_motions(void **state)
{
	(void)state;
	pt_motion m = pt_motion_default(PT_MOTION_STRESS);
	double max_yaw = 0, max_pitch = 0, max_acc = 0;
	double dt = 1e-3, y0 = 0, y1 = 0;
	for (double t = 0; t < pt_motion_stress_end() + 0.5; t += dt) {
		pt_pose p = pt_motion_pose(&m, t);
		pt_vec3 fwd = q_rotate(p.q, pt_v3(0, 0, 1));
		double yaw = fabs(atan2(fwd.x, fwd.z)) * 57.29577951308232;
		double pitch = fabs(asin(fwd.y)) * 57.29577951308232;
		max_yaw = fmax(max_yaw, yaw);
		max_pitch = fmax(max_pitch, pitch);
		if (t > 2 * dt)
			max_acc = fmax(max_acc, fabs(p.p.y - 2 * y1 + y0) / (dt * dt));
		y0 = y1, y1 = p.p.y;
	}
	assert_float_equal(max_yaw, 45.0, 0.1);
	assert_float_equal(max_pitch, 30.0, 0.1);
	assert_true(max_acc >= 2.0 * 9.81);
	assert_int_equal(pt_motion_from_name("nod"), PT_MOTION_NOD);
	assert_int_equal(pt_motion_from_name("wobble"), -1);
	assert_string_equal(pt_motion_name(PT_MOTION_CIRCLE), "circle");
	pt_pose still = pt_motion_pose(&m, 100.0);
	assert_float_equal(still.p.y, 1.5f, 1e-6f);
}

/* The jog of motion.h: 6 cm bob at 2.8 steps/s, 1.5 cm sway at 1.4 Hz, 7 whole strides in
 * the default 5 s, continuous at start and stop, then still. */
static void test_jog(void **state)
{
	(void)state;
	pt_motion m = pt_motion_default(PT_MOTION_JOG);
	assert_int_equal(pt_motion_from_name("jog"), PT_MOTION_JOG);
	assert_string_equal(pt_motion_name(PT_MOTION_JOG), "jog");
	assert_float_equal(pt_motion_jog_end(&m), 5.0, 1e-9); /* 7 strides of 1/1.4 s */
	m.period = 5.3f;
	assert_float_equal(pt_motion_jog_end(&m), 5.0, 1e-9); /* rounded to whole strides */
	m.period = 0.1f;
	assert_float_equal(pt_motion_jog_end(&m), 1 / 1.4, 1e-9); /* at least one */
	m = pt_motion_default(PT_MOTION_JOG);
	double dt = 1e-3, ymin = 0, ymax = -1, xmin = 0, xmax = 0, acc = 0, y0 = 1.5, y1 = 1.5;
	int steps = 0, moving_after = 0;
	for (double t = 0; t < 7; t += dt) {
		pt_pose p = pt_motion_pose(&m, t);
		double y = p.p.y - 1.5, x = p.p.x;
		assert_true(p.p.z == 0 && p.q.w == 1);
		if (t >= 5.0 + dt)
			moving_after |= x != 0 || y != 0;
		ymin = fmin(ymin, y), ymax = fmax(ymax, y), xmin = fmin(xmin, x), xmax = fmax(xmax, x);
		if (t > 2 * dt) {
			acc = fmax(acc, fabs(p.p.y - 2 * y1 + y0) / (dt * dt));
			steps += y1 - 1.5 >= -0.03 && y < -0.03; /* one downward crossing per step */
		}
		y0 = y1, y1 = p.p.y;
	}
	assert_false(moving_after);
	assert_float_equal(ymax, 0, 1e-6);
	assert_float_equal(ymin, -0.06, 1e-5);
	assert_float_equal(xmax, 0.015, 1e-5);
	assert_float_equal(xmin, -0.015, 1e-5);
	assert_int_equal(steps, 14); /* 2.8 steps/s for 5 s */
	assert_float_equal(acc, 0.03 * pow(2 * 3.14159265358979 * 2.8, 2), 0.3); /* 9.3 m/s^2 */
	/* No jump in position at the start or the stop. */
	pt_pose a = pt_motion_pose(&m, 1e-6), b = pt_motion_pose(&m, 5.0 - 1e-6);
	assert_float_equal(a.p.y, 1.5, 1e-5);
	assert_float_equal(b.p.y, 1.5, 1e-5);
	assert_float_equal(b.p.x, 0, 1e-5);
	assert_float_equal(pt_motion_amplitude_max(PT_MOTION_JOG), 0.2, 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ids_are_generation_checked),
	    cmocka_unit_test(test_compaction_keeps_state),
	    cmocka_unit_test(test_determinism),
	    cmocka_unit_test(test_every_length_both_kernels),
	    cmocka_unit_test(test_teleport),
	    cmocka_unit_test(test_teleport_angle),
	    cmocka_unit_test(test_substep_interpolation),
	    cmocka_unit_test(test_bad_poses_ignored),
	    cmocka_unit_test(test_update_instance),
	    cmocka_unit_test(test_update_collider_count),
	    cmocka_unit_test(test_reset_and_read_capacity),
	    cmocka_unit_test(test_motions),
	    cmocka_unit_test(test_jog),
	};
	return cmocka_run_group_tests_name("world", tests, NULL, NULL);
}
