/* Messages: bytes written out by hand from PROTOCOL.md (not from the encoder), every
 * decoder rejection, and the buffer conventions of the encoders. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "ptp/proto.h"

/* Encodes m and checks it is exactly `want`; then decodes `want` into *out. */
static void expect_bytes(const ptp_msg_t *m, const uint8_t *want, size_t n, ptp_msg_t *out)
{
	uint8_t buf[256];
	size_t need = 0;
	assert_int_equal(ptp_msg_encode(m, buf, sizeof buf, &need), PTP_OK);
	assert_int_equal(need, n);
	assert_memory_equal(buf, want, n);
	assert_int_equal(ptp_msg_decode(want, n, out), PTP_OK);
	assert_int_equal(out->type, m->type);
}

static ptp_str_t str(const char *s)
{
	ptp_str_t v = {s, strlen(s)};
	return v;
}

static void test_ping_bytes(void **state)
{
	static const uint8_t want[] = {'P', 'T',  1,    0,    0x07, 0,    8,    0,    0,
	                               0,   0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};
	ptp_msg_t m, d;
	(void)state;
	memset(&m, 0, sizeof m);
	m.type = PTP_PING;
	m.u.ping.client_time_us = 0x0102030405060708;
	expect_bytes(&m, want, sizeof want, &d);
	assert_true(d.u.ping.client_time_us == 0x0102030405060708);
}

static void test_hello_bytes(void **state)
{
	static const uint8_t want[] = {'P', 'T', 1, 0, 0x01, 0, 6, 0, 0, 0, 1, 0, 3, 'w', 'e', 'b'};
	ptp_msg_t m, d;
	(void)state;
	memset(&m, 0, sizeof m);
	m.type = PTP_HELLO;
	m.u.hello.major = 1;
	m.u.hello.client_name = str("web");
	expect_bytes(&m, want, sizeof want, &d);
	assert_int_equal(d.u.hello.client_name.len, 3);
	assert_memory_equal(d.u.hello.client_name.ptr, "web", 3);
	/* borrowed: the name points into the input */
	assert_ptr_equal(d.u.hello.client_name.ptr, (const char *)want + 13);
}

static void test_error_bytes(void **state)
{
	static const uint8_t want[] = {'P',  'T', 1, 0, 0x85, 0, 16, 0, 0, 0, 4,   0,   1,
	                               0x05, 0,   0, 0, 0,    0, 0,  0, 0, 3, 'b', 'i', 'g'};
	ptp_msg_t m, d;
	(void)state;
	memset(&m, 0, sizeof m);
	m.type = PTP_ERROR;
	m.u.error.code = PTP_CODE_TOO_LARGE;
	m.u.error.flags = PTP_ERROR_CLOSING;
	m.u.error.about_type = PTP_HEAD_POSE;
	m.u.error.text = str("big");
	expect_bytes(&m, want, sizeof want, &d);
	assert_int_equal(d.u.error.code, 4);
	assert_int_equal(d.u.error.flags, PTP_ERROR_CLOSING);
}

/* 1.5f = 0x3fc00000, 1.0f = 0x3f800000, -2.0f = 0xc0000000 */
static const uint8_t pose_bytes[] = {
    'P',  'T',  1,    0,    0x05, 0,    61,   0,    0, 0,       /* header, 49 + 12 bytes */
    7,    0,    0,    0,    0,    0,    0,    0,                /* instance 7 */
    0xff, 0xff, 0xff, 0xff,                                     /* seq 2^32 - 1 */
    0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,             /* client time -2 us */
    0x01,                                                       /* has linear velocity */
    0,    0,    0,    0,    0,    0,    0xc0, 0x3f, 0, 0, 0, 0, /* p = (0, 1.5, 0) */
    0,    0,    0,    0,    0,    0,    0,    0,    0, 0, 0, 0, 0, 0, 0x80, 0x3f, /* q = identity */
    0,    0,    0,    0xc0, 0,    0,    0,    0,    0, 0, 0, 0, /* v = (-2, 0, 0) */
};

