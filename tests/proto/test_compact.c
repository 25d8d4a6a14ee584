/* The compact coding (PROTOCOL.md 11, protocol 1.2): hand-built bytes, the error rules,
 * the history rules (keyframes, lost frames, rates, resets), the error bound, and the
 * stream vectors of proto/vectors/compact/ (written by this program with
 * PTP_WRITE_VECTORS=1, checked by it, by tests/proto/js/compact.test.mjs and by the
 * Python reference decoder tests/proto/ref_compact.py, written from PROTOCOL.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compact_gen.h"
#include "ptp/compact.h"
#include "ptp/proto.h"
#include "ptp/strand.h"

/* ---- an independent bit list, to build expected bytes by hand */

typedef struct bits_t {
	uint8_t b[256];
	int n;
} bits_t;

static void put(bits_t *w, uint64_t v, int n)
{
	for (int i = 0; i < n; i++, w->n++)
		if (i < 64 && ((v >> i) & 1))
			w->b[w->n / 8] |= (uint8_t)(1u << (w->n % 8));
}

/* Exp-Golomb of order k as PROTOCOL.md 7.1 spells it: zeros, a one, the low m bits. */
static void put_eg(bits_t *w, uint32_t x, int k)
{
	uint32_t y = x + (1u << k);
	int m = 0;
	while ((y >> (m + 1)) != 0)
		m++;
	put(w, 0, m - k);
	put(w, 1, 1);
	put(w, y & ((1u << m) - 1u), m);
}

static ptp_shape_t one_strand(void)
{
	ptp_shape_t s;
	memset(&s, 0, sizeof s);
	s.strand_count = 1;
	s.strands[0] = (ptp_shape_strand_t){2, 1.0f, {0, 0, 0}, {0, 0, 1}};
	return s;
}

/* PROTOCOL.md 7.4's strand on a compact record: tick 1 a keyframe, tick 2 the same pose
 * (a hold and a zero head residual), bytes built bit by bit from the spec's tables. */
