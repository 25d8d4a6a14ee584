/* The JSON form of messages used by proto/vectors (proto/vectors/README.md), for the C
 * vector test only: ptp_msg_t <-> jansson. 64-bit integers are decimal strings, record
 * data hex, float fields numbers holding the exact f32 value. Field names are the C
 * struct fields. Included by test_vectors.c alone. */
#ifndef PTP_VECTOR_JSON_H
#define PTP_VECTOR_JSON_H

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptp/proto.h"

/* Buffers made while turning JSON into a message (record bytes). */
typedef struct vj_arena_t {
	uint8_t *bufs[8];
	int n;
} vj_arena_t;

static uint8_t *vj_alloc(vj_arena_t *a, size_t n)
{
	if (a->n == 8)
		return NULL;
	return a->bufs[a->n++] = calloc(1, n ? n : 1);
}

static void vj_arena_free(vj_arena_t *a)
{
	for (int i = 0; i < a->n; i++)
		free(a->bufs[i]);
	a->n = 0;
}

static int vj_hex(const char *hex, uint8_t *out, size_t n)
{
	if (!hex || strlen(hex) != 2 * n)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return 0;
		out[i] = (uint8_t)v;
	}
	return 1;
}

static void vj_to_hex(const uint8_t *b, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
	out[2 * n] = 0;
}

static json_t *vj_u64(uint64_t v)
{
	char s[32];
	snprintf(s, sizeof s, "%" PRIu64, v);
	return json_string(s);
}

static json_t *vj_i64(int64_t v)
{
	char s[32];
	snprintf(s, sizeof s, "%" PRId64, v);
	return json_string(s);
}

static json_t *vj_str(ptp_str_t s)
{
	return json_stringn(s.ptr, s.len);
}

static json_t *vj_fs(const float *f, int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_real(f[i]));
	return a;
}

static json_t *vj_ids(const ptp_ids_t *m)
{
	json_t *a = json_array();
	for (int i = 0; i < m->count; i++)
		json_array_append_new(a, vj_u64(m->ids[i]));
	return a;
}

static json_t *vj_record(const ptp_record_t *r)
{
	char *hex = malloc(2 * (size_t)r->data_len + 1);
	json_t *o = json_object(), *q = json_object(), *c = json_array();
	vj_to_hex(r->data, r->data_len, hex);
	for (int i = 0; i < 3; i++)
		json_array_append_new(c, json_integer(r->head_q.c[i]));
	json_object_set_new(q, "largest", json_integer(r->head_q.largest));
	json_object_set_new(q, "c", c);
	json_object_set_new(o, "id", vj_u64(r->id));
	json_object_set_new(o, "flags", json_integer(r->flags));
	if (r->step > 1)
		json_object_set_new(o, "step", json_integer(r->step));
	json_object_set_new(o, "last_seq", json_integer(r->last_seq));
	json_object_set_new(o, "head_p", vj_fs(r->head_p, 3));
	json_object_set_new(o, "head_q", q);
	json_object_set_new(o, "data", json_string(hex));
	if (r->has_hash) /* 1.4 key records */
		json_object_set_new(o, "state_hash", vj_u64(r->state_hash));
	free(hex);
	return o;
}

static const char *const vj_kinds[] = {"", "added", "removed", "changed", "reset"};

