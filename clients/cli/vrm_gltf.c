/* vrm_gltf: GLB container, node graph and rest transforms, JSON readers (see vrm_gltf.h). */
#include "vrm_gltf.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A document with more nodes than this is not an avatar; refusing it early keeps every
 * int index and every allocation below far from overflow. */
#define VRM_MAX_NODES 1000000

#define VRM_PI 3.14159265358979323846 /* M_PI is not in strict C11 */

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

/* ---- math ---- */

double vrm_len(vrm_vec3 a)
{
	return sqrt(vrm_dot(a, a));
}

vrm_vec3 vrm_normalize(vrm_vec3 a)
{
	double l = vrm_len(a);
	return l < 1e-12 ? vrm_v3(0, 0, 0) : vrm_scale(a, 1.0 / l);
}

double vrm_angle_deg(vrm_vec3 a, vrm_vec3 b)
{
	double la = vrm_len(a), lb = vrm_len(b);
	if (la < 1e-12 || lb < 1e-12)
		return 0.0;
	/* atan2 of |a×b| and a·b stays accurate at tiny angles, where acos does not. */
	return atan2(vrm_len(vrm_cross(a, b)), vrm_dot(a, b)) * (180.0 / VRM_PI);
}

vrm_mat4 vrm_mat4_identity(void)
{
	vrm_mat4 m = {{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}};
	return m;
}

vrm_mat4 vrm_mat4_mul(const vrm_mat4 *a, const vrm_mat4 *b)
{
	vrm_mat4 c;
	for (int col = 0; col < 4; col++)
		for (int row = 0; row < 4; row++) {
			double s = 0;
			for (int k = 0; k < 4; k++)
				s += a->m[k * 4 + row] * b->m[col * 4 + k];
			c.m[col * 4 + row] = s;
		}
	return c;
}

vrm_rot vrm_rot_from_quat(const double q[4])
{
	double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
	double x = q[0] / n, y = q[1] / n, z = q[2] / n, w = q[3] / n;
	vrm_rot r = {{
	    1 - 2 * (y * y + z * z), 2 * (x * y + z * w), 2 * (x * z - y * w), /* column 0 */
	    2 * (x * y - z * w), 1 - 2 * (x * x + z * z), 2 * (y * z + x * w), /* column 1 */
	    2 * (x * z + y * w), 2 * (y * z - x * w), 1 - 2 * (x * x + y * y), /* column 2 */
	}};
	return r;
}

vrm_mat4 vrm_mat4_trs(vrm_vec3 t, const double q[4], vrm_vec3 s)
{
	vrm_rot r = vrm_rot_from_quat(q);
	double sc[3] = {s.x, s.y, s.z};
	vrm_mat4 m = vrm_mat4_identity();
	for (int col = 0; col < 3; col++)
		for (int row = 0; row < 3; row++)
			m.m[col * 4 + row] = r.r[col * 3 + row] * sc[col];
	m.m[12] = t.x;
	m.m[13] = t.y;
	m.m[14] = t.z;
	return m;
}

static vrm_vec3 mat4_col(const vrm_mat4 *m, int c)
{
	return vrm_v3(m->m[c * 4], m->m[c * 4 + 1], m->m[c * 4 + 2]);
}

vrm_vec3 vrm_mat4_dir(const vrm_mat4 *m, vrm_vec3 d)
{
	return vrm_add(vrm_add(vrm_scale(mat4_col(m, 0), d.x), vrm_scale(mat4_col(m, 1), d.y)),
	               vrm_scale(mat4_col(m, 2), d.z));
}

vrm_vec3 vrm_mat4_point(const vrm_mat4 *m, vrm_vec3 p)
{
	return vrm_add(vrm_mat4_dir(m, p), mat4_col(m, 3));
}

