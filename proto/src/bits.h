/* Private: LSB-first bit streams and Exp-Golomb codes for strand data.
 *
 * Bit i of a stream is bit (i mod 8) of byte (i / 8); a multi-bit field is written least
 * significant bit first. The writer only stores bits inside cap but always counts them;
 * the reader never reads past its end (PTP_ETRUNC) and keeps the first error.
 *
 * Both work a whole field at a time through a 64-bit word (strand data is written and
 * read once per instance per tick, field by field, so these are inline): LSB-first order
 * means a stream is a little-endian integer, and a field is just v << position. Bytes are
 * assembled with shifts, never by type punning, so nothing depends on host endianness.
 */
#ifndef PTP_BITS_H
#define PTP_BITS_H

#include <stddef.h>
#include <stdint.h>

#include "ptp/proto.h"

/* Exp-Golomb values are limited to n = floor(log2(v + 2^k)) <= PTP_EG_MAX_BITS, enough
 * for every residual a valid stream produces (|residual| < 2^19, see PROTOCOL.md). */
enum { PTP_EG_MAX_BITS = 20 };

typedef struct ptp_bitw_t {
	uint8_t *buf;
	size_t cap;    /* bytes */
	size_t bits;   /* bits produced so far (stored or pending) */
	uint64_t acc;  /* pending bits: the last (bits - 8 * stored) produced, LSB first */
	size_t stored; /* bytes of the stream already stored (or skipped beyond cap) */
} ptp_bitw_t;

typedef struct ptp_bitr_t {
	const uint8_t *buf;
	size_t nbits; /* bits available */
	size_t pos;   /* next bit */
	ptp_err_t err;
} ptp_bitr_t;

/* floor(log2 u) + 1 for u > 0; 0 for 0. */
static inline int ptp_bit_length(uint32_t u)
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

/* Length in bits of v as Exp-Golomb of order k. */
static inline int ptp_eg_len(uint32_t v, int k)
{
	return 2 * (ptp_bit_length(v + (1u << k)) - 1) - k + 1;
}

/* Signed <-> unsigned: 0, -1, 1, -2, 2 ... -> 0, 1, 2, 3, 4 ... */
static inline uint32_t ptp_zigzag(int32_t v)
{
	return v >= 0 ? (uint32_t)v * 2u : (uint32_t)(-(int64_t)v) * 2u - 1u;
}

static inline int32_t ptp_unzigzag(uint32_t u)
{
	return (u & 1u) ? -(int32_t)((u - 1u) / 2u) - 1 : (int32_t)(u / 2u);
}

void ptp_bitw_init(ptp_bitw_t *w, uint8_t *buf, size_t cap);
/* Stores the pending 32 low bits of acc (slow path of ptp_bitw_put near or beyond cap). */
void ptp_bitw_store32(ptp_bitw_t *w);
/* Stores what is pending, the last byte padded with zero bits; call once at the end. */
void ptp_bitw_flush(ptp_bitw_t *w);
/* Bytes used, padding included (the pad bits are written as zero). */
size_t ptp_bitw_bytes(const ptp_bitw_t *w);

/* Writes the low n (<= 32) bits of v. */
static inline void ptp_bitw_put(ptp_bitw_t *w, uint32_t v, int n)
{
	unsigned pending = (unsigned)(w->bits - 8 * w->stored); /* < 32 between calls */
	uint64_t x = n < 32 ? v & ((1u << n) - 1u) : v;
	w->acc |= x << pending;
	w->bits += (size_t)n;
	if (pending + (unsigned)n >= 32) {
		if (w->stored + 4 <= w->cap) {
			uint8_t *p = w->buf + w->stored;
			p[0] = (uint8_t)w->acc;
			p[1] = (uint8_t)(w->acc >> 8);
			p[2] = (uint8_t)(w->acc >> 16);
			p[3] = (uint8_t)(w->acc >> 24);
			w->stored += 4;
			w->acc >>= 32;
		} else {
			ptp_bitw_store32(w);
		}
	}
}

/* Writes v (< 2^PTP_EG_MAX_BITS) as Exp-Golomb of order k (0..15): with u = v + 2^k and
 * n = floor(log2 u), n - k zero bits, a one bit, then the low n bits of u; as one field
 * of 2n - k + 1 bits that is (2 * (u - 2^n) + 1) << (n - k). */
static inline void ptp_bitw_eg(ptp_bitw_t *w, uint32_t v, int k)
{
	uint32_t u = v + (1u << k);
	int n = ptp_bit_length(u) - 1, len = 2 * n - k + 1;
	uint32_t code = ((u ^ (1u << n)) << 1) | 1u; /* n + 1 <= 21 bits */
	if (len <= 32) {
		ptp_bitw_put(w, code << (n - k), len);
	} else {
		ptp_bitw_put(w, 0, n - k);
		ptp_bitw_put(w, code, n + 1);
	}
}

void ptp_bitr_init(ptp_bitr_t *r, const uint8_t *buf, size_t nbytes);
/* The 64 stream bits from bit 8 * (pos / 8) on (zeros past the end). */
uint64_t ptp_bitr_window_slow(const ptp_bitr_t *r);

static inline uint64_t ptp_bitr_window(const ptp_bitr_t *r)
{
	size_t byte = r->pos >> 3;
	if (byte + 8 <= r->nbits >> 3) {
		const uint8_t *p = r->buf + byte;
		return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
		       (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
		       (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
	}
	return ptp_bitr_window_slow(r);
}

/* The next n (<= 32) bits; PTP_ETRUNC (and 0) when fewer are left. */
static inline uint32_t ptp_bitr_get(ptp_bitr_t *r, int n)
{
	uint64_t win;
	if (r->err != PTP_OK)
		return 0;
	if ((size_t)n > r->nbits - r->pos) {
		r->err = PTP_ETRUNC;
		return 0;
	}
	if (n == 0)
		return 0;
	/* pos % 8 + n <= 39 bits: inside the window */
	win = ptp_bitr_window(r) >> (r->pos & 7);
	r->pos += (size_t)n;
	return (uint32_t)(win & (((uint64_t)1 << n) - 1u));
}

/* Exp-Golomb of order k (0..15). Errors as reading bit by bit would find them first:
 * PTP_ERANGE once the prefix passes PTP_EG_MAX_BITS - k zeros, PTP_ETRUNC when the bits
 * end before that or before the code does. */
static inline uint32_t ptp_bitr_eg(ptp_bitr_t *r, int k)
{
	int limit = PTP_EG_MAX_BITS - k + 1, zeros; /* this many zeros is an error */
	size_t left;
	uint64_t win;
	uint32_t low;
	if (r->err != PTP_OK)
		return 0;
	left = r->nbits - r->pos;
	win = ptp_bitr_window(r) >> (r->pos & 7); /* >= 57 valid bits, zeros past the end */
	if (left < 64)
		win &= ((uint64_t)1 << left) - 1u;
	win &= ((uint64_t)1 << limit) - 1u; /* limit <= 21 */
	if (win == 0) {
		/* no one bit among the next min(left, limit) bits */
		r->err = left < (size_t)limit ? PTP_ETRUNC : PTP_ERANGE;
		return 0;
	}
#if defined(__GNUC__) || defined(__clang__)
	zeros = __builtin_ctzll(win);
#else
	for (zeros = 0; !((win >> zeros) & 1u); zeros++)
		;
#endif
	r->pos += (size_t)zeros + 1;
	low = ptp_bitr_get(r, zeros + k);
	if (r->err != PTP_OK)
		return 0;
	return ((1u << (zeros + k)) | low) - (1u << k);
}

#endif
