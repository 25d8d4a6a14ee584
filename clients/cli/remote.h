/* What the subcommands that talk to a daemon share: the --server / --ws / --token /
 * --json / --timeout flags, REST calls, the server's error JSON turned into one line, and
 * the WebSocket URL learnt from GET /v1/info.
 *
 * REST goes through libcurl (Debian libcurl4-openssl-dev): keep-alive, chunked bodies,
 * timeouts, https (OpenSSL, certificate and host name verified; --ca, --insecure) and
 * proxies come right out of the box, and a one-shot command needs no
 * event loop; libwebsockets' HTTP client would drag its loop into every `ponytail get`.
 *
 * Errors are printed to stderr as "ponytail CMD: ..." and the functions return -1;
 * commands then exit with CLI_EXIT_FAIL (or CLI_EXIT_USAGE for flags). */
#ifndef PONYTAIL_CLI_REMOTE_H
#define PONYTAIL_CLI_REMOTE_H

#include <stddef.h>

#define REMOTE_DEFAULT_SERVER "http://127.0.0.1:8080" /* ponytaild's default --http-port */

typedef struct remote_t {
	const char *cmd;   /* subcommand name, for messages */
	char server[512];  /* --server (or PONYTAIL_SERVER), no trailing slash */
	char ws[512];      /* --ws, or "" to ask the server */
	const char *token; /* --token (or PONYTAIL_TOKEN), NULL if none */
	int json;          /* --json: machine-readable output */
	double timeout_s;  /* --timeout: whole REST request, s */
	const char *room;  /* routing hint, or NULL: sent as X-Ponytail-Room on REST calls and
	                      as ?room= on the WebSocket URL, which docker/'s front proxy
	                      hashes to pick the node that owns the room */
	const char *ca;    /* --ca FILE (or PONYTAIL_CA): the CA to trust for https:// and
	                      wss://, instead of the system's; NULL = the system's */
	int insecure;      /* --insecure: no certificate verification (said on stderr) */
} remote_t;

/* Defaults (environment included). */
void remote_init(remote_t *r, const char *cmd);

/* Does argv[*i] name one of the shared flags? 0: no. 1: consumed (and validated).
 * -1: bad value (printed). `with_json`: accept --json (not every command prints JSON). */
int remote_flag(remote_t *r, int argc, char **argv, int *i, int with_json);

/* The help text of the shared flags, for usage messages. */
extern const char remote_flags_help[];

/* An HTTP answer: status and the body (NUL-terminated, owned: http_free). */
typedef struct http_resp_t {
	long status;
	char *body;
	size_t len;
} http_resp_t;

/* One REST call: method, path ("/v1/..."), optional body with its content type, bearer
 * token when `auth`. 0 with *out filled (any HTTP status), or -1 when the server cannot
 * be reached or answered nothing (printed: "cannot reach http://...: ..."). */
int remote_call(const remote_t *r, const char *method, const char *path, const char *body,
                const char *content_type, int auth, http_resp_t *out);
void http_free(http_resp_t *h);

/* Prints the server's error for a non-2xx answer: "ponytail CMD: 404 not_found: no
 * instance 7 (field id)"; falls back to the raw body when it is not the error JSON. */
void remote_print_error(const remote_t *r, const http_resp_t *h);

/* The WebSocket URL, with r->room appended as ?room= when set: --ws, else GET /v1/info's
 * ws_url (ws://..., or a path on --server's host:port behind a proxy), else
 * ws://<server host>:<its ws_port>/. 0, or -1 (printed). Fills tick_hz (optional) from
 * /v1/info, or 0 when not asked. */
int remote_ws_url(const remote_t *r, char *out, size_t cap, int *tick_hz);

/* base with "?room=R" (or "&room=R") appended, percent-encoded, into out. */
void remote_url_with_room(const char *base, const char *room, char *out, size_t cap);

/* Percent-encodes s for a query string (unreserved characters kept). */
void remote_url_escape(const char *s, char *out, size_t cap);

/* A room name argument: 1..64 bytes of A-Z a-z 0-9 _ . - (the server's rule). 0 or -1
 * (printed, naming the flag). */
int remote_check_room(const char *cmd, const char *flag, const char *room);

/* An instance id argument: a positive decimal below 10^18 (the server's form). 0 or -1
 * (printed, usage error). */
int remote_parse_id(const char *cmd, const char *s, unsigned long long *id);

/* Reads a whole file ("-" = stdin), at most 16 MiB, NUL-terminated. NULL (printed) on
 * failure. */
char *remote_read_file(const char *cmd, const char *path, size_t *len);

/* A client-library context with r's TLS settings (--ca, --insecure) for wss://. NULL
 * with err on failure. */
struct ptc_ctx_t *remote_ctx_create(const remote_t *r, char *err, size_t errlen);

/* A hint to append to a connection error: how to trust the server's certificate when
 * `why` is a certificate failure ("TLS: ..."), else "". */
const char *remote_tls_hint(const remote_t *r, const char *why);

/* Is the process-wide curl initialised? Commands call this once before remote_call. */
int remote_global_init(const char *cmd);
void remote_global_cleanup(void);

#endif
