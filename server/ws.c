/* WebSocket edge: the libwebsockets context, its service thread, the protocol callback
 * (a flat switch, as in lws's minimal examples) and the dispatch of client messages.
 * Per-connection logic is in ws_conn.c. See ws.h. */
#include "ws.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instances.h"
#include "log.h"
#include "metrics.h"
#include "ptp/strand.h"
#include "ws_internal.h"

#ifndef PONYTAIL_VERSION
#define PONYTAIL_VERSION "0.1.0"
#endif

/* ---- per-address connection counts (lws 4.1.6 has no per-IP limits) -------------- */

static int *per_ip_count(ws_t *ws, const char *ip, int create)
{
	for (int i = 0; i < ws->nper_ip; i++)
		if (strcmp(ws->per_ip[i].ip, ip) == 0)
			return &ws->per_ip[i].n;
	if (!create)
		return NULL;
	if (ws->nper_ip == ws->cap_per_ip) {
		int nc = ws->cap_per_ip ? ws->cap_per_ip * 2 : 16;
		void *n = realloc(ws->per_ip, (size_t)nc * sizeof *ws->per_ip);
		if (!n)
			return NULL;
		ws->per_ip = n;
		ws->cap_per_ip = nc;
	}
	snprintf(ws->per_ip[ws->nper_ip].ip, sizeof ws->per_ip[0].ip, "%s", ip);
	ws->per_ip[ws->nper_ip].n = 0;
	return &ws->per_ip[ws->nper_ip++].n;
}

static void per_ip_drop(ws_t *ws, const char *ip)
{
	for (int i = 0; i < ws->nper_ip; i++)
		if (strcmp(ws->per_ip[i].ip, ip) == 0 && --ws->per_ip[i].n <= 0) {
			ws->per_ip[i] = ws->per_ip[--ws->nper_ip];
			return;
		}
}

/* ---- messages from clients ------------------------------------------------------- */

static void on_hello(ws_t *ws, conn_t *c, const ptp_hello_t *h)
{
	const config_t *cfg = ws->app->cfg;
	c->hello = 1;
	int ours = PTP_MINOR; /* a variable: with minor 0 the compiler calls the min trivial */
	c->minor = h->minor < ours ? h->minor : ours;
	size_t n = h->client_name.len < PTP_MAX_NAME ? h->client_name.len : PTP_MAX_NAME;
	if (n)
		memcpy(c->name, h->client_name.ptr, n);
	c->name[n] = '\0';
	lws_set_timeout(c->wsi, NO_PENDING_TIMEOUT, 0);
	static const char version[] = "ponytaild " PONYTAIL_VERSION;
	ptp_msg_t m = {.type = PTP_WELCOME};
	ptp_welcome_t *w = &m.u.welcome;
	w->major = PTP_MAJOR;
	w->minor = (uint8_t)c->minor;
	w->tick_hz = (uint16_t)cfg->tick_hz;
	w->substeps = (uint8_t)cfg->substeps;
	w->keyframe_interval = (uint16_t)cfg->keyframe_interval;
	w->max_message = PTP_MAX_CLIENT_MESSAGE;
	w->max_subscriptions = (uint16_t)cfg->max_subscriptions;
	w->server_time_us = sim_wall_us();
	w->tick = sim_tick_now(ws->app->sim, NULL);
	w->server_version = (ptp_str_t){version, sizeof version - 1};
	w->max_error_m = ptp_encoder_params_default().max_error_m; /* sim.c's encoders' */
	/* PROTOCOL.md 11: compact frames when asked for; their clock starts at welcome's */
	c->compact = c->minor >= 2 && (h->features & PTP_FEATURE_COMPACT);
	c->clock = (ptp_batch_clock_t){w->tick, w->server_time_us, w->tick_hz};
	conn_queue_msg(ws, c, &m);
	LOG(LOG_DEBUG, "ws %s: hello from '%s' (1.%d)", c->ip, c->name, c->minor);
}

