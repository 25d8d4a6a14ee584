/* Static files: --web-root at "/" (the browser client, clients/web/) and --proto-js at
 * "/proto/js/" (the JavaScript codec the page imports). When the web root has no
 * index.html, "/" answers a small built-in placeholder page instead.
 *
 * Every path is checked before it touches the file system: no "..", no hidden segments,
 * and the resolved file must lie inside its root (a symlink pointing out is refused).
 */
/* realpath() is X/Open. */
#define _XOPEN_SOURCE 700

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rest_internal.h"

static const char placeholder[] =
    "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<title>ponytaild</title>\n<style>body{font:16px/1.5 system-ui,sans-serif;max-width:42em;"
    "margin:3em auto;padding:0 1em}code{background:#f2f2f2;padding:0 .2em}</style>\n"
    "</head><body>\n<h1>ponytaild is running</h1>\n"
    "<p>The browser client is not installed here (no <code>index.html</code> in the web "
    "root, <code>--web-root</code>). The API is:</p>\n<ul>\n"
    "<li><a href=\"/v1/instances\">/v1/instances</a> &mdash; list; <code>POST</code> to "
    "create</li>\n<li><a href=\"/v1/info\">/v1/info</a> &mdash; tick rate and WebSocket "
    "port</li>\n<li><a href=\"/metrics\">/metrics</a>, <a href=\"/healthz\">/healthz</a>, "
    "<a href=\"/readyz\">/readyz</a></li>\n</ul>\n</body></html>\n";

static const struct {
	const char *ext, *type;
} types[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".json", "application/json"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".jpg", "image/jpeg"},
    {".ico", "image/x-icon"},
    {".wasm", "application/wasm"},
    {".map", "application/json"},
    {".txt", "text/plain; charset=utf-8"},
    {".glb", "model/gltf-binary"},
    {".vrm", "model/gltf-binary"},
};

static const char *type_of(const char *path)
{
	const char *dot = strrchr(path, '.');
	for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
		if (strcmp(dot, types[i].ext) == 0)
			return types[i].type;
	return "application/octet-stream";
}

/* 1 when every segment of rel is a plain name. */
static int safe(const char *rel)
{
	if (strchr(rel, '\\'))
		return 0;
	for (const char *p = rel; *p;) {
		while (*p == '/')
			p++;
		if (*p == '.')
			return 0; /* ".", "..", and hidden files */
		p += strcspn(p, "/");
	}
	return 1;
}

/* Opens root/rel if it is a regular file inside root. Returns the fd or -1. */
static int open_inside(const char *root, const char *rel, uint64_t *size)
{
	char path[PATH_MAX], real_root[PATH_MAX], real_file[PATH_MAX];
	if (!realpath(root, real_root))
		return -1;
	if (snprintf(path, sizeof path, "%s/%s", real_root, rel) >= (int)sizeof path)
		return -1;
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		size_t n = strlen(path);
		if (snprintf(path + n, sizeof path - n, "/index.html") >= (int)(sizeof path - n))
			return -1;
	}
	if (!realpath(path, real_file))
		return -1;
	size_t rn = strlen(real_root);
	if (strncmp(real_file, real_root, rn) != 0 || real_file[rn] != '/')
		return -1;
	int fd = open(real_file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

void h_static(const req_t *rq, resp_t *rs)
{
	const config_t *cfg = rq->app->cfg;
	const char *root = cfg->web_root, *rel = rq->url;
	if (strncmp(rel, "/proto/js/", 10) == 0) {
		root = cfg->proto_js;
		rel += 10;
	}
	while (*rel == '/')
		rel++;
	if (*rel == '\0')
		rel = "index.html";
	if (!safe(rel)) {
		resp_error(rs, 404, NULL, "no file %s", rq->url);
		return;
	}
	uint64_t size = 0;
	int fd = open_inside(root, rel, &size);
	if (fd < 0) {
		if (root == cfg->web_root && strcmp(rel, "index.html") == 0) {
			resp_text(rs, 200, "text/html; charset=utf-8", placeholder,
			          sizeof placeholder - 1);
			return;
		}
		resp_error(rs, 404, NULL, "no file %s", rq->url);
		return;
	}
	rs->status = 200;
	rs->fd = fd;
	rs->fd_size = size;
	rs->content_type = type_of(rel);
	rs->cache = "no-cache";
}
