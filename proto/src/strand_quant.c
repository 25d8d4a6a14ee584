/* The encoder's closed loop: every segment's octahedral code, chosen against the point the
 * decoder will have reconstructed so far (PROTOCOL.md 7.3 and 8).
 *
 * The result must equal, bit for bit, what ptp_oct_encode + ptp_strand_step give (and
 * what proto/js/strand.mjs gives): the chosen code decides the bytes, and the
 * reconstructed point feeds the next segment's choice. Every double that reaches the
 * reconstruction is computed with the same IEEE operations, in the same order, as there
 * (divpd, sqrtpd, mulpd, addpd round each lane exactly like the scalar forms; no fused
 * multiply-add is ever used). What changes is how the work is scheduled:
 *
 * - A segment's code depends on the previous point through a division, a floor, another
 *   division, the corner comparison, a square root and a third division: a dependency
 *   chain of well over a hundred cycles per point. Strands are independent, so two
 *   strands go through the loop together, one per SIMD lane: one instruction stream
 *   carries both chains. (Two strands stepped one after the other do not overlap in
 *   practice: the waiting instructions of the first fill the out-of-order window.)
 * - The corners are compared without branches on the data: the winner is picked with
 *   masks in the reference's order of trial, so nothing is mispredicted.
 * - The error is kept squared and rooted once per strand: sqrt is correctly rounded and
 *   monotonic, so the root of the largest square is the largest root.
 *
 * Three kernels, held equal by tests/proto/test_strand_equiv.c: the reference loop (plain
 * C, the only one without SSE2 or with PT_NO_SIMD), SSE2 (every x86-64: the reference's
 * arithmetic for all four corners, side by side), and AVX2 where the CPU has it, which
 * decodes only the winning corner and certifies its choice (see run_avx2).
 */
#include <math.h>
#include <string.h>

#include "strand_internal.h"

#if !defined(PT_NO_SIMD) && defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
#define QUANT_SSE2 1
#include <immintrin.h>
#if defined(__x86_64__) || defined(__i386__)
#define QUANT_AVX2 1
#else
#define QUANT_AVX2 0
#endif
#else
#define QUANT_SSE2 0
#define QUANT_AVX2 0
#endif

/* Squared distance, in the order of the reference's dist(). */
static double dist2(const double a[3], const float b[3])
{
	double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
	return dx * dx + dy * dy + dz * dz;
}

/* The reference: ptp_oct_encode and ptp_strand_step, one strand after the other. */
static void quantise_reference(const ptp_strand_geo_t *geo, int strands, const int *bits,
                               const double rot[9], const double hp[3], const float *pts,
                               int32_t *codes, double *err)
{
	for (int s = 0, p = 0, c = 0; s < strands; s++) {
		const ptp_strand_geo_t *g = &geo[s];
		const float *sp = pts + 3 * p;
		int32_t m = ptp_grid_m(bits[s]);
		double frame[9], prev[3], err2;
		ptp_frame(rot, g->basis, frame);
		ptp_strand_root(g, rot, hp, prev);
		err2 = dist2(prev, sp);
		for (int i = 0; i + 1 < g->points; i++) {
			const float *t = sp + 3 * (i + 1);
			double d[3], l[3], next[3], dir[3], e2;
			for (int r = 0; r < 3; r++)
				d[r] = t[r] - prev[r];
			for (int k = 0; k < 3; k++)
				l[k] =
				    frame[0 + k] * d[0] + frame[3 + k] * d[1] + frame[6 + k] * d[2];
			ptp_oct_encode(l, m, &codes[c + 2 * i], &codes[c + 2 * i + 1], dir);
			ptp_strand_step(g, frame, dir, prev, next);
			e2 = dist2(next, t);
			if (e2 > err2)
				err2 = e2;
			memcpy(prev, next, sizeof prev);
		}
		err[s] = sqrt(err2);
		p += g->points;
		c += 2 * (g->points - 1);
	}
}

#if QUANT_SSE2

/* Two strands' loop state, lane 0 and lane 1 of every pair below. A lane whose strand
 * has fewer segments keeps computing on its last point, but its codes go to scratch and
 * its error is left alone. */
typedef struct lanes_t {
	double f[9][2];    /* frame, row-major */
	double prev[3][2]; /* reconstructed point so far */
	double len[2], md[2], err2[2];
	const float *pts[2]; /* each lane's points, root first */
	int32_t *codes[2];
	int segs[2];
} lanes_t;

static void lanes_init(lanes_t *q, int lane, const ptp_strand_geo_t *g, const double rot[9],
                       const double hp[3], const float *pts, int32_t m, int32_t *codes)
{
	double f[9], root[3];
	ptp_frame(rot, g->basis, f);
	ptp_strand_root(g, rot, hp, root);
	for (int k = 0; k < 9; k++)
		q->f[k][lane] = f[k];
	for (int k = 0; k < 3; k++)
		q->prev[k][lane] = root[k];
	q->len[lane] = g->length;
	q->md[lane] = (double)m;
	q->err2[lane] = dist2(root, pts);
	q->pts[lane] = pts;
	q->codes[lane] = codes;
	q->segs[lane] = g->points - 1;
}

