/* Strand decoder: reads a record's strand data against the instance shape.
 *
 * The whole record is decoded into scratch state first and committed only when every
 * strand, the padding and the length check out, so a bad record leaves the decoder as it
 * was (the client then asks for a keyframe). Every code is range-checked before it is
 * used; the bit reader cannot run past the data.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bits.h"
#include "ptp/compact.h"
#include "ptp/strand.h"
#include "strand_internal.h"
#include "varint.h"
#include "wire.h"

struct ptp_decoder_t {
	ptp_shape_t shape;
	ptp_strand_geo_t geo[PTP_MAX_STRANDS];
	int seg_off[PTP_MAX_STRANDS + 1];
	int n_points;
	ptp_strand_state_t st[PTP_MAX_STRANDS], tmp[PTP_MAX_STRANDS];
	int32_t *mem;  /* cur/vel of st and tmp */
	double *pts;   /* scratch positions */
	uint8_t *data; /* a record's strand data copied, then 8 zero bytes (see apply) */
	size_t data_cap;
	int have_tick; /* last_tick is set */
	uint64_t last_tick;
	ptp_head_state_t head; /* compact records' head pose history (PROTOCOL.md 11.3) */
};

ptp_decoder_t *ptp_decoder_create(const ptp_shape_t *shape)
{
	ptp_decoder_t *d;
	size_t segs;
	if (!shape || ptp_shape_validate(shape) != PTP_OK)
		return NULL;
	d = calloc(1, sizeof *d);
	if (!d)
		return NULL;
	ptp_shape_copy(&d->shape, shape);
	for (int s = 0; s < shape->strand_count; s++) {
		ptp_geo_init(&d->geo[s], &shape->strands[s]);
		d->seg_off[s + 1] = d->seg_off[s] + shape->strands[s].points - 1;
	}
	d->n_points = ptp_shape_point_count(shape);
	segs = (size_t)d->seg_off[shape->strand_count];
	d->mem = calloc(segs * 8, sizeof(int32_t));
	d->pts = calloc((size_t)d->n_points * 3, sizeof(double));
	/* room for the longest valid strand data of this shape (every strand at its largest:
	 * raw, or a key with 16-bit codes and 41-bit velocities), plus the padding */
	for (int s = 0; s < shape->strand_count; s++) {
		size_t n = (size_t)shape->strands[s].points - 1;
		d->data_cap += (10 + 114 * n + 96 * (n + 1) + 7) / 8;
	}
	d->data = calloc(d->data_cap + 8, 1);
	if (!d->mem || !d->pts || !d->data) {
		ptp_decoder_destroy(d);
		return NULL;
	}
	for (int s = 0; s < shape->strand_count; s++) {
		size_t o = 2 * (size_t)d->seg_off[s];
		d->st[s].cur = d->mem + o;
		d->st[s].vel = d->mem + 2 * segs + o;
		d->tmp[s].cur = d->mem + 4 * segs + o;
		d->tmp[s].vel = d->mem + 6 * segs + o;
	}
	return d;
}

void ptp_decoder_destroy(ptp_decoder_t *d)
{
	if (!d)
		return;
	free(d->mem);
	free(d->pts);
	free(d->data);
	free(d);
}

void ptp_decoder_reset(ptp_decoder_t *d)
{
	for (int s = 0; s < d->shape.strand_count; s++)
		d->st[s].valid = 0;
	d->have_tick = 0;
	d->head.valid = 0;
}

static int in_grid(int64_t c, int32_t m)
{
	return c >= -m && c <= m;
}

