/* The AVX2 kernel of the encoder's closed loop (see strand_quant.c for the loop, its
 * bit-exactness rule and the other two kernels): four strands, one per lane of each
 * 256-bit register, and only the winning corner decoded. Built only where the compiler has
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
/*
 * Layout: the four strands are the four lanes of every register; each value of the
 * scalar form (l0, u, the corners' X, N, ...) has its own register. The chain of a
 * segment is over a hundred cycles of latency (three divisions, a square root, the
 * comparisons), and the divider is idle most of that time: four strands per chain
 * instead of two halve the chains an instance needs (three strands: one instead of
 * two). Every lane still gets exactly the operations, operands and order of the scalar
 * form.
 */

typedef __m256d v4;

AVX2 static inline v4 load4(const double *p)
{
	return _mm256_loadu_pd(p);
}

/* (a0 b0 + a1 b1) + a2 b2, as the reference sums three products */
AVX2 static inline v4 dot3(v4 a0, v4 b0, v4 a1, v4 b1, v4 a2, v4 b2)
{
	return _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(a0, b0), _mm256_mul_pd(a1, b1)),
	                     _mm256_mul_pd(a2, b2));
}

/* A corner's point p = (X, Y, Z) after ptp_oct_decode's fold. x, y: its coordinates
 * c / m; one_x = 1 - |x|, sx = the sign bit where x < 0 (sgn 0 = +1), likewise for y. */
typedef struct cell_axis_t {
	v4 c, one, sgn, abs; /* c / m, 1 - |c / m|, its sign bit, |c / m| */
} cell_axis_t;

AVX2 static inline cell_axis_t axis_of(v4 c)
{
	const v4 one = _mm256_set1_pd(1.0);
	cell_axis_t a = {c, one, neg_sign4(c), abs4(c)};
	a.one = _mm256_sub_pd(one, a.abs);
	return a;
}

AVX2 static inline void corner_point(const cell_axis_t *x, const cell_axis_t *y, v4 *X, v4 *Y,
                                     v4 *Z)
{
	v4 fold;
	*Z = _mm256_sub_pd(x->one, y->abs);
	*X = x->c;
	*Y = y->c;
	fold = _mm256_cmp_pd(*Z, _mm256_setzero_pd(), _CMP_LT_OQ);
	if (_mm256_movemask_pd(fold)) {
		/* (1 - |y|) sgn x, (1 - |x|) sgn y from the unfolded values; the product with +-1
		 * is a sign flip, exactly. Rare (near the equator), hence a branch. */
		*X = pick4(fold, _mm256_xor_pd(y->one, x->sgn), x->c);
		*Y = pick4(fold, _mm256_xor_pd(x->one, y->sgn), y->c);
	}
}

/* What the filter needs of a corner: N = X^2 + Y^2 + Z^2 exactly as ptp_oct_decode
 * computes it, and S = A |A| for A = p . l. */
typedef struct corner4_t {
	v4 N, S;
} corner4_t;

AVX2 static inline corner4_t corner_at(const cell_axis_t *x, const cell_axis_t *y, v4 l0, v4 l1,
                                       v4 l2)
{
	corner4_t c;
	v4 X, Y, Z, A;
	corner_point(x, y, &X, &Y, &Z);
	c.N = dot3(X, X, Y, Y, Z, Z);
	A = dot3(X, l0, Y, l1, Z, l2);
	c.S = _mm256_mul_pd(A, abs4(A));
	return c;
}

/* Per lane, where |t| > (s2 ni) nj does not hold for t = sinj - sjni = S_i N_j - S_j N_i
 * (s2 = 2^-44 s^2): where the sign of t is not certainly the reference's. NGT_UQ is the
 * exact complement of GT_OQ. */
AVX2 static inline v4 uncertain(v4 sinj, v4 sjni, v4 ni, v4 nj, v4 s2)
{
	return _mm256_cmp_pd(abs4(_mm256_sub_pd(sinj, sjni)),
	                     _mm256_mul_pd(_mm256_mul_pd(s2, ni), nj), _CMP_NGT_UQ);
}

/* The reference's dot product of corner (x, y) with l: fl(p / sqrt(N)) . l, in its
 * order. */
AVX2 static inline v4 exact_dot(const cell_axis_t *x, const cell_axis_t *y, v4 l0, v4 l1, v4 l2)
{
	v4 X, Y, Z, n;
	corner_point(x, y, &X, &Y, &Z);
	n = _mm256_sqrt_pd(dot3(X, X, Y, Y, Z, Z));
	return dot3(_mm256_div_pd(X, n), l0, _mm256_div_pd(Y, n), l1, _mm256_div_pd(Z, n), l2);
}

