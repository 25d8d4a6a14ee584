/* vrm_gltf: the glTF side of vrm_import() (ponytail/vrm_import.h) — the GLB container,
 * the node graph with its rest transforms, a little 3D math and the bounds-checked JSON
 * readers the importer is built from.
 *
 * vrm_gltf.c holds the container and the JSON readers, vrm_gltf_math.c the math,
 * vrm_gltf_graph.c the node graph (and the structural checks of glTF it makes).
 *
 * Nothing here does I/O or keeps global state. Functions that can fail return 0 on
 * success and -1 on failure, with a message "where: what" written to err (errlen bytes,
 * always NUL-terminated). `where` is a byte offset for the container and a JSON path
 * ("extensions.VRMC_springBone.springs[2].joints[0].node") for the document.
 *
 * Matrices are glTF's: 4x4, column-major, m[col * 4 + row]. Rotations are 3x3
 * column-major, r[col * 3 + row].
 */
#ifndef PONYTAIL_VRM_GLTF_H
#define PONYTAIL_VRM_GLTF_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* ---- GLB container (glTF 2.0 binary: 12-byte header, JSON chunk, optional BIN chunk) ---- */

typedef struct vrm_glb {
	const uint8_t *json; /* borrowed from the caller's buffer */
	size_t json_len;     /* chunk length as stored (includes padding) */
	size_t json_offset;  /* byte offset of the JSON text in the file (20) */
	const uint8_t *bin;  /* BIN chunk data, NULL when the file has none */
	size_t bin_len;
	size_t trailing; /* bytes after the header's total length: ignored, reported */
} vrm_glb;

/* Validates the header, the total length and every chunk header against len before
 * touching the bytes behind them. The output borrows from data. */
int vrm_glb_parse(const uint8_t *data, size_t len, vrm_glb *out, char *err, size_t errlen);

/* Parses the JSON chunk (trailing space/NUL padding allowed). Returns a new reference to
 * the root object, or NULL with err naming the byte offset in the file. */
json_t *vrm_glb_json(const vrm_glb *glb, char *err, size_t errlen);

/* ---- math ---- */

typedef struct vrm_vec3 {
	double x, y, z;
} vrm_vec3;

typedef struct vrm_mat4 {
	double m[16]; /* column-major */
} vrm_mat4;

typedef struct vrm_rot {
	double r[9]; /* orthonormal, column-major: column c is the image of axis c */
} vrm_rot;

