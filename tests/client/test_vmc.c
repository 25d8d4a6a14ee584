/* `ponytail vmc`'s conversion and decoder (clients/cli/vmc_convert.c, vmc_parse.c): the
 * issue's worked examples, the head from the bone chain, the tracker's precedence, and
 * packets built with liblo -- good ones, and every way to break them. */
#include <lo/lo.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ptp/proto.h"
#include "vmc.h"

static void near(double got, double want, double tol)
{
	if (fabs(got - want) > tol)
		fail_msg("got %.9f, want %.9f (tol %g)", got, want, tol);
}

static vmc_xf xf(double px, double py, double pz, double qx, double qy, double qz, double qw)
{
	vmc_xf x = {{px, py, pz}, {qx, qy, qz, qw}};
	return x;
}

/* The examples of clients/README.md "VTuber trackers" and the issue. */
static void test_unity_examples(void **st)
{
	(void)st;
	vmc_xf o = vmc_from_unity(xf(0.1, 1.5, 0.2, 0, 0.258819, 0, 0.965926));
	near(o.p[0], 0.1, 0), near(o.p[1], 1.5, 0), near(o.p[2], -0.2, 0);
	near(o.q[0], 0, 0), near(o.q[1], -0.258819, 0), near(o.q[2], 0, 0);
	near(o.q[3], 0.965926, 0);
	o = vmc_from_unity(xf(0, 0, 0, 0.1, 0.2, 0.3, 0.927362));
	near(o.q[0], -0.1, 0), near(o.q[1], -0.2, 0), near(o.q[2], 0.3, 0);
	/* its own inverse */
	vmc_xf back = vmc_from_unity(vmc_from_unity(xf(1, 2, 3, 0.5, -0.5, 0.5, 0.5)));
	near(back.p[2], 3, 0), near(back.q[0], 0.5, 0), near(back.q[1], -0.5, 0);
}

/* What the example means: Unity's +30 deg about y turns its forward (+Z) to
 * (0.5, 0, 0.866) (Quaternion.Euler(0, 30, 0) * Vector3.forward); the converted rotation
 * turns the mirrored forward (0, 0, -1) to the mirrored result (0.5, 0, -0.866). */
static void test_unity_rotation_mirrors(void **st)
{
	(void)st;
	vmc_xf u = xf(0, 0, 0, 0, 0.258819, 0, 0.965926);
	vmc_xf fwd = xf(0, 0, 1, 0, 0, 0, 1);
	vmc_xf r = vmc_xf_mul(u, fwd); /* the rotated point, in Unity */
	near(r.p[0], 0.5, 1e-6), near(r.p[2], 0.866025, 1e-6);
	vmc_xf o = vmc_xf_mul(vmc_from_unity(u), vmc_from_unity(fwd));
	near(o.p[0], 0.5, 1e-6), near(o.p[1], 0, 1e-9), near(o.p[2], -0.866025, 1e-6);
	/* and for any rotation and point: convert(a * b) == convert(a) * convert(b) */
	vmc_xf a = xf(0.3, -1, 2, 0.2, 0.4, -0.1, 0.8888),
	       b = xf(-0.5, 0.25, 1.5, -0.3, 0.1, 0.6, 0.7348);
	double na = 0, nb = 0;
	for (int i = 0; i < 4; i++)
		na += a.q[i] * a.q[i], nb += b.q[i] * b.q[i];
	for (int i = 0; i < 4; i++)
		a.q[i] /= sqrt(na), b.q[i] /= sqrt(nb);
	vmc_xf l = vmc_from_unity(vmc_xf_mul(a, b));
	vmc_xf rr = vmc_xf_mul(vmc_from_unity(a), vmc_from_unity(b));
	for (int i = 0; i < 3; i++)
		near(l.p[i], rr.p[i], 1e-12);
	for (int i = 0; i < 4; i++)
		near(l.q[i], rr.q[i], 1e-12);
}

/* Root at (0, 0, 2) turned 90 deg about y; the hips 1 m up; the head 0.5 m above the
 * hips. By hand, in Unity: the head at (0, 1.5, 2), turned 90 deg; ours (0, 1.5, -2) and
 * [0, -0.7071, 0, 0.7071]. A bone offset along x shows the turn: Unity's +90 deg about y
 * takes +X to -Z, so a Neck 0.1 m along x puts the head at Unity z 2 - 0.1, ours -1.9. */
