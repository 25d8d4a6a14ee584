/* VMC's Unity frame to ours and the head from the bone chain (see vmc.h). */
#include "vmc.h"

const char *const vmc_bone_names[VMC_NBONES] = {"Hips",       "Spine", "Chest",
                                                "UpperChest", "Neck",  "Head"};

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

int vmc_head(const vmc_state *s, int64_t now_us, vmc_xf *out)
{
	if (s->have_tracker && now_us - s->tracker_us <= VMC_TRACKER_HOLD_US) {
		*out = s->tracker;
		return 1;
	}
	if (!(s->have_bone & (1u << VMC_HEAD)))
		return 0;
	vmc_xf x = {{0, 0, 0}, {0, 0, 0, 1}};
	if (s->have_root)
		x = s->root;
	for (int b = VMC_HIPS; b <= VMC_HEAD; b++)
		if (s->have_bone & (1u << b))
			x = vmc_xf_mul(x, s->bone[b]);
	*out = x;
	return 1;
}
