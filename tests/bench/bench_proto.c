/* Benchmark: the compact strand encoding on the stress sequence.
 *
 * The default twin-tails instance (scenario_twin_tails: two 12-point x 0.03 m strands,
 * head sphere r 0.1 + neck capsule, verlet) follows the stress sequence (shake, nod, jump;
 * 4.1 s) repeated back to back for 60 s at 60 Hz x 4 substeps. Every tick is encoded the
 * way the server does (one shared delta record, a keyframe every 60 ticks), decoded by a
 * client decoder and compared with the simulated points. A late-joining decoder that
 * starts from an on-demand keyframe must end bit-identical to the first.
 *
 * bytes per point = whole frame record (id, flags, seq, head pose, strand data) / points;
 * the batch header (28 bytes per connection per tick) is shared by all its instances and
 * reported separately. JSON baseline: the frame JSON (server/README.md) for the same frames.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "benchutil.h"
#include "ptp/proto.h"
#include "ptp/strand.h"
#include "scenario.h"

enum {
	TICK_HZ = 60,
	SUBSTEPS = 4,
	SECONDS = 60,
	REPS = 20,
	MAX_PTS = PT_MAX_JOINTS,
	REC_CAP = 4096 /* bytes kept per recorded delta record (the bench's are < 200) */
};

/* The frame JSON (server/README.md "The frame JSON"), numbers as %.9g (exact) or %.4f
 * (0.1 mm). Returns its length. */
static size_t json_frame(char *buf, size_t cap, int exact, long tick, pt_pose h, const float *xyz,
                         const ptp_shape_t *shape)
{
	size_t n = 0;
#define OUT(...) n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__)
#define NUM(v) OUT(exact ? "%.9g" : "%.4f", (double)(v))
	OUT("{\"tick\":%ld,\"t\":", tick);
	NUM(tick / (double)TICK_HZ);
	OUT(",\"head\":{\"p\":[");
	NUM(h.p.x), OUT(","), NUM(h.p.y), OUT(","), NUM(h.p.z);
	OUT("],\"q\":[");
	NUM(h.q.x), OUT(","), NUM(h.q.y), OUT(","), NUM(h.q.z), OUT(","), NUM(h.q.w);
	OUT("]},\"strands\":[");
	for (int s = 0, p = 0; s < shape->strand_count; s++) {
		OUT(s ? ",[" : "[");
		for (int i = 0; i < shape->strands[s].points; i++, p++) {
			OUT(i ? ",[" : "[");
			NUM(xyz[3 * p]), OUT(","), NUM(xyz[3 * p + 1]), OUT(","),
			    NUM(xyz[3 * p + 2]);
			OUT("]");
		}
		OUT("]");
	}
	OUT("]}");
#undef NUM
#undef OUT
	return n;
}

/* One timed pass of the shared encoder over every tick: ptp_encoder_tick, then the delta
 * record, as the server does. A separate function (never inlined) so that
 * `valgrind --tool=callgrind '--toggle-collect=time_encode*'` counts exactly this (the
 * star: the compiler may rename a specialised copy, time_encode.constprop.0). */
static __attribute__((noinline)) double time_encode(const ptp_shape_t *shape, const pt_pose *heads,
                                                    const float *frames, int n, int ticks,
                                                    uint8_t *rec, size_t cap)
{
	ptp_encoder_t *e = ptp_encoder_create(shape, NULL);
	double t0 = bench_now(), t;
	for (int k = 1; k <= ticks; k++) {
		const pt_pose *h = &heads[k - 1];
		float hp[3] = {h->p.x, h->p.y, h->p.z}, hq[4] = {h->q.x, h->q.y, h->q.z, h->q.w};
		size_t len;
		ptp_encoder_tick(e, hp, hq, frames + (size_t)(k - 1) * 3 * n, (size_t)n);
		ptp_encoder_record(e, 0, 1, (uint32_t)k, rec, cap, &len);
	}
	t = bench_now() - t0;
	ptp_encoder_destroy(e);
	return t;
}

/* One timed pass of a client decoder over the recorded delta records (same reason). */
static __attribute__((noinline)) double time_decode(const ptp_shape_t *shape,
                                                    const uint8_t *records, int n, int ticks,
                                                    float *out, int *fails)
{
	ptp_decoder_t *d = ptp_decoder_create(shape);
	double t0 = bench_now(), t;
	for (int k = 1; k <= ticks; k++) {
		ptp_frame_batch_t b = {0, 0, 1, records + (size_t)(k - 1) * REC_CAP, REC_CAP, 0};
		ptp_record_t r;
		size_t off = 0;
		ptp_record_next(&b, &off, &r);
		*fails += ptp_decoder_apply(d, (uint64_t)k, &r, out, (size_t)n) != PTP_OK;
	}
	t = bench_now() - t0;
	ptp_decoder_destroy(d);
	return t;
}