static json_t *vj_from_msg(const ptp_msg_t *m)
{
	json_t *o = json_object();
#define SET(k, v) json_object_set_new(o, k, v)
	SET("type", json_string(ptp_type_name(m->type)));
	if (m->minor != 0)
		SET("header_minor", json_integer(m->minor));
	switch (m->type) {
	case PTP_HELLO:
		SET("major", json_integer(m->u.hello.major));
		SET("minor", json_integer(m->u.hello.minor));
		SET("client_name", vj_str(m->u.hello.client_name));
		if (m->minor >= 2) /* 1.2 appends features (PROTOCOL.md 11) */
			SET("features", json_integer(m->u.hello.features));
		break;
	case PTP_AUTHORIZE:
		SET("instance_id", vj_u64(m->u.authorize.instance_id));
		SET("token", vj_str(m->u.authorize.token));
		break;
	case PTP_SUBSCRIBE:
	case PTP_UNSUBSCRIBE:
		SET("room", vj_str(m->u.subscribe.room));
		SET("ids", vj_ids(&m->u.subscribe));
		if (m->type == PTP_SUBSCRIBE && m->minor >= 2)
			SET("rate_hz", json_integer(m->u.subscribe.rate_hz));
		break;
	case PTP_KEYFRAME_REQUEST:
		SET("ids", vj_ids(&m->u.subscribe));
		break;
	case PTP_HEAD_POSE: {
		const ptp_head_pose_t *p = &m->u.head_pose;
		SET("instance_id", vj_u64(p->instance_id));
		SET("seq", json_integer(p->seq));
		SET("client_time_us", vj_i64(p->client_time_us));
		SET("flags", json_integer(p->flags));
		SET("p", vj_fs(p->p, 3));
		SET("q", vj_fs(p->q, 4));
		if (p->flags & PTP_POSE_HAS_VELOCITY)
			SET("v", vj_fs(p->v, 3));
		if (p->flags & PTP_POSE_HAS_ANGULAR)
			SET("w", vj_fs(p->w, 3));
		if (p->flags & PTP_POSE_HAS_BONES) {
			json_t *a = json_array();
			for (int i = 0; a && i < p->bone_count; i++) {
				json_t *b = json_object();
				json_object_set_new(b, "bone", json_integer(p->bones[i].bone));
				json_object_set_new(b, "p", vj_fs(p->bones[i].p, 3));
				json_object_set_new(b, "q", vj_fs(p->bones[i].q, 4));
				json_array_append_new(a, b);
			}
			SET("bones", a);
		}
		break;
	}
	case PTP_PING:
		SET("client_time_us", vj_i64(m->u.ping.client_time_us));
		break;
	case PTP_WELCOME: {
		const ptp_welcome_t *w = &m->u.welcome;
		SET("major", json_integer(w->major));
		SET("minor", json_integer(w->minor));
		SET("tick_hz", json_integer(w->tick_hz));
		SET("substeps", json_integer(w->substeps));
		SET("keyframe_interval", json_integer(w->keyframe_interval));
		SET("max_message", json_integer(w->max_message));
		SET("max_subscriptions", json_integer(w->max_subscriptions));
		SET("server_time_us", vj_i64(w->server_time_us));
		SET("tick", vj_u64(w->tick));
		SET("server_version", vj_str(w->server_version));
		if (m->minor >= 1)
			SET("max_error_m", json_real(w->max_error_m));
		break;
	}
	case PTP_FRAME_BATCH: {
		json_t *recs = json_array();
		ptp_record_t r;
		size_t off = 0;
		SET("tick", vj_u64(m->u.frame_batch.tick));
		SET("server_time_us", vj_i64(m->u.frame_batch.server_time_us));
		while (ptp_record_next(&m->u.frame_batch, &off, &r))
			json_array_append_new(recs, vj_record(&r));
		SET("records", recs);
		break;
	}
	case PTP_INSTANCE_EVENT: {
		const ptp_instance_event_t *e = &m->u.instance_event;
		SET("kind", json_string(vj_kinds[e->kind]));
		SET("instance_id", vj_u64(e->instance_id));
		SET("tick", vj_u64(e->tick));
		if (e->kind != PTP_EVENT_REMOVED) {
			json_t *sh = json_array();
			SET("name", vj_str(e->name));
			SET("room", vj_str(e->room));
			for (int i = 0; i < e->shape.strand_count; i++) {
				const ptp_shape_strand_t *s = &e->shape.strands[i];
				json_t *so = json_object();
				json_object_set_new(so, "points", json_integer(s->points));
				json_object_set_new(so, "segment_length",
				                    json_real(s->segment_length));
				json_object_set_new(so, "anchor", vj_fs(s->anchor, 3));
				json_object_set_new(so, "direction", vj_fs(s->direction, 3));
				json_array_append_new(sh, so);
			}
			SET("shape", sh);
		}
		break;
	}
	case PTP_PONG:
		SET("client_time_us", vj_i64(m->u.pong.client_time_us));
		SET("server_time_us", vj_i64(m->u.pong.server_time_us));
		break;
	case PTP_ERROR:
		SET("code", json_integer(m->u.error.code));
		SET("flags", json_integer(m->u.error.flags));
		SET("about_type", json_integer(m->u.error.about_type));
		SET("instance_id", vj_u64(m->u.error.instance_id));
		SET("text", vj_str(m->u.error.text));
		if (m->minor >= PTP_MINOR_GRAB) /* 1.5 appends the ref */
			SET("ref", json_integer(m->u.error.ref));
		break;
	case PTP_GRAB:
		SET("ref", json_integer(m->u.grab.ref));
		SET("instance_id", vj_u64(m->u.grab.instance_id));
		SET("by", vj_u64(m->u.grab.by));
		SET("strand", json_integer(m->u.grab.strand));
		SET("point", json_integer(m->u.grab.point));
		SET("bone", json_integer(m->u.grab.bone));
		break;
	case PTP_RELEASE:
	case PTP_GRAB_RESULT: /* the same three fields */
		SET("ref", json_integer(m->u.release.ref));
		SET("instance_id", vj_u64(m->u.release.instance_id));
		SET("grab_id", vj_u64(m->u.release.grab_id));
		break;
	}
#undef SET
	return o;
}

