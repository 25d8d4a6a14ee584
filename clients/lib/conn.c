/* Connections: the public API (connect, close, authorize, subscribe, publish, ping), the
 * remembered state re-sent after a reconnect, and the send queue (one message per
 * WRITEABLE callback, LWS_PRE headroom, the newest pose of an instance replacing an
 * unsent older one). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ptc_internal.h"

ptc_conn_params_t ptc_conn_params_default(void)
{
	ptc_conn_params_t p;
	memset(&p, 0, sizeof p);
	p.client_name = "ponytail-client";
	p.decode = 1;
	p.reconnect = 1;
	p.backoff_min_ms = 250;
	p.backoff_max_ms = 10000;
	p.ping_interval_ms = 2000;
	return p;
}

/* ---- URLs ------------------------------------------------------------------------------- */

int ptc_url_parse(const char *url, char *host, size_t host_cap, int *port, char *path,
                  size_t path_cap, char *err, size_t errlen)
{
	int tls = url && strncmp(url, "wss://", 6) == 0;
	if (!url || (strncmp(url, "ws://", 5) != 0 && !tls)) {
		snprintf(err, errlen, "expected a ws:// or wss://host[:port][/path] URL, got '%s'",
		         url ? url : "(null)");
		return -1;
	}
	const char *h = url + (tls ? 6 : 5), *e;
	if (*h == '[') { /* [IPv6] */
		e = strchr(h, ']');
		if (!e || e == h + 1) {
			snprintf(err, errlen, "unterminated [IPv6] host in '%s'", url);
			return -1;
		}
		h++;
	} else {
		e = h + strcspn(h, ":/");
	}
	size_t hn = (size_t)(e - h);
	if (hn == 0 || hn >= host_cap) {
		snprintf(err, errlen, "bad host in '%s'", url);
		return -1;
	}
	for (size_t i = 0; i < hn; i++) {
		char ch = h[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		      (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_' ||
		      ch == ':')) {
			snprintf(err, errlen, "bad character '%c' in the host of '%s'", ch, url);
			return -1;
		}
	}
	memcpy(host, h, hn);
	host[hn] = '\0';
	if (*e == ']')
		e++;
	*port = tls ? 443 : 80;
	if (*e == ':') {
		long v = 0;
		const char *d = ++e;
		while (*e >= '0' && *e <= '9' && v <= 65535)
			v = v * 10 + (*e++ - '0');
		if (e == d || v < 1 || v > 65535 || (*e && *e != '/')) {
			snprintf(err, errlen, "bad port in '%s' (expected 1..65535)", url);
			return -1;
		}
		*port = (int)v;
	}
	const char *pa = *e ? e : "/";
	if (*pa != '/' || strlen(pa) >= path_cap) {
		snprintf(err, errlen, "bad path in '%s'", url);
		return -1;
	}
	for (const char *q = pa; *q; q++)
		if ((unsigned char)*q <= 0x20 || (unsigned char)*q >= 0x7f) {
			snprintf(err, errlen, "the path of '%s' must be printable ASCII", url);
			return -1;
		}
	strcpy(path, pa);
	return 0;
}

/* ---- connect / close --------------------------------------------------------------------- */

