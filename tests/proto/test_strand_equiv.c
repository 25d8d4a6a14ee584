/* The fast strand codec against the original one (strand_ref.h, a frozen copy), on
 * random and deliberately awkward input: every record byte, every size, every error,
 * every reported error distance and every decoded float must be the same, for every
 * quantiser kernel this build and CPU can run (the reference loop, SSE2, AVX2).
 *
 * PTP_EQUIV_RUNS (default 160) sets how many random instances each test plays; every
 * instance runs 40 ticks through the encoders, the decoders, and mutated records. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../proto/src/strand_internal.h" /* ptp_encoder_set_kernel, PTP_QUANT_* */
#include "ptp/compact.h"
#include "ptp/strand.h"
#include "strand_ref.h"

enum { TICKS = 40, MAXP = PTP_MAX_STRANDS * PTP_MAX_POINTS, CAP = 65536 + PTP_RECORD_MIN };

static uint64_t rng_state;

static uint64_t rnd_u64(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static double rnd(void) /* [0, 1) */
{
	return (double)(rnd_u64() >> 11) * (1.0 / 9007199254740992.0);
}

static int rnd_int(int n) /* [0, n) */
{
	return (int)(rnd_u64() % (uint64_t)n);
}

static double rnd_log(double lo, double hi) /* log-uniform in [lo, hi] */
{
	return lo * pow(hi / lo, rnd());
}

static int runs(void)
{
	const char *s = getenv("PTP_EQUIV_RUNS");
	int n = s ? atoi(s) : 160;
	return n > 0 ? n : 1;
}

/* How an instance moves; each is hard on a different part of the encoder. */
enum {
	MOTION_SMOOTH,  /* hanging strands swinging: small residuals, delta records */
	MOTION_RANDOM,  /* every segment anywhere: big residuals, lower hemisphere folds */
	MOTION_LATTICE, /* directions of small integers: exact ties between corners, codes on
	                   cell edges (u m an integer) */
	MOTION_STILL,   /* nothing moves, or every point on one spot (l = 0) */
	MOTION_STRETCH, /* segments too long or short, root off its anchor: raw strands */
	MOTION_COUNT
};

typedef struct scene_t {
	ptp_shape_t shape;
	ptp_encoder_params_t params;
	int motion;
	int head;     /* 0 identity, 1 random, 2 a quarter turn about an axis, 3 -identity */
	double scale; /* positions are multiplied by this (tiny or huge magnitudes) */
	double phase[PTP_MAX_STRANDS];
} scene_t;

static void random_scene(scene_t *sc)
{
	int n = rnd_int(8) == 0 ? PTP_MAX_STRANDS : 1 + rnd_int(rnd_int(3) == 0 ? 8 : 3);
	memset(sc, 0, sizeof *sc);
	sc->shape.strand_count = (uint16_t)n;
	sc->motion = rnd_int(MOTION_COUNT);
	sc->head = rnd_int(4);
	sc->scale = rnd_int(6) == 0 ? rnd_log(1e-6, 1e6) : 1.0;
	for (int s = 0; s < n; s++) {
		ptp_shape_strand_t *st = &sc->shape.strands[s];
		int axis = rnd_int(3);
		/* a whole avatar's 256 strands: short ones, 4,096 points at most in all (core's cap) */
		st->points = (uint8_t)(2 + (n <= 32 && rnd_int(4) == 0 ? rnd_int(PTP_MAX_POINTS - 1)
		                                                        : rnd_int(14)));
		st->segment_length = (float)rnd_log(1e-3, 10.0);
		for (int k = 0; k < 3; k++) {
			st->anchor[k] = rnd_int(3) ? (float)(rnd() - 0.5) * 0.3f : 0.0f;
			st->direction[k] = (float)(rnd() * 2.0 - 1.0);
		}
		if (rnd_int(3) ==
		    0) { /* along an axis, either way (n_z = -1 is the frame's edge) */
			memset(st->direction, 0, sizeof st->direction);
			st->direction[axis] = rnd_int(2) ? 1.0f : -1.0f;
		}
		if (!(st->direction[0] * st->direction[0] + st->direction[1] * st->direction[1] +
		          st->direction[2] * st->direction[2] >=
		      1e-6f))
			st->direction[1] = -1.0f;
		sc->phase[s] = rnd() * 6.283185307179586;
	}
	sc->params = ptp_encoder_params_default();
	/* b from 2 to 16: max_error_m from a tenth of the segment down to 1e-5 */
	sc->params.max_error_m = (float)(rnd_int(4) == 0 ? rnd_log(1e-5, 1.0) : 0.001);
	sc->params.keyframe_interval = 1 + rnd_int(rnd_int(2) ? 60 : 7);
	if (sc->motion == MOTION_LATTICE) {
		/* a frame of 0s and +-1s (rest direction on an axis, head square), often a coarse
		 * grid (b = 2 .. 5): l of the first segments is then exactly symmetric, and
		 * corners tie exactly in every pairing the encoder compares */
		static const int heads[3] = {0, 2, 3};
		sc->head = heads[rnd_int(3)];
		for (int s = 0; s < n; s++) {
			ptp_shape_strand_t *st = &sc->shape.strands[s];
			memset(st->direction, 0, sizeof st->direction);
			st->direction[rnd_int(3)] = rnd_int(2) ? 1.0f : -1.0f;
		}
		if (rnd_int(3))
			sc->params.max_error_m = (float)rnd_log(0.05, 1.0);
	}
	if (sc->motion == MOTION_STILL) /* zero-length segments, yet not raw: l = 0 coded */
		sc->params.max_error_m = 1.0f;
	if (sc->motion == MOTION_STILL || sc->motion == MOTION_LATTICE)
		sc->scale = 1.0;
	for (int s = 0; s < n && sc->motion == MOTION_STILL; s++)
		if (sc->shape.strands[s].segment_length > 0.9f)
			sc->shape.strands[s].segment_length = 0.9f;
}

static void head_of(const scene_t *sc, int tick, float p[3], float q[4])
{
	double a = 0.4 * sin(0.13 * tick + sc->phase[0]);
	p[0] = (float)(0.01 * sin(0.2 * tick) * sc->scale);
	p[1] = (float)(1.5 * sc->scale);
	p[2] = sc->head == 3 ? -0.0f : 0.0f;
	switch (sc->head) {
	case 0:
		q[0] = 0, q[1] = 0, q[2] = 0, q[3] = 1;
		break;
	case 1:
		q[0] = (float)(a * 0.5), q[1] = (float)cos(0.07 * tick),
		q[2] = (float)(rnd() - 0.5);
		q[3] = (float)(rnd() * 2 - 1);
		break;
	case 2: /* a quarter turn: a rotation matrix of 0s and +-1s */
		q[0] = 0, q[1] = 0.70710678f, q[2] = 0, q[3] = 0.70710678f;
		break;
	default:
		q[0] = 0, q[1] = 0, q[2] = 0, q[3] = -1;
		break;
	}
}

/* World points of every strand for this tick (root first), in the scene's motion. */
static void points_of(const scene_t *sc, int tick, const float hp[3], float *xyz)
{
	for (int s = 0, p = 0; s < sc->shape.strand_count; s++) {
		const ptp_shape_strand_t *st = &sc->shape.strands[s];
		double len = st->segment_length, x[3];
		for (int k = 0; k < 3; k++)
			x[k] = hp[k] + st->anchor[k] * sc->scale;
		if (sc->motion == MOTION_STRETCH && rnd_int(4) == 0)
			x[rnd_int(3)] += len * (rnd() - 0.5);
		for (int i = 0; i < st->points; i++, p++) {
			if (i) {
				double d[3], n;
				switch (sc->motion) {
				case MOTION_RANDOM:
					for (int k = 0; k < 3; k++)
						d[k] = rnd() * 2 - 1;
					break;
				case MOTION_LATTICE:
					for (int k = 0; k < 3; k++)
						d[k] = rnd_int(5) - 2;
					break;
				case MOTION_STILL:
					d[0] = 0, d[1] = sc->phase[s] > 3 ? 0 : -1, d[2] = 0;
					break;
				default: {
					double th =
					    0.5 * sin(0.11 * tick + 0.3 * i + sc->phase[s]) +
					    0.1 * i;
					d[0] = sin(th) * 0.6, d[1] = -cos(th), d[2] = sin(th) * 0.8;
				}
				}
				n = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
				if (!(n > 0))
					n = 1;
				if (sc->motion == MOTION_STRETCH)
					n *= 0.5 + rnd();
				/* lattice: equal components stay equal floats, so l is symmetric
				 * and corners tie exactly (the first segment's l is exactly d here)
				 */
				for (int k = 0; k < 3; k++)
					x[k] += len * d[k] / n * sc->scale;
			}
			for (int k = 0; k < 3; k++)
				xyz[3 * p + k] = (float)x[k];
		}
	}
}

/* The two records of this tick (delta and key) must match the reference's byte for byte,
 * as must the sizes (also through a buffer one byte short). */
static void check_records(ptp_encoder_t *e, ref_encoder_t *r, int tick, uint8_t *a, uint8_t *b)
{
	for (int key = 0; key < 2; key++) {
		size_t na = 0, nb = 0;
		ptp_err_t ea = ptp_encoder_record(e, key, 7, (uint32_t)tick, a, CAP, &na);
		ptp_err_t eb = ref_encoder_record(r, key, 7, (uint32_t)tick, b, CAP, &nb);
		assert_int_equal(ea, eb);
		assert_int_equal(na, nb);
		if (ea == PTP_OK) {
			assert_memory_equal(a, b, na);
			assert_int_equal(ptp_encoder_record(e, key, 7, 0, a, na - 1, &na),
			                 PTP_ENOSPACE);
			assert_int_equal(na, nb);
		}
		assert_int_equal(ptp_encoder_data_bits(e, key), ref_encoder_data_bits(r, key));
	}
}

static int parse(const uint8_t *buf, size_t n, ptp_record_t *rec)
{
	ptp_frame_batch_t fb = {0, 0, 1, buf, n, 0};
	size_t off = 0;
	return ptp_record_next(&fb, &off, rec);
}

/* Both decoders apply the same record: same verdict, same floats. */
static void check_apply(ptp_decoder_t *d, ref_decoder_t *rd, uint64_t tick, const ptp_record_t *rec,
                        int n)
{
	static float oa[3 * MAXP], ob[3 * MAXP];
	ptp_err_t ea, eb;
	memset(oa, 0x5a, sizeof oa);
	memset(ob, 0x5a, sizeof ob);
	ea = ptp_decoder_apply(d, tick, rec, oa, (size_t)n);
	eb = ref_decoder_apply(rd, tick, rec, ob, (size_t)n);
	assert_int_equal(ea, eb);
	assert_memory_equal(oa, ob, sizeof(float) * 3 * (size_t)n);
}

/* A mutated copy of a record's strand data: bits flipped, cut short or extended. */
static size_t mutate(const ptp_record_t *rec, uint8_t *data, size_t cap)
{
	size_t n = rec->data_len;
	memcpy(data, rec->data, n);
	switch (rnd_int(4)) {
	case 0:
		n = n > 1 ? 1 + (size_t)rnd_int((int)n - 1) : n;
		break;
	case 1:
		if (n < cap)
			data[n++] = (uint8_t)rnd_int(256);
		break;
	default:
		for (int f = 1 + rnd_int(3); f > 0; f--)
			data[rnd_int((int)n)] ^= (uint8_t)(1u << rnd_int(8));
	}
	return n;
}

static void play(int kernel, uint64_t seed)
{
	static uint8_t a[CAP], b[CAP], mut[CAP];
	static float xyz[3 * MAXP];
	scene_t sc;
	ptp_encoder_t *e;
	ref_encoder_t *r;
	ptp_decoder_t *d, *dm;
	ref_decoder_t *rd, *rdm;
	int n;
	rng_state = seed;
	random_scene(&sc);
	e = ptp_encoder_create(&sc.shape, &sc.params);
	r = ref_encoder_create(&sc.shape, &sc.params);
	d = ptp_decoder_create(&sc.shape);
	dm = ptp_decoder_create(&sc.shape);
	rd = ref_decoder_create(&sc.shape);
	rdm = ref_decoder_create(&sc.shape);
	assert_non_null(e);
	assert_non_null(r);
	assert_non_null(d);
	assert_non_null(rd);
	ptp_encoder_set_kernel(e, kernel);
	n = ptp_shape_point_count(&sc.shape);
	for (int s = 0; s < sc.shape.strand_count; s++)
		assert_int_equal(ptp_encoder_bits(e, s), ref_encoder_bits(r, s));
	for (int tick = 1; tick <= TICKS; tick++) {
		float hp[3], hq[4];
		ptp_err_t ea, eb;
		double la, lb;
		ptp_record_t rec;
		head_of(&sc, tick, hp, hq);
		points_of(&sc, tick, hp, xyz);
		if (rnd_int(50) == 0)
			xyz[rnd_int(3 * n)] = rnd_int(2) ? INFINITY : NAN; /* refused, state kept */
		if (rnd_int(25) == 0) {
			ptp_encoder_force_key(e);
			ref_encoder_force_key(r);
		}
		ea = ptp_encoder_tick(e, hp, hq, xyz, (size_t)n);
		eb = ref_encoder_tick(r, hp, hq, xyz, (size_t)n);
		assert_int_equal(ea, eb);
		if (ea != PTP_OK && tick == 1)
			continue;
		la = ptp_encoder_last_error(e);
		lb = ref_encoder_last_error(r);
		assert_memory_equal(&la, &lb, sizeof la);
		assert_int_equal(ptp_encoder_raw_strands(e), ref_encoder_raw_strands(r));
		check_records(e, r, tick, a, b);

		/* the delta record through both decoders, then a mutated copy through two more */
		assert_int_equal(ptp_encoder_record(e, 0, 7, 0, a, CAP, NULL), PTP_OK);
		assert_true(parse(a, CAP, &rec));
		check_apply(d, rd, (uint64_t)tick, &rec, n);
		{
			ptp_record_t m = rec;
			m.data = mut;
			m.data_len = (uint16_t)mutate(&rec, mut, sizeof mut);
			check_apply(dm, rdm, (uint64_t)tick, &m, n);
			if (rnd_int(3) == 0)
				check_apply(dm, rdm, (uint64_t)tick, &rec,
				            n); /* the genuine one after */
		}
	}
	ptp_encoder_destroy(e);
	ref_encoder_destroy(r);
	ptp_decoder_destroy(d);
	ptp_decoder_destroy(dm);
	ref_decoder_destroy(rd);
	ref_decoder_destroy(rdm);
}

static void play_kernel(int kernel)
{
	int n = runs();
	if (!ptp_quant_available(kernel)) {
		printf("kernel %d not available here: skipped\n", kernel);
		skip();
	}
	for (int i = 0; i < n; i++)
		play(kernel, 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1));
}