static void on_authorize(ws_t *ws, conn_t *c, const ptp_authorize_t *a)
{
	inst_err_t e;
	if (instances_authorize(ws->app, a->instance_id, a->token.ptr, a->token.len, &e) !=
	    INST_OK) {
		conn_queue_error(ws, c, inst_ptp_code(e.status), PTP_AUTHORIZE, a->instance_id,
		                 "%s", e.message);
		return;
	}
	for (int i = 0; i < c->nauth; i++)
		if (c->auth[i].id == a->instance_id)
			return;
	if (c->nauth == WS_MAX_AUTH) {
		conn_queue_error(ws, c, PTP_CODE_LIMIT, PTP_AUTHORIZE, a->instance_id,
		                 "at most %d authorizations per connection", WS_MAX_AUTH);
		return;
	}
	c->auth[c->nauth].id = a->instance_id;
	inst_rate_init(ws->app, &c->auth[c->nauth++].rate);
}

/* A pose goes to the door with this connection's rate bucket for the instance. A full
 * inbox, or a sim that has stopped, drops it silently (the next pose supersedes it; at
 * shutdown every client gets "shutdown" anyway); rate errors are sent at most once a
 * second. */
static void on_pose(ws_t *ws, conn_t *c, const ptp_head_pose_t *p)
{
	auth_t *a = NULL;
	for (int i = 0; i < c->nauth && !a; i++)
		if (c->auth[i].id == p->instance_id)
			a = &c->auth[i];
	if (!a) {
		metrics_add(&metrics.poses_rejected_auth, 1);
		conn_queue_error(ws, c, PTP_CODE_UNAUTHORIZED, PTP_HEAD_POSE, p->instance_id,
		                 "head_pose for an instance not authorized on this connection");
		return;
	}
	inst_pose_t in = {.id = p->instance_id,
	                  .seq = p->seq,
	                  .p = {p->p[0], p->p[1], p->p[2]},
	                  .q = {p->q[0], p->q[1], p->q[2], p->q[3]},
	                  .moving = (p->flags & (PTP_POSE_HAS_VELOCITY | PTP_POSE_HAS_ANGULAR)) != 0,
	                  .v = {p->v[0], p->v[1], p->v[2]},
	                  .w = {p->w[0], p->w[1], p->w[2]}};
	/* PROTOCOL.md 3: bones from a client that negotiated 1.0 / 1.1 are ignored, as a
	 * 1.1 server ignores them */
	in.conn = c->serial;
	if (c->minor >= 2 && (p->flags & PTP_POSE_HAS_BONES)) {
		in.nbones = p->bone_count;
		for (int i = 0; i < p->bone_count; i++) {
			in.bones[i].bone = p->bones[i].bone;
			for (int k = 0; k < 3; k++)
				in.bones[i].p[k] = p->bones[i].p[k];
			for (int k = 0; k < 4; k++)
				in.bones[i].q[k] = p->bones[i].q[k];
			c->handed |= instances_grab_bone(pt_bone_name((pt_bone)p->bones[i].bone)) >= 0;
		}
	}
	inst_err_t e;
	inst_status_t st = instances_pose(ws->app, &in, &a->rate, &e);
	if (st == INST_OK || st == INST_BUSY || st == INST_CLOSED)
		return;
	if (st == INST_RATE) {
		int64_t now = sim_mono_ns();
		if (now - c->last_rate_error_ns <= 1000000000LL)
			return;
		c->last_rate_error_ns = now;
	}
	conn_queue_error(ws, c, inst_ptp_code(st), PTP_HEAD_POSE, p->instance_id, "%s", e.message);
}

/* A server -> client type (0x81..0xff) whose header passed PROTOCOL.md 2's steps 1-7: not
 * a message a client sends, so unknown_type whatever its payload (a well-formed pong and
 * one cut short are answered alike; 0x87 is outside the message catalogue anyway). */
