/* Strand encoder: closed-loop quantisation, mode and predictor choice, record writing.
 *
 * Per tick: the head pose is quantised first (the decoder only sees the quantised one),
 * then every segment's code is chosen against the point reconstructed so far, so each
 * point's error stays that of one quantisation step instead of the sum along the strand.
 * A strand whose reconstruction misses by more than max_error_m (it stretched, or its
 * root left the anchor) is sent raw. Everything the records need is decided here, so
 * writing a record is a pure function of the state and every subscriber gets the same
 * bytes.
 */
#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if !defined(PT_NO_SIMD) && defined(__SSE2__)
#define QUANT_SIMD 1
#include <emmintrin.h>
#else
#define QUANT_SIMD 0
#endif

#include "bits.h"
#include "ptp/strand.h"
#include "strand_internal.h"
#include "wire.h"

/* Largest angle between a unit vector and its code, times M: measured 1.411 over 2e6
 * random directions for every b in [5, 12] with the four-neighbour search of
 * ptp_oct_encode (plain rounding: 2.11). */
#define OCT_MAX_ANGLE_M 1.42
/* Share of max_error_m one segment's quantisation may use; the rest absorbs the part of
 * the previous point's error a direction cannot correct (along the segment). */
#define SEGMENT_ERROR_SHARE 0.5


ptp_encoder_params_t ptp_encoder_params_default(void)
{
	ptp_encoder_params_t p = {0.001f, 60};
	return p;
}

static int choose_bits(double length, double max_error)
{
	double need = OCT_MAX_ANGLE_M * length / (SEGMENT_ERROR_SHARE * max_error);
	int b = PTP_BITS_MIN;
	while (b < PTP_BITS_MAX && (double)ptp_grid_m(b) < need)
		b++;
	return b;
}

/* Where the header ends and the arrays begin: a whole number of lines. */
#define HEADER_BYTES ((sizeof(ptp_encoder_t) + 63) & ~(size_t)63)

/* The encoder's arrays after its header, in the block at e (NULL: only measured);
 * returns the block's size. The block is 64-byte aligned, so an offset's alignment is
 * its address's. */
static size_t layout(ptp_encoder_t *e, size_t ns, size_t codes, size_t points)
{
	size_t at = HEADER_BYTES;
#define CARVE(field, n, align)                                          \
	do {                                                                \
		at = (at + (align) - 1) & ~(size_t)((align) - 1);               \
		if (e)                                                          \
			e->field = (void *)((char *)e + at);                        \
		at += (n) * sizeof *e->field;                                   \
	} while (0)
	CARVE(geo, ns, 8);
	CARVE(bits, ns, 4);
	CARVE(seg_off, ns + 1, 4);
	CARVE(dbits, ns, 8);
	CARVE(need_key, ns, 1);
	CARVE(raw, ns, 1);
	CARVE(mode, ns, 1);
	CARVE(pred, ns, 1);
	CARVE(k, ns, 1);
	/* 32-byte aligned: the integer passes' AVX2 vectors never straddle a line */
	CARVE(cur, codes, 32);
	CARVE(vel, codes, 32);
	CARVE(prev_cur, codes, 32);
	CARVE(prev_vel, codes, 32);
	CARVE(next, codes, 32);
	CARVE(zz, codes, 32);
	CARVE(xyz, 3 * points, 32);
#undef CARVE
	return at;
}

ptp_encoder_t *ptp_encoder_create(const ptp_shape_t *shape, const ptp_encoder_params_t *params)
{
	ptp_encoder_t *e;
	size_t ns, segs, points, bytes;
	if (!shape || ptp_shape_validate(shape) != PTP_OK)
		return NULL;
	if (params && (!(params->max_error_m >= 1e-5f && params->max_error_m <= 1.0f) ||
	               params->keyframe_interval < 1 || params->keyframe_interval > 65535))
		return NULL;
	ns = shape->strand_count;
	points = (size_t)ptp_shape_point_count(shape);
	segs = points - ns; /* a strand of n points has n - 1 segments */
	bytes = (layout(NULL, ns, 2 * segs, points) + 63) & ~(size_t)63;
	e = aligned_alloc(64, bytes); /* a multiple of 64, as C11 wants */
	if (!e)
		return NULL;
	memset(e, 0, bytes);
	layout(e, ns, 2 * segs, points);
	e->strand_count = (int)ns;
	e->params = params ? *params : ptp_encoder_params_default();
	for (int s = 0; s < shape->strand_count; s++) {
		ptp_geo_init(&e->geo[s], &shape->strands[s]);
		e->bits[s] = choose_bits(e->geo[s].length, e->params.max_error_m);
		e->seg_off[s + 1] = e->seg_off[s] + shape->strands[s].points - 1;
	}
	e->n_points = (int)points;
	return e;
}