static void test_auto(void **state)
{
	(void)state;
	play_kernel(PTP_QUANT_AUTO);
}

static void test_reference(void **state)
{
	(void)state;
	play_kernel(PTP_QUANT_REFERENCE);
}

static void test_sse2(void **state)
{
	(void)state;
	play_kernel(PTP_QUANT_SSE2);
}

static void test_avx2(void **state)
{
	(void)state;
	play_kernel(PTP_QUANT_AVX2);
}

/* ptp_encoder_tick_many against the same encoders ticked one by one (each of those is
 * held to the reference above): for every kernel, 1 to 5 instances of random shapes,
 * classic and compact, now and then one with bad input (a NaN point, a zero quaternion,
 * the wrong point count, the other coding's call) or a forced keyframe. Every verdict and every record byte must
 * be the same; a fifth instance is over PTP_TICK_MANY_MAX and must be refused untouched. */
enum { MANY = PTP_TICK_MANY_MAX + 1 };

static void play_many(int kernel, uint64_t seed)
{
	static float xyz[MANY][3 * MAXP];
	static uint8_t a[CAP], b[CAP];
	scene_t sc[MANY];
	ptp_encoder_t *one[MANY], *many[MANY];
	ptp_tick_in_t in[MANY];
	float hp[MANY][3], hq[MANY][4];
	int n = 1 + rnd_int(MANY), pts[MANY], is_c[MANY];
	rng_state = seed;
	for (int i = 0; i < n; i++) {
		int compact = is_c[i] = rnd_int(2);
		random_scene(&sc[i]);
		pts[i] = ptp_shape_point_count(&sc[i].shape);
		one[i] = compact ? ptp_encoder_create_compact(&sc[i].shape, &sc[i].params)
		                 : ptp_encoder_create(&sc[i].shape, &sc[i].params);
		many[i] = compact ? ptp_encoder_create_compact(&sc[i].shape, &sc[i].params)
		                  : ptp_encoder_create(&sc[i].shape, &sc[i].params);
		assert_non_null(one[i]);
		assert_non_null(many[i]);
		ptp_encoder_set_kernel(one[i], kernel);
		ptp_encoder_set_kernel(many[i], kernel);
		in[i] = (ptp_tick_in_t){many[i], compact, 0, hp[i], hq[i], xyz[i], (size_t)pts[i]};
	}
	for (int tick = 1; tick <= TICKS; tick++) {
		ptp_err_t ea[MANY], eb[MANY];
		for (int i = 0; i < n; i++) {
			head_of(&sc[i], tick, hp[i], hq[i]);
			points_of(&sc[i], tick, hp[i], xyz[i]);
			in[i].last_seq = (uint32_t)(tick * 3 + i);
			in[i].n_points = (size_t)pts[i];
			/* now and then the other call: ptp_encoder_tick on a compact encoder (its
			 * seq stays), ptp_encoder_tick_c on a classic one (refused) */
			in[i].compact = rnd_int(10) == 0 ? !is_c[i] : is_c[i];
			switch (rnd_int(24)) {
			case 0:
				xyz[i][3 * rnd_int(pts[i]) + rnd_int(3)] = NAN;
				break;
			case 1:
				hq[i][0] = hq[i][1] = hq[i][2] = hq[i][3] = 0;
				break;
			case 2:
				in[i].n_points--;
				break;
			case 3:
				ptp_encoder_force_key(one[i]);
				ptp_encoder_force_key(many[i]);
				break;
			}
			ea[i] = in[i].compact
			            ? ptp_encoder_tick_c(one[i], in[i].last_seq, hp[i], hq[i], xyz[i],
			                                 in[i].n_points)
			            : ptp_encoder_tick(one[i], hp[i], hq[i], xyz[i], in[i].n_points);
		}
		ptp_encoder_tick_many(in, n, eb);
		for (int i = 0; i < n; i++) {
			if (i >= PTP_TICK_MANY_MAX) {
				assert_int_equal(eb[i], PTP_EINVAL);
				continue;
			}
			assert_int_equal(eb[i], ea[i]);
			for (int key = 0; key < 2; key++) {
				size_t na = 0, nb = 0;
				ptp_err_t ra = is_c[i]
				                   ? ptp_encoder_record_c(one[i], key, 7, a, CAP, &na)
				                   : ptp_encoder_record(one[i], key, 7, 1, a, CAP, &na);
				ptp_err_t rb = is_c[i]
				                   ? ptp_encoder_record_c(many[i], key, 7, b, CAP, &nb)
				                   : ptp_encoder_record(many[i], key, 7, 1, b, CAP, &nb);
				assert_int_equal(ra, rb);
				assert_int_equal(na, nb);
				if (ra == PTP_OK)
					assert_memory_equal(a, b, na);
			}
		}
	}
	/* the refused fifth was never ticked: its first record is still a keyframe's */
	if (n > PTP_TICK_MANY_MAX) {
		size_t na = 0;
		assert_int_not_equal(is_c[n - 1]
		                         ? ptp_encoder_record_c(many[n - 1], 0, 7, a, CAP, &na)
		                         : ptp_encoder_record(many[n - 1], 0, 7, 1, a, CAP, &na),
		                     PTP_OK);
	}
	for (int i = 0; i < n; i++) {
		ptp_encoder_destroy(one[i]);
		ptp_encoder_destroy(many[i]);
	}
}