static int server_type(const uint8_t *buf, size_t len)
{
	if (len < PTP_HEADER_SIZE || !(buf[4] & 0x80))
		return 0;
	uint32_t n = (uint32_t)buf[6] | (uint32_t)buf[7] << 8 | (uint32_t)buf[8] << 16 |
	             (uint32_t)buf[9] << 24;
	return buf[0] == 'P' && buf[1] == 'T' && buf[2] == PTP_MAJOR && n <= PTP_MAX_PAYLOAD &&
	       len - PTP_HEADER_SIZE == n && !(buf[3] <= PTP_MINOR && buf[5] != 0);
}

static void on_message(ws_t *ws, conn_t *c, const uint8_t *buf, size_t len)
{
	metrics_add(&metrics.ws_messages_received, 1);
	ptp_msg_t m;
	ptp_err_t e = ptp_msg_decode(buf, len, &m);
	int type = len > 4 ? buf[4] : 0;
	if (e == PTP_ETYPE || server_type(buf, len)) {
		if (!c->hello)
			conn_queue_error(ws, c, PTP_CODE_HELLO_REQUIRED, type, 0,
			                 "send hello first");
		else
			conn_queue_error(ws, c, PTP_CODE_UNKNOWN_TYPE, type, 0,
			                 "unknown message type 0x%02x", type);
		return;
	}
	if (e == PTP_EVERSION) {
		conn_queue_error(ws, c, PTP_CODE_VERSION, type, 0, "this server speaks major %d",
		                 PTP_MAJOR);
		return;
	}
	if (e == PTP_ETOOBIG) {
		conn_queue_error(ws, c, PTP_CODE_TOO_LARGE, type, 0, "message too large");
		return;
	}
	if (e != PTP_OK) {
		if (type ==
		    PTP_HEAD_POSE) /* e.g. a NaN: the protocol closes, the pose is counted */
			metrics_add(&metrics.poses_rejected_invalid, 1);
		if (type == PTP_SUBSCRIBE && e == PTP_ERANGE) { /* its one range check */
			conn_queue_error(ws, c, PTP_CODE_BAD_MESSAGE, type, 0,
			                 "undecodable message: subscribe rate_hz must be 0, 60, 30, "
			                 "20 or 10");
			return;
		}
		conn_queue_error(ws, c, PTP_CODE_BAD_MESSAGE, type, 0, "undecodable message: %s",
		                 ptp_err_name(e));
		return;
	}
	if (!c->hello && m.type != PTP_HELLO) {
		conn_queue_error(ws, c, PTP_CODE_HELLO_REQUIRED, type, 0, "send hello first");
		return;
	}
	switch (m.type) {
	case PTP_HELLO:
		if (c->hello)
			conn_queue_error(ws, c, PTP_CODE_BAD_MESSAGE, type, 0, "hello sent twice");
		else
			on_hello(ws, c, &m.u.hello);
		break;
	case PTP_AUTHORIZE:
		on_authorize(ws, c, &m.u.authorize);
		break;
	case PTP_SUBSCRIBE:
		ws_refresh(ws); /* an instance created a moment ago must be found */
		conn_subscribe(ws, c, &m.u.subscribe, type);
		break;
	case PTP_UNSUBSCRIBE:
		conn_unsubscribe(ws, c, &m.u.subscribe);
		break;
	case PTP_HEAD_POSE:
		on_pose(ws, c, &m.u.head_pose);
		break;
	case PTP_KEYFRAME_REQUEST:
		conn_keyframes(ws, c, &m.u.subscribe);
		break;
	case PTP_GRAB:
		ws_on_grab(ws, c, &m.u.grab);
		break;
	case PTP_RELEASE:
		ws_on_release(ws, c, &m.u.release);
		break;
	case PTP_PING: {
		ptp_msg_t r = {.type = PTP_PONG};
		r.u.pong.client_time_us = m.u.ping.client_time_us;
		r.u.pong.server_time_us = sim_wall_us();
		conn_queue_msg(ws, c, &r);
		break;
	}
	default:
		break;
	}
}

