/* ponytaild configuration: one option table drives the command line, the environment,
 * the config file and --help (Redis config.c style).
 *
 * Precedence, lowest first: built-in defaults, the config file (--config FILE or
 * PONYTAIL_CONFIG), environment variables (PONYTAIL_HTTP_PORT, ...), command-line flags.
 * A config file has one `name value` pair per line, names as the flags without "--"
 * ("http-port 8080"); blank lines and lines starting with '#' are ignored. A bad value
 * anywhere stops start-up with a message that names the flag (and the file line) and the
 * allowed range.
 *
 * Threading: config_load runs once in main before any thread starts; afterwards the
 * config_t is read-only and may be read by every thread.
 */
#ifndef SERVER_CONFIG_H
#define SERVER_CONFIG_H

#include <stddef.h>
#include <stdio.h>

enum { CONFIG_STR_MAX = 256 };

typedef struct config_t {
	char config[CONFIG_STR_MAX]; /* the config file read, "" for none */
	char bind[64];               /* IPv4 address both listeners bind, "127.0.0.1" */
	int http_port;               /* REST, metrics and web client; 0 = any free port */
	int ws_port;                 /* WebSocket (subprotocol ponytail.v1); 0 = any free */
	char
	    ws_public_url[CONFIG_STR_MAX]; /* WebSocket URL for clients behind a proxy, "" = none */
	char data[CONFIG_STR_MAX];         /* directory of the SQLite store, "./var" */
	int node_id;                       /* ids are node_id * 10^12 + n (store.h), 0 = alone */
	char web_root[CONFIG_STR_MAX];     /* files served at "/", "clients/web" */
	char proto_js[CONFIG_STR_MAX];     /* files served at "/proto/js/", "proto/js" */
	int tick_hz;                       /* server ticks per second, usually 60 */
	int substeps;                      /* substeps per tick, usually 4 */
	int workers;                       /* stepping threads; 0 = one per CPU it may use */
	int pin_workers;                   /* 1: each stepping thread bound to its own CPU */
	int realtime;                      /* SCHED_FIFO priority of those threads, 0 = off */
	char admin_token[CONFIG_STR_MAX];  /* "" = none; secret: never printed or logged */
	char tls_cert[CONFIG_STR_MAX];     /* PEM certificate (chain) file, "" = plain HTTP/WS */
	char tls_key[CONFIG_STR_MAX];      /* PEM private key file; set with tls_cert (tls.h) */
	int max_instances;
	int max_points;       /* points per instance, all strands (core allows 32 x 64) */
	int max_body;         /* bytes of a REST request body */
	int max_avatar;       /* bytes of an avatar file (.vrm): PUT .../avatar, POST /v1/import/vrm */
	int max_conns_per_ip; /* per client address, HTTP and WebSocket each */
	int max_ws_conns;
	int request_timeout;   /* s of HTTP inactivity before a connection is closed */
	int ws_idle_timeout;   /* s without any client traffic before a WS is closed */
	int max_subscriptions; /* instances + rooms per WebSocket connection */
	int pose_rate;         /* head poses per second per WebSocket connection */
	int write_rate;        /* REST writes per second per client address, 0 = off */
	int keyframe_interval; /* ticks between periodic keyframes */
	int drain_timeout;     /* s from SIGTERM to exit at the latest (exit 1 beyond) */
	int hand_hold_ms;      /* ms a hand bone pose stays fresh (touch and grabs) */
	int record_seconds;    /* s of each room's inputs kept for GET .../recording, 0 = off */
	int record_max_mb;     /* MiB a room's recording may hold (it then keeps less time) */
	char record_dir[CONFIG_STR_MAX]; /* --record DIR: every room's recording on disk, "" = no */
	int log_level;         /* LOG_DEBUG .. LOG_ERROR (log.h) */
} config_t;

/* Results of config_load. */
enum { CONFIG_OK = 0, CONFIG_EXIT = 1, CONFIG_ERROR = -1 };

/* Fills *c from defaults, file, environment and argv (in that order of precedence).
 * Returns CONFIG_OK; CONFIG_EXIT after printing --help or --version to `out` (the caller
 * exits 0); or CONFIG_ERROR with a one-line message in err ("--tick-hz: expected an
 * integer in [1, 1000], got '0'", "config f.conf:3: unknown option 'tickhz'"). */
int config_load(config_t *c, int argc, char **argv, FILE *out, char *err, size_t errlen);

/* The built-in defaults only (what config_load starts from). */
void config_defaults(config_t *c);

/* Reads `key value` lines from the file at `path` into *c. Returns 0, or -1 with err
 * naming the file and line. */
int config_read_file(config_t *c, const char *path, char *err, size_t errlen);

/* Sets one option by name ("tick-hz") from text; `where` prefixes the error message
 * ("--tick-hz", "PONYTAIL_TICK_HZ", "config f:3: tick-hz"). Returns 0 or -1. */
int config_set(config_t *c, const char *name, const char *value, const char *where, char *err,
               size_t errlen);

/* Writes --help (every option with its flag, variable, default and range) to out. */
void config_print_help(FILE *out);

/* Logs the effective configuration, one line, secrets shown as "(set)". */
void config_log(const config_t *c);

#endif
