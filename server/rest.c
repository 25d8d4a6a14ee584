/* HTTP layer: see rest.h. This file is the socket/request side; responses, request
 * bodies, authorization and the write rate are in rest_resp.c; what each route does is
 * in rest_instances.c, rest_system.c and rest_static.c. */
#include "rest.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "instances.h"
#include "log.h"
#include "metrics.h"
#include "rest_internal.h"
#include "token.h"

struct rest_t {
	struct MHD_Daemon *d;
	app_t *app;
};

/* ---- the route table --------------------------------------------------------------- */

enum {
	R_BODY = 1,  /* reads a JSON body: Content-Type checked (415), size capped (413) */
	R_AUTH = 2,  /* a write to instance {id}: bearer token checked before the body */
	R_WRITE = 4, /* counts against --write-rate (429) */
	R_MERGE = 8, /* also accepts application/merge-patch+json */
	R_GLB = 16,  /* with R_BODY: the body is a GLB (model/gltf-binary or
	              * application/octet-stream), capped by --max-avatar instead */
	R_BIG = 32,  /* holds up to --max-avatar bytes in memory (an avatar coming or going):
	              * at most BIG_INFLIGHT such requests at once, else 503 */
	R_REC = 64,  /* with R_BODY: the body is a recording (application/vnd.ponytail.recording
	              * or application/octet-stream), capped by --max-avatar */
	R_RAUTH = 128, /* a write to room {room}'s settings: bearer token checked before the body */
};

/* Requests holding an avatar file at once: memory stays below BIG_INFLIGHT * --max-avatar
 * (512 MiB at the default) however many clients upload or download avatars. */
enum { BIG_INFLIGHT = 16 };
static int big_inflight; /* atomic */

typedef void (*handler_fn)(const req_t *, resp_t *);

typedef struct route_t {
	const char *method;
	const char *pattern; /* "{id}" matches one path segment; "*" anything else */
	handler_fn fn;
	int flags;
	const char *name; /* metrics label */
} route_t;

static const route_t routes[] = {
    {"GET", "/v1/instances", h_instances_list, 0, "GET /v1/instances"},
    {"POST", "/v1/instances", h_instances_create, R_BODY | R_WRITE, "POST /v1/instances"},
    {"GET", "/v1/instances/{id}", h_instance_get, 0, "GET /v1/instances/{id}"},
    {"PATCH", "/v1/instances/{id}", h_instance_patch, R_BODY | R_AUTH | R_WRITE | R_MERGE,
     "PATCH /v1/instances/{id}"},
    {"DELETE", "/v1/instances/{id}", h_instance_delete, R_AUTH | R_WRITE,
     "DELETE /v1/instances/{id}"},
    {"POST", "/v1/instances/{id}/reset", h_instance_reset, R_AUTH | R_WRITE,
     "POST /v1/instances/{id}/reset"},
    {"GET", "/v1/instances/{id}/frame", h_instance_frame, 0, "GET /v1/instances/{id}/frame"},
    {"PUT", "/v1/instances/{id}/pose", h_instance_pose, R_BODY | R_AUTH | R_WRITE,
     "PUT /v1/instances/{id}/pose"},
    {"PUT", "/v1/instances/{id}/avatar", h_avatar_put, R_BODY | R_GLB | R_BIG | R_AUTH | R_WRITE,
     "PUT /v1/instances/{id}/avatar"},
    {"GET", "/v1/instances/{id}/avatar", h_avatar_get, R_BIG, "GET /v1/instances/{id}/avatar"},
    {"POST", "/v1/instances/{id}/grabs", h_grab_create, R_BODY | R_WRITE,
     "POST /v1/instances/{id}/grabs"},
    {"GET", "/v1/instances/{id}/grabs", h_grabs_list, 0, "GET /v1/instances/{id}/grabs"},
    {"DELETE", "/v1/instances/{id}/grabs/{grab}", h_grab_delete, R_WRITE,
     "DELETE /v1/instances/{id}/grabs/{grab}"},
    {"POST", "/v1/import/vrm", h_import_vrm, R_BODY | R_GLB | R_BIG | R_WRITE,
     "POST /v1/import/vrm"},
    {"GET", "/v1/rooms/{room}/recording", h_room_recording, 0, "GET /v1/rooms/{room}/recording"},
    {"GET", "/v1/rooms/{room}/wind", h_room_wind_get, 0, "GET /v1/rooms/{room}/wind"},
    {"PUT", "/v1/rooms/{room}/wind", h_room_wind_put, R_BODY | R_RAUTH | R_WRITE,
     "PUT /v1/rooms/{room}/wind"},
    {"PATCH", "/v1/rooms/{room}/wind", h_room_wind_patch, R_BODY | R_RAUTH | R_WRITE | R_MERGE,
     "PATCH /v1/rooms/{room}/wind"},
    {"POST", "/v1/replay", h_replay, R_BODY | R_REC | R_BIG, "POST /v1/replay"},
    {"GET", "/v1/info", h_info, 0, "GET /v1/info"},
    {"GET", "/v1/openapi.json", h_openapi, 0, "GET /v1/openapi.json"},
    {"GET", "/healthz", h_healthz, 0, "GET /healthz"},
    {"GET", "/readyz", h_readyz, 0, "GET /readyz"},
    {"GET", "/metrics", h_metrics, 0, "GET /metrics"},
    {"GET", "*", h_static, 0, "GET static"},
};

