/* test_compact.c's vector part: proto/vectors/compact/NAME.json, one per stream of
 * compact_gen.h. Layout (proto/vectors/README.md "compact/"):
 *
 *   {"coding": "compact", "note", "shape", "params": {max_error_m, keyframe_interval},
 *    "tick_hz", "welcome_tick", "welcome_time_us", "step",
 *    "steps": [{"tick", "input": {"last_seq", "head_p", "head_q", "points"}?,
 *               "key": bool, "corrupt": name?, "message": hex?, "time_us", "expect",
 *               "decoded": [[x,y,z]...]?, "head": {"last_seq", "head_p", "largest", "c"}?}]}
 *
 * A step with "input" feeds the encoder once; one with "message" is a frame_batch_c the
 * connection receives (its clock advances by it), holding one record of instance
 * 2^32 + 1: the delta record, the keyframe record ("key"), or a hand-corrupted delta
 * ("corrupt": padding, cut, extra, largest, far, far_ok). Without "message" the batch was
 * lost. */
#ifndef PTP_TEST_COMPACT_VECTORS_H
#define PTP_TEST_COMPACT_VECTORS_H

enum { CV_WELCOME_TICK = 1000, CV_HZ = 60 };
static const int64_t CV_WELCOME_TIME = 1700000000000000;
static const uint64_t CV_ID = ((uint64_t)1 << 32) | 1;

static void cv_hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	out[2 * n] = 0;
}

static json_t *cv_floats(const float *f, int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_real(f[i]));
	return a;
}

static json_t *cv_points(const float *f, int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, cv_floats(f + 3 * i, 3));
	return a;
}

static json_t *cv_u64(uint64_t v)
{
	char s[32];
	snprintf(s, sizeof s, "%" PRIu64, v);
	return json_string(s);
}

static void cv_load_floats(const json_t *a, float *out, int n)
{
	assert_int_equal(json_array_size(a), (size_t)n);
	for (int i = 0; i < n; i++)
		out[i] = (float)json_real_value(json_array_get(a, (size_t)i));
}

/* A step's "input" into t (the send script stays the stream's). */
static void cv_load(const json_t *in, cg_tick_t *t, int n)
{
	const json_t *pts = json_object_get(in, "points");
	t->seq = (uint32_t)json_integer_value(json_object_get(in, "last_seq"));
	cv_load_floats(json_object_get(in, "head_p"), t->head_p, 3);
	cv_load_floats(json_object_get(in, "head_q"), t->head_q, 4);
	assert_int_equal(json_array_size(pts), (size_t)n);
	for (int i = 0; i < n; i++)
		cv_load_floats(json_array_get(pts, (size_t)i), t->pts + 3 * i, 3);
}

/* Copies the record and spoils it as `how` says; returns its new length. */
static size_t cv_corrupt(cg_send_t how, const uint8_t *rec, size_t len, uint8_t *out)
{
	size_t body = 4; /* id_hi 1 byte, id_lo 1, flags, body_len 1 (these records are short) */
	memcpy(out, rec, len);
	assert_true(out[3] == len - body);
	switch (how) {
	case CG_PADDING:
		out[len - 1] |= 0x80; /* the stream's last bit: padding, if the body has any */
		return len;
	case CG_CUT:
		out[3]--;
		return len - 1;
	case CG_EXTRA:
		out[3]++;
		out[len] = 0;
		return len + 1;
	case CG_LARGEST:
		out[2] ^= 0x40;
		return len;
	case CG_FAR:
	case CG_FAR_OK: { /* the absolute head block: seq, then p_x, p_y, p_z (32 bits each) */
		uint32_t px = (1u << 30) + (how == CG_FAR), py = 1u << 30;
		assert_true(out[2] & 2);
		for (int k = 0; k < 4; k++) {
			out[body + 4 + k] = (uint8_t)(px >> (8 * k));
			if (how == CG_FAR_OK)
				out[body + 8 + k] = (uint8_t)(py >> (8 * k));
		}
		return len;
	}
	default:
		return len;
	}
}

