/* One WebSocket connection's state: subscriptions and the control-message queue
 * (ws_internal.h); its frame batches are ws_batch.c. Service thread only. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "metrics.h"
#include "sim.h"
#include "ws_internal.h"

/* ---- control queue -------------------------------------------------------------- */

static void queue_bytes(ws_t *ws, conn_t *c, const uint8_t *data, size_t len)
{
	if (c->dead)
		return;
	if (c->q_bytes + len > WS_QUEUE_BYTES) {
		/* The client does not read even its control messages: drop them and close. */
		for (msg_t *m = c->q_head; m;) {
			msg_t *n = m->next;
			free(m);
			m = n;
		}
		c->q_head = c->q_tail = NULL;
		c->q_bytes = 0;
		LOG(LOG_WARN, "ws %s (%s): control queue over %d MiB; closing", c->ip, c->name,
		    WS_QUEUE_BYTES >> 20);
		conn_queue_error(ws, c, PTP_CODE_LIMIT, 0, 0, "too slow: %d MiB of messages unread",
		                 WS_QUEUE_BYTES >> 20);
		c->closing = LWS_CLOSE_STATUS_POLICY_VIOLATION;
		c->dead = 1;
		return;
	}
	msg_t *m = malloc(sizeof *m + LWS_PRE + len);
	if (!m) {
		c->closing = LWS_CLOSE_STATUS_UNEXPECTED_CONDITION;
		c->dead = 1;
		return;
	}
	m->next = NULL;
	m->len = len;
	memcpy(m->buf + LWS_PRE, data, len);
	if (c->q_tail)
		c->q_tail->next = m;
	else
		c->q_head = m;
	c->q_tail = m;
	c->q_bytes += len;
	lws_callback_on_writable(c->wsi);
}

int ws_out_reserve(ws_t *ws, size_t needed)
{
	if (LWS_PRE + needed > ws->out_cap) {
		uint8_t *n = realloc(ws->out, LWS_PRE + needed);
		if (!n)
			return -1;
		ws->out = n;
		ws->out_cap = LWS_PRE + needed;
	}
	return 0;
}

/* Encodes m into ws->out (after LWS_PRE); returns the length or 0 on failure (logged). */
size_t conn_encode_msg(ws_t *ws, const ptp_msg_t *m)
{
	size_t needed = 0;
	ptp_err_t e = ptp_msg_encode(m, NULL, 0, &needed);
	if (e != PTP_OK && e != PTP_ENOSPACE) {
		LOG(LOG_ERROR, "cannot encode %s: %s", ptp_type_name(m->type), ptp_err_name(e));
		return 0;
	}
	if (ws_out_reserve(ws, needed) != 0)
		return 0;
	e = ptp_msg_encode(m, ws->out + LWS_PRE, ws->out_cap - LWS_PRE, &needed);
	return e == PTP_OK ? needed : 0;
}

void conn_queue_msg(ws_t *ws, conn_t *c, const ptp_msg_t *m)
{
	ptp_msg_t v = *m;
	v.minor = (uint8_t)c->minor; /* the negotiated version (1.0 before hello) */
	size_t n = conn_encode_msg(ws, &v);
	if (n)
		queue_bytes(ws, c, ws->out + LWS_PRE, n);
}

void conn_queue_error(ws_t *ws, conn_t *c, ptp_code_t code, int about, uint64_t id, const char *fmt,
                      ...)
{
	char text[PTP_MAX_TEXT + 1];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	int close = 0;
	switch (code) {
	case PTP_CODE_BAD_MESSAGE:
	case PTP_CODE_VERSION:
	case PTP_CODE_HELLO_REQUIRED:
		close = LWS_CLOSE_STATUS_PROTOCOL_ERR;
		break;
	case PTP_CODE_TOO_LARGE:
		close = LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE;
		break;
	case PTP_CODE_INTERNAL:
		close = LWS_CLOSE_STATUS_UNEXPECTED_CONDITION;
		break;
	case PTP_CODE_SHUTDOWN:
		close = 1012; /* "service restart": come back (RFC 6455 registry) */
		break;
	default:
		break;
	}
	if (code != PTP_CODE_SHUTDOWN)
		metrics_add(&metrics.ws_protocol_errors, 1);
	ptp_msg_t m = {.type = PTP_ERROR};
	m.u.error.code = (uint16_t)code;
	m.u.error.flags = close ? PTP_ERROR_CLOSING : 0;
	m.u.error.about_type = (uint8_t)about;
	m.u.error.instance_id = id;
	m.u.error.text = (ptp_str_t){text, strnlen(text, PTP_MAX_TEXT)};
	conn_queue_msg(ws, c, &m);
	if (close) {
		/* The closing error is the last message; the close frame follows it. */
		c->closing = close;
		c->dead = 1;
		if (code != PTP_CODE_SHUTDOWN)
			LOG(LOG_INFO, "ws %s (%s): closing after error %d: %s", c->ip, c->name,
			    code, text);
	}
}