static void test_head_pose_bytes(void **state)
{
	ptp_msg_t m, d;
	(void)state;
	memset(&m, 0, sizeof m);
	m.type = PTP_HEAD_POSE;
	m.u.head_pose.instance_id = 7;
	m.u.head_pose.seq = 0xffffffffu;
	m.u.head_pose.client_time_us = -2;
	m.u.head_pose.flags = PTP_POSE_HAS_VELOCITY;
	m.u.head_pose.p[1] = 1.5f;
	m.u.head_pose.q[3] = 1.0f;
	m.u.head_pose.v[0] = -2.0f;
	m.u.head_pose.w[2] = 9.0f; /* not flagged: not sent, decoded as zero */
	expect_bytes(&m, pose_bytes, sizeof pose_bytes, &d);
	assert_true(d.u.head_pose.client_time_us == -2);
	assert_true(d.u.head_pose.v[0] == -2.0f);
	assert_true(d.u.head_pose.w[2] == 0.0f);
}

/* 1.2: a head pose with one bone (chest, id 2) at (0, 1.25, 0), identity; written out by
 * hand from PROTOCOL.md section 5 (flags bit 2, u8 count, u8 id, f32[3] p, f32[4] q). */
static const uint8_t pose_bones_bytes[] = {
    'P', 'T', 1, 2, 0x05, 0, 79, 0, 0, 0,                 /* header minor 2, 49 + 1 + 29 */
    7,   0,   0, 0, 0,    0, 0,  0,                       /* instance 7 */
    1,   0,   0, 0,                                       /* seq 1 */
    0,   0,   0, 0, 0,    0, 0,  0,                       /* client time 0 */
    4,                                                    /* flags: bones */
    0,   0,   0, 0, 0,    0, 0xc0, 0x3f, 0, 0, 0, 0,      /* p = (0, 1.5, 0) */
    0,   0,   0, 0, 0,    0, 0,  0,    0, 0, 0, 0, 0, 0, 0x80, 0x3f, /* q = identity */
    1,                                                    /* one bone */
    2,                                                    /* chest */
    0,   0,   0, 0, 0,    0, 0xa0, 0x3f, 0, 0, 0, 0,      /* p = (0, 1.25, 0) */
    0,   0,   0, 0, 0,    0, 0,  0,    0, 0, 0, 0, 0, 0, 0x80, 0x3f, /* q = identity */
};

static void test_head_pose_bones_bytes(void **state)
{
	ptp_msg_t m, d;
	uint8_t buf[128];
	size_t n;
	(void)state;
	memset(&m, 0, sizeof m);
	m.type = PTP_HEAD_POSE;
	m.minor = 2;
	m.u.head_pose.instance_id = 7;
	m.u.head_pose.seq = 1;
	m.u.head_pose.flags = PTP_POSE_HAS_BONES;
	m.u.head_pose.p[1] = 1.5f;
	m.u.head_pose.q[3] = 1.0f;
	m.u.head_pose.bone_count = 1;
	m.u.head_pose.bones[0].bone = 2;
	m.u.head_pose.bones[0].p[1] = 1.25f;
	m.u.head_pose.bones[0].q[3] = 1.0f;
	expect_bytes(&m, pose_bones_bytes, sizeof pose_bones_bytes, &d);
	assert_int_equal(d.u.head_pose.bone_count, 1);
	assert_int_equal(d.u.head_pose.bones[0].bone, 2);
	assert_true(d.u.head_pose.bones[0].p[1] == 1.25f);
	assert_string_equal(ptp_bone_name(d.u.head_pose.bones[0].bone), "chest");
	assert_int_equal(ptp_bone_from_name("right_little_distal"), 53);
	assert_null(ptp_bone_name(54));
	assert_int_equal(ptp_bone_from_name("head"), -1);
	/* the bones are a 1.2 field: a 1.0 / 1.1 message cannot carry them */
	m.minor = 1;
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &n), PTP_EFLAGS);
	m.minor = 2;
	m.u.head_pose.bone_count = 0; /* flagged but empty */
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &n), PTP_ERANGE);
	m.u.head_pose.bone_count = PTP_MAX_POSE_BONES + 1;
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &n), PTP_ELIMIT);
	/* a decoder of a newer minor (3) keeps the bones it knows and skips what follows */
	uint8_t b[sizeof pose_bones_bytes + 2];
	memcpy(b, pose_bones_bytes, sizeof pose_bones_bytes);
	b[3] = PTP_MINOR + 1;
	b[6] = 81;
	b[sizeof pose_bones_bytes] = 0xaa, b[sizeof pose_bones_bytes + 1] = 0xbb;
	b[30] |= 0x80; /* an unknown flag of that minor */
	assert_int_equal(ptp_msg_decode(b, sizeof b, &d), PTP_OK);
	assert_int_equal(d.u.head_pose.bone_count, 1);
	assert_true(d.u.head_pose.bones[0].p[1] == 1.25f);
}