/* Where lane's codes of segment i go, and the point it aims at. */
static inline int32_t *lane_codes(const lanes_t *q, int lane, int i, int32_t *scratch)
{
	return i < q->segs[lane] ? q->codes[lane] + 2 * i : scratch;
}

static inline const float *lane_target(const lanes_t *q, int lane, int i)
{
	return q->pts[lane] + 3 * ((i < q->segs[lane] ? i : q->segs[lane] - 1) + 1);
}

/* codes of one lane: fu + (second pair taken), fv + (second of the pair taken). Bit
 * arithmetic, not a conditional: the choice is data, and a branch on it would be
 * mispredicted half the time, flushing both chains. */
static inline void put_codes(int32_t *c, int32_t fu, int32_t fv, int lane, int gm, int hm, int km)
{
	int j = (hm & km) | (gm & ~km);
	c[0] = fu + ((km >> lane) & 1);
	c[1] = fv + ((j >> lane) & 1);
}

static inline __m128d sel(__m128d mask, __m128d a, __m128d b)
{
	return _mm_or_pd(_mm_and_pd(mask, a), _mm_andnot_pd(mask, b));
}

static inline __m128d pd_abs(__m128d x)
{
	return _mm_andnot_pd(_mm_set1_pd(-0.0), x);
}

/* The sign bit where x < 0 (not for -0: sgn 0 = +1 in PROTOCOL.md 7.3). */
static inline __m128d neg_sign(__m128d x)
{
	return _mm_and_pd(_mm_cmplt_pd(x, _mm_setzero_pd()), _mm_set1_pd(-0.0));
}

/* ptp_oct_decode of the corner (x, y) (coordinates already c / m) into dir, and its dot
 * product with l. one_ax = 1 - |x|, sx = neg_sign(x) and so on are shared by corners. */
static inline __m128d corner(__m128d x, __m128d one_ax, __m128d sx, __m128d y, __m128d ay,
                             __m128d one_ay, __m128d sy, __m128d l0, __m128d l1, __m128d l2,
                             __m128d *dx, __m128d *dy, __m128d *dz)
{
	__m128d z = _mm_sub_pd(one_ax, ay), fold = _mm_cmplt_pd(z, _mm_setzero_pd()), n;
	/* (1 - |y|) sgn x, (1 - |x|) sgn y from the unfolded values; the product with +-1
	 * is a sign flip, exactly */
	x = sel(fold, _mm_xor_pd(one_ay, sx), x);
	y = sel(fold, _mm_xor_pd(one_ax, sy), y);
	n = _mm_sqrt_pd(
	    _mm_add_pd(_mm_add_pd(_mm_mul_pd(x, x), _mm_mul_pd(y, y)), _mm_mul_pd(z, z)));
	*dx = _mm_div_pd(x, n);
	*dy = _mm_div_pd(y, n);
	*dz = _mm_div_pd(z, n);
	return _mm_add_pd(_mm_add_pd(_mm_mul_pd(*dx, l0), _mm_mul_pd(*dy, l1)),
	                  _mm_mul_pd(*dz, l2));
}

/* The SSE2 kernel, two strands in the two lanes of each register. Written out without
 * arrays or loops over components: the compiler then keeps the vectors in registers. */
