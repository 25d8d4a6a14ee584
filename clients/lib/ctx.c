/* The libwebsockets side of the client library: the context, the service call, the
 * protocol callback (a flat switch), connection attempts, back-off and ping timers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/x509.h>

#include "ptc_internal.h"

int64_t ptc_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

const char *ptc_strerror(int rc)
{
	switch (rc) {
	case PTC_OK:
		return "ok";
	case PTC_EINVAL:
		return "invalid argument";
	case PTC_ENOMEM:
		return "out of memory";
	case PTC_ENOTREADY:
		return "not connected yet";
	case PTC_EFULL:
		return "send queue full";
	case PTC_ELIMIT:
		return "too many authorizations or subscriptions";
	case PTC_ECLOSED:
		return "connection closed";
	default:
		return "unknown error";
	}
}

const char *ptc_state_name(ptc_state_t s)
{
	switch (s) {
	case PTC_CONNECTING:
		return "connecting";
	case PTC_READY:
		return "ready";
	case PTC_RETRYING:
		return "retrying";
	case PTC_CLOSED:
		return "closed";
	}
	return "?";
}

void ptc_conn_set_state(ptc_conn_t *c, ptc_state_t s, const char *why)
{
	c->state = s;
	if (c->p.cb.on_state && !c->user_closed && !c->ctx->destroying)
		c->p.cb.on_state(c, s, why ? why : "", c->p.user);
}

/* ---- timers -------------------------------------------------------------------------- */

static void on_retry_timer(lws_sorted_usec_list_t *sul)
{
	ptc_conn_t *c = lws_container_of(sul, ptc_conn_t, sul_retry);
	c->ctx->activity++;
	if (c->user_closed || c->wsi)
		return;
	struct lws_client_connect_info i;
	memset(&i, 0, sizeof i);
	i.context = c->ctx->lws;
	i.address = c->host;
	i.port = c->port;
	i.path = c->path;
	i.host = c->host;
	i.origin = c->host;
	i.protocol = "ponytail.v1";
	if (c->tls)
		i.ssl_connection = LCCSCF_USE_SSL |
		                   (c->ctx->insecure ? LCCSCF_ALLOW_SELFSIGNED | LCCSCF_ALLOW_INSECURE |
		                                           LCCSCF_ALLOW_EXPIRED |
		                                           LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK
		                                     : 0);
	i.userdata = c;
	i.opaque_user_data = c;
	c->close_reason[0] = '\0';
	c->tls_error[0] = '\0';
	ptc_conn_set_state(c, PTC_CONNECTING, NULL);
	if (c->user_closed)
		return; /* closed from the callback: the free is scheduled */
	/* lws may report a failure through the callback before it returns: in_connect lets
	 * the callback recognise that attempt as the current one. */
	c->in_connect = 1;
	struct lws *w = lws_client_connect_via_info(&i);
	c->in_connect = 0;
	if (c->state != PTC_CONNECTING)
		return; /* already lost (and rescheduled) inside the call */
	if (!w)
		ptc_conn_lost(c, NULL,
		              c->last_error[0] ? c->last_error : "cannot start a connection");
	else
		c->wsi = w;
}

static void on_ping_timer(lws_sorted_usec_list_t *sul)
{
	ptc_conn_t *c = lws_container_of(sul, ptc_conn_t, sul_ping);
	c->ctx->activity++;
	if (c->state == PTC_READY && !c->user_closed) {
		ptc_ping(c);
		ptc_conn_ping_schedule(c);
	}
}

static void on_wake_timer(lws_sorted_usec_list_t *sul)
{
	ptc_ctx_t *ctx = lws_container_of(sul, ptc_ctx_t, sul_wake);
	ctx->activity++;
	/* lws runs the timers that are due while it computes its poll timeout, then polls
	 * until the next timer: when ours was the due one, that wait could be the 30 s of an
	 * internal timer. Waking the loop makes that poll return at once. */
	lws_cancel_service(ctx->lws);
}

