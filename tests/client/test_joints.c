/* ptc_joint_rotations: the rotations put the rest chain back on the frame's points
 * (forward kinematics written here, on the float rotations the function returns), on
 * curved and uneven chains under a turned parent; a hand-worked case; half turns; the
 * degenerate inputs. The JS twin is tests/proto/js/joints.test.mjs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "ponytail_client.h"

enum { N = 8 };

static void mul(const double a[4], const double b[4], double o[4])
{
	double r[4] = {a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
	               a[3] * b[1] + a[1] * b[3] + a[2] * b[0] - a[0] * b[2],
	               a[3] * b[2] + a[2] * b[3] + a[0] * b[1] - a[1] * b[0],
	               a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};
	memcpy(o, r, sizeof r);
}

/* q v q^-1 as two products (a different formula from the library's) */
static void rot(const double q[4], const double v[3], double o[3])
{
	double p[4] = {v[0], v[1], v[2], 0}, c[4] = {-q[0], -q[1], -q[2], q[3]}, t[4];
	mul(q, p, t);
	mul(t, c, t);
	memcpy(o, t, 3 * sizeof(double));
}

static void axis_angle(double x, double y, double z, double a, double q[4])
{
	double n = sqrt(x * x + y * y + z * z);
	q[0] = x / n * sin(a / 2), q[1] = y / n * sin(a / 2), q[2] = z / n * sin(a / 2);
	q[3] = cos(a / 2);
}

/* p[0] = root, p[i+1] = p[i] + W_i (rest[i+1] - rest[i]), W_i = parent * q_0 ... q_i */
static void pose(const float *rest, const float *root, const double parent[4], const float *qs,
                 int n, double *out)
{
	double w[4];
	memcpy(w, parent, sizeof w);
	for (int k = 0; k < 3; k++)
		out[k] = root[k];
	for (int i = 0; i + 1 < n; i++) {
		double q[4] = {qs[4 * i], qs[4 * i + 1], qs[4 * i + 2], qs[4 * i + 3]}, d[3], e[3];
		mul(w, q, w);
		for (int k = 0; k < 3; k++)
			d[k] = (double)rest[3 * i + 3 + k] - rest[3 * i + k];
		rot(w, d, e);
		for (int k = 0; k < 3; k++)
			out[3 * i + 3 + k] = out[3 * i + k] + e[k];
	}
}

static double worst(const double *a, const float *b, int n)
{
	double m = 0;
	for (int i = 0; i < n; i++) {
		double d = hypot(hypot(a[3 * i] - b[3 * i], a[3 * i + 1] - b[3 * i + 1]),
		                 a[3 * i + 2] - b[3 * i + 2]);
		m = d > m ? d : m;
	}
	return m;
}

/* A rest chain bent in two planes, segments of 1.5 to 6 cm. */
static void rest_chain(float *rest)
{
	static const double len[N - 1] = {0.03, 0.055, 0.015, 0.04, 0.06, 0.025, 0.035};
	rest[0] = 0.02f, rest[1] = 0.08f, rest[2] = -0.09f;
	for (int i = 0; i < N - 1; i++) {
		double a = 0.25 * i, d[3] = {0.6 * sin(a), -cos(a), 0.8 * sin(a)};
		double n = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
		for (int k = 0; k < 3; k++)
			rest[3 * i + 3 + k] = (float)(rest[3 * i + k] + len[i] * d[k] / n);
	}
}

static void test_round_trip(void **state)
{
	float rest[3 * N], pts[3 * N], qs[4 * N], root[3] = {0.4f, 1.6f, 0.1f}, pq[4];
	double parent[4], back[3 * N];
	(void)state;
	rest_chain(rest);
	axis_angle(0.3, 1, -0.2, 1.1, parent);
	for (int k = 0; k < 4; k++)
		pq[k] = (float)parent[k];
	for (int seed = 0; seed < 20; seed++) {
		/* a frame: every bone turned its own way, twist included, lengths kept */
		float turn[4 * N];
		double world[3 * N];
		for (int i = 0; i + 1 < N; i++) {
			double q[4];
			axis_angle(sin(seed + i), cos(2 * seed + i), 0.5, 0.3 + 0.4 * sin(seed * 3 + i), q);
			for (int k = 0; k < 4; k++)
				turn[4 * i + k] = (float)q[k];
		}
		pose(rest, root, parent, turn, N, world);
		for (int i = 0; i < 3 * N; i++)
			pts[i] = (float)world[i];
		assert_int_equal(ptc_joint_rotations(rest, pts, N, pq, qs), PTC_OK);
		for (int i = 0; i < N; i++)
			assert_true(fabs(hypot(hypot(qs[4 * i], qs[4 * i + 1]),
			                       hypot(qs[4 * i + 2], qs[4 * i + 3])) -
			                 1) < 1e-6);
		assert_true(qs[4 * N - 4] == 0 && qs[4 * N - 1] == 1); /* the tip: identity */
		pose(rest, pts, parent, qs, N, back);
		if (worst(back, pts, N) > 0.0005)
			fail_msg("seed %d: %g m off", seed, worst(back, pts, N));
	}
}