int main(void)
{
	pt_world *w = pt_world_create(NULL);
	pt_instance_def def;
	scenario_twin_tails(&def);
	pt_motion motion = pt_motion_default(PT_MOTION_STRESS);
	double cycle = pt_motion_stress_end();
	pt_id id = pt_world_create_instance(w, &def, pt_motion_pose(&motion, 0));
	ptp_shape_t shape = scenario_shape(&def);
	ptp_encoder_t *enc = ptp_encoder_create(&shape, NULL);
	ptp_decoder_t *dec = ptp_decoder_create(&shape), *late = ptp_decoder_create(&shape);
	int n = ptp_shape_point_count(&shape), ticks = SECONDS * TICK_HZ, fails = 0, raw_ticks = 0;
	static float out[3 * MAX_PTS], out_late[3 * MAX_PTS];
	static pt_pose heads[SECONDS * TICK_HZ];
	float *frames = malloc(sizeof(float) * 3 * MAX_PTS * SECONDS * TICK_HZ);
	uint8_t *records = malloc((size_t)REC_CAP * SECONDS * TICK_HZ);
	static uint8_t rec[65536 + PTP_RECORD_MIN];
	static char json[1 << 16];
	double rec_bytes = 0, data_bytes = 0, key_bytes = 0, json_bytes = 0, json_mm_bytes = 0;
	double max_err = 0, enc_s = 0, dec_s = 0;
	size_t max_rec = 0;

	if (!w || pt_id_is_null(id) || !enc || !dec || !late || !frames || !records) {
		fprintf(stderr, "bench_proto: set-up failed\n");
		return 1;
	}
	/* The simulation first, so that the timings below are the codec's alone. */
	for (int k = 1; k <= ticks; k++) {
		pt_pose head = pt_motion_pose(&motion, fmod(k / (double)TICK_HZ, cycle));
		pt_world_set_head(w, id, head);
		pt_world_step(w, 1.0f / TICK_HZ, SUBSTEPS);
		pt_world_get_head(w, id, &head);
		heads[k - 1] = head;
		pt_world_read_points(w, id, (pt_vec3 *)(frames + (size_t)(k - 1) * 3 * n), MAX_PTS);
	}

	for (int k = 1; k <= ticks; k++) {
		pt_pose head = heads[k - 1];
		const float *xyz = frames + (size_t)(k - 1) * 3 * n;
		float hp[3] = {head.p.x, head.p.y, head.p.z};
		float hq[4] = {head.q.x, head.q.y, head.q.z, head.q.w};
		size_t len = 0, klen = 0;
		ptp_msg_t msg;
		ptp_record_t r;
		size_t off = 0;

		fails += ptp_encoder_tick(enc, hp, hq, xyz, (size_t)n) != PTP_OK;
		fails += ptp_encoder_record(enc, 0, pt_id_to_u64(id), (uint32_t)k, rec, sizeof rec,
		                            &len) != PTP_OK;
		ptp_encoder_record(enc, 1, pt_id_to_u64(id), (uint32_t)k, NULL, 0, &klen);
		memcpy(records + (size_t)(k - 1) * REC_CAP, rec, len);

		/* What a client does: decode the batch, walk its record, apply it. */
		{
			static uint8_t batch[65536 + 64];
			size_t blen;
			memset(&msg, 0, sizeof msg);
			msg.type = PTP_FRAME_BATCH;
			msg.u.frame_batch.tick = (uint64_t)k;
			msg.u.frame_batch.count = 1;
			msg.u.frame_batch.records = rec;
			msg.u.frame_batch.records_len = len;
			fails += ptp_msg_encode(&msg, batch, sizeof batch, &blen) != PTP_OK;
			fails += ptp_msg_decode(batch, blen, &msg) != PTP_OK;
			fails += !ptp_record_next(&msg.u.frame_batch, &off, &r);
			fails += ptp_decoder_apply(dec, (uint64_t)k, &r, out, (size_t)n) != PTP_OK;
		}
		for (int i = 0; i < n; i++) {
			double dx = out[3 * i] - xyz[3 * i], dy = out[3 * i + 1] - xyz[3 * i + 1],
			       dz = out[3 * i + 2] - xyz[3 * i + 2];
			double e = sqrt(dx * dx + dy * dy + dz * dz);
			if (e > max_err)
				max_err = e;
		}
		raw_ticks += ptp_encoder_raw_strands(enc) > 0;

		/* A subscriber joining at tick 1000 gets that tick's keyframe, then deltas. */
		if (k >= 1000) {
			static uint8_t krec[65536 + PTP_RECORD_MIN];
			ptp_record_t kr;
			size_t kl, ko = 0;
			ptp_frame_batch_t b = {0, 0, 1, NULL, 0};
			fails += ptp_encoder_record(enc, k == 1000, pt_id_to_u64(id), (uint32_t)k,
			                            krec, sizeof krec, &kl) != PTP_OK;
			b.records = krec, b.records_len = kl;
			fails += !ptp_record_next(&b, &ko, &kr);
			fails += ptp_decoder_apply(late, (uint64_t)k, &kr, out_late, (size_t)n) !=
			         PTP_OK;
			fails += memcmp(out, out_late, sizeof(float) * 3 * (size_t)n) != 0;
		}

		rec_bytes += (double)len;
		data_bytes += (double)r.data_len;
		key_bytes += (double)klen;
		if (len > max_rec)
			max_rec = len;
		json_bytes += (double)json_frame(json, sizeof json, 1, k, head, xyz, &shape);
		json_mm_bytes += (double)json_frame(json, sizeof json, 0, k, head, xyz, &shape);
	}

	/* Timings: the shared encoder (tick + delta record) and a client's decode, best of
	 * PTP_BENCH_REPS (default REPS) passes over the same 60 s: the machine is shared, and
	 * the fastest pass is the one least disturbed by others. */
	{
		const char *env = getenv("PTP_BENCH_REPS");
		int reps = env ? atoi(env) : REPS;
		for (int rep = 0; rep < (reps > 0 ? reps : 1); rep++) {
			double te = time_encode(&shape, heads, frames, n, ticks, rec, sizeof rec);
			double td = time_decode(&shape, records, n, ticks, out, &fails);
			if (rep == 0 || te < enc_s)
				enc_s = te;
			if (rep == 0 || td < dec_s)
				dec_s = td;
		}
	}

	printf("proto: %d ticks of the stress sequence (%.1f s cycle), %d points/frame, "
	       "%d bits/component, %d failures, %d raw ticks\n",
	       ticks, cycle, n, ptp_encoder_bits(enc, 0), fails, raw_ticks);
	printf("METRIC proto.bytes_per_point %.3f B whole frame record (33 B header + strand data) "
	       "per point, averaged over 60 s\n",
	       rec_bytes / ticks / n);
	printf("METRIC proto.max_error_m %.6f m largest distance of a decoded point from the "
	       "simulated one\n",
	       max_err);
	printf("METRIC proto.json_bytes_per_point %.2f B server/README.md frame JSON, floats as %%.9g "
	       "(exact f32), same frames\n",
	       json_bytes / ticks / n);
	printf("METRIC proto.json_mm_bytes_per_point %.2f B same JSON, 4 decimals (0.1 mm)\n",
	       json_mm_bytes / ticks / n);
	printf("METRIC proto.data_bytes_per_point %.3f B strand data only\n",
	       data_bytes / ticks / n);
	printf("METRIC proto.batch1_bytes_per_point %.3f B a whole frame_batch message holding "
	       "only this instance (+28 B)\n",
	       (rec_bytes + 28.0 * ticks) / ticks / n);
	printf(
	    "METRIC proto.keyframe_bytes_per_point %.3f B whole record of an on-demand keyframe\n",
	    key_bytes / ticks / n);
	printf("METRIC proto.max_record_bytes %zu B largest delta record\n", max_rec);
	printf("METRIC proto.encode_ns_per_point %.1f ns shared encoder: tick + delta record, per "
	       "point\n",
	       enc_s * 1e9 / ticks / n);
	printf("METRIC proto.decode_ns_per_point %.1f ns client: record walk + strand decode, per "
	       "point\n",
	       dec_s * 1e9 / ticks / n);
	ptp_encoder_destroy(enc);
	ptp_decoder_destroy(dec);
	ptp_decoder_destroy(late);
	pt_world_destroy(w);
	free(frames);
	free(records);
	pt_instance_def_fini(&def);
	return fails != 0;
}