static void on_free_timer(lws_sorted_usec_list_t *sul)
{
	ptc_conn_t *c = lws_container_of(sul, ptc_conn_t, sul_retry);
	c->ctx->activity++;
	ptc_conn_free(c);
}

void ptc_conn_free_later(ptc_conn_t *c)
{
	lws_sul_cancel(&c->sul_ping);
	lws_sul_schedule(c->ctx->lws, 0, &c->sul_retry, on_free_timer, 1);
}

void ptc_conn_start(ptc_conn_t *c)
{
	lws_sul_schedule(c->ctx->lws, 0, &c->sul_retry, on_retry_timer, 1);
}

void ptc_conn_ping_schedule(ptc_conn_t *c)
{
	if (c->p.ping_interval_ms > 0)
		lws_sul_schedule(c->ctx->lws, 0, &c->sul_ping, on_ping_timer,
		                 (lws_usec_t)c->p.ping_interval_ms * 1000);
}

void ptc_conn_lost(ptc_conn_t *c, struct lws *wsi, const char *why)
{
	/* Whatever lws still says about that wsi is no longer about this connection. */
	if (wsi)
		lws_set_opaque_user_data(wsi, NULL);
	snprintf(c->last_error, sizeof c->last_error, "%s", why);
	c->wsi = NULL;
	c->ws_open = 0;
	c->last_tick = 0;
	lws_sul_cancel(&c->sul_ping);
	ptc_conn_queue_clear(c);
	ptc_rx_forget(c);
	c->rx_len = 0;
	c->rx_bad = 0;
	if (c->state == PTC_READY)
		c->st.disconnects++;
	else
		c->st.connect_failures++;
	if (c->ctx->destroying)
		return;
	if (c->user_closed) {
		ptc_conn_free_later(c);
		return;
	}
	if (!c->p.reconnect || c->give_up) {
		ptc_conn_set_state(c, PTC_CLOSED, why);
		return;
	}
	/* Exponential back-off with +-25 % jitter, so that a thousand clients dropped at once
	 * by a restarting server do not come back in the same millisecond. */
	double d = c->p.backoff_min_ms;
	for (int k = 0; k < c->attempts && d < c->p.backoff_max_ms; k++)
		d *= 2;
	if (d > c->p.backoff_max_ms)
		d = c->p.backoff_max_ms;
	d *= 0.75 + 0.5 * ((double)rand() / RAND_MAX);
	c->attempts++;
	ptc_conn_set_state(c, PTC_RETRYING, why);
	if (c->user_closed)
		return; /* closed from the callback: the free is scheduled */
	lws_sul_schedule(c->ctx->lws, 0, &c->sul_retry, on_retry_timer, (lws_usec_t)(d * 1000));
}

/* ---- the protocol callback ------------------------------------------------------------ */

static void peer_close_reason(ptc_conn_t *c, const uint8_t *in, size_t len)
{
	if (len < 2 || c->close_reason[0])
		return; /* a closing error message already said why */
	int code = in[0] << 8 | in[1];
	int n = len - 2 > 200 ? 200 : (int)(len - 2);
	snprintf(c->close_reason, sizeof c->close_reason, "closed by the server (%d%s%.*s)", code,
	         n ? ": " : "", n, (const char *)in + 2);
}