static void test_subscribe_bytes(void **state)
{
	static const uint8_t want[] = {
	    'P',  'T',  1,    0,    0x03, 0,    21,   0,   0, 0, 2, 'r',
	    '1',  2,    0,    1,    0,    0,    0,    2,   0, 0, 0, /* id: generation 2, slot 1 */
	    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	ptp_msg_t m, d;
	(void)state;
	memset(&m, 0, sizeof m);
	m.type = PTP_SUBSCRIBE;
	m.u.subscribe.room = str("r1");
	m.u.subscribe.count = 2;
	m.u.subscribe.ids[0] = (2ull << 32) | 1;
	m.u.subscribe.ids[1] = UINT64_MAX;
	expect_bytes(&m, want, sizeof want, &d);
	assert_int_equal(d.u.subscribe.count, 2);
	assert_true(d.u.subscribe.ids[1] == UINT64_MAX);
}

/* A record for instance 9: key flag + largest = w (3 << 6), seq 5, p (0, 1.5, 0),
 * identity orientation, 2 bytes of data. */
static const uint8_t record_bytes[] = {9, 0, 0, 0, 0, 0, 0, 0,    0xc1, 5,    0,   0,
                                       0, 0, 0, 0, 0, 0, 0, 0xc0, 0x3f, 0,    0,   0,
                                       0, 0, 0, 0, 0, 0, 0, 2,    0,    0xab, 0xcd};

static void test_frame_batch_bytes(void **state)
{
	uint8_t want[64] = {'P',  'T',  1,    0,  0x82, 0, 18 + sizeof record_bytes,
	                    0,    0,    0,    60, 0,    0, 0,
	                    0,    0,    0,    0, /* tick 60 */
	                    0x40, 0x42, 0x0f, 0,  0,    0, 0,
	                    0, /* 1 s in us */
	                    1,    0};
	uint8_t rec[64];
	size_t n = 28 + sizeof record_bytes, need, off = 0;
	float q[4] = {0, 0, 0, -1}; /* -identity: same rotation, packs as identity */
	ptp_record_t r;
	ptp_msg_t m, d;
	(void)state;
	memcpy(want + 28, record_bytes, sizeof record_bytes);
	memset(&r, 0, sizeof r);
	r.id = 9;
	r.flags = PTP_RECORD_KEY;
	r.last_seq = 5;
	r.head_p[1] = 1.5f;
	assert_int_equal(ptp_quat16_pack(q, &r.head_q), PTP_OK);
	r.data = record_bytes + PTP_RECORD_MIN;
	r.data_len = 2;
	assert_int_equal(ptp_record_encode(&r, rec, sizeof rec, &need), PTP_OK);
	assert_int_equal(need, sizeof record_bytes);
	assert_memory_equal(rec, record_bytes, sizeof record_bytes);

	memset(&m, 0, sizeof m);
	m.type = PTP_FRAME_BATCH;
	m.u.frame_batch.tick = 60;
	m.u.frame_batch.server_time_us = 1000000;
	m.u.frame_batch.count = 1;
	m.u.frame_batch.records = rec;
	m.u.frame_batch.records_len = need;
	expect_bytes(&m, want, n, &d);
	assert_int_equal(ptp_record_next(&d.u.frame_batch, &off, &r), 1);
	assert_true(r.id == 9 && r.last_seq == 5 && r.flags == PTP_RECORD_KEY);
	assert_int_equal(r.head_q.largest, 3);
	assert_int_equal(r.data_len, 2);
	assert_int_equal(r.data[1], 0xcd);
	assert_int_equal(ptp_record_next(&d.u.frame_batch, &off, &r), 0);

	/* a count that does not match the records is refused by the encoder */
	m.u.frame_batch.count = 2;
	assert_int_equal(ptp_msg_encode(&m, NULL, 0, &need), PTP_EINVAL);
}

static void test_instance_event_roundtrip(void **state)
{
	ptp_msg_t m, d;
	uint8_t buf[2048];
	size_t n;
	(void)state;
	memset(&m, 0, sizeof m);
	m.type = PTP_INSTANCE_EVENT;
	m.u.instance_event.kind = PTP_EVENT_ADDED;
	m.u.instance_event.instance_id = 42;
	m.u.instance_event.tick = 7;
	m.u.instance_event.name = str("alice");
	m.u.instance_event.room = str("lobby");
	m.u.instance_event.shape.strand_count = 2;
	for (int s = 0; s < 2; s++) {
		m.u.instance_event.shape.strands[s].points = 12;
		m.u.instance_event.shape.strands[s].segment_length = 0.03f;
		m.u.instance_event.shape.strands[s].anchor[0] = s ? 0.05f : -0.05f;
		m.u.instance_event.shape.strands[s].direction[1] = -1.0f;
	}
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &n), PTP_OK);
	assert_int_equal(n, 10 + 1 + 8 + 8 + 6 + 6 + 1 + 2 * 29);
	assert_int_equal(ptp_msg_decode(buf, n, &d), PTP_OK);
	assert_int_equal(d.u.instance_event.shape.strand_count, 2);
	assert_true(d.u.instance_event.shape.strands[1].anchor[0] == 0.05f);
	assert_true(d.u.instance_event.shape.strands[0].segment_length == 0.03f);

	m.u.instance_event.kind = PTP_EVENT_REMOVED; /* nothing after id and tick */
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &n), PTP_OK);
	assert_int_equal(n, 10 + 17);
	assert_int_equal(ptp_msg_decode(buf, n, &d), PTP_OK);
	assert_int_equal(d.u.instance_event.shape.strand_count, 0);
}