static ptp_err_t cv_intent(cg_send_t how)
{
	switch (how) {
	case CG_PADDING:
		return PTP_EFLAGS;
	case CG_CUT:
		return PTP_ETRUNC;
	case CG_EXTRA:
		return PTP_ETRAILING;
	case CG_LARGEST:
	case CG_FAR:
		return PTP_ERANGE;
	default:
		return PTP_OK;
	}
}

static const char *cv_corrupt_name(cg_send_t how)
{
	static const char *const names[] = {"",      "",      "",    "padding", "cut",
	                                    "extra", "largest", "far", "far_ok"};
	return names[how];
}

/* One received message: decode, clock, apply; fills the step's expectation (writing) or
 * checks it (reading). */
static void cv_receive(json_t *step, int writing, const uint8_t *msg, size_t mlen,
                       ptp_batch_clock_t *client, ptp_decoder_t *d, int rate_step, int n,
                       const float *input, float max_err, uint64_t want_tick)
{
	ptp_batch_c_t b;
	ptp_record_c_t r;
	ptp_head_c_t head;
	size_t off = 0;
	float out[3 * CG_MAX_PTS];
	ptp_err_t e;
	assert_int_equal(ptp_batch_c_decode(msg, mlen, &b), PTP_OK);
	assert_int_equal(ptp_batch_clock_advance(client, &b), PTP_OK);
	assert_int_equal(client->tick, want_tick);
	if (writing) {
		char t[32];
		snprintf(t, sizeof t, "%" PRId64, client->time_us);
		json_object_set_new(step, "time_us", json_string(t));
	} else {
		char t[32];
		snprintf(t, sizeof t, "%" PRId64, client->time_us);
		assert_string_equal(t, json_string_value(json_object_get(step, "time_us")));
	}
	assert_true(ptp_record_c_next(&b, &off, &r));
	assert_int_equal(r.id, CV_ID);
	assert_int_equal(r.step, rate_step); /* the record says the stream's step */
	e = ptp_decoder_apply_c(d, client->tick, r.step, &r, &head, out, (size_t)n);
	if (writing) {
		json_object_set_new(step, "expect", json_string(ptp_err_name(e)));
	} else {
		assert_string_equal(ptp_err_name(e), json_string_value(json_object_get(step, "expect")));
	}
	if (e != PTP_OK)
		return;
	for (int i = 0; i < n; i++) {
		double dx = out[3 * i] - input[3 * i], dy = out[3 * i + 1] - input[3 * i + 1],
		       dz = out[3 * i + 2] - input[3 * i + 2];
		assert_true(sqrt(dx * dx + dy * dy + dz * dz) <= max_err);
	}
	if (writing) {
		json_t *h = json_object(), *c = json_array();
		json_object_set_new(step, "decoded", cv_points(out, n));
		json_object_set_new(h, "last_seq", json_integer(head.last_seq));
		json_object_set_new(h, "head_p",
		                    json_pack("[fff]", head.head_p[0], head.head_p[1], head.head_p[2]));
		json_object_set_new(h, "largest", json_integer(head.head_q.largest));
		for (int i = 0; i < 3; i++)
			json_array_append_new(c, json_integer(head.head_q.c[i]));
		json_object_set_new(h, "c", c);
		json_object_set_new(step, "head", h);
	} else {
		json_t *dec = json_object_get(step, "decoded"), *h = json_object_get(step, "head");
		for (int i = 0; i < 3 * n; i++)
			assert_true(out[i] == (float)json_real_value(
			                          json_array_get(json_array_get(dec, (size_t)i / 3),
			                                         (size_t)i % 3)));
		assert_int_equal(head.last_seq, json_integer_value(json_object_get(h, "last_seq")));
		for (int i = 0; i < 3; i++) {
			assert_true(head.head_p[i] ==
			            json_real_value(json_array_get(json_object_get(h, "head_p"), (size_t)i)));
			assert_int_equal(head.head_q.c[i],
			                 json_integer_value(json_array_get(json_object_get(h, "c"), (size_t)i)));
		}
		assert_int_equal(head.head_q.largest, json_integer_value(json_object_get(h, "largest")));
	}
}

/* Runs stream c: writing builds the JSON (expectations from the decoder, each checked
 * against the stream's intent); reading checks v against the encoder and decoder. */
