/* The compact frame batch message (PROTOCOL.md 11.1, 11.2): framing and the batch clock.
 * The records' bodies are strand_enc_c.c's and strand_dec.c's. */
#include <string.h>

#include "ptp/compact.h"
#include "varint.h"
#include "wire.h"

/* Reads one varint from r; on failure r->err is set and 0 returned. */
static uint64_t get_varint(ptp_reader_t *r)
{
	uint64_t v = 0;
	ptp_err_t err = PTP_OK;
	size_t n;
	if (r->err != PTP_OK)
		return 0;
	n = ptp_uvarint_get(r->p, r->left, &v, &err);
	if (!n) {
		ptp_reader_fail(r, err);
		return 0;
	}
	r->p += n;
	r->left -= n;
	return v;
}

/* One record's framing: id, flags (bits 2..5: step - 1), body length and body; in a
 * batch of minor >= PTP_MINOR_HASH a key record's body ends with the state hash. */
static ptp_err_t parse_record(ptp_reader_t *r, int minor, ptp_record_c_t *out)
{
	uint64_t len, hi, lo;
	/* the id as its two halves: a daemon's ids are generation << 32 | slot + 1, both
	 * small, so two short varints instead of one of five bytes */
	hi = get_varint(r);
	lo = get_varint(r);
	if (r->err == PTP_OK && (hi > 0xffffffffu || lo > 0xffffffffu))
		ptp_reader_fail(r, PTP_ERANGE);
	out->id = hi << 32 | lo;
	out->flags = ptp_get_u8(r);
	out->step = (uint8_t)(((out->flags >> 2) & 15) + 1);
	out->flags &= (uint8_t)~0x3c;
	len = get_varint(r);
	if (r->err == PTP_OK && len > PTP_RECORD_C_MAX_BODY)
		ptp_reader_fail(r, PTP_ERANGE);
	out->body_len = (uint16_t)len;
	out->body = r->err == PTP_OK ? ptp_get_bytes(r, (size_t)len) : NULL;
	out->has_hash = 0;
	out->state_hash = 0;
	if (r->err == PTP_OK && minor >= PTP_MINOR_HASH && (out->flags & PTP_RECORD_KEY)) {
		ptp_reader_t h;
		if (out->body_len < PTP_STATE_HASH_SIZE) {
			ptp_reader_fail(r, PTP_ETRUNC); /* the hash cut short */
			return r->err;
		}
		out->body_len = (uint16_t)(out->body_len - PTP_STATE_HASH_SIZE);
		ptp_reader_init(&h, out->body + out->body_len, PTP_STATE_HASH_SIZE);
		out->state_hash = ptp_get_u64(&h);
		out->has_hash = 1;
	}
	return r->err;
}

static ptp_err_t parse_records(ptp_reader_t *r, int minor, uint16_t count)
{
	if (!ptp_reader_need(r, count, PTP_RECORD_C_MIN))
		return r->err;
	for (int i = 0; i < count && r->err == PTP_OK; i++) {
		ptp_record_c_t rec;
		parse_record(r, minor, &rec);
	}
	return r->err;
}

/* The minor a batch's header says: 1.2's layout (PTP_MINOR_COMPACT) unless the
 * connection's minor adds to it. */
static uint8_t batch_minor(uint8_t minor)
{
	return minor >= PTP_MINOR_HASH ? minor : PTP_MINOR_COMPACT;
}

ptp_err_t ptp_batch_c_decode(const uint8_t *buf, size_t len, ptp_batch_c_t *out)
{
	ptp_reader_t r;
	uint32_t payload;
	uint64_t count;
	int strict;
	ptp_err_t he = ptp_header_check(buf, len, &payload);
	if (he != PTP_OK)
		return he;
	strict = buf[3] <= PTP_MINOR; /* 3: 1.2's layout (never sent) */
	if (strict && buf[5] != 0)
		return PTP_EFLAGS;
	if (buf[4] != PTP_FRAME_BATCH_C)
		return PTP_ETYPE;
	memset(out, 0, sizeof *out);
	out->minor = buf[3];
	ptp_reader_init(&r, buf + PTP_HEADER_SIZE, payload);
	out->tick_gap = get_varint(&r);
	if (r.err == PTP_OK && out->tick_gap > ((uint64_t)1 << 32))
		return PTP_ERANGE;
	out->time_dev = ptp_unzigzag64(get_varint(&r));
	count = get_varint(&r);
	if (r.err == PTP_OK && count > 65535)
		return PTP_ELIMIT;
	out->count = (uint16_t)count;
	if (r.err != PTP_OK)
		return r.err;
	out->records = r.p;
	if (parse_records(&r, out->minor, out->count) != PTP_OK)
		return r.err;
	out->records_len = (size_t)(r.p - out->records);
	if (strict && r.left != 0)
		return PTP_ETRAILING;
	return PTP_OK;
}

