/* The AVX2 kernel of the encoder's closed loop (see strand_quant.c for the loop, its
 * bit-exactness rule and the other two kernels): the SSE2 kernel's two strands per
 * register pair, but only the winning corner decoded. Built only where the compiler has
 * SSE2 intrinsics (QUANT_AVX2, strand_quant.h); ptp_quantise calls it when the CPU has
 * AVX2. */
#include <math.h>

#include "strand_quant.h"

#if QUANT_AVX2

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

AVX2 void ptp_quant_run_avx2(lanes_t *q, int steps, int32_t *scratch)
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

#else
/* Nothing to build without AVX2: ISO C wants a translation unit to declare something. */
typedef int ptp_strand_quant_avx2_unused;
#endif /* QUANT_AVX2 */