static void run_sse2(lanes_t *q, int steps, int32_t *scratch)
{
	const __m128d one = _mm_set1_pd(1.0), zero = _mm_setzero_pd();
	/* 1.5 * 2^52: adding and subtracting it rounds a double of magnitude < 2^51 to an
	 * integer (to nearest), exactly */
	const __m128d magic = _mm_set1_pd(6755399441055744.0), ninf = _mm_set1_pd(-INFINITY);
	const __m128d md = _mm_loadu_pd(q->md), len = _mm_loadu_pd(q->len);
	__m128d p0 = _mm_loadu_pd(q->prev[0]), p1 = _mm_loadu_pd(q->prev[1]);
	__m128d p2 = _mm_loadu_pd(q->prev[2]), err2 = _mm_loadu_pd(q->err2);
	for (int i = 0; i < steps; i++) {
		const float *ta = lane_target(q, 0, i), *tb = lane_target(q, 1, i);
		const __m128d t0 = _mm_set_pd((double)tb[0], (double)ta[0]);
		const __m128d t1 = _mm_set_pd((double)tb[1], (double)ta[1]);
		const __m128d t2 = _mm_set_pd((double)tb[2], (double)ta[2]);
		__m128d d0 = _mm_sub_pd(t0, p0), d1 = _mm_sub_pd(t1, p1), d2 = _mm_sub_pd(t2, p2);
		__m128d l0, l1, l2, s, u, v, fu, fv, xa, xb, ya, yb, inv_u, inv_v, g, h, k;
		__m128d n0, n1, n2;

		/* l = frame^T d, each component ((a + b) + c) as in the reference */
		l0 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(_mm_loadu_pd(q->f[0]), d0),
		                           _mm_mul_pd(_mm_loadu_pd(q->f[3]), d1)),
		                _mm_mul_pd(_mm_loadu_pd(q->f[6]), d2));
		l1 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(_mm_loadu_pd(q->f[1]), d0),
		                           _mm_mul_pd(_mm_loadu_pd(q->f[4]), d1)),
		                _mm_mul_pd(_mm_loadu_pd(q->f[7]), d2));
		l2 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(_mm_loadu_pd(q->f[2]), d0),
		                           _mm_mul_pd(_mm_loadu_pd(q->f[5]), d1)),
		                _mm_mul_pd(_mm_loadu_pd(q->f[8]), d2));

		/* projection onto the octahedron; s = 0 (l = 0) gives (0, 0) like the reference */
		s = _mm_add_pd(_mm_add_pd(pd_abs(l0), pd_abs(l1)), pd_abs(l2));
		{
			__m128d pos = _mm_cmpgt_pd(s, zero), lower = _mm_cmplt_pd(l2, zero), au, av;
			u = _mm_and_pd(_mm_div_pd(l0, s), pos);
			v = _mm_and_pd(_mm_div_pd(l1, s), pos);
			/* lower hemisphere: (1 - |v|) sgn u, (1 - |u|) sgn v */
			au = pd_abs(u);
			av = pd_abs(v);
			u = sel(lower, _mm_xor_pd(_mm_sub_pd(one, av), neg_sign(u)), u);
			v = sel(lower, _mm_xor_pd(_mm_sub_pd(one, au), neg_sign(v)), v);
		}
		/* floor(u m), floor(v m): |u m| <= m < 2^15, so the magic rounding is exact and
		 * at most one too high; never -0, like (double) of an int */
		{
			__m128d yu = _mm_mul_pd(u, md), yv = _mm_mul_pd(v, md);
			__m128d ru = _mm_sub_pd(_mm_add_pd(yu, magic), magic);
			__m128d rv = _mm_sub_pd(_mm_add_pd(yv, magic), magic);
			fu = _mm_sub_pd(ru, _mm_and_pd(_mm_cmpgt_pd(ru, yu), one));
			fv = _mm_sub_pd(rv, _mm_and_pd(_mm_cmpgt_pd(rv, yv), one));
		}
		/* the corners' coordinates, ptp_oct_decode's (double)c / m */
		{
			__m128d u1 = _mm_add_pd(fu, one), v1 = _mm_add_pd(fv, one);
			xa = _mm_div_pd(fu, md);
			xb = _mm_div_pd(u1, md);
			ya = _mm_div_pd(fv, md);
			yb = _mm_div_pd(v1, md);
			/* corners beyond m are skipped by the reference: never picked here */
			inv_u = _mm_cmpgt_pd(u1, md);
			inv_v = _mm_cmpgt_pd(v1, md);
		}
		/* The reference tries (fu, fv), (fu, fv + 1), (fu + 1, fv), (fu + 1, fv + 1) and
		 * keeps the first largest dot product (strict >). Same result: the first largest
		 * of each pair, then the second pair's only if strictly larger. */
		{
			const __m128d one_xa = _mm_sub_pd(one, pd_abs(xa)), sxa = neg_sign(xa);
			const __m128d one_xb = _mm_sub_pd(one, pd_abs(xb)), sxb = neg_sign(xb);
			const __m128d aya = pd_abs(ya), one_ya = _mm_sub_pd(one, aya);
			const __m128d ayb = pd_abs(yb), one_yb = _mm_sub_pd(one, ayb);
			const __m128d sya = neg_sign(ya), syb = neg_sign(yb);
			__m128d c0, c1, ax, ay, az, bx, by, bz, best_a, best_b;
			c0 = corner(xa, one_xa, sxa, ya, aya, one_ya, sya, l0, l1, l2, &ax, &ay,
			            &az);
			c1 = corner(xa, one_xa, sxa, yb, ayb, one_yb, syb, l0, l1, l2, &bx, &by,
			            &bz);
			c1 = sel(inv_v, ninf, c1);
			g = _mm_cmpgt_pd(c1, c0);
			best_a = sel(g, c1, c0);
			n0 = sel(g, bx, ax);
			n1 = sel(g, by, ay);
			n2 = sel(g, bz, az);
			c0 = corner(xb, one_xb, sxb, ya, aya, one_ya, sya, l0, l1, l2, &ax, &ay,
			            &az);
			c1 = corner(xb, one_xb, sxb, yb, ayb, one_yb, syb, l0, l1, l2, &bx, &by,
			            &bz);
			c0 = sel(inv_u, ninf, c0);
			c1 = sel(_mm_or_pd(inv_u, inv_v), ninf, c1);
			h = _mm_cmpgt_pd(c1, c0);
			best_b = sel(h, c1, c0);
			k = _mm_cmpgt_pd(best_b, best_a);
			n0 = sel(k, sel(h, bx, ax), n0);
			n1 = sel(k, sel(h, by, ay), n1);
			n2 = sel(k, sel(h, bz, az), n2);
		}
		{
			int gm = _mm_movemask_pd(g), hm = _mm_movemask_pd(h),
			    km = _mm_movemask_pd(k);
			__m128i iu = _mm_cvttpd_epi32(fu), iv = _mm_cvttpd_epi32(fv);
			put_codes(lane_codes(q, 0, i, scratch), _mm_cvtsi128_si32(iu),
			          _mm_cvtsi128_si32(iv), 0, gm, hm, km);
			put_codes(lane_codes(q, 1, i, scratch),
			          _mm_cvtsi128_si32(_mm_srli_si128(iu, 4)),
			          _mm_cvtsi128_si32(_mm_srli_si128(iv, 4)), 1, gm, hm, km);
		}
		/* ptp_strand_step: next = prev + length * (frame * dir), then its squared error */
		{
			__m128d w0 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(_mm_loadu_pd(q->f[0]), n0),
			                                   _mm_mul_pd(_mm_loadu_pd(q->f[1]), n1)),
			                        _mm_mul_pd(_mm_loadu_pd(q->f[2]), n2));
			__m128d w1 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(_mm_loadu_pd(q->f[3]), n0),
			                                   _mm_mul_pd(_mm_loadu_pd(q->f[4]), n1)),
			                        _mm_mul_pd(_mm_loadu_pd(q->f[5]), n2));
			__m128d w2 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(_mm_loadu_pd(q->f[6]), n0),
			                                   _mm_mul_pd(_mm_loadu_pd(q->f[7]), n1)),
			                        _mm_mul_pd(_mm_loadu_pd(q->f[8]), n2));
			__m128d e0, e1, e2, ee, active;
			p0 = _mm_add_pd(p0, _mm_mul_pd(len, w0));
			p1 = _mm_add_pd(p1, _mm_mul_pd(len, w1));
			p2 = _mm_add_pd(p2, _mm_mul_pd(len, w2));
			e0 = _mm_sub_pd(p0, t0);
			e1 = _mm_sub_pd(p1, t1);
			e2 = _mm_sub_pd(p2, t2);
			ee = _mm_add_pd(_mm_add_pd(_mm_mul_pd(e0, e0), _mm_mul_pd(e1, e1)),
			                _mm_mul_pd(e2, e2));
			active = _mm_castsi128_pd(
			    _mm_set_epi64x(-(int64_t)(i < q->segs[1]), -(int64_t)(i < q->segs[0])));
			err2 = sel(_mm_and_pd(active, _mm_cmpgt_pd(ee, err2)), ee, err2);
		}
	}
	_mm_storeu_pd(q->err2, err2);
}

