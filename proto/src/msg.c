/* Message encoder and decoder.
 *
 * Each message is described once, by an io_<name>() function that walks its fields in
 * wire order; the same walk reads (decoder) or writes (encoder), so the two cannot drift
 * apart, and every range check sits next to the field it guards. Reads go through the
 * bounded reader of wire.c; counts are checked against their limit, then against the
 * bytes left, before anything is read for them.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "ptp/proto.h"
#include "wire.h"

typedef struct io_t {
	int writing;
	int strict; /* 0 when decoding a newer minor: reserved bits and trailing bytes allowed */
	int minor;  /* the header's minor: fields added by a later minor are absent */
	ptp_reader_t r;
	ptp_writer_t w;
} io_t;

static int io_ok(const io_t *io)
{
	return io->writing ? io->w.err == PTP_OK : io->r.err == PTP_OK;
}

static void io_fail(io_t *io, ptp_err_t e)
{
	if (io->writing)
		ptp_writer_fail(&io->w, e);
	else
		ptp_reader_fail(&io->r, e);
}

/* Fails with e unless cond; checks only while no earlier error is pending, so the first
 * problem in wire order is the one reported. */
static void io_check(io_t *io, int cond, ptp_err_t e)
{
	if (io_ok(io) && !cond)
		io_fail(io, e);
}

static void io_u8(io_t *io, uint8_t *v)
{
	if (io->writing)
		ptp_put_u8(&io->w, *v);
	else
		*v = ptp_get_u8(&io->r);
}

static void io_u16(io_t *io, uint16_t *v)
{
	if (io->writing)
		ptp_put_u16(&io->w, *v);
	else
		*v = ptp_get_u16(&io->r);
}

static void io_u32(io_t *io, uint32_t *v)
{
	if (io->writing)
		ptp_put_u32(&io->w, *v);
	else
		*v = ptp_get_u32(&io->r);
}

static void io_u64(io_t *io, uint64_t *v)
{
	if (io->writing)
		ptp_put_u64(&io->w, *v);
	else
		*v = ptp_get_u64(&io->r);
}

static void io_i64(io_t *io, int64_t *v)
{
	if (io->writing)
		ptp_put_i64(&io->w, *v);
	else
		*v = ptp_get_i64(&io->r);
}

static void io_i16(io_t *io, int16_t *v)
{
	if (io->writing)
		ptp_put_i16(&io->w, *v);
	else
		*v = ptp_get_i16(&io->r);
}

static void io_f32s(io_t *io, float *v, int n)
{
	for (int i = 0; i < n && io_ok(io); i++) {
		if (io->writing)
			ptp_put_f32(&io->w, v[i]);
		else
			v[i] = ptp_get_f32(&io->r);
	}
}

static void io_str8(io_t *io, ptp_str_t *s, size_t max)
{
	if (io->writing)
		ptp_put_str8(&io->w, *s, max);
	else
		*s = ptp_get_str8(&io->r, max);
}

/* Reserved bits must be zero (in strict mode); known bits are kept as sent. */
static void io_flags(io_t *io, uint8_t *v, uint8_t known)
{
	io_u8(io, v);
	if (io->strict)
		io_check(io, (*v & (uint8_t)~known) == 0, PTP_EFLAGS);
	if (!io->writing)
		*v &= known;
}

static void io_ids(io_t *io, ptp_ids_t *m)
{
	io_u16(io, &m->count);
	io_check(io, m->count <= PTP_MAX_IDS, PTP_ELIMIT);
	if (!io->writing && !ptp_reader_need(&io->r, m->count, 8))
		return;
	for (int i = 0; i < m->count && io_ok(io); i++)
		io_u64(io, &m->ids[i]);
}

static void io_hello(io_t *io, ptp_hello_t *m)
{
	io_u8(io, &m->major);
	io_check(io, m->major == PTP_MAJOR, PTP_EVERSION); /* PROTOCOL.md 3: closes */
	io_u8(io, &m->minor);
	io_str8(io, &m->client_name, PTP_MAX_NAME);
	/* since 1.2 (PROTOCOL.md 11): bit 0 asks for compact frames */
	if (io->minor < 2) {
		if (!io->writing)
			m->features = 0;
		return;
	}
	io_flags(io, &m->features, 1);
}