enum { N_ROUTES = sizeof routes / sizeof routes[0] };

/* 1 when path matches pattern; *id receives the {id} segment (0 if it is not a positive
 * decimal below 2^63, which the caller answers with 400). */
/* {room}: one path segment, copied into room (PT_NAME_MAX bytes; a longer one is cut to
 * "" with *long_room set, a name no room has). */
static int match(const char *pattern, const char *path, uint64_t *id, int *bad_id,
                 char *room, int *long_room)
{
	if (strcmp(pattern, "*") == 0)
		return strncmp(path, "/v1/", 4) != 0 && strcmp(path, "/v1") != 0;
	while (*pattern && *path) {
		if (strncmp(pattern, "{id}", 4) == 0) {
			size_t n = strcspn(path, "/");
			uint64_t v = 0;
			int ok = n > 0 && n <= 18;
			for (size_t i = 0; ok && i < n; i++) {
				ok = path[i] >= '0' && path[i] <= '9';
				v = v * 10 + (uint64_t)(path[i] - '0');
			}
			*bad_id = !ok || v == 0;
			*id = *bad_id ? 0 : v;
			pattern += 4;
			path += n;
			continue;
		}
		if (strncmp(pattern, "{grab}", 6) == 0) { /* digits; the handler reads them */
			size_t n = strcspn(path, "/");
			for (size_t i = 0; i < n; i++)
				if (path[i] < '0' || path[i] > '9')
					return 0;
			if (n == 0 || n > 18)
				return 0;
			pattern += 6;
			path += n;
			continue;
		}
		if (strncmp(pattern, "{room}", 6) == 0) {
			size_t n = strcspn(path, "/");
			if (n == 0)
				return 0;
			*long_room = n >= PT_NAME_MAX;
			snprintf(room, PT_NAME_MAX, "%.*s", *long_room ? 0 : (int)n, path);
			pattern += 6;
			path += n;
			continue;
		}
		if (*pattern != *path)
			return 0;
		pattern++, path++;
	}
	return *pattern == '\0' && *path == '\0';
}

/* ---- request lifecycle ------------------------------------------------------------- */

/* Per request, in *con_cls from the first call to the completion callback. */
typedef struct ctx_t {
	int route; /* index into routes, -1 when answered early */
	int responded;
	uint64_t id;
	char ip[INET6_ADDRSTRLEN];
	char *body;
	size_t len, cap;
	int too_large;
	int big; /* holds one of the BIG_INFLIGHT slots until completion */
	int64_t t0;
	char allow[80]; /* methods of the matched path (405) */
	char room[PT_NAME_MAX]; /* the route's {room}, "" when it has none */
	int long_room;
} ctx_t;

