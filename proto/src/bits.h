/* Private: LSB-first bit streams and Exp-Golomb codes for strand data.
 *
 * Bit i of a stream is bit (i mod 8) of byte (i / 8); a multi-bit field is written least
 * significant bit first. The writer only stores bits inside cap but always counts them;
 * the reader never reads past its end (PTP_ETRUNC) and keeps the first error.
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
	size_t cap;  /* bytes */
	size_t bits; /* bits produced so far */
} ptp_bitw_t;

typedef struct ptp_bitr_t {
	const uint8_t *buf;
	size_t nbits; /* bits available */
	size_t pos;   /* next bit */
	ptp_err_t err;
} ptp_bitr_t;

void ptp_bitw_init(ptp_bitw_t *w, uint8_t *buf, size_t cap);
/* Writes the low n (<= 32) bits of v. */
void ptp_bitw_put(ptp_bitw_t *w, uint32_t v, int n);
/* Writes v (< 2^PTP_EG_MAX_BITS) as Exp-Golomb of order k (0..15). */
void ptp_bitw_eg(ptp_bitw_t *w, uint32_t v, int k);
/* Bytes used, padding included (the pad bits are written as zero). */
size_t ptp_bitw_bytes(const ptp_bitw_t *w);

void ptp_bitr_init(ptp_bitr_t *r, const uint8_t *buf, size_t nbytes);
uint32_t ptp_bitr_get(ptp_bitr_t *r, int n);
/* PTP_ERANGE for a prefix longer than PTP_EG_MAX_BITS - k zeros. */
uint32_t ptp_bitr_eg(ptp_bitr_t *r, int k);

/* floor(log2 u) + 1 for u > 0; 0 for 0. */
int ptp_bit_length(uint32_t u);

/* Length in bits of v as Exp-Golomb of order k. */
int ptp_eg_len(uint32_t v, int k);

/* Signed <-> unsigned: 0, -1, 1, -2, 2 ... -> 0, 1, 2, 3, 4 ... */
static inline uint32_t ptp_zigzag(int32_t v)
{
	return v >= 0 ? (uint32_t)v * 2u : (uint32_t)(-(int64_t)v) * 2u - 1u;
}

static inline int32_t ptp_unzigzag(uint32_t u)
{
	return (u & 1u) ? -(int32_t)((u - 1u) / 2u) - 1 : (int32_t)(u / 2u);
}

#endif
