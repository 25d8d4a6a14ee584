/* Benchmark: the compact coding (PROTOCOL.md 11, protocol 1.2) against the classic one
 * (section 6) on the same simulated frames.
 *
 * Scenes: the default twin tails on the stress sequence (shake, nod, jump; 4.1 s repeated
 * for 60 s at 60 Hz) at 1, 4 and 16 substeps, and every hairstyle in clients/examples at
 * 4 substeps. Each tick is encoded by a classic and a compact encoder as the server does
 * (one shared delta record, a keyframe every 60 ticks), wrapped in the batch a connection
 * watching only this instance receives, decoded and compared with the simulated points;
 * a decoder that joins at tick 1000 from an on-demand keyframe must match the first bit
 * for bit from then on.
 *
 * Metrics (default scene without a suffix, others with .s1/.s16/.<example>):
 *   proto.c.bytes_per_point         compact record per point (classic: proto.bytes_per_point)
 *   proto.c.batch1_bytes_per_point  a whole frame_batch_c holding only this instance
 *   proto.c.max_error_m             largest decoded point error over the run
 *   proto.c.encode_ns_per_point     median of PTP_BENCH_REPS (default 5) timed passes, and
 *   proto.c.encode_ns_spread        (max - min) / median of those passes
 *   proto.c.many4.encode_ns_median  the same with four instances' encoders ticked together
 *                                   by ptp_encoder_tick_many, as the server runs them
 *                                   (proto.many4.*: classic)
 *   proto.encode_instr_per_point    callgrind instructions (classic and .c), when valgrind
 *                                   is installed: stable on a loaded machine
 *   proto.c.bytes_per_point.r30/.r20/.r10, proto.bytes_per_point.r30/...: the default scene
 *                                   as a per-viewer rate's stream (PROTOCOL.md 5, 11.3)
 *                                   sees it: every 2nd/3rd/6th tick, deltas against that
 *                                   stream's previous record, a keyframe a second, decoded
 *                                   with the record's step (proto.c.max_error_m.r30 ...).
 *                                   PTP_BENCH_STRIDE=d adds stride d (1..16) to those.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "benchutil.h"
#include "ponytail/schema.h"
#include "ptp/compact.h"
#include "ptp/proto.h"
#include "ptp/strand.h"
#include "scenario.h"
#include "testdef.h"

enum { TICK_HZ = 60, SECONDS = 60, MAX_PTS = PT_MAX_JOINTS, CAP = 1 << 17 };

typedef struct scene_t {
	ptp_shape_t shape;
	int n, ticks;
	pt_pose *heads;
	float *frames;
} scene_t;

static int simulate(const pt_instance_def *def, int substeps, scene_t *sc)
{
	pt_world *w = pt_world_create(NULL);
	pt_motion motion = pt_motion_default(PT_MOTION_STRESS);
	double cycle = pt_motion_stress_end();
	pt_id id;
	if (!w)
		return -1;
	id = pt_world_create_instance(w, def, pt_motion_pose(&motion, 0));
	sc->shape = scenario_shape(def);
	sc->n = ptp_shape_point_count(&sc->shape);
	sc->ticks = SECONDS * TICK_HZ;
	sc->heads = malloc(sizeof(pt_pose) * (size_t)sc->ticks);
	sc->frames = malloc(sizeof(float) * 3 * (size_t)sc->n * (size_t)sc->ticks);
	if (pt_id_is_null(id) || !sc->heads || !sc->frames)
		return -1;
	for (int k = 1; k <= sc->ticks; k++) {
		pt_pose head = pt_motion_pose(&motion, fmod(k / (double)TICK_HZ, cycle));
		pt_world_set_head(w, id, head);
		pt_world_step(w, 1.0f / TICK_HZ, substeps);
		pt_world_get_head(w, id, &head);
		sc->heads[k - 1] = head;
		pt_world_read_points(w, id, (pt_vec3 *)(sc->frames + (size_t)(k - 1) * 3 * sc->n),
		                     MAX_PTS);
	}
	pt_world_destroy(w);
	return 0;
}

static void pose_of(const pt_pose *h, float hp[3], float hq[4])
{
	hp[0] = h->p.x, hp[1] = h->p.y, hp[2] = h->p.z;
	hq[0] = h->q.x, hq[1] = h->q.y, hq[2] = h->q.z, hq[3] = h->q.w;
}

static double max_dist(const float *a, const float *b, int n)
{
	double m = 0;
	for (int i = 0; i < n; i++) {
		double dx = a[3 * i] - b[3 * i], dy = a[3 * i + 1] - b[3 * i + 1],
		       dz = a[3 * i + 2] - b[3 * i + 2];
		double e = sqrt(dx * dx + dy * dy + dz * dz);
		m = e > m ? e : m;
	}
	return m;
}

/* A connection watching only this instance: both codings, decoded as a client does. */
static int measure(const scene_t *sc, const char *suffix)
{
	static uint8_t rec[CAP], krec[CAP], msg[CAP + 64];
	static float out[3 * MAX_PTS], late_out[3 * MAX_PTS];
	const uint64_t ID = ((uint64_t)1 << 32) | 1; /* the first instance of a fresh daemon */
	ptp_encoder_t *ec = ptp_encoder_create(&sc->shape, NULL);
	ptp_encoder_t *ek = ptp_encoder_create_compact(&sc->shape, NULL);
	ptp_decoder_t *dk = ptp_decoder_create(&sc->shape), *late = ptp_decoder_create(&sc->shape);
	ptp_batch_clock_t server = {3599, 1700000000000000, TICK_HZ}, client = server;
	double c_rec = 0, k_rec = 0, k_batch = 0, k_err = 0, c_err = 0;
	int fails = 0;
	if (!ec || !ek || !dk || !late)
		return 1;
	for (int k = 1; k <= sc->ticks; k++) {
		const float *xyz = sc->frames + (size_t)(k - 1) * 3 * sc->n;
		uint64_t tick = 3599 + (uint64_t)k;
		int64_t time_us = 1700000000000000 + (int64_t)((tick - 3599) * 1000000 / TICK_HZ);
		float hp[3], hq[4];
		size_t len = 0, blen = 0;
		ptp_batch_c_t b = {0, 0, 1, rec, 0, 0}, got;
		ptp_record_c_t r;
		ptp_head_c_t head;
		size_t off = 0;
		pose_of(&sc->heads[k - 1], hp, hq);
		fails += ptp_encoder_tick(ec, hp, hq, xyz, (size_t)sc->n) != PTP_OK;
		fails += ptp_encoder_record(ec, 0, ID, (uint32_t)k, rec, sizeof rec, &len) != PTP_OK;
		c_rec += (double)len;
		c_err = fmax(c_err, ptp_encoder_last_error(ec));

		fails += ptp_encoder_tick_c(ek, (uint32_t)k, hp, hq, xyz, (size_t)sc->n) != PTP_OK;
		fails += ptp_encoder_record_c(ek, 0, ID, rec, sizeof rec, &len) != PTP_OK;
		b.records_len = len;
		fails += ptp_batch_clock_delta(&server, tick, time_us, &b.tick_gap, &b.time_dev) !=
		         PTP_OK;
		server.tick = tick, server.time_us = time_us;
		fails += ptp_batch_c_encode(&b, msg, sizeof msg, &blen) != PTP_OK;
		k_rec += (double)len;
		k_batch += (double)blen;
		/* the client: message, clock, record, strands */
		fails += ptp_batch_c_decode(msg, blen, &got) != PTP_OK;
		fails += ptp_batch_clock_advance(&client, &got) != PTP_OK;
		fails += client.tick != tick || client.time_us != time_us;
		fails += !ptp_record_c_next(&got, &off, &r) || r.id != ID;
		fails += ptp_decoder_apply_c(dk, client.tick, 1, &r, &head, out, (size_t)sc->n) !=
		         PTP_OK;
		fails += head.last_seq != (uint32_t)k;
		k_err = fmax(k_err, max_dist(out, xyz, sc->n));
		if (k >= 1000) {
			ptp_batch_c_t kb = {0, 0, 1, krec, 0, 0};
			size_t ko = 0;
			fails += ptp_encoder_record_c(ek, k == 1000, ID, krec, sizeof krec,
			                              &kb.records_len) != PTP_OK;
			fails += !ptp_record_c_next(&kb, &ko, &r);
			fails += ptp_decoder_apply_c(late, tick, 1, &r, NULL, late_out,
			                             (size_t)sc->n) != PTP_OK;
			fails += memcmp(out, late_out, sizeof(float) * 3 * (size_t)sc->n) != 0;
		}
	}
	printf("proto compact%s: %d points, %d failures\n", suffix, sc->n, fails);
	printf("METRIC proto.c.bytes_per_point%s %.3f B compact record per point (classic %.3f)\n",
	       suffix, k_rec / sc->ticks / sc->n, c_rec / sc->ticks / sc->n);
	printf("METRIC proto.c.batch1_bytes_per_point%s %.3f B a frame_batch_c holding only this "
	       "instance (classic frame_batch %.3f)\n",
	       suffix, k_batch / sc->ticks / sc->n, (c_rec + 28.0 * sc->ticks) / sc->ticks / sc->n);
	printf("METRIC proto.c.max_error_m%s %.6f m largest decoded point error (classic "
	       "encoder's %.6f)\n",
	       suffix, k_err, c_err);
	if (*suffix) {
		printf("METRIC proto.bytes_per_point%s %.3f B classic record per point\n", suffix,
		       c_rec / sc->ticks / sc->n);
	}
	ptp_encoder_destroy(ec);
	ptp_encoder_destroy(ek);
	ptp_decoder_destroy(dk);
	ptp_decoder_destroy(late);
	return fails != 0;
}