static void test_welcome_pong_authorize_roundtrip(void **state)
{
	ptp_msg_t m, d;
	uint8_t buf[512];
	size_t n;
	(void)state;
	memset(&m, 0, sizeof m);
	m.type = PTP_WELCOME;
	m.u.welcome.major = 1;
	m.u.welcome.tick_hz = 60;
	m.u.welcome.substeps = 4;
	m.u.welcome.keyframe_interval = 60;
	m.u.welcome.max_message = PTP_MAX_CLIENT_MESSAGE;
	m.u.welcome.max_subscriptions = 1024;
	m.u.welcome.server_time_us = -5;
	m.u.welcome.tick = 1ull << 40;
	m.u.welcome.server_version = str("ponytaild 0.1 \xc3\xa9"); /* UTF-8 e-acute */
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &n), PTP_OK);
	assert_int_equal(n, 10 + 1 + 1 + 2 + 1 + 2 + 4 + 2 + 8 + 8 + 1 + 16);
	assert_int_equal(ptp_msg_decode(buf, n, &d), PTP_OK);
	assert_true(d.u.welcome.tick == 1ull << 40 && d.u.welcome.server_time_us == -5);

	assert_true(d.u.welcome.max_error_m == 0.0f); /* minor 0: not sent */

	memset(&m, 0, sizeof m);
	m.type = PTP_PONG;
	m.u.pong.client_time_us = 1;
	m.u.pong.server_time_us = 2;
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &n), PTP_OK);
	assert_int_equal(n, 26);
	assert_int_equal(ptp_msg_decode(buf, n, &d), PTP_OK);
	assert_true(d.u.pong.server_time_us == 2);

	memset(&m, 0, sizeof m);
	m.type = PTP_AUTHORIZE;
	m.u.authorize.instance_id = 3;
	m.u.authorize.token = str("");
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &n), PTP_ERANGE); /* empty token */
	m.u.authorize.token = str("s3cret");
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &n), PTP_OK);
	assert_int_equal(ptp_msg_decode(buf, n, &d), PTP_OK);
}