static void test_tick_many(void **state)
{
	static const int kernels[] = {PTP_QUANT_REFERENCE, PTP_QUANT_SSE2, PTP_QUANT_AVX2,
	                              PTP_QUANT_AUTO};
	int n = runs();
	(void)state;
	for (int k = 0; k < 4; k++) {
		if (!ptp_quant_available(kernels[k]))
			continue;
		for (int i = 0; i < n; i++)
			play_many(kernels[k], 0x51ed270b27be3ce5ull * (uint64_t)(i + 1) + (uint64_t)k);
	}
}

/* A decoder reset and an out-of-order tick: both refuse the same way. */
static void test_decoder_history(void **state)
{
	static uint8_t a[CAP];
	static float xyz[3 * MAXP];
	scene_t sc;
	ptp_encoder_t *e;
	ptp_decoder_t *d;
	ref_decoder_t *rd;
	ptp_record_t rec;
	float hp[3], hq[4];
	int n;
	(void)state;
	rng_state = 12345;
	random_scene(&sc);
	sc.params.keyframe_interval = 1000;
	e = ptp_encoder_create(&sc.shape, &sc.params);
	d = ptp_decoder_create(&sc.shape);
	rd = ref_decoder_create(&sc.shape);
	n = ptp_shape_point_count(&sc.shape);
	for (int tick = 1; tick <= 6; tick++) {
		head_of(&sc, tick, hp, hq);
		points_of(&sc, tick, hp, xyz);
		assert_int_equal(ptp_encoder_tick(e, hp, hq, xyz, (size_t)n), PTP_OK);
		assert_int_equal(ptp_encoder_record(e, 0, 7, 0, a, CAP, NULL), PTP_OK);
		assert_true(parse(a, CAP, &rec));
		if (tick == 3) {
			ptp_decoder_reset(d);
			ref_decoder_reset(rd);
		}
		check_apply(d, rd, (uint64_t)(tick == 5 ? 9 : tick), &rec, n);
	}
	ptp_encoder_destroy(e);
	ptp_decoder_destroy(d);
	ref_decoder_destroy(rd);
}