/* Numbers compare by value (the JSON writer may print 1 for 1.0); objects by key set. */
static int vj_equal(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	if (json_typeof(a) != json_typeof(b))
		return 0;
	if (json_is_array(a)) {
		if (json_array_size(a) != json_array_size(b))
			return 0;
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!vj_equal(json_array_get(a, i), json_array_get(b, i)))
				return 0;
		return 1;
	}
	if (json_is_object(a)) {
		const char *k;
		json_t *v;
		if (json_object_size(a) != json_object_size(b))
			return 0;
		json_object_foreach((json_t *)(uintptr_t)a, k, v)
		{
			json_t *w = json_object_get(b, k);
			if (!w || !vj_equal(v, w))
				return 0;
		}
		return 1;
	}
	return json_equal(a, b);
}

static int vj_floats(const json_t *a, float *out, int n)
{
	if (!json_is_array(a) || (int)json_array_size(a) != n)
		return 0;
	for (int i = 0; i < n; i++) {
		json_t *x = json_array_get(a, (size_t)i);
		if (!json_is_number(x))
			return 0;
		out[i] = (float)json_number_value(x);
		if ((double)out[i] != json_number_value(x))
			return 0; /* the vectors hold exact f32 values */
	}
	return 1;
}

/* [[x, y, z], ...] with exactly n points. */
static int vj_points(const json_t *a, float *out, size_t n)
{
	if (!json_is_array(a) || json_array_size(a) != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!vj_floats(json_array_get(a, i), out + 3 * i, 3))
			return 0;
	return 1;
}

static int vj_shape(const json_t *a, ptp_shape_t *s)
{
	memset(s, 0, sizeof *s);
	if (!json_is_array(a) || json_array_size(a) > PTP_MAX_STRANDS)
		return 0;
	s->strand_count = (uint16_t)json_array_size(a);
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *o = json_array_get(a, i);
		ptp_shape_strand_t *st = &s->strands[i];
		st->points = (uint8_t)json_integer_value(json_object_get(o, "points"));
		st->segment_length = (float)json_number_value(json_object_get(o, "segment_length"));
		if (!vj_floats(json_object_get(o, "anchor"), st->anchor, 3) ||
		    !vj_floats(json_object_get(o, "direction"), st->direction, 3))
			return 0;
	}
	return 1;
}

static uint64_t vj_get_u64(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? strtoull(s, NULL, 10) : 0;
}

static int64_t vj_get_i64(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? strtoll(s, NULL, 10) : 0;
}