/* welcome 1.1 appends f32 max_error_m; 1.0 has none. Bytes from PROTOCOL.md 5 by hand:
 * 0.001f = 0x3a83126f. */
static void test_welcome_minors(void **state)
{
	static const uint8_t v0[] = {
	    0x50, 0x54, 1, 0, 0x81, 0, 31, 0, 0, 0, 1, 0, 60, 0, 4, 60, 0,
	    0, 0x10, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 1, 0x76};
	static const uint8_t v1[] = {
	    0x50, 0x54, 1, 1, 0x81, 0, 35, 0, 0, 0, 1, 1, 60, 0, 4, 60, 0,
	    0, 0x10, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 1, 0x76,
	    0x6f, 0x12, 0x83, 0x3a};
	uint8_t b[sizeof v1];
	ptp_msg_t m, d;
	size_t n;
	(void)state;
	memset(&m, 0, sizeof m);
	m.type = PTP_WELCOME;
	m.u.welcome = (ptp_welcome_t){1, 0, 60, 4, 60, 4096, 1024, 1, 9, str("v"), 0.001f};
	expect_bytes(&m, v0, sizeof v0, &d); /* a zeroed minor is 1.0: max_error_m left out */
	assert_true(d.minor == 0 && d.u.welcome.max_error_m == 0.0f);
	m.minor = 1;
	m.u.welcome.minor = 1;
	expect_bytes(&m, v1, sizeof v1, &d);
	assert_true(d.minor == 1 && d.u.welcome.max_error_m == 0.001f);
	m.minor = PTP_MINOR + 1; /* a minor this library cannot write */
	assert_int_equal(ptp_msg_encode(&m, b, sizeof b, &n), PTP_EINVAL);
	m.minor = 1;
	m.u.welcome.max_error_m = 0.0f;
	assert_int_equal(ptp_msg_encode(&m, b, sizeof b, &n), PTP_ERANGE);
	m.u.welcome.max_error_m = 1.5f;
	assert_int_equal(ptp_msg_encode(&m, b, sizeof b, &n), PTP_ERANGE);
	memcpy(b, v1, sizeof v1);
	b[sizeof v1 - 1] = 0x7f, b[sizeof v1 - 2] = 0xc0; /* a NaN */
	assert_int_equal(ptp_msg_decode(b, sizeof v1, &d), PTP_EFLOAT);
	b[6] = 31; /* 1.1 header without the field */
	assert_int_equal(ptp_msg_decode(b, sizeof v0, &d), PTP_ETRUNC);
}

