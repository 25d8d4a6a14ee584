/* Chains on body bones (issue 38 item 1) at 1 to 16 substeps per 1/60 s tick, with the
 * tails kept at rest length and as three-vrm keeps them: the steady state is the closed
 * form of test_sb_substeps.c's chain, turned by the bone's frame.
 *
 * A strand on a bone lives in that bone's frame, pose x rest^-1 (world.h): its root is
 * frame x anchor and its rest direction frame.q x direction. Gravity stays world -Y. So a
 * straight chain on a posed forearm settles with every segment along
 * normalize(stiffness x parent segment direction + gravity_power x (0, -1, 0)), the first
 * parent being the turned rest direction, and every segment keeps its rest length. The
 * bone's pose is far from the head's (another place, another turn), so a chain that
 * followed the head, or the bone's pose without its rest, would miss by centimetres.
 *
 * Found here, and left as it is (core/README.md "Known limits"): with the tails kept at
 * rest length and 6 or more substeps, a chain in a general orientation does not come to
 * a standstill: it keeps moving by 3-70 um a tick about its steady state (on a bone or
 * on the head alike), up to 0.2 deg from the closed form. With three-vrm's length, and at
 * 1 to 4 substeps with either, it rests exactly. The test holds those cases to the
 * closed form and to rest, and the others to 0.25 deg. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <float.h>
#include <stdio.h>
#include <string.h>

#include "sb_scenario.h"

#define DEG (180.0 / 3.14159265358979323846)

static pt_quat axis_angle(double x, double y, double z, double deg)
{
	double n = sqrt(x * x + y * y + z * z), a = deg / DEG, s = sin(a / 2) / n;
	return (pt_quat){(float)(x * s), (float)(y * s), (float)(z * s), (float)cos(a / 2)};
}

/* v turned by q, in doubles. */
static void qrot(pt_quat q, const double v[3], double out[3])
{
	double x = q.x, y = q.y, z = q.z, w = q.w;
	double tx = 2 * (y * v[2] - z * v[1]), ty = 2 * (z * v[0] - x * v[2]),
	       tz = 2 * (x * v[1] - y * v[0]);
	out[0] = v[0] + w * tx + (y * tz - z * ty);
	out[1] = v[1] + w * ty + (z * tx - x * tz);
	out[2] = v[2] + w * tz + (x * ty - y * tx);
}

/* a x conj(b) */
static pt_quat qdiv(pt_quat a, pt_quat b)
{
	pt_quat c = {-b.x, -b.y, -b.z, b.w};
	return (pt_quat){a.w * c.x + a.x * c.w + a.y * c.z - a.z * c.y,
	                 a.w * c.y - a.x * c.z + a.y * c.w + a.z * c.x,
	                 a.w * c.z + a.x * c.y - a.y * c.x + a.z * c.w,
	                 a.w * c.w - a.x * c.x - a.y * c.y - a.z * c.z};
}

enum { POINTS = 6 };
static const float SEG = 0.05f, STIFF = 0.5f, GRAV = 1.0f;

