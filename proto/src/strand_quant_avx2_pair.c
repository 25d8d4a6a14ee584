/* The AVX2 kernel of the encoder's closed loop for one or two strands (ptp_quantise gives
 * it a group that would leave half of the four-lane kernel, strand_quant_avx2.c, empty):
 * the SSE2 kernel's two strands per register pair, but only the winning corner decoded,
 * its choice certified as strand_quant_avx2.c explains (the same filter, margin and
 * fallback, on two lanes). Half the instructions of the four-lane kernel for the same
 * chain, which is what a lone instance of twin tails pays for. */
#include <math.h>

#include "strand_quant.h"

#if QUANT_AVX2

/*
 * Layout: the two strands are the two lanes of a 128-bit half, as in the SSE2 kernel, and
 * a 256-bit register holds two such halves [lo | hi]: u beside v for the projection and
 * the cell's coordinates, and two corners side by side (corners 0 and 1, 2 and 3), so
 * the four corners are filtered with two registers' work instead of four, and the six
 * pairwise comparisons with three products a side. Every lane of every register still
 * gets exactly the operations, operands and order of the scalar form: only which
 * register a value sits in has changed.
 */

/* [lo | hi] of two halves; a register's halves; its halves swapped */
AVX2 static inline __m256d pair(__m128d lo, __m128d hi)
{
	return _mm256_insertf128_pd(_mm256_castpd128_pd256(lo), hi, 1);
}

AVX2 static inline __m128d lo_of(__m256d x)
{
	return _mm256_castpd256_pd128(x);
}

AVX2 static inline __m128d hi_of(__m256d x)
{
	return _mm256_extractf128_pd(x, 1);
}

AVX2 static inline __m256d swap_halves(__m256d x)
{
	return _mm256_permute2f128_pd(x, x, 0x01);
}

/* a where mask (per lane), else b */
AVX2 static inline __m128d pick(__m128d mask, __m128d a, __m128d b)
{
	return _mm_blendv_pd(b, a, mask);
}

/* Two corners of the cell for both strands, [corner a | corner b]: their points
 * p = (X, Y, Z) after the fold, N = X^2 + Y^2 + Z^2 exactly as ptp_oct_decode computes
 * them, and for the filter A = p . l and S = A |A|. */
typedef struct corners_t {
	__m256d X, Y, Z, N, S;
} corners_t;

/* x, y: the corners' coordinates c / m; one_x = 1 - |x|, sx = the sign bit where x < 0
 * (sgn 0 = +1), likewise for y; l0..l2: l in both halves. */
AVX2 static inline corners_t corners_at(__m256d x, __m256d one_x, __m256d sx, __m256d y,
                                        __m256d ay, __m256d one_y, __m256d sy, __m256d l0,
                                        __m256d l1, __m256d l2)
{
	corners_t c;
	__m256d fold, A;
	c.Z = _mm256_sub_pd(one_x, ay);
	c.X = x;
	c.Y = y;
	fold = _mm256_cmp_pd(c.Z, _mm256_setzero_pd(), _CMP_LT_OQ);
	if (_mm256_movemask_pd(fold)) {
		/* (1 - |y|) sgn x, (1 - |x|) sgn y from the unfolded values; the product with +-1
		 * is a sign flip, exactly. Rare (near the equator), hence a branch. */
		c.X = _mm256_blendv_pd(x, _mm256_xor_pd(one_y, sx), fold);
		c.Y = _mm256_blendv_pd(y, _mm256_xor_pd(one_x, sy), fold);
	}
	c.N = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(c.X, c.X), _mm256_mul_pd(c.Y, c.Y)),
	                    _mm256_mul_pd(c.Z, c.Z));
	A = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(c.X, l0), _mm256_mul_pd(c.Y, l1)),
	                  _mm256_mul_pd(c.Z, l2));
	c.S = _mm256_mul_pd(A, abs4(A));
	return c;
}