static void test_chain(void **st)
{
	(void)st;
	vmc_state s;
	memset(&s, 0, sizeof s);
	double h = sqrt(0.5);
	s.root = vmc_from_unity(xf(0, 0, 2, 0, h, 0, h));
	s.have_root = 1;
	s.bone[VMC_HIPS] = vmc_from_unity(xf(0, 1, 0, 0, 0, 0, 1));
	s.bone[VMC_HEAD] = vmc_from_unity(xf(0, 0.5, 0, 0, 0, 0, 1));
	s.have_bone = 1ull << VMC_HIPS | 1ull << VMC_HEAD;
	vmc_xf o;
	assert_int_equal(vmc_head(&s, 0, &o), 1);
	near(o.p[0], 0, 1e-12), near(o.p[1], 1.5, 1e-12), near(o.p[2], -2, 1e-12);
	near(o.q[1], -h, 1e-12), near(o.q[3], h, 1e-12);
	s.bone[VMC_NECK] = vmc_from_unity(xf(0.1, 0, 0, 0, 0, 0, 1));
	s.have_bone |= 1ull << VMC_NECK;
	assert_int_equal(vmc_head(&s, 0, &o), 1);
	near(o.p[0], 0, 1e-12), near(o.p[2], -1.9, 1e-12);
	/* no head bone: no pose */
	s.have_bone = 1ull << VMC_HIPS;
	assert_int_equal(vmc_head(&s, 0, &o), 0);
}

/* Body bones through Unity's humanoid hierarchy, by hand. In Unity: Root at (0, 0, 2)
 * turned +90 deg about y (which takes +X to -Z, +Z to +X); Hips 1 m up; Spine 0.1 m up;
 * no Chest or UpperChest, so LeftShoulder (0.05, 0.2, 0) hangs from the Spine: world
 * (0, 1.1, 2) + Ry(0.05, 0.2, 0) = (0, 1.3, 1.95), turned as the root. LeftUpperArm
 * (0.1, 0, 0), turned +90 deg about z: (0, 1.3, 1.85), rotation Ry * Rz = [.5, .5, .5, .5].
 * LeftLowerArm (0.25, 0, 0): Ry Rz takes +X to +Y, so (0, 1.55, 1.85). No LeftHand:
 * LeftIndexProximal (0.3, 0, 0) hangs from the lower arm, (0, 1.85, 1.85). Ours: z
 * negated, rotations [x, y, z, w] -> [-x, -y, z, w]. */
static void test_body_bones(void **st)
{
	(void)st;
	vmc_state s;
	memset(&s, 0, sizeof s);
	double h = sqrt(0.5);
	s.root = vmc_from_unity(xf(0, 0, 2, 0, h, 0, h));
	s.have_root = 1;
	static const struct {
		int b;
		double p[3], q[4];
	} in[] = {{VMC_HIPS, {0, 1, 0}, {0, 0, 0, 1}},
	          {VMC_SPINE, {0, 0.1, 0}, {0, 0, 0, 1}},
	          {16, {0.05, 0.2, 0}, {0, 0, 0, 1}}, /* LeftShoulder */
	          {17, {0.1, 0, 0}, {0, 0, 0.70710678118654752, 0.70710678118654752}},
	          {18, {0.25, 0, 0}, {0, 0, 0, 1}}, /* LeftLowerArm */
	          {27, {0.3, 0, 0}, {0, 0, 0, 1}}}; /* LeftIndexProximal */
	for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
		s.bone[in[i].b] = vmc_from_unity(xf(in[i].p[0], in[i].p[1], in[i].p[2], in[i].q[0],
		                                    in[i].q[1], in[i].q[2], in[i].q[3]));
		s.have_bone |= 1ull << in[i].b;
	}
	unsigned char ids[VMC_NBODY];
	vmc_xf w[VMC_NBODY];
	assert_int_equal(vmc_body_bones(&s, ids, w), 6);
	const struct {
		int id;
		double p[3], q[4];
	} want[] = {{0, {0, 1, -2}, {0, -h, 0, h}},
	            {1, {0, 1.1, -2}, {0, -h, 0, h}},
	            {16, {0, 1.3, -1.95}, {0, -h, 0, h}},
	            {17, {0, 1.3, -1.85}, {-.5, -.5, .5, .5}},
	            {18, {0, 1.55, -1.85}, {-.5, -.5, .5, .5}},
	            {27, {0, 1.85, -1.85}, {-.5, -.5, .5, .5}}};
	for (int i = 0; i < 6; i++) {
		assert_int_equal(ids[i], want[i].id);
		for (int k = 0; k < 3; k++)
			near(w[i].p[k], want[i].p[k], 1e-12);
		for (int k = 0; k < 4; k++)
			near(w[i].q[k], want[i].q[k], 1e-12);
	}
	/* the head hangs from the Spine too (no Neck), and the body does not need it */
	s.bone[VMC_HEAD] = vmc_from_unity(xf(0, 0.3, 0, 0, 0, 0, 1));
	s.have_bone |= 1ull << VMC_HEAD;
	vmc_xf o;
	assert_int_equal(vmc_head(&s, 0, &o), 1);
	near(o.p[1], 1.4, 1e-12), near(o.p[2], -2, 1e-12);
	assert_int_equal(vmc_body_bones(&s, ids, w), 6);
	/* nothing received: no bones */
	memset(&s, 0, sizeof s);
	assert_int_equal(vmc_body_bones(&s, ids, w), 0);
}

