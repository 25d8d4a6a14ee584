/* Shared flags, REST calls over libcurl, error reporting (see remote.h). */
#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "ponytail_client.h"
#include "remote.h"

const char remote_flags_help[] =
    "--server URL     the daemon's REST address (default $PONYTAIL_SERVER, else\n"
    "                 " REMOTE_DEFAULT_SERVER ")\n"
    "--ws URL         its WebSocket address (default: what GET /v1/info says: its ws_url,\n"
    "                 a path on --server behind a proxy, else ws://<server host>:<ws_port>/;\n"
    "                 wss:// when --server is https://)\n"
    "--token T        the instance's write token (default $PONYTAIL_TOKEN); also the\n"
    "                 admin token\n"
    "--timeout S      seconds a REST call may take, [0.1, 600]. Default 10\n"
    "--ca FILE        trust the CA certificate(s) in FILE (PEM) for https:// and wss://\n"
    "                 (default $PONYTAIL_CA, else the system's CAs)\n"
    "--insecure       do not verify the server's certificate (encrypted, but anyone\n"
    "                 may be answering; said on stderr)\n";

static CURL *curl; /* one handle per process: keep-alive across calls */

int remote_global_init(const char *cmd)
{
	if (curl)
		return 0;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(curl = curl_easy_init())) {
		fprintf(stderr, "ponytail %s: libcurl failed to initialise\n", cmd);
		return -1;
	}
	return 0;
}

void remote_global_cleanup(void)
{
	if (curl)
		curl_easy_cleanup(curl);
	curl = NULL;
	curl_global_cleanup();
}

/* 0 when s is http(s)://host[:port][/prefix] with printable ASCII; copied without the
 * trailing slash. */
static int set_server(remote_t *r, const char *s, const char *flag)
{
	size_t n = strlen(s);
	int ok =
	    (strncmp(s, "http://", 7) == 0 && n > 7) || (strncmp(s, "https://", 8) == 0 && n > 8);
	for (size_t i = 0; ok && i < n; i++)
		ok = (unsigned char)s[i] > 0x20 && (unsigned char)s[i] < 0x7f;
	if (!ok || n >= sizeof r->server) {
		fprintf(stderr, "ponytail %s: %s: expected http://host[:port], got '%s'\n", r->cmd,
		        flag, s);
		return -1;
	}
	memcpy(r->server, s, n + 1);
	while (n > 0 && r->server[n - 1] == '/')
		r->server[--n] = '\0';
	return 0;
}

void remote_init(remote_t *r, const char *cmd)
{
	memset(r, 0, sizeof *r);
	r->cmd = cmd;
	r->timeout_s = 10;
	const char *env = getenv("PONYTAIL_SERVER");
	if (!env || !*env || set_server(r, env, "$PONYTAIL_SERVER") != 0)
		snprintf(r->server, sizeof r->server, "%s", REMOTE_DEFAULT_SERVER);
	env = getenv("PONYTAIL_TOKEN");
	r->token = env && *env ? env : NULL;
	env = getenv("PONYTAIL_CA");
	r->ca = env && *env ? env : NULL;
}

/* --insecure is said once per process, on stderr, wherever it is used first. */
static void say_insecure(const remote_t *r)
{
	static int said;
	if (r->insecure && !said) {
		said = 1;
		fprintf(stderr,
		        "ponytail %s: --insecure: the server's TLS certificate is not verified\n",
		        r->cmd);
	}
}

struct ptc_ctx_t *remote_ctx_create(const remote_t *r, char *err, size_t errlen)
{
	ptc_tls_t tls = {r->ca, r->insecure};
	say_insecure(r);
	return ptc_ctx_create_tls(&tls, err, errlen);
}

const char *remote_tls_hint(const remote_t *r, const char *why)
{
	if (!why || strncmp(why, "TLS: ", 5) != 0 || r->insecure)
		return "";
	return r->ca ? " (is --ca the CA that issued the server's certificate, and does the "
	               "certificate name this host?)"
	             : " (give the CA that issued it with --ca FILE, or skip the check with "
	               "--insecure)";
}

