/* The REST handlers' helpers (rest_internal.h): responses and errors (JSON, the error
 * schema of openapi.json), request bodies as JSON objects, per-instance authorization,
 * and the write rate per client address. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instances.h"
#include "rest_internal.h"

/* ---- responses --------------------------------------------------------------------- */

void resp_text(resp_t *rs, unsigned status, const char *content_type, const char *text, size_t len)
{
	free(rs->body);
	rs->body = malloc(len + 1);
	rs->status = rs->body ? status : 500;
	rs->len = rs->body ? len : 0;
	rs->content_type = content_type;
	if (rs->body) {
		memcpy(rs->body, text, len);
		rs->body[len] = '\0';
	}
}

void resp_json(resp_t *rs, unsigned status, json_t *obj)
{
	char *s = obj ? json_dumps(obj, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
	json_decref(obj);
	free(rs->body);
	rs->body = NULL;
	rs->len = 0;
	rs->content_type = "application/json";
	if (!s) {
		static const char oom[] = "{\"error\":{\"code\":\"internal\",\"message\":\"out of "
		                          "memory\",\"field\":null}}";
		resp_text(rs, 500, "application/json", oom, sizeof oom - 1);
		return;
	}
	rs->status = status;
	rs->len = strlen(s);
	/* jansson allocates with malloc (we never replace its allocator), so MHD may free. */
	rs->body = s;
}

static const char *code_name(unsigned status)
{
	switch (status) {
	case 400:
		return "bad_request";
	case 401:
		return "unauthorized";
	case 403:
		return "forbidden";
	case 404:
		return "not_found";
	case 405:
		return "method_not_allowed";
	case 409:
		return "conflict";
	case 413:
		return "too_large";
	case 415:
		return "unsupported_media_type";
	case 422:
		return "invalid";
	case 429:
		return "rate_limited";
	case 503:
		return "unavailable";
	default:
		return "internal";
	}
}

/* Replaces every byte that is not part of well-formed UTF-8 with '?', in place: messages
 * quote the client's method and path, and jansson refuses a string that is not UTF-8
 * (which made `GET /v1/%ff` a 500; found by tests/fuzz/fuzz_rest.c). */
static void utf8_scrub(char *s)
{
	unsigned char *p = (unsigned char *)s;
	while (*p) {
		int n = *p < 0x80             ? 0
		        : (*p & 0xe0) == 0xc0 ? 1
		        : (*p & 0xf0) == 0xe0 ? 2
		        : (*p & 0xf8) == 0xf0 ? 3
		                              : -1;
		int ok = n >= 0 && !(n == 1 && *p < 0xc2) && !(n == 3 && *p > 0xf4);
		for (int i = 1; ok && i <= n; i++)
			ok = (p[i] & 0xc0) == 0x80;
		/* No overlong 3- and 4-byte forms, no surrogates, nothing beyond U+10FFFF. */
		if (ok && n == 2)
			ok = !(p[0] == 0xe0 && p[1] < 0xa0) && !(p[0] == 0xed && p[1] >= 0xa0);
		if (ok && n == 3)
			ok = !(p[0] == 0xf0 && p[1] < 0x90) && !(p[0] == 0xf4 && p[1] >= 0x90);
		if (!ok) {
			*p++ = '?';
			continue;
		}
		p += n + 1;
	}
}

void resp_error(resp_t *rs, unsigned status, const char *field, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	utf8_scrub(msg);
	char f[160]; /* a field may quote a client's key, cut to a length */
	if (field) {
		snprintf(f, sizeof f, "%s", field);
		utf8_scrub(f);
	}
	resp_json(rs, status,
	          json_pack("{s:{s:s,s:s,s:o}}", "error", "code", code_name(status), "message", msg,
	                    "field", field ? json_string(f) : json_null()));
}

json_t *req_json_object(const req_t *rq, resp_t *rs)
{
	if (!rq->body || rq->body_len == 0) {
		resp_error(rs, 400, NULL, "a JSON object body is required");
		return NULL;
	}
	json_error_t e;
	json_t *j = json_loadb(rq->body, rq->body_len, JSON_REJECT_DUPLICATES, &e);
	if (!j) {
		resp_error(rs, 400, NULL, "malformed JSON: line %d, column %d: %s", e.line,
		           e.column, e.text);
		return NULL;
	}
	if (!json_is_object(j)) {
		json_decref(j);
		resp_error(rs, 400, NULL, "the body must be a JSON object");
		return NULL;
	}
	return j;
}

/* The request's bearer token, or 0 with 401 answered. */
static int bearer_of(const req_t *rq, resp_t *rs, const char **tok, size_t *len)
{
	const char *h =
	    MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
	if (token_from_bearer(h, tok, len) == 0)
		return 1;
	rs->www_authenticate = 1;
	resp_error(rs, 401, NULL,
	           h ? "expected 'Authorization: Bearer <token>'"
	             : "this write needs 'Authorization: Bearer <token>'");
	return 0;
}

/* The door's answer to an authorization: 1, or 0 with its refusal answered. */
static int authorized(resp_t *rs, inst_status_t st, const inst_err_t *e)
{
	if (st == INST_OK)
		return 1;
	resp_error(rs, inst_http_status(e->status), e->has_field ? e->field : NULL, "%s", e->message);
	return 0;
}

int req_bearer(const req_t *rq, resp_t *rs, const char **tok, size_t *len)
{
	return bearer_of(rq, rs, tok, len);
}

int req_authorized(const req_t *rq, resp_t *rs)
{
	const char *tok;
	size_t len;
	inst_err_t e;
	return bearer_of(rq, rs, &tok, &len) &&
	       authorized(rs, instances_authorize(rq->app, rq->id, tok, len, &e), &e);
}

int req_room_authorized(const req_t *rq, resp_t *rs)
{
	const char *tok;
	size_t len;
	inst_err_t e;
	return bearer_of(rq, rs, &tok, &len) &&
	       authorized(rs, instances_room_authorize(rq->app, rq->path_room, tok, len, &e), &e);
}

/* ---- write rate per client address --------------------------------------------------- */

/* A fixed table of token buckets indexed by a hash of the address. Two addresses that
 * collide share a bucket (and may see 429 early); with 4096 buckets that needs thousands
 * of active writers, and the cost is a retry, never a wrong answer. */
enum { RATE_BUCKETS = 4096 };
static struct {
	char ip[INET6_ADDRSTRLEN];
	double tokens;
	int64_t last_ns;
} rate[RATE_BUCKETS];
static pthread_mutex_t rate_mu = PTHREAD_MUTEX_INITIALIZER;

int rest_rate_ok(const app_t *app, const char *ip)
{
	int per_s = app->cfg->write_rate;
	if (per_s <= 0)
		return 1;
	uint32_t h = 2166136261u;
	for (const char *p = ip; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;
	int64_t now = sim_mono_ns();
	pthread_mutex_lock(&rate_mu);
	__typeof__(rate[0]) *b = &rate[h % RATE_BUCKETS];
	if (strcmp(b->ip, ip) != 0) {
		snprintf(b->ip, sizeof b->ip, "%s", ip);
		b->tokens = per_s;
		b->last_ns = now;
	}
	b->tokens += (double)(now - b->last_ns) * 1e-9 * per_s;
	if (b->tokens > per_s)
		b->tokens = per_s; /* burst: one second's worth */
	b->last_ns = now;
	int ok = b->tokens >= 1.0;
	if (ok)
		b->tokens -= 1.0;
	pthread_mutex_unlock(&rate_mu);
	return ok;
}