static void io_authorize(io_t *io, ptp_authorize_t *m)
{
	io_u64(io, &m->instance_id);
	io_str8(io, &m->token, PTP_MAX_TOKEN);
	io_check(io, m->token.len > 0, PTP_ERANGE);
}

/* PROTOCOL.md 5, "Per-viewer rates": the rates a subscription may ask for. */
static int rate_ok(uint8_t hz)
{
	return hz == 0 || hz == 60 || hz == 30 || hz == 20 || hz == 10;
}

static void io_subscribe(io_t *io, ptp_ids_t *m)
{
	io_str8(io, &m->room, PTP_MAX_NAME);
	io_ids(io, m);
	if (io->minor < 2) {
		if (!io->writing)
			m->rate_hz = 0;
		return;
	}
	io_u8(io, &m->rate_hz);
	io_check(io, rate_ok(m->rate_hz), PTP_ERANGE);
}

static void io_unsubscribe(io_t *io, ptp_ids_t *m)
{
	io_str8(io, &m->room, PTP_MAX_NAME);
	io_ids(io, m);
	if (!io->writing)
		m->rate_hz = 0;
}

static void io_keyframe_request(io_t *io, ptp_ids_t *m)
{
	if (!io->writing) {
		m->room = (ptp_str_t){"", 0};
		m->rate_hz = 0;
	}
	io_ids(io, m);
}

static double quat_norm2(const float q[4])
{
	return (double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2] +
	       (double)q[3] * q[3];
}

/* Since 1.2, after v and w when flags bit 2 is set: u8 count (1..54), then per bone u8 id
 * (< 54), f32[3] p, f32[4] q with |q|^2 in [0.25, 4]. */
static void io_bones(io_t *io, ptp_head_pose_t *m)
{
	io_u8(io, &m->bone_count);
	io_check(io, m->bone_count <= PTP_MAX_POSE_BONES, PTP_ELIMIT);
	io_check(io, m->bone_count >= 1, PTP_ERANGE);
	if (!io->writing && io_ok(io) && !ptp_reader_need(&io->r, m->bone_count, PTP_BONE_SIZE))
		return;
	for (int i = 0; i < m->bone_count && io_ok(io); i++) {
		ptp_bone_pose_t *b = &m->bones[i];
		io_u8(io, &b->bone);
		io_check(io, b->bone < PTP_BONE_COUNT, PTP_ERANGE);
		io_f32s(io, b->p, 3);
		io_f32s(io, b->q, 4);
		double n2 = quat_norm2(b->q);
		io_check(io, n2 >= PTP_QUAT_NORM2_MIN && n2 <= PTP_QUAT_NORM2_MAX, PTP_ERANGE);
	}
}

static void io_head_pose(io_t *io, ptp_head_pose_t *m)
{
	double n2;
	uint8_t known = PTP_POSE_HAS_VELOCITY | PTP_POSE_HAS_ANGULAR;
	if (io->minor >= 2)
		known |= PTP_POSE_HAS_BONES; /* reserved in a 1.0 / 1.1 message */
	io_u64(io, &m->instance_id);
	io_u32(io, &m->seq);
	io_i64(io, &m->client_time_us);
	io_flags(io, &m->flags, known);
	io_f32s(io, m->p, 3);
	io_f32s(io, m->q, 4);
	n2 = quat_norm2(m->q);
	io_check(io, n2 >= PTP_QUAT_NORM2_MIN && n2 <= PTP_QUAT_NORM2_MAX, PTP_ERANGE);
	if (m->flags & PTP_POSE_HAS_VELOCITY)
		io_f32s(io, m->v, 3);
	else if (!io->writing)
		m->v[0] = m->v[1] = m->v[2] = 0.0f;
	if (m->flags & PTP_POSE_HAS_ANGULAR)
		io_f32s(io, m->w, 3);
	else if (!io->writing)
		m->w[0] = m->w[1] = m->w[2] = 0.0f;
	if (m->flags & PTP_POSE_HAS_BONES)
		io_bones(io, m);
	else if (!io->writing)
		m->bone_count = 0;
}