/* Reads strand s into d->tmp[s] (codes) or, raw, into d->pts; returns PTP_OK or why not. */
static ptp_err_t read_strand(ptp_decoder_t *d, int s, ptp_bitr_t *r, double *pts, int *raw,
                             int in_sequence)
{
	const ptp_strand_state_t *old = &d->st[s];
	ptp_strand_state_t *t = &d->tmp[s];
	int n = 2 * (d->geo[s].points - 1);
	uint32_t mode = ptp_bitr_get(r, 2);
	*raw = 0;
	if (r->err != PTP_OK)
		return r->err;
	if (mode == PTP_MODE_RAW) {
		for (int i = 0; i < 3 * d->geo[s].points; i++) {
			float f = ptp_f32_from_bits(ptp_bitr_get(r, 32));
			if (r->err != PTP_OK)
				return r->err;
			if (!ptp_f32_finite(f))
				return PTP_EFLOAT;
			pts[i] = f;
		}
		t->valid = 0;
		t->bits = old->bits;
		*raw = 1;
		return PTP_OK;
	}
	if (mode == PTP_MODE_KEY) {
		uint32_t bits = ptp_bitr_get(r, 4) + PTP_BITS_MIN, k;
		int32_t m;
		if (r->err == PTP_OK && bits > PTP_BITS_MAX)
			return PTP_ERANGE;
		m = ptp_grid_m((int)bits);
		for (int i = 0; i < n; i++) {
			int64_t c = (int64_t)ptp_bitr_get(r, (int)bits) - m;
			if (r->err != PTP_OK)
				return r->err;
			if (!in_grid(c, m))
				return PTP_ERANGE;
			t->cur[i] = (int32_t)c;
		}
		k = ptp_bitr_get(r, 4);
		for (int i = 0; i < n; i++) {
			int32_t v = ptp_unzigzag(ptp_bitr_eg(r, (int)k));
			if (r->err != PTP_OK)
				return r->err;
			if (v < -2 * m || v > 2 * m)
				return PTP_ERANGE;
			t->vel[i] = v;
		}
		t->valid = 1;
		t->bits = (int)bits;
		return PTP_OK;
	}
	if (!old->valid || !in_sequence)
		return PTP_ENOKEY;
	t->valid = 1;
	t->bits = old->bits;
	{
		int32_t m = ptp_grid_m(old->bits), last[2] = {0, 0};
		uint32_t pred = PTP_PRED_LINEAR, k = 0;
		if (mode == PTP_MODE_DELTA) {
			pred = ptp_bitr_get(r, 2);
			k = ptp_bitr_get(r, 4);
		}
		/* the reader in a local for the loop: no call sees its address, so it stays in
		 * registers (it goes back to *r on every way out) */
		ptp_bitr_t lr = *r;
		ptp_err_t err = PTP_OK;
		for (int i = 0; i < n; i++) {
			int64_t p = old->cur[i] + ((pred & PTP_PRED_LINEAR) ? old->vel[i] : 0);
			int64_t e = 0, c;
			if (mode == PTP_MODE_DELTA) {
				e = ptp_unzigzag(ptp_bitr_eg(&lr, (int)k));
				if (lr.err != PTP_OK) {
					err = lr.err;
					break;
				}
				if (pred & PTP_PRED_SPATIAL)
					e += last[i & 1];
			}
			c = p + e;
			if (!in_grid(c, m)) {
				err = PTP_ERANGE;
				break;
			}
			/* |e| <= |c| + |p| <= 4m here, so last[] stays far inside int32 */
			last[i & 1] = (int32_t)e;
			t->cur[i] = (int32_t)c;
			t->vel[i] = (int32_t)(c - old->cur[i]);
		}
		*r = lr;
		if (err != PTP_OK)
			return err;
	}
	return r->err;
}

/* Every strand block from r (state into d->tmp, raw points into d->pts), then the
 * padding; returns PTP_OK or the first error. */
static ptp_err_t read_strands(ptp_decoder_t *d, ptp_bitr_t *r, int in_sequence, int *raw)
{
	for (int s = 0, p = 0; s < d->shape.strand_count; p += d->geo[s].points, s++) {
		ptp_err_t e = read_strand(d, s, r, d->pts + 3 * p, &raw[s], in_sequence);
		if (e != PTP_OK)
			return e;
	}
	if (r->nbits - r->pos >= 8)
		return PTP_ETRAILING;
	if (ptp_bitr_get(r, (int)(r->nbits - r->pos)) != 0)
		return PTP_EFLAGS;
	return PTP_OK;
}

