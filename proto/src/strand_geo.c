/* Strand geometry shared by encoder and decoder. Mirrored exactly by proto/js/strand.mjs:
 * keep every expression's order when editing either. */
#include <math.h>
#include <string.h>

#include "strand_internal.h"

static double sgn(double x)
{
	return x < 0.0 ? -1.0 : 1.0;
}

void ptp_geo_init(ptp_strand_geo_t *g, const ptp_shape_strand_t *s)
{
	double x = s->direction[0], y = s->direction[1], z = s->direction[2];
	double len = sqrt(x * x + y * y + z * z);
	double n0 = x / len, n1 = y / len, n2 = z / len;
	/* Duff et al. 2017, "Building an Orthonormal Basis, Revisited": continuous everywhere
	 * except n2 = -1 exactly, branch-free apart from the sign. */
	double sign = n2 < 0.0 ? -1.0 : 1.0;
	double a = -1.0 / (sign + n2);
	double b = n0 * n1 * a;
	g->points = s->points;
	g->length = s->segment_length;
	for (int i = 0; i < 3; i++)
		g->anchor[i] = s->anchor[i];
	g->basis[0] = 1.0 + sign * n0 * n0 * a;
	g->basis[3] = sign * b;
	g->basis[6] = -sign * n0;
	g->basis[1] = b;
	g->basis[4] = sign + n1 * n1 * a;
	g->basis[7] = -n1;
	g->basis[2] = n0;
	g->basis[5] = n1;
	g->basis[8] = n2;
}

void ptp_quat_matrix(const double q[4], double m[9])
{
	double x = q[0], y = q[1], z = q[2], w = q[3];
	m[0] = 1.0 - 2.0 * (y * y + z * z);
	m[1] = 2.0 * (x * y - z * w);
	m[2] = 2.0 * (x * z + y * w);
	m[3] = 2.0 * (x * y + z * w);
	m[4] = 1.0 - 2.0 * (x * x + z * z);
	m[5] = 2.0 * (y * z - x * w);
	m[6] = 2.0 * (x * z - y * w);
	m[7] = 2.0 * (y * z + x * w);
	m[8] = 1.0 - 2.0 * (x * x + y * y);
}

void ptp_frame(const double rot[9], const double basis[9], double frame[9])
{
	for (int r = 0; r < 3; r++)
		for (int c = 0; c < 3; c++)
			frame[r * 3 + c] = rot[r * 3 + 0] * basis[0 + c] +
			                   rot[r * 3 + 1] * basis[3 + c] +
			                   rot[r * 3 + 2] * basis[6 + c];
}

void ptp_oct_decode(int32_t cu, int32_t cv, int32_t m, double out[3])
{
	double u = (double)cu / m, v = (double)cv / m;
	double z = 1.0 - fabs(u) - fabs(v);
	double n;
	if (z < 0.0) {
		double fu = (1.0 - fabs(v)) * sgn(u);
		double fv = (1.0 - fabs(u)) * sgn(v);
		u = fu;
		v = fv;
	}
	n = sqrt(u * u + v * v + z * z);
	out[0] = u / n;
	out[1] = v / n;
	out[2] = z / n;
}

void ptp_oct_encode(const double l[3], int32_t m, int32_t *cu, int32_t *cv, double dir[3])
{
	double s = fabs(l[0]) + fabs(l[1]) + fabs(l[2]);
	double u = 0.0, v = 0.0, best = -INFINITY;
	int32_t fu, fv;
	if (s > 0.0) {
		u = l[0] / s;
		v = l[1] / s;
		if (l[2] < 0.0) {
			double ou = (1.0 - fabs(v)) * sgn(u);
			double ov = (1.0 - fabs(u)) * sgn(v);
			u = ou;
			v = ov;
		}
	}
	/* floor(u * m) lies in [-m, m]; its cell's four corners hold the nearest code. */
	fu = (int32_t)floor(u * m);
	fv = (int32_t)floor(v * m);
	*cu = fu;
	*cv = fv;
	for (int i = 0; i < 2; i++) {
		for (int j = 0; j < 2; j++) {
			double d[3], dot;
			if (fu + i > m || fv + j > m)
				continue;
			ptp_oct_decode(fu + i, fv + j, m, d);
			dot = d[0] * l[0] + d[1] * l[1] + d[2] * l[2];
			if (dot > best) {
				best = dot;
				*cu = fu + i;
				*cv = fv + j;
				memcpy(dir, d, sizeof d);
			}
		}
	}
}

void ptp_strand_root(const ptp_strand_geo_t *g, const double rot[9], const double head_p[3],
                     double out[3])
{
	for (int r = 0; r < 3; r++)
		out[r] =
		    head_p[r] + (rot[r * 3 + 0] * g->anchor[0] + rot[r * 3 + 1] * g->anchor[1] +
		                 rot[r * 3 + 2] * g->anchor[2]);
}

void ptp_strand_step(const ptp_strand_geo_t *g, const double frame[9], const double d[3],
                     const double prev[3], double next[3])
{
	for (int r = 0; r < 3; r++)
		next[r] = prev[r] + g->length * (frame[r * 3 + 0] * d[0] + frame[r * 3 + 1] * d[1] +
		                                 frame[r * 3 + 2] * d[2]);
}

void ptp_strand_points(const ptp_strand_geo_t *g, const double rot[9], const double head_p[3],
                       const double frame[9], const int32_t *codes, int32_t m, double *out)
{
	ptp_strand_root(g, rot, head_p, out);
	for (int i = 0; i + 1 < g->points; i++) {
		double d[3];
		ptp_oct_decode(codes[2 * i], codes[2 * i + 1], m, d);
		ptp_strand_step(g, frame, d, out + 3 * i, out + 3 * (i + 1));
	}
}
