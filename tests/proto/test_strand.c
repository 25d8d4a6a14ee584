/* Strand codec: a record worked out bit by bit from PROTOCOL.md, error bounds on
 * synthetic strands, keyframes, the raw fallback and every decoder rejection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "ptp/compact.h"
#include "ptp/strand.h"

enum { MAXP = 3 * PTP_MAX_POINTS * 4 };

#define TAU 6.283185307179586

static const float ident[4] = {0, 0, 0, 1}, origin[3] = {0, 0, 0};

/* One strand of `points` points, segment length len, anchored at the head origin, resting
 * along +Z (so its code frame is the identity when the head is). */
static ptp_shape_t line_shape(int points, float len)
{
	ptp_shape_t s;
	memset(&s, 0, sizeof s);
	s.strand_count = 1;
	s.strands[0].points = (uint8_t)points;
	s.strands[0].segment_length = len;
	s.strands[0].direction[2] = 1.0f;
	return s;
}

/* Distance between point i of a and of b (xyz triples). */
static double point_dist(const float *a, const float *b, int i)
{
	return sqrt(pow(a[3 * i] - b[3 * i], 2) + pow(a[3 * i + 1] - b[3 * i + 1], 2) +
	            pow(a[3 * i + 2] - b[3 * i + 2], 2));
}

/* Encodes the record of this tick (key or delta) and returns its strand data bytes. */
static size_t record_of(const ptp_encoder_t *e, int key, uint8_t *buf, size_t cap, ptp_record_t *r)
{
	size_t n = 0, off = 0;
	ptp_frame_batch_t b;
	assert_int_equal(ptp_encoder_record(e, key, 1, 0, buf, cap, &n), PTP_OK);
	memset(&b, 0, sizeof b);
	b.count = 1;
	b.records = buf;
	b.records_len = n;
	assert_int_equal(ptp_record_next(&b, &off, r), 1);
	assert_int_equal(off, n);
	return r->data_len;
}

/* The worked example of PROTOCOL.md "Strand data": one segment of 1 m, max error 1 mm,
 * so b = 13 (M = 4095 >= 1.42 * 1 / 0.0005). */
static void test_worked_example(void **state)
{
	static const uint8_t key[] = {0x01, 0xee, 0xff, 0xfb, 0x7f, 0x30};
	static const uint8_t hold[] = {0x01, 0x00};
	static const uint8_t delta[] = {0x01, 0x01, 0x00, 0xf0, 0xff, 0x03};
	ptp_shape_t shape = line_shape(2, 1.0f);
	ptp_encoder_t *e = ptp_encoder_create(&shape, NULL);
	ptp_decoder_t *d = ptp_decoder_create(&shape);
	float up[6] = {0, 0, 0, 0, 0, 1}, side[6] = {0, 0, 0, 1, 0, 0}, out[6];
	uint8_t buf[128];
	ptp_record_t r;
	(void)state;
	assert_int_equal(ptp_encoder_bits(e, 0), 13);

	assert_int_equal(ptp_encoder_tick(e, origin, ident, up, 2), PTP_OK);
	assert_int_equal(record_of(e, 0, buf, sizeof buf, &r), sizeof key);
	assert_memory_equal(r.data, key, sizeof key);
	assert_int_equal(r.flags, PTP_RECORD_KEY);
	assert_int_equal(ptp_decoder_apply(d, 1, &r, out, 2), PTP_OK);
	assert_memory_equal(out, up, sizeof up);

	assert_int_equal(ptp_encoder_tick(e, origin, ident, up, 2), PTP_OK);
	assert_int_equal(record_of(e, 0, buf, sizeof buf, &r), sizeof hold);
	assert_memory_equal(r.data, hold, sizeof hold);
	assert_int_equal(r.flags, 0);
	assert_int_equal(ptp_decoder_apply(d, 2, &r, out, 2), PTP_OK);

	assert_int_equal(ptp_encoder_tick(e, origin, ident, side, 2), PTP_OK);
	assert_int_equal(record_of(e, 0, buf, sizeof buf, &r), sizeof delta);
	assert_memory_equal(r.data, delta, sizeof delta);
	assert_int_equal(ptp_decoder_apply(d, 3, &r, out, 2), PTP_OK);
	assert_memory_equal(out, side, sizeof side); /* code (4095, 0) is exactly +X */
	ptp_encoder_destroy(e);
	ptp_decoder_destroy(d);
}

/* Any direction comes back within the quantisation bound 1.42 / M rad (one segment, so
 * nothing else adds to it), and the encoder's own error report agrees with the decoder. */