int remote_flag(remote_t *r, int argc, char **argv, int *i, int with_json)
{
	const char *v;
	int k;
	if ((k = cli_flag(r->cmd, "--server", argc, argv, i, &v)) != 0)
		return k < 0 ? -1 : (set_server(r, v, "--server") == 0 ? 1 : -1);
	if ((k = cli_flag(r->cmd, "--ws", argc, argv, i, &v)) != 0) {
		if (k < 0)
			return -1;
		int tls = strncmp(v, "wss://", 6) == 0;
		if ((strncmp(v, "ws://", 5) != 0 && !tls) || strlen(v) < (tls ? 7u : 6u) ||
		    strlen(v) >= sizeof r->ws) {
			fprintf(stderr,
			        "ponytail %s: --ws: expected ws:// or wss://host:port[/path], got "
			        "'%s'\n",
			        r->cmd, v);
			return -1;
		}
		snprintf(r->ws, sizeof r->ws, "%s", v);
		return 1;
	}
	if ((k = cli_flag(r->cmd, "--token", argc, argv, i, &v)) != 0) {
		if (k < 0)
			return -1;
		size_t n = strlen(v);
		int ok = n >= 1 && n <= 128;
		for (size_t j = 0; ok && j < n; j++)
			ok = (unsigned char)v[j] > 0x20 && (unsigned char)v[j] < 0x7f;
		if (!ok) {
			fprintf(stderr,
			        "ponytail %s: --token: expected 1 to 128 printable characters\n",
			        r->cmd);
			return -1;
		}
		r->token = v;
		return 1;
	}
	if ((k = cli_flag(r->cmd, "--ca", argc, argv, i, &v)) != 0) {
		if (k < 0)
			return -1;
		FILE *f = fopen(v, "r");
		if (!f) {
			fprintf(stderr, "ponytail %s: --ca: cannot read %s: %s\n", r->cmd, v,
			        strerror(errno));
			return -1;
		}
		fclose(f);
		r->ca = v;
		return 1;
	}
	if ((k = cli_switch(r->cmd, "--insecure", argv[*i])) != 0) {
		r->insecure = k > 0;
		return k;
	}
	if ((k = cli_flag(r->cmd, "--timeout", argc, argv, i, &v)) != 0)
		return k < 0 || cli_parse_real(r->cmd, "--timeout", v, 0.1, 600, &r->timeout_s) != 0
		           ? -1
		           : 1;
	if (with_json && (k = cli_switch(r->cmd, "--json", argv[*i])) != 0) {
		r->json = k > 0;
		return k;
	}
	return 0;
}

static size_t on_body(char *data, size_t size, size_t n, void *user)
{
	http_resp_t *h = user;
	size_t add = size * n;
	if (h->len + add > (64u << 20))
		return 0; /* a REST answer this large is not one: abort the transfer */
	char *nb = realloc(h->body, h->len + add + 1);
	if (!nb)
		return 0;
	memcpy(nb + h->len, data, add);
	h->body = nb;
	h->len += add;
	h->body[h->len] = '\0';
	return add;
}