/* Hand-made delta records around the Exp-Golomb limits: for every k, prefixes of zeros
 * just under, at and over the limit, each followed by a one or by the end of the data. */
static void put_bits(uint8_t *buf, size_t *pos, uint32_t v, int n)
{
	for (int i = 0; i < n; i++, (*pos)++)
		if ((v >> i) & 1u)
			buf[*pos >> 3] |= (uint8_t)(1u << (*pos & 7));
}

static void test_eg_limits(void **state)
{
	static uint8_t a[CAP];
	ptp_shape_t shape;
	ptp_encoder_t *e;
	ptp_record_t key;
	float hp[3] = {0, 0, 0}, hq[4] = {0, 0, 0, 1}, xyz[6] = {0, 0, 0, 0.6f, 0, 0.8f};
	(void)state;
	memset(&shape, 0, sizeof shape);
	shape.strand_count = 1;
	shape.strands[0].points = 2;
	shape.strands[0].segment_length = 1.0f;
	shape.strands[0].direction[2] = 1.0f;
	e = ptp_encoder_create(&shape, NULL);
	assert_int_equal(ptp_encoder_tick(e, hp, hq, xyz, 2), PTP_OK);
	assert_int_equal(ptp_encoder_record(e, 0, 7, 0, a, CAP, NULL), PTP_OK);
	assert_true(parse(a, CAP, &key));
	for (int k = 0; k <= 15; k++)
		for (int zeros = 16 - k; zeros <= 23 - k; zeros++)
			for (int tail = 0; tail < 4; tail++) {
				uint8_t data[16];
				size_t pos = 0;
				ptp_record_t rec = key;
				ptp_decoder_t *d = ptp_decoder_create(&shape);
				ref_decoder_t *rd = ref_decoder_create(&shape);
				memset(data, 0, sizeof data);
				data[0] = 1;
				pos = 8;
				put_bits(data, &pos, 1, 2); /* delta */
				put_bits(data, &pos, (uint32_t)(tail & 3), 2);
				put_bits(data, &pos, (uint32_t)k, 4);
				pos += (size_t)zeros;
				if (tail & 1)
					put_bits(data, &pos, 1, 1);
				pos += (size_t)(tail & 2 ? zeros + k : 3);
				put_bits(data, &pos, 1, 1); /* the second residual, 0 at order 0 */
				check_apply(d, rd, 1, &key, 2);
				rec.flags = 0;
				rec.data = data;
				for (size_t len = 2; len <= (pos + 7) / 8 + 1 && len <= sizeof data;
				     len++) {
					rec.data_len = (uint16_t)len;
					check_apply(d, rd, 2, &rec, 2);
				}
				ptp_decoder_destroy(d);
				ref_decoder_destroy(rd);
			}
	ptp_encoder_destroy(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_auto),
	    cmocka_unit_test(test_reference),
	    cmocka_unit_test(test_sse2),
	    cmocka_unit_test(test_avx2),
	    cmocka_unit_test(test_tick_many),
	    cmocka_unit_test(test_decoder_history),
	    cmocka_unit_test(test_eg_limits),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