/* A per-viewer rate's stream: every `stride`-th tick of the scene (ticks k with
 * k % stride == 0, as the server's tick % divisor), both codings, one keyframe per second
 * (keyframe_interval / stride records apart, as sim_make_encoder), the step in each
 * compact record (ptp_record_c_set_step) and the decoder taking it from there. */
static int measure_stride(const scene_t *sc, int stride)
{
	static uint8_t rec[CAP];
	static float out[3 * MAX_PTS];
	const uint64_t ID = ((uint64_t)1 << 32) | 1;
	ptp_encoder_params_t p = ptp_encoder_params_default();
	p.keyframe_interval = TICK_HZ / stride > 1 ? TICK_HZ / stride : 1;
	ptp_encoder_t *ec = ptp_encoder_create(&sc->shape, &p);
	ptp_encoder_t *ek = ptp_encoder_create_compact(&sc->shape, &p);
	ptp_decoder_t *dk = ptp_decoder_create(&sc->shape);
	double c_rec = 0, k_rec = 0, k_err = 0;
	int fails = 0, n = 0;
	char suffix[16];
	if (!ec || !ek || !dk)
		return 1;
	for (int k = stride; k <= sc->ticks; k += stride, n++) {
		const float *xyz = sc->frames + (size_t)(k - 1) * 3 * sc->n;
		float hp[3], hq[4];
		size_t len = 0, off = 0;
		ptp_batch_c_t b = {0, 0, 1, rec, 0, 0};
		ptp_record_c_t r;
		pose_of(&sc->heads[k - 1], hp, hq);
		fails += ptp_encoder_tick(ec, hp, hq, xyz, (size_t)sc->n) != PTP_OK;
		fails +=
		    ptp_encoder_record(ec, 0, ID, (uint32_t)k, rec, sizeof rec, &len) != PTP_OK;
		c_rec += (double)len;
		fails += ptp_encoder_tick_c(ek, (uint32_t)k, hp, hq, xyz, (size_t)sc->n) != PTP_OK;
		fails += ptp_encoder_record_c(ek, 0, ID, rec, sizeof rec, &len) != PTP_OK;
		fails += ptp_record_c_set_step(rec, len, (unsigned)stride) != PTP_OK;
		k_rec += (double)len;
		b.records_len = len;
		fails += !ptp_record_c_next(&b, &off, &r) || r.step != stride;
		fails += ptp_decoder_apply_c(dk, 3599 + (uint64_t)k, r.step, &r, NULL, out,
		                             (size_t)sc->n) != PTP_OK;
		k_err = fmax(k_err, max_dist(out, xyz, sc->n));
	}
	snprintf(suffix, sizeof suffix, ".r%d", TICK_HZ / stride);
	if (stride > 6 || TICK_HZ % stride)
		snprintf(suffix, sizeof suffix, ".stride%d", stride);
	printf("proto compact stride %d: %d records, %d failures\n", stride, n, fails);
	printf("METRIC proto.c.bytes_per_point%s %.3f B compact record per point, a record every "
	       "%d ticks "
	       "(classic %.3f)\n",
	       suffix, k_rec / n / sc->n, stride, c_rec / n / sc->n);
	printf("METRIC proto.bytes_per_point%s %.3f B classic record per point, a record every %d "
	       "ticks\n",
	       suffix, c_rec / n / sc->n, stride);
	printf("METRIC proto.c.max_error_m%s %.6f m largest decoded point error\n", suffix, k_err);
	ptp_encoder_destroy(ec);
	ptp_encoder_destroy(ek);
	ptp_decoder_destroy(dk);
	return fails != 0;
}

