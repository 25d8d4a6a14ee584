/* The spring-bone wide path (core/src/springbone_lanes.h) against the per-chain path.
 *
 * The lane kernel is pt_sb_step_chain's arithmetic in the same order, so the claim is
 * exact: one scene stepped three ways, in lanes on AVX2 (where the CPU has it), in lanes
 * on the plain-C emulation, and chain by chain, gives the same bits after every tick. The
 * scene mixes what a batch has to keep apart per lane: both forms, center = head on and
 * off, curved chains with uneven segments, chains of 4, 8 and 12 joints, per-joint
 * parameters, cone and hinge limits (with and without a rest shape), sphere + tapered
 * capsule + plane colliders with per-strand masks, frame and substep rates at ticks of
 * 1/60, 1/30 and 1/90 s and one of 0.3 s (18 frames: stepped per chain), a parameter
 * update mid-run, a teleport, and an instance the wide path does not take (an
 * ellipsoid collider) stepping beside them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "springbone_lanes.h"
#include "world_internal.h"
#include "sb_scenario.h"

enum { VARIANTS = 8, TICKS = 240 };

/* Chain s of variant v: 4, 8 or 12 joints, curved with uneven segments on odd strands. */
static void chain(pt_strand_def *sd, int v, int s)
{
	static const int joints[4] = {12, 4, 8, 12};
	pt_strand_def_reset(sd);
	int n = joints[s];
	sd->points = n + 1;
	float x = -0.06f + 0.04f * (float)s;
	sd->anchor = pt_v3(x, 0.04f, -0.1f);
	sd->direction = pt_v3(x, -1.0f, -0.3f - 0.1f * (float)v);
	sd->segment_length = 0.02f + 0.004f * (float)s;
	static const int head_only[1] = {0}, three[3] = {0, 1, 2};
	if (s == 1) /* strand 1: the head sphere only */
		pt_strand_set_colliders(sd, head_only, 1);
	else
		pt_strand_set_colliders(sd, three, 3);
	for (int j = 0; j < n; j++) {
		pt_joint_def *jd = &sd->joints[j];
		*jd = pt_joint_def_default();
		jd->stiffness = v & 1 ? 0.05f + 0.02f * (float)(j % 3) : 0.5f + 0.25f * (float)(j % 4);
		jd->drag_force = 0.2f + 0.05f * (float)(j % 5);
		jd->gravity_power = 0.2f + 0.1f * (float)(s % 2);
		jd->gravity_dir = pt_v3(0.1f * (float)(j % 2), -1.0f, 0.0f);
		jd->hit_radius = 0.005f + 0.002f * (float)(j % 3);
	}
	/* limits: strand 2 cone / hinge alternating, strand 3 (curved) hinges on variants 4+ */
	for (int j = 0; j < n; j++) {
		pt_joint_def *jd = &sd->joints[j];
		if (s == 2 || (s == 3 && v >= 4 && j % 3 == 1)) {
			jd->limit = (j + v) % 2 ? PT_LIMIT_CONE : PT_LIMIT_HINGE;
			jd->limit_angle = 0.3f + 0.1f * (float)(j % 4);
			jd->limit_axis = pt_v3(1.0f, 0.1f * (float)(v % 3), 0.0f);
		}
	}
	if (s % 2) {
		sd->has_rest = 1;
		pt_vec3 p = sd->anchor;
		for (int j = 0; j < n; j++) {
			float a = 0.2f + 0.12f * (float)j, len = 0.018f + 0.006f * (float)((j * 7) % 4);
			p = pt_v3(p.x + 0.002f * (float)(j % 2), p.y - len * cosf(a), p.z - len * sinf(a));
			sd->joints[j].rest = p;
		}
	}
}

