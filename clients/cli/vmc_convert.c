/* VMC's Unity frame to ours, the head and the body bones from the bone chains (see
 * vmc.h). */
#include "vmc.h"

#include "ptp/proto.h"

_Static_assert((int)VMC_NBODY == (int)PTP_BONE_COUNT, "VMC's body bones are the wire's");

/* Unity's HumanBodyBones names, in the protocol's id order (its table names them in
 * snake_case; Unity's thumb Proximal/Intermediate are VRM 1.0's metacarpal/proximal). */
#define SIDE(S)                                                                                    \
	S "ThumbProximal", S "ThumbIntermediate", S "ThumbDistal", S "IndexProximal",              \
	    S "IndexIntermediate", S "IndexDistal", S "MiddleProximal", S "MiddleIntermediate",    \
	    S "MiddleDistal", S "RingProximal", S "RingIntermediate", S "RingDistal",              \
	    S "LittleProximal", S "LittleIntermediate", S "LittleDistal"
const char *const vmc_bone_names[VMC_NBONES] = {
    "Hips",          "Spine",         "Chest",         "UpperChest",    "Neck",
    "LeftEye",       "RightEye",      "Jaw",           "LeftUpperLeg",  "LeftLowerLeg",
    "LeftFoot",      "LeftToes",      "RightUpperLeg", "RightLowerLeg", "RightFoot",
    "RightToes",     "LeftShoulder",  "LeftUpperArm",  "LeftLowerArm",  "LeftHand",
    "RightShoulder", "RightUpperArm", "RightLowerArm", "RightHand",     SIDE("Left"),
    SIDE("Right"),   "Head"};
#undef SIDE

/* Unity's humanoid hierarchy: each finger's proximal hangs from the hand, its
 * intermediate from the proximal, its distal from the intermediate. */
const signed char vmc_bone_parent[VMC_NBONES] = {
    -1, 0,  1,  2,  3,              /* hips, spine, chest, upper chest, neck */
    54, 54, 54,                     /* eyes, jaw: the head */
    0,  8,  9,  10, 0,  12, 13, 14, /* legs */
    3,  16, 17, 18, 3,  20, 21, 22, /* shoulders, arms, hands */
    19, 24, 25, 19, 27, 28, 19, 30, 31, 19, 33, 34, 19, 36, 37, /* left fingers */
    23, 39, 40, 23, 42, 43, 23, 45, 46, 23, 48, 49, 23, 51, 52, /* right fingers */
    4};                                                         /* head: the neck */

vmc_xf vmc_from_unity(vmc_xf u)
{
	vmc_xf o = {{u.p[0], u.p[1], -u.p[2]}, {-u.q[0], -u.q[1], u.q[2], u.q[3]}};
	return o;
}

/* Hamilton product a * b (b first, then a). */
static void qmul(const double a[4], const double b[4], double o[4])
{
	double x = a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1];
	double y = a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0];
	double z = a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3];
	double w = a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2];
	o[0] = x, o[1] = y, o[2] = z, o[3] = w;
}

/* v rotated by unit q: v + 2w (u x v) + 2 u x (u x v), u = q.xyz. */
static void qrot(const double q[4], const double v[3], double o[3])
{
	double tx = 2 * (q[1] * v[2] - q[2] * v[1]);
	double ty = 2 * (q[2] * v[0] - q[0] * v[2]);
	double tz = 2 * (q[0] * v[1] - q[1] * v[0]);
	o[0] = v[0] + q[3] * tx + (q[1] * tz - q[2] * ty);
	o[1] = v[1] + q[3] * ty + (q[2] * tx - q[0] * tz);
	o[2] = v[2] + q[3] * tz + (q[0] * ty - q[1] * tx);
}

vmc_xf vmc_xf_mul(vmc_xf parent, vmc_xf child)
{
	vmc_xf o;
	double r[3];
	qrot(parent.q, child.p, r);
	for (int i = 0; i < 3; i++)
		o.p[i] = parent.p[i] + r[i];
	qmul(parent.q, child.q, o.q);
	return o;
}

/* World pose of received bone b: its nearest received ancestor's (Root when none) times
 * its own. memo/done keep what is computed (at most 11 deep: Hips to a distal phalanx). */
static vmc_xf world_of(const vmc_state *s, int b, vmc_xf *memo, uint64_t *done)
{
	if (*done >> b & 1)
		return memo[b];
	int a = vmc_bone_parent[b];
	while (a >= 0 && !(s->have_bone >> a & 1))
		a = vmc_bone_parent[a];
	vmc_xf base = {{0, 0, 0}, {0, 0, 0, 1}};
	if (a >= 0)
		base = world_of(s, a, memo, done);
	else if (s->have_root)
		base = s->root;
	memo[b] = vmc_xf_mul(base, s->bone[b]);
	*done |= 1ull << b;
	return memo[b];
}

int vmc_head(const vmc_state *s, int64_t now_us, vmc_xf *out)
{
	if (s->have_tracker && now_us - s->tracker_us <= VMC_TRACKER_HOLD_US) {
		*out = s->tracker;
		return 1;
	}
	if (!(s->have_bone >> VMC_HEAD & 1))
		return 0;
	vmc_xf memo[VMC_NBONES];
	uint64_t done = 0;
	*out = world_of(s, VMC_HEAD, memo, &done);
	return 1;
}

int vmc_body_bones(const vmc_state *s, unsigned char ids[VMC_NBODY], vmc_xf world[VMC_NBODY])
{
	vmc_xf memo[VMC_NBONES];
	uint64_t done = 0;
	int n = 0;
	for (int b = 0; b < VMC_NBODY; b++)
		if (s->have_bone >> b & 1) {
			ids[n] = (unsigned char)b;
			world[n++] = world_of(s, b, memo, &done);
		}
	return n;
}