static lo_message pose_msg(const char *name, const float v[7]);

/* The names are Unity's HumanBodyBones: in CamelCase, the protocol's snake_case names of
 * the same id (ptp_bone_name, PROTOCOL.md's table), but the thumbs, whose Unity
 * Proximal, Intermediate, Distal are VRM 1.0's metacarpal, proximal, distal. Every
 * parent comes before its child on the way from the hips, and a bundle of every name is
 * every bone. */
static void test_every_bone_name(void **st)
{
	(void)st;
	static const char *const thumb[3] = {"metacarpal", "proximal", "distal"};
	for (int b = 0; b < VMC_NBODY; b++) {
		char snake[64], *o = snake;
		for (const char *c = vmc_bone_names[b]; *c; c++) {
			if (*c >= 'A' && *c <= 'Z') {
				if (o != snake)
					*o++ = '_';
				*o++ = (char)(*c - 'A' + 'a');
			} else {
				*o++ = *c;
			}
		}
		*o = '\0';
		char want[64];
		if ((b >= 24 && b <= 26) || (b >= 39 && b <= 41))
			snprintf(want, sizeof want, "%s_thumb_%s", b < 39 ? "left" : "right",
			         thumb[(b - 24) % 15]);
		else
			snprintf(want, sizeof want, "%s", snake);
		assert_string_equal(want, ptp_bone_name(b));
		int depth = 0;
		for (int a = vmc_bone_parent[b]; a >= 0; a = vmc_bone_parent[a])
			assert_true(++depth <= 10); /* no cycle: a distal phalanx has 10 */
	}
	assert_string_equal(vmc_bone_names[VMC_HEAD], "Head");
	assert_int_equal(vmc_bone_parent[VMC_HEAD], VMC_NECK);
	assert_int_equal(vmc_bone_parent[5], VMC_HEAD);         /* LeftEye */
	assert_int_equal(vmc_bone_parent[16], VMC_UPPER_CHEST); /* LeftShoulder */
	assert_int_equal(vmc_bone_parent[8], VMC_HIPS);         /* LeftUpperLeg */
	assert_int_equal(vmc_bone_parent[42], 23);              /* RightIndexProximal: RightHand */
	lo_bundle bu = lo_bundle_new(LO_TT_IMMEDIATE);
	static const float id7[7] = {0, 0.1f, 0, 0, 0, 0, 1};
	for (int b = 0; b < VMC_NBONES; b++)
		lo_bundle_add_message(bu, "/VMC/Ext/Bone/Pos", pose_msg(vmc_bone_names[b], id7));
	size_t len;
	unsigned char *d = lo_bundle_serialise(bu, NULL, &len);
	lo_bundle_free_recursive(bu);
	vmc_state s;
	memset(&s, 0, sizeof s);
	assert_int_equal(vmc_feed(&s, d, len, 0), VMC_NBONES);
	assert_true(s.have_bone == (1ull << VMC_NBONES) - 1);
	unsigned char ids[VMC_NBODY];
	vmc_xf w[VMC_NBODY];
	assert_int_equal(vmc_body_bones(&s, ids, w), 54);
	/* a distal phalanx: 0.1 m per bone, Hips, Spine, Chest, UpperChest, RightShoulder,
	 * RightUpperArm, RightLowerArm, RightHand, its three: 11 bones up */
	near(w[53].p[1], 1.1, 1e-6);
	free(d);
}

/* The tracker wins while fresh, then the chain takes over again. */
static void test_tracker_precedence(void **st)
{
	(void)st;
	vmc_state s;
	memset(&s, 0, sizeof s);
	s.bone[VMC_HEAD] = xf(0, 1, 0, 0, 0, 0, 1);
	s.have_bone = 1ull << VMC_HEAD;
	s.tracker = xf(5, 5, 5, 0, 0, 0, 1);
	s.have_tracker = 1;
	s.tracker_us = 1000;
	vmc_xf o;
	vmc_head(&s, 1000 + VMC_TRACKER_HOLD_US, &o);
	near(o.p[0], 5, 0);
	vmc_head(&s, 1001 + VMC_TRACKER_HOLD_US, &o);
	near(o.p[0], 0, 0), near(o.p[1], 1, 0);
}