/* Variant v: bit 0 pull form, bit 1 center = head, bit 2 substep rate (3 substeps). */
static void scene(pt_instance_def *d, int v, int colliders)
{
	tdef_init(d);
	d->solver = PT_SOLVER_SPRINGBONE;
	d->prewarm_s = 0.0f;
	d->springbone.form = v & 1 ? PT_SPRINGBONE_PULL : PT_SPRINGBONE_VRM;
	d->springbone.center_head = (v >> 1) & 1;
	d->springbone.rate = v & 4 ? PT_SPRINGBONE_RATE_SUBSTEP : PT_SPRINGBONE_RATE_FRAME;
	d->substeps = v & 4 ? 3 : 1;
	tdef_strands(d, 4);
	for (int s = 0; s < 4; s++)
		chain(&d->strands[s], v, s);
	if (colliders) {
		scenario_head_and_neck(d);
		d->colliders[1].radius_b = 0.03f; /* tapered */
		pt_collider_def *pl = &d->colliders[2];
		memset(pl, 0, sizeof *pl);
		pl->shape = PT_SHAPE_PLANE;
		pl->attach = PT_ATTACH_HEAD;
		pl->center = pt_v3(0, -0.05f, -0.14f); /* the back: tails swing into it */
		pl->normal = pt_v3(0, 0, -1.0f);
		pl->radius_b = -1.0f;
		d->collider_count = 3;
	} else {
		for (int s = 0; s < 4; s++)
			pt_strand_set_colliders(&d->strands[s], NULL, 0);
	}
}

static void set_heads(pt_world *w, const pt_motion *m, int tick, double t)
{
	for (int i = 0; i < pt_world_count(w); i++) {
		pt_pose h = pt_motion_pose(m, t + 0.07 * i);
		h.p.x += 0.6f * (float)i;
		if (tick >= TICKS / 2)
			h.p.z += 20.0f; /* one teleport (keep mode) half-way */
		pt_world_set_head(w, pt_world_id_at(w, i), h);
	}
}

typedef struct run {
	pt_world *w;
	uint64_t hash[TICKS];
} run;

/* kernel: PT_KERNEL_AUTO or SCALAR; lanes 0 forces every instance onto the per-chain
 * path; colliders 0 drops them (the control that they act). */
static void run_scene(run *r, pt_kernel kernel, int lanes, int colliders)
{
	pt_world_def wd = pt_world_def_default();
	wd.kernel = kernel;
	r->w = pt_world_create(&wd);
	pt_motion m = pt_motion_default(PT_MOTION_STRESS);
	for (int v = 0; v < VARIANTS; v++) {
		pt_instance_def d;
		scene(&d, v, colliders);
		assert_false(pt_id_is_null(pt_world_create_instance(r->w, &d, pt_motion_pose(&m, 0))));
		pt_instance_def_fini(&d);
	}
	/* beside them, one the wide path does not take */
	pt_instance_def ell;
	scene(&ell, 0, 1);
	ell.colliders[2].shape = PT_SHAPE_ELLIPSOID;
	ell.colliders[2].radii = pt_v3(0.1f, 0.12f, 0.1f);
	assert_false(pt_id_is_null(pt_world_create_instance(r->w, &ell, pt_motion_pose(&m, 0))));
	int n = pt_world_count(r->w);
	for (int i = 0; i < n; i++) {
		pt_sb_data *sd = r->w->inst[i].solver_data;
		assert_int_equal(sd->lanes_ok, i < VARIANTS);
		assert_int_equal(sd->uniform[0], 0); /* per-joint terms: every joint's row */
		sd->lanes_off = !lanes;
	}
	static const float dts[3] = {1.0f / 60.0f, 1.0f / 30.0f, 1.0f / 90.0f};
	double t = 0.0;
	for (int k = 0; k < TICKS; k++) {
		/* one long tick: 18 frames, more than the wide path batches (per chain) */
		float dt = k == 50 ? 0.3f : dts[(k / 7) % 3];
		if (k == 80) {
			/* new parameters, same topology: the lane blocks are refilled */
			pt_instance_def d;
			scene(&d, 5, colliders);
			for (int j = 0; j < 12; j++)
				d.strands[0].joints[j].drag_force = 0.7f, d.strands[0].joints[j].stiffness = 0.2f;
			assert_int_equal(pt_world_update_instance(r->w, pt_world_id_at(r->w, 5), &d), 1);
			assert_int_equal(((pt_sb_data *)r->w->inst[5].solver_data)->lanes_ok, 1);
			((pt_sb_data *)r->w->inst[5].solver_data)->lanes_off = !lanes;
			pt_instance_def_fini(&d);
		}
		t += dt;
		set_heads(r->w, &m, k, t);
		pt_world_step(r->w, dt, 1);
		r->hash[k] = pt_world_hash(r->w);
	}
	pt_instance_def_fini(&ell);
}

