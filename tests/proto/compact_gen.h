/* The compact coding's stream vectors (proto/vectors/compact/, PROTOCOL.md 11): the
 * synthetic inputs and the script of each stream, shared by test_compact.c, which checks
 * the stored files against the C encoder and decoder and, with PTP_WRITE_VECTORS=1,
 * (re)writes them. The inputs use only + - * / sqrt on doubles, then one rounding to
 * float, so they are the same on every machine; the files store them anyway.
 *
 * A stream is a list of ticks, each fed to one encoder (step ticks apart); per tick the
 * script says whether the connection gets the shared delta record, a keyframe record,
 * nothing (a lost batch), or a hand-corrupted copy of the delta record. */
#ifndef PTP_COMPACT_GEN_H
#define PTP_COMPACT_GEN_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "ptp/compact.h"

enum { CG_MAX_PTS = 64, CG_MAX_TICKS = 40 };

typedef enum cg_send_t {
	CG_DELTA,   /* the shared delta record */
	CG_KEY,     /* the on-demand keyframe record */
	CG_LOST,    /* no batch reaches the connection this tick */
	CG_PADDING, /* delta record with a padding bit set: flags */
	CG_CUT,     /* delta record one body byte short: truncated */
	CG_EXTRA,   /* delta record with a zero byte appended to the body: trailing */
	CG_LARGEST, /* delta record whose flags name another dropped component: range */
	CG_FAR,     /* absolute head block with p_x = 2^30 + 1: range */
	CG_FAR_OK   /* absolute head block with p_x = p_y = 2^30: each within the bound, ok */
	/* (each corrupted record is followed by the good one in a continuation batch) */
} cg_send_t;

typedef struct cg_tick_t {
	uint32_t seq;
	float head_p[3], head_q[4];
	float pts[3 * CG_MAX_PTS];
	cg_send_t send;
} cg_tick_t;

typedef struct cg_stream_t {
	const char *name, *note;
	ptp_shape_t shape;
	ptp_encoder_params_t params;
	int step, ticks;
	cg_tick_t t[CG_MAX_TICKS];
} cg_stream_t;

/* A unit direction from a rational one (sqrt only). */
static inline void cg_unit(double x, double y, double z, double out[3])
{
	double l = sqrt(x * x + y * y + z * z);
	out[0] = x / l, out[1] = y / l, out[2] = z / l;
}

/* Rotates v by the unit quaternion q (x, y, z, w). */
static inline void cg_rotate(const double q[4], const double v[3], double out[3])
{
	double x = q[0], y = q[1], z = q[2], w = q[3];
	double tx = 2 * (y * v[2] - z * v[1]), ty = 2 * (z * v[0] - x * v[2]),
	       tz = 2 * (x * v[1] - y * v[0]);
	out[0] = v[0] + w * tx + (y * tz - z * ty);
	out[1] = v[1] + w * ty + (z * tx - x * tz);
	out[2] = v[2] + w * tz + (x * ty - y * tx);
}

/* Tick i of a swinging head and hair: position on a parabola (constant acceleration, so
 * the head block's second difference is small), yaw by the rational quaternion
 * (0, a, 0, 1) normalised, each segment leaning by a wave that travels down the strand.
 * yaw0/yaw_rate set the rotation; stretch > 0 lengthens the segments of the strands in
 * stretch_mask (bit s: strand s), which are then sent raw. */
static inline void cg_pose(const ptp_shape_t *sh, int i, double yaw0, double yaw_rate,
                           double stretch, unsigned stretch_mask, cg_tick_t *t)
{
	double a = yaw0 + yaw_rate * i, q[4], hp[3] = {0.01 * i, 1.5 + 0.0004 * i * i, -0.002 * i};
	int p = 0;
	cg_unit(0, a, 0, q); /* (0, a, 0) normalised into x, y, z; w below */
	{
		double l = sqrt(a * a + 1.0);
		q[0] = 0, q[1] = a / l, q[2] = 0, q[3] = 1.0 / l;
	}
	for (int k = 0; k < 3; k++)
		t->head_p[k] = (float)hp[k];
	for (int k = 0; k < 4; k++)
		t->head_q[k] = (float)q[k];
	for (int s = 0; s < sh->strand_count; s++) {
		const ptp_shape_strand_t *st = &sh->strands[s];
		double local[3], world[3], prev[3];
		double len = st->segment_length * (((stretch_mask >> s) & 1) ? 1.0 + stretch * i : 1.0);
		for (int k = 0; k < 3; k++)
			local[k] = st->anchor[k];
		cg_rotate(q, local, world);
		for (int k = 0; k < 3; k++)
			prev[k] = (double)(float)hp[k] + world[k];
		for (int j = 0; j < st->points; j++, p++) {
			if (j > 0) {
				double lean = 0.05 * (j + 1) * (1.0 - 0.1 * ((i + 2 * j + s) % 7)), d[3],
				       dw[3];
				cg_unit(st->direction[0] + lean, st->direction[1],
				        st->direction[2] + 0.5 * lean, d);
				cg_rotate(q, d, dw);
				for (int k = 0; k < 3; k++)
					prev[k] += len * dw[k];
			}
			for (int k = 0; k < 3; k++)
				t->pts[3 * p + k] = (float)prev[k];
		}
	}
}

