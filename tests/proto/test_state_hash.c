/* Protocol 1.4: the state hash a key record carries (PROTOCOL.md 6, 11.2). Bytes written
 * out by hand for the classic record; the compact one through the real encoder; and a
 * record of every minor up to 1.3 exactly the bytes it was before 1.4. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "ptp/compact.h"
#include "ptp/proto.h"
#include "ptp/strand.h"

#define HASH UINT64_C(0x0123456789abcdef)

/* test_msg.c's record: instance 9, key flag + largest = w, seq 5, p (0, 1.5, 0), identity
 * orientation, 2 bytes of data; and its 1.4 form: data_len 10, the hash's 8 bytes after
 * the data, least significant first. */
static const uint8_t rec13[] = {9, 0, 0, 0, 0, 0, 0, 0,    0xc1, 5,    0,   0,
                                0, 0, 0, 0, 0, 0, 0, 0xc0, 0x3f, 0,    0,   0,
                                0, 0, 0, 0, 0, 0, 0, 2,    0,    0xab, 0xcd};
static const uint8_t rec14[] = {9,    0,    0,    0,    0,    0,    0,    0,    0xc1, 5,
                                0,    0,    0,    0,    0,    0,    0,    0,    0,    0xc0,
                                0x3f, 0,    0,    0,    0,    0,    0,    0,    0,    0,
                                0,    10,   0,    0xab, 0xcd, 0xef, 0xcd, 0xab, 0x89, 0x67,
                                0x45, 0x23, 0x01};

/* A frame_batch of tick 60 holding `rec` at `minor`, encoded into buf; its size. */
static size_t batch(uint8_t minor, const uint8_t *rec, size_t len, uint8_t *buf, size_t cap)
{
	ptp_msg_t m;
	size_t need = 0;
	memset(&m, 0, sizeof m);
	m.type = PTP_FRAME_BATCH;
	m.minor = minor;
	m.u.frame_batch.tick = 60;
	m.u.frame_batch.count = 1;
	m.u.frame_batch.records = rec;
	m.u.frame_batch.records_len = len;
	assert_int_equal(ptp_msg_encode(&m, buf, cap, &need), PTP_OK);
	return need;
}

static void test_classic_bytes(void **state)
{
	uint8_t out[64], buf[128];
	size_t need = 0, off = 0, n;
	ptp_record_t r;
	ptp_msg_t d;
	(void)state;
	/* the server's way: the encoded record, the hash appended */
	assert_int_equal(ptp_record_add_hash(rec13, sizeof rec13, HASH, out, sizeof out, &need),
	                 PTP_OK);
	assert_int_equal(need, sizeof rec14);
	assert_memory_equal(out, rec14, sizeof rec14);
	assert_int_equal(ptp_record_add_hash(rec13, sizeof rec13, HASH, NULL, 0, &need),
	                 PTP_ENOSPACE);
	assert_int_equal(need, sizeof rec14);

	/* the encoder's way: has_hash */
	memset(&r, 0, sizeof r);
	r.id = 9, r.flags = PTP_RECORD_KEY, r.last_seq = 5, r.head_p[1] = 1.5f;
	r.head_q.largest = 3;
	r.data = rec13 + PTP_RECORD_MIN, r.data_len = 2;
	r.has_hash = 1, r.state_hash = HASH;
	assert_int_equal(ptp_record_encode(&r, out, sizeof out, &need), PTP_OK);
	assert_int_equal(need, sizeof rec14);
	assert_memory_equal(out, rec14, sizeof rec14);

	/* a 1.4 batch: the hash split off, the data as before */
	n = batch(4, rec14, sizeof rec14, buf, sizeof buf);
	assert_int_equal(buf[3], 4);
	assert_int_equal(ptp_msg_decode(buf, n, &d), PTP_OK);
	assert_int_equal(d.u.frame_batch.minor, 4);
	assert_int_equal(ptp_record_next(&d.u.frame_batch, &off, &r), 1);
	assert_true(r.has_hash && r.state_hash == HASH);
	assert_int_equal(r.data_len, 2);
	assert_memory_equal(r.data, rec13 + PTP_RECORD_MIN, 2);
	assert_int_equal(off, sizeof rec14);
}