static void test_lanes_match_per_chain_path(void **state)
{
	(void)state;
	static run avx, emu, chain_path, bare;
	run_scene(&avx, PT_KERNEL_AUTO, 1, 1);
	run_scene(&emu, PT_KERNEL_SCALAR, 1, 1);
	run_scene(&chain_path, PT_KERNEL_AUTO, 0, 1);
	run_scene(&bare, PT_KERNEL_AUTO, 1, 0);
	print_message("lanes on %s, lanes on the emulation, per chain: %016llx %016llx %016llx\n",
	              pt_world_kernel(avx.w) == PT_KERNEL_AVX2 ? "AVX2" : "the scalar kernel",
	              (unsigned long long)avx.hash[TICKS - 1],
	              (unsigned long long)emu.hash[TICKS - 1],
	              (unsigned long long)chain_path.hash[TICKS - 1]);
	for (int k = 0; k < TICKS; k++) {
		if (avx.hash[k] != chain_path.hash[k] || emu.hash[k] != chain_path.hash[k])
			fail_msg("tick %d: lanes (AVX2 %016llx, emulation %016llx) != per chain %016llx",
			         k, (unsigned long long)avx.hash[k], (unsigned long long)emu.hash[k],
			         (unsigned long long)chain_path.hash[k]);
	}
	/* The scene is not trivially equal: colliders and teleport change the state, and the
	 * chains moved far from rest. */
	assert_true(bare.hash[TICKS - 1] != avx.hash[TICKS - 1]);
	int diff_before_teleport = 0;
	for (int k = 0; k < TICKS / 2; k++)
		diff_before_teleport += bare.hash[k] != avx.hash[k];
	assert_true(diff_before_teleport > TICKS / 4);
	pt_vec3 p[4 * 13];
	for (int i = 0; i < VARIANTS; i++) {
		int np = pt_world_read_points(avx.w, pt_world_id_at(avx.w, i), p, 4 * 13);
		assert_int_equal(np, 13 + 5 + 9 + 13);
		for (int j = 0; j < np; j++)
			assert_true(v3_finite(p[j]));
	}
	pt_world_destroy(avx.w), pt_world_destroy(emu.w);
	pt_world_destroy(chain_path.w), pt_world_destroy(bare.w);
}

/* A batch fills at sixteen chains and leftovers run on flush: 21 identical instances
 * (84 chains of three joint counts) must each end exactly as one stepped alone per
 * chain, whichever lane and batch its chains landed in. */
