/* LSB-first bit streams and Exp-Golomb codes (see bits.h): the rarely taken paths, at
 * the ends of buffers. */
#include "bits.h"

void ptp_bitw_init(ptp_bitw_t *w, uint8_t *buf, size_t cap)
{
	w->buf = buf;
	w->cap = buf ? cap : 0;
	w->stored = 0;
	w->acc = 0;
	w->pending = 0;
}

void ptp_bitw_flush(ptp_bitw_t *w)
{
	ptp_bitw_put_slow(w);
	if (w->pending) { /* the last byte: bits above `pending` in acc are zero, the padding */
		if (w->stored < w->cap)
			w->buf[w->stored] = (uint8_t)w->acc;
		w->stored++;
	}
	w->acc = 0;
	w->pending = 0;
}

void ptp_bitr_init(ptp_bitr_t *r, const uint8_t *buf, size_t nbytes)
{
	ptp_bitr_init_padded(r, buf, nbytes, nbytes);
}

void ptp_bitr_init_padded(ptp_bitr_t *r, const uint8_t *buf, size_t nbytes, size_t readable)
{
	r->buf = buf;
	r->nbits = nbytes * 8;
	r->pos = 0;
	r->readable = readable;
	r->err = PTP_OK;
}

uint64_t ptp_bitr_window_slow(const ptp_bitr_t *r)
{
	size_t byte = r->pos >> 3, nbytes = r->nbits >> 3;
	uint64_t v = 0;
	for (int i = 0; i < 8 && byte + (size_t)i < nbytes; i++)
		v |= (uint64_t)r->buf[byte + (size_t)i] << (8 * i);
	return v;
}