static inline ptp_shape_t cg_shape(void)
{
	ptp_shape_t s;
	memset(&s, 0, sizeof s);
	s.strand_count = 2;
	s.strands[0] = (ptp_shape_strand_t){6, 0.05f, {-0.05f, 0.04f, -0.11f}, {0, -1, -0.25f}};
	s.strands[1] = (ptp_shape_strand_t){8, 0.04f, {0.05f, 0.04f, -0.11f}, {0.25f, -1, 0}};
	return s;
}

/* The streams. n is set to how many there are. */
static inline int cg_streams(cg_stream_t *out, int cap)
{
	int n = 0;
	for (int v = 0; v < 8 && n < cap; v++) {
		cg_stream_t *c = &out[n++];
		memset(c, 0, sizeof *c);
		c->shape = cg_shape();
		c->params = (ptp_encoder_params_t){0.0005f, 8};
		c->step = 1;
		c->ticks = 24;
		for (int i = 0; i < c->ticks; i++) {
			cg_tick_t *t = &c->t[i];
			double yaw0 = 0.05, rate = 0.01, stretch = 0;
			unsigned mask = 1;
			if (v == 3)
				yaw0 = 0.8, rate = 0.03; /* a/1 passes 1: the largest component flips */
			if (v == 5 && i >= 6 && i < 9)
				stretch = 0.05; /* strand 0 stretches: raw, then key */
			if (v == 6 && i >= 3 && i < 12)
				stretch = 0.05, mask = 3; /* both: every strand raw */
			cg_pose(&c->shape, i * (v == 2 ? 2 : 1), yaw0, rate, stretch, mask, t);
			/* seq: +1 a tick, with a pose that came late (+0) and a burst (+3) */
			t->seq = (uint32_t)(100 + i + (i >= 5 ? 2 : 0) - (i >= 9 ? 1 : 0));
			t->send = CG_DELTA;
		}
		switch (v) {
		case 0:
			c->name = "compact_swing";
			c->note = "deltas with keyframes every 8 ticks: the head and seq predicted from "
			          "the last two frames";
			break;
		case 1:
			c->name = "compact_lost";
			c->note = "tick 10's batch is lost: tick 11's delta is no_key, tick 12 comes "
			          "as a keyframe record and the deltas follow from it";
			c->t[9].send = CG_LOST;
			c->t[10].send = CG_DELTA; /* expect no_key */
			c->t[11].send = CG_KEY;
			break;
		case 2:
			c->name = "compact_rate";
			c->note = "a 30 Hz stream (step 2): each delta is against the record two ticks "
			          "before, the stream's own previous frame";
			c->step = 2;
			break;
		case 3:
			c->name = "compact_largest";
			c->note = "the head's largest quaternion component changes (w to y): that "
			          "tick's delta record carries the head block absolute";
			break;
		case 4:
			c->name = "compact_corrupt";
			c->note = "hand-corrupted copies of delta records (padding, cut, extra byte, "
			          "other dropped component), each followed by the good record of the "
			          "same tick in a continuation batch (tick_gap 0): the bad one is "
			          "refused and leaves the decoder as it was, so the good one applies";
			c->t[3].send = CG_PADDING;
			c->t[6].send = CG_CUT;
			c->t[10].send = CG_EXTRA;
			c->t[13].send = CG_LARGEST;
			break;
		case 6:
			c->name = "compact_head_history";
			c->note = "every strand raw for the 4th to 12th ticks, and the 5th tick's batch "
			          "lost: the 6th tick's record needs no strand history but its head "
			          "block is a delta, so it is no_key; the 7th comes as a keyframe "
			          "record";
			c->t[4].send = CG_LOST;
			c->t[6].send = CG_KEY;
			break;
		case 7:
			c->name = "compact_far";
			c->note = "the 9th and 17th ticks' records (keyframe ticks: the head block is "
			          "absolute) copied with the head far away: p_x = 2^30 + 1 grid units is "
			          "range; p_x = p_y = 2^30 applies (the bound is per component, "
			          "inclusive, not on the norm; its points are not the input's); each "
			          "followed by the good record of the same tick";
			c->t[8].send = CG_FAR;
			c->t[16].send = CG_FAR_OK;
			break;
		case 5:
			c->name = "compact_raw";
			c->note = "a late joiner: its first record is tick 4's keyframe; then strand 0 "
			          "stretches for three ticks (sent raw) and comes back as key";
			for (int i = 0; i < 4; i++)
				c->t[i].send = CG_LOST;
			c->t[4].send = CG_KEY;
			break;
		}
	}
	return n;
}

#endif