static void test_direction_bound(void **state)
{
	ptp_shape_t shape = line_shape(2, 1.0f);
	ptp_encoder_params_t p = ptp_encoder_params_default();
	ptp_encoder_t *e;
	ptp_decoder_t *d = ptp_decoder_create(&shape);
	uint8_t buf[128];
	double m, worst = 0;
	(void)state;
	p.max_error_m = 0.01f;
	e = ptp_encoder_create(&shape, &p);
	m = (1 << (ptp_encoder_bits(e, 0) - 1)) - 1;
	assert_int_equal(ptp_encoder_bits(e, 0), 10);
	for (int i = 0; i < 20000; i++) {
		double z = 1.0 - 2.0 * ((i + 0.5) / 20000.0), a = i * 2.399963229728653;
		float pts[6] = {0,
		                0,
		                0,
		                (float)(sqrt(1 - z * z) * cos(a)),
		                (float)(sqrt(1 - z * z) * sin(a)),
		                (float)z},
		      out[6];
		ptp_record_t r;
		double err;
		assert_int_equal(ptp_encoder_tick(e, origin, ident, pts, 2), PTP_OK);
		record_of(e, 0, buf, sizeof buf, &r);
		assert_int_equal(ptp_decoder_apply(d, (uint64_t)i + 1, &r, out, 2), PTP_OK);
		err = point_dist(out, pts, 1);
		assert_true(fabs(err - ptp_encoder_last_error(e)) < 1e-6);
		if (err > worst)
			worst = err;
	}
	assert_true(worst <= 1.42 / m);
	assert_true(worst > 1.2 / m); /* the bound is tight: the constant was measured */
	ptp_encoder_destroy(e);
	ptp_decoder_destroy(d);
}

/* Three 12-point strands on a swinging, turning head: a pendulum wave along each strand.
 * Every tick: decoded within max_error, deltas much smaller than keyframes, periodic
 * keyframes flagged, and a decoder joining from an on-demand keyframe stays identical. */
static void synth(int tick, ptp_shape_t *shape, float hp[3], float hq[4], float *pts)
{
	double t = tick / 60.0, yaw = 0.8 * sin(TAU * t / 0.6);
	hp[0] = 0, hp[1] = (float)(1.5 + 0.05 * sin(TAU * t)), hp[2] = 0;
	hq[0] = 0, hq[1] = (float)sin(yaw / 2), hq[2] = 0, hq[3] = (float)cos(yaw / 2);
	for (int s = 0, p = 0; s < shape->strand_count; s++) {
		const ptp_shape_strand_t *st = &shape->strands[s];
		double x, y, z, c = cos(yaw), sn = sin(yaw);
		/* root: head_p + rotate(q, anchor) (rotation about Y) */
		x = hp[0] + c * st->anchor[0] + sn * st->anchor[2];
		y = hp[1] + st->anchor[1];
		z = hp[2] - sn * st->anchor[0] + c * st->anchor[2];
		for (int i = 0; i < st->points; i++, p++) {
			double ang = 0.6 * sin(TAU * t * 1.3 - 0.35 * i + s);
			pts[3 * p] = (float)x, pts[3 * p + 1] = (float)y, pts[3 * p + 2] = (float)z;
			x += st->segment_length * sin(ang) * cos(0.3 * s);
			z += st->segment_length * sin(ang) * sin(0.3 * s) * 0.5;
			y -= st->segment_length * sqrt(1 - pow(sin(ang) * cos(0.3 * s), 2) -
			                               pow(sin(ang) * sin(0.3 * s) * 0.5, 2));
		}
	}
}