#endif /* QUANT_SSE2 */

#if QUANT_AVX2

#define AVX2 __attribute__((target("avx2")))

/* The AVX2 kernel decides the winning corner without decoding all four.
 *
 * The reference compares dot_c = fl(p_c / fl(sqrt(N_c))) . l, where p_c = (X, Y, Z) is the
 * corner's point on the octahedron (after the fold) and N_c = fl(X^2 + Y^2 + Z^2): three
 * divisions and a square root per corner. The exact real D_c = (p_c . l) / sqrt(N_c)
 * differs from dot_c by at most E = 5.1u |l| (u = 2^-53: five roundings on each term of
 * the sum; |p_c| <= sqrt(N_c) (1 + 2u)). The kernel computes A_c = fl(p_c . l) instead,
 * |A_c - p_c . l| <= 3.1u sqrt(N_c) |l|, and compares corners i, j through
 *   T = fl(S_i N_j) - fl(S_j N_i),  S = fl(A |A|),
 * whose sign is that of A_i/sqrt(N_i) - A_j/sqrt(N_j) (x|x| is monotonic): only
 * multiplications. Carrying the bounds through (|x|x| - y|y|| <= |x - y| (|x| + |y|),
 * |A_c| <= (1 + 5.2u) sqrt(N_c) |l|), |T| > 36.9u |l|^2 N_i N_j guarantees that dot_i - dot_j
 * is nonzero and has the sign of T. The kernel asks for |T| > 2^-44 s^2 N_i N_j (s, the
 * projection's |l|_1, is >= |l|_2 / (1 + 2u)): about 14 times that margin, which also
 * covers the roundings of the threshold itself; s is kept in [2^-200, 2^200] so that no
 * product under- or overflows.
 *
 * The winner is taken from the signs of T like the reference takes it from the dot
 * products (first largest of each pair, the second pair only if strictly larger), and it
 * is certified against each other valid corner by that margin. When a certificate fails
 * (near-ties: rare, they need l within about 1e-13 of a bisector), that step is redone
 * with the exact dot products of all four corners. Only the winner is then decoded
 * exactly (its square root is started early, for all four corners, to keep it off the
 * critical path), which is what moves the reconstruction on. */