ptc_conn_t *ptc_connect(ptc_ctx_t *ctx, const ptc_conn_params_t *p, char *err, size_t errlen)
{
	if (!ctx || !p) {
		snprintf(err, errlen, "no context or parameters");
		return NULL;
	}
	ptc_conn_t *c = calloc(1, sizeof *c);
	if (!c) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->p = *p;
	const char *name = p->client_name ? p->client_name : "";
	ptp_msg_t hello;
	memset(&hello, 0, sizeof hello);
	hello.type = PTP_HELLO;
	hello.u.hello.major = PTP_MAJOR;
	hello.u.hello.client_name.ptr = name;
	hello.u.hello.client_name.len = strlen(name);
	size_t need;
	if (ptc_url_parse(p->url, c->host, sizeof c->host, &c->port, c->path, sizeof c->path, err,
	                  errlen) != 0 ||
	    strlen(p->url) >= sizeof c->url) {
		if (p->url && strlen(p->url) >= sizeof c->url)
			snprintf(err, errlen, "URL longer than %zu bytes", sizeof c->url - 1);
		free(c);
		return NULL;
	}
	if (ptp_msg_encode(&hello, NULL, 0, &need) != PTP_ENOSPACE) {
		snprintf(err, errlen, "client_name must be at most %d bytes of UTF-8 without NUL",
		         PTP_MAX_NAME);
		free(c);
		return NULL;
	}
	if (p->backoff_min_ms < 10 || p->backoff_min_ms > 60000 ||
	    p->backoff_max_ms < p->backoff_min_ms || p->backoff_max_ms > 600000 ||
	    (p->ping_interval_ms != 0 &&
	     (p->ping_interval_ms < 100 || p->ping_interval_ms > 600000))) {
		snprintf(err, errlen,
		         "back-off must lie in [10 ms, 10 min] (min <= max), the ping "
		         "interval in [100 ms, 10 min] or 0");
		free(c);
		return NULL;
	}
	strcpy(c->url, p->url);
	strcpy(c->name, name);
	c->tls = strncmp(c->url, "wss://", 6) == 0;
	c->p.url = c->url;
	c->p.client_name = c->name;
	c->ctx = ctx;
	c->st.rtt_us = -1;
	c->next = ctx->conns;
	if (ctx->conns)
		ctx->conns->prev = c;
	ctx->conns = c;
	ptc_conn_start(c);
	return c;
}

void ptc_conn_free(ptc_conn_t *c)
{
	ptc_ctx_t *ctx = c->ctx;
	if (c->prev)
		c->prev->next = c->next;
	else
		ctx->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	if (ctx->lws) {
		lws_sul_cancel(&c->sul_retry);
		lws_sul_cancel(&c->sul_ping);
	}
	ptc_conn_queue_clear(c);
	ptc_rx_forget(c);
	free(c->inst);
	free(c->rx);
	free(c->sub_ids);
	free(c->rooms);
	memset(c->auth, 0, sizeof c->auth); /* tokens */
	free(c);
}

void ptc_close(ptc_conn_t *c)
{
	if (!c || c->user_closed)
		return;
	c->user_closed = 1;
	if (!c->wsi) {
		ptc_conn_free_later(c); /* this may be a callback of c itself */
		return;
	}
	lws_sul_cancel(&c->sul_retry);
	lws_sul_cancel(&c->sul_ping);
	/* An open WebSocket gets a normal close frame from its next WRITEABLE; the timeout
	 * ends it anyway (and ends an attempt still in its handshake at once). */
	if (c->ws_open) {
		lws_callback_on_writable(c->wsi);
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, 2);
	} else {
		lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
	}
}

ptc_state_t ptc_conn_state(const ptc_conn_t *c)
{
	return c ? c->state : PTC_CLOSED;
}

const char *ptc_conn_last_error(const ptc_conn_t *c)
{
	return c ? c->last_error : "";
}

const ptc_server_t *ptc_conn_server(const ptc_conn_t *c)
{
	return c && c->have_server ? &c->server : NULL;
}

void ptc_conn_stats(const ptc_conn_t *c, ptc_stats_t *out)
{
	if (c && out)
		*out = c->st;
}

/* ---- the send queue ---------------------------------------------------------------------- */

static ptc_msg_t *msg_new(size_t cap)
{
	ptc_msg_t *m = malloc(sizeof *m + LWS_PRE + cap);
	if (m) {
		m->next = NULL;
		m->pose_id = 0;
		m->len = 0;
		m->cap = cap;
	}
	return m;
}

static void msg_append(ptc_conn_t *c, ptc_msg_t *m)
{
	if (c->q_tail)
		c->q_tail->next = m;
	else
		c->q_head = m;
	c->q_tail = m;
	c->q_len++;
	if (c->wsi && c->ws_open)
		lws_callback_on_writable(c->wsi);
}