static void test_synthetic_swing(void **state)
{
	ptp_shape_t shape;
	ptp_encoder_t *e;
	ptp_decoder_t *d, *late;
	float pts[MAXP], out[MAXP], out2[MAXP], hp[3], hq[4];
	uint8_t buf[4096];
	double delta_bytes = 0, key_bytes = 0;
	(void)state;
	memset(&shape, 0, sizeof shape);
	shape.strand_count = 3;
	for (int s = 0; s < 3; s++) {
		shape.strands[s].points = 12;
		shape.strands[s].segment_length = 0.03f;
		shape.strands[s].anchor[0] = (float)(s - 1) * 0.05f;
		shape.strands[s].anchor[1] = 0.04f;
		shape.strands[s].anchor[2] = -0.1f;
		shape.strands[s].direction[1] = -1.0f;
	}
	e = ptp_encoder_create(&shape, NULL);
	d = ptp_decoder_create(&shape);
	late = ptp_decoder_create(&shape);
	for (int k = 1; k <= 600; k++) {
		ptp_record_t r;
		size_t n;
		synth(k, &shape, hp, hq, pts);
		assert_int_equal(ptp_encoder_tick(e, hp, hq, pts, 36), PTP_OK);
		n = record_of(e, 0, buf, sizeof buf, &r);
		assert_int_equal(r.flags == PTP_RECORD_KEY, (k - 1) % 60 == 0);
		if (!r.flags)
			delta_bytes += (double)n;
		assert_int_equal(ptp_decoder_apply(d, (uint64_t)k, &r, out, 36), PTP_OK);
		for (int i = 0; i < 36; i++)
			assert_true(point_dist(out, pts, i) <= 0.001);
		assert_int_equal(ptp_encoder_raw_strands(e), 0);
		if (k >= 100) {
			record_of(e, k == 100, buf, sizeof buf, &r);
			assert_int_equal(ptp_decoder_apply(late, (uint64_t)k, &r, out2, 36),
			                 PTP_OK);
			assert_memory_equal(out, out2, sizeof(float) * 3 * 36);
		}
		key_bytes += (double)record_of(e, 1, buf, sizeof buf, &r);
	}
	/* 600 ticks, 10 keyframes: deltas average well under half a keyframe */
	assert_true(delta_bytes / 590 < 0.5 * key_bytes / 600);
	/* a missed tick: the next delta is refused, a keyframe recovers */
	{
		ptp_record_t r;
		synth(601, &shape, hp, hq, pts);
		ptp_encoder_tick(e, hp, hq, pts, 36);
		synth(602, &shape, hp, hq, pts);
		ptp_encoder_tick(e, hp, hq, pts, 36);
		record_of(e, 0, buf, sizeof buf, &r);
		assert_int_equal(ptp_decoder_apply(d, 602, &r, out, 36), PTP_ENOKEY);
		record_of(e, 1, buf, sizeof buf, &r);
		assert_int_equal(ptp_decoder_apply(d, 602, &r, out, 36), PTP_OK);
	}
	ptp_encoder_destroy(e);
	ptp_decoder_destroy(d);
	ptp_decoder_destroy(late);
}

/* ptp_encoder_set_key_phase: the first record is a keyframe, then exactly the ticks t >=
 * interval with (t - phase) % interval == 0, classic and compact; every record decodes
 * within the bound, and periodic keyframes are exactly interval apart. */
static void test_key_phase(void **state)
{
	static const int intervals[] = {1, 2, 7, 60};
	static const uint32_t phases[] = {0, 1, 5, 59, 60, 182, UINT32_MAX};
	ptp_shape_t shape = line_shape(8, 0.05f);
	float pts[MAXP], out[MAXP], hp[3], hq[4];
	uint8_t buf[4096];
	(void)state;
	for (size_t a = 0; a < sizeof intervals / sizeof *intervals; a++)
		for (size_t b = 0; b < sizeof phases / sizeof *phases; b++)
			for (int compact = 0; compact < 2; compact++) {
				ptp_encoder_params_t p = ptp_encoder_params_default();
				ptp_encoder_t *e;
				ptp_decoder_t *d = ptp_decoder_create(&shape);
				uint32_t ph = phases[b] % (uint32_t)intervals[a];
				long last_periodic = -1;
				p.keyframe_interval = intervals[a];
				e = compact ? ptp_encoder_create_compact(&shape, &p)
				            : ptp_encoder_create(&shape, &p);
				assert_non_null(e);
				ptp_encoder_set_key_phase(e, phases[b]);
				for (long t = 0; t < 200; t++) {
					int want = t == 0 || (t >= intervals[a] &&
					                      (t - (long)ph) % intervals[a] == 0);
					synth((int)t + 1, &shape, hp, hq, pts);
					if (compact)
						assert_int_equal(ptp_encoder_tick_c(e, (uint32_t)t, hp, hq, pts, 8),
						                 PTP_OK);
					else
						assert_int_equal(ptp_encoder_tick(e, hp, hq, pts, 8), PTP_OK);
					assert_int_equal(ptp_encoder_record_is_key(e, 0), want);
					if (want && t > 0) {
						if (last_periodic >= 0)
							assert_int_equal(t - last_periodic, intervals[a]);
						last_periodic = t;
					}
					if (!compact) {
						ptp_record_t r;
						record_of(e, 0, buf, sizeof buf, &r);
						assert_int_equal(!!(r.flags & PTP_RECORD_KEY), want);
						assert_int_equal(ptp_decoder_apply(d, (uint64_t)t + 1, &r, out, 8),
						                 PTP_OK);
						for (int i = 0; i < 8; i++)
							assert_true(point_dist(out, pts, i) <= 0.001);
					}
				}
				/* 200 ticks hold at least one periodic keyframe past the first interval */
				assert_true(intervals[a] > 100 || last_periodic > 0);
				ptp_encoder_destroy(e);
				ptp_decoder_destroy(d);
			}
	ptp_encoder_set_key_phase(NULL, 3); /* NULL ok */
}

