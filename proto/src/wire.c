/* Bounded little-endian reader and capacity-checked writer (see wire.h). */
#include "wire.h"

#include <string.h>

ptp_err_t ptp_header_check(const uint8_t *buf, size_t len, uint32_t *payload)
{
	if (!buf || len < PTP_HEADER_SIZE)
		return PTP_ETRUNC;
	if (buf[0] != 'P' || buf[1] != 'T')
		return PTP_EMAGIC;
	if (buf[2] != PTP_MAJOR)
		return PTP_EVERSION;
	*payload = (uint32_t)buf[6] | (uint32_t)buf[7] << 8 | (uint32_t)buf[8] << 16 |
	           (uint32_t)buf[9] << 24;
	if (*payload > PTP_MAX_PAYLOAD)
		return PTP_ETOOBIG;
	if (*payload > len - PTP_HEADER_SIZE)
		return PTP_ETRUNC;
	if (*payload < len - PTP_HEADER_SIZE)
		return PTP_ELENGTH;
	return PTP_OK;
}

void ptp_reader_init(ptp_reader_t *r, const uint8_t *p, size_t len)
{
	r->p = p;
	r->left = len;
	r->err = PTP_OK;
}

void ptp_reader_fail(ptp_reader_t *r, ptp_err_t e)
{
	if (r->err == PTP_OK)
		r->err = e;
}

/* The one place that moves the cursor: nothing is touched unless n bytes are left. */
static const uint8_t *take(ptp_reader_t *r, size_t n)
{
	const uint8_t *p;
	if (r->err != PTP_OK)
		return NULL;
	if (n > r->left) {
		r->err = PTP_ETRUNC;
		return NULL;
	}
	p = r->p;
	r->p += n;
	r->left -= n;
	return p;
}

static uint64_t load_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

uint8_t ptp_get_u8(ptp_reader_t *r)
{
	const uint8_t *p = take(r, 1);
	return p ? p[0] : 0;
}

uint16_t ptp_get_u16(ptp_reader_t *r)
{
	const uint8_t *p = take(r, 2);
	return p ? (uint16_t)load_le(p, 2) : 0;
}

uint32_t ptp_get_u32(ptp_reader_t *r)
{
	const uint8_t *p = take(r, 4);
	return p ? (uint32_t)load_le(p, 4) : 0;
}

uint64_t ptp_get_u64(ptp_reader_t *r)
{
	const uint8_t *p = take(r, 8);
	return p ? load_le(p, 8) : 0;
}

int64_t ptp_get_i64(ptp_reader_t *r)
{
	uint64_t u = ptp_get_u64(r);
	int64_t v;
	memcpy(&v, &u, sizeof v); /* two's complement reinterpretation, defined */
	return v;
}

int16_t ptp_get_i16(ptp_reader_t *r)
{
	uint16_t u = ptp_get_u16(r);
	int16_t v;
	memcpy(&v, &u, sizeof v);
	return v;
}

float ptp_get_f32(ptp_reader_t *r)
{
	const uint8_t *p = take(r, 4);
	float f;
	if (!p)
		return 0.0f;
	f = ptp_f32_from_bits((uint32_t)load_le(p, 4));
	if (!ptp_f32_finite(f)) {
		ptp_reader_fail(r, PTP_EFLOAT);
		return 0.0f;
	}
	return f;
}

ptp_str_t ptp_get_str8(ptp_reader_t *r, size_t max)
{
	ptp_str_t s = {"", 0};
	size_t n = ptp_get_u8(r);
	const uint8_t *p;
	if (r->err != PTP_OK)
		return s;
	if (n > max) {
		ptp_reader_fail(r, PTP_ELIMIT);
		return s;
	}
	p = take(r, n);
	if (!p)
		return s;
	if (!ptp_utf8_valid((const char *)p, n)) {
		ptp_reader_fail(r, PTP_EUTF8);
		return s;
	}
	s.ptr = (const char *)p;
	s.len = n;
	return s;
}

const uint8_t *ptp_get_bytes(ptp_reader_t *r, size_t n)
{
	return take(r, n);
}

int ptp_reader_need(ptp_reader_t *r, size_t count, size_t elem_size)
{
	if (r->err != PTP_OK)
		return 0;
	if (elem_size != 0 && count > r->left / elem_size) {
		r->err = PTP_ECOUNT;
		return 0;
	}
	return 1;
}