/* One corner of the cell for both strands (one per lane): its point p = (X, Y, Z) after
 * the fold, N = X^2 + Y^2 + Z^2 exactly as ptp_oct_decode computes them, and for the
 * filter A = p . l and S = A |A|. */
typedef struct corner_t {
	__m128d X, Y, Z, N, S;
} corner_t;

/* x, y: the corner's coordinates c / m; one_x = 1 - |x|, sx = the sign bit where x < 0
 * (sgn 0 = +1), likewise for y. */
AVX2 static inline corner_t corner_at(__m128d x, __m128d one_x, __m128d sx, __m128d y, __m128d ay,
                                      __m128d one_y, __m128d sy, __m128d l0, __m128d l1, __m128d l2)
{
	corner_t c;
	__m128d fold, A;
	c.Z = _mm_sub_pd(one_x, ay);
	c.X = x;
	c.Y = y;
	fold = _mm_cmplt_pd(c.Z, _mm_setzero_pd());
	if (_mm_movemask_pd(fold)) {
		/* (1 - |y|) sgn x, (1 - |x|) sgn y from the unfolded values; the product with +-1
		 * is a sign flip, exactly. Rare (near the equator), hence a branch. */
		c.X = _mm_blendv_pd(x, _mm_xor_pd(one_y, sx), fold);
		c.Y = _mm_blendv_pd(y, _mm_xor_pd(one_x, sy), fold);
	}
	c.N = _mm_add_pd(_mm_add_pd(_mm_mul_pd(c.X, c.X), _mm_mul_pd(c.Y, c.Y)),
	                 _mm_mul_pd(c.Z, c.Z));
	A = _mm_add_pd(_mm_add_pd(_mm_mul_pd(c.X, l0), _mm_mul_pd(c.Y, l1)), _mm_mul_pd(c.Z, l2));
	c.S = _mm_mul_pd(A, pd_abs(A));
	return c;
}

/* T_ij = S_i N_j - S_j N_i: positive when i beats j (see above) */
AVX2 static inline __m128d beats(const corner_t *i, const corner_t *j)
{
	return _mm_sub_pd(_mm_mul_pd(i->S, j->N), _mm_mul_pd(j->S, i->N));
}

/* S_i N_j > S_j N_i, which is T_ij > 0 */
AVX2 static inline __m128d above(const corner_t *i, const corner_t *j)
{
	return _mm_cmpgt_pd(_mm_mul_pd(i->S, j->N), _mm_mul_pd(j->S, i->N));
}

/* |T_ij| > 2^-44 s^2 N_i N_j (s2 = 2^-44 s^2): the sign of T_ij is the reference's */
AVX2 static inline __m128d certain(__m128d t, const corner_t *i, const corner_t *j, __m128d s2)
{
	return _mm_cmpgt_pd(pd_abs(t), _mm_mul_pd(_mm_mul_pd(s2, i->N), j->N));
}

/* The reference's dot product of a corner with l: fl(p / sqrt(N)) . l, in its order. */
AVX2 static inline __m128d exact_dot(const corner_t *c, __m128d n, __m128d l0, __m128d l1,
                                     __m128d l2)
{
	return _mm_add_pd(
	    _mm_add_pd(_mm_mul_pd(_mm_div_pd(c->X, n), l0), _mm_mul_pd(_mm_div_pd(c->Y, n), l1)),
	    _mm_mul_pd(_mm_div_pd(c->Z, n), l2));
}

/* a where mask (per lane), else b */
AVX2 static inline __m128d pick(__m128d mask, __m128d a, __m128d b)
{
	return _mm_blendv_pd(b, a, mask);
}