int remote_call(const remote_t *r, const char *method, const char *path, const char *body,
                const char *content_type, int auth, http_resp_t *out)
{
	memset(out, 0, sizeof *out);
	if (remote_global_init(r->cmd) != 0)
		return -1;
	char url[1024], authz[160], ctype[96];
	snprintf(url, sizeof url, "%s%s", r->server, path);
	struct curl_slist *hdr = NULL;
	if (auth && r->token) {
		snprintf(authz, sizeof authz, "Authorization: Bearer %s", r->token);
		hdr = curl_slist_append(hdr, authz);
	}
	if (body) {
		snprintf(ctype, sizeof ctype, "Content-Type: %s", content_type);
		hdr = curl_slist_append(hdr, ctype);
	}
	hdr = curl_slist_append(hdr, "Accept: application/json");
	char routing[128];
	if (r->room && *r->room) {
		snprintf(routing, sizeof routing, "X-Ponytail-Room: %s", r->room);
		hdr = curl_slist_append(hdr, routing);
	}
	char errbuf[CURL_ERROR_SIZE] = "";
	curl_easy_reset(curl);
	curl_easy_setopt(curl, CURLOPT_URL, url);
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
	curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)(r->timeout_s * 1000));
	curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
	                 (long)(r->timeout_s < 5 ? r->timeout_s * 1000 : 5000));
	curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(curl, CURLOPT_WRITEDATA, out);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(curl, CURLOPT_NOBODY, 1L);
	/* https://: libcurl verifies the chain and the host name by default. */
	if (r->ca)
		curl_easy_setopt(curl, CURLOPT_CAINFO, r->ca);
	if (r->insecure) {
		say_insecure(r);
		curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (body) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	}
	CURLcode rc = curl_easy_perform(curl);
	curl_slist_free_all(hdr);
	if (rc != CURLE_OK) {
		size_t n = strlen(errbuf);
		while (n > 0 && errbuf[n - 1] == '\n')
			errbuf[--n] = '\0';
		int cert = rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CACERT_BADFILE;
		fprintf(stderr, "ponytail %s: cannot reach %s: %s%s%s\n", r->cmd, r->server,
		        cert ? "TLS: " : "", errbuf[0] ? errbuf : curl_easy_strerror(rc),
		        cert ? remote_tls_hint(r, "TLS: ") : "");
		http_free(out);
		return -1;
	}
	curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &out->status);
	if (!out->body) {
		out->body = calloc(1, 1);
		if (!out->body) {
			fprintf(stderr, "ponytail %s: out of memory\n", r->cmd);
			return -1;
		}
	}
	return 0;
}

void http_free(http_resp_t *h)
{
	free(h->body);
	h->body = NULL;
	h->len = 0;
}

void remote_print_error(const remote_t *r, const http_resp_t *h)
{
	json_t *j = h->body ? json_loads(h->body, 0, NULL) : NULL;
	json_t *e = json_object_get(j, "error");
	const char *code = json_string_value(json_object_get(e, "code"));
	const char *msg = json_string_value(json_object_get(e, "message"));
	const char *field = json_string_value(json_object_get(e, "field"));
	if (msg)
		fprintf(stderr, "ponytail %s: %ld %s: %s%s%s%s\n", r->cmd, h->status,
		        code ? code : "error", msg, field ? " (field " : "", field ? field : "",
		        field ? ")" : "");
	else
		fprintf(stderr, "ponytail %s: HTTP %ld from %s: %.200s\n", r->cmd, h->status,
		        r->server, h->body && *h->body ? h->body : "(no body)");
	json_decref(j);
}

int remote_ws_url(const remote_t *r, char *out, size_t cap, int *tick_hz)
{
	if (tick_hz)
		*tick_hz = 0;
	if (r->ws[0] && !tick_hz) {
		remote_url_with_room(r->ws, r->room, out, cap);
		return 0;
	}
	http_resp_t h;
	if (remote_call(r, "GET", "/v1/info", NULL, NULL, 0, &h) != 0)
		return -1;
	json_t *j = h.status == 200 ? json_loads(h.body, 0, NULL) : NULL;
	json_int_t port = json_integer_value(json_object_get(j, "ws_port"));
	char url[512] = ""; /* "ws_url": the daemon's --ws-public-url, when a proxy serves it */
	const char *ws_url = json_string_value(json_object_get(j, "ws_url"));
	snprintf(url, sizeof url, "%s", ws_url ? ws_url : "");
	if (tick_hz)
		*tick_hz = (int)json_integer_value(json_object_get(j, "tick_hz"));
	json_decref(j);
	if (h.status != 200 || ((port < 1 || port > 65535) && !url[0])) {
		if (h.status != 200)
			remote_print_error(r, &h);
		else
			fprintf(stderr, "ponytail %s: GET /v1/info gave no ws_port; use --ws URL\n",
			        r->cmd);
		http_free(&h);
		return -1;
	}
	http_free(&h);
	char base[600];
	if (r->ws[0]) {
		remote_url_with_room(r->ws, r->room, out, cap);
		return 0;
	}
	/* --server's authority (host[:port]) and host ([IPv6] kept). */
	const char *auth = strstr(r->server, "://") + 3;
	size_t an = strcspn(auth, "/");
	size_t hn = auth[0] == '[' ? strcspn(auth, "]") + 1 : strcspn(auth, ":/");
	/* https:// REST means wss:// WebSocket: the daemon serves both or neither (tls.h),
	 * and a TLS proxy in front of a path serves it on the same authority. */
	const char *scheme = strncmp(r->server, "https://", 8) == 0 ? "wss" : "ws";
	if (strncmp(url, "ws://", 5) == 0 || strncmp(url, "wss://", 6) == 0) {
		snprintf(base, sizeof base, "%s", url);
	} else if (url[0] == '/') {
		snprintf(base, sizeof base, "%s://%.*s%s", scheme, (int)an, auth, url);
	} else if (!url[0]) {
		snprintf(base, sizeof base, "%s://%.*s:%d/", scheme, (int)hn, auth, (int)port);
	} else {
		fprintf(stderr,
		        "ponytail %s: GET /v1/info gave ws_url '%s', not a ws://, wss:// or /path "
		        "URL; use --ws URL\n",
		        r->cmd, url);
		return -1;
	}
	remote_url_with_room(base, r->room, out, cap);
	return 0;
}