vrm_vec3 vrm_mat4_normal(const vrm_mat4 *m, vrm_vec3 n)
{
	/* With columns a, b, c the inverse transpose is [b×c, c×a, a×b] / det; the scale of
	 * det drops out in the normalisation, its sign does not. */
	vrm_vec3 a = mat4_col(m, 0), b = mat4_col(m, 1), c = mat4_col(m, 2);
	vrm_vec3 r =
	    vrm_add(vrm_add(vrm_scale(vrm_cross(b, c), n.x), vrm_scale(vrm_cross(c, a), n.y)),
	            vrm_scale(vrm_cross(a, b), n.z));
	return vrm_normalize(vrm_mat4_det3(m) < 0 ? vrm_scale(r, -1) : r);
}

vrm_vec3 vrm_mat4_translation(const vrm_mat4 *m)
{
	return mat4_col(m, 3);
}

vrm_vec3 vrm_mat4_axis_scale(const vrm_mat4 *m)
{
	return vrm_v3(vrm_len(mat4_col(m, 0)), vrm_len(mat4_col(m, 1)), vrm_len(mat4_col(m, 2)));
}

double vrm_mat4_det3(const vrm_mat4 *m)
{
	return vrm_dot(vrm_cross(mat4_col(m, 0), mat4_col(m, 1)), mat4_col(m, 2));
}

static vrm_rot rot_from_axes(vrm_vec3 x, vrm_vec3 y, vrm_vec3 z)
{
	vrm_rot r = {{x.x, x.y, x.z, y.x, y.y, y.z, z.x, z.y, z.z}};
	return r;
}

vrm_rot vrm_rot_from_mat4(const vrm_mat4 *m)
{
	vrm_vec3 x = vrm_normalize(mat4_col(m, 0));
	if (vrm_len(x) == 0)
		x = vrm_v3(1, 0, 0);
	vrm_vec3 y = mat4_col(m, 1);
	y = vrm_normalize(vrm_sub(y, vrm_scale(x, vrm_dot(x, y))));
	if (vrm_len(y) == 0) /* degenerate: any unit vector perpendicular to x */
		y = vrm_normalize(fabs(x.y) < 0.9 ? vrm_cross(vrm_v3(0, 0, 1), x)
		                                  : vrm_cross(x, vrm_v3(1, 0, 0)));
	return rot_from_axes(x, y, vrm_cross(x, y));
}

vrm_rot vrm_rot_mul(const vrm_rot *a, const vrm_rot *b)
{
	vrm_rot c;
	for (int col = 0; col < 3; col++)
		for (int row = 0; row < 3; row++) {
			double s = 0;
			for (int k = 0; k < 3; k++)
				s += a->r[k * 3 + row] * b->r[col * 3 + k];
			c.r[col * 3 + row] = s;
		}
	return c;
}

vrm_vec3 vrm_rot_apply(const vrm_rot *r, vrm_vec3 v)
{
	return vrm_v3(r->r[0] * v.x + r->r[3] * v.y + r->r[6] * v.z,
	              r->r[1] * v.x + r->r[4] * v.y + r->r[7] * v.z,
	              r->r[2] * v.x + r->r[5] * v.y + r->r[8] * v.z);
}

vrm_vec3 vrm_rot_apply_inv(const vrm_rot *r, vrm_vec3 v)
{
	return vrm_v3(r->r[0] * v.x + r->r[1] * v.y + r->r[2] * v.z,
	              r->r[3] * v.x + r->r[4] * v.y + r->r[5] * v.z,
	              r->r[6] * v.x + r->r[7] * v.y + r->r[8] * v.z);
}

vrm_rot vrm_rot_between(vrm_vec3 a, vrm_vec3 b)
{
	double d = vrm_dot(a, b);
	double q[4];
	if (d < -1.0 + 1e-12) {
		vrm_vec3 k = vrm_cross(a, vrm_v3(0, 0, 1));
		if (vrm_len(k) < 1e-6)
			k = vrm_cross(a, vrm_v3(1, 0, 0));
		k = vrm_normalize(k);
		q[0] = k.x, q[1] = k.y, q[2] = k.z, q[3] = 0; /* 180° about k */
	} else {
		/* Half-way quaternion: (a × b, 1 + a·b) normalised is the shortest arc. */
		vrm_vec3 c = vrm_cross(a, b);
		q[0] = c.x, q[1] = c.y, q[2] = c.z, q[3] = 1.0 + d;
	}
	return vrm_rot_from_quat(q);
}

