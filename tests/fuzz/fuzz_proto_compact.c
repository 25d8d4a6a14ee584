/* libFuzzer target: the compact coding (PROTOCOL.md 11) on arbitrary frame_batch_c
 * messages (`make fuzz`).
 *
 * Each input is decoded as a whole message; its first record, if any, is applied at the
 * tick its clock gives (welcome tick 0, so tick = tick_gap) to a decoder that has just
 * taken a genuine keyframe at tick 1 (three strands of 12, 6 and 4 points), so the delta
 * head block, every strand mode and the history rules are reachable. A rejected record
 * must leave the decoder exactly as it was: the genuine record of tick 2 must then give
 * the genuine points. The seed corpus holds real messages of each kind. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptp/compact.h"
#include "ptp/proto.h"
#include "ptp/strand.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { NP = 22 };

static ptp_shape_t shape;
static uint8_t key_rec[4096], next_rec[4096];
static size_t key_len, next_len;
static float next_pts[3 * NP];

static void frame(int tick, float *pts, float hp[3], float hq[4])
{
	int p = 0;
	hp[0] = 0.01f * (float)tick, hp[1] = 1.5f, hp[2] = 0.0f;
	hq[0] = 0.0f, hq[1] = 0.1f * (float)tick, hq[2] = 0.0f, hq[3] = 1.0f;
	for (int s = 0; s < shape.strand_count; s++) {
		float x = hp[0] + shape.strands[s].anchor[0], y = 1.5f + shape.strands[s].anchor[1],
		      z = 0.0f;
		for (int i = 0; i < shape.strands[s].points; i++, p++) {
			pts[3 * p] = x, pts[3 * p + 1] = y, pts[3 * p + 2] = z;
			x += 0.002f * (float)(i * tick % 5);
			y -= shape.strands[s].segment_length * 0.99f;
			z += 0.001f * (float)s;
		}
	}
}

static ptp_record_c_t parse(const uint8_t *buf, size_t len)
{
	ptp_batch_c_t b = {0, 0, 1, buf, len, 0};
	ptp_record_c_t r;
	size_t off = 0;
	if (!ptp_record_c_next(&b, &off, &r))
		abort();
	return r;
}

static void setup(void)
{
	static const int points[3] = {12, 6, 4};
	ptp_encoder_t *e;
	ptp_decoder_t *d;
	float pts[3 * NP], hp[3], hq[4];
	ptp_record_c_t r;
	shape.strand_count = 3;
	for (int s = 0; s < 3; s++) {
		shape.strands[s].points = (uint8_t)points[s];
		shape.strands[s].segment_length = 0.01f * (float)(s + 1);
		shape.strands[s].anchor[0] = 0.05f * (float)s;
		shape.strands[s].direction[1] = -1.0f;
	}
	e = ptp_encoder_create_compact(&shape, NULL);
	frame(1, pts, hp, hq);
	ptp_encoder_tick_c(e, 1, hp, hq, pts, NP);
	ptp_encoder_record_c(e, 0, 1, key_rec, sizeof key_rec, &key_len);
	frame(2, pts, hp, hq);
	ptp_encoder_tick_c(e, 2, hp, hq, pts, NP);
	ptp_encoder_record_c(e, 0, 1, next_rec, sizeof next_rec, &next_len);
	ptp_encoder_destroy(e);
	d = ptp_decoder_create(&shape);
	r = parse(key_rec, key_len);
	if (ptp_decoder_apply_c(d, 1, 1, &r, NULL, next_pts, NP) != PTP_OK)
		abort();
	r = parse(next_rec, next_len);
	if (ptp_decoder_apply_c(d, 2, 1, &r, NULL, next_pts, NP) != PTP_OK)
		abort();
	ptp_decoder_destroy(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	ptp_decoder_t *d;
	ptp_batch_c_t b;
	ptp_batch_clock_t clock = {0, 0, 60};
	ptp_record_c_t r, key;
	ptp_head_c_t head;
	float pts[3 * NP];
	size_t off = 0;
	if (!ready) {
		setup();
		ready = 1;
	}
	if (ptp_batch_c_decode(data, size, &b) != PTP_OK)
		return 0;
	if (ptp_batch_clock_advance(&clock, &b) != PTP_OK || !ptp_record_c_next(&b, &off, &r))
		return 0;
	d = ptp_decoder_create(&shape);
	key = parse(key_rec, key_len);
	if (ptp_decoder_apply_c(d, 1, 1, &key, NULL, pts, NP) != PTP_OK)
		abort();
	if (ptp_decoder_apply_c(d, clock.tick, 1, &r, &head, pts, NP) == PTP_OK) {
		for (int i = 0; i < 3 * NP; i++)
			if (pts[i] != pts[i] || pts[i] - pts[i] != 0.0f)
				abort();
	} else {
		ptp_record_c_t next = parse(next_rec, next_len);
		if (ptp_decoder_apply_c(d, 2, 1, &next, NULL, pts, NP) != PTP_OK ||
		    memcmp(pts, next_pts, sizeof pts) != 0)
			abort(); /* the failed record changed the state */
	}
	ptp_decoder_destroy(d);
	return 0;
}