/* The four lanes' targets t[j] (floats, widened as the reference does) as x, y, z rows */
AVX2 static inline void targets(const float *const t[4], v4 out[3])
{
	out[0] = _mm256_setr_pd((double)t[0][0], (double)t[1][0], (double)t[2][0], (double)t[3][0]);
	out[1] = _mm256_setr_pd((double)t[0][1], (double)t[1][1], (double)t[2][1], (double)t[3][1]);
	out[2] = _mm256_setr_pd((double)t[0][2], (double)t[1][2], (double)t[2][2], (double)t[3][2]);
}

/* Lane j's codes of one segment, cu[j] and cv[j], to c[j] (two ints each). */
AVX2 static inline void store_codes(int32_t *const c[4], __m128i cu, __m128i cv)
{
	__m128i lo = _mm_unpacklo_epi32(cu, cv), hi = _mm_unpackhi_epi32(cu, cv);
	_mm_storel_epi64((__m128i *)c[0], lo);
	_mm_storeh_pd((double *)c[1], _mm_castsi128_pd(lo));
	_mm_storel_epi64((__m128i *)c[2], hi);
	_mm_storeh_pd((double *)c[3], _mm_castsi128_pd(hi));
}

/* The loop's state kept in registers across segments: the reconstructed point and the
 * largest squared error. */
typedef struct state4_t {
	v4 p0, p1, p2, err2;
} state4_t;

/* Which of a cell's corners wins (k: the second pair, m: the second of its pair), as the
 * reference decides: the first largest of each pair, the second pair only if strictly
 * larger. From the filter's S and N when the certificate holds, else from the exact dot
 * products. */