/* Reassembles one WebSocket message from lws's fragments, capped at the protocol's
 * client limit (lws 4.1.6 has no built-in maximum message size). */
static void on_receive(ws_t *ws, conn_t *c, const void *in, size_t len)
{
	if (c->dead)
		return;
	if (lws_is_first_fragment(c->wsi)) {
		c->rx_len = 0;
		c->rx_oversize = 0;
		c->rx_text = !lws_frame_is_binary(c->wsi);
	}
	if (c->rx_len + len > sizeof c->rx)
		c->rx_oversize = 1;
	else {
		memcpy(c->rx + c->rx_len, in, len);
		c->rx_len += len;
	}
	if (c->rx_oversize) {
		conn_queue_error(ws, c, PTP_CODE_TOO_LARGE, 0, 0, "messages are at most %d bytes",
		                 PTP_MAX_CLIENT_MESSAGE);
		return;
	}
	if (!lws_is_final_fragment(c->wsi) || lws_remaining_packet_payload(c->wsi) > 0)
		return;
	if (c->rx_text) {
		conn_queue_error(ws, c, PTP_CODE_BAD_MESSAGE, 0, 0,
		                 "text messages are not accepted");
		c->closing = LWS_CLOSE_STATUS_UNACCEPTABLE_OPCODE;
		return;
	}
	on_message(ws, c, c->rx, c->rx_len);
	c->rx_len = 0;
}

/* ---- the frame ring's side ------------------------------------------------------- */

void ws_refresh(ws_t *ws)
{
	frame_event_t *ev;
	int n;
	ws->fs = frame_ring_acquire(ws->app->ring, ws->fs, &ev, &n);
	for (int i = 0; i < n; i++) {
		conn_event(ws, &ev[i]);
		meta_unref(ev[i].meta);
		meta_unref(ev[i].old);
	}
	ws_grab_replies(ws);
}

static void on_wake(ws_t *ws)
{
	if (__atomic_load_n(&ws->stop, __ATOMIC_ACQUIRE) && !ws->draining) {
		ws->draining = 1;
		ws->drain_deadline_ns = sim_mono_ns() + 2000000000LL;
		for (conn_t *c = ws->conns; c; c = c->next)
			if (!c->dead)
				conn_queue_error(ws, c, PTP_CODE_SHUTDOWN, 0, 0,
				                 "server going away");
	}
	ws_refresh(ws);
	for (conn_t *c = ws->conns; c; c = c->next)
		conn_pace(ws, c);
	ws_order_tick(ws); /* holds the connections whose turn comes in a later cycle */
	for (conn_t *c = ws->conns; c; c = c->next) {
		if (conn_has_work(ws, c))
			lws_callback_on_writable(c->wsi);
	}
}

static void notify(void *arg)
{
	ws_t *ws = arg;
	lws_cancel_service(ws->ctx); /* the one lws call other threads may make */
}

/* ---- the protocol callback ------------------------------------------------------- */

