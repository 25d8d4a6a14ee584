/* Strand geometry shared by encoder and decoder. Mirrored exactly by proto/js/strand.mjs:
 * keep every expression's order when editing either. */
#include <math.h>
#include <string.h>

#include "strand_internal.h"

#if !defined(PT_NO_SIMD) && defined(__SSE2__)
#include <emmintrin.h>
#endif

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

#if !defined(PT_NO_SIMD) && defined(__SSE2__)
/* Two consecutive segments at once, one per SSE2 lane: ptp_oct_decode and the step's
 * length * (frame * d), with the same operations in the same order (divpd and sqrtpd round
 * each lane like their scalar forms), so the same doubles. Only the running sum, point by
 * point, stays sequential. The decoder is not a chain (the codes are known), so this is
 * about throughput: five divisions and a square root per two points instead of ten and
 * two. */
static inline __m128d sel2(__m128d mask, __m128d a, __m128d b)
{
	return _mm_or_pd(_mm_and_pd(mask, a), _mm_andnot_pd(mask, b));
}

static void steps2(const ptp_strand_geo_t *g, const double frame[9], const int32_t *codes,
                   int32_t m, double w[6])
{
	const __m128d one = _mm_set1_pd(1.0), zero = _mm_setzero_pd(), sign = _mm_set1_pd(-0.0);
	const __m128d md = _mm_set1_pd((double)m), len = _mm_set1_pd(g->length);
	__m128d u = _mm_div_pd(_mm_set_pd((double)codes[2], (double)codes[0]), md);
	__m128d v = _mm_div_pd(_mm_set_pd((double)codes[3], (double)codes[1]), md);
	__m128d au = _mm_andnot_pd(sign, u), av = _mm_andnot_pd(sign, v);
	__m128d z = _mm_sub_pd(_mm_sub_pd(one, au), av), fold = _mm_cmplt_pd(z, zero), n, d[3];
	/* (1 - |v|) sgn u, (1 - |u|) sgn v from the old values; sgn 0 = +1; times +-1 exactly */
	__m128d fu = _mm_xor_pd(_mm_sub_pd(one, av), _mm_and_pd(_mm_cmplt_pd(u, zero), sign));
	__m128d fv = _mm_xor_pd(_mm_sub_pd(one, au), _mm_and_pd(_mm_cmplt_pd(v, zero), sign));
	u = sel2(fold, fu, u);
	v = sel2(fold, fv, v);
	n = _mm_sqrt_pd(
	    _mm_add_pd(_mm_add_pd(_mm_mul_pd(u, u), _mm_mul_pd(v, v)), _mm_mul_pd(z, z)));
	d[0] = _mm_div_pd(u, n);
	d[1] = _mm_div_pd(v, n);
	d[2] = _mm_div_pd(z, n);
	for (int r = 0; r < 3; r++) {
		__m128d t = _mm_add_pd(_mm_add_pd(_mm_mul_pd(_mm_set1_pd(frame[r * 3 + 0]), d[0]),
		                                  _mm_mul_pd(_mm_set1_pd(frame[r * 3 + 1]), d[1])),
		                       _mm_mul_pd(_mm_set1_pd(frame[r * 3 + 2]), d[2]));
		_mm_storel_pd(&w[r], _mm_mul_pd(len, t));
		_mm_storeh_pd(&w[3 + r], _mm_mul_pd(len, t));
	}
}
#endif

void ptp_strand_points(const ptp_strand_geo_t *g, const double rot[9], const double head_p[3],
                       const double frame[9], const int32_t *codes, int32_t m, double *out)
{
	int i = 0;
	ptp_strand_root(g, rot, head_p, out);
#if !defined(PT_NO_SIMD) && defined(__SSE2__)
	for (; i + 2 < g->points; i += 2) {
		double w[6];
		steps2(g, frame, codes + 2 * i, m, w);
		for (int r = 0; r < 3; r++) {
			out[3 * (i + 1) + r] = out[3 * i + r] + w[r];
			out[3 * (i + 2) + r] = out[3 * (i + 1) + r] + w[3 + r];
		}
	}
#endif
	for (; i + 1 < g->points; i++) {
		double d[3];
		ptp_oct_decode(codes[2 * i], codes[2 * i + 1], m, d);
		ptp_strand_step(g, frame, d, out + 3 * i, out + 3 * (i + 1));
	}
}