AVX2 static inline __attribute__((always_inline)) void
decide(const corner4_t *c0, const corner4_t *c1, const corner4_t *c2, const corner4_t *c3,
       const cell_axis_t ax[4], v4 iu, v4 iv, v4 s, v4 l0, v4 l1, v4 l2, v4 *k_out, v4 *m_out)
{
	const v4 ones = _mm256_castsi256_pd(_mm256_set1_epi32(-1));
	/* i beats j when S_i N_j > S_j N_i; for the decision the products are compared
	 * directly (one subtraction sooner: the chain runs through here) */
	v4 s1n0 = _mm256_mul_pd(c1->S, c0->N), s0n1 = _mm256_mul_pd(c0->S, c1->N);
	v4 s3n2 = _mm256_mul_pd(c3->S, c2->N), s2n3 = _mm256_mul_pd(c2->S, c3->N);
	v4 s2n0 = _mm256_mul_pd(c2->S, c0->N), s0n2 = _mm256_mul_pd(c0->S, c2->N);
	v4 s3n1 = _mm256_mul_pd(c3->S, c1->N), s1n3 = _mm256_mul_pd(c1->S, c3->N);
	v4 s2n1 = _mm256_mul_pd(c2->S, c1->N), s1n2 = _mm256_mul_pd(c1->S, c2->N);
	v4 s3n0 = _mm256_mul_pd(c3->S, c0->N), s0n3 = _mm256_mul_pd(c0->S, c3->N);
	v4 b20 = _mm256_cmp_pd(s2n0, s0n2, _CMP_GT_OQ), b31 = _mm256_cmp_pd(s3n1, s1n3, _CMP_GT_OQ);
	v4 b21 = _mm256_cmp_pd(s2n1, s1n2, _CMP_GT_OQ), b30 = _mm256_cmp_pd(s3n0, s0n3, _CMP_GT_OQ);
	v4 s2 = _mm256_mul_pd(_mm256_set1_pd(0x1p-44), _mm256_mul_pd(s, s));
	v4 iuv = _mm256_or_pd(iu, iv), g, h, k, m, mk, fail, range;
	g = _mm256_andnot_pd(iv, _mm256_cmp_pd(s1n0, s0n1, _CMP_GT_OQ)); /* 1 > 0 */
	h = _mm256_andnot_pd(iv, _mm256_cmp_pd(s3n2, s2n3, _CMP_GT_OQ)); /* 3 > 2 */
	k = _mm256_andnot_pd(iu, pick4(h, pick4(g, b31, b30), pick4(g, b21, b20)));
	m = pick4(k, h, g);
	/* Which certificates the winner W needs: those of W against each other valid corner
	 * (c1 is valid unless iv, c2 unless iu, c3 unless either). W is 0 or 1 where ~k, 2
	 * or 3 where k, 1 or 3 where m, 1 or 2 where m ^ k:
	 *   10: ~k ~iv   32: k ~iv   20: ~m ~iu   31: m ~iu ~iv   21: (m ^ k) ~iu ~iv
	 *   30: ~(m ^ k) ~iu ~iv
	 * (k implies ~iu, g ~iv, h ~iu ~iv, so these are exactly the pairs that involve W
	 * and two valid corners). One needed and uncertain, or s out of range: the exact
	 * comparison. */
	mk = _mm256_xor_pd(m, k);
	fail = _mm256_andnot_pd(_mm256_or_pd(k, iv), uncertain(s1n0, s0n1, c1->N, c0->N, s2));
	fail = _mm256_or_pd(
	    fail, _mm256_and_pd(_mm256_andnot_pd(iv, k), uncertain(s3n2, s2n3, c3->N, c2->N, s2)));
	fail = _mm256_or_pd(
	    fail, _mm256_andnot_pd(_mm256_or_pd(m, iu), uncertain(s2n0, s0n2, c2->N, c0->N, s2)));
	fail = _mm256_or_pd(
	    fail, _mm256_and_pd(_mm256_andnot_pd(iuv, m), uncertain(s3n1, s1n3, c3->N, c1->N, s2)));
	fail = _mm256_or_pd(fail, _mm256_and_pd(_mm256_andnot_pd(iuv, mk),
	                                        uncertain(s2n1, s1n2, c2->N, c1->N, s2)));
	fail = _mm256_or_pd(
	    fail, _mm256_andnot_pd(_mm256_or_pd(iuv, mk), uncertain(s3n0, s0n3, c3->N, c0->N, s2)));
	range = _mm256_and_pd(_mm256_cmp_pd(s, _mm256_set1_pd(0x1p-200), _CMP_GE_OQ),
	                      _mm256_cmp_pd(s, _mm256_set1_pd(0x1p+200), _CMP_LE_OQ));
	fail = _mm256_or_pd(fail, _mm256_andnot_pd(range, ones));
	if (_mm256_movemask_pd(fail)) {
		/* a near-tie (or l ~ 0) in some lane: the reference's own comparison of dot
		 * products, for all four */
		const v4 ninf = _mm256_set1_pd(-INFINITY);
		v4 e0 = exact_dot(&ax[0], &ax[2], l0, l1, l2);
		v4 e1 = pick4(iv, ninf, exact_dot(&ax[0], &ax[3], l0, l1, l2));
		v4 e2 = pick4(iu, ninf, exact_dot(&ax[1], &ax[2], l0, l1, l2));
		v4 e3 = pick4(iuv, ninf, exact_dot(&ax[1], &ax[3], l0, l1, l2));
		g = _mm256_cmp_pd(e1, e0, _CMP_GT_OQ);
		h = _mm256_cmp_pd(e3, e2, _CMP_GT_OQ);
		k = _mm256_cmp_pd(pick4(h, e3, e2), pick4(g, e1, e0), _CMP_GT_OQ);
		m = pick4(k, h, g);
	}
	*k_out = k;
	*m_out = m;
}

/* One segment of the four lanes: targets t, codes into c, the squared error kept where
 * active. Inlined into the two loops below, where the compiler keeps st in registers. */