AVX2 static void run_avx2(lanes_t *q, int steps, int32_t *scratch)
{
	const __m128d one = _mm_set1_pd(1.0), zero = _mm_setzero_pd();
	const __m128d s_min = _mm_set1_pd(0x1p-200), s_max = _mm_set1_pd(0x1p+200);
	const __m128d md = _mm_loadu_pd(q->md), len = _mm_loadu_pd(q->len);
	__m128d f[9];
	__m128d p0 = _mm_loadu_pd(q->prev[0]), p1 = _mm_loadu_pd(q->prev[1]);
	__m128d p2 = _mm_loadu_pd(q->prev[2]), err2 = _mm_loadu_pd(q->err2);
	for (int k = 0; k < 9; k++)
		f[k] = _mm_loadu_pd(q->f[k]);
	for (int i = 0; i < steps; i++) {
		const float *ta = lane_target(q, 0, i), *tb = lane_target(q, 1, i);
		const __m128d t0 = _mm_set_pd((double)tb[0], (double)ta[0]);
		const __m128d t1 = _mm_set_pd((double)tb[1], (double)ta[1]);
		const __m128d t2 = _mm_set_pd((double)tb[2], (double)ta[2]);
		__m128d d0 = _mm_sub_pd(t0, p0), d1 = _mm_sub_pd(t1, p1), d2 = _mm_sub_pd(t2, p2);
		__m128d l0, l1, l2, s, u, v, fu, fv, iu, iv, g, h, k, n[4], nw, dx, dy, dz;
		corner_t c[4], w;
		int ok;

		/* l = frame^T d, each component ((a + b) + c) as in the reference */
		l0 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(f[0], d0), _mm_mul_pd(f[3], d1)),
		                _mm_mul_pd(f[6], d2));
		l1 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(f[1], d0), _mm_mul_pd(f[4], d1)),
		                _mm_mul_pd(f[7], d2));
		l2 = _mm_add_pd(_mm_add_pd(_mm_mul_pd(f[2], d0), _mm_mul_pd(f[5], d1)),
		                _mm_mul_pd(f[8], d2));
		/* projection onto the octahedron; s = 0 (l = 0) gives (0, 0) like the reference.
		 * floor(u m) below is exact, but floor(-0) is -0 where the reference has
		 * (double)(int32_t)floor(-0) = +0: so u must never be -0. Adding +0 turns -0 into
		 * +0 and leaves every other value alone; done to l0, l1 before the division, it
		 * runs alongside s instead of lengthening the chain. */
		s = _mm_add_pd(_mm_add_pd(pd_abs(l0), pd_abs(l1)), pd_abs(l2));
		{
			__m128d pos = _mm_cmpgt_pd(s, zero), lower = _mm_cmplt_pd(l2, zero);
			u = _mm_and_pd(_mm_div_pd(_mm_add_pd(l0, zero), s), pos);
			v = _mm_and_pd(_mm_div_pd(_mm_add_pd(l1, zero), s), pos);
			/* lower hemisphere: (1 - |v|) sgn u, (1 - |u|) sgn v; a branch, as strands
			 * rarely point away from their rest direction */
			if (_mm_movemask_pd(lower)) {
				__m128d au = pd_abs(u), av = pd_abs(v);
				u = pick(lower, _mm_xor_pd(_mm_sub_pd(one, av), neg_sign(u)), u);
				v = pick(lower, _mm_xor_pd(_mm_sub_pd(one, au), neg_sign(v)), v);
				u = _mm_add_pd(u, zero); /* (1 - 1) * -1 is -0 */
				v = _mm_add_pd(v, zero);
			}
		}
		fu = _mm_floor_pd(_mm_mul_pd(u, md));
		fv = _mm_floor_pd(_mm_mul_pd(v, md));
		/* corners beyond m are skipped by the reference: (fu + 1 > m) rules out corners
		 * 2 and 3, (fv + 1 > m) corners 1 and 3 */
		{
			__m128d fu1 = _mm_add_pd(fu, one), fv1 = _mm_add_pd(fv, one);
			/* ptp_oct_decode's (double)c / m */
			__m128d xa = _mm_div_pd(fu, md), xb = _mm_div_pd(fu1, md);
			__m128d ya = _mm_div_pd(fv, md), yb = _mm_div_pd(fv1, md);
			__m128d one_xa = _mm_sub_pd(one, pd_abs(xa)),
			        one_xb = _mm_sub_pd(one, pd_abs(xb));
			__m128d aya = pd_abs(ya), ayb = pd_abs(yb);
			__m128d one_ya = _mm_sub_pd(one, aya), one_yb = _mm_sub_pd(one, ayb);
			__m128d sxa = neg_sign(xa), sxb = neg_sign(xb), sya = neg_sign(ya),
			        syb = neg_sign(yb);
			iu = _mm_cmpgt_pd(fu1, md);
			iv = _mm_cmpgt_pd(fv1, md);
			/* corner 2a + b is (fu + a, fv + b): the reference's order of trial */
			c[0] = corner_at(xa, one_xa, sxa, ya, aya, one_ya, sya, l0, l1, l2);
			c[1] = corner_at(xa, one_xa, sxa, yb, ayb, one_yb, syb, l0, l1, l2);
			c[2] = corner_at(xb, one_xb, sxb, ya, aya, one_ya, sya, l0, l1, l2);
			c[3] = corner_at(xb, one_xb, sxb, yb, ayb, one_yb, syb, l0, l1, l2);
		}
		/* the square roots for all four, early: the winner's is needed right after */
		n[0] = _mm_sqrt_pd(c[0].N);
		n[1] = _mm_sqrt_pd(c[1].N);
		n[2] = _mm_sqrt_pd(c[2].N);
		n[3] = _mm_sqrt_pd(c[3].N);
		{
			/* The decision as the reference makes it (first largest of each pair, the
			 * second pair only if strictly larger), then its certificate: the winner
			 * against every other valid corner, per lane (bit 0 strand a, 1 strand b).
			 */
			__m128d t10 = beats(&c[1], &c[0]), t32 = beats(&c[3], &c[2]);
			__m128d t20 = beats(&c[2], &c[0]), t21 = beats(&c[2], &c[1]);
			__m128d t30 = beats(&c[3], &c[0]), t31 = beats(&c[3], &c[1]);
			__m128d s2 = _mm_mul_pd(_mm_set1_pd(0x1p-44), _mm_mul_pd(s, s));
			int G, H, K, IU = _mm_movemask_pd(iu), IV = _mm_movemask_pd(iv);
			int C10 = _mm_movemask_pd(certain(t10, &c[1], &c[0], s2));
			int C32 = _mm_movemask_pd(certain(t32, &c[3], &c[2], s2));
			int C20 = _mm_movemask_pd(certain(t20, &c[2], &c[0], s2));
			int C21 = _mm_movemask_pd(certain(t21, &c[2], &c[1], s2));
			int C30 = _mm_movemask_pd(certain(t30, &c[3], &c[0], s2));
			int C31 = _mm_movemask_pd(certain(t31, &c[3], &c[1], s2));
			/* for the decision the products are compared directly: S_i N_j > S_j N_i is
			 * t_ij > 0 one subtraction sooner (the chain runs through here) */
			g = _mm_andnot_pd(iv, above(&c[1], &c[0]));
			h = _mm_andnot_pd(iv, above(&c[3], &c[2]));
			k = _mm_andnot_pd(iu,
			                  pick(h, pick(g, above(&c[3], &c[1]), above(&c[3], &c[0])),
			                       pick(g, above(&c[2], &c[1]), above(&c[2], &c[0]))));
			G = _mm_movemask_pd(g), H = _mm_movemask_pd(h), K = _mm_movemask_pd(k);
			ok = (~K & ~G & (C10 | IV) & (C20 | IU) & (C30 | IU | IV)) |
			     (~K & G & C10 & (C21 | IU) & (C31 | IU | IV)) |
			     (K & ~H & C20 & (C21 | IV) & (C32 | IV)) | (K & H & C30 & C31 & C32);
			ok &= _mm_movemask_pd(
			    _mm_and_pd(_mm_cmpge_pd(s, s_min), _mm_cmple_pd(s, s_max)));
		}
		if (ok != 3) {
			/* a near-tie (or l ~ 0): the reference's own comparison of dot products */
			const __m128d ninf = _mm_set1_pd(-INFINITY);
			__m128d e0 = exact_dot(&c[0], n[0], l0, l1, l2);
			__m128d e1 = pick(iv, ninf, exact_dot(&c[1], n[1], l0, l1, l2));
			__m128d e2 = pick(iu, ninf, exact_dot(&c[2], n[2], l0, l1, l2));
			__m128d e3 =
			    pick(_mm_or_pd(iu, iv), ninf, exact_dot(&c[3], n[3], l0, l1, l2));
			g = _mm_cmpgt_pd(e1, e0);
			h = _mm_cmpgt_pd(e3, e2);
			k = _mm_cmpgt_pd(pick(h, e3, e2), pick(g, e1, e0));
		}
		/* the winner: first of each pair by g, h, then by k */
		w.X = pick(k, pick(h, c[3].X, c[2].X), pick(g, c[1].X, c[0].X));
		w.Y = pick(k, pick(h, c[3].Y, c[2].Y), pick(g, c[1].Y, c[0].Y));
		w.Z = pick(k, pick(h, c[3].Z, c[2].Z), pick(g, c[1].Z, c[0].Z));
		nw = pick(k, pick(h, n[3], n[2]), pick(g, n[1], n[0]));
		{
			int gm = _mm_movemask_pd(g), hm = _mm_movemask_pd(h),
			    km = _mm_movemask_pd(k);
			__m128i iu32 = _mm_cvttpd_epi32(fu), iv32 = _mm_cvttpd_epi32(fv);
			put_codes(lane_codes(q, 0, i, scratch), _mm_cvtsi128_si32(iu32),
			          _mm_cvtsi128_si32(iv32), 0, gm, hm, km);
			put_codes(lane_codes(q, 1, i, scratch), _mm_extract_epi32(iu32, 1),
			          _mm_extract_epi32(iv32, 1), 1, gm, hm, km);
		}
		/* ptp_oct_decode's division of the winner, then ptp_strand_step:
		 * next = prev + length * (frame * dir) */
		dx = _mm_div_pd(w.X, nw);
		dy = _mm_div_pd(w.Y, nw);
		dz = _mm_div_pd(w.Z, nw);
		p0 = _mm_add_pd(p0, _mm_mul_pd(len, _mm_add_pd(_mm_add_pd(_mm_mul_pd(f[0], dx),
		                                                          _mm_mul_pd(f[1], dy)),
		                                               _mm_mul_pd(f[2], dz))));
		p1 = _mm_add_pd(p1, _mm_mul_pd(len, _mm_add_pd(_mm_add_pd(_mm_mul_pd(f[3], dx),
		                                                          _mm_mul_pd(f[4], dy)),
		                                               _mm_mul_pd(f[5], dz))));
		p2 = _mm_add_pd(p2, _mm_mul_pd(len, _mm_add_pd(_mm_add_pd(_mm_mul_pd(f[6], dx),
		                                                          _mm_mul_pd(f[7], dy)),
		                                               _mm_mul_pd(f[8], dz))));
		{
			__m128d e0 = _mm_sub_pd(p0, t0), e1 = _mm_sub_pd(p1, t1),
			        e2 = _mm_sub_pd(p2, t2);
			__m128d ee = _mm_add_pd(_mm_add_pd(_mm_mul_pd(e0, e0), _mm_mul_pd(e1, e1)),
			                        _mm_mul_pd(e2, e2));
			__m128d active = _mm_castsi128_pd(
			    _mm_set_epi64x(-(int64_t)(i < q->segs[1]), -(int64_t)(i < q->segs[0])));
			err2 = pick(_mm_and_pd(active, _mm_cmpgt_pd(ee, err2)), ee, err2);
		}
	}
	_mm_storeu_pd(q->err2, err2);
}