static enum MHD_Result send_resp(struct MHD_Connection *c, ctx_t *x, resp_t *rs, const char *method,
                                 const char *url)
{
	struct MHD_Response *r;
	if (rs->fd >= 0) {
		r = MHD_create_response_from_fd64(rs->fd_size, rs->fd);
	} else {
		r = MHD_create_response_from_buffer(
		    rs->len, rs->body ? rs->body : (void *)(uintptr_t) "",
		    rs->body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
		if (r)
			rs->body = NULL; /* MHD frees it */
	}
	if (!r) {
		free(rs->body);
		return MHD_NO;
	}
	if (rs->content_type)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, rs->content_type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL,
	                        rs->cache ? rs->cache : "no-store");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	if (rs->allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, rs->allow);
	if (rs->location[0])
		MHD_add_response_header(r, MHD_HTTP_HEADER_LOCATION, rs->location);
	if (rs->www_authenticate)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
		                        "Bearer realm=\"ponytail\"");
	enum MHD_Result ok = MHD_queue_response(c, rs->status, r);
	MHD_destroy_response(r);
	x->responded = 1;
	metrics_http(x->route, rs->status);
	LOG(LOG_DEBUG, "%s %s %u %.2f ms (%s)", method, url, rs->status,
	    (double)(sim_mono_ns() - x->t0) / 1e6, x->ip);
	return ok;
}

/* Writes all of buf to a (possibly non-blocking) socket within a second. 0 or -1. */
static int send_all(int fd, const char *buf, size_t len)
{
	int64_t until = sim_mono_ns() + 1000000000;
	while (len > 0) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n > 0) {
			buf += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		struct pollfd p = {.fd = fd, .events = POLLOUT};
		if (sim_mono_ns() >= until || poll(&p, 1, 100) < 0)
			return -1;
	}
	return 0;
}

/* Reads and drops what arrives on fd for up to ms milliseconds (or until EOF). */
static void drain(int fd, int ms)
{
	char buf[4096];
	int64_t until = sim_mono_ns() + (int64_t)ms * 1000000;
	for (;;) {
		int64_t left = (until - sim_mono_ns()) / 1000000;
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return;
		ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			return;
	}
}

/* libmicrohttpd 0.9.75 queues responses only before the body or after all of it, so a
 * refusal in the middle of a body is written to the socket here, with "Connection:
 * close"; the caller then returns MHD_NO and MHD closes the connection. What the client
 * sends meanwhile is read and dropped for up to half a second, so that the close does
 * not reset the connection before the client has read the answer. Plain HTTP only: under
 * TLS the bytes would have to go through the TLS session, so there it is a close. */
static void refuse_mid_body(struct MHD_Connection *c, ctx_t *x, resp_t *rs, const char *method,
                            const char *url)
{
	const union MHD_ConnectionInfo *ci =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const union MHD_ConnectionInfo *tls =
	    MHD_get_connection_info(c, MHD_CONNECTION_INFO_PROTOCOL);
	x->responded = 1;
	metrics_http(x->route, rs->status);
	LOG(LOG_INFO, "%s %s %u, connection closed mid-body (%s)", method, url, rs->status, x->ip);
	if (ci && !tls) {
		char head[256];
		int n = snprintf(head, sizeof head,
		                 "HTTP/1.1 %u Payload Too Large\r\nContent-Type: %s\r\n"
		                 "Content-Length: %zu\r\nCache-Control: no-store\r\n"
		                 "Connection: close\r\n\r\n",
		                 rs->status, rs->content_type, rs->len);
		int fd = ci->connect_fd;
		if (send_all(fd, head, (size_t)n) == 0 && send_all(fd, rs->body, rs->len) == 0) {
			shutdown(fd, SHUT_WR);
			drain(fd, 500);
		}
	}
	free(rs->body);
	rs->body = NULL;
}