static void test_worked_example(void **state)
{
	ptp_shape_t sh = one_strand();
	ptp_encoder_t *e = ptp_encoder_create_compact(&sh, NULL);
	ptp_decoder_t *d = ptp_decoder_create(&sh);
	float hp[3] = {0, 0, 0}, hq[4] = {0, 0, 0, 1}, pts[6] = {0, 0, 0, 0, 0, 1}, out[6];
	uint8_t rec[64], want[64];
	size_t len, n = 0;
	bits_t b = {{0}, 0};
	ptp_record_c_t r;
	ptp_head_c_t head;
	(void)state;
	assert_non_null(e);
	assert_int_equal(ptp_encoder_tick_c(e, 7, hp, hq, pts, 2), PTP_OK);
	assert_int_equal(ptp_encoder_record_c(e, 0, ((uint64_t)1 << 32) | 5, rec, sizeof rec, &len),
	                 PTP_OK);
	/* head block, absolute: seq, p (3 x 32), q (3 x 16), two triples of zero velocity */
	put(&b, 7, 32);
	put(&b, 0, 96);
	put(&b, 0, 48);
	for (int t = 0; t < 2; t++) {
		put(&b, 0, 4); /* k = 0 */
		for (int i = 0; i < 3; i++)
			put_eg(&b, 0, 0);
	}
	/* section 7.4 tick 1: key, b - 2 = 11, codes 4095 4095, k 0, velocities 0 0 */
	put(&b, 2, 2);
	put(&b, 11, 4);
	put(&b, 4095, 13); /* b = 13 bits each */
	put(&b, 4095, 13); /* b = 13 bits each */
	put(&b, 0, 4);
	put_eg(&b, 0, 0);
	put_eg(&b, 0, 0);
	want[n++] = 1;    /* id_hi */
	want[n++] = 5;    /* id_lo */
	want[n++] = 0xc3; /* key | abs | largest w (3) << 6 */
	want[n++] = (uint8_t)((b.n + 7) / 8);
	memcpy(want + n, b.b, (size_t)(b.n + 7) / 8);
	n += (size_t)(b.n + 7) / 8;
	assert_int_equal(len, n);
	assert_memory_equal(rec, want, n);
	r = (ptp_record_c_t){((uint64_t)1 << 32) | 5, rec[2], rec + 4, rec[3], 1, 0, 0};
	assert_int_equal(ptp_decoder_apply_c(d, 1, 1, &r, &head, out, 2), PTP_OK);
	assert_memory_equal(out, pts, sizeof pts);
	assert_int_equal(head.last_seq, 7);

	/* tick 2: same pose, seq 8: EG_0(1), two zero triples, then hold */
	assert_int_equal(ptp_encoder_tick_c(e, 8, hp, hq, pts, 2), PTP_OK);
	assert_int_equal(ptp_encoder_record_c(e, 0, 3, rec, sizeof rec, &len), PTP_OK);
	memset(&b, 0, sizeof b);
	put_eg(&b, 1, 0);
	for (int t = 0; t < 2; t++) {
		put(&b, 0, 4);
		for (int i = 0; i < 3; i++)
			put_eg(&b, 0, 0);
	}
	put(&b, 0, 2); /* hold */
	n = 0;
	want[n++] = 0, want[n++] = 3, want[n++] = 0xc0, want[n++] = (uint8_t)((b.n + 7) / 8);
	memcpy(want + n, b.b, (size_t)(b.n + 7) / 8);
	n += (size_t)(b.n + 7) / 8;
	assert_int_equal(len, n);
	assert_memory_equal(rec, want, n);
	r = (ptp_record_c_t){3, rec[2], rec + 4, rec[3], 1, 0, 0};
	assert_int_equal(ptp_decoder_apply_c(d, 2, 1, &r, &head, out, 2), PTP_OK);
	assert_int_equal(head.last_seq, 8);
	/* a reset forgets the history: the same delta is no_key */
	ptp_decoder_reset(d);
	assert_int_equal(ptp_decoder_apply_c(d, 3, 1, &r, &head, out, 2), PTP_ENOKEY);
	ptp_encoder_destroy(e);
	ptp_decoder_destroy(d);
}

/* Varints in a batch header: shortest form only, at most 10 bytes, 64 bits. */
static void test_varints(void **state)
{
	static const struct {
		uint8_t payload[16];
		size_t len;
		ptp_err_t want;
	} cases[] = {
	    {{0x00, 0x00, 0x00}, 3, PTP_OK},
	    {{0x80, 0x01, 0x00, 0x00}, 4, PTP_OK},                /* 128 */
	    {{0x80, 0x00, 0x00, 0x00}, 4, PTP_ERANGE},            /* 0 in two bytes */
	    {{0x80}, 1, PTP_ETRUNC},                              /* ends inside */
	    {{0x80, 0x80, 0x80, 0x80, 0x10, 0x00, 0x00}, 7, PTP_OK}, /* 2^32 */
	    {{0x81, 0x80, 0x80, 0x80, 0x10, 0x00, 0x00}, 7, PTP_ERANGE}, /* 2^32 + 1 */
	    {{0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00}, 12,
	     PTP_OK}, /* time_dev: zigzag 2^64 - 1 */
	    {{0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00}, 12,
	     PTP_ERANGE}, /* above 2^64 - 1 */
	    {{0x00, 0x00, 0x01}, 3, PTP_ECOUNT},                  /* a record needs 4 bytes */
	    {{0x00, 0x00, 0x00, 0x00}, 4, PTP_ETRAILING},
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t msg[32] = {'P', 'T', 1, 2, PTP_FRAME_BATCH_C, 0, (uint8_t)cases[i].len, 0, 0, 0};
		ptp_batch_c_t b;
		memcpy(msg + 10, cases[i].payload, cases[i].len);
		assert_int_equal(ptp_batch_c_decode(msg, 10 + cases[i].len, &b), cases[i].want);
	}
}

/* Record framing: the step in flags bits 2..5, an id half above 32 bits, a body_len above
 * 65535. */