/* ---- packets -------------------------------------------------------------------------- */

static lo_message pose_msg(const char *name, const float v[7])
{
	lo_message m = lo_message_new();
	lo_message_add_string(m, name);
	for (int i = 0; i < 7; i++)
		lo_message_add_float(m, v[i]);
	return m;
}

/* A tracker's bundle: Root, Hips, Head, and addresses the head does not need. */
static unsigned char *tracker_bundle(size_t *len)
{
	static const float root[7] = {0, 0, 2, 0, 0, 0, 1}, hips[7] = {0.1f, 1, 0, 0, 0, 0, 1},
	                   head[7] = {0, 0.5f, 0.2f, 0, 0.258819f, 0, 0.965926f};
	lo_bundle b = lo_bundle_new(LO_TT_IMMEDIATE);
	lo_bundle_add_message(b, "/VMC/Ext/Root/Pos", pose_msg("root", root));
	lo_bundle_add_message(b, "/VMC/Ext/Bone/Pos", pose_msg("Hips", hips));
	lo_bundle_add_message(b, "/VMC/Ext/Bone/Pos", pose_msg("LeftUpperLeg", hips));
	lo_bundle_add_message(b, "/VMC/Ext/Bone/Pos", pose_msg("Head", head));
	lo_message ok = lo_message_new();
	lo_message_add_int32(ok, 1);
	lo_bundle_add_message(b, "/VMC/Ext/OK", ok);
	unsigned char *d = lo_bundle_serialise(b, NULL, len);
	lo_bundle_free_recursive(b);
	return d;
}

static void test_bundle(void **st)
{
	(void)st;
	vmc_state s;
	memset(&s, 0, sizeof s);
	size_t len;
	unsigned char *d = tracker_bundle(&len);
	assert_int_equal(vmc_feed(&s, d, len, 0), 4); /* Root, Hips, the leg, Head */
	assert_int_equal(s.messages, 5);
	assert_int_equal(s.ignored, 1);
	assert_int_equal(s.malformed + s.unknown + s.nonfinite, 0);
	assert_true(s.changed);
	vmc_xf o;
	assert_int_equal(vmc_head(&s, 0, &o), 1);
	near(o.p[0], 0.1, 1e-6), near(o.p[1], 1.5, 1e-6), near(o.p[2], -2.2, 1e-6);
	near(o.q[1], -0.258819, 1e-6), near(o.q[3], 0.965926, 1e-6);
	free(d);
}

/* Nested bundles are walked; a bare message works too. */
static void test_nested_and_bare(void **st)
{
	(void)st;
	vmc_state s;
	memset(&s, 0, sizeof s);
	size_t len;
	unsigned char *inner = tracker_bundle(&len);
	unsigned char outer[4096] = "#bundle";
	outer[15] = 1; /* time tag "immediately" */
	outer[16] = (unsigned char)(len >> 24), outer[17] = (unsigned char)(len >> 16);
	outer[18] = (unsigned char)(len >> 8), outer[19] = (unsigned char)len;
	memcpy(outer + 20, inner, len);
	assert_int_equal(vmc_feed(&s, outer, 20 + len, 0), 4);
	assert_int_equal(s.bundles, 2);
	free(inner);
	static const float tr[7] = {1, 2, 3, 0, 0, 0, 1};
	lo_message m = pose_msg("Head", tr);
	void *d = lo_message_serialise(m, "/VMC/Ext/Tra/Pos", NULL, &len);
	assert_int_equal(vmc_feed(&s, d, len, 42), 1);
	vmc_xf o;
	vmc_head(&s, 42, &o);
	near(o.p[0], 1, 0), near(o.p[2], -3, 0);
	free(d);
	lo_message_free(m);
}

/* Every prefix of a good bundle: never a crash, never a pose from a cut message. A cut
 * at an element boundary is a shorter bundle (header only: an empty one) and is fine;
 * any other cut is counted as malformed. */
