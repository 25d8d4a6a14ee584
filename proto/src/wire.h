/* Private: the bounded little-endian reader and the capacity-checked writer.
 *
 * Reader: every get checks the bytes left first; the first failure sticks in r->err and
 * later gets return 0 without reading, so a decoder can read a run of fields and check
 * once. Writer: writes only while inside cap, but always counts, so one pass both sizes
 * and fills (w->len is the size needed). Every multi-byte field is assembled byte by
 * byte: nothing depends on host endianness or alignment.
 */
#ifndef PTP_WIRE_H
#define PTP_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "ptp/proto.h"

typedef struct ptp_reader_t {
	const uint8_t *p; /* next byte */
	size_t left;      /* bytes from p to the end */
	ptp_err_t err;    /* first error, PTP_OK while none */
} ptp_reader_t;

typedef struct ptp_writer_t {
	uint8_t *buf;  /* may be NULL when cap is 0 */
	size_t cap;    /* bytes writable */
	size_t len;    /* bytes produced so far (may exceed cap: the size needed) */
	ptp_err_t err; /* first validation error, PTP_OK while none */
} ptp_writer_t;

/* The 10-byte header's checks every decoder makes, in the order PROTOCOL.md gives their
 * errors: length, magic, major version, payload bound, payload against len. *payload
 * gets the payload length. Minor version, type and flags are the caller's. */
ptp_err_t ptp_header_check(const uint8_t *buf, size_t len, uint32_t *payload);

void ptp_reader_init(ptp_reader_t *r, const uint8_t *p, size_t len);
/* Sets err unless one is already set. */
void ptp_reader_fail(ptp_reader_t *r, ptp_err_t e);
uint8_t ptp_get_u8(ptp_reader_t *r);
uint16_t ptp_get_u16(ptp_reader_t *r);
uint32_t ptp_get_u32(ptp_reader_t *r);
uint64_t ptp_get_u64(ptp_reader_t *r);
int64_t ptp_get_i64(ptp_reader_t *r);
int16_t ptp_get_i16(ptp_reader_t *r);
/* A finite f32 (PTP_EFLOAT otherwise). */
float ptp_get_f32(ptp_reader_t *r);
/* u8 length + UTF-8 bytes without NUL, length <= max (PTP_ELIMIT), borrowed. */
ptp_str_t ptp_get_str8(ptp_reader_t *r, size_t max);
/* Borrows n bytes (PTP_ETRUNC when fewer are left). */
const uint8_t *ptp_get_bytes(ptp_reader_t *r, size_t n);
/* PTP_ECOUNT unless count * elem_size bytes are left (checked without overflow). */
int ptp_reader_need(ptp_reader_t *r, size_t count, size_t elem_size);

void ptp_writer_init(ptp_writer_t *w, uint8_t *buf, size_t cap);
void ptp_writer_fail(ptp_writer_t *w, ptp_err_t e);
void ptp_put_u8(ptp_writer_t *w, uint8_t v);
void ptp_put_u16(ptp_writer_t *w, uint16_t v);
void ptp_put_u32(ptp_writer_t *w, uint32_t v);
void ptp_put_u64(ptp_writer_t *w, uint64_t v);
void ptp_put_i64(ptp_writer_t *w, int64_t v);
void ptp_put_i16(ptp_writer_t *w, int16_t v);
/* Fails with PTP_EFLOAT for a non-finite value. */
void ptp_put_f32(ptp_writer_t *w, float v);
void ptp_put_str8(ptp_writer_t *w, ptp_str_t s, size_t max);
void ptp_put_bytes(ptp_writer_t *w, const uint8_t *p, size_t n);
/* Overwrites 4 bytes at offset (which must already have been produced). */
void ptp_patch_u32(ptp_writer_t *w, size_t offset, uint32_t v);
/* PTP_OK, the validation error, or PTP_ENOSPACE when len > cap. */
ptp_err_t ptp_writer_result(const ptp_writer_t *w);

/* 1 when s[0, n) is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF) and
 * has no NUL. */
int ptp_utf8_valid(const char *s, size_t n);

/* IEEE-754 binary32 bits <-> float, by memcpy (no aliasing tricks). */
uint32_t ptp_f32_bits(float f);
float ptp_f32_from_bits(uint32_t b);
/* 1 when f is neither NaN nor infinite (checked on the bits: immune to -ffast-math). */
int ptp_f32_finite(float f);

#endif