static void io_ping(io_t *io, ptp_ping_t *m)
{
	io_i64(io, &m->client_time_us);
}

/* Hand bones: left_hand 19, right_hand 23, the fingers 24..53 (PROTOCOL.md 5). */
static int hand_bone(uint8_t b)
{
	return b == 19 || b == 23 || (b >= 24 && b < PTP_BONE_COUNT);
}

static void io_grab(io_t *io, ptp_grab_t *m)
{
	io_u32(io, &m->ref);
	io_u64(io, &m->instance_id);
	io_u64(io, &m->by);
	io_u16(io, &m->strand);
	io_check(io, m->strand < PTP_MAX_STRANDS, PTP_ERANGE);
	io_u8(io, &m->point);
	io_check(io, m->point >= 1 && m->point < PTP_MAX_POINTS, PTP_ERANGE);
	io_u8(io, &m->bone);
	io_check(io, hand_bone(m->bone), PTP_ERANGE);
}

static void io_release(io_t *io, ptp_release_t *m)
{
	io_u32(io, &m->ref);
	io_u64(io, &m->instance_id);
	io_u64(io, &m->grab_id);
}

static void io_grab_result(io_t *io, ptp_grab_result_t *m)
{
	io_u32(io, &m->ref);
	io_u64(io, &m->instance_id);
	io_u64(io, &m->grab_id);
}

static void io_welcome(io_t *io, ptp_welcome_t *m)
{
	io_u8(io, &m->major);
	io_u8(io, &m->minor);
	io_u16(io, &m->tick_hz);
	io_check(io, m->tick_hz >= 1, PTP_ERANGE);
	io_u8(io, &m->substeps);
	io_u16(io, &m->keyframe_interval);
	io_check(io, m->keyframe_interval >= 1, PTP_ERANGE);
	io_u32(io, &m->max_message);
	io_u16(io, &m->max_subscriptions);
	io_i64(io, &m->server_time_us);
	io_u64(io, &m->tick);
	io_str8(io, &m->server_version, PTP_MAX_TEXT);
	if (io->minor < 1) {
		if (!io->writing)
			m->max_error_m = 0.0f;
		return;
	}
	io_f32s(io, &m->max_error_m, 1);
	io_check(io, m->max_error_m > 0.0f && m->max_error_m <= 1.0f, PTP_ERANGE);
}

/* 46340 = floor(32767 * sqrt(2)): a dropped-largest component is at most 1/sqrt(2). */
#define QUAT16_SCALE 46340