int ptc_conn_queue(ptc_conn_t *c, const ptp_msg_t *ms)
{
	size_t need = 0;
	ptp_msg_t copy = *ms, *m = &copy;
	copy.minor = (uint8_t)(c->state == PTC_READY ? c->server.minor : 0); /* negotiated */
	if (ptp_msg_encode(m, NULL, 0, &need) != PTP_ENOSPACE)
		return PTC_EINVAL;
	if (c->q_len >= PTC_QUEUE_MAX_MSGS)
		return PTC_EFULL;
	ptc_msg_t *q = msg_new(need);
	if (!q)
		return PTC_ENOMEM;
	if (ptp_msg_encode(m, q->buf + LWS_PRE, need, &q->len) != PTP_OK) {
		free(q);
		return PTC_EINVAL;
	}
	msg_append(c, q);
	return PTC_OK;
}

void ptc_conn_queue_clear(ptc_conn_t *c)
{
	while (c->q_head) {
		ptc_msg_t *n = c->q_head->next;
		free(c->q_head);
		c->q_head = n;
	}
	c->q_tail = NULL;
	c->q_len = 0;
}

int ptc_conn_write_one(ptc_conn_t *c)
{
	ptc_msg_t *m = c->q_head;
	if (!m)
		return 0; /* a spurious WRITEABLE */
	c->q_head = m->next;
	if (!c->q_head)
		c->q_tail = NULL;
	c->q_len--;
	int n = lws_write(c->wsi, m->buf + LWS_PRE, m->len, LWS_WRITE_BINARY);
	size_t len = m->len;
	int pose = m->pose_id != 0;
	free(m);
	if (n < (int)len) {
		snprintf(c->close_reason, sizeof c->close_reason, "write failed");
		return -1;
	}
	c->st.bytes_out += len;
	c->st.msgs_out++;
	if (pose)
		c->st.poses_sent++;
	if (c->q_head)
		lws_callback_on_writable(c->wsi);
	return 0;
}

/* ---- remembered state -------------------------------------------------------------------- */

static int send_ids(ptc_conn_t *c, ptp_type_t type, const char *room, const uint64_t *ids, int n)
{
	ptp_msg_t m;
	memset(&m, 0, sizeof m);
	m.type = type;
	m.u.subscribe.room.ptr = room ? room : "";
	m.u.subscribe.room.len = room ? strlen(room) : 0;
	m.u.subscribe.count = (uint16_t)n;
	if (n > 0)
		memcpy(m.u.subscribe.ids, ids, (size_t)n * sizeof *ids);
	return ptc_conn_queue(c, &m);
}

static int send_auth(ptc_conn_t *c, const ptc_auth_t *a)
{
	ptp_msg_t m;
	memset(&m, 0, sizeof m);
	m.type = PTP_AUTHORIZE;
	m.u.authorize.instance_id = a->id;
	m.u.authorize.token.ptr = a->token;
	m.u.authorize.token.len = strlen(a->token);
	return ptc_conn_queue(c, &m);
}

void ptc_conn_resend_state(ptc_conn_t *c)
{
	for (int i = 0; i < c->nauth; i++)
		send_auth(c, &c->auth[i]);
	for (int i = 0; i < c->nrooms; i++)
		send_ids(c, PTP_SUBSCRIBE, c->rooms[i], NULL, 0);
	for (int i = 0; i < c->nsub_ids; i += PTP_MAX_IDS) {
		int n = c->nsub_ids - i < PTP_MAX_IDS ? c->nsub_ids - i : PTP_MAX_IDS;
		send_ids(c, PTP_SUBSCRIBE, NULL, c->sub_ids + i, n);
	}
}

/* 0 when s is 1..max bytes of UTF-8 without NUL (the codec's own check, via a probe). */
static int check_str(const char *s, size_t lo)
{
	if (!s || strlen(s) < lo)
		return -1;
	ptp_msg_t m;
	memset(&m, 0, sizeof m);
	m.type = PTP_SUBSCRIBE;
	m.u.subscribe.room.ptr = s;
	m.u.subscribe.room.len = strlen(s);
	size_t need;
	return ptp_msg_encode(&m, NULL, 0, &need) == PTP_ENOSPACE ? 0 : -1;
}

