/* Private: LEB128 varints of the compact coding (PROTOCOL.md 11.1): 7 bits a byte, least
 * significant group first, high bit set on every byte but the last; at most 10 bytes, the
 * shortest form only. */
#ifndef PTP_VARINT_H
#define PTP_VARINT_H

#include <stddef.h>
#include <stdint.h>

#include "ptp/proto.h"

enum {
	PTP_HEAD_P_MAX = 1 << 30,        /* |compact head position| in grid units, inclusive */
	PTP_HEAD_VEL_LIMIT = 1 << 19,    /* |head change| and |head residual|, exclusive */
	PTP_SEQ_DELTA_LIMIT = 1 << 20    /* seq advance in a delta head block, exclusive */
};

static inline size_t ptp_uvarint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

/* Writes v at p (ptp_uvarint_len(v) bytes); returns that length. */
static inline size_t ptp_uvarint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

/* Reads a varint from p[0, left): *v, and the bytes used; 0 with *err PTP_ETRUNC (ends
 * inside) or PTP_ERANGE (longer than 10 bytes, above 2^64 - 1, or not the shortest form). */
static inline size_t ptp_uvarint_get(const uint8_t *p, size_t left, uint64_t *v, ptp_err_t *err)
{
	uint64_t x = 0;
	for (size_t i = 0; i < 10; i++) {
		uint8_t b;
		if (i >= left) {
			*err = PTP_ETRUNC;
			return 0;
		}
		b = p[i];
		if (i == 9 && b > 1) {
			*err = PTP_ERANGE;
			return 0;
		}
		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			if (b == 0 && i > 0) {
				*err = PTP_ERANGE; /* a longer form than needed */
				return 0;
			}
			*v = x;
			return i + 1;
		}
	}
	*err = PTP_ERANGE;
	return 0;
}

static inline uint64_t ptp_zigzag64(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t ptp_unzigzag64(uint64_t u)
{
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

#endif
