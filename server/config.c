/* Configuration: the option table and its three readers (file, environment, argv).
 * See config.h for precedence and formats. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "shared_limits.h"

#ifndef PONYTAIL_VERSION
#define PONYTAIL_VERSION "0.1.0"
#endif

typedef enum { OPT_INT, OPT_STR, OPT_LEVEL } opt_kind;

enum { OPT_SECRET = 1 };

typedef struct option_t {
	const char *name; /* flag without "--"; also the config-file key */
	const char *env;  /* environment variable */
	opt_kind kind;
	size_t offset, size; /* field in config_t */
	long min, max;       /* OPT_INT range; OPT_STR length range in bytes */
	const char *def;     /* default, as text: parsed like any other value */
	int flags;
	const char *help;
} option_t;

#define F(field) offsetof(config_t, field), sizeof(((config_t *)0)->field)

/* The one table. Defaults are text so that they go through the same checks as input. */
static const option_t options[] = {
    {"config", "PONYTAIL_CONFIG", OPT_STR, F(config), 0, CONFIG_STR_MAX - 1, "", 0,
     "read `name value` lines from this file first"},
    {"bind", "PONYTAIL_BIND", OPT_STR, F(bind), 7, 15, "127.0.0.1", 0,
     "IPv4 address of both listeners (0.0.0.0 = every interface)"},
    {"http-port", "PONYTAIL_HTTP_PORT", OPT_INT, F(http_port), 0, 65535, "8080", 0,
     "REST, /metrics and the web client (0 = any free port, logged)"},
    {"ws-port", "PONYTAIL_WS_PORT", OPT_INT, F(ws_port), 0, 65535, "8081", 0,
     "WebSocket, subprotocol ponytail.v1 (0 = any free port, logged)"},
    {"ws-public-url", "PONYTAIL_WS_PUBLIC_URL", OPT_STR, F(ws_public_url), 0, CONFIG_STR_MAX - 1,
     "", 0, "WebSocket URL /v1/info tells clients, when a proxy serves it (e.g. /ws)"},
    {"data", "PONYTAIL_DATA", OPT_STR, F(data), 1, CONFIG_STR_MAX - 1, "./var", 0,
     "directory of the SQLite store (created when missing)"},
    {"node-id", "PONYTAIL_NODE_ID", OPT_INT, F(node_id), 0, 9000 /* STORE_NODE_MAX */, "0", 0,
     "this node's number behind a proxy: its ids are node-id * 10^12 + n (0 = alone)"},
    {"web-root", "PONYTAIL_WEB_ROOT", OPT_STR, F(web_root), 1, CONFIG_STR_MAX - 1, "clients/web", 0,
     "directory served at / (a placeholder page when it has no index.html)"},
    {"proto-js", "PONYTAIL_PROTO_JS", OPT_STR, F(proto_js), 1, CONFIG_STR_MAX - 1, "proto/js", 0,
     "directory served at /proto/js/ (the JavaScript codec)"},
    {"tick-hz", "PONYTAIL_TICK_HZ", OPT_INT, F(tick_hz), 1, SERVER_MAX_TICK_HZ, "60", 0,
     "simulation ticks per second"},
    {"substeps", "PONYTAIL_SUBSTEPS", OPT_INT, F(substeps), 1, SERVER_MAX_SUBSTEPS, "4", 0,
     "substeps per tick (an instance's own \"substeps\" wins)"},
    {"workers", "PONYTAIL_WORKERS", OPT_INT, F(workers), 0, 64, "0", 0,
     "threads stepping instances (0 = one per CPU of the process's affinity set)"},
    {"pin-workers", "PONYTAIL_PIN_WORKERS", OPT_INT, F(pin_workers), 0, 1, "1", 0,
     "1 = bind the tick thread and each worker to a CPU of its own (0 = leave it to the "
     "scheduler, which can stack them on one CPU for 4 ms)"},
    {"realtime", "PONYTAIL_REALTIME", OPT_INT, F(realtime), 0, 99, "0", 0,
     "SCHED_FIFO priority (1-99) of the tick thread and workers, so no other thread delays "
     "a tick by a scheduler slice; needs CAP_SYS_NICE or ulimit -r >= N; dropped if the ticks "
     "fall behind (0 = normal scheduling)"},
    {"admin-token", "PONYTAIL_ADMIN_TOKEN", OPT_STR, F(admin_token), 0, TOKEN_MAX_BEARER, "",
     OPT_SECRET, "bearer token allowed to write every instance (16-128 bytes; empty = none)"},
    {"tls-cert", "PONYTAIL_TLS_CERT", OPT_STR, F(tls_cert), 0, CONFIG_STR_MAX - 1, "", 0,
     "PEM certificate (leaf first, then its chain): serve HTTPS and WSS (with --tls-key)"},
    {"tls-key", "PONYTAIL_TLS_KEY", OPT_STR, F(tls_key), 0, CONFIG_STR_MAX - 1, "", 0,
     "PEM private key of --tls-cert (unencrypted; keep it mode 600)"},
    {"max-instances", "PONYTAIL_MAX_INSTANCES", OPT_INT, F(max_instances), 1, 1000000, "10000", 0,
     "instances hosted at most (more: 503)"},
    {"max-points", "PONYTAIL_MAX_POINTS", OPT_INT, F(max_points), 2, SERVER_MAX_POINTS, "4096", 0,
     "points per instance over all strands (more: 422)"},
    {"max-body", "PONYTAIL_MAX_BODY", OPT_INT, F(max_body), 1024, 64 << 20, "1048576", 0,
     "bytes of a REST request body at most (more: 413)"},
    {"max-avatar", "PONYTAIL_MAX_AVATAR", OPT_INT, F(max_avatar), 1024, 256 << 20, "33554432", 0,
     "bytes of an avatar file (.vrm) at most: PUT /v1/instances/{id}/avatar and POST "
     "/v1/import/vrm (more: 413)"},
    {"max-conns-per-ip", "PONYTAIL_MAX_CONNS_PER_IP", OPT_INT, F(max_conns_per_ip), 1, 100000, "64",
     0, "open connections per client address, HTTP and WebSocket each"},
    {"max-ws-conns", "PONYTAIL_MAX_WS_CONNS", OPT_INT, F(max_ws_conns), 1, 100000, "4096", 0,
     "WebSocket connections at most"},
    {"request-timeout", "PONYTAIL_REQUEST_TIMEOUT", OPT_INT, F(request_timeout), 1, 3600, "15", 0,
     "seconds an idle HTTP connection is kept"},
    {"ws-idle-timeout", "PONYTAIL_WS_IDLE_TIMEOUT", OPT_INT, F(ws_idle_timeout), 2, 3600, "30", 0,
     "seconds without client traffic before a WebSocket is pinged, then closed"},
    {"max-subscriptions", "PONYTAIL_MAX_SUBSCRIPTIONS", OPT_INT, F(max_subscriptions), 1,
     SERVER_MAX_U16, "1024", 0, "instances + rooms one WebSocket may subscribe to"},
    {"pose-rate", "PONYTAIL_POSE_RATE", OPT_INT, F(pose_rate), 1, 100000, "1200", 0,
     "head poses per second per authorized instance (more: error rate); the default admits "
     "a 1000 Hz IMU stream"},
    {"write-rate", "PONYTAIL_WRITE_RATE", OPT_INT, F(write_rate), 0, 1000000, "1000", 0,
     "REST writes per second per client address (more: 429; 0 = unlimited)"},
    {"keyframe-interval", "PONYTAIL_KEYFRAME_INTERVAL", OPT_INT, F(keyframe_interval), 1,
     SERVER_MAX_U16, "60", 0, "ticks between periodic keyframes"},
    {"drain-timeout", "PONYTAIL_DRAIN_TIMEOUT", OPT_INT, F(drain_timeout), 2, 3600, "10", 0,
     "s from SIGTERM to exit: readiness 503 at once, writes refused, then close (exit 1 beyond)"},
    {"hand-hold-ms", "PONYTAIL_HAND_HOLD_MS", OPT_INT, F(hand_hold_ms), 1, 60000, "250", 0,
     "ms a hand or finger bone pose keeps colliding and holding grabs without a newer one"},
    {"record-seconds", "PONYTAIL_RECORD_SECONDS", OPT_INT, F(record_seconds), 0, 3600, "300", 0,
     "s of each room's inputs kept for GET /v1/rooms/{room}/recording (0 = off)"},
    {"record", "PONYTAIL_RECORD", OPT_STR, F(record_dir), 0, CONFIG_STR_MAX - 1, "", 0,
     "directory: every room's recording written there continuously (ROOM.TICK.ptrec)"},
    {"record-max-mb", "PONYTAIL_RECORD_MAX_MB", OPT_INT, F(record_max_mb), 1, 4096, "64", 0,
     "MiB one room's recording may hold; past it the room keeps fewer seconds"},
    {"log-level", "PONYTAIL_LOG_LEVEL", OPT_LEVEL, F(log_level), 0, 0, "info", 0,
     "debug, info, warn or error"},
};