/* ---- subscriptions -------------------------------------------------------------- */

int conn_find_id(const conn_t *c, uint64_t id)
{
	int lo = 0, hi = c->nids - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		if (c->ids[mid] == id)
			return mid;
		if (c->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -lo - 1;
}

static int find_room(const conn_t *c, const char *room)
{
	for (int i = 0; i < c->nrooms; i++)
		if (strcmp(c->rooms[i], room) == 0)
			return i;
	return -1;
}

int conn_covers(const conn_t *c, uint64_t id, const char *room)
{
	return conn_find_id(c, id) >= 0 || find_room(c, room) >= 0;
}

int conn_fits(const conn_t *c, const inst_meta_t *m)
{
	return c->minor >= 3 || m->shape.strand_count <= PTP_MAX_STRANDS_1_2;
}

/* An instance the connection covers but cannot be sent (conn_fits): said once, in an
 * error that names it; the connection gets no event and no record of it. */
static void say_unfit(ws_t *ws, conn_t *c, const inst_meta_t *m, int about)
{
	conn_queue_error(ws, c, PTP_CODE_LIMIT, about, m->id,
	                 "instance %llu has %d strands: protocol 1.%d carries %d (1.3 carries %d)",
	                 (unsigned long long)m->id, m->shape.strand_count, c->minor,
	                 (int)PTP_MAX_STRANDS_1_2, (int)PTP_MAX_STRANDS);
}

static void set_subs(ws_t *ws, int delta)
{
	ws->subs = (uint64_t)((int64_t)ws->subs + delta);
	metrics_set(&metrics.ws_subscriptions, ws->subs);
}

/* Makes sure last_sent covers every slot of the current frame set. */
int conn_sent_fit(ws_t *ws, conn_t *c)
{
	int need = ws->fs ? ws->fs->nslots : 0;
	if (need <= c->cap_sent)
		return 0;
	int nc = c->cap_sent ? c->cap_sent : 64;
	while (nc < need)
		nc *= 2;
	uint32_t *n = realloc(c->last_sent, (size_t)nc * sizeof *n);
	if (!n)
		return -1;
	memset(n + c->cap_sent, 0, (size_t)(nc - c->cap_sent) * sizeof *n);
	c->last_sent = n;
	uint8_t *ls = realloc(c->last_stream, (size_t)nc);
	if (!ls)
		return -1; /* last_sent is bigger than cap_sent says: harmless */
	memset(ls + c->cap_sent, 0, (size_t)(nc - c->cap_sent));
	c->last_stream = ls;
	c->cap_sent = nc;
	return 0;
}

/* The connection's coding: FRAME_COMPACT when its hello asked for it, else classic. */
int conn_coding(const conn_t *c)
{
	return c->compact ? FRAME_COMPACT : FRAME_CLASSIC;
}

/* The stream of a rate index for this connection: slowed by backpressure (`down`),
 * mapped to the stream that rate shares in the connection's coding (frame_rate_stream). */
int conn_rate_stream(const ws_t *ws, const conn_t *c, int rate)
{
	if (c->down > rate)
		rate = c->down;
	/* 1.0/1.1 decoders know no step (PROTOCOL.md 6): every tick, as before rates */
	return c->minor >= 2 ? frame_rate_stream(ws->app->cfg->tick_hz, conn_coding(c), rate) : 0;
}

/* The rate index of the fastest subscription covering slot (its id, its room; the
 * slowest rate when none does). at: slot's index in c->ids, or < 0 (-1: look it up). */
int conn_slot_rate(const ws_t *ws, const conn_t *c, int slot, int at)
{
	const frame_entry_t *e = &ws->fs->entries[slot];
	int rate = FRAME_RATES - 1;
	if (at == -1)
		at = conn_find_id(c, e->id);
	if (at >= 0 && c->id_rate[at] < rate)
		rate = c->id_rate[at];
	int r = e->meta && c->nrooms ? find_room(c, e->meta->room) : -1;
	if (r >= 0 && c->room_rate[r] < rate)
		rate = c->room_rate[r];
	return rate;
}

/* The rate stream this connection takes slot's records from. */
static int slot_stream(const ws_t *ws, const conn_t *c, int slot)
{
	return conn_rate_stream(ws, c, conn_slot_rate(ws, c, slot, -1));
}

static int grow_rooms(conn_t *c)
{
	int nc = c->cap_rooms ? c->cap_rooms * 2 : 4;
	void *n = realloc(c->rooms, (size_t)nc * sizeof *c->rooms);
	if (!n)
		return -1;
	c->rooms = n;
	uint8_t *nr = realloc(c->room_rate, (size_t)nc);
	if (!nr)
		return -1;
	c->room_rate = nr;
	int *nh = realloc(c->room_hint, (size_t)nc * sizeof *nh);
	if (!nh)
		return -1;
	c->room_hint = nh;
	c->cap_rooms = nc;
	return 0;
}

/* The subscription now covers slot: tell the client the shape, and make its next record
 * a keyframe (the client builds a fresh decoder from the shape). */
static void announce(ws_t *ws, conn_t *c, int slot, uint8_t kind)
{
	const frame_entry_t *e = &ws->fs->entries[slot];
	const inst_meta_t *m = e->meta;
	if (!conn_fits(c, m)) {
		say_unfit(ws, c, m, PTP_SUBSCRIBE);
		return;
	}
	ptp_msg_t msg = {.type = PTP_INSTANCE_EVENT};
	ptp_instance_event_t *ev = &msg.u.instance_event;
	ev->kind = kind;
	ev->instance_id = m->id;
	ev->tick = ws->fs->tick;
	ev->name = (ptp_str_t){m->name, strlen(m->name)};
	ev->room = (ptp_str_t){m->room, strlen(m->room)};
	ptp_shape_copy(&ev->shape, &m->shape);
	conn_queue_msg(ws, c, &msg);
	if (conn_sent_fit(ws, c) == 0)
		c->last_sent[slot] = 0;
	int st = slot_stream(ws, c, slot);
	frame_ring_watch(ws->app->ring, slot, conn_coding(c), st, ws->fs->tick + WS_WATCH_TICKS);
	frame_ring_request_key(ws->app->ring, m->id, conn_coding(c), st);
}

/* A new rate for a subscription already held: the next record of each instance it
 * covers comes from another stream, so it is a keyframe (write_batch sees the change). */
static void set_rate(uint8_t *have, int rate)
{
	*have = (uint8_t)rate;
}

void conn_subscribe(ws_t *ws, conn_t *c, const ptp_ids_t *s, int about)
{
	const frame_set_t *fs = ws->fs;
	int max = ws->app->cfg->max_subscriptions;
	/* the decoder let only 0, 60, 30, 20 and 10 through (PROTOCOL.md 5) */
	int rate = frame_rate_index(s->rate_hz);
	if (rate < 0)
		rate = 0;
	if (s->room.len > 0) {
		char room[PTP_MAX_NAME + 1];
		memcpy(room, s->room.ptr, s->room.len);
		room[s->room.len] = '\0';
		int have = find_room(c, room);
		if (have >= 0) {
			set_rate(&c->room_rate[have], rate); /* already subscribed: the new rate */
		} else if (c->nids + c->nrooms >= max) {
			conn_queue_error(ws, c, PTP_CODE_LIMIT, about, 0,
			                 "at most %d subscriptions per connection", max);
		} else if (c->nrooms == c->cap_rooms && grow_rooms(c) != 0) {
			conn_queue_error(ws, c, PTP_CODE_INTERNAL, about, 0, "out of memory");
			return;
		} else {
			int r = fs ? frame_set_find_room(fs, room) : -1;
			int n = c->nrooms;
			memcpy(c->rooms[n], room, s->room.len + 1);
			c->room_rate[n] = (uint8_t)rate;
			c->room_hint[n] = r;
			c->nrooms = n + 1; /* before announcing: slot_stream sees the room's rate */
			for (int i = 0; r >= 0 && i < fs->rooms[r].count; i++) {
				int slot = fs->room_slots[fs->rooms[r].first + i];
				if (conn_find_id(c, fs->entries[slot].id) < 0) /* else announced already */
					announce(ws, c, slot, PTP_EVENT_ADDED);
			}
			set_subs(ws, 1);
		}
	}
	for (int i = 0; i < s->count; i++) {
		uint64_t id = s->ids[i];
		int slot = fs ? frame_set_find(fs, id) : -1;
		int at = conn_find_id(c, id);
		if (slot < 0) {
			conn_queue_error(ws, c, PTP_CODE_NOT_FOUND, about, id, "no instance %llu",
			                 (unsigned long long)id);
			continue;
		}
		if (at >= 0) {
			set_rate(&c->id_rate[at], rate); /* already subscribed: the new rate */
			continue;
		}
		if (c->nids + c->nrooms >= max) {
			conn_queue_error(ws, c, PTP_CODE_LIMIT, about, id,
			                 "at most %d subscriptions per connection", max);
			continue;
		}
		if (c->nids == c->cap_ids) {
			int nc = c->cap_ids ? c->cap_ids * 2 : 16;
			uint64_t *n = realloc(c->ids, (size_t)nc * sizeof *n);
			if (!n) {
				conn_queue_error(ws, c, PTP_CODE_INTERNAL, about, 0,
				                 "out of memory");
				return;
			}
			c->ids = n;
			uint8_t *nr = realloc(c->id_rate, (size_t)nc);
			if (!nr) {
				conn_queue_error(ws, c, PTP_CODE_INTERNAL, about, 0,
				                 "out of memory");
				return;
			}
			c->id_rate = nr;
			c->cap_ids = nc;
		}
		int covered = find_room(c, fs->entries[slot].meta->room) >= 0;
		at = -at - 1;
		memmove(&c->ids[at + 1], &c->ids[at], (size_t)(c->nids - at) * sizeof *c->ids);
		memmove(&c->id_rate[at + 1], &c->id_rate[at], (size_t)(c->nids - at));
		c->ids[at] = id;
		c->id_rate[at] = (uint8_t)rate;
		c->nids++;
		if (!covered)
			announce(ws, c, slot, PTP_EVENT_ADDED);
		set_subs(ws, 1);
	}
}

void conn_unsubscribe(ws_t *ws, conn_t *c, const ptp_ids_t *s)
{
	if (s->room.len > 0) {
		char room[PTP_MAX_NAME + 1];
		memcpy(room, s->room.ptr, s->room.len);
		room[s->room.len] = '\0';
		int r = find_room(c, room);
		if (r >= 0) {
			memmove(c->rooms[r], c->rooms[r + 1],
			        (size_t)(c->nrooms - r - 1) * sizeof *c->rooms);
			memmove(&c->room_rate[r], &c->room_rate[r + 1], (size_t)(c->nrooms - r - 1));
			memmove(&c->room_hint[r], &c->room_hint[r + 1],
			        (size_t)(c->nrooms - r - 1) * sizeof *c->room_hint);
			c->nrooms--;
			set_subs(ws, -1);
		}
	}
	for (int i = 0; i < s->count; i++) {
		int at = conn_find_id(c, s->ids[i]);
		if (at < 0)
			continue;
		memmove(&c->ids[at], &c->ids[at + 1], (size_t)(c->nids - at - 1) * sizeof *c->ids);
		memmove(&c->id_rate[at], &c->id_rate[at + 1], (size_t)(c->nids - at - 1));
		c->nids--;
		set_subs(ws, -1);
	}
}

void conn_keyframes(ws_t *ws, conn_t *c, const ptp_ids_t *s)
{
	for (int i = 0; i < s->count; i++) {
		int slot = ws->fs ? frame_set_find(ws->fs, s->ids[i]) : -1;
		if (slot < 0)
			continue; /* gone; its removed event is on the way */
		if (conn_sent_fit(ws, c) == 0)
			c->last_sent[slot] = 0;
		frame_ring_request_key(ws->app->ring, s->ids[i], conn_coding(c),
		                       slot_stream(ws, c, slot));
	}
}

/* The message of one event as seen by one connection: an instance that moved between
 * rooms, or grew past or shrank below what a 1.0-1.2 connection carries (conn_fits), is
 * "added" for a connection that now sees it and did not, "removed" for one that saw it
 * and no longer does, "changed" for one that sees it in both. */
static uint8_t kind_for(const conn_t *c, const frame_event_t *ev)
{
	const inst_meta_t *m = ev->meta;
	int now = conn_covers(c, m->id, m->room) && conn_fits(c, m);
	if (ev->kind != PTP_EVENT_CHANGED || !ev->old)
		return now ? ev->kind : 0;
	int before = conn_covers(c, m->id, ev->old->room) && conn_fits(c, ev->old);
	return now && before ? PTP_EVENT_CHANGED
	       : now         ? PTP_EVENT_ADDED
	       : before      ? PTP_EVENT_REMOVED
	                     : 0;
}

void conn_event(ws_t *ws, const frame_event_t *ev)
{
	const inst_meta_t *m = ev->meta;
	/* Encoded once per kind and negotiated minor (a 1.3 shape may not fit a 1.0 one);
	 * copied out of ws->out, which queue_bytes may reuse for an error message of its own. */
	uint8_t *bytes[5][PTP_MINOR + 1] = {{0}};
	size_t n[5][PTP_MINOR + 1] = {{0}};
	for (conn_t *c = ws->conns; c; c = c->next) {
		uint8_t kind = c->hello ? kind_for(c, ev) : 0;
		/* covered from now on but too large for it (new, grown or moved in): said once,
		 * after the "removed" of one it had */
		int unfit = c->hello && ev->kind != PTP_EVENT_REMOVED && !conn_fits(c, m) &&
		            conn_covers(c, m->id, m->room) &&
		            (!ev->old || conn_fits(c, ev->old) ||
		             !conn_covers(c, m->id, ev->old->room));
		if (!kind) {
			if (unfit)
				say_unfit(ws, c, m, 0);
			continue;
		}
		uint8_t **b = &bytes[kind][c->minor];
		size_t *nb = &n[kind][c->minor];
		if (!*b) {
			ptp_msg_t msg = {.type = PTP_INSTANCE_EVENT, .minor = (uint8_t)c->minor};
			ptp_instance_event_t *e = &msg.u.instance_event;
			e->kind = kind;
			e->instance_id = m->id;
			e->tick = ev->tick;
			if (kind != PTP_EVENT_REMOVED) {
				e->name = (ptp_str_t){m->name, strlen(m->name)};
				e->room = (ptp_str_t){m->room, strlen(m->room)};
				ptp_shape_copy(&e->shape, &m->shape);
			}
			*nb = conn_encode_msg(ws, &msg);
			*b = *nb ? malloc(*nb) : NULL;
			if (!*b)
				break;
			memcpy(*b, ws->out + LWS_PRE, *nb);
		}
		queue_bytes(ws, c, *b, *nb);
		if (kind == PTP_EVENT_ADDED) {
			/* New to this connection: its first record must be a keyframe. */
			int slot = ws->fs ? frame_set_find(ws->fs, m->id) : -1;
			if (slot >= 0 && conn_sent_fit(ws, c) == 0)
				c->last_sent[slot] = 0;
			/* The set may not hold it yet (its first tick): stream 0 until then. */
			frame_ring_request_key(ws->app->ring, m->id, conn_coding(c),
			                       slot >= 0 ? slot_stream(ws, c, slot) : 0);
		}
		if (ev->kind == PTP_EVENT_REMOVED) {
			int at = conn_find_id(c, m->id);
			if (at >= 0) {
				memmove(&c->ids[at], &c->ids[at + 1],
				        (size_t)(c->nids - at - 1) * sizeof *c->ids);
				memmove(&c->id_rate[at], &c->id_rate[at + 1], (size_t)(c->nids - at - 1));
				c->nids--;
				set_subs(ws, -1);
			}
		}
		if (unfit)
			say_unfit(ws, c, m, 0);
	}
	for (int k = 0; k < 5; k++)
		for (int v = 0; v <= PTP_MINOR; v++)
			free(bytes[k][v]);
}

void conn_free(ws_t *ws, conn_t *c)
{
	for (msg_t *m = c->q_head; m;) {
		msg_t *n = m->next;
		free(m);
		m = n;
	}
	set_subs(ws, -(c->nids + c->nrooms));
	if (c->down > 0)
		metrics_add(&metrics.ws_conns_slowed, (uint64_t)-1);
	c->down = 0;
	free(c->ids);
	free(c->id_rate);
	free(c->rooms);
	free(c->room_rate);
	free(c->room_hint);
	free(c->last_sent);
	free(c->last_stream);
	c->q_head = c->q_tail = NULL;
	c->ids = NULL;
	c->id_rate = NULL;
	c->rooms = NULL;
	c->room_rate = NULL;
	c->room_hint = NULL;
	c->last_sent = NULL;
	c->last_stream = NULL;
	c->nids = c->nrooms = 0;
}