static void test_record_framing(void **state)
{
	static const struct {
		uint8_t rec[12];
		size_t len;
		ptp_err_t want;
	} cases[] = {
	    {{0x01, 0x05, 0x04, 0x00}, 4, PTP_OK}, /* step 2 (bits 2..5 were reserved) */
	    {{0x80, 0x80, 0x80, 0x80, 0x10, 0x05, 0x00, 0x00}, 8, PTP_ERANGE},
	    {{0x01, 0x05, 0x00, 0x80, 0x80, 0x04}, 6, PTP_ERANGE},
	    {{0x01, 0x05, 0x00, 0x02, 0xaa}, 5, PTP_ETRUNC},
	    {{0x01, 0x05, 0xc3, 0x01, 0xaa}, 5, PTP_OK},
	};
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		uint8_t msg[32] = {'P', 'T', 1, 2, PTP_FRAME_BATCH_C, 0, (uint8_t)(3 + cases[i].len)};
		ptp_batch_c_t b;
		msg[10] = 0, msg[11] = 0, msg[12] = 1;
		memcpy(msg + 13, cases[i].rec, cases[i].len);
		assert_int_equal(ptp_batch_c_decode(msg, 13 + cases[i].len, &b), cases[i].want);
	}
	{
		/* a newer minor's reserved bits and trailing bytes are ignored */
		uint8_t msg[] = {'P', 'T', 1, PTP_MINOR + 1, PTP_FRAME_BATCH_C, 9, 9, 0, 0, 0, 0, 0, 1,
		                 0x01, 0x05, 0x3c, 0x01, 0xaa, 0xee};
		ptp_batch_c_t b;
		ptp_record_c_t r;
		size_t off = 0;
		assert_int_equal(ptp_batch_c_decode(msg, sizeof msg, &b), PTP_OK);
		assert_true(ptp_record_c_next(&b, &off, &r));
		assert_int_equal(r.id, ((uint64_t)1 << 32) | 5);
		assert_int_equal(r.flags, 0);
		assert_int_equal(r.step, 16);
	}
	{
		/* the step (PROTOCOL.md 11.2): set by ptp_record_c_set_step, read back by
		 * ptp_record_c_next, kept out of flags; 0 and 17 are refused */
		uint8_t rec[] = {0x81, 0x01, 0x05, 0xc3, 0x01, 0xaa};
		ptp_batch_c_t b = {0, 0, 1, rec, sizeof rec, 0};
		ptp_record_c_t r;
		size_t off = 0;
		assert_int_equal(ptp_record_c_set_step(rec, sizeof rec, 6), PTP_OK);
		assert_int_equal(rec[3], 0xc3 | 5 << 2);
		assert_true(ptp_record_c_next(&b, &off, &r));
		assert_int_equal(r.id, ((uint64_t)129 << 32) | 5);
		assert_int_equal(r.flags, 0xc3);
		assert_int_equal(r.step, 6);
		assert_int_equal(ptp_record_c_set_step(rec, sizeof rec, 1), PTP_OK);
		off = 0;
		assert_true(ptp_record_c_next(&b, &off, &r));
		assert_int_equal(r.step, 1);
		assert_int_equal(rec[3], 0xc3);
		assert_int_equal(ptp_record_c_set_step(rec, sizeof rec, 0), PTP_EINVAL);
		assert_int_equal(ptp_record_c_set_step(rec, sizeof rec, 17), PTP_EINVAL);
		assert_int_equal(ptp_record_c_set_step(rec, 2, 2), PTP_EINVAL); /* no flags byte */
	}
}