AVX2 static inline __attribute__((always_inline)) void
quant_step(const lanes4_t *q, const float *const t[4], int32_t *const c[4], v4 active, state4_t *st)
{
	const v4 zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0);
	const v4 md = load4(q->md), len = load4(q->len);
	v4 tg[3], d0, d1, d2, l0, l1, l2, s, u, v, fu, fv, fu1, fv1, iu, iv, k, m;
	v4 n0, n1, n2, n3, dx, dy, dz;
	cell_axis_t ax[4];
	corner4_t c0, c1, c2, c3;

	targets(t, tg);
	d0 = _mm256_sub_pd(tg[0], st->p0);
	d1 = _mm256_sub_pd(tg[1], st->p1);
	d2 = _mm256_sub_pd(tg[2], st->p2);
	/* l = frame^T d, each component ((a + b) + c) as in the reference */
	l0 = dot3(load4(q->f[0]), d0, load4(q->f[3]), d1, load4(q->f[6]), d2);
	l1 = dot3(load4(q->f[1]), d0, load4(q->f[4]), d1, load4(q->f[7]), d2);
	l2 = dot3(load4(q->f[2]), d0, load4(q->f[5]), d1, load4(q->f[8]), d2);
	/* projection onto the octahedron; s = 0 (l = 0) gives (0, 0) like the reference.
	 * floor(u m) below is exact, but floor(-0) is -0 where the reference has
	 * (double)(int32_t)floor(-0) = +0: so u must never be -0. Adding +0 turns -0 into +0
	 * and leaves every other value alone; done to l0, l1 before the division, it runs
	 * alongside s instead of lengthening the chain. */
	s = _mm256_add_pd(_mm256_add_pd(abs4(l0), abs4(l1)), abs4(l2));
	{
		v4 pos = _mm256_cmp_pd(s, zero, _CMP_GT_OQ);
		v4 lower = _mm256_cmp_pd(l2, zero, _CMP_LT_OQ);
		u = _mm256_and_pd(_mm256_div_pd(_mm256_add_pd(l0, zero), s), pos);
		v = _mm256_and_pd(_mm256_div_pd(_mm256_add_pd(l1, zero), s), pos);
		/* lower hemisphere: (1 - |v|) sgn u, (1 - |u|) sgn v; a branch, as strands
		 * rarely point away from their rest direction */
		if (_mm256_movemask_pd(lower)) {
			v4 ou = _mm256_xor_pd(_mm256_sub_pd(one, abs4(v)), neg_sign4(u));
			v4 ov = _mm256_xor_pd(_mm256_sub_pd(one, abs4(u)), neg_sign4(v));
			/* (1 - 1) * -1 is -0 */
			u = _mm256_add_pd(pick4(lower, ou, u), zero);
			v = _mm256_add_pd(pick4(lower, ov, v), zero);
		}
	}
	fu = _mm256_floor_pd(_mm256_mul_pd(u, md));
	fv = _mm256_floor_pd(_mm256_mul_pd(v, md));
	fu1 = _mm256_add_pd(fu, one);
	fv1 = _mm256_add_pd(fv, one);
	/* corners beyond m are skipped by the reference: (fu + 1 > m) rules out corners
	 * 2 and 3, (fv + 1 > m) corners 1 and 3 */
	iu = _mm256_cmp_pd(fu1, md, _CMP_GT_OQ);
	iv = _mm256_cmp_pd(fv1, md, _CMP_GT_OQ);
	/* ptp_oct_decode's (double)c / m; corner 2a + b is (fu + a, fv + b), the
	 * reference's order of trial */
	/* ax: the cell's x = fu / m, (fu + 1) / m and y = fv / m, (fv + 1) / m */
	ax[0] = axis_of(_mm256_div_pd(fu, md));
	ax[1] = axis_of(_mm256_div_pd(fu1, md));
	ax[2] = axis_of(_mm256_div_pd(fv, md));
	ax[3] = axis_of(_mm256_div_pd(fv1, md));
	c0 = corner_at(&ax[0], &ax[2], l0, l1, l2);
	c1 = corner_at(&ax[0], &ax[3], l0, l1, l2);
	c2 = corner_at(&ax[1], &ax[2], l0, l1, l2);
	c3 = corner_at(&ax[1], &ax[3], l0, l1, l2);
	/* the square roots for all four, early: the winner's is needed right after */
	n0 = _mm256_sqrt_pd(c0.N);
	n1 = _mm256_sqrt_pd(c1.N);
	n2 = _mm256_sqrt_pd(c2.N);
	n3 = _mm256_sqrt_pd(c3.N);
	decide(&c0, &c1, &c2, &c3, ax, iu, iv, s, l0, l1, l2, &k, &m);
	/* the winner, corner (fu + k, fv + m): its codes (the masks' 1.0 added to the
	 * integral fu, fv, exactly), its point again from its coordinates (cheaper than
	 * keeping four corners' points in registers), then ptp_oct_decode's division and
	 * ptp_strand_step: next = prev + length * (frame * dir) */
	store_codes(c, _mm256_cvttpd_epi32(_mm256_add_pd(fu, _mm256_and_pd(k, one))),
	            _mm256_cvttpd_epi32(_mm256_add_pd(fv, _mm256_and_pd(m, one))));
	{
		cell_axis_t wx = axis_of(pick4(k, ax[1].c, ax[0].c));
		cell_axis_t wy = axis_of(pick4(m, ax[3].c, ax[2].c));
		v4 X, Y, Z, nw = pick4(k, pick4(m, n3, n2), pick4(m, n1, n0));
		corner_point(&wx, &wy, &X, &Y, &Z);
		dx = _mm256_div_pd(X, nw);
		dy = _mm256_div_pd(Y, nw);
		dz = _mm256_div_pd(Z, nw);
	}
	st->p0 = _mm256_add_pd(st->p0, _mm256_mul_pd(len, dot3(load4(q->f[0]), dx, load4(q->f[1]),
	                                                       dy, load4(q->f[2]), dz)));
	st->p1 = _mm256_add_pd(st->p1, _mm256_mul_pd(len, dot3(load4(q->f[3]), dx, load4(q->f[4]),
	                                                       dy, load4(q->f[5]), dz)));
	st->p2 = _mm256_add_pd(st->p2, _mm256_mul_pd(len, dot3(load4(q->f[6]), dx, load4(q->f[7]),
	                                                       dy, load4(q->f[8]), dz)));
	{
		v4 e0 = _mm256_sub_pd(st->p0, tg[0]), e1 = _mm256_sub_pd(st->p1, tg[1]);
		v4 e2 = _mm256_sub_pd(st->p2, tg[2]);
		v4 ee = dot3(e0, e0, e1, e1, e2, e2);
		st->err2 = pick4(_mm256_and_pd(active, _mm256_cmp_pd(ee, st->err2, _CMP_GT_OQ)), ee,
		                 st->err2);
	}
}