/* Per lane, where |T| > (s2 N_i) N_j does not hold (s2 = 2^-44 s^2): where the sign of
 * T_ij is not certainly the reference's. NGT_UQ is the exact complement of GT_OQ. */
AVX2 static inline __m256d uncertain4(__m256d t, __m256d ni, __m256d nj, __m256d s2)
{
	return _mm256_cmp_pd(abs4(t), _mm256_mul_pd(_mm256_mul_pd(s2, ni), nj), _CMP_NGT_UQ);
}

/* The reference's dot products of two corners with l: fl(p / sqrt(N)) . l, in its order. */
AVX2 static inline __m256d exact_dot4(const corners_t *c, __m256d n, __m256d l0, __m256d l1,
                                      __m256d l2)
{
	return _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(_mm256_div_pd(c->X, n), l0),
	                                   _mm256_mul_pd(_mm256_div_pd(c->Y, n), l1)),
	                     _mm256_mul_pd(_mm256_div_pd(c->Z, n), l2));
}

/* The winner's component from corner pairs [c0 | c1] and [c2 | c3]: by k between the
 * pairs, then by (k ? h : g) = m within one. */
AVX2 static inline __m128d winner(__m256d c01, __m256d c23, __m256d k2, __m128d m)
{
	__m256d w = pick4(k2, c23, c01); /* [k ? c2 : c0 | k ? c3 : c1] */
	return pick(m, hi_of(w), lo_of(w));
}

/* Row r of frame * d: ((f[r] dx + f[r + 1] dy) + f[r + 2] dz), as ptp_strand_step. */
AVX2 static inline __m128d step_row(const lanes_t *q, int r, __m128d dx, __m128d dy, __m128d dz)
{
	return _mm_add_pd(_mm_add_pd(_mm_mul_pd(_mm_loadu_pd(q->f[r]), dx),
	                             _mm_mul_pd(_mm_loadu_pd(q->f[r + 1]), dy)),
	                  _mm_mul_pd(_mm_loadu_pd(q->f[r + 2]), dz));
}

/* One segment of both lanes: targets ta, tb, codes into ca, cb, the squared error kept
 * where active; st: the reconstructed point (x, y, z) and the largest squared error.
 * Inlined into the two loops below, where the compiler keeps st in registers. */
