/* vrm_gltf: the node graph and its rest transforms, and the structural index checks of
 * glTF itself that vrm_graph_load makes before it trusts the file (see vrm_gltf.h). */
#include "vrm_gltf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A document with more nodes than this is not an avatar; refusing it early keeps every
 * int index and every allocation below far from overflow. */
#define VRM_MAX_NODES 1000000

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
