/* libFuzzer target: the REST layer in process, without sockets — rest.c's request
 * lifecycle (routing, limits, auth, body collection) and every handler behind it, over a
 * real registry, store (a temporary directory), command queue and running tick thread.
 * libmicrohttpd is replaced by the stubs below, which hand on_request() what MHD would:
 * the method, the decoded path, the headers and query arguments, and the body in pieces.
 *
 * Input: requests separated by lines "=="; each "METHOD PATH[?k=v&...]\n", header lines
 * "Name: value\n", an empty line, then the body (any bytes; delivered in chunks whose size
 * the first body byte picks). An "@" in the path is the newest instance's id.
 * Properties checked beyond "never crash, never leak, never read outside the input":
 * every request gets exactly one answer; no answer is a 500 (the daemon's "bug" status);
 * every error body is JSON {"error": {"code", "message", "field"}}. After each input,
 * instances it created are deleted again (admin token), so the state stays small. */
#include "../../server/rest.c"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "app.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ADMIN "fuzz-admin-token-0123456789"

/* ---- libmicrohttpd, as far as rest*.c use it ---------------------------------------- */

enum { MAX_KV = 32 };
struct MHD_Connection {
	struct {
		const char *k, *v;
	} hdr[MAX_KV], arg[MAX_KV];
	int nhdr, narg;
	int answers;
	unsigned status;
	int probe; /* /healthz or /readyz */
	struct sockaddr_in peer;
};
struct MHD_Response {
	void *buf;
	size_t len;
	int must_free, fd;
};

const char *MHD_lookup_connection_value(struct MHD_Connection *c, enum MHD_ValueKind kind,
                                        const char *key)
{
	if (kind == MHD_HEADER_KIND) {
		for (int i = 0; i < c->nhdr; i++)
			if (strcasecmp(c->hdr[i].k, key) == 0)
				return c->hdr[i].v;
	} else if (kind == MHD_GET_ARGUMENT_KIND) {
		for (int i = 0; i < c->narg; i++)
			if (strcmp(c->arg[i].k, key) == 0)
				return c->arg[i].v;
	}
	return NULL;
}

const union MHD_ConnectionInfo *MHD_get_connection_info(struct MHD_Connection *c,
                                                        enum MHD_ConnectionInfoType t, ...)
{
	static union MHD_ConnectionInfo ci;
	if (t != MHD_CONNECTION_INFO_CLIENT_ADDRESS)
		return NULL; /* no socket, no TLS */
	ci.client_addr = (struct sockaddr *)&c->peer;
	return &ci;
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
                                                     enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = calloc(1, sizeof *r);
	r->buf = buffer;
	r->len = size;
	r->must_free = mode == MHD_RESPMEM_MUST_FREE;
	r->fd = -1;
	return r;
}

struct MHD_Response *MHD_create_response_from_fd64(uint64_t size, int fd)
{
	struct MHD_Response *r = calloc(1, sizeof *r);
	r->len = (size_t)size;
	r->fd = fd;
	return r;
}

enum MHD_Result MHD_add_response_header(struct MHD_Response *r, const char *h, const char *v)
{
	(void)r;
	if (!h || !v || strchr(v, '\n') || strchr(v, '\r'))
		abort(); /* a header value must never carry a line break */
	return MHD_YES;
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *c, unsigned int status,
                                   struct MHD_Response *r)
{
	c->answers++;
	c->status = status;
	if (status == 500)
		abort(); /* "internal": a bug, never a client's doing */
	/* Errors have the documented shape (the probes' 503 is their own: {"ready": false}). */
	if (status >= 400 && r->buf && !c->probe) {
		json_error_t e;
		json_t *j = json_loadb(r->buf, r->len, 0, &e);
		json_t *err = json_object_get(j, "error");
		if (!json_is_string(json_object_get(err, "code")) ||
		    !json_is_string(json_object_get(err, "message")) || !json_object_get(err, "field"))
			abort(); /* every error has the documented shape */
		json_decref(j);
	}
	return MHD_YES;
}

void MHD_destroy_response(struct MHD_Response *r)
{
	if (r->must_free)
		free(r->buf);
	if (r->fd >= 0)
		close(r->fd);
	free(r);
}