static int media_ok(const char *ct, int flags)
{
	if (!ct)
		return 0;
	size_t n = strcspn(ct, "; \t");
	if (flags & (R_GLB | R_REC))
		return (n == 24 && strncasecmp(ct, "application/octet-stream", 24) == 0) ||
		       ((flags & R_GLB) && n == 17 && strncasecmp(ct, "model/gltf-binary", 17) == 0) ||
		       ((flags & R_REC) && n == 34 &&
		        strncasecmp(ct, "application/vnd.ponytail.recording", 34) == 0);
	return (n == 16 && strncasecmp(ct, "application/json", 16) == 0) ||
	       ((flags & R_MERGE) && n == 28 &&
	        strncasecmp(ct, "application/merge-patch+json", 28) == 0);
}

/* The largest body route flags allow: --max-avatar for GLB bodies, else --max-body. */
static int body_cap(const app_t *app, int flags)
{
	return (flags & (R_GLB | R_REC)) ? app->cfg->max_avatar : app->cfg->max_body;
}

/* 1 when the Allow list "GET, HEAD, PUT" names method. */
static int allow_lists(const char *list, const char *method)
{
	size_t n = strlen(method);
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && strncmp(p, method, n) == 0)
			return 1;
		p += len;
		while (*p == ',' || *p == ' ')
			p++;
	}
	return 0;
}

/* First call of a request: route it and apply every check that needs no body. Returns 1
 * when *rs holds an answer to send now. */