AVX2 void ptp_quant_run_avx2(lanes4_t *q, int steps, int32_t *scratch)
{
	const v4 all = _mm256_castsi256_pd(_mm256_set1_epi32(-1));
	state4_t st = {load4(q->prev[0]), load4(q->prev[1]), load4(q->prev[2]), load4(q->err2)};
	int i = 0, common = steps;
	for (int j = 0; j < 4; j++)
		if (q->segs[j] < common)
			common = q->segs[j];
	/* while every strand has segments: no lane checks */
	for (; i < common; i++) {
		const float *t[4] = {q->pts[0] + 3 * (i + 1), q->pts[1] + 3 * (i + 1),
		                     q->pts[2] + 3 * (i + 1), q->pts[3] + 3 * (i + 1)};
		int32_t *c[4] = {q->codes[0] + 2 * i, q->codes[1] + 2 * i, q->codes[2] + 2 * i,
		                 q->codes[3] + 2 * i};
		quant_step(q, t, c, all, &st);
	}
	/* past the shorter strands' ends: they aim at their last point again, their codes to
	 * scratch, their errors left alone */
	for (; i < steps; i++) {
		const float *t[4];
		int32_t *c[4];
		int64_t act[4];
		for (int j = 0; j < 4; j++) {
			int live = i < q->segs[j];
			t[j] = q->pts[j] + 3 * ((live ? i : q->segs[j] - 1) + 1);
			c[j] = live ? q->codes[j] + 2 * i : scratch;
			act[j] = -(int64_t)live;
		}
		quant_step(q, t, c,
		           _mm256_castsi256_pd(_mm256_setr_epi64x(act[0], act[1], act[2], act[3])),
		           &st);
	}
	_mm256_storeu_pd(q->err2, st.err2);
}

AVX2 void ptp_lanes_init_avx2(lanes4_t *q, const ptp_strand_geo_t *const g[4],
                              const double *const rot[4], const double *const hp[4])
{
	v4 b[9], an[3];
	for (int j = 0; j < 9; j++)
		b[j] =
		    _mm256_setr_pd(g[0]->basis[j], g[1]->basis[j], g[2]->basis[j], g[3]->basis[j]);
	for (int j = 0; j < 3; j++)
		an[j] = _mm256_setr_pd(g[0]->anchor[j], g[1]->anchor[j], g[2]->anchor[j],
		                       g[3]->anchor[j]);
	for (int r = 0; r < 3; r++) {
		v4 r0 = _mm256_setr_pd(rot[0][3 * r], rot[1][3 * r], rot[2][3 * r], rot[3][3 * r]);
		v4 r1 = _mm256_setr_pd(rot[0][3 * r + 1], rot[1][3 * r + 1], rot[2][3 * r + 1],
		                       rot[3][3 * r + 1]);
		v4 r2 = _mm256_setr_pd(rot[0][3 * r + 2], rot[1][3 * r + 2], rot[2][3 * r + 2],
		                       rot[3][3 * r + 2]);
		v4 h = _mm256_setr_pd(hp[0][r], hp[1][r], hp[2][r], hp[3][r]);
		for (int c = 0; c < 3; c++)
			_mm256_storeu_pd(q->f[3 * r + c],
			                 dot3(r0, b[c], r1, b[3 + c], r2, b[6 + c]));
		_mm256_storeu_pd(q->prev[r],
		                 _mm256_add_pd(h, dot3(r0, an[0], r1, an[1], r2, an[2])));
	}
}

#else
/* Nothing to build without AVX2: ISO C wants a translation unit to declare something. */
typedef int ptp_strand_quant_avx2_unused;
#endif /* QUANT_AVX2 */
