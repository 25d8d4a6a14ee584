/* Golden vectors (proto/vectors), the same files tests/proto/js/vectors.test.mjs runs:
 * valid messages decode to their JSON and re-encode byte for byte, invalid ones fail with
 * the stored error, strand streams re-encode to the stored records and decode to the
 * stored points exactly, within max_error_m of the encoder's input. The vectors were
 * written by the JS module; this is the independent C side of the cross-check. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dirent.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptp/compact.h"
#include "ptp/proto.h"
#include "ptp/strand.h"
#include "vector_json.h"

static char vec_dir[4096];

/* vec_dir/sub/name.ext into out. */
static void vpath(char *out, size_t cap, const char *sub, const char *name, const char *ext)
{
	int n = snprintf(out, cap, "%s/%s/%s%s", vec_dir, sub, name, ext);
	if (n < 0 || (size_t)n >= cap)
		fail_msg("path too long: %s/%s", sub, name);
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;
	if (!f)
		fail_msg("cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static json_t *load_json(const char *path)
{
	json_error_t err;
	json_t *j = json_load_file(path, JSON_DECODE_ANY, &err);
	if (!j)
		fail_msg("%s:%d: %s", path, err.line, err.text);
	return j;
}

/* Sorted names in vec_dir/sub ending in ext (without it); returns the count. */
static int list(const char *sub, const char *ext, char out[][128], int cap)
{
	char path[4200];
	DIR *d;
	struct dirent *e;
	int n = 0;
	size_t el = strlen(ext);
	snprintf(path, sizeof path, "%s/%s", vec_dir, sub);
	d = opendir(path);
	if (!d)
		fail_msg("cannot list %s", path);
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		if (l > el && l - el < 128 && strcmp(e->d_name + l - el, ext) == 0 && n < cap) {
			memcpy(out[n], e->d_name, l - el);
			out[n][l - el] = 0;
			n++;
		}
	}
	closedir(d);
	qsort(out, (size_t)n, 128, (int (*)(const void *, const void *))strcmp);
	return n;
}

static char names[256][128];

static void test_valid(void **state)
{
	int n = list("valid", ".bin", names, 256);
	(void)state;
	assert_true(n >= 20);
	for (int i = 0; i < n; i++) {
		char path[4400 + 256];
		size_t len, need;
		uint8_t *bin, out[16384]; /* a 256-strand shape is 7.5 KB */
		json_t *want, *got;
		ptp_msg_t m;
		vj_arena_t arena = {0};
		vpath(path, sizeof path, "valid", names[i], ".bin");
		bin = read_file(path, &len);
		vpath(path, sizeof path, "valid", names[i], ".json");
		want = load_json(path);
		if (ptp_msg_decode(bin, len, &m) != PTP_OK)
			fail_msg("valid/%s: %s", names[i],
			         ptp_err_name(ptp_msg_decode(bin, len, &m)));
		got = vj_from_msg(&m);
		if (!vj_equal(got, want)) {
			char *g = json_dumps(got, JSON_COMPACT);
			fail_msg("valid/%s decodes to %s", names[i], g);
		}
		/* the stored JSON, not our decode, is what gets encoded */
		memset(&m, 0, sizeof m);
		if (!vj_to_msg(want, &m, &arena))
			fail_msg("valid/%s: JSON not understood", names[i]);
		assert_int_equal(ptp_msg_encode(&m, out, sizeof out, &need), PTP_OK);
		assert_int_equal(need, len);
		assert_memory_equal(out, bin, len);
		vj_arena_free(&arena);
		json_decref(got);
		json_decref(want);
		free(bin);
	}
}

static void test_invalid(void **state)
{
	int n = list("invalid", ".bin", names, 256);
	(void)state;
	assert_true(n >= 40);
	for (int i = 0; i < n; i++) {
		char path[4400 + 256];
		size_t len;
		uint8_t *bin;
		json_t *want;
		ptp_msg_t m;
		ptp_err_t e;
		vpath(path, sizeof path, "invalid", names[i], ".bin");
		bin = read_file(path, &len);
		vpath(path, sizeof path, "invalid", names[i], ".json");
		want = load_json(path);
		/* "coding": "compact": a frame_batch_c, for the compact batch decoder (PROTOCOL.md
		 * 11.1; ptp_msg_decode knows no 0x87) */
		const char *coding = json_string_value(json_object_get(want, "coding"));
		if (coding && strcmp(coding, "compact") == 0) {
			ptp_batch_c_t b;
			e = ptp_batch_c_decode(bin, len, &b);
		} else {
			e = ptp_msg_decode(bin, len, &m);
		}
		if (strcmp(ptp_err_name(e), json_string_value(json_object_get(want, "error"))) != 0)
			fail_msg("invalid/%s: C says %s, vector says %s", names[i], ptp_err_name(e),
			         json_string_value(json_object_get(want, "error")));
		json_decref(want);
		free(bin);
	}
}

/* Parses hex record bytes through a frame batch, as a client receives them. */
static void record_from_hex(const char *hex, uint8_t *batch, size_t cap, ptp_record_t *r)
{
	ptp_msg_t m;
	size_t off = 0, len = strlen(hex) / 2, need;
	uint8_t rec[65536 + PTP_RECORD_MIN];
	assert_true(len <= sizeof rec && vj_hex(hex, rec, len));
	memset(&m, 0, sizeof m);
	m.type = PTP_FRAME_BATCH;
	/* a record's step (flags bits 1..5) exists from 1.2 on; the stream vectors hold
	 * records without a state hash (which 1.4 key records carry: valid/frame_batch_hash) */
	m.minor = 3;
	m.u.frame_batch.count = 1;
	m.u.frame_batch.records = rec;
	m.u.frame_batch.records_len = len;
	assert_int_equal(ptp_msg_encode(&m, batch, cap, &need), PTP_OK);
	assert_int_equal(ptp_msg_decode(batch, need, &m), PTP_OK);
	assert_int_equal(ptp_record_next(&m.u.frame_batch, &off, r), 1);
}

static void run_stream(const char *name)
{
	char path[4400 + 256];
	json_t *v, *steps, *step, *params;
	ptp_shape_t shape;
	ptp_encoder_t *enc = NULL;
	ptp_decoder_t *dec;
	float input[3 * PTP_MAX_STRANDS * PTP_MAX_POINTS],
	    out[3 * PTP_MAX_STRANDS * PTP_MAX_POINTS];
	double max_err = 0;
	size_t np, idx;
	vpath(path, sizeof path, "stream", name, ".json");
	v = load_json(path);
	assert_true(vj_shape(json_object_get(v, "shape"), &shape));
	np = (size_t)ptp_shape_point_count(&shape);
	params = json_object_get(v, "params");
	if (params) {
		ptp_encoder_params_t p = ptp_encoder_params_default();
		p.max_error_m = (float)json_number_value(json_object_get(params, "max_error_m"));
		p.keyframe_interval =
		    (int)json_integer_value(json_object_get(params, "keyframe_interval"));
		max_err = p.max_error_m;
		enc = ptp_encoder_create(&shape, &p);
		assert_non_null(enc);
	}
	dec = ptp_decoder_create(&shape);
	/* a rate stream's records say its step; the encoder knows none (the server sets it) */
	json_int_t rate_step = json_integer_value(json_object_get(v, "step"));
	steps = json_object_get(v, "steps");
	json_array_foreach(steps, idx, step)
	{
		uint64_t tick =
		    strtoull(json_string_value(json_object_get(step, "tick")), NULL, 10);
		json_t *in = json_object_get(step, "input"), *hex = json_object_get(step, "record");
		static uint8_t batch[65536 + 64], mine[65536 + PTP_RECORD_MIN];
		ptp_record_t r;
		ptp_err_t e;
		const char *expect;
		if (in) {
			float hp[3], hq[4];
			assert_true(vj_floats(json_object_get(in, "head_p"), hp, 3));
			assert_true(vj_floats(json_object_get(in, "head_q"), hq, 4));
			assert_true(vj_points(json_object_get(in, "points"), input, np));
			assert_int_equal(ptp_encoder_tick(enc, hp, hq, input, np), PTP_OK);
		}
		if (!hex)
			continue;
		if (enc) {
			size_t need;
			static char mine_hex[2 * (65536 + PTP_RECORD_MIN) + 1];
			int key = json_is_true(json_object_get(step, "key"));
			assert_int_equal(ptp_encoder_record(enc, key, 1, (uint32_t)tick, mine,
			                                    sizeof mine, &need),
			                 PTP_OK);
			if (rate_step > 1)
				mine[8] |= (uint8_t)((rate_step - 1) << 1);
			vj_to_hex(mine, need, mine_hex);
			if (strcmp(mine_hex, json_string_value(hex)) != 0)
				fail_msg("stream/%s tick %" PRIu64 ": C encodes %s", name, tick,
				         mine_hex);
		}
		record_from_hex(json_string_value(hex), batch, sizeof batch, &r);
		e = ptp_decoder_apply(dec, tick, &r, out, np);
		expect = json_string_value(json_object_get(step, "expect"));
		if (strcmp(ptp_err_name(e), expect) != 0)
			fail_msg("stream/%s tick %" PRIu64 ": C says %s, vector says %s", name,
			         tick, ptp_err_name(e), expect);
		if (e != PTP_OK)
			continue;
		{
			float want[3 * PTP_MAX_STRANDS * PTP_MAX_POINTS];
			assert_true(vj_points(json_object_get(step, "decoded"), want, np));
			if (memcmp(want, out, sizeof(float) * 3 * np) != 0)
				fail_msg("stream/%s tick %" PRIu64 ": decoded points differ", name,
				         tick);
		}
		for (size_t i = 0; enc && i < np; i++) {
			double dx = out[3 * i] - input[3 * i],
			       dy = out[3 * i + 1] - input[3 * i + 1],
			       dz = out[3 * i + 2] - input[3 * i + 2];
			if (sqrt(dx * dx + dy * dy + dz * dz) > max_err)
				fail_msg("stream/%s tick %" PRIu64 " point %zu: %g m off", name,
				         tick, i, sqrt(dx * dx + dy * dy + dz * dz));
		}
	}
	ptp_encoder_destroy(enc);
	ptp_decoder_destroy(dec);
	json_decref(v);
}

static void test_streams(void **state)
{
	int n = list("stream", ".json", names, 256);
	(void)state;
	assert_true(n >= 10);
	for (int i = 0; i < n; i++)
		run_stream(names[i]);
}

int main(void)
{
	const char *root = getenv("PT_ROOT");
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid),
	    cmocka_unit_test(test_invalid),
	    cmocka_unit_test(test_streams),
	};
	snprintf(vec_dir, sizeof vec_dir, "%s/proto/vectors", root ? root : ".");
	return cmocka_run_group_tests_name("proto_vectors", tests, NULL, NULL);
}