static void test_chain_on_a_posed_bone_closed_form(void **state)
{
	(void)state;
	static const int subs[] = {1, 2, 3, 4, 6, 8, 12, 16};
	/* the forearm's rest (head-local) and its pose: 0.6 m away, turned 35 deg about a
	 * tilted axis (the head stays at the origin, unturned) */
	const pt_quat rest_q = axis_angle(0, 0, 1, 80), pose_q = axis_angle(0.3, 1, 0.2, 35);
	const pt_vec3 rest_p = pt_v3(0.44f, -0.22f, 0.0f), pose_p = pt_v3(0.3f, -0.45f, 0.35f);
	const pt_quat turn = qdiv(pose_q, rest_q); /* the frame's rotation, pose x rest^-1 */
	const double dir[3] = {0.0, 0.0, 1.0};     /* the strand's rest direction, head-local */
	for (int c = 0; c < 2 * (int)(sizeof subs / sizeof subs[0]); c++) {
		int n = subs[c / 2];
		pt_instance_def d;
		pt_joint_def j = pt_joint_def_default();
		j.stiffness = STIFF;
		j.drag_force = 0.3f;
		j.gravity_power = GRAV;
		sb_def_strand(&d, pt_v3(0.46f, -0.25f, 0.0f), pt_v3(0, 0, 1), POINTS, SEG, j, n);
		d.springbone.length = c % 2 ? PT_SPRINGBONE_LENGTH_THREEVRM : PT_SPRINGBONE_LENGTH_REST;
		d.springbone.center_head = 0;
		d.bone_count = 1;
		d.bones[0].bone = PT_BONE_LEFT_LOWER_ARM;
		d.bones[0].position = rest_p;
		d.bones[0].rotation = rest_q;
		d.strands[0].bone = PT_BONE_LEFT_LOWER_ARM;
		pt_error e = pt_instance_validate(&d);
		assert_true(e.ok);

		pt_world *w = pt_world_create(NULL);
		pt_pose head = {pt_v3(0, 0, 0), pt_quat_identity()};
		pt_id id = pt_world_create_instance(w, &d, head);
		assert_int_equal(pt_world_set_bone_pose(w, id, PT_BONE_LEFT_LOWER_ARM,
		                                        (pt_pose){pose_p, pose_q}),
		                 1);
		for (int k = 0; k < 1800; k++)
			pt_world_step(w, 1.0f / 60.0f, 1);
		pt_vec3 p[POINTS], later[POINTS];
		assert_int_equal(pt_world_read_points(w, id, p, POINTS), POINTS);
		for (int k = 0; k < 60; k++)
			pt_world_step(w, 1.0f / 60.0f, 1);
		assert_int_equal(pt_world_read_points(w, id, later, POINTS), POINTS);
		double moved = 0.0;
		for (int i = 0; i < POINTS; i++)
			moved = fmax(moved, sb_dist(p[i], later[i]));
		pt_world_destroy(w);

		/* the root: frame x anchor = pose_p + turn x (anchor - rest_p) */
		double a[3] = {0.46 - rest_p.x, -0.25 - rest_p.y, 0.0}, ra[3];
		qrot(turn, a, ra);
		double root_err = sqrt(pow(p[0].x - (pose_p.x + ra[0]), 2) +
		                       pow(p[0].y - (pose_p.y + ra[1]), 2) +
		                       pow(p[0].z - (pose_p.z + ra[2]), 2));
		/* the segments: the closed form from the turned rest direction; tolerance as
		 * test_sb_substeps.c's chain (a tail rests anywhere within ulp / (2 r) of its
		 * exact place, r the restoring gain per substep), coordinates up to 0.7 m here */
		double h = 1.0 / (60.0 * n), f = 1.0 / n;
		double gain = n == 1 ? 1.0 : (1.0 - pow(0.7, f)) / 0.3;
		double r = 1.1 * h * gain / SEG;
		double tol = 1e-3 + 2.0 * (0.7 * FLT_EPSILON / (2.0 * r) / SEG) * DEG;
		double e0[3], worst = 0.0, len_err = 0.0;
		qrot(turn, dir, e0);
		for (int i = 0; i < POINTS - 1; i++) {
			double cx = STIFF * e0[0], cy = STIFF * e0[1] - GRAV, cz = STIFF * e0[2];
			double l = sqrt(cx * cx + cy * cy + cz * cz);
			e0[0] = cx / l, e0[1] = cy / l, e0[2] = cz / l;
			pt_vec3 s = sb_sub(p[i + 1], p[i]);
			worst = fmax(worst,
			             sb_angle(s, pt_v3((float)e0[0], (float)e0[1], (float)e0[2])) * DEG);
			len_err = fmax(len_err, fabs(sb_dist(p[i + 1], p[i]) - SEG));
		}
		int rests = c % 2 || n <= 4; /* the limit above */
		printf("# %2d substeps, length %-9s: root %.2g m off, segments %.2g deg from the "
		       "closed form (tolerance %.2g), lengths %.2g m off, %.2g m moved in a "
		       "second\n",
		       n, c % 2 ? "three-vrm" : "rest", root_err, worst, rests ? tol : 0.25,
		       len_err, moved);
		assert_true(root_err < 1e-6);
		assert_true(worst < (rests ? tol : 0.25));
		assert_true(len_err < 2e-6);
		if (rests)
			assert_true(moved < 1e-6);
		pt_instance_def_fini(&d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_chain_on_a_posed_bone_closed_form),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