/* Up to 1.3 nothing changes: the same record, the same bytes, no hash read. */
static void test_classic_before_1_4(void **state)
{
	uint8_t buf[128];
	(void)state;
	for (uint8_t minor = 0; minor < PTP_MINOR_HASH; minor++) {
		ptp_msg_t d;
		ptp_record_t r;
		size_t off = 0, n = batch(minor, rec13, sizeof rec13, buf, sizeof buf);
		assert_int_equal(n, 28 + sizeof rec13);
		assert_memory_equal(buf + 28, rec13, sizeof rec13);
		assert_int_equal(ptp_msg_decode(buf, n, &d), PTP_OK);
		assert_int_equal(ptp_record_next(&d.u.frame_batch, &off, &r), 1);
		assert_false(r.has_hash);
		assert_int_equal(r.data_len, 2);
	}
}

static void test_classic_errors(void **state)
{
	uint8_t rec[sizeof rec13], buf[128], out[64];
	ptp_record_t r;
	size_t need;
	(void)state;
	/* a 1.3 key record in a 1.4 batch: its 2 bytes of data cannot hold the hash */
	{
		ptp_msg_t m;
		memset(&m, 0, sizeof m);
		m.type = PTP_FRAME_BATCH, m.minor = 4, m.u.frame_batch.count = 1;
		m.u.frame_batch.records = rec13, m.u.frame_batch.records_len = sizeof rec13;
		assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &need), PTP_EINVAL);
	}
	memcpy(buf, (const uint8_t[]){'P', 'T', 1, 4, 0x82, 0, 18 + sizeof rec13, 0, 0, 0}, 10);
	memset(buf + 10, 0, 18);
	buf[26] = 1; /* count */
	memcpy(buf + 28, rec13, sizeof rec13);
	{
		ptp_msg_t d;
		assert_int_equal(ptp_msg_decode(buf, 28 + sizeof rec13, &d), PTP_ETRUNC);
		buf[3] = 3; /* the same bytes at 1.3 are what they always were */
		assert_int_equal(ptp_msg_decode(buf, 28 + sizeof rec13, &d), PTP_OK);
	}

	/* a record without the key flag has no hash in any minor */
	memcpy(rec, rec13, sizeof rec);
	rec[8] &= (uint8_t)~PTP_RECORD_KEY;
	assert_int_equal(ptp_record_add_hash(rec, sizeof rec, HASH, out, sizeof out, &need),
	                 PTP_EINVAL);
	{
		ptp_msg_t d;
		size_t off = 0, n = batch(4, rec, sizeof rec, buf, sizeof buf);
		assert_int_equal(ptp_msg_decode(buf, n, &d), PTP_OK);
		assert_int_equal(ptp_record_next(&d.u.frame_batch, &off, &r), 1);
		assert_false(r.has_hash);
		assert_int_equal(r.data_len, 2);
	}
	/* not one whole record */
	assert_int_equal(ptp_record_add_hash(rec13, sizeof rec13 - 1, HASH, out, sizeof out, &need),
	                 PTP_EINVAL);
	assert_int_equal(ptp_record_add_hash(rec13, 20, HASH, out, sizeof out, &need), PTP_EINVAL);
	assert_int_equal(ptp_record_add_hash(NULL, 0, HASH, out, sizeof out, &need), PTP_EINVAL);

	/* the encoder: a hash needs the key flag, and data_len + 8 must fit a u16 */
	memset(&r, 0, sizeof r);
	r.head_q.largest = 3, r.data = rec13, r.data_len = 2, r.has_hash = 1;
	assert_int_equal(ptp_record_encode(&r, out, sizeof out, &need), PTP_EINVAL);
	r.flags = PTP_RECORD_KEY, r.data_len = 65535 - 7;
	assert_int_equal(ptp_record_encode(&r, NULL, 0, &need), PTP_ELIMIT);
	r.data_len = 65535 - 8;
	assert_int_equal(ptp_record_encode(&r, NULL, 0, &need), PTP_ENOSPACE);
	assert_int_equal(need, PTP_RECORD_MIN + 65535);
}

/* One strand of 4 points, its encoders of both codings, ticked once (a keyframe). */
static const ptp_shape_t *shape1(void)
{
	static ptp_shape_t s;
	memset(&s, 0, sizeof s);
	s.strand_count = 1;
	s.strands[0] = (ptp_shape_strand_t){4, 0.05f, {0, 0, 0.1f}, {0, -1, 0}};
	return &s;
}