static void test_truncated(void **st)
{
	(void)st;
	size_t len;
	unsigned char *d = tracker_bundle(&len);
	int boundary[4096] = {0};
	for (size_t at = 16; at <= len && at < 4096;) {
		boundary[at] = 1;
		if (at + 4 > len)
			break;
		at += 4 + ((size_t)d[at] << 24 | (size_t)d[at + 1] << 16 | (size_t)d[at + 2] << 8 |
		           d[at + 3]);
	}
	int cuts = 0;
	for (size_t n = 0; n < len; n++) {
		vmc_state s;
		memset(&s, 0, sizeof s);
		unsigned char *cut = malloc(n ? n : 1); /* exactly n bytes: ASan sees overreads */
		memcpy(cut, d, n);
		int rc = vmc_feed(&s, cut, n, 0);
		if (boundary[n]) {
			assert_true(rc >= 0 && s.malformed == 0);
		} else {
			assert_int_equal(rc, -1);
			assert_int_equal(s.malformed, 1);
			cuts++;
		}
		free(cut);
	}
	assert_true(cuts > 200);
	free(d);
}

static void test_garbage_and_lies(void **st)
{
	(void)st;
	vmc_state s;
	memset(&s, 0, sizeof s);
	srand(3);
	for (int k = 0; k < 2000; k++) {
		size_t n = (size_t)(rand() % 300);
		unsigned char *g = malloc(n ? n : 1);
		for (size_t i = 0; i < n; i++)
			g[i] = (unsigned char)rand();
		if (k % 3 == 0 && n >= 8)
			memcpy(g, "#bundle", 8);
		if (k % 3 == 1 && n >= 12)
			memcpy(g, "/VMC/Ext/Bone/Pos\0\0\0,sfffffff", n < 28 ? n : 28);
		vmc_feed(&s, g, n, 0);
		free(g);
	}
	assert_true(s.malformed > 1500);
	/* a bundle element longer than the packet */
	size_t len;
	unsigned char *d = tracker_bundle(&len);
	d[19] = 0xfc;
	memset(&s, 0, sizeof s);
	assert_int_equal(vmc_feed(&s, d, len, 0), -1);
	assert_int_equal(s.malformed, 1);
	free(d);
}

static void feed_msg(vmc_state *s, const char *path, lo_message m)
{
	size_t len;
	void *d = lo_message_serialise(m, path, NULL, &len);
	vmc_feed(s, d, len, 0);
	free(d);
	lo_message_free(m);
}

static void test_bad_values(void **st)
{
	(void)st;
	vmc_state s;
	memset(&s, 0, sizeof s);
	float v[7] = {0, 1, 0, 0, 0, 0, 1};
	v[1] = NAN;
	feed_msg(&s, "/VMC/Ext/Bone/Pos", pose_msg("Head", v));
	v[1] = INFINITY;
	feed_msg(&s, "/VMC/Ext/Root/Pos", pose_msg("root", v));
	assert_int_equal(s.nonfinite, 2);
	v[1] = 1, v[6] = 0;
	feed_msg(&s, "/VMC/Ext/Bone/Pos", pose_msg("Head", v)); /* zero rotation */
	lo_message m = lo_message_new();
	lo_message_add_string(m, "Head");
	lo_message_add_int32(m, 1);
	feed_msg(&s, "/VMC/Ext/Bone/Pos", m); /* wrong types */
	assert_int_equal(s.malformed, 2);
	m = lo_message_new();
	lo_message_add_string(m, "Scene");
	feed_msg(&s, "/obs/scene", m);
	assert_int_equal(s.unknown, 1);
	assert_int_equal(s.have_bone | (uint64_t)s.have_root, 0); /* nothing applied */
	assert_false(s.changed);
	/* doubles are accepted for floats, extra arguments (VMC 2.1's scale) ignored */
	m = lo_message_new();
	lo_message_add_string(m, "Head");
	for (int i = 0; i < 7; i++)
		lo_message_add_double(m, i == 6 ? 2.0 : 0.0); /* |q| = 2: normalised */
	lo_message_add_float(m, 1);
	feed_msg(&s, "/VMC/Ext/Bone/Pos", m);
	assert_true(s.have_bone >> VMC_HEAD & 1);
	near(s.bone[VMC_HEAD].q[3], 1, 1e-12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unity_examples), cmocka_unit_test(test_unity_rotation_mirrors),
	    cmocka_unit_test(test_chain),          cmocka_unit_test(test_tracker_precedence),
	    cmocka_unit_test(test_body_bones),     cmocka_unit_test(test_every_bone_name),
	    cmocka_unit_test(test_bundle),         cmocka_unit_test(test_nested_and_bare),
	    cmocka_unit_test(test_truncated),      cmocka_unit_test(test_garbage_and_lies),
	    cmocka_unit_test(test_bad_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
