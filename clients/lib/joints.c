/* Joint rotations for a skinned hair chain (ponytail_client.h: ptc_joint_rotations); the
 * same construction as proto/js/joints.mjs, in double. */
#include <math.h>
#include <string.h>

#include "ponytail_client.h"

#define MIN_SEGMENT 1e-9 /* m: shorter has no direction */

static void quat_mul(const double a[4], const double b[4], double out[4])
{
	double r[4] = {
	    a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
	    a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
	    a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
	    a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
	};
	memcpy(out, r, sizeof r);
}

/* v by the inverse of unit q: q* v q. */
static void quat_unrotate(const double q[4], const double v[3], double out[3])
{
	double x = -q[0], y = -q[1], z = -q[2], w = q[3];
	double tx = 2 * (y * v[2] - z * v[1]), ty = 2 * (z * v[0] - x * v[2]),
	       tz = 2 * (x * v[1] - y * v[0]);
	out[0] = v[0] + w * tx + (y * tz - z * ty);
	out[1] = v[1] + w * ty + (z * tx - x * tz);
	out[2] = v[2] + w * tz + (x * ty - y * tx);
}

static void normalise(double *v, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += v[i] * v[i];
	s = sqrt(s);
	for (int i = 0; i < n; i++)
		v[i] /= s;
}

/* Unit direction of segment i of p; 0 when it is too short to have one. */
static int direction(const float *p, int i, double d[3])
{
	for (int k = 0; k < 3; k++)
		d[k] = (double)p[3 * i + 3 + k] - p[3 * i + k];
	if (!(sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]) >= MIN_SEGMENT))
		return 0;
	normalise(d, 3);
	return 1;
}

/* The shortest rotation taking unit a to unit b; half a turn about a fixed axis
 * perpendicular to a when they are opposite. */
static void from_to(const double a[3], const double b[3], double q[4])
{
	double d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
	if (1 + d < 1e-12) {
		double o[3] = {fabs(a[0]) < 0.9 ? 1 : 0, fabs(a[0]) < 0.9 ? 0 : 1, 0};
		q[0] = a[1] * o[2] - a[2] * o[1];
		q[1] = a[2] * o[0] - a[0] * o[2];
		q[2] = a[0] * o[1] - a[1] * o[0];
		q[3] = 0;
	} else {
		q[0] = a[1] * b[2] - a[2] * b[1];
		q[1] = a[2] * b[0] - a[0] * b[2];
		q[2] = a[0] * b[1] - a[1] * b[0];
		q[3] = 1 + d;
	}
	normalise(q, 4);
}

int ptc_joint_rotations(const float *rest, const float *pts, int n, const float parent_q[4],
                        float *out)
{
	double world[4] = {0, 0, 0, 1}, pn = 0;
	if (!rest || !pts || !out || n < 2)
		return PTC_EINVAL;
	for (int i = 0; i < 3 * n; i++)
		if (!isfinite(rest[i]) || !isfinite(pts[i]))
			return PTC_EINVAL;
	if (parent_q) {
		for (int k = 0; k < 4; k++) {
			if (!isfinite(parent_q[k]))
				return PTC_EINVAL;
			world[k] = parent_q[k];
			pn += world[k] * world[k];
		}
		if (!(sqrt(pn) > 1e-9))
			return PTC_EINVAL;
		normalise(world, 4);
	}
	for (int i = 0; i + 1 < n; i++) { /* every segment first: out stays untouched on error */
		double d[3];
		if (!direction(rest, i, d) || !direction(pts, i, d))
			return PTC_EINVAL;
	}
	for (int i = 0; i + 1 < n; i++) {
		double r[3], p[3], now[3], local[4];
		direction(rest, i, r);
		direction(pts, i, p);
		quat_unrotate(world, p, now); /* the frame's bone seen from the parent joint */
		from_to(r, now, local);
		for (int k = 0; k < 4; k++)
			out[4 * i + k] = (float)local[k];
		quat_mul(world, local, world);
		normalise(world, 4); /* keep the chain unit over many joints */
	}
	memcpy(out + 4 * (n - 1), (const float[4]){0, 0, 0, 1}, 4 * sizeof(float));
	return PTC_OK;
}