double vrm_rot_angle_deg(const vrm_rot *r)
{
	double c = (r->r[0] + r->r[4] + r->r[8] - 1.0) / 2.0;
	c = c > 1 ? 1 : c < -1 ? -1 : c;
	return acos(c) * (180.0 / VRM_PI);
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

/* ---- structural index checks of glTF itself ---- */

static int array_count(const json_t *doc, const char *key, int *count, char *err, size_t errlen)
{
	json_t *a;
	if (vrm_json_child(doc, key, 1, "glTF", &a, err, errlen))
		return -1;
	size_t n = a ? json_array_size(a) : 0;
	if (n > VRM_MAX_NODES)
		return vrm_fail(err, errlen,
		                "%s: %zu entries, more than the %d this reader accepts", key, n,
		                VRM_MAX_NODES);
	*count = (int)n;
	return 0;
}

/* obj[key], when present, must be an index into an array of `count` `what`s. */
static int check_ref(const json_t *obj, const char *key, int count, const char *what,
                     const char *path, char *err, size_t errlen)
{
	const json_t *v = json_object_get(obj, key);
	char p[256];
	int unused;
	if (!v)
		return 0;
	vrm_pathf(p, sizeof p, "%s.%s", path, key);
	return vrm_json_index(v, count, what, p, &unused, err, errlen);
}

/* obj[key], when present, must be an array of indices into `count` `what`s. */
static int check_refs(const json_t *obj, const char *key, int count, const char *what,
                      const char *path, char *err, size_t errlen)
{
	json_t *a;
	if (vrm_json_child(obj, key, 1, path, &a, err, errlen))
		return -1;
	for (size_t i = 0; a && i < json_array_size(a); i++) {
		char p[256];
		int unused;
		vrm_pathf(p, sizeof p, "%s.%s[%zu]", path, key, i);
		if (vrm_json_index(json_array_get(a, i), count, what, p, &unused, err, errlen))
			return -1;
	}
	return 0;
}

/* Non-negative integer obj[key] (default 0) as a size. */
static int get_size(const json_t *obj, const char *key, const char *path, size_t *out, char *err,
                    size_t errlen)
{
	const json_t *v = json_object_get(obj, key);
	*out = 0;
	if (!v)
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return vrm_fail(err, errlen, "%s.%s: expected a non-negative integer", path, key);
	*out = (size_t)json_integer_value(v);
	return 0;
}

/* Each entry of doc[key] must be an object; calls check(entry, path) on it. */
typedef int (*entry_check)(const json_t *doc, const json_t *e, const char *path, size_t bin_len,
                           char *err, size_t errlen);

static int each_entry(const json_t *doc, const char *key, entry_check check, size_t bin_len,
                      char *err, size_t errlen)
{
	const json_t *a = json_object_get(doc, key);
	for (size_t i = 0; a && i < json_array_size(a); i++) {
		char p[64];
		vrm_pathf(p, sizeof p, "%s[%zu]", key, i);
		if (!json_is_object(json_array_get(a, i)))
			return vrm_fail(err, errlen, "%s: expected an object", p);
		if (check(doc, json_array_get(a, i), p, bin_len, err, errlen))
			return -1;
	}
	return 0;
}

static int count_of(const json_t *doc, const char *key)
{
	const json_t *a = json_object_get(doc, key);
	return json_is_array(a) ? (int)json_array_size(a) : 0;
}

static int check_buffer(const json_t *doc, const json_t *e, const char *path, size_t bin_len,
                        char *err, size_t errlen)
{
	size_t len;
	const json_t *buffers = json_object_get(doc, "buffers");
	if (get_size(e, "byteLength", path, &len, err, errlen))
		return -1;
	/* In a GLB, the first buffer without a uri is the BIN chunk; it must fit in it. */
	if (e == json_array_get(buffers, 0) && !json_object_get(e, "uri") && len > bin_len)
		return vrm_fail(err, errlen,
		                "%s.byteLength: %zu bytes, but the BIN chunk holds %zu", path, len,
		                bin_len);
	return 0;
}

static int check_buffer_view(const json_t *doc, const json_t *e, const char *path, size_t bin_len,
                             char *err, size_t errlen)
{
	int b;
	size_t off, len, blen;
	char p[256];
	(void)bin_len;
	vrm_pathf(p, sizeof p, "%s.buffer", path);
	if (vrm_json_index(json_object_get(e, "buffer"), count_of(doc, "buffers"), "buffer", p, &b,
	                   err, errlen) ||
	    get_size(e, "byteOffset", path, &off, err, errlen) ||
	    get_size(e, "byteLength", path, &len, err, errlen) ||
	    get_size(json_array_get(json_object_get(doc, "buffers"), (size_t)b), "byteLength",
	             "buffers", &blen, err, errlen))
		return -1;
	if (len > blen || off > blen - len)
		return vrm_fail(err, errlen, "%s: bytes %zu..%zu lie outside buffer %d (%zu bytes)",
		                path, off, off + len, b, blen);
	return 0;
}

static int check_accessor(const json_t *doc, const json_t *e, const char *path, size_t bin_len,
                          char *err, size_t errlen)
{
	(void)bin_len;
	return check_ref(e, "bufferView", count_of(doc, "bufferViews"), "bufferView", path, err,
	                 errlen);
}

static int check_mesh(const json_t *doc, const json_t *e, const char *path, size_t bin_len,
                      char *err, size_t errlen)
{
	json_t *prims;
	int accessors = count_of(doc, "accessors");
	(void)bin_len;
	if (vrm_json_child(e, "primitives", 1, path, &prims, err, errlen))
		return -1;
	for (size_t i = 0; prims && i < json_array_size(prims); i++) {
		const json_t *prim = json_array_get(prims, i);
		json_t *attrs, *targets;
		const char *key;
		json_t *v;
		char p[256];
		vrm_pathf(p, sizeof p, "%s.primitives[%zu]", path, i);
		if (!json_is_object(prim))
			return vrm_fail(err, errlen, "%s: expected an object", p);
		if (check_ref(prim, "indices", accessors, "accessor", p, err, errlen) ||
		    vrm_json_child(prim, "attributes", 0, p, &attrs, err, errlen) ||
		    vrm_json_child(prim, "targets", 1, p, &targets, err, errlen))
			return -1;
		json_object_foreach(attrs, key, v)
		{
			char pa[320];
			int unused;
			vrm_pathf(pa, sizeof pa, "%s.attributes.%s", p, key);
			if (vrm_json_index(v, accessors, "accessor", pa, &unused, err, errlen))
				return -1;
		}
		for (size_t t = 0; targets && t < json_array_size(targets); t++) {
			json_t *target = json_array_get(targets, t);
			char pt[320];
			vrm_pathf(pt, sizeof pt, "%s.targets[%zu]", p, t);
			if (!json_is_object(target))
				return vrm_fail(err, errlen, "%s: expected an object", pt);
			json_object_foreach(target, key, v)
			{
				char pa[400];
				int unused;
				vrm_pathf(pa, sizeof pa, "%s.%s", pt, key);
				if (vrm_json_index(v, accessors, "accessor", pa, &unused, err,
				                   errlen))
					return -1;
			}
		}
	}
	return 0;
}

static int check_skin(const json_t *doc, const json_t *e, const char *path, size_t bin_len,
                      char *err, size_t errlen)
{
	int nodes = count_of(doc, "nodes");
	(void)bin_len;
	return check_ref(e, "inverseBindMatrices", count_of(doc, "accessors"), "accessor", path,
	                 err, errlen) ||
	       check_ref(e, "skeleton", nodes, "node", path, err, errlen) ||
	       check_refs(e, "joints", nodes, "node", path, err, errlen);
}

static int check_scene(const json_t *doc, const json_t *e, const char *path, size_t bin_len,
                       char *err, size_t errlen)
{
	(void)bin_len;
	return check_refs(e, "nodes", count_of(doc, "nodes"), "node", path, err, errlen);
}

static int check_structure(const json_t *doc, size_t bin_len, char *err, size_t errlen)
{
	static const char *const arrays[] = {"buffers", "bufferViews", "accessors", "meshes",
	                                     "skins",   "scenes",      "cameras",   NULL};
	int unused;
	for (int i = 0; arrays[i]; i++)
		if (array_count(doc, arrays[i], &unused, err, errlen))
			return -1;
	return each_entry(doc, "buffers", check_buffer, bin_len, err, errlen) ||
	       each_entry(doc, "bufferViews", check_buffer_view, bin_len, err, errlen) ||
	       each_entry(doc, "accessors", check_accessor, bin_len, err, errlen) ||
	       each_entry(doc, "meshes", check_mesh, bin_len, err, errlen) ||
	       each_entry(doc, "skins", check_skin, bin_len, err, errlen) ||
	       each_entry(doc, "scenes", check_scene, bin_len, err, errlen) ||
	       check_ref(doc, "scene", count_of(doc, "scenes"), "scene", "glTF", err, errlen);
}

/* ---- node graph ---- */

static int read_local(const json_t *node, const char *path, vrm_mat4 *out, char *err, size_t errlen)
{
	static const double zero[3] = {0, 0, 0}, one[3] = {1, 1, 1}, ident_q[4] = {0, 0, 0, 1};
	if (json_object_get(node, "matrix")) {
		double m[16], ident[16];
		vrm_mat4 id = vrm_mat4_identity();
		memcpy(ident, id.m, sizeof ident);
		if (vrm_json_numbers(node, "matrix", 16, ident, path, m, err, errlen))
			return -1;
		memcpy(out->m, m, sizeof m);
		return 0;
	}
	double t[3], q[4], s[3];
	if (vrm_json_numbers(node, "translation", 3, zero, path, t, err, errlen) ||
	    vrm_json_numbers(node, "rotation", 4, ident_q, path, q, err, errlen) ||
	    vrm_json_numbers(node, "scale", 3, one, path, s, err, errlen))
		return -1;
	if (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] < 1e-12)
		return vrm_fail(err, errlen, "%s.rotation: zero quaternion", path);
	*out = vrm_mat4_trs(vrm_v3(t[0], t[1], t[2]), q, vrm_v3(s[0], s[1], s[2]));
	return 0;
}

