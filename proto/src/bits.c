/* LSB-first bit streams and Exp-Golomb codes (see bits.h): the rarely taken paths, at
 * the ends of buffers. */
#include "bits.h"

void ptp_bitw_init(ptp_bitw_t *w, uint8_t *buf, size_t cap)
{
	w->buf = buf;
	w->cap = buf ? cap : 0;
	w->bits = 0;
	w->acc = 0;
	w->stored = 0;
}

/* Byte by byte, each only if inside cap: the writer counts what it cannot store. */
static void store(ptp_bitw_t *w, int nbytes)
{
	for (int i = 0; i < nbytes; i++, w->stored++)
		if (w->stored < w->cap)
			w->buf[w->stored] = (uint8_t)(w->acc >> (8 * i));
}

void ptp_bitw_store32(ptp_bitw_t *w)
{
	store(w, 4);
	w->acc >>= 32;
}

void ptp_bitw_flush(ptp_bitw_t *w)
{
	size_t pending = w->bits - 8 * w->stored;
	store(w, (int)((pending + 7) / 8)); /* bits above `pending` in acc are zero */
	w->acc = 0;
}

size_t ptp_bitw_bytes(const ptp_bitw_t *w)
{
	return (w->bits + 7) >> 3;
}

void ptp_bitr_init(ptp_bitr_t *r, const uint8_t *buf, size_t nbytes)
{
	r->buf = buf;
	r->nbits = nbytes * 8;
	r->pos = 0;
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