static long long vj_get_int(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static ptp_str_t vj_get_str(const json_t *o, const char *k)
{
	json_t *s = json_object_get(o, k);
	ptp_str_t v = {json_string_value(s), json_string_length(s)};
	if (!v.ptr)
		v.ptr = "";
	return v;
}

static int vj_get_ids(const json_t *o, ptp_ids_t *m)
{
	json_t *a = json_object_get(o, "ids");
	if (!json_is_array(a) || json_array_size(a) > PTP_MAX_IDS)
		return 0;
	m->count = (uint16_t)json_array_size(a);
	for (size_t i = 0; i < json_array_size(a); i++)
		m->ids[i] = strtoull(json_string_value(json_array_get(a, i)), NULL, 10);
	return 1;
}

/* Records of a frame batch, encoded back to back into an arena buffer. */
static int vj_get_records(const json_t *o, ptp_frame_batch_t *b, vj_arena_t *arena)
{
	json_t *a = json_object_get(o, "records");
	uint8_t *buf = vj_alloc(arena, 65536), *data = vj_alloc(arena, 65536);
	size_t len = 0;
	if (!json_is_array(a) || !buf || !data)
		return 0;
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *r = json_array_get(a, i), *q = json_object_get(r, "head_q");
		const char *hex = json_string_value(json_object_get(r, "data"));
		ptp_record_t rec;
		size_t need;
		memset(&rec, 0, sizeof rec);
		rec.id = vj_get_u64(r, "id");
		rec.flags = (uint8_t)vj_get_int(r, "flags");
		rec.step = (uint8_t)vj_get_int(r, "step"); /* absent: 0, written as 1 */
		rec.last_seq = (uint32_t)vj_get_int(r, "last_seq");
		rec.head_q.largest = (uint8_t)vj_get_int(q, "largest");
		for (int k = 0; k < 3; k++)
			rec.head_q.c[k] = (int16_t)json_integer_value(
			    json_array_get(json_object_get(q, "c"), (size_t)k));
		if (!vj_floats(json_object_get(r, "head_p"), rec.head_p, 3) || !hex)
			return 0;
		rec.data_len = (uint16_t)(strlen(hex) / 2);
		if (!vj_hex(hex, data, rec.data_len))
			return 0;
		rec.data = data;
		rec.has_hash = json_object_get(r, "state_hash") != NULL;
		rec.state_hash = vj_get_u64(r, "state_hash");
		if (ptp_record_encode(&rec, buf + len, 65536 - len, &need) != PTP_OK)
			return 0;
		len += need;
	}
	b->count = (uint16_t)json_array_size(a);
	b->records = buf;
	b->records_len = len;
	return 1;
}