static int finite_mat(const vrm_mat4 *m)
{
	for (int i = 0; i < 16; i++)
		if (!isfinite(m->m[i]))
			return 0;
	return 1;
}

/* Composes world transforms root-down. With one parent per node, following parent links
 * from any node either reaches a root or loops; `state` (0 new, 1 on the current path,
 * 2 done) finds the loop in O(nodes) before anything is multiplied. */
static int compose_world(vrm_graph *g, char *err, size_t errlen)
{
	int n = g->count, rc = 0;
	unsigned char *state = calloc((size_t)n + 1, 1);
	int *path = malloc(sizeof *path * ((size_t)n + 1));
	if (!state || !path) {
		rc = vrm_fail(err, errlen, "out of memory for %d nodes", n);
		goto out;
	}
	for (int i = 0; i < n; i++) {
		int depth = 0, cur = i;
		while (cur >= 0 && state[cur] == 0) {
			state[cur] = 1;
			path[depth++] = cur;
			cur = g->nodes[cur].parent;
		}
		if (cur >= 0 && state[cur] == 1) {
			rc = vrm_fail(err, errlen,
			              "nodes: the node graph has a cycle through node %d (\"%s\")",
			              cur, g->nodes[cur].name);
			goto out;
		}
		while (depth-- > 0) {
			vrm_node *nd = &g->nodes[path[depth]];
			nd->world = nd->parent < 0
			                ? nd->local
			                : vrm_mat4_mul(&g->nodes[nd->parent].world, &nd->local);
			if (!finite_mat(&nd->world)) {
				rc = vrm_fail(
				    err, errlen,
				    "nodes[%d]: its world transform overflows (values too large)",
				    path[depth]);
				goto out;
			}
			state[path[depth]] = 2;
		}
	}
out:
	free(state);
	free(path);
	return rc;
}