static int has_subprotocol(struct lws *wsi)
{
	char buf[256];
	if (lws_hdr_copy(wsi, buf, sizeof buf, WSI_TOKEN_PROTOCOL) <= 0)
		return 0;
	for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save))
		if (strcmp(t, "ponytail.v1") == 0)
			return 1;
	return 0;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len)
{
	struct lws_context *ctx = lws_get_context(wsi);
	ws_t *ws = ctx ? lws_context_user(ctx) : NULL;
	conn_t *c = user;
	switch (reason) {
	case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
		char ip[64] = "";
		lws_get_peer_simple(wsi, ip, sizeof ip);
		int *n = per_ip_count(ws, ip, 0);
		int draining = ws->draining || __atomic_load_n(&ws->app->draining, __ATOMIC_ACQUIRE);
		/* Before the first tick's frames (a restart: the listener opens before the tick
		 * thread starts), a subscription would find no instance and answer not_found for
		 * one that exists: refuse until there are frames (/readyz is 503 until then too) */
		if (!ws->fs)
			ws_refresh(ws);
		const char *why = draining                ? "shutting down"
		                  : !ws->fs               ? "starting: no tick yet"
		                  : !has_subprotocol(wsi) ? "no ponytail.v1 subprotocol"
		                  : ws->nconns >= ws->app->cfg->max_ws_conns
		                      ? "too many connections"
		                  : n && *n >= ws->app->cfg->max_conns_per_ip
		                      ? "too many connections from this address"
		                      : NULL;
		if (why) {
			/* An HTTP answer with the reason, not just a closed socket; logged at most
			 * once a second (a client decides how often this happens). */
			static log_limit_t lim;
			uint64_t held;
			metrics_add(&metrics.ws_refused, 1);
			if (log_limit(&lim, &held))
				LOG(LOG_INFO, "ws %s: refused: %s (and %llu more refusals since the last report)",
				    ip, why, (unsigned long long)held);
			lws_return_http_status(wsi, has_subprotocol(wsi) ? 503 : 400, why);
			return 1;
		}
		return 0;
	}
	case LWS_CALLBACK_ESTABLISHED: {
		memset(c, 0, sizeof *c);
		c->wsi = wsi;
		c->serial = ++ws->serials;
		lws_get_peer_simple(wsi, c->ip, sizeof c->ip);
		int *n = per_ip_count(ws, c->ip, 1);
		if (n)
			(*n)++;
		c->next = ws->conns;
		if (ws->conns)
			ws->conns->prev = c;
		ws->conns = c;
		ws->nconns++;
		metrics_set(&metrics.ws_connections, (uint64_t)ws->nconns);
		metrics_add(&metrics.ws_accepted, 1);
		lws_set_timeout(wsi, PENDING_TIMEOUT_USER_REASON_BASE + 1, WS_HELLO_TIMEOUT_S);
		LOG(LOG_DEBUG, "ws %s: connected", c->ip);
		return 0;
	}
	case LWS_CALLBACK_CLOSED:
		if (!c || !c->wsi)
			return 0;
		if (c->prev)
			c->prev->next = c->next;
		else
			ws->conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
		ws->nconns--;
		per_ip_drop(ws, c->ip);
		ws_order_forget(ws, c);
		if (c->handed) /* its hands stop colliding and its grabs end at the next tick */
			instances_conn_gone(ws->app, c->serial);
		metrics_set(&metrics.ws_connections, (uint64_t)ws->nconns);
		LOG(LOG_DEBUG, "ws %s (%s): closed", c->ip, c->name);
		conn_free(ws, c);
		c->wsi = NULL;
		return 0;
	case LWS_CALLBACK_RECEIVE:
		on_receive(ws, c, in, len);
		if (conn_has_work(ws, c))
			lws_callback_on_writable(wsi);
		return 0;
	case LWS_CALLBACK_SERVER_WRITEABLE:
		return conn_write(ws, c);
	case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
		if (ws)
			on_wake(ws);
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

static const struct lws_protocols protocols[] = {
    {"ponytail.v1", callback, sizeof(conn_t), PTP_MAX_CLIENT_MESSAGE, 0, NULL, WS_BATCH_BYTES + 64},
    {NULL, NULL, 0, 0, 0, NULL, 0},
};

static void lws_log_line(int level, const char *line)
{
	int n = (int)strlen(line);
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == ' '))
		n--;
	LOG(level == LLL_ERR ? LOG_ERROR : LOG_WARN, "libwebsockets: %.*s", n, line);
}