#define N_OPTIONS (sizeof options / sizeof options[0])

static const option_t *find(const char *name)
{
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (strcmp(options[i].name, name) == 0)
			return &options[i];
	return NULL;
}

static int set_opt(config_t *c, const option_t *o, const char *v, const char *where, char *err,
                   size_t errlen)
{
	char *field = (char *)c + o->offset;
	switch (o->kind) {
	case OPT_INT: {
		char *end;
		errno = 0;
		long x = strtol(v, &end, 10);
		if (*v == '\0' || *end != '\0' || errno || x < o->min || x > o->max) {
			snprintf(err, errlen, "%s: expected an integer in [%ld, %ld], got '%s'",
			         where, o->min, o->max, v);
			return -1;
		}
		*(int *)(void *)field = (int)x;
		return 0;
	}
	case OPT_LEVEL: {
		int lv = log_level_from_name(v);
		if (lv < 0 || lv > LOG_ERROR) {
			snprintf(err, errlen,
			         "%s: expected one of debug, info, warn, error; got '%s'", where,
			         v);
			return -1;
		}
		*(int *)(void *)field = lv;
		return 0;
	}
	case OPT_STR: {
		size_t n = strlen(v);
		int secret = o->flags & OPT_SECRET;
		/* An empty secret means "none"; a set one must be long enough to be worth it. */
		long min = secret && n == 0 ? 0 : (secret ? 16 : o->min);
		if ((long)n < min || (long)n > o->max || n >= o->size) {
			snprintf(err, errlen, "%s: expected %ld to %ld bytes, got %zu", where, min,
			         o->max, n);
			return -1;
		}
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)v[i] < 0x21 || (unsigned char)v[i] > 0x7e) {
				snprintf(err, errlen, "%s: expected printable ASCII without spaces",
				         where);
				return -1;
			}
		if (strcmp(o->name, "bind") == 0) {
			struct in_addr a;
			if (inet_pton(AF_INET, v, &a) != 1) {
				snprintf(err, errlen,
				         "%s: expected an IPv4 address such as 127.0.0.1, got '%s'",
				         where, v);
				return -1;
			}
		}
		memcpy(field, v, n + 1);
		return 0;
	}
	}
	return -1;
}