static void io_record(io_t *io, ptp_record_t *m)
{
	uint8_t flags = 0;
	int64_t sum = 0;
	/* 1.2 gave bits 1..5 the step; a strict reader of an older minor refuses them, a
	 * lenient one (ptp_record_next: already validated) reads them. */
	uint8_t step_bits = io->minor >= 2 || !io->strict || io->writing ? 0x3e : 0;
	io_u64(io, &m->id);
	if (io->writing) {
		io_check(io, m->head_q.largest <= 3 && (m->flags & 0xc0) == 0 && m->step <= 32,
		         PTP_EINVAL);
		flags = (uint8_t)(m->flags | (m->head_q.largest & 3) << 6 |
		                  (m->step > 1 ? (m->step - 1) << 1 : 0));
	}
	io_flags(io, &flags, (uint8_t)(PTP_RECORD_KEY | 0xc0 | step_bits));
	m->flags = flags & PTP_RECORD_KEY;
	m->step = (uint8_t)(((flags >> 1) & 31) + 1);
	m->head_q.largest = (uint8_t)(flags >> 6);
	io_u32(io, &m->last_seq);
	io_f32s(io, m->head_p, 3);
	for (int i = 0; i < 3; i++) {
		io_i16(io, &m->head_q.c[i]);
		io_check(io, m->head_q.c[i] != INT16_MIN, PTP_ERANGE);
		sum += (int64_t)m->head_q.c[i] * m->head_q.c[i];
	}
	io_check(io, sum <= (int64_t)QUAT16_SCALE * QUAT16_SCALE, PTP_ERANGE);
	if (io->writing) {
		/* 1.4: a key record's data ends with the state hash (PROTOCOL.md 6) */
		uint16_t wire = m->data_len;
		io_check(io, m->data_len == 0 || m->data, PTP_EINVAL);
		io_check(io, !m->has_hash || (m->flags & PTP_RECORD_KEY), PTP_EINVAL);
		io_check(io, !m->has_hash || m->data_len <= 65535 - PTP_STATE_HASH_SIZE, PTP_ELIMIT);
		if (m->has_hash && io_ok(io))
			wire = (uint16_t)(m->data_len + PTP_STATE_HASH_SIZE);
		io_u16(io, &wire);
		if (io_ok(io))
			ptp_put_bytes(&io->w, m->data, m->data_len);
		if (m->has_hash)
			io_u64(io, &m->state_hash);
	} else {
		io_u16(io, &m->data_len);
		m->data = ptp_get_bytes(&io->r, m->data_len);
		m->has_hash = 0;
		m->state_hash = 0;
		if (io->minor >= PTP_MINOR_HASH && (m->flags & PTP_RECORD_KEY) && io_ok(io)) {
			/* the hash's 8 bytes are the data's last: fewer is a field cut short */
			if (m->data_len < PTP_STATE_HASH_SIZE) {
				io_fail(io, PTP_ETRUNC);
				return;
			}
			m->data_len = (uint16_t)(m->data_len - PTP_STATE_HASH_SIZE);
			ptp_reader_t h;
			ptp_reader_init(&h, m->data + m->data_len, PTP_STATE_HASH_SIZE);
			m->state_hash = ptp_get_u64(&h);
			m->has_hash = 1;
		}
	}
}

/* Walks count records in r; PTP_OK when they are valid (the reader is left after them). */
static ptp_err_t parse_records(ptp_reader_t *r, uint16_t count, int strict, int minor)
{
	io_t sub;
	memset(&sub, 0, sizeof sub);
	sub.strict = strict;
	sub.minor = minor;
	sub.r = *r;
	ptp_reader_need(&sub.r, count, PTP_RECORD_MIN);
	for (int i = 0; i < count && io_ok(&sub); i++) {
		ptp_record_t rec;
		io_record(&sub, &rec);
	}
	*r = sub.r;
	return sub.r.err;
}

static void io_frame_batch(io_t *io, ptp_frame_batch_t *m)
{
	io_u64(io, &m->tick);
	io_i64(io, &m->server_time_us);
	io_u16(io, &m->count);
	if (!io_ok(io))
		return;
	if (io->writing) {
		/* The caller concatenated pre-encoded records: check they are exactly count
		 * valid records before sending them on. */
		ptp_reader_t r;
		ptp_err_t e;
		ptp_reader_init(&r, m->records, m->records ? m->records_len : 0);
		e = parse_records(&r, m->count, 1, io->minor);
		io_check(io, e == PTP_OK && r.left == 0, PTP_EINVAL);
		if (io_ok(io))
			ptp_put_bytes(&io->w, m->records, m->records_len);
	} else {
		const uint8_t *start = io->r.p;
		if (parse_records(&io->r, m->count, io->strict, io->minor) != PTP_OK)
			return;
		m->records = start;
		m->records_len = (size_t)(io->r.p - start);
		m->minor = (uint8_t)io->minor;
	}
}

/* A shape's strand count (PROTOCOL.md 5): a u8, 1..32 up to minor 2; from minor 3 on
 * 1..255, or 0 followed by a u16 of 256..PTP_MAX_STRANDS. */