ptp_err_t ptp_batch_c_encode(const ptp_batch_c_t *b, uint8_t *buf, size_t cap, size_t *needed)
{
	uint8_t head[32];
	size_t n = 0, total;
	ptp_reader_t r;
	uint8_t minor = batch_minor(b->minor);
	if (b->tick_gap > ((uint64_t)1 << 32))
		return PTP_ERANGE;
	if (b->minor > PTP_MINOR)
		return PTP_EINVAL;
	ptp_reader_init(&r, b->records, b->records ? b->records_len : 0);
	if (parse_records(&r, minor, b->count) != PTP_OK || r.left != 0)
		return PTP_EINVAL;
	n += ptp_uvarint_put(head + n, b->tick_gap);
	n += ptp_uvarint_put(head + n, ptp_zigzag64(b->time_dev));
	n += ptp_uvarint_put(head + n, b->count);
	total = PTP_HEADER_SIZE + n + b->records_len;
	if (needed)
		*needed = total;
	if (total - PTP_HEADER_SIZE > PTP_MAX_PAYLOAD)
		return PTP_ETOOBIG;
	if (!buf || cap < total)
		return PTP_ENOSPACE;
	buf[0] = 'P', buf[1] = 'T', buf[2] = PTP_MAJOR, buf[3] = minor;
	buf[4] = PTP_FRAME_BATCH_C, buf[5] = 0;
	for (int i = 0; i < 4; i++)
		buf[6 + i] = (uint8_t)((total - PTP_HEADER_SIZE) >> (8 * i));
	memcpy(buf + PTP_HEADER_SIZE, head, n);
	if (b->records_len)
		memcpy(buf + PTP_HEADER_SIZE + n, b->records, b->records_len);
	return PTP_OK;
}

ptp_err_t ptp_record_c_set_step(uint8_t *rec, size_t len, unsigned step)
{
	uint64_t v;
	ptp_err_t err = PTP_OK;
	size_t at = 0, n;
	if (!rec || step < 1 || step > PTP_RECORD_C_STEP_MAX)
		return PTP_EINVAL;
	for (int i = 0; i < 2; i++) { /* id_hi, id_lo */
		n = ptp_uvarint_get(rec + at, len - at, &v, &err);
		if (!n)
			return PTP_EINVAL;
		at += n;
	}
	if (at >= len)
		return PTP_EINVAL;
	rec[at] = (uint8_t)((rec[at] & ~0x3c) | (step - 1) << 2);
	return PTP_OK;
}

ptp_err_t ptp_record_c_add_hash(const uint8_t *rec, size_t len, uint64_t hash, uint8_t *out,
                                size_t cap, size_t *needed)
{
	ptp_reader_t r;
	ptp_writer_t w;
	ptp_record_c_t c;
	uint8_t v[10];
	size_t head;
	if (!rec)
		return PTP_EINVAL;
	ptp_reader_init(&r, rec, len);
	if (parse_record(&r, PTP_MINOR_COMPACT, &c) != PTP_OK || r.left != 0 ||
	    !(c.flags & PTP_RECORD_KEY))
		return PTP_EINVAL;
	if (c.body_len > PTP_RECORD_C_MAX_BODY - PTP_STATE_HASH_SIZE)
		return PTP_ERANGE;
	/* id varints and flags as they are (the body_len varint before the body is in its
	 * shortest form, so its size is known), then the longer body's length */
	head = (size_t)(c.body - rec) - ptp_uvarint_put(v, c.body_len);
	ptp_writer_init(&w, out, cap);
	ptp_put_bytes(&w, rec, head);
	ptp_put_bytes(&w, v, ptp_uvarint_put(v, (uint64_t)c.body_len + PTP_STATE_HASH_SIZE));
	ptp_put_bytes(&w, c.body, c.body_len);
	ptp_put_u64(&w, hash);
	if (needed)
		*needed = w.len;
	return ptp_writer_result(&w);
}

int ptp_record_c_next(const ptp_batch_c_t *b, size_t *offset, ptp_record_c_t *out)
{
	ptp_reader_t r;
	if (!b->records || *offset >= b->records_len)
		return 0;
	ptp_reader_init(&r, b->records + *offset, b->records_len - *offset);
	if (parse_record(&r, b->minor, out) != PTP_OK)
		return 0;
	*offset = b->records_len - r.left;
	return 1;
}

/* The nominal time step of gap ticks, us: (gap 10^6 + hz / 2) div hz, gap <= 2^32. */
static int64_t nominal_us(uint64_t gap, uint16_t hz)
{
	return (int64_t)((gap * 1000000u + hz / 2u) / hz);
}

ptp_err_t ptp_batch_clock_advance(ptp_batch_clock_t *c, const ptp_batch_c_t *b)
{
	if (c->tick_hz < 1 || b->tick_gap > ((uint64_t)1 << 32))
		return PTP_ERANGE;
	/* in unsigned arithmetic: a hostile deviation wraps instead of overflowing */
	c->tick += b->tick_gap;
	c->time_us = (int64_t)((uint64_t)c->time_us + (uint64_t)nominal_us(b->tick_gap, c->tick_hz) +
	                       (uint64_t)b->time_dev);
	return PTP_OK;
}

ptp_err_t ptp_batch_clock_delta(const ptp_batch_clock_t *c, uint64_t tick, int64_t time_us,
                                uint64_t *gap, int64_t *dev)
{
	if (c->tick_hz < 1 || tick < c->tick || tick - c->tick > ((uint64_t)1 << 32))
		return PTP_ERANGE;
	*gap = tick - c->tick;
	*dev = (int64_t)((uint64_t)time_us - (uint64_t)c->time_us -
	                 (uint64_t)nominal_us(*gap, c->tick_hz));
	return PTP_OK;
}