void ptp_encoder_destroy(ptp_encoder_t *e)
{
	free(e);
}

int ptp_encoder_bits(const ptp_encoder_t *e, int s)
{
	return (s >= 0 && s < e->strand_count) ? e->bits[s] : 0;
}

/* The lines of [p, p + bytes). */
static void prefetch_bytes(const void *p, size_t bytes)
{
	const char *b = p, *e = b + bytes;
	for (const char *c = b; c < e; c += 64)
		PTP_PREFETCH(c);
	if (bytes > 0)
		PTP_PREFETCH(e - 1);
}

void ptp_encoder_prefetch(const ptp_encoder_t *e, int stage)
{
	if (!e)
		return;
	if (stage == 0) {
		/* the header up to the compact coding's head state (the classic's all) */
		prefetch_bytes(e, offsetof(ptp_encoder_t, head_abs));
		return;
	}
	/* (the header is in cache by now) the head state where it is used, and the
	 * per-strand and code arrays: not the input copy, which only a raw strand reads */
	if (e->compact)
		prefetch_bytes(&e->head_abs, sizeof *e - offsetof(ptp_encoder_t, head_abs));
	prefetch_bytes(e->geo, (size_t)((const char *)e->xyz - (const char *)e->geo));
}

void ptp_encoder_set_key_phase(ptp_encoder_t *e, uint32_t phase)
{
	if (e)
		e->key_phase = phase % (uint32_t)e->params.keyframe_interval;
}

double ptp_encoder_last_error(const ptp_encoder_t *e)
{
	return e->last_error;
}

int ptp_encoder_raw_strands(const ptp_encoder_t *e)
{
	int n = 0;
	for (int s = 0; s < e->strand_count; s++)
		n += e->raw[s];
	return n;
}

void ptp_encoder_set_kernel(ptp_encoder_t *e, int kernel)
{
	e->kernel = kernel;
}

void ptp_encoder_force_key(ptp_encoder_t *e)
{
	if (!e)
		return; /* NULL ok: the server's compact encoder exists only while watched */
	e->force_key = 1;
}

/* Order k (the first of the cheapest) for n zigzag values; *bits gets their total length.
 * Orders above the longest value's bit length only cost more (every value then takes
 * k + 1 bits), so the search stops there; the result equals an exhaustive search.
 * A value's length at order k is 2 (bit_length(v + 2^k) - 1) - k + 1 (ptp_eg_len), so a
 * sum over the values is 2 * sum(bit_length(v + 2^k)) - n (k + 1). */