static const float head_p[3] = {0.01f, 1.5f, -0.02f}, head_q[4] = {0, 0, 0, 1};
static const float pts[12] = {0.01f, 1.5f,    0.08f, 0.012f, 1.45f,   0.081f,
                              0.015f, 1.401f, 0.083f, 0.02f, 1.352f, 0.085f};

/* A classic key record through 1.3 and 1.4 batches decodes to the same points. */
static void test_classic_decodes(void **state)
{
	ptp_encoder_params_t p = ptp_encoder_params_default();
	ptp_encoder_t *enc = ptp_encoder_create(shape1(), &p);
	uint8_t rec[256], rec4[256], buf[512];
	float a[12], b[12];
	size_t len, len4;
	(void)state;
	assert_non_null(enc);
	assert_int_equal(ptp_encoder_tick(enc, head_p, head_q, pts, 4), PTP_OK);
	assert_int_equal(ptp_encoder_record(enc, 1, 7, 3, rec, sizeof rec, &len), PTP_OK);
	assert_int_equal(ptp_record_add_hash(rec, len, HASH, rec4, sizeof rec4, &len4), PTP_OK);
	assert_int_equal(len4, len + 8);
	for (int v = 3; v <= 4; v++) {
		ptp_msg_t d;
		ptp_record_t r;
		size_t off = 0, n = batch((uint8_t)v, v == 4 ? rec4 : rec, v == 4 ? len4 : len, buf,
		                          sizeof buf);
		ptp_decoder_t *dec = ptp_decoder_create(shape1());
		assert_int_equal(ptp_msg_decode(buf, n, &d), PTP_OK);
		assert_int_equal(ptp_record_next(&d.u.frame_batch, &off, &r), 1);
		assert_int_equal(r.has_hash, v == 4);
		assert_int_equal(ptp_decoder_apply(dec, 60, &r, v == 4 ? b : a, 4), PTP_OK);
		ptp_decoder_destroy(dec);
	}
	assert_memory_equal(a, b, sizeof a);
	ptp_encoder_destroy(enc);
}

/* A frame_batch_c of one record at `minor` (0: as before 1.4). */
static size_t batch_c(uint8_t minor, const uint8_t *rec, size_t len, uint8_t *buf, size_t cap)
{
	ptp_batch_c_t b = {1, 0, 1, rec, len, minor};
	size_t need = 0;
	assert_int_equal(ptp_batch_c_encode(&b, buf, cap, &need), PTP_OK);
	return need;
}

static void test_compact(void **state)
{
	ptp_encoder_params_t p = ptp_encoder_params_default();
	ptp_encoder_t *enc = ptp_encoder_create_compact(shape1(), &p);
	uint8_t rec[256], rec4[256], buf[512], old[512];
	float a[12], b[12];
	size_t len, len4, n0, body0 = 0;
	(void)state;
	assert_non_null(enc);
	assert_int_equal(ptp_encoder_tick_c(enc, 3, head_p, head_q, pts, 4), PTP_OK);
	assert_int_equal(ptp_encoder_record_c(enc, 1, 7, rec, sizeof rec, &len), PTP_OK);
	assert_int_equal(ptp_record_c_add_hash(rec, len, HASH, rec4, sizeof rec4, &len4), PTP_OK);
	assert_int_equal(len4, len + 8); /* a body under 120 bytes: the varint keeps its size */
	assert_memory_equal(rec4 + len4 - 8, ((const uint8_t[]){0xef, 0xcd, 0xab, 0x89, 0x67, 0x45,
	                                                        0x23, 0x01}),
	                    8);
	/* minors 0, 2 and 3 write 1.2's batch, byte for byte */
	n0 = batch_c(0, rec, len, old, sizeof old);
	assert_int_equal(old[3], PTP_MINOR_COMPACT);
	for (uint8_t minor = 2; minor < PTP_MINOR_HASH; minor++) {
		assert_int_equal(batch_c(minor, rec, len, buf, sizeof buf), n0);
		assert_memory_equal(buf, old, n0);
	}
	for (int v = 2; v <= 4; v += 2) {
		ptp_batch_c_t d;
		ptp_record_c_t r;
		size_t off = 0, n = batch_c((uint8_t)v, v == 4 ? rec4 : rec, v == 4 ? len4 : len, buf,
		                            sizeof buf);
		ptp_decoder_t *dec = ptp_decoder_create(shape1());
		assert_int_equal(buf[3], v);
		assert_int_equal(ptp_batch_c_decode(buf, n, &d), PTP_OK);
		assert_int_equal(d.minor, v);
		assert_int_equal(ptp_record_c_next(&d, &off, &r), 1);
		assert_int_equal(r.has_hash, v == 4);
		assert_true(r.state_hash == (v == 4 ? HASH : 0));
		if (v == 2)
			body0 = r.body_len;
		else
			assert_int_equal(r.body_len, body0);
		assert_int_equal(ptp_decoder_apply_c(dec, 1, 1, &r, NULL, v == 4 ? b : a, 4), PTP_OK);
		ptp_decoder_destroy(dec);
	}
	assert_memory_equal(a, b, sizeof a);
	/* the 1.3 record in a 1.4 batch is refused (its body's end is no hash), and the 1.4
	 * record in a 1.2 batch is a record whose body has 8 bytes too many */
	{
		ptp_batch_c_t b4 = {1, 0, 1, rec, len, 4}, d;
		ptp_record_c_t r;
		size_t off = 0, need;
		uint8_t small[] = {0, 1, PTP_RECORD_KEY, 3, 1, 2, 3};
		b4.records = small, b4.records_len = sizeof small;
		assert_int_equal(ptp_batch_c_encode(&b4, buf, sizeof buf, &need), PTP_EINVAL);
		b4.minor = PTP_MINOR + 1; /* newer than this library */
		b4.records = rec, b4.records_len = len;
		assert_int_equal(ptp_batch_c_encode(&b4, buf, sizeof buf, &need), PTP_EINVAL);
		n0 = batch_c(2, rec4, len4, buf, sizeof buf);
		assert_int_equal(ptp_batch_c_decode(buf, n0, &d), PTP_OK);
		assert_int_equal(ptp_record_c_next(&d, &off, &r), 1);
		assert_false(r.has_hash);
		assert_int_equal(r.body_len, body0 + 8);
	}
	ptp_encoder_destroy(enc);
}