/* A hello whose payload major is not ours is a version error, as a header major is. */
static void test_hello_major(void **state)
{
	uint8_t b[32];
	ptp_msg_t m, d;
	size_t n;
	(void)state;
	memset(&m, 0, sizeof m);
	m.type = PTP_HELLO;
	m.u.hello = (ptp_hello_t){2, 0, str("x"), 0};
	assert_int_equal(ptp_msg_encode(&m, b, sizeof b, &n), PTP_EVERSION);
	m.u.hello.major = 1;
	assert_int_equal(ptp_msg_encode(&m, b, sizeof b, &n), PTP_OK);
	b[10] = 2;
	assert_int_equal(ptp_msg_decode(b, n, &d), PTP_EVERSION);
	b[10] = 0;
	assert_int_equal(ptp_msg_decode(b, n, &d), PTP_EVERSION);
	b[3] = PTP_MINOR + 1; /* a newer minor does not change what the major means */
	assert_int_equal(ptp_msg_decode(b, n, &d), PTP_EVERSION);
}

/* Every prefix of a valid message is rejected (as truncated, or by the length check),
 * and never read past: ASan would catch it in the SANITIZE build. */
static void test_every_truncation(void **state)
{
	ptp_msg_t d;
	(void)state;
	for (size_t n = 0; n < sizeof pose_bytes; n++) {
		uint8_t *copy = test_malloc(n ? n : 1);
		memcpy(copy, pose_bytes, n);
		assert_int_equal(ptp_msg_decode(copy, n, &d), PTP_ETRUNC);
		/* the same prefix with a header that agrees: the fields run out instead */
		if (n >= PTP_HEADER_SIZE) {
			copy[6] = (uint8_t)(n - PTP_HEADER_SIZE);
			assert_int_equal(ptp_msg_decode(copy, n, &d), PTP_ETRUNC);
		}
		test_free(copy);
	}
}

static void test_header_errors(void **state)
{
	uint8_t b[sizeof pose_bytes + 4];
	ptp_msg_t d;
	(void)state;
#define FRESH() memcpy(b, pose_bytes, sizeof pose_bytes)
	FRESH();
	b[1] = 'X';
	assert_int_equal(ptp_msg_decode(b, sizeof pose_bytes, &d), PTP_EMAGIC);
	FRESH();
	b[2] = 2;
	assert_int_equal(ptp_msg_decode(b, sizeof pose_bytes, &d), PTP_EVERSION);
	FRESH();
	b[4] = 0x7e;
	assert_int_equal(ptp_msg_decode(b, sizeof pose_bytes, &d), PTP_ETYPE);
	FRESH();
	b[5] = 1;
	assert_int_equal(ptp_msg_decode(b, sizeof pose_bytes, &d), PTP_EFLAGS);
	FRESH();
	b[9] = 0x01; /* 16 MiB + 61 */
	assert_int_equal(ptp_msg_decode(b, sizeof pose_bytes, &d), PTP_ETOOBIG);
	FRESH();
	b[sizeof pose_bytes] = 0; /* one byte more than the header declares */
	assert_int_equal(ptp_msg_decode(b, sizeof pose_bytes + 1, &d), PTP_ELENGTH);
	/* a payload with a byte after its fields: trailing up to our minor, ignored after */
	FRESH();
	b[6] = 62;
	b[sizeof pose_bytes] = 0x55;
	assert_int_equal(ptp_msg_decode(b, sizeof pose_bytes + 1, &d), PTP_ETRAILING);
	b[3] = PTP_MINOR;
	assert_int_equal(ptp_msg_decode(b, sizeof pose_bytes + 1, &d), PTP_ETRAILING);
	b[3] = PTP_MINOR + 1;
	b[5] = 0xff; /* reserved byte: may mean something in a newer minor */
	assert_int_equal(ptp_msg_decode(b, sizeof pose_bytes + 1, &d), PTP_OK);
	assert_int_equal(d.minor, PTP_MINOR + 1);
	assert_true(d.u.head_pose.v[0] == -2.0f);
#undef FRESH
}