/* The batch clock: the nominal step, deviations both ways, and its inverse. */
static void test_clock(void **state)
{
	ptp_batch_clock_t c = {1000, 5000000, 60}, s = c;
	uint64_t gap;
	int64_t dev;
	ptp_batch_c_t b = {0};
	(void)state;
	assert_int_equal(ptp_batch_clock_delta(&s, 1001, 5016667, &gap, &dev), PTP_OK);
	assert_int_equal(gap, 1);
	assert_int_equal(dev, 0); /* (10^6 + 30) div 60 = 16667 */
	assert_int_equal(ptp_batch_clock_delta(&s, 1003, 5049990, &gap, &dev), PTP_OK);
	assert_int_equal(gap, 3);
	assert_int_equal(dev, -10); /* nominal 50000 */
	b.tick_gap = 3, b.time_dev = -10;
	assert_int_equal(ptp_batch_clock_advance(&c, &b), PTP_OK);
	assert_int_equal(c.tick, 1003);
	assert_int_equal(c.time_us, 5049990);
	assert_int_equal(ptp_batch_clock_delta(&s, 999, 0, &gap, &dev), PTP_ERANGE);
	b.tick_gap = ((uint64_t)1 << 32) + 1;
	assert_int_equal(ptp_batch_clock_advance(&c, &b), PTP_ERANGE);
	assert_int_equal(c.tick, 1003);
}

/* A head on a parabola: the decoded position is the grid value exactly, tick after tick,
 * and a delta's head block costs a few bits (the second difference is constant). */
static void test_head_prediction(void **state)
{
	ptp_shape_t sh = one_strand();
	ptp_encoder_t *e = ptp_encoder_create_compact(&sh, NULL);
	ptp_decoder_t *d = ptp_decoder_create(&sh);
	(void)state;
	for (int i = 0; i < 30; i++) {
		float hp[3] = {(float)(0.25 + 0.01 * i), (float)(1.5 + 0.001 * i * i), -2.0f};
		float hq[4] = {0, 0, 0, 1}, pts[6], out[6];
		uint8_t rec[128];
		size_t len;
		ptp_record_c_t r;
		ptp_head_c_t head;
		for (int k = 0; k < 3; k++)
			pts[k] = hp[k], pts[3 + k] = hp[k] + (k == 2);
		assert_int_equal(ptp_encoder_tick_c(e, (uint32_t)i, hp, hq, pts, 2), PTP_OK);
		assert_int_equal(ptp_encoder_record_c(e, 0, 1, rec, sizeof rec, &len), PTP_OK);
		r = (ptp_record_c_t){1, rec[2], rec + 4, rec[3], 1, 0, 0};
		assert_int_equal(ptp_decoder_apply_c(d, (uint64_t)i + 1, 1, &r, &head, out, 2),
		                 PTP_OK);
		for (int k = 0; k < 3; k++) {
			double g = floor((double)hp[k] * 65536 + 0.5) / 65536;
			assert_true(head.head_p[k] == g);
			assert_true(fabs(out[k] - hp[k]) <= 0.5 / 65536 + 1e-7);
		}
		if (i >= 2) /* hold strand, seq +1, residuals within a unit or two */
			assert_true(len <= 4 + 6);
	}
	ptp_encoder_destroy(e);
	ptp_decoder_destroy(d);
}

/* Encoder refusals: a classic encoder for tick_c, a head beyond the grid. */
static void test_encoder_rejects(void **state)
{
	ptp_shape_t sh = one_strand();
	ptp_encoder_t *c = ptp_encoder_create(&sh, NULL), *e = ptp_encoder_create_compact(&sh, NULL);
	float hp[3] = {0, 0, 20000.0f}, hq[4] = {0, 0, 0, 1}, pts[6] = {0, 0, 20000, 0, 0, 20001};
	uint8_t rec[64];
	size_t len;
	(void)state;
	assert_int_equal(ptp_encoder_tick_c(c, 1, hp, hq, pts, 2), PTP_EINVAL);
	assert_int_equal(ptp_encoder_tick_c(e, 1, hp, hq, pts, 2), PTP_ERANGE);
	assert_int_equal(ptp_encoder_record_c(e, 0, 1, rec, sizeof rec, &len), PTP_EINVAL);
	ptp_encoder_destroy(c);
	ptp_encoder_destroy(e);
}

#include "test_compact_vectors.h"

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_worked_example), cmocka_unit_test(test_varints),
	    cmocka_unit_test(test_record_framing), cmocka_unit_test(test_clock),
	    cmocka_unit_test(test_head_prediction), cmocka_unit_test(test_encoder_rejects),
	    cmocka_unit_test(test_vectors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
