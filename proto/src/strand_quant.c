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
 *   chain of well over a hundred cycles per point. Strands are independent, so several
 *   go through the loop together, one per SIMD lane (two with SSE2, four with AVX2):
 *   one instruction stream carries all their chains. (Strands stepped one after the
 *   other do not overlap in practice: the waiting instructions of the first fill the
 *   out-of-order window.)
 * - The corners are compared without branches on the data: the winner is picked with
 *   masks in the reference's order of trial, so nothing is mispredicted.
 * - The error is kept squared and rooted once per strand: sqrt is correctly rounded and
 *   monotonic, so the root of the largest square is the largest root.
 *
 * Three kernels, held equal by tests/proto/test_strand_equiv.c: the reference loop (plain
 * C, the only one without SSE2 or with PT_NO_SIMD), SSE2 (every x86-64: the reference's
 * arithmetic for all four corners, side by side), and AVX2 where the CPU has it, which
 * decodes only the winning corner and certifies its choice: four strands per chain
 * (strand_quant_avx2.c), or two for a group of one or two (strand_quant_avx2_pair.c).
 * Strands come as tasks (ptp_quant_task_t), so one call may run several instances'.
 */
#include <math.h>
#include <string.h>

#include "strand_quant.h"

/* Squared distance, in the order of the reference's dist(). */
static double dist2(const double a[3], const float b[3])
{
	double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
	return dx * dx + dy * dy + dz * dz;
}

/* The reference: ptp_oct_encode and ptp_strand_step, one strand after the other. */
static void quantise_reference(const ptp_quant_task_t *t)
{
	const ptp_strand_geo_t *g = t->geo;
	double frame[9], prev[3], err2;
	ptp_frame(t->rot, g->basis, frame);
	ptp_strand_root(g, t->rot, t->hp, prev);
	err2 = dist2(prev, t->pts);
	for (int i = 0; i + 1 < g->points; i++) {
		const float *tg = t->pts + 3 * (i + 1);
		double d[3], l[3], next[3], dir[3], e2;
		for (int r = 0; r < 3; r++)
			d[r] = tg[r] - prev[r];
		for (int k = 0; k < 3; k++)
			l[k] = frame[0 + k] * d[0] + frame[3 + k] * d[1] + frame[6 + k] * d[2];
		ptp_oct_encode(l, t->m, &t->codes[2 * i], &t->codes[2 * i + 1], dir);
		ptp_strand_step(g, frame, dir, prev, next);
		e2 = dist2(next, tg);
		if (e2 > err2)
			err2 = e2;
		memcpy(prev, next, sizeof prev);
	}
	*t->err = sqrt(err2);
}

#if QUANT_SSE2

/* Lane `lane` of q (lanes_t, strand_quant.h) for task t: its grid, targets and codes. */
static void lanes_meta(lanes_t *q, int lane, const ptp_quant_task_t *t)
{
	q->len[lane] = t->geo->length;
	q->md[lane] = (double)t->m;
	q->pts[lane] = t->pts;
	q->codes[lane] = t->codes;
	q->segs[lane] = t->geo->points - 1;
}

/* The lane's squared error at its root (q->prev, set), against its first point. */
static void lanes_root_err(lanes_t *q, int lane)
{
	double root[3] = {q->prev[0][lane], q->prev[1][lane], q->prev[2][lane]};
	q->err2[lane] = dist2(root, q->pts[lane]);
}

/* Lane `lane` of q at task t's strand root, aiming at its points. */
static void lanes_init(lanes_t *q, int lane, const ptp_quant_task_t *t)
{
	double f[9], root[3];
	ptp_frame(t->rot, t->geo->basis, f);
	ptp_strand_root(t->geo, t->rot, t->hp, root);
	for (int k = 0; k < 9; k++)
		q->f[k][lane] = f[k];
	for (int k = 0; k < 3; k++)
		q->prev[k][lane] = root[k];
	lanes_meta(q, lane, t);
	lanes_root_err(q, lane);
}