AVX2 static inline __attribute__((always_inline)) void
quant_step(const lanes_t *q, const float *ta, const float *tb, int32_t *ca, int32_t *cb,
           __m128d active, __m128d st[4])
{
	const __m128d zero = _mm_setzero_pd();
	const __m128d s_min = _mm_set1_pd(0x1p-200), s_max = _mm_set1_pd(0x1p+200);
	const __m256d one4 = _mm256_set1_pd(1.0), zero4 = _mm256_setzero_pd();
	const __m128d len = _mm_loadu_pd(q->len);
	const __m256d md4 = pair(_mm_loadu_pd(q->md), _mm_loadu_pd(q->md));
	__m128d p0 = st[0], p1 = st[1], p2 = st[2], err2 = st[3];
	const __m128d t0 = _mm_set_pd((double)tb[0], (double)ta[0]);
	const __m128d t1 = _mm_set_pd((double)tb[1], (double)ta[1]);
	const __m128d t2 = _mm_set_pd((double)tb[2], (double)ta[2]);
	__m128d d0 = _mm_sub_pd(t0, p0), d1 = _mm_sub_pd(t1, p1), d2 = _mm_sub_pd(t2, p2);
	__m128d l0, l1, l2, s, g, h, k, iu, iv, nw, wx, wy, wz, dx, dy, dz;
	__m256d L0, L1, L2, uv, fuv, fuv1, iuv, xya, xyb;
	corners_t c01, c23;
	__m256d n01, n23;
	int ok;

	/* l = frame^T d */
	lanes_frame_t(q, d0, d1, d2, &l0, &l1, &l2);
	/* projection onto the octahedron, [u | v]; s = 0 (l = 0) gives (0, 0) like the
	 * reference. floor(u m) below is exact, but floor(-0) is -0 where the reference
	 * has (double)(int32_t)floor(-0) = +0: so u must never be -0. Adding +0 turns -0
	 * into +0 and leaves every other value alone; done to l0, l1 before the division,
	 * it runs alongside s instead of lengthening the chain. */
	s = _mm_add_pd(_mm_add_pd(pd_abs(l0), pd_abs(l1)), pd_abs(l2));
	{
		__m128d pos = _mm_cmpgt_pd(s, zero), lower = _mm_cmplt_pd(l2, zero);
		uv = _mm256_and_pd(
		    _mm256_div_pd(pair(_mm_add_pd(l0, zero), _mm_add_pd(l1, zero)), pair(s, s)),
		    pair(pos, pos));
		/* lower hemisphere: [(1 - |v|) sgn u | (1 - |u|) sgn v]; a branch, as strands
		 * rarely point away from their rest direction */
		if (_mm_movemask_pd(lower)) {
			__m256d low = pair(lower, lower);
			__m256d folded = _mm256_xor_pd(_mm256_sub_pd(one4, swap_halves(abs4(uv))),
			                               neg_sign4(uv));
			uv = pick4(low, folded, uv);
			uv = _mm256_add_pd(uv, zero4); /* (1 - 1) * -1 is -0 */
		}
	}
	fuv = _mm256_floor_pd(_mm256_mul_pd(uv, md4)); /* [fu | fv] */
	fuv1 = _mm256_add_pd(fuv, one4);
	/* corners beyond m are skipped by the reference: (fu + 1 > m) rules out corners
	 * 2 and 3, (fv + 1 > m) corners 1 and 3 */
	iuv = _mm256_cmp_pd(fuv1, md4, _CMP_GT_OQ);
	iu = lo_of(iuv);
	iv = hi_of(iuv);
	/* ptp_oct_decode's (double)c / m: [xa | ya], [xb | yb] */
	xya = _mm256_div_pd(fuv, md4);
	xyb = _mm256_div_pd(fuv1, md4);
	L0 = pair(l0, l0);
	L1 = pair(l1, l1);
	L2 = pair(l2, l2);
	{
		/* corner 2a + b is (fu + a, fv + b), the reference's order of trial: [c0 | c1]
		 * has x = xa and y = [ya | yb], [c2 | c3] has x = xb and the same y */
		__m256d xa = _mm256_permute2f128_pd(xya, xya, 0x00);
		__m256d xb = _mm256_permute2f128_pd(xyb, xyb, 0x00);
		__m256d y = _mm256_permute2f128_pd(xya, xyb, 0x31);
		__m256d ay = abs4(y), one_y = _mm256_sub_pd(one4, ay), sy = neg_sign4(y);
		c01 = corners_at(xa, _mm256_sub_pd(one4, abs4(xa)), neg_sign4(xa), y, ay, one_y,
		                 sy, L0, L1, L2);
		c23 = corners_at(xb, _mm256_sub_pd(one4, abs4(xb)), neg_sign4(xb), y, ay, one_y,
		                 sy, L0, L1, L2);
	}
	/* the square roots for all four, early: the winner's is needed right after */
	n01 = _mm256_sqrt_pd(c01.N);
	n23 = _mm256_sqrt_pd(c23.N);
	{
		/* The decision as the reference makes it (first largest of each pair, the
		 * second pair only if strictly larger), then its certificate: the winner
		 * against every other valid corner, per lane (bit 0 strand a, 1 strand b).
		 * T_ij = S_i N_j - S_j N_i is positive when i beats j; for the decision the
		 * products are compared directly (S_i N_j > S_j N_i, one subtraction sooner:
		 * the chain runs through here). */
		__m256d n01s = swap_halves(c01.N);            /* [N1 | N0] */
		__m256d p = _mm256_mul_pd(c01.S, n01s);       /* [S0 N1 | S1 N0] */
		__m256d r = _mm256_mul_pd(c23.S, swap_halves(c23.N)); /* [S2 N3 | S3 N2] */
		__m256d hi = _mm256_permute2f128_pd(p, r, 0x31);      /* [S1 N0 | S3 N2] */
		__m256d lo = _mm256_permute2f128_pd(p, r, 0x20);      /* [S0 N1 | S2 N3] */
		__m256d xb = _mm256_mul_pd(c23.S, c01.N);             /* [S2 N0 | S3 N1] */
		__m256d yb = _mm256_mul_pd(c01.S, c23.N);             /* [S0 N2 | S1 N3] */
		__m256d xc = _mm256_mul_pd(c23.S, n01s);              /* [S2 N1 | S3 N0] */
		__m256d yc = _mm256_mul_pd(swap_halves(c01.S), c23.N); /* [S1 N2 | S0 N3] */
		__m256d gh = _mm256_cmp_pd(hi, lo, _CMP_GT_OQ);       /* 1 > 0, 3 > 2 */
		__m256d ab = _mm256_cmp_pd(xb, yb, _CMP_GT_OQ);       /* 2 > 0, 3 > 1 */
		__m256d ac = _mm256_cmp_pd(xc, yc, _CMP_GT_OQ);       /* 2 > 1, 3 > 0 */
		__m128d sq = _mm_mul_pd(_mm_set1_pd(0x1p-44), _mm_mul_pd(s, s));
		__m256d s2 = pair(sq, sq);
		/* [t10 | t32] against (s2 N1) N0, (s2 N3) N2; [t20 | t31] against (s2 N2) N0,
		 * (s2 N3) N1; [t21 | t30] against (s2 N2) N1, (s2 N3) N0: where uncertain */
		__m256d ua = uncertain4(_mm256_sub_pd(hi, lo),
		                        _mm256_permute2f128_pd(c01.N, c23.N, 0x31),
		                        _mm256_permute2f128_pd(c01.N, c23.N, 0x20), s2);
		__m256d ub = uncertain4(_mm256_sub_pd(xb, yb), c23.N, c01.N, s2);
		__m256d uc = uncertain4(_mm256_sub_pd(xc, yc), c23.N, n01s, s2);
		const __m128d ones = _mm_castsi128_pd(_mm_set1_epi32(-1));
		__m128d m, mk, iuv2 = _mm_or_pd(iu, iv), range;
		__m256d na, nb, nc, fail;
		g = _mm_andnot_pd(iv, lo_of(gh));
		h = _mm_andnot_pd(iv, hi_of(gh));
		k = _mm_andnot_pd(iu, pick(h, pick(g, hi_of(ab), hi_of(ac)),
		                           pick(g, lo_of(ac), lo_of(ab))));
		/* Which certificates the winner W needs: those of W against each other valid
		 * corner (c1 is valid unless iv, c2 unless iu, c3 unless either). W is 0 or 1
		 * where ~k, 2 or 3 where k, 1 or 3 where m = (k ? h : g), 1 or 2 where m ^ k:
		 *   10: ~k ~iv   32: k ~iv   20: ~m ~iu   31: m ~iu ~iv   21: (m ^ k) ~iu ~iv
		 *   30: ~(m ^ k) ~iu ~iv
		 * (k implies ~iu, g ~iv, h ~iu ~iv, so these are exactly the pairs that involve
		 * W and two valid corners). One needed and uncertain, or s out of range: the
		 * exact comparison below. */
		m = pick(k, h, g);
		mk = _mm_xor_pd(m, k);
		na = _mm256_andnot_pd(pair(iv, iv), pair(_mm_xor_pd(k, ones), k));
		nb = pair(_mm_andnot_pd(iu, _mm_xor_pd(m, ones)), _mm_andnot_pd(iuv2, m));
		nc = _mm256_andnot_pd(pair(iuv2, iuv2), pair(mk, _mm_xor_pd(mk, ones)));
		fail = _mm256_or_pd(_mm256_or_pd(_mm256_and_pd(na, ua), _mm256_and_pd(nb, ub)),
		                    _mm256_and_pd(nc, uc));
		range = _mm_and_pd(_mm_cmpge_pd(s, s_min), _mm_cmple_pd(s, s_max));
		ok = !_mm_movemask_pd(_mm_or_pd(_mm_or_pd(lo_of(fail), hi_of(fail)),
		                                _mm_andnot_pd(range, ones)));
	}
	if (!ok) {
		/* a near-tie (or l ~ 0): the reference's own comparison of dot products */
		const __m128d ninf = _mm_set1_pd(-INFINITY);
		__m256d e01 = exact_dot4(&c01, n01, L0, L1, L2);
		__m256d e23 = exact_dot4(&c23, n23, L0, L1, L2);
		__m128d e0 = lo_of(e01);
		__m128d e1 = pick(iv, ninf, hi_of(e01));
		__m128d e2 = pick(iu, ninf, lo_of(e23));
		__m128d e3 = pick(_mm_or_pd(iu, iv), ninf, hi_of(e23));
		g = _mm_cmpgt_pd(e1, e0);
		h = _mm_cmpgt_pd(e3, e2);
		k = _mm_cmpgt_pd(pick(h, e3, e2), pick(g, e1, e0));
	}
	/* the winner: first of each pair by g, h, then by k */
	{
		__m256d k2 = pair(k, k);
		__m128d m = pick(k, h, g);
		/* its codes, put_codes without leaving the registers: (fu + k, fv + m), the
		 * masks' low 32 bits (-1 or 0) subtracted from [fu a, fu b, fv a, fv b] */
		__m128i fi = _mm256_cvttpd_epi32(fuv);
		__m128i km = _mm_castps_si128(
		    _mm_shuffle_ps(_mm_castpd_ps(k), _mm_castpd_ps(m), _MM_SHUFFLE(2, 0, 2, 0)));
		__m128i cw = _mm_shuffle_epi32(_mm_sub_epi32(fi, km), _MM_SHUFFLE(3, 1, 2, 0));
		_mm_storel_epi64((__m128i *)ca, cw);                   /* cu a, cv a */
		_mm_storeh_pd((double *)cb, _mm_castsi128_pd(cw)); /* cu b, cv b */
		wx = winner(c01.X, c23.X, k2, m);
		wy = winner(c01.Y, c23.Y, k2, m);
		wz = winner(c01.Z, c23.Z, k2, m);
		nw = winner(n01, n23, k2, m);
	}
	/* ptp_oct_decode's division of the winner, then ptp_strand_step:
	 * next = prev + length * (frame * dir) */
	dx = _mm_div_pd(wx, nw);
	dy = _mm_div_pd(wy, nw);
	dz = _mm_div_pd(wz, nw);
	p0 = _mm_add_pd(p0, _mm_mul_pd(len, step_row(q, 0, dx, dy, dz)));
	p1 = _mm_add_pd(p1, _mm_mul_pd(len, step_row(q, 3, dx, dy, dz)));
	p2 = _mm_add_pd(p2, _mm_mul_pd(len, step_row(q, 6, dx, dy, dz)));
	{
		__m128d e0 = _mm_sub_pd(p0, t0), e1 = _mm_sub_pd(p1, t1),
		        e2 = _mm_sub_pd(p2, t2);
		__m128d ee = _mm_add_pd(_mm_add_pd(_mm_mul_pd(e0, e0), _mm_mul_pd(e1, e1)),
		                        _mm_mul_pd(e2, e2));
		err2 = pick(_mm_and_pd(active, _mm_cmpgt_pd(ee, err2)), ee, err2);
	}
	st[0] = p0, st[1] = p1, st[2] = p2, st[3] = err2;
}

