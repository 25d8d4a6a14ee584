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
#include <string.h>

#include "ptp/proto.h"

/* Exp-Golomb values are limited to n = floor(log2(v + 2^k)) <= PTP_EG_MAX_BITS, enough
 * for every residual a valid stream produces (|residual| < 2^19, see PROTOCOL.md). */
enum { PTP_EG_MAX_BITS = 20 };

typedef struct ptp_bitw_t {
	uint8_t *buf;
	size_t cap;       /* bytes */
	size_t stored;    /* whole bytes of the stream produced (stored, or counted past cap) */
	uint64_t acc;     /* the bits after those, LSB first: fewer than 8 between calls */
	unsigned pending; /* how many */
} ptp_bitw_t;

typedef struct ptp_bitr_t {
	const uint8_t *buf;
	size_t nbits;    /* bits available */
	size_t pos;      /* next bit */
	size_t readable; /* bytes of buf that may be loaded, >= nbits / 8 (zero past nbits) */
	ptp_err_t err;
} ptp_bitr_t;

/* floor(log2 u) + 1 for u > 0; 0 for 0. Without a branch: 2u + 1 has one bit more than
 * u, and is never 0. */
static inline int ptp_bit_length(uint32_t u)
{
#if defined(__GNUC__) || defined(__clang__)
	return 63 - __builtin_clzll((uint64_t)u << 1 | 1u);
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
/* ptp_bitw_put's careful path, within 8 bytes of cap: byte by byte, each only if inside.
 * Inline, like the rest of the writer: a writer whose address never reaches a real call
 * lives in registers, and then the byte stores cannot alias it. */
static inline void ptp_bitw_put_slow(ptp_bitw_t *w)
{
	for (; w->pending >= 8; w->pending -= 8, w->acc >>= 8, w->stored++)
		if (w->stored < w->cap)
			w->buf[w->stored] = (uint8_t)w->acc;
}

/* Stores what is pending, the last byte padded with zero bits; call once, at the end. */
void ptp_bitw_flush(ptp_bitw_t *w);

/* Bits produced so far. */
static inline size_t ptp_bitw_bits(const ptp_bitw_t *w)
{
	return 8 * w->stored + w->pending;
}

/* Bytes used, padding included (the pad bits are written as zero). */
static inline size_t ptp_bitw_bytes(const ptp_bitw_t *w)
{
	return (ptp_bitw_bits(w) + 7) >> 3;
}

/* v as 8 little-endian bytes: one store where the host is little-endian, else by shifts. */
static inline void ptp_store_le64(uint8_t *p, uint64_t v)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(p, &v, sizeof v);
#else
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
#endif
}

/* Writes x, which has n <= 56 bits (above them it must be zero). Far from the end of the
 * buffer the whole 64-bit accumulator is stored every time (bits above the produced ones
 * are zero, and later stores overwrite them), then the whole bytes are dropped from it: no
 * branch on the data, so nothing to mispredict. */
static inline void ptp_bitw_put_bits(ptp_bitw_t *w, uint64_t x, int n)
{
	w->acc |= x << w->pending;
	w->pending += (unsigned)n; /* < 64 */
	if (w->stored + 8 <= w->cap) {
		unsigned whole = w->pending >> 3;
		ptp_store_le64(w->buf + w->stored, w->acc);
		w->stored += whole;
		w->acc >>= 8 * whole;
		w->pending &= 7;
	} else {
		ptp_bitw_put_slow(w);
	}
}

/* Writes the low n (<= 32) bits of v. */
static inline void ptp_bitw_put(ptp_bitw_t *w, uint32_t v, int n)
{
	ptp_bitw_put_bits(w, n < 32 ? v & ((1u << n) - 1u) : v, n);
}

/* v (< 2^PTP_EG_MAX_BITS) as Exp-Golomb of order k (0..15): with u = v + 2^k and
 * n = floor(log2 u), n - k zero bits, a one bit, then the low n bits of u; as one field of
 * 2n - k + 1 <= 41 bits (*len) that is (2 (u - 2^n) + 1) << (n - k). */
static inline uint64_t ptp_eg_code(uint32_t v, int k, int *len)
{
	uint32_t u = v + (1u << k);
	int n = ptp_bit_length(u) - 1;
	*len = 2 * n - k + 1;
	return (uint64_t)(((u ^ (1u << n)) << 1) | 1u) << (n - k);
}

static inline void ptp_bitw_eg(ptp_bitw_t *w, uint32_t v, int k)
{
	int len;
	uint64_t code = ptp_eg_code(v, k, &len);
	ptp_bitw_put_bits(w, code, len);
}

void ptp_bitr_init(ptp_bitr_t *r, const uint8_t *buf, size_t nbytes);
/* Same, over a copy followed by at least 8 zero bytes (readable = nbytes + 8 or more): then
 * every window is one load. */
void ptp_bitr_init_padded(ptp_bitr_t *r, const uint8_t *buf, size_t nbytes, size_t readable);
/* The 64 stream bits from bit 8 * (pos / 8) on (zeros past the end). */
uint64_t ptp_bitr_window_slow(const ptp_bitr_t *r);

/* The reader's functions are small but called once per field of every record: inlined
 * even where the compiler's size heuristics would not. */
#if defined(__GNUC__) || defined(__clang__)
#define PTP_HOT_INLINE static inline __attribute__((always_inline))
#else
#define PTP_HOT_INLINE static inline
#endif

PTP_HOT_INLINE uint64_t ptp_bitr_window(const ptp_bitr_t *r)
{
	size_t byte = r->pos >> 3;
	if (byte + 8 <= r->readable) {
		const uint8_t *p = r->buf + byte;
		return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
		       (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
		       (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
	}
	return ptp_bitr_window_slow(r);
}

/* The next n (<= 32) bits; PTP_ETRUNC (and 0) when fewer are left. */
PTP_HOT_INLINE uint32_t ptp_bitr_get(ptp_bitr_t *r, int n)
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
PTP_HOT_INLINE uint32_t ptp_bitr_eg(ptp_bitr_t *r, int k)
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