int ptc_authorize(ptc_conn_t *c, uint64_t id, const char *token)
{
	if (!c || id == 0 || !token || strlen(token) < 1 || strlen(token) > PTP_MAX_TOKEN)
		return PTC_EINVAL;
	if (c->state == PTC_CLOSED)
		return PTC_ECLOSED;
	ptc_auth_t *a = NULL;
	for (int i = 0; i < c->nauth; i++)
		if (c->auth[i].id == id)
			a = &c->auth[i];
	if (!a) {
		if (c->nauth >= PTC_MAX_AUTH)
			return PTC_ELIMIT;
		a = &c->auth[c->nauth++];
		a->id = id;
		/* Wall-clock milliseconds: above what an earlier publisher (at most 240 poses a
		 * second) reached, within the server's 2^31 window for 24 days. */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		a->next_seq =
		    (uint32_t)((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
	}
	snprintf(a->token, sizeof a->token, "%s", token);
	return c->state == PTC_READY ? send_auth(c, a) : PTC_OK;
}

static int find_id(const uint64_t *ids, int n, uint64_t id, int *at)
{
	int lo = 0, hi = n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return lo < n && ids[lo] == id;
}

static int check_ids(const char *room, const uint64_t *ids, int n)
{
	if (n < 0 || n > PTP_MAX_IDS || (n > 0 && !ids))
		return PTC_EINVAL;
	if (room && *room && check_str(room, 1) != 0)
		return PTC_EINVAL;
	for (int i = 0; i < n; i++)
		if (ids[i] == 0)
			return PTC_EINVAL;
	return PTC_OK;
}

int ptc_subscribe(ptc_conn_t *c, const char *room, const uint64_t *ids, int n)
{
	if (!c || check_ids(room, ids, n) != PTC_OK)
		return PTC_EINVAL;
	if (c->state == PTC_CLOSED)
		return PTC_ECLOSED;
	int max = c->have_server ? c->server.max_subscriptions : PTC_DEFAULT_MAX_SUBS;
	int has_room = room && *room, at;
	for (int i = 0; has_room && i < c->nrooms; i++)
		if (strcmp(c->rooms[i], room) == 0)
			has_room = 0; /* already remembered */
	int add = has_room;
	for (int i = 0; i < n; i++)
		add += !find_id(c->sub_ids, c->nsub_ids, ids[i], &at);
	if (c->nrooms + c->nsub_ids + add > max)
		return PTC_ELIMIT;
	if (has_room) {
		if (c->nrooms == c->cap_rooms) {
			int cap = c->cap_rooms ? 2 * c->cap_rooms : 4;
			void *nr = realloc(c->rooms, (size_t)cap * sizeof *c->rooms);
			if (!nr)
				return PTC_ENOMEM;
			c->rooms = nr;
			c->cap_rooms = cap;
		}
		snprintf(c->rooms[c->nrooms++], sizeof c->rooms[0], "%s", room);
	}
	for (int i = 0; i < n; i++) {
		if (find_id(c->sub_ids, c->nsub_ids, ids[i], &at))
			continue;
		if (c->nsub_ids == c->cap_sub_ids) {
			int cap = c->cap_sub_ids ? 2 * c->cap_sub_ids : 16;
			uint64_t *ni = realloc(c->sub_ids, (size_t)cap * sizeof *ni);
			if (!ni)
				return PTC_ENOMEM;
			c->sub_ids = ni;
			c->cap_sub_ids = cap;
		}
		memmove(c->sub_ids + at + 1, c->sub_ids + at,
		        (size_t)(c->nsub_ids - at) * sizeof *c->sub_ids);
		c->sub_ids[at] = ids[i];
		c->nsub_ids++;
	}
	return c->state == PTC_READY ? send_ids(c, PTP_SUBSCRIBE, room, ids, n) : PTC_OK;
}

int ptc_unsubscribe(ptc_conn_t *c, const char *room, const uint64_t *ids, int n)
{
	if (!c || check_ids(room, ids, n) != PTC_OK)
		return PTC_EINVAL;
	for (int i = 0; room && *room && i < c->nrooms; i++)
		if (strcmp(c->rooms[i], room) == 0) {
			memmove(c->rooms[i], c->rooms[i + 1],
			        (size_t)(c->nrooms - i - 1) * sizeof c->rooms[0]);
			c->nrooms--;
			break;
		}
	for (int i = 0, at; i < n; i++)
		if (find_id(c->sub_ids, c->nsub_ids, ids[i], &at)) {
			memmove(c->sub_ids + at, c->sub_ids + at + 1,
			        (size_t)(c->nsub_ids - at - 1) * sizeof *c->sub_ids);
			c->nsub_ids--;
		}
	return c->state == PTC_READY ? send_ids(c, PTP_UNSUBSCRIBE, room, ids, n) : PTC_OK;
}

int ptc_publish(ptc_conn_t *c, uint64_t id, const ptc_pose_t *pose, uint32_t *seq)
{
	if (!c || !pose)
		return PTC_EINVAL;
	if (c->state == PTC_CLOSED)
		return PTC_ECLOSED;
	if (c->state != PTC_READY)
		return PTC_ENOTREADY;
	ptc_auth_t *a = NULL;
	for (int i = 0; i < c->nauth && !a; i++)
		if (c->auth[i].id == id)
			a = &c->auth[i];
	if (!a)
		return PTC_EINVAL;
	ptp_msg_t m;
	memset(&m, 0, sizeof m);
	m.type = PTP_HEAD_POSE;
	m.minor = (uint8_t)c->server.minor; /* negotiated (poses are sent only when ready) */
	ptp_head_pose_t *h = &m.u.head_pose;
	h->instance_id = id;
	if (a->next_seq == 0)
		a->next_seq = 1; /* 0 means "no pose yet" in frame records */
	h->seq = a->next_seq;
	int64_t now = ptc_now_us();
	h->client_time_us = now;
	memcpy(h->p, pose->p, sizeof h->p);
	memcpy(h->q, pose->q, sizeof h->q);
	if (pose->has_v) {
		h->flags |= PTP_POSE_HAS_VELOCITY;
		memcpy(h->v, pose->v, sizeof h->v);
	}
	if (pose->has_w) {
		h->flags |= PTP_POSE_HAS_ANGULAR;
		memcpy(h->w, pose->w, sizeof h->w);
	}
	if (pose->nbones < 0 || pose->nbones > PTP_MAX_POSE_BONES)
		return PTC_EINVAL;
	if (pose->nbones > 0 && m.minor >= 2) { /* a 1.0 / 1.1 server ignores them anyway */
		h->flags |= PTP_POSE_HAS_BONES;
		h->bone_count = (uint8_t)pose->nbones;
		memcpy(h->bones, pose->bones, sizeof h->bones[0] * (size_t)pose->nbones);
	}
	/* The newest pose replaces one of the same instance still waiting to be written. */
	ptc_msg_t *q = c->q_head;
	while (q && q->pose_id != id)
		q = q->next;
	int fresh = !q;
	if (fresh) {
		if (c->q_len >= PTC_QUEUE_MAX_MSGS)
			return PTC_EFULL;
		q = msg_new(PTC_POSE_MSG_CAP);
		if (!q)
			return PTC_ENOMEM;
	}
	if (ptp_msg_encode(&m, q->buf + LWS_PRE, q->cap, &q->len) != PTP_OK) {
		if (fresh)
			free(q);
		return PTC_EINVAL; /* non-finite, or |q|^2 outside [PTP_QUAT_NORM2_MIN, _MAX] */
	}
	q->pose_id = id;
	if (fresh)
		msg_append(c, q);
	else
		c->st.poses_coalesced++;
	a->next_seq++;
	ptc_seq_put(c->ctx, id, h->seq, now);
	if (seq)
		*seq = h->seq;
	return PTC_OK;
}

int ptc_ping(ptc_conn_t *c)
{
	if (!c)
		return PTC_EINVAL;
	if (c->state != PTC_READY)
		return c->state == PTC_CLOSED ? PTC_ECLOSED : PTC_ENOTREADY;
	ptp_msg_t m;
	memset(&m, 0, sizeof m);
	m.type = PTP_PING;
	m.u.ping.client_time_us = ptc_now_us();
	return ptc_conn_queue(c, &m);
}