AVX2 void ptp_quant_run_avx2_pair(lanes_t *q, int steps, int32_t *scratch)
{
	const __m128d all = _mm_castsi128_pd(_mm_set1_epi32(-1));
	__m128d st[4];
	int i = 0;
	for (int r = 0; r < 3; r++)
		st[r] = _mm_loadu_pd(q->prev[r]);
	st[3] = _mm_loadu_pd(q->err2);
	if (q->segs[1] == 0) {
		/* one strand in both lanes (an odd last one): lane 1 follows lane 0's targets,
		 * its codes to scratch and its error never kept */
		const __m128d lane0 = _mm_castsi128_pd(_mm_set_epi64x(0, -1));
		for (; i < q->segs[0]; i++) {
			const float *t = q->pts[0] + 3 * (i + 1);
			quant_step(q, t, t, q->codes[0] + 2 * i, scratch, lane0, st);
		}
	}
	/* while both strands have segments: no lane checks */
	for (; i < q->segs[0] && i < q->segs[1]; i++)
		quant_step(q, q->pts[0] + 3 * (i + 1), q->pts[1] + 3 * (i + 1), q->codes[0] + 2 * i,
		           q->codes[1] + 2 * i, all, st);
	for (; i < steps; i++) {
		__m128d active = _mm_castsi128_pd(
		    _mm_set_epi64x(-(int64_t)(i < q->segs[1]), -(int64_t)(i < q->segs[0])));
		quant_step(q, lane_target(q, 0, i), lane_target(q, 1, i), lane_codes(q, 0, i, scratch),
		           lane_codes(q, 1, i, scratch), active, st);
	}
	_mm_storeu_pd(q->err2, st[3]);
}
/* lanes_init (strand_quant.c) for both lanes at once: frame = rot * basis and the root
 * hp + rot * anchor of each lane's instance, each element the same ((a + b) + c) of the
 * same products as ptp_frame and ptp_strand_root, but with the two lanes' (and two
 * columns') elements side by side. ga and gb may be the same strand. */