static void test_by_hand(void **state)
{
	/* a bone hanging down turned to +X: a quarter turn about +Z; the next bone back down */
	float rest[9] = {0, 0, 0, 0, -1, 0, 0, -2, 0}, pts[9] = {0, 0, 0, 1, 0, 0, 1, -1, 0}, q[12];
	const float s = (float)sqrt(0.5), want[12] = {0, 0, s, s, 0, 0, -s, s, 0, 0, 0, 1};
	(void)state;
	assert_int_equal(ptc_joint_rotations(rest, pts, 3, NULL, q), PTC_OK);
	for (int i = 0; i < 12; i++)
		assert_true(fabsf(q[i] - want[i]) < 1e-6f);
}

static void test_half_turns(void **state)
{
	/* shortest arcs (axes across the rest bones), bone 3 turned half round */
	float rest[3 * N], pts[3 * N], turn[4 * N], qs[4 * N], root[3] = {0.4f, 1.6f, 0.1f};
	double parent[4] = {0, 0, 0, 1}, world[3 * N], back[3 * N];
	(void)state;
	rest_chain(rest);
	for (int i = 0; i + 1 < N; i++) {
		double d[3], q[4];
		for (int k = 0; k < 3; k++)
			d[k] = (double)rest[3 * i + 3 + k] - rest[3 * i + k];
		/* axis d x (0.2, 0.1, 1) */
		axis_angle(d[1] - 0.1 * d[2], 0.2 * d[2] - d[0], 0.1 * d[0] - 0.2 * d[1],
		           i == 3 ? 4 * atan(1.0) : 0.2 + 0.1 * i, q);
		for (int k = 0; k < 4; k++)
			turn[4 * i + k] = (float)q[k];
	}
	pose(rest, root, parent, turn, N, world);
	for (int i = 0; i < 3 * N; i++)
		pts[i] = (float)world[i];
	assert_int_equal(ptc_joint_rotations(rest, pts, N, NULL, qs), PTC_OK);
	assert_true(fabsf(qs[4 * 3 + 3]) < 1e-3f); /* joint 3: a half turn */
	pose(rest, pts, parent, qs, N, back);
	assert_true(worst(back, pts, N) <= 0.0005);

	/* exactly opposite at the root */
	float r2[6] = {0, 0, 0, 0, -0.1f, 0}, p2[6] = {0, 0, 0, 0, 0.1f, 0}, q2[8];
	double b2[6];
	assert_int_equal(ptc_joint_rotations(r2, p2, 2, NULL, q2), PTC_OK);
	pose(r2, p2, parent, q2, 2, b2);
	assert_true(worst(b2, p2, 2) < 1e-7);
}

static void test_refused(void **state)
{
	float ok[6] = {0, 0, 0, 0, -1, 0}, zero[6] = {0}, nan6[6] = {0, 0, 0, NAN, -1, 0}, q[8];
	const float pzero[4] = {0, 0, 0, 0}, pinf[4] = {0, 0, INFINITY, 1};
	(void)state;
	memset(q, 0x5a, sizeof q);
	assert_int_equal(ptc_joint_rotations(ok, ok, 1, NULL, q), PTC_EINVAL); /* one point */
	assert_int_equal(ptc_joint_rotations(ok, ok, 0, NULL, q), PTC_EINVAL);
	assert_int_equal(ptc_joint_rotations(NULL, ok, 2, NULL, q), PTC_EINVAL);
	assert_int_equal(ptc_joint_rotations(ok, NULL, 2, NULL, q), PTC_EINVAL);
	assert_int_equal(ptc_joint_rotations(ok, ok, 2, NULL, NULL), PTC_EINVAL);
	assert_int_equal(ptc_joint_rotations(ok, zero, 2, NULL, q), PTC_EINVAL); /* zero-length bone */
	assert_int_equal(ptc_joint_rotations(zero, ok, 2, NULL, q), PTC_EINVAL); /* ... at rest */
	assert_int_equal(ptc_joint_rotations(ok, nan6, 2, NULL, q), PTC_EINVAL);
	assert_int_equal(ptc_joint_rotations(ok, ok, 2, pzero, q), PTC_EINVAL);
	assert_int_equal(ptc_joint_rotations(ok, ok, 2, pinf, q), PTC_EINVAL);
	for (size_t i = 0; i < sizeof q; i++)
		assert_int_equal(((unsigned char *)q)[i], 0x5a); /* untouched */
	assert_int_equal(ptc_joint_rotations(ok, ok, 2, NULL, q), PTC_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_by_hand),
	    cmocka_unit_test(test_half_turns),
	    cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