int ptp_best_k(const uint32_t *z, int n, long *bits)
{
	/* A value's length at order k is 2 floor(log2(v + 2^k)) - k + 1 (ptp_eg_len), so the
	 * total is 2 E(k) + n (1 - k), E(k) = sum of floor(log2(v + 2^k)). */
	int32_t e[PTP_K_MAX + 1];
	uint32_t any = 0;
	int best = 0, top, nk;
	long least = LONG_MAX;
#if PTP_RESID_AVX2
	if (ptp_resid_avx2())
		return ptp_best_k_avx2(z, n, bits);
#endif
	for (int i = 0; i < n; i++)
		any |= z[i];
	top = ptp_bit_length(any); /* the longest value's bit length */
	nk = (top < PTP_K_MAX ? top : PTP_K_MAX) + 1;
#if QUANT_SIMD
	/* Four k at a time, one per lane: floor(log2 x) is the exponent field of (float)x,
	 * exact while x < 2^24 (a value here is < 2^21, PTP_EG_MAX_BITS). */
	{
		const __m128i pow2[4] = {
		    _mm_setr_epi32(1, 2, 4, 8), _mm_setr_epi32(16, 32, 64, 128),
		    _mm_setr_epi32(256, 512, 1024, 2048), _mm_setr_epi32(4096, 8192, 16384, 32768)};
		__m128i acc0 = _mm_setzero_si128(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
#define EXPONENTS(v, k4) _mm_srli_epi32(_mm_castps_si128(_mm_cvtepi32_ps(_mm_add_epi32(v, k4))), 23)
		if (nk <= 4) {
			for (int i = 0; i < n; i++)
				acc0 = _mm_add_epi32(acc0,
				                     EXPONENTS(_mm_set1_epi32((int)z[i]), pow2[0]));
		} else if (nk <= 8) {
			for (int i = 0; i < n; i++) {
				__m128i v = _mm_set1_epi32((int)z[i]);
				acc0 = _mm_add_epi32(acc0, EXPONENTS(v, pow2[0]));
				acc1 = _mm_add_epi32(acc1, EXPONENTS(v, pow2[1]));
			}
		} else {
			for (int i = 0; i < n; i++) {
				__m128i v = _mm_set1_epi32((int)z[i]);
				acc0 = _mm_add_epi32(acc0, EXPONENTS(v, pow2[0]));
				acc1 = _mm_add_epi32(acc1, EXPONENTS(v, pow2[1]));
				acc2 = _mm_add_epi32(acc2, EXPONENTS(v, pow2[2]));
				acc3 = _mm_add_epi32(acc3, EXPONENTS(v, pow2[3]));
			}
		}
#undef EXPONENTS
		_mm_storeu_si128((__m128i *)e, acc0);
		_mm_storeu_si128((__m128i *)(e + 4), acc1);
		_mm_storeu_si128((__m128i *)(e + 8), acc2);
		_mm_storeu_si128((__m128i *)(e + 12), acc3);
		for (int k = 0; k < nk; k++)
			e[k] -= 127 * n; /* the exponent bias */
	}
#else
	for (int k = 0; k < nk; k++) {
		e[k] = 0;
		for (int i = 0; i < n; i++)
			e[k] += ptp_bit_length(z[i] + (1u << k)) - 1;
	}
#endif
	for (int k = 0; k < nk; k++) {
		long sum = 2 * (long)e[k] + (long)n * (1 - k);
		int better = sum < least; /* the first of equals: strictly less */
		least = better ? sum : least;
		best = better ? k : best;
	}
	*bits = least;
	return best;
}

/* Delta-record mode of strand s, its predictor, k and zigzag residuals (kept in e->zz for
 * the record writer) and its size in bits (e->dbits; -1 = count when writing). */
static void choose_mode(ptp_encoder_t *e, int s, int key_tick)
{
	int off = 2 * e->seg_off[s], n = 2 * (e->geo[s].points - 1);
	const int32_t *cur = e->cur + off, *pc = e->prev_cur + off, *pv = e->prev_vel + off;
	uint32_t *z = e->zz + off;
	uint64_t sum[4] = {0, 0, 0, 0};
	long bits;
	int pred = 0;
	if (e->raw[s] || key_tick || e->need_key[s]) {
		e->mode[s] = e->raw[s] ? PTP_MODE_RAW : PTP_MODE_KEY;
		e->dbits[s] = -1;
		return;
	}
	/* Residual size of all four predictors in one pass: temporal r (with and without the
	 * velocity), optionally minus the previous segment's r of the same component. */
	ptp_pred_sums(cur, pc, pv, n, sum);
	if (sum[PTP_PRED_LINEAR] == 0) {
		e->mode[s] = PTP_MODE_HOLD;
		e->dbits[s] = 2;
		return;
	}
	/* The smallest sum of zigzag residuals stands in for the coded size. */
	for (int p = 1; p < 4; p++)
		if (sum[p] < sum[pred])
			pred = p;
	ptp_pred_residuals(cur, pc, pv, n, pred, z);
	e->mode[s] = PTP_MODE_DELTA;
	e->pred[s] = (uint8_t)pred;
	e->k[s] = (uint8_t)ptp_best_k(z, n, &bits);
	e->dbits[s] = 2 + 2 + 4 + bits;
}

/* One encoder's tick between its checks and its commit: what ptp_encoder_tick computes
 * before the closed loop, and the loop's per-strand errors after it. */
typedef struct tick_job_t {
	ptp_encoder_t *e;
	const float *head_p, *xyz;
	ptp_quat16_t q16;
	ptp_head_state_t hs;
	double rot[9], hp[3], se[PTP_MAX_STRANDS];
} tick_job_t;

/* ptp_encoder_tick's checks and the head pose the strands are quantised against; on an
 * error nothing has changed. */
static ptp_err_t tick_prepare(tick_job_t *j, ptp_encoder_t *e, const float head_p[3],
                              const float head_q[4], const float *xyz, size_t n_points)
{
	double q[4];
	ptp_err_t err;
	if (!xyz || n_points != (size_t)e->n_points)
		return PTP_EINVAL;
	if (!ptp_all_finite(xyz, 3 * n_points) || !ptp_all_finite(head_p, 3))
		return PTP_EFLOAT;
	err = ptp_quat16_pack(head_q, &j->q16);
	if (err != PTP_OK)
		return err;
	ptp_quat16_unpack(&j->q16, q);
	ptp_quat_matrix(q, j->rot);
	for (int i = 0; i < 3; i++)
		j->hp[i] = head_p[i];
	/* the compact coding's head position is on its grid: the strands are quantised
	 * against the root the decoder will compute from it */
	if (e->compact && (err = ptp_enc_head_prepare(e, head_p, &j->q16, &j->hs, j->hp)) != PTP_OK)
		return err;
	j->e = e;
	j->head_p = head_p;
	j->xyz = xyz;
	return PTP_OK;
}

/* The closed loop's tasks of job j (codes into its encoder's next), appended at t. */
static int tick_tasks(tick_job_t *j, ptp_quant_task_t *t)
{
	const ptp_encoder_t *e = j->e;
	for (int s = 0; s < e->strand_count; s++)
		t[s] = (ptp_quant_task_t){&e->geo[s], ptp_grid_m(e->bits[s]), j->rot, j->hp,
		                          j->xyz + 3 * (e->seg_off[s] + s),
		                          e->next + 2 * e->seg_off[s], &j->se[s]};
	return e->strand_count;
}

/* After the closed loop: nothing fails from here on. */
static void tick_commit(tick_job_t *j)
{
	ptp_encoder_t *e = j->e;
	double worst = 0.0;
	int key_tick, segs = e->seg_off[e->strand_count];
	uint8_t raw[PTP_MAX_STRANDS];
	for (int s = 0; s < e->strand_count; s++) {
		raw[s] = j->se[s] > (double)e->params.max_error_m;
		if (!raw[s] && j->se[s] > worst)
			worst = j->se[s];
	}
	/* The code arrays rotate instead of being copied: prev_cur <- cur <- next,
	 * prev_vel <- vel, then vel = cur - prev_cur. */
	{
		int32_t *t = e->prev_cur;
		e->prev_cur = e->cur;
		e->cur = e->next;
		e->next = t;
		t = e->prev_vel;
		e->prev_vel = e->vel;
		e->vel = t;
		if (e->ticks == 0)
			memset(e->vel, 0, sizeof(int32_t) * 2 * (size_t)segs);
		else
			ptp_code_delta(e->vel, e->cur, e->prev_cur, 2 * segs);
	}
	/* only a raw strand's record carries its input points */
	for (int s = 0, p = 0; s < e->strand_count; p += e->geo[s].points, s++)
		if (raw[s])
			memcpy(e->xyz + 3 * p, j->xyz + 3 * p,
			       sizeof(float) * 3 * (size_t)e->geo[s].points);
	/* the record's head pose bytes, as ptp_record_encode lays them out */
	for (int i = 0; i < 3; i++) {
		uint32_t b = ptp_f32_bits(j->head_p[i]);
		uint16_t c = (uint16_t)j->q16.c[i];
		for (int k = 0; k < 4; k++)
			e->head[4 * i + k] = (uint8_t)(b >> (8 * k));
		e->head[12 + 2 * i] = (uint8_t)c;
		e->head[13 + 2 * i] = (uint8_t)(c >> 8);
	}
	e->largest = j->q16.largest;
	e->last_error = worst;
	key_tick = e->ticks == 0 || e->force_key ||
	           (e->ticks >= (uint64_t)e->params.keyframe_interval &&
	            (e->ticks - e->key_phase) % (uint64_t)e->params.keyframe_interval == 0);
	if (e->compact)
		ptp_enc_head_commit(e, &j->hs, key_tick);
	for (int s = 0; s < e->strand_count; s++) {
		e->raw[s] = raw[s];
		choose_mode(e, s, key_tick);
		e->need_key[s] = raw[s];
	}
	e->force_key = 0;
	e->ticks++;
}

ptp_err_t ptp_encoder_tick(ptp_encoder_t *e, const float head_p[3], const float head_q[4],
                           const float *xyz, size_t n_points)
{
	tick_job_t j;
	ptp_quant_task_t t[PTP_MAX_STRANDS];
	ptp_err_t err = tick_prepare(&j, e, head_p, head_q, xyz, n_points);
	if (err != PTP_OK)
		return err;
	ptp_quantise_tasks(e->kernel, t, tick_tasks(&j, t));
	tick_commit(&j);
	return PTP_OK;
}

void ptp_encoder_tick_many(const ptp_tick_in_t *in, int n, ptp_err_t *err)
{
	tick_job_t j[PTP_TICK_MANY_MAX];
	ptp_quant_task_t t[PTP_TICK_MANY_MAX * PTP_MAX_STRANDS];
	int nj = 0, nt = 0, kernel = -1;
	for (int i = 0; i < n; i++) {
		ptp_encoder_t *e = in[i].enc;
		if (i >= PTP_TICK_MANY_MAX || !e || (in[i].compact && !e->compact)) {
			err[i] = PTP_EINVAL;
			continue;
		}
		if (in[i].compact)
			e->next_seq = in[i].last_seq; /* as ptp_encoder_tick_c, whatever follows */
		err[i] = tick_prepare(&j[nj], e, in[i].head_p, in[i].head_q, in[i].xyz,
		                      in[i].n_points);
		if (err[i] != PTP_OK)
			continue;
		if (kernel >= 0 && e->kernel != kernel) {
			/* encoders set to different kernels (tests only): this one alone */
			ptp_quantise_tasks(e->kernel, t + nt, tick_tasks(&j[nj], t + nt));
			tick_commit(&j[nj]);
			continue;
		}
		kernel = e->kernel;
		nt += tick_tasks(&j[nj], t + nt);
		nj++;
	}
	if (nt > 0)
		ptp_quantise_tasks(kernel, t, nt);
	for (int i = 0; i < nj; i++)
		tick_commit(&j[i]);
}

void ptp_enc_write_strand(const ptp_encoder_t *e, int s, int mode, ptp_bitw_t *w, int point0)
{
	int n = 2 * (e->geo[s].points - 1), off = 2 * e->seg_off[s];
	ptp_bitw_put(w, (uint32_t)mode, 2);
	if (mode == PTP_MODE_DELTA) {
		/* the writer in a local: nothing takes its address, so it lives in registers */
		ptp_bitw_t lw;
		const uint32_t *z = e->zz + off;
		int k = e->k[s];
		ptp_bitw_put(w, (uint32_t)(e->pred[s] | k << 2), 6); /* pred 2 bits, then k 4 */
#if PTP_RESID_AVX2
		if (ptp_resid_avx2() && ptp_put_eg_pairs_avx2(w, z, n, k))
			return;
#endif
		lw = *w;
		/* a segment's two codes as one field when they fit (almost always): the writer's
		 * state is a chain from field to field, so fewer fields, less waiting */
		for (int i = 0; i < n; i += 2) {
			int la, lb;
			uint64_t ca = ptp_eg_code(z[i], k, &la), cb = ptp_eg_code(z[i + 1], k, &lb);
			if (la + lb <= 56) {
				ptp_bitw_put_bits(&lw, ca | cb << la, la + lb);
			} else {
				ptp_bitw_put_bits(&lw, ca, la);
				ptp_bitw_put_bits(&lw, cb, lb);
			}
		}
		*w = lw;
	} else if (mode == PTP_MODE_KEY) {
		uint32_t z[2 * (PTP_MAX_POINTS - 1)];
		int32_t m = ptp_grid_m(e->bits[s]);
		long bits;
		int k;
		ptp_bitw_put(w, (uint32_t)(e->bits[s] - PTP_BITS_MIN), 4);
		for (int i = 0; i < n; i++)
			ptp_bitw_put(w, (uint32_t)(e->cur[off + i] + m), e->bits[s]);
		for (int i = 0; i < n; i++)
			z[i] = ptp_zigzag(e->vel[off + i]);
		k = ptp_best_k(z, n, &bits);
		ptp_bitw_put(w, (uint32_t)k, 4);
		for (int i = 0; i < n; i++)
			ptp_bitw_eg(w, z[i], k);
	} else if (mode == PTP_MODE_RAW) {
		for (int i = 0; i < 3 * e->geo[s].points; i++)
			ptp_bitw_put(w, ptp_f32_bits(e->xyz[3 * point0 + i]), 32);
	}
}

/* The strand count that opens strand data (PROTOCOL.md 7): a byte, or for 256 strands and
 * more a zero byte and a u16. */
void ptp_enc_write_count(int n, ptp_bitw_t *w)
{
	if (n <= 255) {
		ptp_bitw_put(w, (uint32_t)n, 8);
	} else {
		ptp_bitw_put(w, 0, 8);
		ptp_bitw_put(w, (uint32_t)n, 16);
	}
}

/* Strand data (count byte + bit stream) into buf[0, cap); returns its size in bits. */
static size_t write_data(const ptp_encoder_t *e, int key, uint8_t *buf, size_t cap)
{
	ptp_bitw_t w;
	size_t bits;
	ptp_bitw_init(&w, buf, cap);
	ptp_enc_write_count(e->strand_count, &w);
	for (int s = 0, p = 0; s < e->strand_count; p += e->geo[s].points, s++) {
		int mode = e->mode[s];
		if (key)
			mode = e->raw[s] ? PTP_MODE_RAW : PTP_MODE_KEY;
		ptp_enc_write_strand(e, s, mode, &w, p);
	}
	bits = ptp_bitw_bits(&w);
	ptp_bitw_flush(&w);
	return bits;
}

/* Size of the strand data in bits: summed from choose_mode when every strand's size is
 * known, else by a dry run of the writer. */
static size_t data_bits(const ptp_encoder_t *e, int key)
{
	size_t bits = e->strand_count <= 255 ? 8 : 24;
	for (int s = 0; s < e->strand_count; s++) {
		if (key || e->dbits[s] < 0)
			return write_data(e, key, NULL, 0);
		bits += (size_t)e->dbits[s];
	}
	return bits;
}

size_t ptp_encoder_data_bits(const ptp_encoder_t *e, int key)
{
	return data_bits(e, key);
}

int ptp_enc_strands_key(const ptp_encoder_t *e, int key)
{
	int is_key = 1;
	for (int s = 0; s < e->strand_count; s++)
		is_key &= key || e->mode[s] == PTP_MODE_KEY || e->mode[s] == PTP_MODE_RAW;
	return is_key;
}

int ptp_encoder_record_is_key(const ptp_encoder_t *e, int key)
{
	/* the compact record is a keyframe only with its head block absolute, too */
	return ptp_enc_strands_key(e, key) && (!e->compact || key || e->head_abs);
}

ptp_err_t ptp_encoder_record(const ptp_encoder_t *e, int key, uint64_t id, uint32_t last_seq,
                             uint8_t *buf, size_t cap, size_t *needed)
{
	size_t data_len, total;
	int is_key;
	if (e->ticks == 0)
		return PTP_EINVAL;
	is_key = ptp_enc_strands_key(e, key);
	data_len = (data_bits(e, key) + 7) / 8;
	total = PTP_RECORD_MIN + data_len;
	if (needed)
		*needed = total;
	if (data_len > 65535)
		return PTP_ELIMIT;
	if (!buf || cap < total)
		return PTP_ENOSPACE;
	/* The 33-byte head, field by field as ptp_record_encode writes it (PROTOCOL.md 6):
	 * id, flags (key bit, dropped quaternion component in bits 6..7), last_seq, then
	 * the head pose bytes kept from the tick (finite, and a valid quat16: nothing that
	 * ptp_record_encode could refuse), data_len. */
	for (int j = 0; j < 8; j++)
		buf[j] = (uint8_t)(id >> (8 * j));
	buf[8] = (uint8_t)((is_key ? PTP_RECORD_KEY : 0) | (e->largest & 3) << 6);
	for (int j = 0; j < 4; j++)
		buf[9 + j] = (uint8_t)(last_seq >> (8 * j));
	memcpy(buf + 13, e->head, sizeof e->head);
	buf[31] = (uint8_t)data_len;
	buf[32] = (uint8_t)(data_len >> 8);
	write_data(e, key, buf + PTP_RECORD_MIN, data_len);
	return PTP_OK;
}