void remote_url_escape(const char *s, char *out, size_t cap)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t k = 0;
	for (; *s && k + 4 < cap; s++) {
		unsigned char ch = (unsigned char)*s;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' || ch == '.' || ch == '~') {
			out[k++] = (char)ch;
		} else {
			out[k++] = '%';
			out[k++] = hex[ch >> 4];
			out[k++] = hex[ch & 15];
		}
	}
	out[k] = '\0';
}

void remote_url_with_room(const char *base, const char *room, char *out, size_t cap)
{
	char esc[200];
	if (!room || !*room) {
		snprintf(out, cap, "%s", base);
		return;
	}
	remote_url_escape(room, esc, sizeof esc);
	snprintf(out, cap, "%s%croom=%s", base, strchr(base, '?') ? '&' : '?', esc);
}

int remote_check_room(const char *cmd, const char *flag, const char *room)
{
	size_t n = strlen(room);
	int ok = n >= 1 && n <= 64;
	for (size_t i = 0; ok && i < n; i++)
		ok = (room[i] >= 'a' && room[i] <= 'z') || (room[i] >= 'A' && room[i] <= 'Z') ||
		     (room[i] >= '0' && room[i] <= '9') || room[i] == '_' || room[i] == '.' ||
		     room[i] == '-';
	if (!ok)
		fprintf(stderr,
		        "ponytail %s: %s: expected 1 to 64 of A-Z a-z 0-9 _ . -, got '%s'\n", cmd,
		        flag, room);
	return ok ? 0 : -1;
}

int remote_parse_id(const char *cmd, const char *s, unsigned long long *id)
{
	size_t n = strlen(s);
	int ok = n >= 1 && n <= 18;
	unsigned long long v = 0;
	for (size_t i = 0; ok && i < n; i++) {
		ok = s[i] >= '0' && s[i] <= '9';
		v = v * 10 + (unsigned long long)(s[i] - '0');
	}
	if (!ok || v == 0) {
		fprintf(stderr,
		        "ponytail %s: expected an instance id (a positive integer), got '%s'\n",
		        cmd, s);
		return -1;
	}
	*id = v;
	return 0;
}

char *remote_read_file(const char *cmd, const char *path, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "ponytail %s: %s: %s\n", cmd, path, strerror(errno));
		return NULL;
	}
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf) {
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
		if (n + 1 == cap) {
			if (cap >= (16u << 20)) {
				fprintf(stderr, "ponytail %s: %s: larger than 16 MiB\n", cmd, path);
				free(buf);
				buf = NULL;
				break;
			}
			char *nb = realloc(buf, cap * 2);
			if (!nb)
				free(buf);
			buf = nb;
			cap *= 2;
		}
	}
	int bad = buf && ferror(f);
	if (f != stdin)
		fclose(f);
	if (!buf || bad) {
		if (bad)
			fprintf(stderr, "ponytail %s: %s: read error\n", cmd, path);
		else if (buf == NULL && errno == ENOMEM)
			fprintf(stderr, "ponytail %s: out of memory\n", cmd);
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}