static json_t *cv_run(const cg_stream_t *c, const json_t *v)
{
	int writing = v == NULL, n = ptp_shape_point_count(&c->shape), si = 0;
	ptp_encoder_t *e = ptp_encoder_create_compact(&c->shape, &c->params);
	ptp_decoder_t *d = ptp_decoder_create(&c->shape);
	ptp_batch_clock_t server = {CV_WELCOME_TICK, CV_WELCOME_TIME, CV_HZ}, client = server;
	json_t *out = json_object(), *steps = json_array();
	const json_t *vsteps = v ? json_object_get(v, "steps") : NULL;
	assert_non_null(e);
	for (int i = 0; i < c->ticks; i++) {
		static cg_tick_t stored;
		const cg_tick_t *t = &c->t[i];
		if (!writing) {
			/* the encoder gets the stored inputs: regenerating them would make the check
			 * depend on how this build rounds the synthetic motion */
			const json_t *in = json_object_get(json_array_get(vsteps, (size_t)si), "input");
			assert_non_null(in);
			stored = *t;
			cv_load(in, &stored, n);
			t = &stored;
		}
		uint64_t tick = CV_WELCOME_TICK + (uint64_t)c->step * (uint64_t)(i + 1);
		int64_t time_us = CV_WELCOME_TIME + (int64_t)((tick - CV_WELCOME_TICK) * 1000000 / CV_HZ);
		uint8_t rec[4096], bad[4096], msg[4200];
		size_t len, mlen;
		int passes = t->send >= CG_PADDING ? 2 : 1;
		assert_int_equal(ptp_encoder_tick_c(e, t->seq, t->head_p, t->head_q, t->pts, (size_t)n),
		                 PTP_OK);
		for (int pass = 0; pass < passes; pass++) {
			json_t *step = writing ? json_object() : (json_t *)json_array_get(vsteps, (size_t)si);
			cg_send_t how = pass == 0 ? t->send : CG_DELTA;
			ptp_batch_c_t b = {0, 0, 1, rec, 0, 0};
			assert_non_null(step);
			si++;
			if (writing) {
				json_object_set_new(step, "tick", cv_u64(tick));
				if (pass == 0) {
					json_t *in = json_object();
					json_object_set_new(in, "last_seq", json_integer(t->seq));
					json_object_set_new(in, "head_p", cv_floats(t->head_p, 3));
					json_object_set_new(in, "head_q", cv_floats(t->head_q, 4));
					json_object_set_new(in, "points", cv_points(t->pts, n));
					json_object_set_new(step, "input", in);
				}
				json_object_set_new(step, "key", json_boolean(how == CG_KEY));
				if (how >= CG_PADDING)
					json_object_set_new(step, "corrupt", json_string(cv_corrupt_name(how)));
				json_array_append_new(steps, step);
			}
			if (how == CG_LOST)
				continue;
			assert_int_equal(ptp_encoder_record_c(e, how == CG_KEY, CV_ID, rec, sizeof rec, &len),
			                 PTP_OK);
			/* the stream's step in the record, as the server sends it (PROTOCOL.md 11.2) */
			assert_int_equal(ptp_record_c_set_step(rec, len, (unsigned)c->step), PTP_OK);
			b.records_len = len;
			if (how >= CG_PADDING) {
				b.records_len = cv_corrupt(how, rec, len, bad);
				b.records = bad;
			}
			assert_int_equal(ptp_batch_clock_delta(&server, tick, time_us, &b.tick_gap, &b.time_dev),
			                 PTP_OK);
			server.tick = tick, server.time_us = time_us;
			assert_int_equal(ptp_batch_c_encode(&b, msg, sizeof msg, &mlen), PTP_OK);
			if (writing) {
				char hex[2 * sizeof msg + 1];
				cv_hex(msg, mlen, hex);
				json_object_set_new(step, "message", json_string(hex));
			} else {
				char hex[2 * sizeof msg + 1];
				cv_hex(msg, mlen, hex);
				assert_string_equal(hex, json_string_value(json_object_get(step, "message")));
			}
			/* far_ok's points are where its head is, not the input's */
			cv_receive(step, writing, msg, mlen, &client, d, c->step, n, t->pts,
			           how == CG_FAR_OK ? INFINITY : c->params.max_error_m, tick);
			if (writing) { /* the stream's intent, independent of the decoder */
				const char *got = json_string_value(json_object_get(step, "expect"));
				ptp_err_t want = cv_intent(how);
				if (how == CG_DELTA && i > 0 && c->t[i - 1].send == CG_LOST)
					want = PTP_ENOKEY;
				if (how == CG_DELTA && i == 0)
					want = PTP_OK; /* the first tick's delta record is a keyframe */
				assert_string_equal(got, ptp_err_name(want));
			}
		}
	}
	if (!writing)
		assert_int_equal(si, (int)json_array_size(vsteps));
	json_object_set_new(out, "coding", json_string("compact"));
	json_object_set_new(out, "note", json_string(c->note));
	{
		json_t *shape = json_array();
		for (int s = 0; s < c->shape.strand_count; s++) {
			const ptp_shape_strand_t *st = &c->shape.strands[s];
			json_t *o = json_object();
			json_object_set_new(o, "points", json_integer(st->points));
			json_object_set_new(o, "segment_length", json_real(st->segment_length));
			json_object_set_new(o, "anchor", cv_floats(st->anchor, 3));
			json_object_set_new(o, "direction", cv_floats(st->direction, 3));
			json_array_append_new(shape, o);
		}
		json_object_set_new(out, "shape", shape);
	}
	json_object_set_new(out, "params", json_pack("{s:f,s:i}", "max_error_m",
	                                             (double)c->params.max_error_m,
	                                             "keyframe_interval", c->params.keyframe_interval));
	json_object_set_new(out, "tick_hz", json_integer(CV_HZ));
	json_object_set_new(out, "welcome_tick", cv_u64(CV_WELCOME_TICK));
	json_object_set_new(out, "welcome_time_us", cv_u64((uint64_t)CV_WELCOME_TIME));
	json_object_set_new(out, "step", json_integer(c->step));
	json_object_set_new(out, "steps", steps);
	ptp_encoder_destroy(e);
	ptp_decoder_destroy(d);
	return out;
}