/* A strand that stretches cannot be held by directions alone: it goes raw (exact), and
 * the next tick keyframes it. */
static void test_raw_fallback(void **state)
{
	ptp_shape_t shape = line_shape(3, 0.1f);
	ptp_encoder_t *e;
	ptp_decoder_t *d;
	float pts[12] = {0, 0, 0, 0, 0, 0.1f, 0, 0, 0.2f, 0.1f, 0, 0}, out[12];
	uint8_t buf[256];
	ptp_record_t r;
	(void)state;
	shape.strands[0].points = 1; /* a strand needs a segment */
	assert_null(ptp_encoder_create(&shape, NULL));
	shape = line_shape(3, 0.1f);
	e = ptp_encoder_create(&shape, NULL);
	d = ptp_decoder_create(&shape);
	assert_int_equal(ptp_encoder_tick(e, origin, ident, pts, 3), PTP_OK);
	record_of(e, 0, buf, sizeof buf, &r);
	assert_int_equal(ptp_decoder_apply(d, 1, &r, out, 3), PTP_OK);
	pts[8] = 0.25f; /* second segment 0.15 m long: 5 cm off */
	assert_int_equal(ptp_encoder_tick(e, origin, ident, pts, 3), PTP_OK);
	assert_int_equal(ptp_encoder_raw_strands(e), 1);
	assert_int_equal(record_of(e, 0, buf, sizeof buf, &r), 1 + (2 + 9 * 32 + 7) / 8);
	assert_int_equal(r.data[1] & 3, 3); /* mode raw */
	assert_int_equal(ptp_decoder_apply(d, 2, &r, out, 3), PTP_OK);
	assert_memory_equal(out, pts, sizeof(float) * 9);
	pts[8] = 0.2f;
	assert_int_equal(ptp_encoder_tick(e, origin, ident, pts, 3), PTP_OK);
	record_of(e, 0, buf, sizeof buf, &r);
	assert_int_equal(r.data[1] & 3, 2); /* mode key */
	assert_int_equal(r.flags, PTP_RECORD_KEY);
	assert_int_equal(ptp_decoder_apply(d, 3, &r, out, 3), PTP_OK);
	ptp_encoder_destroy(e);
	ptp_decoder_destroy(d);
}

static ptp_err_t apply_bytes(ptp_decoder_t *d, uint64_t tick, const uint8_t *data, size_t n,
                             float *out, size_t np)
{
	ptp_record_t r;
	memset(&r, 0, sizeof r);
	r.head_q.largest = 3;
	r.data = data;
	r.data_len = (uint16_t)n;
	return ptp_decoder_apply(d, tick, &r, out, np);
}