/* A body of 121 bytes (one-byte varint) grows to 129 (two bytes): the framing is
 * re-written, the id, flags and body kept. */
static void test_compact_varint_grows(void **state)
{
	uint8_t rec[3 + 1 + 1 + 121], out[3 + 1 + 2 + 121 + 8], buf[512];
	size_t need, off = 0, n;
	ptp_batch_c_t d;
	ptp_record_c_t r;
	(void)state;
	rec[0] = 1, rec[1] = 0x81, rec[2] = 0x01; /* id_hi 1, id_lo 129 */
	rec[3] = PTP_RECORD_KEY | 1 << 2;          /* key, step 2 */
	rec[4] = 121;
	for (int i = 0; i < 121; i++)
		rec[5 + i] = (uint8_t)i;
	assert_int_equal(ptp_record_c_add_hash(rec, sizeof rec, HASH, out, sizeof out, &need), PTP_OK);
	assert_int_equal(need, sizeof rec + 1 + 8);
	assert_memory_equal(out, rec, 4);
	assert_int_equal(out[4], 0x81);
	assert_int_equal(out[5], 0x01); /* 129 */
	assert_memory_equal(out + 6, rec + 5, 121);
	n = batch_c(4, out, need, buf, sizeof buf);
	assert_int_equal(ptp_batch_c_decode(buf, n, &d), PTP_OK);
	assert_int_equal(ptp_record_c_next(&d, &off, &r), 1);
	assert_true(r.id == (UINT64_C(1) << 32 | 129) && r.step == 2 && r.has_hash);
	assert_true(r.state_hash == HASH && r.body_len == 121);
	assert_memory_equal(r.body, rec + 5, 121);
	/* a non-key record, a cut record */
	rec[3] = 0;
	assert_int_equal(ptp_record_c_add_hash(rec, sizeof rec, HASH, out, sizeof out, &need),
	                 PTP_EINVAL);
	rec[3] = PTP_RECORD_KEY;
	assert_int_equal(ptp_record_c_add_hash(rec, sizeof rec - 1, HASH, out, sizeof out, &need),
	                 PTP_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_classic_bytes),   cmocka_unit_test(test_classic_before_1_4),
	    cmocka_unit_test(test_classic_errors),  cmocka_unit_test(test_classic_decodes),
	    cmocka_unit_test(test_compact),         cmocka_unit_test(test_compact_varint_grows),
	};
	return cmocka_run_group_tests_name("proto_state_hash", tests, NULL, NULL);
}