/* Points of the non-raw strands from d->tmp's codes; PTP_ERANGE beyond float range. */
static ptp_err_t rebuild(ptp_decoder_t *d, const ptp_quat16_t *hq, const double hp[3],
                         const int *raw)
{
	double q[4], rot[9];
	ptp_quat16_unpack(hq, q);
	ptp_quat_matrix(q, rot);
	for (int s = 0, p = 0; s < d->shape.strand_count; p += d->geo[s].points, s++) {
		double frame[9];
		if (raw[s])
			continue;
		ptp_frame(rot, d->geo[s].basis, frame);
		ptp_strand_points(&d->geo[s], rot, hp, frame, d->tmp[s].cur,
		                  ptp_grid_m(d->tmp[s].bits), d->pts + 3 * p);
	}
	/* A far-away head plus long strands can leave float range: refuse, do not emit inf. */
	for (size_t i = 0; i < 3 * (size_t)d->n_points; i++)
		if (!(fabs(d->pts[i]) <= FLT_MAX))
			return PTP_ERANGE;
	return PTP_OK;
}

/* The decoded record becomes the state; the points go out. */
static void commit(ptp_decoder_t *d, uint64_t tick, const int *raw, float *out)
{
	for (int s = 0; s < d->shape.strand_count; s++) {
		ptp_strand_state_t *st = &d->st[s], *t = &d->tmp[s];
		size_t n = 2 * (size_t)(d->geo[s].points - 1);
		if (!raw[s]) {
			memcpy(st->cur, t->cur, n * sizeof(int32_t));
			memcpy(st->vel, t->vel, n * sizeof(int32_t));
		}
		st->valid = t->valid;
		st->bits = t->bits;
	}
	d->have_tick = 1;
	d->last_tick = tick;
	for (size_t i = 0; i < 3 * (size_t)d->n_points; i++)
		out[i] = (float)d->pts[i];
}

/* Reads the data into a copy with 8 zero bytes after it, so that the bit reader loads
 * whole words to the end; data too long to be valid is read where it is. */
static void reader_on(ptp_decoder_t *d, ptp_bitr_t *r, const uint8_t *data, size_t len)
{
	if (len <= d->data_cap) {
		memcpy(d->data, data, len);
		memset(d->data + len, 0, 8);
		ptp_bitr_init_padded(r, d->data, len, len + 8);
	} else {
		ptp_bitr_init(r, data, len);
	}
}

ptp_err_t ptp_decoder_apply(ptp_decoder_t *d, uint64_t tick, const ptp_record_t *rec, float *out,
                            size_t n_points)
{
	ptp_bitr_t r;
	double hp[3];
	int raw[PTP_MAX_STRANDS];
	ptp_err_t e;
	if (!rec || !out || n_points != (size_t)d->n_points)
		return PTP_EINVAL;
	if (!rec->data || rec->data_len < 1)
		return PTP_ETRUNC;
	/* the count: a byte, or 0 and a u16 for 256 strands and more (PROTOCOL.md 7) */
	size_t at = 1;
	int count = rec->data[0];
	if (count == 0 && d->shape.strand_count > 255) {
		if (rec->data_len < 3)
			return PTP_ETRUNC;
		count = rec->data[1] | rec->data[2] << 8;
		at = 3;
	}
	if (count != d->shape.strand_count)
		return PTP_ESHAPE;
	reader_on(d, &r, rec->data + at, rec->data_len - at);
	e = read_strands(d, &r,
	                 d->have_tick && tick == d->last_tick + (rec->step > 1 ? rec->step : 1), raw);
	if (e != PTP_OK)
		return e;
	for (int i = 0; i < 3; i++)
		hp[i] = rec->head_p[i];
	e = rebuild(d, &rec->head_q, hp, raw);
	if (e != PTP_OK)
		return e;
	commit(d, tick, raw, out);
	return PTP_OK;
}

/* Three values of a head block: k (4 bits), then EG_k(zigzag) each, |v| < 2^19. */
static ptp_err_t get_triple(ptp_bitr_t *r, int64_t *v)
{
	int k = (int)ptp_bitr_get(r, 4);
	for (int i = 0; i < 3; i++) {
		int32_t x = ptp_unzigzag(ptp_bitr_eg(r, k));
		if (r->err != PTP_OK)
			return r->err;
		if (x <= -PTP_HEAD_VEL_LIMIT || x >= PTP_HEAD_VEL_LIMIT)
			return PTP_ERANGE;
		v[i] = x;
	}
	return PTP_OK;
}