static int admit(app_t *app, struct MHD_Connection *c, ctx_t *x, const char *method,
                 const char *url, resp_t *rs)
{
	const char *m = strcmp(method, "HEAD") == 0 ? "GET" : method;
	int path_hit = 0, bad_id = 0;
	x->route = -1;
	for (int i = 0; i < N_ROUTES; i++) {
		uint64_t id = 0;
		int bad = 0;
		if (!match(routes[i].pattern, url, &id, &bad, x->room, &x->long_room))
			continue;
		path_hit = 1;
		if (strcmp(routes[i].method, m) == 0) {
			x->route = i;
			x->id = id;
			bad_id = bad;
			break;
		}
		/* Collect the methods this path allows, for 405's Allow header (once each: a
		 * path like /metrics also matches the static route's GET). */
		if (allow_lists(x->allow, routes[i].method))
			continue;
		size_t n = strlen(x->allow);
		snprintf(x->allow + n, sizeof x->allow - n, "%s%s%s", n ? ", " : "",
		         routes[i].method, strcmp(routes[i].method, "GET") == 0 ? ", HEAD" : "");
	}
	if (x->route < 0) {
		if (!path_hit) {
			resp_error(rs, 404, NULL, "no route %s %s", method, url);
			return 1;
		}
		rs->allow = x->allow;
		resp_error(rs, 405, NULL, "%s is not allowed on %s (allowed: %s)", method, url,
		           x->allow);
		return 1;
	}
	const route_t *r = &routes[x->route];
	if (bad_id) {
		resp_error(rs, 400, "id", "instance ids are positive decimal integers");
		return 1;
	}
	if ((r->flags & R_WRITE) && !rest_rate_ok(app, x->ip)) {
		resp_error(rs, 429, NULL, "more than %d writes per second from %s",
		           app->cfg->write_rate, x->ip);
		return 1;
	}
	req_t rq = {.app = app, .method = method, .url = url, .id = x->id, .ip = x->ip, .conn = c,
	            .path_room = x->room};
	if ((r->flags & R_AUTH) && !req_authorized(&rq, rs))
		return 1;
	if ((r->flags & R_RAUTH) && !req_room_authorized(&rq, rs))
		return 1;
	if (r->flags & R_BIG) {
		if (__atomic_add_fetch(&big_inflight, 1, __ATOMIC_ACQ_REL) > BIG_INFLIGHT) {
			__atomic_sub_fetch(&big_inflight, 1, __ATOMIC_ACQ_REL);
			resp_error(rs, 503, NULL,
			           "%d avatar files are being sent or received; retry in a moment",
			           BIG_INFLIGHT);
			return 1;
		}
		x->big = 1;
	}
	if (r->flags & R_BODY) {
		const char *ct =
		    MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
		if (!media_ok(ct, r->flags)) {
			resp_error(rs, 415, NULL, "expected Content-Type: %s%s, got '%s'",
			           (r->flags & R_GLB)   ? "model/gltf-binary or application/octet-stream"
			           : (r->flags & R_REC) ? "application/vnd.ponytail.recording or application/octet-stream"
			                                : "application/json",
			           (r->flags & R_MERGE) ? " or application/merge-patch+json" : "",
			           ct ? ct : "");
			return 1;
		}
		const char *cl =
		    MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl && strtoull(cl, NULL, 10) > (unsigned long long)body_cap(app, r->flags)) {
			resp_error(rs, 413, NULL, "body of %s bytes; at most %d%s", cl,
			           body_cap(app, r->flags),
			           (r->flags & (R_GLB | R_REC)) ? " (--max-avatar)" : "");
			return 1;
		}
	}
	return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **con_cls)
{
	(void)version;
	app_t *app = cls;
	ctx_t *x = *con_cls;
	resp_t rs = {.fd = -1};
	if (!x) {
		x = calloc(1, sizeof *x);
		if (!x)
			return MHD_NO;
		*con_cls = x;
		x->t0 = sim_mono_ns();
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		const struct sockaddr *sa = ci ? ci->client_addr : NULL;
		if (sa && sa->sa_family == AF_INET)
			inet_ntop(AF_INET,
			          &((const struct sockaddr_in *)(const void *)sa)->sin_addr, x->ip,
			          sizeof x->ip);
		else if (sa && sa->sa_family == AF_INET6)
			inet_ntop(AF_INET6,
			          &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
			          x->ip, sizeof x->ip);
		else
			snprintf(x->ip, sizeof x->ip, "?");
		if (admit(app, c, x, method, url, &rs))
			return send_resp(c, x, &rs, method, url);
		return MHD_YES;
	}
	if (*upload_size) {
		/* After an early answer MHD may still hand us the rest of the body: drop it. */
		if (!x->responded && !x->too_large) {
			size_t need = x->len + *upload_size + 1;
			int cap = body_cap(app, routes[x->route].flags);
			if (need > (size_t)cap + 1) {
				/* A body without Content-Length (chunked) passed the cap: answer
				 * now and close, rather than read it to its end (which may never
				 * come). */
				resp_error(&rs, 413, NULL, "body larger than %d bytes", cap);
				refuse_mid_body(c, x, &rs, method, url);
				return MHD_NO;
			} else {
				if (need > x->cap) {
					size_t nc = x->cap ? x->cap * 2 : 4096;
					while (nc < need)
						nc *= 2;
					char *nb = realloc(x->body, nc);
					if (!nb)
						return MHD_NO;
					x->body = nb;
					x->cap = nc;
				}
				memcpy(x->body + x->len, upload, *upload_size);
				x->len += *upload_size;
				x->body[x->len] = '\0';
			}
		}
		*upload_size = 0;
		return MHD_YES;
	}
	if (x->responded)
		return MHD_YES;
	if (x->too_large) {
		resp_error(&rs, 413, NULL, "body larger than %d bytes", app->cfg->max_body);
		return send_resp(c, x, &rs, method, url);
	}
	const char *room = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "room");
	const char *route_room =
	    room ? room : MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-Ponytail-Room");
	req_t rq = {.app = app,
	            .method = method,
	            .url = url,
	            .id = x->id,
	            .room = room,
	            .include = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "include"),
	            .path_room = x->room,
	            .last = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "last"),
	            .rate = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "rate"),
	            .route_room = route_room,
	            .body = x->body,
	            .body_len = x->len,
	            .ip = x->ip,
	            .conn = c};
	routes[x->route].fn(&rq, &rs);
	return send_resp(c, x, &rs, method, url);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
	(void)cls, (void)c, (void)toe;
	ctx_t *x = *con_cls;
	if (x) {
		if (x->big)
			__atomic_sub_fetch(&big_inflight, 1, __ATOMIC_ACQ_REL);
		free(x->body);
		free(x);
		*con_cls = NULL;
	}
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
/* libmicrohttpd's own messages (bind failures, connection limits) in our log format.
 * A client decides how often most of them happen (one per refused connection: `wrk -c100`
 * made 172,901 lines in 8 s), so each kind — MHD's format string — is written at most once
 * a second, with the count held back. */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
	(void)cls;
	enum { KINDS = 32 };
	static struct {
		const char *fmt;
		log_limit_t lim;
	} kinds[KINDS];
	static log_limit_t other; /* beyond KINDS distinct formats */
	static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
	log_limit_t *lim = &other;
	pthread_mutex_lock(&mu);
	for (int i = 0; i < KINDS; i++)
		if (kinds[i].fmt == fmt || !kinds[i].fmt) {
			kinds[i].fmt = fmt;
			lim = &kinds[i].lim;
			break;
		}
	pthread_mutex_unlock(&mu);
	uint64_t held;
	if (!log_limit(lim, &held))
		return;
	char msg[512];
	vsnprintf(msg, sizeof msg, fmt, ap);
	size_t n = strlen(msg);
	while (n > 0 && (msg[n - 1] == ' ' || msg[n - 1] == '\n'))
		msg[--n] = '\0';
	if (held)
		LOG(LOG_WARN, "libmicrohttpd: %s (and %llu more like it since the last report)",
		    msg, (unsigned long long)held);
	else
		LOG(LOG_WARN, "libmicrohttpd: %s", msg);
}
#pragma GCC diagnostic pop