static void on_receive(ptc_conn_t *c, struct lws *wsi, const uint8_t *in, size_t len)
{
	int first = lws_is_first_fragment(wsi), last = lws_is_final_fragment(wsi);
	if (first) {
		c->rx_len = 0;
		c->rx_bad = !lws_frame_is_binary(wsi);
		if (last && !c->rx_bad) {
			ptc_rx_message(c, in, len); /* the usual case: no copy */
			return;
		}
	}
	if (!c->rx_bad) {
		size_t need = c->rx_len + len;
		if (need > PTC_RX_MAX) {
			c->rx_bad = 1;
		} else if (need > c->rx_cap) {
			size_t cap = c->rx_cap ? c->rx_cap : 4096;
			while (cap < need)
				cap *= 2;
			uint8_t *nb = realloc(c->rx, cap);
			if (!nb) {
				c->rx_bad = 1;
			} else {
				c->rx = nb;
				c->rx_cap = cap;
			}
		}
		if (!c->rx_bad) {
			memcpy(c->rx + c->rx_len, in, len);
			c->rx_len += len;
		}
	}
	if (last) {
		if (c->rx_bad)
			c->st.decode_errors++; /* text or oversized: not ours to read */
		else
			ptc_rx_message(c, c->rx, c->rx_len);
		c->rx_len = 0;
	}
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len)
{
	(void)user;
	if (reason == LWS_CALLBACK_EVENT_WAIT_CANCELLED) {
		/* Sent to every protocol with a fake wsi (ptc_wake). */
		const struct lws_protocols *pr = lws_get_protocol(wsi);
		if (pr && pr->user)
			((ptc_ctx_t *)pr->user)->activity++;
		return 0;
	}
	ptc_conn_t *c = wsi ? lws_get_opaque_user_data(wsi) : NULL;
	if (!c)
		return 0;
	c->ctx->activity++;
	/* A callback of an attempt we already gave up on is none of ours any more. */
	int current = c->wsi == wsi || (c->in_connect && !c->wsi);
	switch (reason) {
	case LWS_CALLBACK_OPENSSL_PERFORM_SERVER_CERT_VERIFICATION:
		/* OpenSSL's verdict on each certificate of the server's chain (user: the
		 * X509_STORE_CTX, len: preverify_ok). Nothing is overruled here (--insecure is
		 * lws' LCCSCF_ flags); a failure's reason is kept, as lws reports only "connect
		 * SSL err 1". */
		if (!len && current && !c->tls_error[0]) {
			X509_STORE_CTX *x = user;
			int e = X509_STORE_CTX_get_error(x);
			snprintf(c->tls_error, sizeof c->tls_error,
			         "TLS: the server's certificate did not verify: %s (depth %d)",
			         X509_verify_cert_error_string(e), X509_STORE_CTX_get_error_depth(x));
		}
		return 0;
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		if (current && c->tls_error[0]) {
			c->give_up = 1; /* retrying will not make the certificate verify */
			ptc_conn_lost(c, wsi, c->tls_error);
		} else if (current) {
			ptc_conn_lost(c, wsi, in && len ? (const char *)in : "connection failed");
		}
		break;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		if (!current || c->user_closed)
			return -1;
		c->ws_open = 1;
		{
			ptp_msg_t m;
			memset(&m, 0, sizeof m);
			m.type = PTP_HELLO;
			m.u.hello.major = PTP_MAJOR;
			m.u.hello.minor = PTP_MINOR;
			m.u.hello.client_name.ptr = c->name;
			m.u.hello.client_name.len = strlen(c->name);
			ptc_conn_queue(c, &m);
		}
		break;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		if (current && !c->user_closed)
			on_receive(c, wsi, in, len);
		break;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		if (!current || c->user_closed) {
			lws_close_reason(wsi, LWS_CLOSE_STATUS_NORMAL, NULL, 0);
			return -1;
		}
		return ptc_conn_write_one(c);
	case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
		if (current)
			peer_close_reason(c, in, len);
		break;
	case LWS_CALLBACK_CLIENT_CLOSED:
	case LWS_CALLBACK_WSI_DESTROY:
		if (current)
			ptc_conn_lost(c, wsi,
			              c->close_reason[0] ? c->close_reason : "connection closed");
		break;
	default:
		break;
	}
	return 0;
}

/* ---- context ---------------------------------------------------------------------------- */

ptc_ctx_t *ptc_ctx_create(char *err, size_t errlen)
{
	return ptc_ctx_create_tls(NULL, err, errlen);
}

