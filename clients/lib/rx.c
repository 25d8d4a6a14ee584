/* Received messages: welcome, frame batches (records decoded into points, latency),
 * instance events (shapes and decoders), pongs (round trip, clock offset) and errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptc_internal.h"

static const char *const code_names[] = {
    "error",     "bad_message", "version", "unknown_type",   "too_large", "unauthorized",
    "not_found", "limit",       "rate",    "hello_required", "internal",  "shutdown",
};

/* ---- instances ------------------------------------------------------------------------- */

static int inst_find(const ptc_conn_t *c, uint64_t id, int *at)
{
	int lo = 0, hi = c->ninst;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (c->inst[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return lo < c->ninst && c->inst[lo]->id == id;
}

static void inst_free(ptc_inst_t *in)
{
	if (in) {
		ptp_decoder_destroy(in->dec);
		free(in->xyz);
		free(in);
	}
}

void ptc_rx_forget(ptc_conn_t *c)
{
	for (int i = 0; i < c->ninst; i++)
		inst_free(c->inst[i]);
	c->ninst = 0;
}

static int same_shape(const ptp_shape_t *a, const ptp_shape_t *b)
{
	if (a->strand_count != b->strand_count)
		return 0;
	for (int s = 0; s < a->strand_count; s++) {
		const ptp_shape_strand_t *x = &a->strands[s], *y = &b->strands[s];
		if (x->points != y->points || x->segment_length != y->segment_length ||
		    memcmp(x->anchor, y->anchor, sizeof x->anchor) != 0 ||
		    memcmp(x->direction, y->direction, sizeof x->direction) != 0)
			return 0;
	}
	return 1;
}

/* Applies an added/changed/reset event: the instance's shape, a decoder for it. */
static ptc_inst_t *inst_update(ptc_conn_t *c, const ptp_instance_event_t *e)
{
	int at;
	ptc_inst_t *in = inst_find(c, e->instance_id, &at) ? c->inst[at] : NULL;
	if (in && same_shape(&in->shape, &e->shape)) {
		if (in->dec)
			ptp_decoder_reset(in->dec); /* a keyframe follows the event */
	} else {
		size_t n = (size_t)ptp_shape_point_count(&e->shape);
		ptc_inst_t *nw = calloc(1, sizeof *nw);
		float *xyz = nw ? calloc(3 * n, sizeof *xyz) : NULL;
		ptp_decoder_t *dec = xyz && c->p.decode ? ptp_decoder_create(&e->shape) : NULL;
		if (!xyz || (c->p.decode && !dec)) {
			free(nw);
			free(xyz);
			ptp_decoder_destroy(dec);
			return NULL;
		}
		if (!in) {
			if (c->ninst == c->cap_inst) {
				int cap = c->cap_inst ? 2 * c->cap_inst : 8;
				ptc_inst_t **ni = realloc(c->inst, (size_t)cap * sizeof *ni);
				if (!ni) {
					free(nw);
					free(xyz);
					ptp_decoder_destroy(dec);
					return NULL;
				}
				c->inst = ni;
				c->cap_inst = cap;
			}
			memmove(c->inst + at + 1, c->inst + at,
			        (size_t)(c->ninst - at) * sizeof *c->inst);
			c->ninst++;
		} else {
			nw->last_seq = in->last_seq;
			nw->have_seq = in->have_seq;
			inst_free(in);
		}
		nw->id = e->instance_id;
		nw->shape = e->shape;
		nw->dec = dec;
		nw->xyz = xyz;
		nw->n = n;
		c->inst[at] = in = nw;
	}
	snprintf(in->name, sizeof in->name, "%.*s", (int)e->name.len, e->name.ptr);
	snprintf(in->room, sizeof in->room, "%.*s", (int)e->room.len, e->room.ptr);
	return in;
}

static void inst_remove(ptc_conn_t *c, uint64_t id)
{
	int at;
	if (!inst_find(c, id, &at))
		return;
	inst_free(c->inst[at]);
	memmove(c->inst + at, c->inst + at + 1, (size_t)(c->ninst - at - 1) * sizeof *c->inst);
	c->ninst--;
}

/* ---- messages ---------------------------------------------------------------------------- */

static void drop_connection(ptc_conn_t *c, const char *why)
{
	snprintf(c->close_reason, sizeof c->close_reason, "%s", why);
	if (c->wsi)
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
}

static void on_welcome(ptc_conn_t *c, const ptp_welcome_t *w)
{
	if (c->state == PTC_READY)
		return; /* one per session */
	ptc_server_t *s = &c->server;
	s->minor = w->minor;
	s->tick_hz = w->tick_hz;
	s->substeps = w->substeps;
	s->keyframe_interval = w->keyframe_interval;
	s->max_message = w->max_message;
	s->max_subscriptions = w->max_subscriptions;
	s->tick = w->tick;
	s->max_error_m = w->minor >= 1 ? w->max_error_m : 0.001f; /* 1.0 servers: 1 mm */
	snprintf(s->version, sizeof s->version, "%.*s", (int)w->server_version.len,
	         w->server_version.ptr);
	c->have_server = 1;
	c->attempts = 0;
	c->last_tick = 0;
	c->st.connects++;
	ptc_conn_set_state(c, PTC_READY, NULL);
	if (c->user_closed || c->state != PTC_READY)
		return;
	ptc_conn_resend_state(c);
	ptc_ping(c);
	ptc_conn_ping_schedule(c);
}

/* The first pose a record reflects that the connection's previous record of the
 * instance (last_seq prev) did not: prev + 1, or last itself when the gap is beyond the
 * publish times kept (a restarted publisher, a resubscription) or prev + 1 wraps to 0. */
static uint32_t first_new(uint32_t prev, uint32_t last)
{
	uint32_t gap = last - prev; /* newer by gap, mod 2^32 */
	return gap == 0 || gap > PTC_SEQ_RING || prev + 1 == 0 ? last : prev + 1;
}

int64_t ptc_pose_latency_us(const ptc_conn_t *c, const ptc_frame_t *f, uint32_t seq)
{
	if (!c || !f || !f->first_new_seq || seq - f->first_new_seq > f->last_seq - f->first_new_seq)
		return -1;
	int64_t t = ptc_seq_time(c->ctx, f->id, seq);
	return t >= 0 ? f->recv_us - t : -1;
}

static void on_batch(ptc_conn_t *c, const ptp_frame_batch_t *b, int64_t now)
{
	if (c->state != PTC_READY)
		return;
	c->st.batches++;
	if (c->last_tick && b->tick > c->last_tick + 1)
		c->st.ticks_skipped += b->tick - c->last_tick - 1;
	if (b->tick > c->last_tick)
		c->last_tick = b->tick;
	if (c->p.cb.on_batch)
		c->p.cb.on_batch(c, b->tick, b->server_time_us, b->count, c->p.user);
	ptp_ids_t kf; /* instances whose record failed: ask for keyframes */
	kf.count = 0;
	ptc_frame_t f;
	memset(&f, 0, sizeof f);
	f.tick = b->tick;
	f.t = c->server.tick_hz > 0 ? (double)b->tick / c->server.tick_hz : 0;
	f.server_time_us = b->server_time_us;
	f.recv_us = now;
	f.delivery_us = c->have_offset ? now - (b->server_time_us - c->offset_us) : -1;
	size_t off = 0;
	int hint = 0;
	ptp_record_t r;
	while (!c->user_closed && ptp_record_next(b, &off, &r)) {
		c->st.records++;
		c->st.keyframes += (r.flags & PTP_RECORD_KEY) != 0;
		int at;
		/* Records come in the same order every tick: try the one after the last first. */
		ptc_inst_t *in = NULL;
		if (hint < c->ninst && c->inst[hint]->id == r.id)
			at = hint;
		else if (!inst_find(c, r.id, &at))
			at = -1;
		if (at >= 0) {
			in = c->inst[at];
			hint = at + 1;
		}
		f.id = r.id;
		f.last_seq = r.last_seq;
		f.key = (r.flags & PTP_RECORD_KEY) != 0;
		f.has_hash = r.has_hash;
		f.state_hash = r.state_hash;
		memcpy(f.head_p, r.head_p, sizeof f.head_p);
		ptp_quat16_unpack(&r.head_q, f.head_q);
		f.shape = in ? &in->shape : NULL;
		f.n_points = in ? in->n : 0;
		f.xyz = NULL;
		f.latency_us = -1;
		if (in && in->dec) {
			if (ptp_decoder_apply(in->dec, b->tick, &r, in->xyz, in->n) == PTP_OK) {
				f.xyz = in->xyz;
			} else {
				c->st.decode_errors++;
				if (kf.count < PTP_MAX_IDS)
					kf.ids[kf.count++] = r.id;
			}
		}
		f.first_new_seq = 0;
		if (in && r.last_seq && (!in->have_seq || in->last_seq != r.last_seq)) {
			f.first_new_seq = in->have_seq ? first_new(in->last_seq, r.last_seq) : r.last_seq;
			f.latency_us = ptc_pose_latency_us(c, &f, r.last_seq);
		}
		if (in) {
			in->last_seq = r.last_seq;
			in->have_seq = 1;
		}
		if (c->p.cb.on_frame)
			c->p.cb.on_frame(c, &f, c->p.user);
	}
	if (kf.count && !c->user_closed) {
		ptp_msg_t m;
		memset(&m, 0, sizeof m);
		m.type = PTP_KEYFRAME_REQUEST;
		m.u.subscribe.count = kf.count;
		memcpy(m.u.subscribe.ids, kf.ids, kf.count * sizeof kf.ids[0]);
		ptc_conn_queue(c, &m);
	}
}

static void on_event(ptc_conn_t *c, const ptp_instance_event_t *e)
{
	ptc_event_t ev;
	char name[PTP_MAX_NAME + 1] = "", room[PTP_MAX_NAME + 1] = "";
	memset(&ev, 0, sizeof ev);
	ev.kind = e->kind;
	ev.id = e->instance_id;
	ev.tick = e->tick;
	ev.name = name;
	ev.room = room;
	if (e->kind == PTP_EVENT_REMOVED) {
		inst_remove(c, e->instance_id);
	} else {
		ptc_inst_t *in = inst_update(c, e);
		if (!in) {
			c->st.decode_errors++; /* out of memory: this instance's records go
			                          undecoded */
			inst_remove(c, e->instance_id);
			return;
		}
		snprintf(name, sizeof name, "%s", in->name);
		snprintf(room, sizeof room, "%s", in->room);
		ev.shape = &in->shape;
	}
	if (c->p.cb.on_event)
		c->p.cb.on_event(c, &ev, c->p.user);
}

static void on_pong(ptc_conn_t *c, const ptp_pong_t *p, int64_t now)
{
	int64_t rtt = now - p->client_time_us;
	if (p->client_time_us <= 0 || rtt < 0 || rtt > 60 * 1000000LL)
		return; /* not one of our pings */
	c->st.rtt_us = rtt;
	/* The offset from the exchange with the smallest round trip is the least wrong one;
	 * a sample older than 30 s gives way, clocks drift. */
	if (!c->have_offset || rtt <= c->offset_rtt_us || now - c->offset_at_us > 30000000LL) {
		c->offset_us = p->server_time_us - (p->client_time_us + now) / 2;
		c->offset_rtt_us = rtt;
		c->offset_at_us = now;
		c->have_offset = 1;
	}
}

static void on_error(ptc_conn_t *c, const ptp_error_t *e)
{
	char text[PTP_MAX_TEXT + 1];
	snprintf(text, sizeof text, "%.*s", (int)e->text.len, e->text.ptr);
	int known = e->code >= 1 && e->code <= PTP_CODE_SHUTDOWN;
	c->st.server_errors[known ? e->code : 0]++;
	ptc_error_t pe;
	pe.code = e->code;
	pe.name = code_names[known ? e->code : 0];
	pe.closing = (e->flags & PTP_ERROR_CLOSING) != 0;
	pe.about_type = e->about_type;
	pe.instance_id = e->instance_id;
	pe.text = text;
	if (pe.closing) {
		snprintf(c->close_reason, sizeof c->close_reason, "server error %s: %s", pe.name,
		         text);
		if (e->code == PTP_CODE_VERSION)
			c->give_up = 1; /* another protocol: retrying cannot help */
	}
	if (c->p.cb.on_error)
		c->p.cb.on_error(c, &pe, c->p.user);
}

void ptc_rx_message(ptc_conn_t *c, const uint8_t *buf, size_t len)
{
	int64_t now = ptc_now_us();
	c->st.bytes_in += len;
	c->st.msgs_in++;
	ptp_msg_t *m = &c->ctx->rx_msg; /* ~3 KB: kept off the stack of the lws callback */
	ptp_err_t e = ptp_msg_decode(buf, len, m);
	if (e == PTP_ETYPE)
		return; /* a newer server's message: ignored (PROTOCOL.md section 3) */
	if (e == PTP_EVERSION) {
		c->give_up = 1;
		drop_connection(c, "the server speaks another major version of the protocol");
		return;
	}
	if (e != PTP_OK) {
		c->st.decode_errors++;
		return;
	}
	switch (m->type) {
	case PTP_WELCOME:
		on_welcome(c, &m->u.welcome);
		break;
	case PTP_FRAME_BATCH:
		on_batch(c, &m->u.frame_batch, now);
		break;
	case PTP_INSTANCE_EVENT:
		on_event(c, &m->u.instance_event);
		break;
	case PTP_PONG:
		on_pong(c, &m->u.pong, now);
		break;
	case PTP_ERROR:
		on_error(c, &m->u.error);
		break;
	default:
		c->st.decode_errors++;
		break; /* a client->server type from the server */
	}
}