struct MHD_Daemon *MHD_start_daemon(unsigned int flags, uint16_t port, MHD_AcceptPolicyCallback apc,
                                    void *apc_cls, MHD_AccessHandlerCallback dh, void *dh_cls, ...)
{
	(void)flags, (void)port, (void)apc, (void)apc_cls, (void)dh, (void)dh_cls;
	return NULL;
}
void MHD_stop_daemon(struct MHD_Daemon *d) { (void)d; }
enum MHD_Result MHD_is_feature_supported(enum MHD_FEATURE f)
{
	(void)f;
	return MHD_NO; /* rest_start's TLS check; the harness serves plain requests */
}
MHD_socket MHD_quiesce_daemon(struct MHD_Daemon *d)
{
	(void)d;
	return MHD_INVALID_SOCKET;
}
const union MHD_DaemonInfo *MHD_get_daemon_info(struct MHD_Daemon *d, enum MHD_DaemonInfoType t, ...)
{
	(void)d, (void)t;
	return NULL;
}

/* ---- the daemon, once ------------------------------------------------------------------ */

static config_t cfg;
static app_t app;

static void stop_all(void)
{
	sim_stop(app.sim);
	store_close(app.store);
	sim_destroy(app.sim);
	frame_ring_destroy(app.ring);
	cmdq_destroy(app.q);
	registry_destroy(app.reg);
}

static void boot(void)
{
	static char dir[] = "/tmp/ponytail-fuzz-rest-XXXXXX";
	char err[512];
	config_defaults(&cfg);
	if (!mkdtemp(dir))
		abort();
	snprintf(cfg.data, sizeof cfg.data, "%s", dir);
	snprintf(cfg.admin_token, sizeof cfg.admin_token, "%s", ADMIN);
	cfg.tick_hz = 1000; /* writes wait for a tick: keep that short */
	cfg.workers = 1;
	cfg.max_body = 65536;
	cfg.max_instances = 64;
	cfg.write_rate = 0;
	log_set_level(LOG_OFF);
	app.cfg = &cfg;
	app.store = store_open(cfg.data, 0, err, sizeof err);
	app.reg = registry_create();
	app.q = cmdq_create(1024);
	app.ring = frame_ring_create(cfg.max_instances);
	sim_config_t sc = {.tick_hz = cfg.tick_hz,
	                   .substeps = cfg.substeps,
	                   .workers = cfg.workers,
	                   .keyframe_interval = cfg.keyframe_interval};
	app.sim = app.q && app.ring ? sim_create(&sc, app.q, app.ring) : NULL;
	if (!app.store || !app.reg || !app.sim || sim_start(app.sim) != 0)
		abort();
	app.ws_ready = 1;
	app.ws_port = 1;
	static const char *names[N_ROUTES];
	for (int i = 0; i < N_ROUTES; i++)
		names[i] = routes[i].name;
	metrics_set_routes(names, N_ROUTES);
	atexit(stop_all);
}

/* One request through on_request and on_completed, as MHD would make the calls. */
static unsigned serve(struct MHD_Connection *c, const char *method, const char *path,
                      const uint8_t *body, size_t len)
{
	void *cls = NULL;
	size_t zero = 0;
	c->probe = strcmp(path, "/healthz") == 0 || strcmp(path, "/readyz") == 0;
	c->peer.sin_family = AF_INET;
	c->peer.sin_addr.s_addr = htonl(0x7f000001);
	enum MHD_Result r = on_request(&app, c, path, method, "HTTP/1.1", NULL, &zero, &cls);
	size_t step = 1 + (len ? body[0] % 64 : 0) * 97;
	/* After an early answer MHD still hands over the rest of the body; rest.c drops it. */
	for (size_t off = 0; r == MHD_YES && off < len; off += step) {
		size_t n = len - off < step ? len - off : step, left = n;
		r = on_request(&app, c, path, method, "HTTP/1.1", (const char *)body + off, &left, &cls);
		if (r == MHD_YES && left != 0)
			abort(); /* MHD expects the body consumed */
	}
	if (r == MHD_YES && c->answers == 0)
		r = on_request(&app, c, path, method, "HTTP/1.1", NULL, &zero, &cls);
	if (r == MHD_YES && c->answers != 1)
		abort(); /* exactly one answer, unless the connection is dropped */
	on_completed(NULL, c, &cls, MHD_REQUEST_TERMINATED_COMPLETED_OK);
	if (getenv("FUZZ_VERBOSE")) /* for writing seeds: what each one reaches */
		fprintf(stderr, "%s %s -> %u\n", method, path, c->status);
	return c->status;
}