/* One timed pass over every tick, as the server runs an encoder: tick + delta record.
 * noinline and named for callgrind's --toggle-collect. */
static __attribute__((noinline)) double time_encode_c(const scene_t *sc, int compact)
{
	static uint8_t rec[CAP];
	ptp_encoder_t *e = compact ? ptp_encoder_create_compact(&sc->shape, NULL)
	                           : ptp_encoder_create(&sc->shape, NULL);
	double t0 = bench_now(), t;
	for (int k = 1; k <= sc->ticks; k++) {
		float hp[3], hq[4];
		size_t len;
		const float *xyz = sc->frames + (size_t)(k - 1) * 3 * sc->n;
		pose_of(&sc->heads[k - 1], hp, hq);
		if (compact) {
			ptp_encoder_tick_c(e, (uint32_t)k, hp, hq, xyz, (size_t)sc->n);
			ptp_encoder_record_c(e, 0, 1, rec, sizeof rec, &len);
		} else {
			ptp_encoder_tick(e, hp, hq, xyz, (size_t)sc->n);
			ptp_encoder_record(e, 0, 1, (uint32_t)k, rec, sizeof rec, &len);
		}
	}
	t = bench_now() - t0;
	ptp_encoder_destroy(e);
	return t;
}

/* The same as the server runs encoders (server/sim_frame.c): four instances ticked together
 * with ptp_encoder_tick_many, each then writing its delta record. Instance j plays the
 * scene from tick 1 + 977 j on, so no two of them move alike. noinline and named for
 * callgrind, as time_encode_c. */
