/* LSB-first bit streams and Exp-Golomb codes (see bits.h). */
#include "bits.h"

void ptp_bitw_init(ptp_bitw_t *w, uint8_t *buf, size_t cap)
{
	w->buf = buf;
	w->cap = buf ? cap : 0;
	w->bits = 0;
}

void ptp_bitw_put(ptp_bitw_t *w, uint32_t v, int n)
{
	uint64_t x = n < 32 ? v & ((1u << n) - 1u) : v;
	while (n > 0) {
		size_t byte = w->bits >> 3;
		int bit = (int)(w->bits & 7), take = 8 - bit < n ? 8 - bit : n;
		if (byte < w->cap) {
			if (bit == 0)
				w->buf[byte] = 0; /* a fresh byte: pad bits end up zero */
			w->buf[byte] |= (uint8_t)((x & ((1u << take) - 1u)) << bit);
		}
		x >>= take;
		w->bits += (size_t)take;
		n -= take;
	}
}

/* Order-k Exp-Golomb, LSB-first: with u = v + 2^k and n = floor(log2 u), write n - k zero
 * bits, a one bit, then the low n bits of u. */
/* One instruction where the compiler offers it; else by halving the range. */
int ptp_bit_length(uint32_t u)
{
#if defined(__GNUC__) || defined(__clang__)
	return u ? 32 - __builtin_clz(u) : 0;
#else
	int n = 0;
	for (int step = 16; step > 0; step >>= 1) {
		if (u >> step) {
			n += step;
			u >>= step;
		}
	}
	return n + (int)u;
#endif
}

void ptp_bitw_eg(ptp_bitw_t *w, uint32_t v, int k)
{
	uint32_t u = v + (1u << k);
	int n = ptp_bit_length(u) - 1;
	ptp_bitw_put(w, 0, n - k);
	ptp_bitw_put(w, 1, 1);
	ptp_bitw_put(w, u, n); /* bits above n - 1 are not written: the leading one is implied */
}

int ptp_eg_len(uint32_t v, int k)
{
	return 2 * (ptp_bit_length(v + (1u << k)) - 1) - k + 1;
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

uint32_t ptp_bitr_get(ptp_bitr_t *r, int n)
{
	uint32_t v = 0;
	if (r->err != PTP_OK)
		return 0;
	if ((size_t)n > r->nbits - r->pos) {
		r->err = PTP_ETRUNC;
		return 0;
	}
	for (int i = 0; i < n; i++, r->pos++)
		v |= (uint32_t)((r->buf[r->pos >> 3] >> (r->pos & 7)) & 1u) << i;
	return v;
}

uint32_t ptp_bitr_eg(ptp_bitr_t *r, int k)
{
	int zeros = 0;
	uint32_t low;
	for (;;) {
		uint32_t b = ptp_bitr_get(r, 1);
		if (r->err != PTP_OK)
			return 0;
		if (b)
			break;
		if (++zeros > PTP_EG_MAX_BITS - k) {
			r->err = PTP_ERANGE;
			return 0;
		}
	}
	low = ptp_bitr_get(r, zeros + k);
	if (r->err != PTP_OK)
		return 0;
	return ((1u << (zeros + k)) | low) - (1u << k);
}