static void test_every_lane_position_alike(void **state)
{
	(void)state;
	pt_world *w = pt_world_create(NULL), *one = pt_world_create(NULL);
	pt_motion m = pt_motion_default(PT_MOTION_SHAKE);
	pt_instance_def d;
	scene(&d, 2, 1);
	enum { N = 21 };
	for (int i = 0; i < N; i++)
		pt_world_create_instance(w, &d, pt_motion_pose(&m, 0));
	pt_world_create_instance(one, &d, pt_motion_pose(&m, 0));
	((pt_sb_data *)one->inst[0].solver_data)->lanes_off = 1;
	for (int k = 1; k <= 90; k++) {
		pt_pose h = pt_motion_pose(&m, k / 60.0);
		for (int i = 0; i < N; i++)
			pt_world_set_head(w, pt_world_id_at(w, i), h);
		pt_world_set_head(one, pt_world_id_at(one, 0), h);
		pt_world_step(w, 1.0f / 60.0f, 1), pt_world_step(one, 1.0f / 60.0f, 1);
	}
	uint64_t want = pt_world_instance_hash(one, pt_world_id_at(one, 0));
	for (int i = 0; i < N; i++)
		assert_true(pt_world_instance_hash(w, pt_world_id_at(w, i)) == want);
	pt_world_destroy(w), pt_world_destroy(one);
	pt_instance_def_fini(&d);
}

/* Chains whose terms are the same at every joint (the bench's avatar) take a batch's
 * shortcut of one value per lane: still the per-chain path's bits, for both forms and
 * center on and off, 20 chains per kind (a full batch and a partial one). */
static void test_uniform_chains_alike(void **state)
{
	(void)state;
	pt_world *w[2] = {pt_world_create(NULL), pt_world_create(NULL)};
	pt_motion m = pt_motion_default(PT_MOTION_STRESS);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 20; i++) {
			pt_instance_def d;
			sb_def_avatar(&d, 4 + 4 * (i % 2));
			d.springbone.center_head = i % 4 < 2;
			d.springbone.form = i % 8 < 4 ? PT_SPRINGBONE_VRM : PT_SPRINGBONE_PULL;
			if (d.springbone.form == PT_SPRINGBONE_PULL)
				for (int s = 0; s < d.strand_count; s++)
					for (int j = 0; j < 8; j++)
						d.strands[s].joints[j].stiffness = 0.1f;
			pt_world_create_instance(w[k], &d, pt_motion_pose(&m, 0));
			pt_sb_data *sd = w[k]->inst[i].solver_data;
			sd->lanes_off = k == 1;
			pt_instance_def_fini(&d);
		}
	for (int t = 1; t <= 120; t++) {
		for (int k = 0; k < 2; k++)
			for (int i = 0; i < 20; i++) {
				pt_pose h = pt_motion_pose(&m, t / 60.0 + 0.05 * i);
				pt_world_set_head(w[k], pt_world_id_at(w[k], i), h);
			}
		pt_world_step(w[0], 1.0f / 60.0f, 1), pt_world_step(w[1], 1.0f / 60.0f, 1);
		if (t == 1)
			for (int i = 0; i < 20; i++)
				assert_int_equal(((pt_sb_data *)w[0]->inst[i].solver_data)->uniform[0], 1);
		assert_true(pt_world_hash(w[0]) == pt_world_hash(w[1]));
	}
	pt_world_destroy(w[0]), pt_world_destroy(w[1]);
}

/* Collider order (issue 38 item 7): a tail is pushed out of its strand's colliders in
 * the order the strand lists them. One joint of length 1 from the origin along +x, no
 * stiffness, gravity or inertia (drag 1), hit radius 0, so one step keeps the tail at
 * (1, 0, 0) and only the colliders move it, each push followed by the length step (the
 * tail back at distance 1 from the root, along the pushed direction). Two planes that
 * both hold (1, 0, 0): A (index 0) solid below y = 0.1, B (index 1) solid beyond
 * x = 0.9.
 *   [0, 1]: A lifts it to (1, 0.1), length: (1, 0.1) / sqrt(1.01), still beyond
 *           x = 0.9; B moves it to (0.9, y1 = 0.1 / sqrt(1.01)); length: that over
 *           sqrt(0.81 + y1^2) (0.99394, 0.10989).
 *   [1, 0]: B moves it to (0.9, 0), length: back to (1, 0); A lifts it to (1, 0.1);
 *           length: (1, 0.1) / sqrt(1.01) (0.99504, 0.09950).
 * Both orders in one world step in neighbouring lanes of one batch; chain by chain
 * gives the same bits, then and over a second of a moving head. */