/* Writes v like proto/vectors/generate.mjs formats its files: objects key by key, arrays
 * holding objects element by element, every other array on one line. */
static void cv_format(FILE *f, json_t *v, int depth)
{
	size_t i;
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		int first = 1;
		fputs("{\n", f);
		json_object_foreach(v, k, x)
		{
			fprintf(f, "%s%*s\"%s\": ", first ? "" : ",\n", depth + 1, "", k);
			cv_format(f, x, depth + 1);
			first = 0;
		}
		fprintf(f, "\n%*s}", depth, "");
	} else if (json_is_array(v) && json_array_size(v) && json_is_object(json_array_get(v, 0))) {
		fputs("[\n", f);
		for (i = 0; i < json_array_size(v); i++) {
			fprintf(f, "%s%*s", i ? ",\n" : "", depth + 1, "");
			cv_format(f, json_array_get(v, i), depth + 1);
		}
		fprintf(f, "\n%*s]", depth, "");
	} else {
		char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
		fputs(t ? t : "null", f);
		free(t);
	}
}

static void test_vectors(void **state)
{
	static cg_stream_t streams[8];
	const char *root = getenv("PT_ROOT"), *write = getenv("PTP_WRITE_VECTORS");
	int n = cg_streams(streams, 8);
	(void)state;
	for (int i = 0; i < n; i++) {
		char path[4096];
		json_t *got;
		snprintf(path, sizeof path, "%s/proto/vectors/compact/%s.json", root ? root : ".",
		         streams[i].name);
		if (write && *write == '1') {
			got = cv_run(&streams[i], NULL);
			FILE *f = fopen(path, "w");
			assert_non_null(f);
			cv_format(f, got, 0);
			fputs("\n", f);
			assert_int_equal(fclose(f), 0);
		} else {
			json_error_t err;
			json_t *v = json_load_file(path, 0, &err);
			if (!v)
				fail_msg("%s: %s", path, err.text);
			got = cv_run(&streams[i], v);
			json_decref(v);
		}
		json_decref(got);
	}
}

#endif
