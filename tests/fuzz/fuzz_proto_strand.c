/* libFuzzer target: the strand decoder on arbitrary strand data (`make fuzz`).
 *
 * Each input is applied as the record of tick 2 to a decoder that has just taken a real
 * keyframe at tick 1 (three strands of 12, 6 and 4 points), so deltas, predictors and
 * keyframes are all reachable. A rejected record must leave the decoder exactly as it was:
 * re-applying the next genuine record must then give the genuine points. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptp/proto.h"
#include "ptp/strand.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { NP = 22 };

static ptp_shape_t shape;
static uint8_t key_rec[4096], next_rec[4096];
static float next_pts[3 * NP];

static void frame(int tick, float *pts, float hp[3], float hq[4])
{
	int p = 0;
	hp[0] = 0.0f, hp[1] = 1.5f, hp[2] = 0.0f;
	hq[0] = 0.0f, hq[1] = 0.1f * (float)tick, hq[2] = 0.0f, hq[3] = 1.0f;
	for (int s = 0; s < shape.strand_count; s++) {
		float x = shape.strands[s].anchor[0], y = 1.5f + shape.strands[s].anchor[1],
		      z = 0.0f;
		for (int i = 0; i < shape.strands[s].points; i++, p++) {
			pts[3 * p] = x, pts[3 * p + 1] = y, pts[3 * p + 2] = z;
			x += 0.002f * (float)(i * tick % 5);
			y -= shape.strands[s].segment_length * 0.99f;
			z += 0.001f * (float)s;
		}
	}
}

static void setup(void)
{
	static const int points[3] = {12, 6, 4};
	ptp_encoder_t *e;
	float pts[3 * NP], hp[3], hq[4];
	size_t n;
	ptp_decoder_t *d;
	ptp_record_t r;
	ptp_frame_batch_t b = {0, 0, 1, next_rec, 0, 0};
	size_t off = 0;
	shape.strand_count = 3;
	for (int s = 0; s < 3; s++) {
		shape.strands[s].points = (uint8_t)points[s];
		shape.strands[s].segment_length = 0.01f * (float)(s + 1);
		shape.strands[s].anchor[0] = 0.05f * (float)s;
		shape.strands[s].direction[1] = -1.0f;
	}
	e = ptp_encoder_create(&shape, NULL);
	frame(1, pts, hp, hq);
	ptp_encoder_tick(e, hp, hq, pts, NP);
	ptp_encoder_record(e, 0, 1, 1, key_rec, sizeof key_rec, &n);
	frame(2, pts, hp, hq);
	ptp_encoder_tick(e, hp, hq, pts, NP);
	ptp_encoder_record(e, 0, 1, 2, next_rec, sizeof next_rec, &n);
	b.records_len = n;
	ptp_encoder_destroy(e);
	/* the genuine result of tick 2, for the state check */
	d = ptp_decoder_create(&shape);
	b.records = key_rec, b.records_len = sizeof key_rec;
	ptp_record_next(&b, &off, &r);
	ptp_decoder_apply(d, 1, &r, next_pts, NP);
	off = 0, b.records = next_rec, b.records_len = n;
	ptp_record_next(&b, &off, &r);
	if (ptp_decoder_apply(d, 2, &r, next_pts, NP) != PTP_OK)
		abort();
	ptp_decoder_destroy(d);
}

static ptp_record_t parse(const uint8_t *buf)
{
	ptp_frame_batch_t b = {0, 0, 1, buf, 4096, 0};
	ptp_record_t r;
	size_t off = 0;
	ptp_record_next(&b, &off, &r);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	ptp_decoder_t *d;
	ptp_record_t key, fz;
	float pts[3 * NP];
	ptp_err_t e;
	if (!ready) {
		setup();
		ready = 1;
	}
	if (size > 65535)
		return 0;
	d = ptp_decoder_create(&shape);
	key = parse(key_rec);
	if (ptp_decoder_apply(d, 1, &key, pts, NP) != PTP_OK)
		abort();
	fz = key;
	fz.data = data;
	fz.data_len = (uint16_t)size;
	e = ptp_decoder_apply(d, 2, &fz, pts, NP);
	if (e == PTP_OK) {
		for (int i = 0; i < 3 * NP; i++)
			if (pts[i] != pts[i] || pts[i] - pts[i] != 0.0f)
				abort();
	} else {
		ptp_record_t next = parse(next_rec);
		if (ptp_decoder_apply(d, 2, &next, pts, NP) != PTP_OK ||
		    memcmp(pts, next_pts, sizeof pts) != 0)
			abort(); /* the failed record changed the state */
	}
	ptp_decoder_destroy(d);
	return 0;
}