static void order_def(pt_instance_def *d, const int *order)
{
	sb_def_strand(d, pt_v3(0, 0, 0), pt_v3(1, 0, 0), 2, 1.0f, pt_joint_def_default(), 1);
	pt_joint_def *j = &d->strands[0].joints[0];
	j->stiffness = 0.0f, j->gravity_power = 0.0f, j->drag_force = 1.0f, j->hit_radius = 0.0f;
	d->collider_count = 2;
	for (int k = 0; k < 2; k++) {
		pt_collider_def *c = &d->colliders[k];
		memset(c, 0, sizeof *c);
		c->shape = PT_SHAPE_PLANE, c->attach = PT_ATTACH_HEAD, c->radius_b = -1.0f;
	}
	d->colliders[0].center = pt_v3(0, 0.1f, 0), d->colliders[0].normal = pt_v3(0, 1, 0);
	d->colliders[1].center = pt_v3(0.9f, 0, 0), d->colliders[1].normal = pt_v3(-1, 0, 0);
	assert_true(pt_strand_set_colliders(&d->strands[0], order, 2));
	assert_true(pt_instance_validate(d).ok);
}

static void test_collider_order(void **state)
{
	(void)state;
	static const int orders[2][2] = {{0, 1}, {1, 0}};
	const double y1 = 0.1 / sqrt(1.01), l1 = sqrt(0.81 + y1 * y1);
	const double want[2][2] = {{0.9 / l1, y1 / l1}, {1.0 / sqrt(1.01), 0.1 / sqrt(1.01)}};
	pt_world *w[2] = {pt_world_create(NULL), pt_world_create(NULL)};
	pt_pose still = {{0, 0, 0}, {0, 0, 0, 1}};
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 2; i++) {
			pt_instance_def d;
			order_def(&d, orders[i]);
			pt_world_create_instance(w[k], &d, still);
			((pt_sb_data *)w[k]->inst[i].solver_data)->lanes_off = k == 1;
			assert_int_equal(((pt_sb_data *)w[k]->inst[i].solver_data)->lanes_ok, 1);
			pt_instance_def_fini(&d);
		}
	pt_world_step(w[0], 1.0f / 60.0f, 1), pt_world_step(w[1], 1.0f / 60.0f, 1);
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < 2; i++) {
			pt_vec3 p[2];
			pt_id id = pt_world_id_at(w[k], i);
			assert_int_equal(pt_world_read_points(w[k], id, p, 2), 2);
			print_message("%s, order [%d, %d]: tail (%.6f, %.6f, %.6f)\n",
			              k ? "per chain" : "lanes", orders[i][0], orders[i][1], p[1].x,
			              p[1].y, p[1].z);
			assert_true(fabs(p[1].x - want[i][0]) < 1e-6);
			assert_true(fabs(p[1].y - want[i][1]) < 1e-6);
			assert_true(fabs(p[1].z) < 1e-6);
		}
	pt_motion m = pt_motion_default(PT_MOTION_STRESS);
	for (int t = 1; t <= 60; t++) {
		assert_true(pt_world_hash(w[0]) == pt_world_hash(w[1]));
		pt_pose h = pt_motion_pose(&m, t / 60.0);
		for (int k = 0; k < 2; k++)
			for (int i = 0; i < 2; i++)
				pt_world_set_head(w[k], pt_world_id_at(w[k], i), h);
		pt_world_step(w[0], 1.0f / 60.0f, 1), pt_world_step(w[1], 1.0f / 60.0f, 1);
	}
	assert_true(pt_world_hash(w[0]) == pt_world_hash(w[1]));
	pt_world_destroy(w[0]), pt_world_destroy(w[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lanes_match_per_chain_path),
	    cmocka_unit_test(test_every_lane_position_alike),
	    cmocka_unit_test(test_uniform_chains_alike),
	    cmocka_unit_test(test_collider_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
