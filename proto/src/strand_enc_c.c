/* The compact coding's encoder side (PROTOCOL.md 11): the head pose on its grid with its
 * change over the last tick, and the compact record writer. The strands are those of the
 * classic encoder (strand_enc.c), quantised against the grid head position. */
#include <math.h>
#include <string.h>

#include "bits.h"
#include "ptp/compact.h"
#include "strand_internal.h"
#include "varint.h"

ptp_encoder_t *ptp_encoder_create_compact(const ptp_shape_t *shape,
                                          const ptp_encoder_params_t *params)
{
	ptp_encoder_t *e = ptp_encoder_create(shape, params);
	if (e)
		e->compact = 1;
	return e;
}

ptp_err_t ptp_encoder_tick_c(ptp_encoder_t *e, uint32_t last_seq, const float head_p[3],
                             const float head_q[4], const float *xyz, size_t n_points)
{
	if (!e || !e->compact)
		return PTP_EINVAL;
	e->next_seq = last_seq;
	return ptp_encoder_tick(e, head_p, head_q, xyz, n_points);
}

ptp_err_t ptp_enc_head_prepare(const ptp_encoder_t *e, const float head_p[3],
                               const ptp_quat16_t *q16, ptp_head_state_t *hs, double hp[3])
{
	memset(hs, 0, sizeof *hs);
	hs->valid = 1;
	hs->seq = e->next_seq;
	hs->largest = q16->largest;
	for (int i = 0; i < 3; i++) {
		/* f32 * 2^16 is exact in double; round half up to the grid */
		double g = floor((double)head_p[i] * PTP_HEAD_GRID + 0.5);
		if (!(fabs(g) <= (double)PTP_HEAD_P_MAX))
			return PTP_ERANGE;
		hs->cur[i] = (int64_t)g;
		hp[i] = g / PTP_HEAD_GRID; /* exact: a power of two */
		hs->cur[3 + i] = q16->c[i];
	}
	return PTP_OK;
}

static int fits(int64_t v)
{
	return v > -PTP_HEAD_VEL_LIMIT && v < PTP_HEAD_VEL_LIMIT;
}

void ptp_enc_head_commit(ptp_encoder_t *e, const ptp_head_state_t *hs, int key_tick)
{
	const ptp_head_state_t *o = &e->hs;
	ptp_head_state_t n = *hs;
	int abs = !o->valid || key_tick || n.largest != o->largest ||
	          (uint32_t)(n.seq - o->seq) >= PTP_SEQ_DELTA_LIMIT;
	for (int j = 0; j < 6; j++) {
		int64_t v = o->valid ? n.cur[j] - o->cur[j] : 0;
		if (j >= 3 && n.largest != o->largest)
			v = 0; /* other components: no change to speak of */
		if (!fits(v)) {
			v = 0; /* sent absolute, with no velocity */
			abs = 1;
		}
		n.vel[j] = v;
		if (o->valid && !fits(n.cur[j] - (o->cur[j] + o->vel[j])))
			abs = 1;
	}
	e->hs_prev = *o;
	e->hs = n;
	e->head_abs = abs;
}

/* The order of fewest bits for three values, written, then the values. */
static void put_triple(ptp_bitw_t *w, const int64_t *v)
{
	uint32_t z[3];
	long bits;
	int k;
	for (int i = 0; i < 3; i++)
		z[i] = ptp_zigzag((int32_t)v[i]);
	k = ptp_best_k(z, 3, &bits);
	{
		/* k and the three codes as few fields as fit in 56 bits (the stream is the same
		 * bits however they are grouped), with the writer in a local */
		ptp_bitw_t lw = *w;
		uint64_t field = (uint64_t)k;
		int len = 4;
		for (int i = 0; i < 3; i++) {
			int l;
			uint64_t c = ptp_eg_code(z[i], k, &l);
			if (len + l > 56) {
				ptp_bitw_put_bits(&lw, field, len);
				field = 0, len = 0;
			}
			field |= c << len;
			len += l;
		}
		ptp_bitw_put_bits(&lw, field, len);
		*w = lw;
	}
}

static void write_head(const ptp_encoder_t *e, int abs, ptp_bitw_t *w)
{
	const ptp_head_state_t *h = &e->hs, *o = &e->hs_prev;
	int64_t r[6];
	if (abs) {
		ptp_bitw_put(w, h->seq, 32);
		for (int i = 0; i < 3; i++)
			ptp_bitw_put(w, (uint32_t)(int32_t)h->cur[i], 32);
		for (int i = 3; i < 6; i++)
			ptp_bitw_put(w, (uint16_t)(int16_t)h->cur[i], 16);
		put_triple(w, h->vel);
		put_triple(w, h->vel + 3);
		return;
	}
	ptp_bitw_eg(w, h->seq - o->seq, 0);
	for (int j = 0; j < 6; j++)
		r[j] = h->cur[j] - (o->cur[j] + o->vel[j]);
	put_triple(w, r);
	put_triple(w, r + 3);
}

ptp_err_t ptp_encoder_record_c(const ptp_encoder_t *e, int key, uint64_t id, uint8_t *buf,
                               size_t cap, size_t *needed)
{
	int abs = key || e->head_abs, is_key = abs;
	uint64_t gen = id >> 32, slot = id & 0xffffffffu;
	size_t idl = ptp_uvarint_len(gen) + ptp_uvarint_len(slot), at = idl + 1 + 3, body, total;
	ptp_bitw_t w;
	if (!e->compact || e->ticks == 0)
		return PTP_EINVAL;
	is_key &= ptp_enc_strands_key(e, key);
	/* The body is written after room for the largest length field, then moved down. */
	ptp_bitw_init(&w, buf && cap > at ? buf + at : NULL, buf && cap > at ? cap - at : 0);
	write_head(e, abs, &w);
	for (int s = 0, p = 0; s < e->strand_count; p += e->geo[s].points, s++) {
		int mode = key ? (e->raw[s] ? PTP_MODE_RAW : PTP_MODE_KEY) : e->mode[s];
		ptp_enc_write_strand(e, s, mode, &w, p);
	}
	body = ptp_bitw_bytes(&w);
	ptp_bitw_flush(&w);
	total = idl + 1 + ptp_uvarint_len(body) + body;
	if (needed)
		*needed = total;
	if (body > PTP_RECORD_C_MAX_BODY)
		return PTP_ELIMIT;
	if (!buf || cap < at + body)
		return PTP_ENOSPACE;
	ptp_uvarint_put(buf + ptp_uvarint_put(buf, gen), slot);
	buf[idl] = (uint8_t)((is_key ? PTP_RECORD_KEY : 0) | (abs ? PTP_RECORD_ABS : 0) |
	                     (e->hs.largest & 3) << 6);
	ptp_uvarint_put(buf + idl + 1, body);
	memmove(buf + idl + 1 + ptp_uvarint_len(body), buf + at, body);
	return PTP_OK;
}