/* The head block (PROTOCOL.md 11.3) into *h, from the history d->head. */
static ptp_err_t read_head(const ptp_decoder_t *d, ptp_bitr_t *r, int abs, int largest,
                           int in_sequence, ptp_head_state_t *h)
{
	const ptp_head_state_t *o = &d->head;
	int64_t q2 = 0;
	ptp_err_t e;
	memset(h, 0, sizeof *h);
	h->valid = 1;
	h->largest = (uint8_t)largest;
	if (abs) {
		h->seq = ptp_bitr_get(r, 32);
		for (int i = 0; i < 3; i++)
			h->cur[i] = (int32_t)ptp_bitr_get(r, 32);
		for (int i = 3; i < 6; i++)
			h->cur[i] = (int16_t)ptp_bitr_get(r, 16);
		if (r->err != PTP_OK)
			return r->err;
		if ((e = get_triple(r, h->vel)) != PTP_OK || (e = get_triple(r, h->vel + 3)) != PTP_OK)
			return e;
	} else {
		int64_t res[6];
		uint32_t ds;
		if (!o->valid || !in_sequence)
			return PTP_ENOKEY;
		ds = ptp_bitr_eg(r, 0);
		if (r->err != PTP_OK)
			return r->err;
		if (ds >= PTP_SEQ_DELTA_LIMIT)
			return PTP_ERANGE;
		h->seq = o->seq + ds;
		if ((e = get_triple(r, res)) != PTP_OK || (e = get_triple(r, res + 3)) != PTP_OK)
			return e;
		if (largest != o->largest)
			return PTP_ERANGE;
		for (int j = 0; j < 6; j++) {
			h->cur[j] = o->cur[j] + o->vel[j] + res[j];
			h->vel[j] = h->cur[j] - o->cur[j];
			if (h->vel[j] <= -PTP_HEAD_VEL_LIMIT || h->vel[j] >= PTP_HEAD_VEL_LIMIT)
				return PTP_ERANGE;
		}
	}
	for (int i = 0; i < 3; i++)
		if (h->cur[i] < -PTP_HEAD_P_MAX || h->cur[i] > PTP_HEAD_P_MAX)
			return PTP_ERANGE;
	for (int i = 3; i < 6; i++) {
		if (h->cur[i] < -32767 || h->cur[i] > 32767)
			return PTP_ERANGE;
		q2 += h->cur[i] * h->cur[i];
	}
	if (q2 > (int64_t)46340 * 46340)
		return PTP_ERANGE;
	return PTP_OK;
}

ptp_err_t ptp_decoder_apply_c(ptp_decoder_t *d, uint64_t tick, uint64_t step,
                              const ptp_record_c_t *rec, ptp_head_c_t *head, float *out,
                              size_t n_points)
{
	ptp_bitr_t r;
	ptp_head_state_t h;
	ptp_quat16_t q16;
	double hp[3];
	int raw[PTP_MAX_STRANDS], in_seq;
	ptp_err_t e;
	if (!rec || !out || n_points != (size_t)d->n_points || step < 1)
		return PTP_EINVAL;
	in_seq = d->have_tick && tick - d->last_tick == step && tick > d->last_tick;
	reader_on(d, &r, rec->body, rec->body_len);
	e = read_head(d, &r, (rec->flags & PTP_RECORD_ABS) != 0, rec->flags >> 6, in_seq, &h);
	if (e != PTP_OK)
		return e;
	e = read_strands(d, &r, in_seq, raw);
	if (e != PTP_OK)
		return e;
	q16.largest = h.largest;
	for (int i = 0; i < 3; i++) {
		hp[i] = (double)h.cur[i] / PTP_HEAD_GRID;
		q16.c[i] = (int16_t)h.cur[3 + i];
	}
	e = rebuild(d, &q16, hp, raw);
	if (e != PTP_OK)
		return e;
	d->head = h;
	commit(d, tick, raw, out);
	if (head) {
		head->last_seq = h.seq;
		head->head_q = q16;
		for (int i = 0; i < 3; i++)
			head->head_p[i] = hp[i];
	}
	return PTP_OK;
}