AVX2 void ptp_lanes_init_avx2_pair(lanes_t *q, const ptp_strand_geo_t *ga,
                                   const ptp_strand_geo_t *gb, const double *const rot[2],
                                   const double *const hp[2])
{
	const double *a = ga->basis, *b = gb->basis, *ra = rot[0], *rb = rot[1];
	double *f = &q->f[0][0], *prev = &q->prev[0][0];
	/* basis row j: columns 0 and 1 of both lanes, then column 2 of both */
	__m256d v[3];
	__m128d w[3], an[3];
	for (int j = 0; j < 3; j++) {
		v[j] = _mm256_setr_pd(a[3 * j], b[3 * j], a[3 * j + 1], b[3 * j + 1]);
		w[j] = _mm_setr_pd(a[3 * j + 2], b[3 * j + 2]);
		an[j] = _mm_setr_pd(ga->anchor[j], gb->anchor[j]);
	}
	for (int r = 0; r < 3; r++) {
		__m128d s0 = _mm_setr_pd(ra[3 * r], rb[3 * r]);
		__m128d s1 = _mm_setr_pd(ra[3 * r + 1], rb[3 * r + 1]);
		__m128d s2 = _mm_setr_pd(ra[3 * r + 2], rb[3 * r + 2]);
		__m256d r0 = pair(s0, s0), r1 = pair(s1, s1), r2 = pair(s2, s2);
		_mm256_storeu_pd(f + 6 * r,
		                 _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(r0, v[0]), _mm256_mul_pd(r1, v[1])),
		                               _mm256_mul_pd(r2, v[2])));
		_mm_storeu_pd(f + 6 * r + 4,
		              _mm_add_pd(_mm_add_pd(_mm_mul_pd(s0, w[0]), _mm_mul_pd(s1, w[1])),
		                         _mm_mul_pd(s2, w[2])));
		_mm_storeu_pd(prev + 2 * r,
		              _mm_add_pd(_mm_setr_pd(hp[0][r], hp[1][r]),
		                         _mm_add_pd(_mm_add_pd(_mm_mul_pd(s0, an[0]), _mm_mul_pd(s1, an[1])),
		                                    _mm_mul_pd(s2, an[2]))));
	}
}

#else
/* Nothing to build without AVX2: ISO C wants a translation unit to declare something. */
typedef int ptp_strand_quant_avx2_pair_unused;
#endif /* QUANT_AVX2 */