static void io_strand_count(io_t *io, uint16_t *n)
{
	uint8_t c = io->writing && *n <= 255 ? (uint8_t)*n : 0;
	io_u8(io, &c);
	if (c == 0 && io->minor >= 3) {
		io_u16(io, n);
		io_check(io, *n >= 256, PTP_ERANGE);
	} else if (!io->writing) {
		*n = c;
	}
	io_check(io, *n >= 1 && *n <= (io->minor >= 3 ? PTP_MAX_STRANDS : PTP_MAX_STRANDS_1_2),
	         PTP_ELIMIT);
}

static void io_shape(io_t *io, ptp_shape_t *s)
{
	io_strand_count(io, &s->strand_count);
	if (!io->writing && !ptp_reader_need(&io->r, s->strand_count, 29))
		return;
	for (int i = 0; i < s->strand_count && io_ok(io); i++) {
		ptp_shape_strand_t *st = &s->strands[i];
		double d2;
		io_u8(io, &st->points);
		io_check(io, st->points >= 2 && st->points <= PTP_MAX_POINTS, PTP_ERANGE);
		io_f32s(io, &st->segment_length, 1);
		io_check(io, st->segment_length > 0.0f && st->segment_length <= 10.0f, PTP_ERANGE);
		io_f32s(io, st->anchor, 3);
		io_f32s(io, st->direction, 3);
		d2 = (double)st->direction[0] * st->direction[0] +
		     (double)st->direction[1] * st->direction[1] +
		     (double)st->direction[2] * st->direction[2];
		io_check(io, d2 >= 1e-12, PTP_ERANGE);
	}
}

static void io_instance_event(io_t *io, ptp_instance_event_t *m)
{
	io_u8(io, &m->kind);
	io_check(io, m->kind >= PTP_EVENT_ADDED && m->kind <= PTP_EVENT_RESET, PTP_ERANGE);
	io_u64(io, &m->instance_id);
	io_u64(io, &m->tick);
	if (m->kind == PTP_EVENT_REMOVED) {
		if (!io->writing) {
			m->name = m->room = (ptp_str_t){"", 0};
			memset(&m->shape, 0, sizeof m->shape);
		}
		return;
	}
	io_str8(io, &m->name, PTP_MAX_NAME);
	io_str8(io, &m->room, PTP_MAX_NAME);
	io_shape(io, &m->shape);
}

static void io_pong(io_t *io, ptp_pong_t *m)
{
	io_i64(io, &m->client_time_us);
	io_i64(io, &m->server_time_us);
}

static void io_error(io_t *io, ptp_error_t *m)
{
	io_u16(io, &m->code);
	io_flags(io, &m->flags, PTP_ERROR_CLOSING);
	io_u8(io, &m->about_type);
	io_u64(io, &m->instance_id);
	io_str8(io, &m->text, PTP_MAX_TEXT);
	if (io->minor >= PTP_MINOR_GRAB)
		io_u32(io, &m->ref);
	else if (!io->writing)
		m->ref = 0;
}

/* The one dispatch from type to field walk; unknown types fail with PTP_ETYPE. */
static void io_payload(io_t *io, ptp_msg_t *m)
{
	switch (m->type) {
	case PTP_HELLO:
		io_hello(io, &m->u.hello);
		break;
	case PTP_AUTHORIZE:
		io_authorize(io, &m->u.authorize);
		break;
	case PTP_SUBSCRIBE:
		io_subscribe(io, &m->u.subscribe);
		break;
	case PTP_UNSUBSCRIBE:
		io_unsubscribe(io, &m->u.subscribe);
		break;
	case PTP_HEAD_POSE:
		io_head_pose(io, &m->u.head_pose);
		break;
	case PTP_KEYFRAME_REQUEST:
		io_keyframe_request(io, &m->u.subscribe);
		break;
	case PTP_PING:
		io_ping(io, &m->u.ping);
		break;
	case PTP_GRAB:
		io_grab(io, &m->u.grab);
		break;
	case PTP_RELEASE:
		io_release(io, &m->u.release);
		break;
	case PTP_GRAB_RESULT:
		io_grab_result(io, &m->u.grab_result);
		break;
	case PTP_WELCOME:
		io_welcome(io, &m->u.welcome);
		break;
	case PTP_FRAME_BATCH:
		io_frame_batch(io, &m->u.frame_batch);
		break;
	case PTP_INSTANCE_EVENT:
		io_instance_event(io, &m->u.instance_event);
		break;
	case PTP_PONG:
		io_pong(io, &m->u.pong);
		break;
	case PTP_ERROR:
		io_error(io, &m->u.error);
		break;
	default:
		io_fail(io, PTP_ETYPE);
		break;
	}
}