static int have_avx2(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2");
}

#endif /* QUANT_AVX2 */

int ptp_quant_available(int kernel)
{
	switch (kernel) {
	case PTP_QUANT_AUTO:
	case PTP_QUANT_REFERENCE:
		return 1;
#if QUANT_SSE2
	case PTP_QUANT_SSE2:
		return 1;
#endif
#if QUANT_AVX2
	case PTP_QUANT_AVX2:
		return have_avx2();
#endif
	default:
		return 0;
	}
}

void ptp_quantise(int kernel, const ptp_strand_geo_t *geo, int strands, const int *bits,
                  const double rot[9], const double hp[3], const float *pts, int32_t *codes,
                  double *err)
{
#if QUANT_SSE2
	int p[PTP_MAX_STRANDS + 1], c[PTP_MAX_STRANDS + 1];
	int32_t scratch[2];
	if (kernel == PTP_QUANT_AUTO)
		kernel = QUANT_AVX2 && ptp_quant_available(PTP_QUANT_AVX2) ? PTP_QUANT_AVX2
		                                                           : PTP_QUANT_SSE2;
	if (kernel == PTP_QUANT_REFERENCE || !ptp_quant_available(kernel)) {
		quantise_reference(geo, strands, bits, rot, hp, pts, codes, err);
		return;
	}
	p[0] = c[0] = 0;
	for (int s = 0; s < strands; s++) {
		p[s + 1] = p[s] + geo[s].points;
		c[s + 1] = c[s] + 2 * (geo[s].points - 1);
	}
	/* Strands two at a time; an odd last one runs in both lanes, stored once. */
	for (int s = 0; s < strands; s += 2) {
		int b = s + 1 < strands ? s + 1 : s;
		lanes_t q;
		lanes_init(&q, 0, &geo[s], rot, hp, pts + 3 * p[s], ptp_grid_m(bits[s]),
		           codes + c[s]);
		lanes_init(&q, 1, &geo[b], rot, hp, pts + 3 * p[b], ptp_grid_m(bits[b]),
		           codes + c[b]);
		if (b == s)
			q.segs[1] = 0; /* the copy: computed, never stored */
#if QUANT_AVX2
		if (kernel == PTP_QUANT_AVX2)
			run_avx2(&q,
			         geo[s].points > geo[b].points ? geo[s].points - 1
			                                       : geo[b].points - 1,
			         scratch);
		else
#endif
			run_sse2(&q,
			         geo[s].points > geo[b].points ? geo[s].points - 1
			                                       : geo[b].points - 1,
			         scratch);
		err[s] = sqrt(q.err2[0]);
		if (b != s)
			err[b] = sqrt(q.err2[1]);
	}
#else
	(void)kernel;
	quantise_reference(geo, strands, bits, rot, hp, pts, codes, err);
#endif
}
