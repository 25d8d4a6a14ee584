/* Exact signed distances (see sdf.h). */
#include <math.h>

#include "sdf.h"

static double dot(const double a[3], const double b[3])
{
	return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

static void from_vec(pt_vec3 v, double out[3])
{
	out[0] = v.x;
	out[1] = v.y;
	out[2] = v.z;
}

/* Distance to the convex hull of the spheres (a, ra) and (b, rb): Inigo Quilez's exact
 * round-cone distance, with the cases where one sphere swallows the other handled first
 * (the formula needs |b - a| > |ra - rb|). */
double sim_sdf_round_cone(const double p[3], const double a[3], const double b[3], double ra,
                          double rb)
{
	double ba[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
	double pa[3] = {p[0] - a[0], p[1] - a[1], p[2] - a[2]};
	double pb[3] = {p[0] - b[0], p[1] - b[1], p[2] - b[2]};
	double l2 = dot(ba, ba), rr = ra - rb;
	if (l2 <= rr * rr || l2 < 1e-18)
		return ra >= rb ? sqrt(dot(pa, pa)) - ra : sqrt(dot(pb, pb)) - rb;
	double a2 = l2 - rr * rr, il2 = 1.0 / l2;
	double y = dot(pa, ba), z = y - l2;
	double v[3] = {pa[0] * l2 - ba[0] * y, pa[1] * l2 - ba[1] * y, pa[2] * l2 - ba[2] * y};
	double x2 = dot(v, v), y2 = y * y * l2, z2 = z * z * l2;
	double k = (rr > 0 ? 1.0 : rr < 0 ? -1.0 : 0.0) * rr * rr * x2;
	double sz = z > 0 ? 1.0 : z < 0 ? -1.0 : 0.0, sy = y > 0 ? 1.0 : y < 0 ? -1.0 : 0.0;
	if (sz * a2 * z2 > k)
		return sqrt(x2 + z2) * il2 - rb;
	if (sy * a2 * y2 < k)
		return sqrt(x2 + y2) * il2 - ra;
	return (sqrt(x2 * a2 * il2) + y * rr) * il2 - ra;
}

/* The closest surface point is x_i = r_i^2 p_i / (t + r_i^2) where t > -min r_i^2 solves
 * F(t) = sum (r_i p_i / (t + r_i^2))^2 - 1 = 0; F falls monotonically there, so bisect.
 * The unknown is u = t + min r_i^2 > 0, which keeps full precision when the root is
 * near the pole (points deep inside). A zero component is nudged to 1e-9 m so F has
 * that pole; the distance is 1-Lipschitz, so this moves the answer by at most 2e-9 m. */
double sim_sdf_ellipsoid(const double p[3], const double radii[3])
{
	double q[3], r2[3], rmin2 = INFINITY, rmax = 0, len = 0;
	for (int i = 0; i < 3; i++) {
		q[i] = fabs(p[i]) < 1e-9 ? 1e-9 : fabs(p[i]);
		r2[i] = radii[i] * radii[i];
		rmin2 = fmin(rmin2, r2[i]);
		rmax = fmax(rmax, radii[i]);
		len += q[i] * q[i];
	}
	len = sqrt(len);
	double off[3] = {r2[0] - rmin2, r2[1] - rmin2, r2[2] - rmin2}; /* t + r2[i] = u + off */
	double lo = 0,
	       hi = rmax * len + rmin2; /* F <= 0 at t = rmax |q|: each term <= q_i^2/|q|^2 */
	for (int it = 0; it < 2000; it++) {
		double u = 0.5 * (lo + hi), f = -1.0;
		if (u <= lo || u >= hi)
			break;
		for (int i = 0; i < 3; i++) {
			double s = radii[i] * q[i] / (u + off[i]);
			f += s * s;
		}
		if (f > 0)
			lo = u;
		else
			hi = u;
	}
	double u = 0.5 * (lo + hi), d2 = 0, inside = -1.0;
	for (int i = 0; i < 3; i++) {
		double x = r2[i] * q[i] / (u + off[i]);
		d2 += (q[i] - x) * (q[i] - x);
		inside += (q[i] * q[i]) / r2[i];
	}
	return inside < 0 ? -sqrt(d2) : sqrt(d2);
}

/* v rotated by the inverse of unit quaternion q: q* v q. */
static void rotate_inv(pt_quat q, const double v[3], double out[3])
{
	double n =
	    sqrt((double)q.x * q.x + (double)q.y * q.y + (double)q.z * q.z + (double)q.w * q.w);
	double u[3] = {-q.x / n, -q.y / n, -q.z / n}, w = q.w / n;
	double t[3] = {2 * (u[1] * v[2] - u[2] * v[1]), 2 * (u[2] * v[0] - u[0] * v[2]),
	               2 * (u[0] * v[1] - u[1] * v[0])};
	out[0] = v[0] + w * t[0] + (u[1] * t[2] - u[2] * t[1]);
	out[1] = v[1] + w * t[1] + (u[2] * t[0] - u[0] * t[2]);
	out[2] = v[2] + w * t[2] + (u[0] * t[1] - u[1] * t[0]);
}

void sim_head_local(const pt_pose *head, pt_vec3 pw, double out[3])
{
	double d[3] = {(double)pw.x - head->p.x, (double)pw.y - head->p.y,
	               (double)pw.z - head->p.z};
	rotate_inv(head->q, d, out);
}

double sim_sdf(const pt_collider_def *c, const pt_pose *head, pt_vec3 pw)
{
	double p[3], ctr[3], a[3], b[3];
	from_vec(pw, p);
	if (c->attach != PT_ATTACH_WORLD) /* head or bone: `head` is its frame's pose */
		sim_head_local(head, pw, p);
	from_vec(c->center, ctr);
	from_vec(c->a, a);
	from_vec(c->b, b);
	double rb = c->radius_b < 0 ? c->radius : c->radius_b;
	switch (c->shape) {
	case PT_SHAPE_SPHERE:
		return sim_sdf_round_cone(p, ctr, ctr, c->radius, c->radius);
	case PT_SHAPE_INSIDE_SPHERE:
		return -sim_sdf_round_cone(p, ctr, ctr, c->radius, c->radius);
	case PT_SHAPE_CAPSULE:
		return sim_sdf_round_cone(p, a, b, c->radius, rb);
	case PT_SHAPE_INSIDE_CAPSULE:
		return -sim_sdf_round_cone(p, a, b, c->radius, c->radius);
	case PT_SHAPE_ELLIPSOID: {
		double q[3] = {p[0] - ctr[0], p[1] - ctr[1], p[2] - ctr[2]}, r[3];
		from_vec(c->radii, r);
		return sim_sdf_ellipsoid(q, r);
	}
	case PT_SHAPE_PLANE: {
		double n[3], q[3] = {p[0] - ctr[0], p[1] - ctr[1], p[2] - ctr[2]};
		from_vec(c->normal, n);
		double len = sqrt(dot(n, n));
		return len > 0 ? dot(q, n) / len : INFINITY;
	}
	default:
		return INFINITY;
	}
}