static __attribute__((noinline)) double time_encode_many(const scene_t *sc, int compact)
{
	static uint8_t rec[CAP];
	enum { N = PTP_TICK_MANY_MAX };
	ptp_encoder_t *e[N];
	ptp_tick_in_t in[N];
	ptp_err_t err[N];
	float hp[N][3], hq[N][4];
	double t0, t;
	for (int j = 0; j < N; j++) {
		e[j] = compact ? ptp_encoder_create_compact(&sc->shape, NULL)
		               : ptp_encoder_create(&sc->shape, NULL);
		in[j] = (ptp_tick_in_t){e[j], compact, 0, hp[j], hq[j], NULL, (size_t)sc->n};
	}
	t0 = bench_now();
	for (int k = 1; k <= sc->ticks; k++) {
		for (int j = 0; j < N; j++) {
			int f = (k - 1 + 977 * j) % sc->ticks;
			pose_of(&sc->heads[f], hp[j], hq[j]);
			in[j].xyz = sc->frames + (size_t)f * 3 * sc->n;
			in[j].last_seq = (uint32_t)k;
		}
		ptp_encoder_tick_many(in, N, err);
		for (int j = 0; j < N; j++) {
			size_t len;
			if (compact)
				ptp_encoder_record_c(e[j], 0, 1, rec, sizeof rec, &len);
			else
				ptp_encoder_record(e[j], 0, 1, (uint32_t)k, rec, sizeof rec, &len);
		}
	}
	t = bench_now() - t0;
	for (int j = 0; j < N; j++)
		ptp_encoder_destroy(e[j]);
	return t;
}

/* Pass `mode` of the timing: 0 classic, 1 compact (one encoder), 2 and 3 the same four at a
 * time; its seconds, and the points it encoded. */
static double time_mode(const scene_t *sc, int mode, double *points)
{
	*points = (double)sc->ticks * sc->n * (mode >= 2 ? PTP_TICK_MANY_MAX : 1);
	return mode >= 2 ? time_encode_many(sc, mode & 1) : time_encode_c(sc, mode & 1);
}

static const char *const mode_name[4] = {"", ".c", ".many4", ".c.many4"};
static const char *const mode_what[4] = {
    "tick + delta record per point", "tick + delta record per point",
    "tick + delta record per point, four instances ticked together (the server's way)",
    "tick + delta record per point, four instances ticked together (the server's way)"};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void timing(const scene_t *sc)
{
	const char *env = getenv("PTP_BENCH_REPS");
	int reps = env ? atoi(env) : 5;
	double t[4][64];
	reps = reps < 1 ? 1 : reps > 64 ? 64 : reps;
	for (int r = 0; r < reps; r++)
		for (int c = 0; c < 4; c++) {
			double pts, sec = time_mode(sc, c, &pts);
			t[c][r] = sec * 1e9 / pts;
		}
	for (int c = 0; c < 4; c++) {
		double med;
		qsort(t[c], (size_t)reps, sizeof(double), cmp_double);
		med = t[c][reps / 2];
		printf("METRIC proto%s.encode_ns_median %.1f ns %s, median of %d passes (noisy "
		       "machine: see instr_per_point)\n",
		       mode_name[c], med, mode_what[c], reps);
		printf("METRIC proto%s.encode_ns_spread %.3f (max - min) / median of those passes\n",
		       mode_name[c], (t[c][reps - 1] - t[c][0]) / med);
	}
}