ptp_err_t ptp_msg_decode(const uint8_t *buf, size_t len, ptp_msg_t *out)
{
	io_t io;
	uint8_t minor, type, reserved;
	uint32_t payload;
	ptp_err_t he = ptp_header_check(buf, len, &payload);
	if (he != PTP_OK)
		return he;
	minor = buf[3], type = buf[4], reserved = buf[5];
	memset(&io, 0, sizeof io);
	io.strict = minor <= PTP_MINOR;
	io.minor = minor;
	if (io.strict && reserved != 0)
		return PTP_EFLAGS;
	if (!ptp_type_name(type))
		return PTP_ETYPE;
	memset(out, 0, sizeof *out);
	out->type = (ptp_type_t)type;
	out->minor = minor;
	ptp_reader_init(&io.r, buf + PTP_HEADER_SIZE, payload);
	io_payload(&io, out);
	if (io.r.err != PTP_OK)
		return io.r.err;
	if (io.strict && io.r.left != 0)
		return PTP_ETRAILING;
	return PTP_OK;
}

ptp_err_t ptp_msg_encode(const ptp_msg_t *m, uint8_t *buf, size_t cap, size_t *needed)
{
	io_t io;
	ptp_msg_t copy = *m; /* the field walk takes non-const pointers; it never writes them */
	ptp_err_t e;
	memset(&io, 0, sizeof io);
	io.writing = 1;
	io.strict = 1;
	io.minor = m->minor;
	ptp_writer_init(&io.w, buf, cap);
	if (!ptp_type_name(m->type))
		return PTP_ETYPE;
	if (m->minor > PTP_MINOR)
		return PTP_EINVAL;
	ptp_put_u8(&io.w, 'P');
	ptp_put_u8(&io.w, 'T');
	ptp_put_u8(&io.w, PTP_MAJOR);
	ptp_put_u8(&io.w, m->minor);
	ptp_put_u8(&io.w, (uint8_t)m->type);
	ptp_put_u8(&io.w, 0);
	ptp_put_u32(&io.w, 0); /* patched below */
	io_payload(&io, &copy);
	if (io.w.err == PTP_OK && io.w.len - PTP_HEADER_SIZE > PTP_MAX_PAYLOAD)
		ptp_writer_fail(&io.w, PTP_ETOOBIG);
	if (needed)
		*needed = io.w.len;
	e = ptp_writer_result(&io.w);
	if (e == PTP_OK)
		ptp_patch_u32(&io.w, 6, (uint32_t)(io.w.len - PTP_HEADER_SIZE));
	return e;
}

ptp_err_t ptp_record_encode(const ptp_record_t *r, uint8_t *buf, size_t cap, size_t *needed)
{
	io_t io;
	ptp_record_t copy = *r;
	memset(&io, 0, sizeof io);
	io.writing = 1;
	io.strict = 1;
	ptp_writer_init(&io.w, buf, cap);
	io_record(&io, &copy);
	if (needed)
		*needed = io.w.len;
	return ptp_writer_result(&io.w);
}

