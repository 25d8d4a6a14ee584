/* head_pose carrying every body bone (protocol 1.2, PROTOCOL.md 4 and 5): the layout
 * checked byte by byte against the spec's offsets, the limit, and a repeated id. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "ptp/proto.h"

/* Every body bone in one head_pose (the limit, PTP_BONE_COUNT): the size PROTOCOL.md gives
 * (49 + 1 + 54 * 29 B of payload), each bone at its offset with its id and floats bit for bit,
 * and a decode that gives back the same bits; 55 is `limit`, before any byte is read. A
 * repeated id is carried as sent, in order (the later applies, PROTOCOL.md 5). */
static void test_head_pose_all_bones(void **state)
{
	static ptp_msg_t m, d;
	static uint8_t buf[2048];
	size_t n;
	(void)state;
	memset(&m, 0, sizeof m);
	m.type = PTP_HEAD_POSE;
	m.minor = 2;
	m.u.head_pose.instance_id = 9;
	m.u.head_pose.flags = PTP_POSE_HAS_BONES;
	m.u.head_pose.q[3] = 1.0f;
	m.u.head_pose.bone_count = PTP_BONE_COUNT;
	assert_int_equal(PTP_MAX_POSE_BONES, 54);
	for (int i = 0; i < PTP_BONE_COUNT; i++) {
		ptp_bone_pose_t *b = &m.u.head_pose.bones[i];
		b->bone = (uint8_t)(PTP_BONE_COUNT - 1 - i); /* any order */
		for (int k = 0; k < 3; k++)
			b->p[k] = 0.1f * (float)i + 0.37f * (float)k - 1.0f;
		/* |q|^2 in [1, 1.4]: inside [0.25, 4], and not normalised by the codec */
		b->q[0] = 0.1f * (float)(i % 7), b->q[1] = -0.01f * (float)i, b->q[3] = 1.0f;
	}
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &n), PTP_OK);
	assert_int_equal(n, 10 + 49 + 1 + 54 * 29);
	assert_int_equal(buf[10 + 49], 54); /* the count */
	for (int i = 0; i < PTP_BONE_COUNT; i++) {
		const uint8_t *at = buf + 10 + 50 + 29 * i;
		const ptp_bone_pose_t *b = &m.u.head_pose.bones[i];
		assert_int_equal(at[0], b->bone);
		assert_memory_equal(at + 1, b->p, 12); /* little-endian f32, as this host's */
		assert_memory_equal(at + 13, b->q, 16);
	}
	assert_int_equal(ptp_msg_decode(buf, n, &d), PTP_OK);
	assert_int_equal(d.u.head_pose.bone_count, 54);
	assert_memory_equal(d.u.head_pose.bones, m.u.head_pose.bones,
	                    sizeof m.u.head_pose.bones); /* bit for bit */
	/* 55: refused by the encoder, and by the decoder from the count alone */
	m.u.head_pose.bone_count = PTP_BONE_COUNT + 1;
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &n), PTP_ELIMIT);
	m.u.head_pose.bone_count = PTP_BONE_COUNT;
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &n), PTP_OK);
	buf[10 + 49] = 55;
	assert_int_equal(ptp_msg_decode(buf, n, &d), PTP_ELIMIT);
	/* the same id twice: both kept, in order */
	m.u.head_pose.bone_count = 2;
	m.u.head_pose.bones[1].bone = m.u.head_pose.bones[0].bone;
	assert_int_equal(ptp_msg_encode(&m, buf, sizeof buf, &n), PTP_OK);
	assert_int_equal(ptp_msg_decode(buf, n, &d), PTP_OK);
	assert_int_equal(d.u.head_pose.bone_count, 2);
	assert_int_equal(d.u.head_pose.bones[1].bone, d.u.head_pose.bones[0].bone);
	assert_true(d.u.head_pose.bones[1].p[0] == m.u.head_pose.bones[1].p[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_head_pose_all_bones),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