int config_set(config_t *c, const char *name, const char *value, const char *where, char *err,
               size_t errlen)
{
	const option_t *o = find(name);
	if (!o) {
		snprintf(err, errlen, "%s: unknown option '%s'", where, name);
		return -1;
	}
	return set_opt(c, o, value, where, err, errlen);
}

void config_defaults(config_t *c)
{
	char err[256];
	memset(c, 0, sizeof *c);
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (set_opt(c, &options[i], options[i].def, options[i].name, err, sizeof err) != 0)
			abort(); /* a bad default is a bug in the table above */
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	char *e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

int config_read_file(config_t *c, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "config %s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	char line[1024], where[CONFIG_STR_MAX + 128];
	int lineno = 0, rc = 0;
	while (rc == 0 && fgets(line, sizeof line, f)) {
		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "config %s:%d: line longer than %zu bytes", path,
			         lineno, sizeof line - 2);
			rc = -1;
			break;
		}
		char *s = trim(line);
		if (*s == '\0' || *s == '#')
			continue;
		size_t k = strcspn(s, " \t");
		char *value = s[k] ? trim(s + k + 1) : s + k;
		s[k] = '\0';
		if (strcmp(s, "config") == 0) {
			snprintf(err, errlen, "config %s:%d: 'config' cannot be set from a file",
			         path, lineno);
			rc = -1;
			break;
		}
		if (*value == '\0' && find(s) && find(s)->kind != OPT_STR) {
			snprintf(err, errlen, "config %s:%d: %s: missing value", path, lineno, s);
			rc = -1;
			break;
		}
		snprintf(where, sizeof where, "config %s:%d: %s", path, lineno, s);
		if (!find(s)) {
			snprintf(err, errlen, "config %s:%d: unknown option '%s'", path, lineno, s);
			rc = -1;
		} else {
			rc = config_set(c, s, value, where, err, errlen);
		}
	}
	if (rc == 0 && ferror(f)) {
		snprintf(err, errlen, "config %s: read error", path);
		rc = -1;
	}
	fclose(f);
	return rc;
}