/* Deletes every instance the input created (ids above keep). */
static void clean_up(uint64_t keep)
{
	reg_info_t *list = NULL;
	int n = registry_list(app.reg, NULL, &list);
	for (int i = 0; i < n; i++) {
		if (list[i].id <= keep)
			continue;
		struct MHD_Connection c = {0};
		char path[64];
		snprintf(path, sizeof path, "/v1/instances/%llu", (unsigned long long)list[i].id);
		c.hdr[c.nhdr].k = "Authorization", c.hdr[c.nhdr++].v = "Bearer " ADMIN;
		serve(&c, "DELETE", path, NULL, 0);
	}
	free(list);
}

/* Splits "k=v&k2=v2" in place into c->arg. */
static void parse_args(struct MHD_Connection *c, char *q)
{
	for (char *kv = strtok(q, "&"); kv && c->narg < MAX_KV; kv = strtok(NULL, "&")) {
		char *eq = strchr(kv, '=');
		if (eq)
			*eq = '\0';
		c->arg[c->narg].k = kv;
		c->arg[c->narg++].v = eq ? eq + 1 : "";
	}
}

/* The newest instance id, for "@" in a path. */
static uint64_t newest_id(void)
{
	reg_info_t *list = NULL;
	int n = registry_list(app.reg, NULL, &list);
	uint64_t id = 0;
	for (int i = 0; i < n; i++)
		id = list[i].id > id ? list[i].id : id;
	free(list);
	return id;
}

/* One request of the input (see the top of the file). */
static void one(const uint8_t *data, size_t size)
{
	/* The request head is text up to the first empty line; the rest is the body. */
	size_t head_len = 0;
	while (head_len + 1 < size && !(data[head_len] == '\n' && data[head_len + 1] == '\n'))
		head_len++;
	if (head_len + 1 >= size)
		head_len = size;
	char *head = malloc(head_len + 1);
	memcpy(head, data, head_len);
	head[head_len] = '\0';
	if (strlen(head) != head_len) { /* MHD never passes a NUL inside the head */
		free(head);
		return;
	}
	const uint8_t *body = data + (head_len + 2 <= size ? head_len + 2 : size);
	size_t body_len = (size_t)(data + size - body);

	struct MHD_Connection c = {0};
	char *save = NULL;
	char *line = strtok_r(head, "\n", &save);
	char *method = line ? strtok(line, " ") : NULL;
	char *url = method ? strtok(NULL, " ") : NULL;
	if (!url || url[0] != '/' || strlen(url) > 1000) {
		free(head);
		return;
	}
	char path[1100];
	char *at = strchr(url, '@');
	if (at)
		snprintf(path, sizeof path, "%.*s%llu%s", (int)(at - url), url,
		         (unsigned long long)newest_id(), at + 1);
	else
		snprintf(path, sizeof path, "%s", url);
	char *q = strchr(path, '?');
	if (q) {
		*q = '\0';
		parse_args(&c, q + 1);
	}
	while ((line = strtok_r(NULL, "\n", &save)) && c.nhdr < MAX_KV) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		char *v = colon + 1;
		while (*v == ' ')
			v++;
		c.hdr[c.nhdr].k = line;
		c.hdr[c.nhdr++].v = v;
	}
	serve(&c, method, path, body, body_len);
	free(head);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!app.sim)
		boot();
	/* Requests are separated by a line "=="; "@" in a path is the newest instance's id. */
	size_t start = 0;
	for (size_t i = 0; i + 4 <= size; i++)
		if (i >= start && memcmp(data + i, "\n==\n", 4) == 0) {
			one(data + start, i - start);
			start = i + 4;
		}
	one(data + start, size - start);
	clean_up(0);
	return 0;
}