static void *service_main(void *arg)
{
	ws_t *ws = arg;
	while (!ws->draining || (ws->nconns > 0 && sim_mono_ns() < ws->drain_deadline_ns)) {
		if (lws_service(ws->ctx, 0) < 0)
			break;
		ws_order_next(ws);
	}
	frame_ring_release(ws->app->ring, ws->fs);
	ws->fs = NULL;
	__atomic_store_n(&ws->started, 2, __ATOMIC_RELEASE); /* 2 = the loop has ended */
	return NULL;
}

ws_t *ws_start(app_t *app, char *err, size_t errlen)
{
	ws_t *ws = calloc(1, sizeof *ws);
	if (!ws) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ws->app = app;
	lws_set_log_level(LLL_ERR | LLL_WARN, lws_log_line);
	static lws_retry_bo_t retry;
	retry.secs_since_valid_ping = (uint16_t)(app->cfg->ws_idle_timeout / 2);
	retry.secs_since_valid_hangup = (uint16_t)app->cfg->ws_idle_timeout;
	struct lws_context_creation_info info;
	memset(&info, 0, sizeof info);
	info.port = app->cfg->ws_port;
	info.iface = app->cfg->bind;
	info.protocols = protocols;
	info.gid = (gid_t)-1;
	info.uid = (uid_t)-1;
	info.user = ws;
	info.retry_and_idle_policy = &retry;
	info.timeout_secs = (unsigned)app->cfg->request_timeout;
	info.options = LWS_SERVER_OPTION_DISABLE_IPV6 | LWS_SERVER_OPTION_FAIL_UPON_UNABLE_TO_BIND;
	if (app->tls) {
		/* WSS (tls.h): lws's OpenSSL reads the files tls.c checked (a chain file works
		 * by path, not from memory); no plain WebSocket on this port. OpenSSL 3's
		 * default security level already refuses TLS below 1.2. */
		info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		info.ssl_cert_filepath = app->tls->cert_path;
		info.ssl_private_key_filepath = app->tls->key_path;
	}
	ws->ctx = lws_create_context(&info);
	if (!ws->ctx) {
		snprintf(err, errlen, "--ws-port %d: cannot listen on %s (in use?)%s",
		         app->cfg->ws_port, app->cfg->bind,
		         app->tls ? ", or libwebsockets (OpenSSL) refused --tls-cert/--tls-key "
		                    "(its reason is logged above)"
		                  : "");
		free(ws);
		return NULL;
	}
	struct lws_vhost *vh = lws_get_vhost_by_name(ws->ctx, "default");
	app->ws_port = vh ? lws_get_vhost_listen_port(vh) : app->cfg->ws_port;
	frame_ring_set_notify(app->ring, notify, ws);
	if (pthread_create(&ws->th, NULL, service_main, ws) != 0) {
		snprintf(err, errlen, "cannot start the WebSocket thread");
		frame_ring_set_notify(app->ring, NULL, NULL);
		lws_context_destroy(ws->ctx);
		free(ws);
		return NULL;
	}
	ws->started = 1;
	__atomic_store_n(&app->ws_ready, 1, __ATOMIC_RELEASE);
	return ws;
}

void ws_shutdown(ws_t *ws)
{
	if (!ws)
		return;
	__atomic_store_n(&ws->app->ws_ready, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&ws->stop, 1, __ATOMIC_RELEASE);
	/* Keep waking the loop: the last close produces no further event to return on. */
	while (__atomic_load_n(&ws->started, __ATOMIC_ACQUIRE) != 2) {
		lws_cancel_service(ws->ctx);
		struct timespec ts = {0, 20 * 1000000};
		nanosleep(&ts, NULL);
	}
	pthread_join(ws->th, NULL);
	frame_ring_set_notify(ws->app->ring, NULL, NULL);
	lws_context_destroy(ws->ctx);
	free(ws->out);
	free(ws->recs);
	free(ws->per_ip);
	ws_order_free(ws);
	LOG(LOG_INFO, "websocket closed");
	free(ws);
}