/* Hand-made strand data for the 1-segment shape of the worked example (b = 13). */
static void test_decoder_rejects(void **state)
{
	static const uint8_t key[] = {0x01, 0xee, 0xff, 0xfb, 0x7f, 0x30};
	static const uint8_t hold[] = {0x01, 0x00};
	ptp_shape_t shape = line_shape(2, 1.0f);
	ptp_decoder_t *d = ptp_decoder_create(&shape);
	float out[6] = {9, 9, 9, 9, 9, 9}, keep[6];
	uint8_t b[16];
	(void)state;
	assert_int_equal(apply_bytes(d, 1, hold, sizeof hold, out, 2), PTP_ENOKEY);
	assert_true(out[0] == 9.0f); /* untouched on error */
	assert_int_equal(apply_bytes(d, 1, key, sizeof key, out, 1), PTP_EINVAL);
	assert_int_equal(apply_bytes(d, 1, key, 0, out, 2), PTP_ETRUNC);
	b[0] = 2;
	memcpy(b + 1, key + 1, 5);
	assert_int_equal(apply_bytes(d, 1, b, 6, out, 2), PTP_ESHAPE);
	for (size_t n = 1; n < sizeof key; n++)
		assert_int_equal(apply_bytes(d, 1, key, n, out, 2), PTP_ETRUNC);
	memcpy(b, key, sizeof key);
	b[6] = 0;
	assert_int_equal(apply_bytes(d, 1, b, 7, out, 2), PTP_ETRAILING);
	b[5] = 0x70; /* a pad bit set */
	assert_int_equal(apply_bytes(d, 1, b, 6, out, 2), PTP_EFLAGS);
	b[5] = 0x30;
	b[1] = 0xfe; /* b - 2 = 15: b = 17 > 16 */
	assert_int_equal(apply_bytes(d, 1, b, 6, out, 2), PTP_ERANGE);
	b[1] = 0xea; /* b - 2 = 10: b = 12, M = 2047, and the first code's 12 ones say 4095 > 2M */
	assert_int_equal(apply_bytes(d, 1, b, 6, out, 2), PTP_ERANGE);
	{
		/* raw: mode 3, then six f32 at bits 2 + 32 i; value 3 (point 1, x) a NaN */
		uint8_t raw[1 + 25] = {0x01, 0x03};
		uint64_t v = (uint64_t)0x7fc00000u << 2; /* bit 98 = byte 12, bit 2 */
		for (int i = 0; i < 5; i++)
			raw[1 + 12 + i] |= (uint8_t)(v >> (8 * i));
		assert_int_equal(apply_bytes(d, 1, raw, sizeof raw, out, 2), PTP_EFLOAT);
		memset(raw + 2, 0, sizeof raw - 2);
		assert_int_equal(apply_bytes(d, 1, raw, sizeof raw, out, 2), PTP_OK);
	}
	/* after all that the decoder still wants a key; a key then a hold work */
	assert_int_equal(apply_bytes(d, 5, hold, sizeof hold, out, 2), PTP_ENOKEY);
	assert_int_equal(apply_bytes(d, 5, key, sizeof key, out, 2), PTP_OK);
	memcpy(keep, out, sizeof keep);
	assert_int_equal(apply_bytes(d, 7, hold, sizeof hold, out, 2), PTP_ENOKEY); /* gap */
	assert_int_equal(apply_bytes(d, 6, hold, sizeof hold, out, 2), PTP_OK);
	assert_memory_equal(out, keep, sizeof keep);
	ptp_decoder_reset(d);
	assert_int_equal(apply_bytes(d, 7, hold, sizeof hold, out, 2), PTP_ENOKEY);
	ptp_decoder_destroy(d);
}

static void test_encoder_rejects(void **state)
{
	ptp_shape_t shape = line_shape(2, 1.0f);
	ptp_encoder_params_t p = ptp_encoder_params_default();
	ptp_encoder_t *e = ptp_encoder_create(&shape, NULL);
	float pts[6] = {0, 0, 0, 0, 0, 1}, zero[4] = {0, 0, 0, 0};
	uint8_t buf[64];
	size_t need = 0;
	(void)state;
	assert_int_equal(ptp_encoder_record(e, 0, 1, 0, buf, sizeof buf, &need), PTP_EINVAL);
	assert_int_equal(ptp_encoder_tick(e, origin, ident, pts, 3), PTP_EINVAL);
	assert_int_equal(ptp_encoder_tick(e, origin, zero, pts, 2), PTP_ERANGE);
	pts[4] = NAN;
	assert_int_equal(ptp_encoder_tick(e, origin, ident, pts, 2), PTP_EFLOAT);
	pts[4] = 0;
	assert_int_equal(ptp_encoder_tick(e, origin, ident, pts, 2), PTP_OK);
	assert_int_equal(ptp_encoder_record(e, 0, 1, 0, NULL, 0, &need), PTP_ENOSPACE);
	assert_int_equal(need, PTP_RECORD_MIN + 6);
	memset(buf, 0xee, sizeof buf);
	assert_int_equal(ptp_encoder_record(e, 0, 1, 0, buf, need - 1, &need), PTP_ENOSPACE);
	assert_int_equal(buf[need - 1], 0xee);
	p.max_error_m = 0;
	assert_null(ptp_encoder_create(&shape, &p));
	p = ptp_encoder_params_default();
	p.keyframe_interval = 0;
	assert_null(ptp_encoder_create(&shape, &p));
	shape.strands[0].segment_length = NAN;
	assert_null(ptp_encoder_create(&shape, NULL));
	assert_null(ptp_decoder_create(&shape));
	ptp_encoder_destroy(e);
	ptp_encoder_destroy(NULL);
	ptp_decoder_destroy(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_worked_example),  cmocka_unit_test(test_direction_bound),
	    cmocka_unit_test(test_synthetic_swing), cmocka_unit_test(test_key_phase),
	    cmocka_unit_test(test_raw_fallback),
	    cmocka_unit_test(test_decoder_rejects), cmocka_unit_test(test_encoder_rejects),
	};
	return cmocka_run_group_tests_name("proto_strand", tests, NULL, NULL);
}