/* Callgrind instruction counts of one encode pass of each mode: this program run again
 * under valgrind with PTP_BENCH_ONE=mode. Skipped without valgrind. */
static void instructions(const char *self, int points)
{
	for (int c = 0; c < 4; c++) {
		char cmd[1024], line[512];
		FILE *p;
		long long ir = -1;
		snprintf(cmd, sizeof cmd,
		         "PTP_BENCH_ONE=%d valgrind --tool=callgrind --callgrind-out-file=/dev/null "
		         "'--toggle-collect=time_encode_*' '%s' 2>&1",
		         c, self);
		p = popen(cmd, "r");
		if (!p)
			return;
		while (fgets(line, sizeof line, p)) {
			const char *s = strstr(line, "Collected : ");
			if (s)
				ir = atoll(s + 12);
		}
		if (pclose(p) != 0 || ir < 0) {
			printf("proto: no callgrind counts (valgrind missing or failed)\n");
			return;
		}
		printf("METRIC proto%s.encode_instr_per_point %.1f instr callgrind, %s (stable "
		       "under load)\n",
		       mode_name[c], (double)ir / ((double)SECONDS * TICK_HZ * points *
		                                   (c >= 2 ? PTP_TICK_MANY_MAX : 1)),
		       mode_what[c]);
	}
}

static int load_example(const char *path, pt_instance_def *def)
{
	FILE *f = fopen(path, "rb");
	static char buf[1 << 16];
	size_t n;
	json_t *j;
	int rc;
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	j = pt_schema_read_buffer(buf, n, NULL);
	if (!j)
		return -1;
	rc = pt_schema_parse(j, def, NULL, NULL);
	json_decref(j);
	return rc;
}

int main(int argc, char **argv)
{
	static const char *examples[] = {"bangs", "jog-ponytail", "long-hair", "twin-tails"};
	const char *one = getenv("PTP_BENCH_ONE"), *root = getenv("PT_ROOT");
	pt_instance_def def;
	scenario_twin_tails(&def);
	scene_t sc;
	int fails = 0;
	(void)argc;
	if (simulate(&def, 4, &sc) != 0)
		return 1;
	if (one) { /* under callgrind: one pass, nothing else */
		double pts;
		time_mode(&sc, atoi(one) & 3, &pts);
		return 0;
	}
	fails += measure(&sc, "");
	for (int st = 2; st <= 6; st++)
		if (st != 4 && st != 5)
			fails += measure_stride(&sc, st);
	{
		const char *env = getenv("PTP_BENCH_STRIDE");
		int st = env ? atoi(env) : 0;
		if (st >= 1 && st <= PTP_RECORD_C_STEP_MAX)
			fails += measure_stride(&sc, st);
	}
	timing(&sc);
	instructions(argv[0], sc.n);
	free(sc.heads), free(sc.frames);
	for (int s = 1; s <= 16; s *= 4) {
		char suffix[16];
		if (s == 4)
			continue;
		snprintf(suffix, sizeof suffix, ".s%d", s);
		if (simulate(&def, s, &sc) != 0)
			return 1;
		fails += measure(&sc, suffix);
		free(sc.heads), free(sc.frames);
	}
	for (size_t i = 0; i < sizeof examples / sizeof examples[0]; i++) {
		char path[1024], suffix[64];
		pt_instance_def ex;
		tdef_init(&ex); /* pt_schema_parse swaps into an initialised definition */
		snprintf(path, sizeof path, "%s/clients/examples/%s.json", root ? root : ".",
		         examples[i]);
		snprintf(suffix, sizeof suffix, ".%s", examples[i]);
		if (load_example(path, &ex) != 0 || simulate(&ex, 4, &sc) != 0) {
			fprintf(stderr, "bench_proto_compact: cannot run %s\n", path);
			pt_instance_def_fini(&ex);
			fails++;
			continue;
		}
		fails += measure(&sc, suffix);
		free(sc.heads), free(sc.frames);
		pt_instance_def_fini(&ex);
	}
	pt_instance_def_fini(&def);
	return fails != 0;
}
