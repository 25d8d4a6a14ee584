/* vrm_gltf: the GLB container and the bounds-checked JSON readers (see vrm_gltf.h). The
 * math is in vrm_gltf_math.c, the node graph and its rest transforms in vrm_gltf_graph.c.
 */
#include "vrm_gltf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum {
	GLB_MAGIC = 0x46546C67u,      /* "glTF" read little-endian */
	GLB_CHUNK_JSON = 0x4E4F534Au, /* "JSON" */
	GLB_CHUNK_BIN = 0x004E4942u,  /* "BIN\0" */
	GLB_HEADER = 12,
	GLB_CHUNK_HEADER = 8,
};

int vrm_fail(char *err, size_t errlen, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return -1;
}

void vrm_pathf(char *buf, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, n, fmt, ap);
	va_end(ap);
}

/* ---- GLB container ---- */

static uint32_t rd_u32le(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int vrm_glb_parse(const uint8_t *data, size_t len, vrm_glb *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (!data || len < GLB_HEADER)
		return vrm_fail(err, errlen,
		                "truncated header: the file is %zu bytes, a GLB header needs %d",
		                len, GLB_HEADER);
	if (rd_u32le(data) != GLB_MAGIC)
		return vrm_fail(
		    err, errlen,
		    "bad magic at byte 0: expected \"glTF\" (67 6c 54 46), got %02x %02x "
		    "%02x %02x: not a .vrm/.glb file",
		    data[0], data[1], data[2], data[3]);
	uint32_t version = rd_u32le(data + 4);
	if (version != 2)
		return vrm_fail(
		    err, errlen,
		    "unsupported GLB version %u at byte 4: only glTF 2.0 binaries (version "
		    "2) are read",
		    (unsigned)version);
	size_t total = rd_u32le(data + 8);
	if (total > len)
		return vrm_fail(
		    err, errlen,
		    "truncated file: the header's length at byte 8 says %zu bytes, the file "
		    "has %zu",
		    total, len);
	if (total < GLB_HEADER + GLB_CHUNK_HEADER)
		return vrm_fail(
		    err, errlen,
		    "bad header: total length %zu at byte 8 leaves no room for the JSON chunk",
		    total);
	out->trailing = len - total;

	/* Every chunk header is read only after checking 8 bytes remain, every chunk body only
	 * after checking its length against what the header's total leaves. */
	size_t pos = GLB_HEADER;
	for (int chunk = 0; pos < total; chunk++) {
		if (total - pos < GLB_CHUNK_HEADER)
			return vrm_fail(
			    err, errlen,
			    "truncated chunk header at byte %zu: %zu bytes left, a chunk "
			    "header needs %d",
			    pos, total - pos, GLB_CHUNK_HEADER);
		size_t clen = rd_u32le(data + pos);
		uint32_t ctype = rd_u32le(data + pos + 4);
		size_t avail = total - pos - GLB_CHUNK_HEADER;
		if (clen > avail)
			return vrm_fail(
			    err, errlen,
			    "chunk %d at byte %zu: length %zu reaches beyond the end of the "
			    "file (%zu bytes follow its header)",
			    chunk, pos, clen, avail);
		const uint8_t *body = data + pos + GLB_CHUNK_HEADER;
		if (chunk == 0) {
			if (ctype != GLB_CHUNK_JSON)
				return vrm_fail(
				    err, errlen,
				    "first chunk at byte %zu has type 0x%08x, expected JSON "
				    "(0x4e4f534a)",
				    pos, (unsigned)ctype);
			if (clen == 0)
				return vrm_fail(err, errlen, "empty JSON chunk at byte %zu", pos);
			out->json = body;
			out->json_len = clen;
			out->json_offset = pos + GLB_CHUNK_HEADER;
		} else if (ctype == GLB_CHUNK_BIN) {
			if (chunk != 1)
				return vrm_fail(
				    err, errlen,
				    "BIN chunk at byte %zu is chunk %d: glTF allows one, "
				    "right after the JSON chunk",
				    pos, chunk);
			out->bin = body;
			out->bin_len = clen;
		} /* other chunk types are skipped, as glTF 2.0 requires of readers */
		pos += GLB_CHUNK_HEADER + clen;
	}
	return 0;
}

json_t *vrm_glb_json(const vrm_glb *glb, char *err, size_t errlen)
{
	size_t n = glb->json_len;
	/* The chunk is padded to 4 bytes with spaces; some exporters pad with NULs instead. */
	while (n > 0 && (glb->json[n - 1] == ' ' || glb->json[n - 1] == '\0'))
		n--;
	json_error_t je;
	json_t *root = json_loadb((const char *)glb->json, n, 0, &je);
	if (!root) {
		vrm_fail(
		    err, errlen,
		    "JSON chunk: syntax error at byte %zu of the file (line %d, column %d of the "
		    "JSON): %s",
		    glb->json_offset + (size_t)(je.position > 0 ? je.position : 0), je.line,
		    je.column, je.text);
		return NULL;
	}
	if (!json_is_object(root)) {
		json_decref(root);
		vrm_fail(err, errlen, "JSON chunk at byte %zu: the document is not a JSON object",
		         glb->json_offset);
		return NULL;
	}
	return root;
}

/* ---- JSON readers ---- */

int vrm_json_index(const json_t *v, int count, const char *what, const char *path, int *out,
                   char *err, size_t errlen)
{
	if (!json_is_integer(v))
		return vrm_fail(err, errlen, "%s: expected a %s index (an integer)", path, what);
	json_int_t i = json_integer_value(v);
	if (i < 0 || i >= count)
		return vrm_fail(err, errlen, "%s: %s index %lld out of range (the file has %d)",
		                path, what, (long long)i, count);
	*out = (int)i;
	return 0;
}

int vrm_json_number(const json_t *obj, const char *key, double def, const char *path, double *out,
                    char *err, size_t errlen)
{
	const json_t *v = obj ? json_object_get(obj, key) : NULL;
	if (!v) {
		*out = def;
		return 0;
	}
	if (!json_is_number(v))
		return vrm_fail(err, errlen, "%s.%s: expected a number", path, key);
	*out = json_number_value(v);
	return 0;
}

int vrm_json_numbers(const json_t *obj, const char *key, int n, const double *def, const char *path,
                     double *out, char *err, size_t errlen)
{
	const json_t *v = obj ? json_object_get(obj, key) : NULL;
	if (!v) {
		memcpy(out, def, sizeof *out * (size_t)n);
		return 0;
	}
	if (!json_is_array(v) || json_array_size(v) != (size_t)n)
		return vrm_fail(err, errlen, "%s.%s: expected an array of %d numbers", path, key,
		                n);
	for (int i = 0; i < n; i++) {
		const json_t *e = json_array_get(v, (size_t)i);
		if (!json_is_number(e))
			return vrm_fail(err, errlen, "%s.%s[%d]: expected a number", path, key, i);
		out[i] = json_number_value(e);
	}
	return 0;
}

int vrm_json_child(const json_t *obj, const char *key, int want_array, const char *path,
                   json_t **out, char *err, size_t errlen)
{
	json_t *v = obj ? json_object_get(obj, key) : NULL;
	*out = NULL;
	if (!v)
		return 0;
	if (want_array ? !json_is_array(v) : !json_is_object(v))
		return vrm_fail(err, errlen, "%s.%s: expected %s", path, key,
		                want_array ? "an array" : "an object");
	*out = v;
	return 0;
}