/* Splits "--name=value" or "--name value"; returns the option or NULL (err set). */
static const option_t *flag_at(int argc, char **argv, int *i, const char **value, char *name,
                               size_t namelen, char *err, size_t errlen)
{
	const char *a = argv[*i];
	if (strncmp(a, "--", 2) != 0) {
		snprintf(err, errlen, "unexpected argument '%s' (see --help)", a);
		return NULL;
	}
	const char *eq = strchr(a, '=');
	size_t n = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
	if (n >= namelen)
		n = namelen - 1;
	memcpy(name, a + 2, n);
	name[n] = '\0';
	const option_t *o = find(name);
	if (!o) {
		snprintf(err, errlen, "unknown flag '--%s' (see --help)", name);
		return NULL;
	}
	if (eq) {
		*value = eq + 1;
	} else if (*i + 1 < argc) {
		*value = argv[++*i];
	} else {
		snprintf(err, errlen, "--%s: missing value", name);
		return NULL;
	}
	return o;
}

int config_load(config_t *c, int argc, char **argv, FILE *out, char *err, size_t errlen)
{
	char name[64], where[96];
	const char *value;
	config_defaults(c);

	/* First pass: --help/--version, and find the config file (flag beats variable). */
	const char *file = getenv("PONYTAIL_CONFIG");
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			config_print_help(out);
			return CONFIG_EXIT;
		}
		if (strcmp(argv[i], "--version") == 0) {
			fprintf(out, "ponytaild %s\n", PONYTAIL_VERSION);
			return CONFIG_EXIT;
		}
		if (!flag_at(argc, argv, &i, &value, name, sizeof name, err, errlen))
			return CONFIG_ERROR;
		if (strcmp(name, "config") == 0)
			file = value;
	}
	if (file && *file) {
		if (config_set(c, "config", file, "--config", err, errlen) != 0 ||
		    config_read_file(c, file, err, errlen) != 0)
			return CONFIG_ERROR;
	}
	for (size_t k = 0; k < N_OPTIONS; k++) {
		const char *v = getenv(options[k].env);
		if (v && strcmp(options[k].name, "config") != 0 &&
		    set_opt(c, &options[k], v, options[k].env, err, errlen) != 0)
			return CONFIG_ERROR;
	}
	for (int i = 1; i < argc; i++) {
		const option_t *o = flag_at(argc, argv, &i, &value, name, sizeof name, err, errlen);
		if (!o)
			return CONFIG_ERROR;
		snprintf(where, sizeof where, "--%s", o->name);
		if (strcmp(o->name, "config") != 0 && set_opt(c, o, value, where, err, errlen) != 0)
			return CONFIG_ERROR;
	}
	return CONFIG_OK;
}

void config_print_help(FILE *out)
{
	fprintf(out, "usage: ponytaild [--flag value ...]\n\n"
	             "Hosts ponytail hair-simulation instances: REST on --http-port, WebSocket\n"
	             "(subprotocol ponytail.v1) on --ws-port, state in --data/ponytail.db.\n"
	             "Every flag is also an environment variable and a config-file key.\n\n");
	for (size_t i = 0; i < N_OPTIONS; i++) {
		const option_t *o = &options[i];
		char range[64] = "";
		if (o->kind == OPT_INT)
			snprintf(range, sizeof range, " [%ld, %ld]", o->min, o->max);
		fprintf(out, "  --%-18s %s%s\n  %-20s   env %s, default %s%s%s\n", o->name, o->help,
		        range, "", o->env, *o->def ? "'" : "", *o->def ? o->def : "none",
		        *o->def ? "'" : "");
	}
	fprintf(out, "  --help, --version\n");
}

void config_log(const config_t *c)
{
	char line[2048];
	size_t n = 0;
	for (size_t i = 0; i < N_OPTIONS && n < sizeof line; i++) {
		const option_t *o = &options[i];
		const char *field = (const char *)c + o->offset;
		int w;
		if (o->kind == OPT_INT)
			w = snprintf(line + n, sizeof line - n, " %s=%d", o->name,
			             *(const int *)(const void *)field);
		else if (o->kind == OPT_LEVEL)
			w = snprintf(line + n, sizeof line - n, " %s=%s", o->name,
			             log_level_name(*(const int *)(const void *)field));
		else if (o->flags & OPT_SECRET)
			w = snprintf(line + n, sizeof line - n, " %s=%s", o->name,
			             *field ? "(set)" : "(none)");
		else
			w = snprintf(line + n, sizeof line - n, " %s=%s", o->name, field);
		if (w < 0)
			break;
		n += (size_t)w;
	}
	LOG(LOG_INFO, "effective:%s", line);
}