/* 0 when path is a readable file with a PEM certificate in it; -1 with err. lws would
 * only log a CA file it cannot load and go on to trust nothing. */
static int ca_file_ok(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "CA file %s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	char line[256];
	int found = 0;
	while (!found && fgets(line, sizeof line, f))
		found = strncmp(line, "-----BEGIN CERTIFICATE-----", 27) == 0;
	fclose(f);
	if (!found)
		snprintf(err, errlen,
		         "CA file %s: no PEM certificate in it (expected a '-----BEGIN "
		         "CERTIFICATE-----' block)",
		         path);
	return found ? 0 : -1;
}

/* lws' errors on stderr, but for its certificate verdicts: the connection's reason
 * ("TLS: ...", from the verification callback above) says the same to the caller. */
static void lws_log_quiet(int level, const char *line)
{
	if (!strstr(line, "SSL error: "))
		lwsl_emit_stderr(level, line);
}

ptc_ctx_t *ptc_ctx_create_tls(const ptc_tls_t *tls, char *err, size_t errlen)
{
	if (tls && tls->ca_file && ca_file_ok(tls->ca_file, err, errlen) != 0)
		return NULL;
	ptc_ctx_t *ctx = calloc(1, sizeof *ctx);
	if (!ctx) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	ctx->insecure = tls && tls->insecure;
	const char *lg = getenv("PTC_LWS_LOG");
	int verbose = lg && strcmp(lg, "1") == 0;
	lws_set_log_level(verbose ? LLL_ERR | LLL_WARN | LLL_NOTICE : LLL_ERR,
	                  verbose ? NULL : lws_log_quiet);
	ctx->protocols[0].name = "ponytail.v1";
	ctx->protocols[0].callback = callback;
	ctx->protocols[0].user = ctx;
	struct lws_context_creation_info info;
	memset(&info, 0, sizeof info);
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = ctx->protocols;
	info.gid = -1;
	info.uid = -1;
	/* OpenSSL for wss:// (lws' client SSL_CTX, created once per context). */
	info.options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
	info.client_ssl_ca_filepath = tls ? tls->ca_file : NULL;
	ctx->lws = lws_create_context(&info);
	if (!ctx->lws) {
		snprintf(err, errlen, "libwebsockets could not create a client context");
		free(ctx);
		return NULL;
	}
	return ctx;
}

void ptc_ctx_destroy(ptc_ctx_t *ctx)
{
	if (!ctx)
		return;
	ctx->destroying = 1;
	lws_context_destroy(ctx->lws); /* closes every wsi; callbacks see `destroying` */
	ctx->lws = NULL;
	while (ctx->conns)
		ptc_conn_free(ctx->conns);
	ptc_seq_free(ctx);
	free(ctx);
}

int ptc_service(ptc_ctx_t *ctx, int timeout_ms)
{
	if (!ctx)
		return -1;
	unsigned before = ctx->activity;
	if (timeout_ms == 0)
		return lws_service(ctx->lws, -1) < 0 ? -1 : 0;
	/* lws 4.1 sleeps until its next timer whatever the timeout argument says, so a timer
	 * of our own bounds the wait; a timer that wakes the poll runs on the next pass. */
	int64_t deadline = timeout_ms > 0 ? ptc_now_us() + (int64_t)timeout_ms * 1000 : 0;
	for (;;) {
		if (timeout_ms > 0) {
			int64_t left = deadline - ptc_now_us();
			if (left <= 0)
				break;
			lws_sul_schedule(ctx->lws, 0, &ctx->sul_wake, on_wake_timer, left);
		}
		if (lws_service(ctx->lws, 0) < 0)
			return -1;
		if (ctx->activity != before)
			break;
	}
	lws_sul_cancel(&ctx->sul_wake);
	return 0;
}

void ptc_wake(ptc_ctx_t *ctx)
{
	if (ctx && ctx->lws)
		lws_cancel_service(ctx->lws);
}