ptp_err_t ptp_record_add_hash(const uint8_t *rec, size_t len, uint64_t hash, uint8_t *out,
                              size_t cap, size_t *needed)
{
	ptp_writer_t w;
	size_t data_len;
	if (!rec || len < PTP_RECORD_MIN || !(rec[8] & PTP_RECORD_KEY))
		return PTP_EINVAL;
	data_len = (size_t)rec[31] | (size_t)rec[32] << 8;
	if (len != PTP_RECORD_MIN + data_len)
		return PTP_EINVAL;
	if (data_len > 65535 - PTP_STATE_HASH_SIZE)
		return PTP_ELIMIT;
	ptp_writer_init(&w, out, cap);
	ptp_put_bytes(&w, rec, 31);
	ptp_put_u16(&w, (uint16_t)(data_len + PTP_STATE_HASH_SIZE));
	ptp_put_bytes(&w, rec + PTP_RECORD_MIN, data_len);
	ptp_put_u64(&w, hash);
	if (needed)
		*needed = w.len;
	return ptp_writer_result(&w);
}

int ptp_record_next(const ptp_frame_batch_t *b, size_t *offset, ptp_record_t *out)
{
	io_t io;
	if (!b->records || *offset >= b->records_len)
		return 0;
	memset(&io, 0, sizeof io);
	io.minor = b->minor;
	ptp_reader_init(&io.r, b->records + *offset, b->records_len - *offset);
	io_record(&io, out);
	if (io.r.err != PTP_OK)
		return 0;
	*offset = b->records_len - io.r.left;
	return 1;
}

size_t ptp_shape_size(int n)
{
	n = n < 0 ? 0 : n > PTP_MAX_STRANDS ? PTP_MAX_STRANDS : n;
	return offsetof(ptp_shape_t, strands) + (size_t)n * sizeof(ptp_shape_strand_t);
}

void ptp_shape_copy(ptp_shape_t *dst, const ptp_shape_t *src)
{
	memcpy(dst, src, ptp_shape_size(src->strand_count));
}

ptp_err_t ptp_shape_validate(const ptp_shape_t *shape)
{
	io_t io;
	ptp_shape_t copy;
	ptp_shape_copy(&copy, shape);
	memset(&io, 0, sizeof io);
	io.writing = 1;
	io.strict = 1;
	io.minor = PTP_MINOR; /* the newest minor's limits; a 1.0-1.2 message checks its own */
	ptp_writer_init(&io.w, NULL, 0); /* a dry run: checks only, writes nothing */
	io_shape(&io, &copy);
	return io.w.err;
}

int ptp_shape_point_count(const ptp_shape_t *shape)
{
	int n = 0;
	for (int i = 0; i < shape->strand_count && i < PTP_MAX_STRANDS; i++)
		n += shape->strands[i].points;
	return n;
}

ptp_err_t ptp_quat16_pack(const float q[4], ptp_quat16_t *out)
{
	double v[4], n;
	int largest = 0, k = 0;
	for (int i = 0; i < 4; i++)
		if (!ptp_f32_finite(q[i]))
			return PTP_EFLOAT;
	n = sqrt(quat_norm2(q));
	if (!(n > 1e-9))
		return PTP_ERANGE;
	for (int i = 0; i < 4; i++) {
		v[i] = (double)q[i] / n;
		if (fabs(v[i]) > fabs(v[largest]))
			largest = i;
	}
	out->largest = (uint8_t)largest;
	for (int i = 0; i < 4; i++) {
		double c;
		if (i == largest)
			continue;
		c = floor((v[largest] < 0 ? -v[i] : v[i]) * QUAT16_SCALE + 0.5);
		if (c > 32767)
			c = 32767;
		if (c < -32767)
			c = -32767;
		out->c[k++] = (int16_t)c;
	}
	return PTP_OK;
}

void ptp_quat16_unpack(const ptp_quat16_t *in, double q[4])
{
	double s = 0.0;
	int k = 0;
	for (int i = 0; i < 4; i++) {
		double c;
		if (i == (in->largest & 3))
			continue;
		c = (double)in->c[k++] / QUAT16_SCALE;
		q[i] = c;
		s += c * c;
	}
	q[in->largest & 3] = s < 1.0 ? sqrt(1.0 - s) : 0.0;
}