static int vj_to_msg(const json_t *o, ptp_msg_t *m, vj_arena_t *arena)
{
	int type = ptp_type_from_name(json_string_value(json_object_get(o, "type")));
	if (type < 0)
		return 0;
	m->type = (ptp_type_t)type;
	m->minor = (uint8_t)vj_get_int(o, "header_minor"); /* absent: 0 */
	switch (m->type) {
	case PTP_HELLO:
		m->u.hello.major = (uint8_t)vj_get_int(o, "major");
		m->u.hello.minor = (uint8_t)vj_get_int(o, "minor");
		m->u.hello.client_name = vj_get_str(o, "client_name");
		m->u.hello.features = (uint8_t)vj_get_int(o, "features");
		return 1;
	case PTP_AUTHORIZE:
		m->u.authorize.instance_id = vj_get_u64(o, "instance_id");
		m->u.authorize.token = vj_get_str(o, "token");
		return 1;
	case PTP_SUBSCRIBE:
	case PTP_UNSUBSCRIBE:
		m->u.subscribe.room = vj_get_str(o, "room");
		m->u.subscribe.rate_hz = (uint8_t)vj_get_int(o, "rate_hz"); /* absent: 0 */
		return vj_get_ids(o, &m->u.subscribe);
	case PTP_KEYFRAME_REQUEST:
		return vj_get_ids(o, &m->u.subscribe);
	case PTP_HEAD_POSE: {
		ptp_head_pose_t *p = &m->u.head_pose;
		p->instance_id = vj_get_u64(o, "instance_id");
		p->seq = (uint32_t)vj_get_int(o, "seq");
		p->client_time_us = vj_get_i64(o, "client_time_us");
		p->flags = (uint8_t)vj_get_int(o, "flags");
		if ((p->flags & PTP_POSE_HAS_VELOCITY) &&
		    !vj_floats(json_object_get(o, "v"), p->v, 3))
			return 0;
		if ((p->flags & PTP_POSE_HAS_ANGULAR) &&
		    !vj_floats(json_object_get(o, "w"), p->w, 3))
			return 0;
		if (p->flags & PTP_POSE_HAS_BONES) {
			const json_t *a = json_object_get(o, "bones");
			if (!json_is_array(a) || json_array_size(a) > PTP_MAX_POSE_BONES)
				return 0;
			p->bone_count = (uint8_t)json_array_size(a);
			for (int i = 0; i < p->bone_count; i++) {
				const json_t *b = json_array_get(a, (size_t)i);
				p->bones[i].bone = (uint8_t)vj_get_int(b, "bone");
				if (!vj_floats(json_object_get(b, "p"), p->bones[i].p, 3) ||
				    !vj_floats(json_object_get(b, "q"), p->bones[i].q, 4))
					return 0;
			}
		}
		return vj_floats(json_object_get(o, "p"), p->p, 3) &&
		       vj_floats(json_object_get(o, "q"), p->q, 4);
	}
	case PTP_PING:
		m->u.ping.client_time_us = vj_get_i64(o, "client_time_us");
		return 1;
	case PTP_WELCOME: {
		ptp_welcome_t *w = &m->u.welcome;
		w->major = (uint8_t)vj_get_int(o, "major");
		w->minor = (uint8_t)vj_get_int(o, "minor");
		w->tick_hz = (uint16_t)vj_get_int(o, "tick_hz");
		w->substeps = (uint8_t)vj_get_int(o, "substeps");
		w->keyframe_interval = (uint16_t)vj_get_int(o, "keyframe_interval");
		w->max_message = (uint32_t)vj_get_int(o, "max_message");
		w->max_subscriptions = (uint16_t)vj_get_int(o, "max_subscriptions");
		w->server_time_us = vj_get_i64(o, "server_time_us");
		w->tick = vj_get_u64(o, "tick");
		w->server_version = vj_get_str(o, "server_version");
		if (m->minor >= 1) {
			json_t *e = json_object_get(o, "max_error_m");
			w->max_error_m = (float)json_number_value(e);
			return json_is_number(e) && (double)w->max_error_m == json_number_value(e);
		}
		return 1;
	}
	case PTP_FRAME_BATCH:
		m->u.frame_batch.tick = vj_get_u64(o, "tick");
		m->u.frame_batch.server_time_us = vj_get_i64(o, "server_time_us");
		return vj_get_records(o, &m->u.frame_batch, arena);
	case PTP_INSTANCE_EVENT: {
		ptp_instance_event_t *e = &m->u.instance_event;
		const char *kind = json_string_value(json_object_get(o, "kind"));
		for (int k = 1; k <= 4; k++)
			if (kind && strcmp(kind, vj_kinds[k]) == 0)
				e->kind = (uint8_t)k;
		e->instance_id = vj_get_u64(o, "instance_id");
		e->tick = vj_get_u64(o, "tick");
		if (e->kind == PTP_EVENT_REMOVED)
			return 1;
		e->name = vj_get_str(o, "name");
		e->room = vj_get_str(o, "room");
		return vj_shape(json_object_get(o, "shape"), &e->shape);
	}
	case PTP_PONG:
		m->u.pong.client_time_us = vj_get_i64(o, "client_time_us");
		m->u.pong.server_time_us = vj_get_i64(o, "server_time_us");
		return 1;
	case PTP_ERROR:
		m->u.error.code = (uint16_t)vj_get_int(o, "code");
		m->u.error.flags = (uint8_t)vj_get_int(o, "flags");
		m->u.error.about_type = (uint8_t)vj_get_int(o, "about_type");
		m->u.error.instance_id = vj_get_u64(o, "instance_id");
		m->u.error.text = vj_get_str(o, "text");
		m->u.error.ref = (uint32_t)vj_get_int(o, "ref"); /* absent: 0 */
		return 1;
	case PTP_GRAB:
		m->u.grab.ref = (uint32_t)vj_get_int(o, "ref");
		m->u.grab.instance_id = vj_get_u64(o, "instance_id");
		m->u.grab.by = vj_get_u64(o, "by");
		m->u.grab.strand = (uint16_t)vj_get_int(o, "strand");
		m->u.grab.point = (uint8_t)vj_get_int(o, "point");
		m->u.grab.bone = (uint8_t)vj_get_int(o, "bone");
		return 1;
	case PTP_RELEASE:
		m->u.release.ref = (uint32_t)vj_get_int(o, "ref");
		m->u.release.instance_id = vj_get_u64(o, "instance_id");
		m->u.release.grab_id = vj_get_u64(o, "grab_id");
		return 1;
	case PTP_GRAB_RESULT:
		m->u.grab_result.ref = (uint32_t)vj_get_int(o, "ref");
		m->u.grab_result.instance_id = vj_get_u64(o, "instance_id");
		m->u.grab_result.grab_id = vj_get_u64(o, "grab_id");
		return 1;
	}
	return 0;
}

#endif
