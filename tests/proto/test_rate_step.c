/* Per-viewer rates (PROTOCOL.md 5 and 6, protocol 1.2): a stream encoded every 6th tick
 * carries step 6 in its records (flags bits 1..5), and the decoder takes its deltas when
 * the previous record it applied is exactly `step` ticks old -- within max_error_m of the
 * encoder's input, as at every tick. The same delta without the step (as a 1.1 record)
 * or one tick late is `no_key`: a decoder never applies a delta to the wrong history. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "ptp/proto.h"
#include "ptp/strand.h"

enum { N = 12 };

static ptp_shape_t shape12(void)
{
	ptp_shape_t s;
	memset(&s, 0, sizeof s);
	s.strand_count = 1;
	s.strands[0].points = N;
	s.strands[0].segment_length = 0.03f;
	s.strands[0].direction[1] = -1.0f;
	return s;
}

/* A strand hanging from the origin, bent by up to angle a about Z: segments of 0.03 m. */
static void strand(float a, float *xyz)
{
	xyz[0] = xyz[1] = xyz[2] = 0.0f;
	for (int i = 1; i < N; i++) {
		float bend = a * (float)i / N;
		xyz[3 * i] = xyz[3 * i - 3] + 0.03f * sinf(bend);
		xyz[3 * i + 1] = xyz[3 * i - 2] - 0.03f * cosf(bend);
		xyz[3 * i + 2] = 0.0f;
	}
}

/* The record of this tick as a 1.2 batch carries it: step bits set by the sender, then
 * read back through the message codec (header minor 2). */
static void record_with_step(const ptp_encoder_t *e, int step, uint8_t *rec, size_t cap,
                             ptp_record_t *out, uint8_t *msg, size_t msgcap)
{
	size_t n = 0, len = 0, off = 0;
	assert_int_equal(ptp_encoder_record(e, 0, 1, 0, rec, cap, &n), PTP_OK);
	if (step > 1)
		rec[8] |= (uint8_t)((step - 1) << 1); /* what server/sim_frame.c does */
	ptp_msg_t m = {.type = PTP_FRAME_BATCH, .minor = 2};
	m.u.frame_batch = (ptp_frame_batch_t){6, 0, 1, rec, n, 0};
	assert_int_equal(ptp_msg_encode(&m, msg, msgcap, &len), PTP_OK);
	ptp_msg_t d;
	assert_int_equal(ptp_msg_decode(msg, len, &d), PTP_OK);
	assert_int_equal(ptp_record_next(&d.u.frame_batch, &off, out), 1);
	assert_int_equal(out->step, step);
	/* a 1.1 batch may not carry it */
	m.minor = 1;
	if (step > 1)
		assert_int_equal(ptp_msg_encode(&m, msg, msgcap, &len), PTP_EINVAL);
}

static void test_ten_hz_stream_decodes(void **state)
{
	(void)state;
	ptp_shape_t shape = shape12();
	ptp_encoder_params_t p = ptp_encoder_params_default();
	p.keyframe_interval = 1000; /* only the first record is a key */
	ptp_encoder_t *e = ptp_encoder_create(&shape, &p);
	ptp_decoder_t *good = ptp_decoder_create(&shape), *late = ptp_decoder_create(&shape);
	assert_non_null(e);
	assert_non_null(good);
	assert_non_null(late);
	const float hp[3] = {0, 0, 0}, hq[4] = {0, 0, 0, 1};
	float in[3 * N], keep[3 * N], out[3 * N];
	uint8_t rec[4096], msg[8192];
	int deltas = 0;
	for (int k = 0; k < 12; k++) {
		uint64_t tick = 60 + 6 * (uint64_t)k; /* the 10 Hz grid of a 60 Hz server */
		strand(0.8f * sinf(0.5f * (float)k), in);
		memcpy(keep, in, sizeof in);
		assert_int_equal(ptp_encoder_tick(e, hp, hq, in, N), PTP_OK);
		ptp_record_t r;
		record_with_step(e, 6, rec, sizeof rec, &r, msg, sizeof msg);
		deltas += !(r.flags & PTP_RECORD_KEY);
		assert_int_equal(ptp_decoder_apply(good, tick, &r, out, N), PTP_OK);
		for (int i = 0; i < N; i++) {
			double dx = out[3 * i] - keep[3 * i], dy = out[3 * i + 1] - keep[3 * i + 1],
			       dz = out[3 * i + 2] - keep[3 * i + 2];
			assert_true(sqrt(dx * dx + dy * dy + dz * dz) <= p.max_error_m + 1e-6);
		}
		/* The same record a tick off the stream's grid, or read as step 1, is refused. */
		if (k == 0) {
			assert_int_equal(ptp_decoder_apply(late, tick, &r, out, N), PTP_OK);
		} else if (!(r.flags & PTP_RECORD_KEY)) {
			assert_int_equal(ptp_decoder_apply(late, tick + 1, &r, out, N), PTP_ENOKEY);
			ptp_record_t one = r;
			one.step = 1;
			assert_int_equal(ptp_decoder_apply(late, tick, &one, out, N), PTP_ENOKEY);
		}
	}
	assert_true(deltas >= 10);
	ptp_encoder_destroy(e);
	ptp_decoder_destroy(good);
	ptp_decoder_destroy(late);
}

/* Step is 1..32 on the wire; 1 (all bits 0) is what every record before 1.2 says. */
static void test_step_bits(void **state)
{
	(void)state;
	uint8_t buf[64];
	size_t n = 0, off = 0;
	ptp_record_t r;
	memset(&r, 0, sizeof r);
	r.id = 9;
	r.head_q.c[0] = 0;
	r.step = 32;
	assert_int_equal(ptp_record_encode(&r, buf, sizeof buf, &n), PTP_OK);
	assert_int_equal(buf[8], 31 << 1);
	ptp_frame_batch_t b = {1, 0, 1, buf, n, 0};
	ptp_record_t back;
	assert_int_equal(ptp_record_next(&b, &off, &back), 1);
	assert_int_equal(back.step, 32);
	r.step = 33;
	assert_int_equal(ptp_record_encode(&r, buf, sizeof buf, &n), PTP_EINVAL);
	r.step = 0; /* a zeroed record: step 1 */
	assert_int_equal(ptp_record_encode(&r, buf, sizeof buf, &n), PTP_OK);
	assert_int_equal(buf[8], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ten_hz_stream_decodes),
	    cmocka_unit_test(test_step_bits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