static inline __m128d sel(__m128d mask, __m128d a, __m128d b)
{
	return _mm_or_pd(_mm_and_pd(mask, a), _mm_andnot_pd(mask, b));
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

		/* l = frame^T d */
		lanes_frame_t(q, d0, d1, d2, &l0, &l1, &l2);

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

#if QUANT_AVX2
/* A group of one or two tasks: the two-lane AVX2 kernel (half the four-lane kernel's
 * instructions for the same chain). A lone task runs in both lanes, stored once. */
static void quantise_avx2_pair(const ptp_quant_task_t *ta, const ptp_quant_task_t *tb)
{
	const ptp_quant_task_t *t[2] = {ta, tb ? tb : ta};
	const double *rot[2] = {t[0]->rot, t[1]->rot}, *hp[2] = {t[0]->hp, t[1]->hp};
	int32_t scratch[2];
	lanes_t q;
	lanes_meta(&q, 0, t[0]);
	lanes_meta(&q, 1, t[1]);
	ptp_lanes_init_avx2_pair(&q, t[0]->geo, t[1]->geo, rot, hp);
	lanes_root_err(&q, 0);
	lanes_root_err(&q, 1);
	if (!tb)
		q.segs[1] = 0; /* the copy: computed, never stored */
	ptp_quant_run_avx2_pair(&q, q.segs[0] > q.segs[1] ? q.segs[0] : q.segs[1], scratch);
	*ta->err = sqrt(q.err2[0]);
	if (tb)
		*tb->err = sqrt(q.err2[1]);
}

/* The AVX2 kernels' share: tasks four at a time; a last group of one or two goes to the
 * two-lane kernel, one of three fills its spare lane with its first task again, its codes
 * to a scratch array and its error dropped. */
static void quantise_avx2(const ptp_quant_task_t *tasks, int n)
{
	int32_t spare[2 * PTP_MAX_POINTS], scratch[2];
	for (int s = 0; s < n; s += 4) {
		const ptp_strand_geo_t *g[4];
		const double *rot[4], *hp[4];
		int live = n - s < 4 ? n - s : 4, steps = 0;
		lanes4_t q;
		if (live <= 2) {
			quantise_avx2_pair(&tasks[s], live == 2 ? &tasks[s + 1] : NULL);
			break;
		}
		for (int j = 0; j < 4; j++) {
			const ptp_quant_task_t *t = &tasks[j < live ? s + j : s];
			g[j] = t->geo;
			rot[j] = t->rot;
			hp[j] = t->hp;
			q.len[j] = t->geo->length;
			q.md[j] = (double)t->m;
			q.pts[j] = t->pts;
			q.codes[j] = j < live ? t->codes : spare;
			q.segs[j] = t->geo->points - 1;
			if (q.segs[j] > steps)
				steps = q.segs[j];
		}
		ptp_lanes_init_avx2(&q, g, rot, hp);
		for (int j = 0; j < 4; j++) {
			double root[3] = {q.prev[0][j], q.prev[1][j], q.prev[2][j]};
			q.err2[j] = dist2(root, q.pts[j]);
		}
		ptp_quant_run_avx2(&q, steps, scratch);
		for (int j = 0; j < live; j++)
			*tasks[s + j].err = sqrt(q.err2[j]);
	}
}
#endif /* QUANT_AVX2 */

void ptp_quantise_tasks(int kernel, const ptp_quant_task_t *tasks, int n)
{
#if QUANT_SSE2
	int32_t scratch[2];
	if (kernel == PTP_QUANT_AUTO)
		kernel = QUANT_AVX2 && ptp_quant_available(PTP_QUANT_AVX2) ? PTP_QUANT_AVX2
		                                                           : PTP_QUANT_SSE2;
	if (kernel != PTP_QUANT_REFERENCE && ptp_quant_available(kernel)) {
#if QUANT_AVX2
		if (kernel == PTP_QUANT_AVX2) {
			quantise_avx2(tasks, n);
			return;
		}
#endif
		/* Tasks two at a time; an odd last one runs in both lanes, stored once. */
		for (int s = 0; s < n; s += 2) {
			int b = s + 1 < n ? s + 1 : s;
			const ptp_strand_geo_t *ga = tasks[s].geo, *gb = tasks[b].geo;
			lanes_t q;
			lanes_init(&q, 0, &tasks[s]);
			lanes_init(&q, 1, &tasks[b]);
			if (b == s)
				q.segs[1] = 0; /* the copy: computed, never stored */
			run_sse2(&q, ga->points > gb->points ? ga->points - 1 : gb->points - 1, scratch);
			*tasks[s].err = sqrt(q.err2[0]);
			if (b != s)
				*tasks[b].err = sqrt(q.err2[1]);
		}
		return;
	}
#else
	(void)kernel;
#endif
	for (int s = 0; s < n; s++)
		quantise_reference(&tasks[s]);
}

void ptp_quantise(int kernel, const ptp_strand_geo_t *geo, int strands, const int *bits,
                  const double rot[9], const double hp[3], const float *pts, int32_t *codes,
                  double *err)
{
	ptp_quant_task_t t[PTP_MAX_STRANDS];
	for (int s = 0, p = 0, c = 0; s < strands; s++) {
		t[s] = (ptp_quant_task_t){&geo[s], ptp_grid_m(bits[s]), rot, hp, pts + 3 * p,
		                          codes + c, &err[s]};
		p += geo[s].points;
		c += 2 * (geo[s].points - 1);
	}
	ptp_quantise_tasks(kernel, t, strands);
}