static void test_field_errors(void **state)
{
	uint8_t b[sizeof pose_bytes];
	ptp_msg_t d;
	(void)state;
	memcpy(b, pose_bytes, sizeof b);
	b[31] = 0, b[32] = 0, b[33] = 0xc0, b[34] = 0x7f; /* p.x = 0x7fc00000, a NaN */
	assert_int_equal(ptp_msg_decode(b, sizeof b, &d), PTP_EFLOAT);
	b[33] = 0x80; /* p.x = 0x7f800000, infinity */
	assert_int_equal(ptp_msg_decode(b, sizeof b, &d), PTP_EFLOAT);

	memcpy(b, pose_bytes, sizeof b);
	b[57] = 0; /* q.w = 0: a zero quaternion */
	b[58] = 0;
	assert_int_equal(ptp_msg_decode(b, sizeof b, &d), PTP_ERANGE);

	memcpy(b, pose_bytes, sizeof b);
	b[30] = 0x05; /* flags: an unknown bit */
	assert_int_equal(ptp_msg_decode(b, sizeof b, &d), PTP_EFLAGS);

	memcpy(b, pose_bytes, sizeof b);
	b[30] = 0x03; /* claims angular velocity too: 12 bytes missing */
	assert_int_equal(ptp_msg_decode(b, sizeof b, &d), PTP_ETRUNC);
}

static void test_count_errors(void **state)
{
	/* keyframe_request with count 3 but only 2 ids: rejected before reading them */
	uint8_t kr[] = {'P', 'T', 1, 0, 0x06, 0, 18, 0, 0, 0, 3, 0, 1, 0,
	                0,   0,   0, 0, 0,    0, 2,  0, 0, 0, 0, 0, 0, 0};
	/* subscribe with count 257 (> PTP_MAX_IDS) */
	uint8_t sub[] = {'P', 'T', 1, 0, 0x03, 0, 3, 0, 0, 0, 0, 0x01, 0x01};
	/* hello whose name is 65 bytes (> PTP_MAX_NAME) */
	uint8_t hello[10 + 3 + 65] = {'P', 'T', 1, 0, 0x01, 0, 68, 0, 0, 0, 1, 0, 65};
	/* hello whose name is not UTF-8 */
	uint8_t bad[] = {'P', 'T', 1, 0, 0x01, 0, 5, 0, 0, 0, 1, 0, 2, 0xc3, 0x28};
	/* frame batch claiming 2 records in 33 bytes */
	uint8_t fb[10 + 18 + 33] = {'P', 'T', 1, 0, 0x82, 0, 51, 0, 0, 0};
	ptp_msg_t d;
	(void)state;
	memset(hello + 13, 'a', 65);
	fb[26] = 2;
	assert_int_equal(ptp_msg_decode(kr, sizeof kr, &d), PTP_ECOUNT);
	assert_int_equal(ptp_msg_decode(sub, sizeof sub, &d), PTP_ELIMIT);
	assert_int_equal(ptp_msg_decode(hello, sizeof hello, &d), PTP_ELIMIT);
	assert_int_equal(ptp_msg_decode(bad, sizeof bad, &d), PTP_EUTF8);
	assert_int_equal(ptp_msg_decode(fb, sizeof fb, &d), PTP_ECOUNT);
	kr[10] = 2;
	kr[6] = 18;
	assert_int_equal(ptp_msg_decode(kr, sizeof kr, &d), PTP_OK);
	assert_int_equal(d.u.subscribe.count, 2);
}

static void test_encoder_buffers(void **state)
{
	uint8_t buf[sizeof pose_bytes];
	size_t need = 0;
	ptp_msg_t m;
	(void)state;
	assert_int_equal(ptp_msg_decode(pose_bytes, sizeof pose_bytes, &m), PTP_OK);
	/* size query, then too small by one: reported, nothing written past cap */
	assert_int_equal(ptp_msg_encode(&m, NULL, 0, &need), PTP_ENOSPACE);
	assert_int_equal(need, sizeof pose_bytes);
	memset(buf, 0xee, sizeof buf);
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf - 1, &need), PTP_ENOSPACE);
	assert_int_equal(buf[sizeof buf - 1], 0xee);
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &need), PTP_OK);
	assert_memory_equal(buf, pose_bytes, sizeof buf);
	/* the encoder refuses what the decoder would refuse */
	m.u.head_pose.p[0] = INFINITY;
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &need), PTP_EFLOAT);
	m.u.head_pose.p[0] = 0;
	m.u.head_pose.flags = 0x80;
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &need), PTP_EFLAGS);
	m.type = (ptp_type_t)0x7e;
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &need), PTP_ETYPE);
}