void ptp_writer_init(ptp_writer_t *w, uint8_t *buf, size_t cap)
{
	w->buf = buf;
	w->cap = buf ? cap : 0;
	w->len = 0;
	w->err = PTP_OK;
}

void ptp_writer_fail(ptp_writer_t *w, ptp_err_t e)
{
	if (w->err == PTP_OK)
		w->err = e;
}

static void put_le(ptp_writer_t *w, uint64_t v, int n)
{
	for (int i = 0; i < n; i++) {
		if (w->len < w->cap)
			w->buf[w->len] = (uint8_t)(v >> (8 * i));
		w->len++;
	}
}

void ptp_put_u8(ptp_writer_t *w, uint8_t v)
{
	put_le(w, v, 1);
}
void ptp_put_u16(ptp_writer_t *w, uint16_t v)
{
	put_le(w, v, 2);
}
void ptp_put_u32(ptp_writer_t *w, uint32_t v)
{
	put_le(w, v, 4);
}
void ptp_put_u64(ptp_writer_t *w, uint64_t v)
{
	put_le(w, v, 8);
}

void ptp_put_i64(ptp_writer_t *w, int64_t v)
{
	uint64_t u;
	memcpy(&u, &v, sizeof u);
	put_le(w, u, 8);
}

void ptp_put_i16(ptp_writer_t *w, int16_t v)
{
	uint16_t u;
	memcpy(&u, &v, sizeof u);
	put_le(w, u, 2);
}

void ptp_put_f32(ptp_writer_t *w, float v)
{
	if (!ptp_f32_finite(v))
		ptp_writer_fail(w, PTP_EFLOAT);
	put_le(w, ptp_f32_bits(v), 4);
}

void ptp_put_str8(ptp_writer_t *w, ptp_str_t s, size_t max)
{
	if (s.len > max || s.len > 255) {
		ptp_writer_fail(w, PTP_ELIMIT);
		return;
	}
	if (s.len > 0 && (!s.ptr || !ptp_utf8_valid(s.ptr, s.len))) {
		ptp_writer_fail(w, PTP_EUTF8);
		return;
	}
	ptp_put_u8(w, (uint8_t)s.len);
	ptp_put_bytes(w, (const uint8_t *)s.ptr, s.len);
}

void ptp_put_bytes(ptp_writer_t *w, const uint8_t *p, size_t n)
{
	if (n == 0)
		return;
	if (w->len < w->cap) {
		size_t room = w->cap - w->len;
		memcpy(w->buf + w->len, p, n < room ? n : room);
	}
	w->len += n;
}

void ptp_patch_u32(ptp_writer_t *w, size_t offset, uint32_t v)
{
	for (size_t i = 0; i < 4; i++)
		if (offset + i < w->cap)
			w->buf[offset + i] = (uint8_t)(v >> (8 * i));
}

ptp_err_t ptp_writer_result(const ptp_writer_t *w)
{
	if (w->err != PTP_OK)
		return w->err;
	return w->len > w->cap ? PTP_ENOSPACE : PTP_OK;
}

int ptp_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		unsigned c = p[i];
		size_t extra;
		uint32_t cp, min;
		if (c == 0)
			return 0;
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			extra = 1, cp = c & 0x1f, min = 0x80;
		} else if ((c & 0xf0) == 0xe0) {
			extra = 2, cp = c & 0x0f, min = 0x800;
		} else if ((c & 0xf8) == 0xf0) {
			extra = 3, cp = c & 0x07, min = 0x10000;
		} else {
			return 0;
		}
		if (extra > n - i - 1)
			return 0;
		for (size_t k = 1; k <= extra; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (p[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += extra + 1;
	}
	return 1;
}

uint32_t ptp_f32_bits(float f)
{
	uint32_t b;
	memcpy(&b, &f, sizeof b);
	return b;
}

float ptp_f32_from_bits(uint32_t b)
{
	float f;
	memcpy(&f, &b, sizeof f);
	return f;
}

int ptp_f32_finite(float f)
{
	return (ptp_f32_bits(f) & 0x7f800000u) != 0x7f800000u;
}