static inline vrm_vec3 vrm_v3(double x, double y, double z)
{
	vrm_vec3 v = {x, y, z};
	return v;
}
static inline vrm_vec3 vrm_add(vrm_vec3 a, vrm_vec3 b)
{
	return vrm_v3(a.x + b.x, a.y + b.y, a.z + b.z);
}
static inline vrm_vec3 vrm_sub(vrm_vec3 a, vrm_vec3 b)
{
	return vrm_v3(a.x - b.x, a.y - b.y, a.z - b.z);
}
static inline vrm_vec3 vrm_scale(vrm_vec3 a, double s)
{
	return vrm_v3(a.x * s, a.y * s, a.z * s);
}
static inline double vrm_dot(vrm_vec3 a, vrm_vec3 b)
{
	return a.x * b.x + a.y * b.y + a.z * b.z;
}
static inline vrm_vec3 vrm_cross(vrm_vec3 a, vrm_vec3 b)
{
	return vrm_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

double vrm_len(vrm_vec3 a);
/* a / |a|, or (0, 0, 0) when |a| < 1e-12 (callers check lengths before they rely on it). */
vrm_vec3 vrm_normalize(vrm_vec3 a);
/* Angle between two directions in degrees, [0, 180]; 0 when either is zero. */
double vrm_angle_deg(vrm_vec3 a, vrm_vec3 b);

vrm_mat4 vrm_mat4_identity(void);
vrm_mat4 vrm_mat4_mul(const vrm_mat4 *a, const vrm_mat4 *b);
/* T * R * S as glTF composes a node's local transform; q = [x, y, z, w], normalised here. */
vrm_mat4 vrm_mat4_trs(vrm_vec3 t, const double q[4], vrm_vec3 s);
vrm_vec3 vrm_mat4_point(const vrm_mat4 *m, vrm_vec3 p);
vrm_vec3 vrm_mat4_dir(const vrm_mat4 *m, vrm_vec3 d);    /* linear part only */
vrm_vec3 vrm_mat4_normal(const vrm_mat4 *m, vrm_vec3 n); /* inverse transpose, normalised */
vrm_vec3 vrm_mat4_translation(const vrm_mat4 *m);
vrm_vec3 vrm_mat4_axis_scale(const vrm_mat4 *m); /* lengths of the three basis columns */
double vrm_mat4_det3(const vrm_mat4 *m);         /* determinant of the linear part */

/* The rotation part of m: columns normalised, then made orthonormal (Gram-Schmidt on x, y;
 * z = x × y), so shear and scale are dropped and the frame is always right-handed. */
vrm_rot vrm_rot_from_mat4(const vrm_mat4 *m);
vrm_rot vrm_rot_from_quat(const double q[4]); /* q = [x, y, z, w], normalised here */
vrm_rot vrm_rot_mul(const vrm_rot *a, const vrm_rot *b);
vrm_vec3 vrm_rot_apply(const vrm_rot *r, vrm_vec3 v);
vrm_vec3 vrm_rot_apply_inv(const vrm_rot *r, vrm_vec3 v); /* r^T v */
/* The shortest-arc rotation taking unit vector a to unit vector b. When b = -a it turns by
 * 180° about a × z (which is +x for a = +y: VRMC_springBone_limit's convention for a bone
 * pointing down), or about a × x when a is ±z. */
vrm_rot vrm_rot_between(vrm_vec3 a, vrm_vec3 b);
/* Largest angle (degrees) the rotation turns any vector by; 0 for the identity. */
double vrm_rot_angle_deg(const vrm_rot *r);

/* ---- node graph ---- */

typedef struct vrm_node {
	const char *name; /* borrowed from the JSON document; never NULL ("node<i>" if unnamed) */
	int parent;       /* -1 for a root */
	int first_child;  /* -1 if none: children[0] as glTF lists them */
	const int *children; /* child_count indices in glTF order, into vrm_graph.child_list */
	int child_count;
	vrm_mat4 local; /* rest transform relative to the parent */
	vrm_mat4 world; /* rest transform in the model's world */
} vrm_node;

typedef struct vrm_graph {
	vrm_node *nodes; /* owned */
	int count;
	char *names;     /* owned storage for generated names */
	int *child_list; /* owned: every node's children, back to back (at most count) */
	/* Buffer views read past buffer 0's declared byteLength but inside the GLB's BIN
	 * chunk (read from the chunk, as three.js does; the import warns): how many, the
	 * first ("bufferViews[146], bytes 698772..709652") and buffer 0's declared length. */
	int views_past_length;
	char first_past_length[96];
	size_t buffer0_length;
} vrm_graph;

/* Reads nodes[] of the document: every child index in range, at most one parent per node,
 * no cycles (checked before any transform is composed), finite TRS/matrix values; the
 * scenes' node indices and the default scene. Through the nodes it reads what a viewer
 * loads to draw them: each node's mesh and skin, their accessors (primitives' attributes,
 * indices and morph targets; inverseBindMatrices) and those accessors' bufferViews, each
 * checked when first reached: indices in range, and every view inside its buffer. A GLB's
 * buffer 0 (no uri) is its BIN chunk, bin_len bytes (0 when there is none): views are
 * bounded by the chunk, not by the byteLength buffer 0 declares, and those past the
 * declared length are counted in g. Meshes, skins, accessors, views and buffers nothing
 * reaches are never checked, so they cannot reject the file.
 * Free with vrm_graph_free (NULL-safe), also after a failure. */
int vrm_graph_load(const json_t *doc, size_t bin_len, vrm_graph *g, char *err, size_t errlen);
void vrm_graph_free(vrm_graph *g);

/* 1 if node is `ancestor` itself or one of its descendants (indices assumed valid). */
int vrm_graph_is_under(const vrm_graph *g, int node, int ancestor);

/* ---- bounds-checked JSON readers ----
 * `path` names the value being read (for messages); obj may be NULL (then "absent"). */

/* Writes a printf-style message to err and returns -1. */
int vrm_fail(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Formats a JSON path into buf (silently shortened if it does not fit: paths are only
 * ever used in messages). */
void vrm_pathf(char *buf, size_t n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* v must be an integer in [0, count); `what` names the array ("node", "collider group"). */
int vrm_json_index(const json_t *v, int count, const char *what, const char *path, int *out,
                   char *err, size_t errlen);
/* obj[key]: absent -> def; else a number (integer or real). */
int vrm_json_number(const json_t *obj, const char *key, double def, const char *path, double *out,
                    char *err, size_t errlen);
/* obj[key]: absent -> def; else an array of n numbers. */
int vrm_json_numbers(const json_t *obj, const char *key, int n, const double *def, const char *path,
                     double *out, char *err, size_t errlen);
/* obj[key]: absent -> NULL; else must be an object (or an array when want_array). */
int vrm_json_child(const json_t *obj, const char *key, int want_array, const char *path,
                   json_t **out, char *err, size_t errlen);

#endif