int vrm_graph_load(const json_t *doc, size_t bin_len, vrm_graph *g, char *err, size_t errlen)
{
	json_t *nodes;
	memset(g, 0, sizeof *g);
	if (vrm_json_child(doc, "nodes", 1, "glTF", &nodes, err, errlen) ||
	    array_count(doc, "nodes", &g->count, err, errlen) ||
	    check_structure(doc, bin_len, err, errlen))
		return -1;
	int n = g->count;
	g->nodes = calloc((size_t)n + 1, sizeof *g->nodes);
	g->names = calloc((size_t)n + 1, 16); /* "node" + up to 7 digits + NUL */
	/* Each node has at most one parent (checked below before a child is stored), so all
	 * children lists together hold at most n entries. */
	g->child_list = calloc((size_t)n + 1, sizeof *g->child_list);
	int stored = 0;
	if (!g->nodes || !g->names || !g->child_list)
		return vrm_fail(err, errlen, "out of memory for %d nodes", n);
	for (int i = 0; i < n; i++) {
		g->nodes[i].parent = -1;
		g->nodes[i].first_child = -1;
	}
	for (int i = 0; i < n; i++) {
		const json_t *node = json_array_get(nodes, (size_t)i), *name;
		json_t *children;
		vrm_node *nd = &g->nodes[i];
		char path[64];
		vrm_pathf(path, sizeof path, "nodes[%d]", i);
		if (!json_is_object(node))
			return vrm_fail(err, errlen, "%s: expected an object", path);
		name = json_object_get(node, "name");
		if (name && !json_is_string(name))
			return vrm_fail(err, errlen, "%s.name: expected a string", path);
		if (name && json_string_length(name) > 0) {
			nd->name = json_string_value(name);
		} else {
			char *slot = g->names + (size_t)i * 16;
			vrm_pathf(slot, 16, "node%d", i);
			nd->name = slot;
		}
		if (check_ref(node, "mesh", count_of(doc, "meshes"), "mesh", path, err, errlen) ||
		    check_ref(node, "skin", count_of(doc, "skins"), "skin", path, err, errlen) ||
		    check_ref(node, "camera", count_of(doc, "cameras"), "camera", path, err,
		              errlen) ||
		    vrm_json_child(node, "children", 1, path, &children, err, errlen) ||
		    read_local(node, path, &nd->local, err, errlen))
			return -1;
		for (size_t c = 0; children && c < json_array_size(children); c++) {
			char p[96];
			int child;
			vrm_pathf(p, sizeof p, "%s.children[%zu]", path, c);
			if (vrm_json_index(json_array_get(children, c), n, "node", p, &child, err,
			                   errlen))
				return -1;
			if (child == i)
				return vrm_fail(
				    err, errlen,
				    "%s: node %d lists itself as its child (a cycle in the node "
				    "graph)",
				    p, i);
			if (g->nodes[child].parent >= 0)
				return vrm_fail(
				    err, errlen,
				    "%s: node %d already has parent %d; glTF nodes form trees "
				    "(one parent each)",
				    p, child, g->nodes[child].parent);
			g->nodes[child].parent = i;
			if (c == 0) {
				nd->first_child = child;
				nd->children = g->child_list + stored;
			}
			g->child_list[stored++] = child;
			nd->child_count++;
		}
	}
	return compose_world(g, err, errlen);
}

void vrm_graph_free(vrm_graph *g)
{
	if (!g)
		return;
	free(g->nodes);
	free(g->names);
	free(g->child_list);
	memset(g, 0, sizeof *g);
}

int vrm_graph_is_under(const vrm_graph *g, int node, int ancestor)
{
	/* The graph is acyclic (checked at load), so this walk ends within count steps. */
	for (int cur = node; cur >= 0; cur = g->nodes[cur].parent)
		if (cur == ancestor)
			return 1;
	return 0;
}