static void test_quat16(void **state)
{
	/* 90 deg about +Y: (0, sin 45, 0, cos 45); x, y, w tie at... y and w equal: first wins */
	float q[4] = {0.0f, 0.70710677f, 0.0f, 0.70710677f}, bad[4] = {0, 0, 0, 0};
	ptp_quat16_t p;
	double u[4];
	(void)state;
	assert_int_equal(ptp_quat16_pack(q, &p), PTP_OK);
	assert_int_equal(p.largest, 1);
	assert_int_equal(p.c[0], 0);
	assert_int_equal(p.c[1], 0);
	assert_int_equal(p.c[2], 32767); /* 0.7071 * 46340 = 32767.3 */
	ptp_quat16_unpack(&p, u);
	assert_true(fabs(u[3] - 0.70710678) < 2e-5 && fabs(u[1] - 0.70710678) < 2e-5);
	assert_int_equal(ptp_quat16_pack(bad, &p), PTP_ERANGE);
	bad[0] = NAN;
	assert_int_equal(ptp_quat16_pack(bad, &p), PTP_EFLOAT);
	/* random unit quaternions come back within 3e-5 per component (up to sign) */
	for (int i = 0; i < 1000; i++) {
		float r[4];
		double n = 0, dot = 0;
		for (int k = 0; k < 4; k++) {
			r[k] = (float)sin(i * 1.7 + k * 2.3 + i * k * 0.01);
			n += (double)r[k] * r[k];
		}
		assert_int_equal(ptp_quat16_pack(r, &p), PTP_OK);
		ptp_quat16_unpack(&p, u);
		for (int k = 0; k < 4; k++)
			dot += u[k] * r[k];
		for (int k = 0; k < 4; k++)
			assert_true(fabs(u[k] - (dot < 0 ? -1 : 1) * r[k] / sqrt(n)) < 3e-5);
	}
}

static void test_names(void **state)
{
	(void)state;
	assert_string_equal(ptp_type_name(PTP_FRAME_BATCH), "frame_batch");
	assert_int_equal(ptp_type_from_name("keyframe_request"), PTP_KEYFRAME_REQUEST);
	assert_null(ptp_type_name(0));
	assert_int_equal(ptp_type_from_name("nope"), -1);
	assert_string_equal(ptp_err_name(PTP_ETRUNC), "truncated");
	assert_string_equal(ptp_err_name(PTP_EFLOAT), "non_finite");
	assert_string_equal(ptp_err_name((ptp_err_t)99), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ping_bytes),
	    cmocka_unit_test(test_hello_bytes),
	    cmocka_unit_test(test_error_bytes),
	    cmocka_unit_test(test_head_pose_bytes),
	    cmocka_unit_test(test_head_pose_bones_bytes),
	    cmocka_unit_test(test_subscribe_bytes),
	    cmocka_unit_test(test_frame_batch_bytes),
	    cmocka_unit_test(test_instance_event_roundtrip),
	    cmocka_unit_test(test_welcome_pong_authorize_roundtrip),
	    cmocka_unit_test(test_welcome_minors),
	    cmocka_unit_test(test_hello_major),
	    cmocka_unit_test(test_every_truncation),
	    cmocka_unit_test(test_header_errors),
	    cmocka_unit_test(test_field_errors),
	    cmocka_unit_test(test_count_errors),
	    cmocka_unit_test(test_encoder_buffers),
	    cmocka_unit_test(test_quat16),
	    cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests_name("proto_msg", tests, NULL, NULL);
}