rest_t *rest_start(app_t *app, char *err, size_t errlen)
{
	static const char *names[N_ROUTES];
	for (int i = 0; i < N_ROUTES; i++)
		names[i] = routes[i].name;
	metrics_set_routes(names, N_ROUTES);

	rest_t *r = calloc(1, sizeof *r);
	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->app = app;
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)app->cfg->http_port);
	inet_pton(AF_INET, app->cfg->bind, &sa.sin_addr);
	unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
	                 MHD_USE_POLL | MHD_USE_ITC | MHD_USE_ERROR_LOG;
	/* HTTPS (tls.h): libmicrohttpd's GnuTLS takes the PEM bytes tls.c read and checked;
	 * TLS 1.2 and 1.3 only. They stay alive (app->tls) until rest_stop. */
	struct MHD_OptionItem tls_opts[4] = {{MHD_OPTION_END, 0, NULL}};
	if (app->tls) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			snprintf(err, errlen, "--tls-cert: this libmicrohttpd is built without TLS");
			free(r);
			return NULL;
		}
		flags |= MHD_USE_TLS;
		tls_opts[0] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, app->tls->cert};
		tls_opts[1] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, app->tls->key};
		tls_opts[2] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0,
		                                      (void *)(uintptr_t) "NORMAL:-VERS-ALL:"
		                                                          "+VERS-TLS1.3:+VERS-TLS1.2"};
		tls_opts[3] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
	}
	r->d = MHD_start_daemon(
	    flags, (uint16_t)app->cfg->http_port, NULL, NULL, on_request, app,
	    MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL, MHD_OPTION_ARRAY, tls_opts, MHD_OPTION_SOCK_ADDR,
	    (struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)app->cfg->request_timeout,
	    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)app->cfg->max_conns_per_ip,
	    MHD_OPTION_CONNECTION_LIMIT, (unsigned)1024, MHD_OPTION_LISTEN_BACKLOG_SIZE,
	    (unsigned)256, MHD_OPTION_END);
	if (!r->d) {
		snprintf(err, errlen, "--http-port %d: cannot listen on %s (in use?)%s",
		         app->cfg->http_port, app->cfg->bind,
		         app->tls ? ", or libmicrohttpd (GnuTLS) refused --tls-cert/--tls-key "
		                    "(its reason is logged above)"
		                  : "");
		free(r);
		return NULL;
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(r->d, MHD_DAEMON_INFO_BIND_PORT);
	app->http_port = di ? di->port : app->cfg->http_port;
	return r;
}

void rest_quiesce(rest_t *r)
{
	if (r && r->d) {
		/* The listen socket is ours to close once MHD lets go of it. */
		MHD_socket s = MHD_quiesce_daemon(r->d);
		if (s != MHD_INVALID_SOCKET)
			close(s);
	}
}

void rest_stop(rest_t *r)
{
	if (!r)
		return;
	if (r->d)
		MHD_stop_daemon(r->d);
	free(r);
}
