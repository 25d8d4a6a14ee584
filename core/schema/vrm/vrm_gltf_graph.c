/* vrm_gltf: the node graph and its rest transforms, and the structural checks of glTF
 * itself that vrm_graph_load makes of what it reads (see vrm_gltf.h). */
#include "vrm_gltf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A document with more nodes than this is not an avatar; refusing it early keeps every
 * int index and every allocation below far from overflow. */
#define VRM_MAX_NODES 1000000

/* ---- structural checks of glTF itself ---- */

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

static int count_of(const json_t *doc, const char *key)
{
	const json_t *a = json_object_get(doc, key);
	return json_is_array(a) ? (int)json_array_size(a) : 0;
}

/* ---- what the import reads of the binary side, checked when read ----
 *
 * The import reads the node graph, and through its nodes their meshes and skins, those
 * meshes' and skins' accessors and those accessors' buffer views: what a viewer such as
 * three.js loads to draw the avatar (so a file the daemon accepts is one its viewers can
 * draw). Each of them is checked the first time it is reached, and only then: a mesh,
 * skin, accessor, view or buffer nothing reaches cannot reject the file, whatever it
 * holds, as it cannot stop three.js from loading it.
 *
 * A GLB's buffer 0 (without a uri) is its BIN chunk: a view is bounded by the chunk's
 * length, as three.js reads it, not by the byteLength buffer 0 declares. A view past the
 * declared length but inside the chunk is counted in vrm_graph (the import warns); one
 * outside the chunk is an error naming the view and the bounds. Other buffers (a uri:
 * their bytes are not here) are bounded by their declared byteLength. */

typedef struct reads {
	const json_t *doc;
	size_t bin_len;         /* the GLB's BIN chunk, 0 if it has none */
	vrm_graph *g;           /* where views past buffer 0's declared length are counted */
	unsigned char *mesh_ok; /* per entry: already checked (one block, freed by the caller) */
	unsigned char *skin_ok;
	unsigned char *accessor_ok;
	unsigned char *view_ok;
} reads;

/* doc[key][i] as an object, with its path ("bufferViews[3]") in path. */
static const json_t *entry(const json_t *doc, const char *key, int i, char *path, size_t n,
                           char *err, size_t errlen)
{
	const json_t *e = json_array_get(json_object_get(doc, key), (size_t)i);
	vrm_pathf(path, n, "%s[%d]", key, i);
	if (!json_is_object(e)) {
		vrm_fail(err, errlen, "%s: expected an object", path);
		return NULL;
	}
	return e;
}

static int read_view(reads *r, int v, char *err, size_t errlen)
{
	char path[64], bpath[64], p[96];
	const json_t *e, *buf;
	int b;
	size_t off, len, declared;
	if (r->view_ok[v])
		return 0;
	if (!(e = entry(r->doc, "bufferViews", v, path, sizeof path, err, errlen)))
		return -1;
	vrm_pathf(p, sizeof p, "%s.buffer", path);
	if (vrm_json_index(json_object_get(e, "buffer"), count_of(r->doc, "buffers"), "buffer", p,
	                   &b, err, errlen) ||
	    get_size(e, "byteOffset", path, &off, err, errlen) ||
	    get_size(e, "byteLength", path, &len, err, errlen) ||
	    !(buf = entry(r->doc, "buffers", b, bpath, sizeof bpath, err, errlen)) ||
	    get_size(buf, "byteLength", bpath, &declared, err, errlen))
		return -1;
	int in_bin = !json_object_get(buf, "uri");
	if (in_bin && b != 0)
		return vrm_fail(err, errlen,
		                "%s: buffer %d has no uri, and only buffer 0 can be the GLB's BIN "
		                "chunk",
		                path, b);
	size_t bound = in_bin ? r->bin_len : declared;
	if (len > bound || off > bound - len) {
		if (in_bin)
			return vrm_fail(err, errlen,
			                "%s: bytes %zu..%zu lie outside buffer 0, the GLB's BIN "
			                "chunk (%zu bytes; buffer 0 declares %zu)",
			                path, off, off + len, bound, declared);
		return vrm_fail(err, errlen, "%s: bytes %zu..%zu lie outside buffer %d (%zu bytes)",
		                path, off, off + len, b, bound);
	}
	if (in_bin && off + len > declared) {
		if (r->g->views_past_length++ == 0)
			vrm_pathf(r->g->first_past_length, sizeof r->g->first_past_length,
			          "%s, bytes %zu..%zu", path, off, off + len);
		r->g->buffer0_length = declared;
	}
	r->view_ok[v] = 1;
	return 0;
}

static int read_accessor(reads *r, int a, char *err, size_t errlen)
{
	char path[64], p[96];
	const json_t *e, *v;
	int view;
	if (r->accessor_ok[a])
		return 0;
	if (!(e = entry(r->doc, "accessors", a, path, sizeof path, err, errlen)))
		return -1;
	/* no bufferView: zeros (or sparse values only), nothing in a buffer to bound */
	if ((v = json_object_get(e, "bufferView")) != NULL) {
		vrm_pathf(p, sizeof p, "%s.bufferView", path);
		if (vrm_json_index(v, count_of(r->doc, "bufferViews"), "bufferView", p, &view, err,
		                   errlen) ||
		    read_view(r, view, err, errlen))
			return -1;
	}
	r->accessor_ok[a] = 1;
	return 0;
}

/* obj[key], when present, must be an accessor index; the accessor is read. */
static int read_accessor_ref(reads *r, const json_t *obj, const char *key, const char *path,
                             char *err, size_t errlen)
{
	const json_t *v = json_object_get(obj, key);
	char p[400];
	int a;
	if (!v)
		return 0;
	vrm_pathf(p, sizeof p, "%s.%s", path, key);
	return vrm_json_index(v, count_of(r->doc, "accessors"), "accessor", p, &a, err, errlen) ||
	               read_accessor(r, a, err, errlen)
	           ? -1
	           : 0;
}

/* Every accessor a primitive's attributes / a morph target name. */
static int read_accessor_map(reads *r, json_t *map, const char *path, char *err, size_t errlen)
{
	const char *key;
	json_t *v;
	json_object_foreach(map, key, v)
	{
		if (read_accessor_ref(r, map, key, path, err, errlen))
			return -1;
	}
	return 0;
}

static int read_mesh(reads *r, int m, char *err, size_t errlen)
{
	char path[64];
	const json_t *e;
	json_t *prims;
	if (r->mesh_ok[m])
		return 0;
	if (!(e = entry(r->doc, "meshes", m, path, sizeof path, err, errlen)) ||
	    vrm_json_child(e, "primitives", 1, path, &prims, err, errlen))
		return -1;
	for (size_t i = 0; prims && i < json_array_size(prims); i++) {
		const json_t *prim = json_array_get(prims, i);
		json_t *attrs, *targets;
		char p[256];
		vrm_pathf(p, sizeof p, "%s.primitives[%zu]", path, i);
		if (!json_is_object(prim))
			return vrm_fail(err, errlen, "%s: expected an object", p);
		if (read_accessor_ref(r, prim, "indices", p, err, errlen) ||
		    vrm_json_child(prim, "attributes", 0, p, &attrs, err, errlen) ||
		    vrm_json_child(prim, "targets", 1, p, &targets, err, errlen))
			return -1;
		if (attrs) {
			char pa[320];
			vrm_pathf(pa, sizeof pa, "%s.attributes", p);
			if (read_accessor_map(r, attrs, pa, err, errlen))
				return -1;
		}
		for (size_t t = 0; targets && t < json_array_size(targets); t++) {
			json_t *target = json_array_get(targets, t);
			char pt[320];
			vrm_pathf(pt, sizeof pt, "%s.targets[%zu]", p, t);
			if (!json_is_object(target))
				return vrm_fail(err, errlen, "%s: expected an object", pt);
			if (read_accessor_map(r, target, pt, err, errlen))
				return -1;
		}
	}
	r->mesh_ok[m] = 1;
	return 0;
}

static int read_skin(reads *r, int s, char *err, size_t errlen)
{
	char path[64];
	const json_t *e;
	int nodes = count_of(r->doc, "nodes");
	if (r->skin_ok[s])
		return 0;
	if (!(e = entry(r->doc, "skins", s, path, sizeof path, err, errlen)) ||
	    read_accessor_ref(r, e, "inverseBindMatrices", path, err, errlen) ||
	    check_ref(e, "skeleton", nodes, "node", path, err, errlen) ||
	    check_refs(e, "joints", nodes, "node", path, err, errlen))
		return -1;
	r->skin_ok[s] = 1;
	return 0;
}

/* A node's mesh and skin, when it has them: indices in range, then read. */
static int read_node_refs(reads *r, const json_t *node, const char *path, char *err, size_t errlen)
{
	const json_t *v;
	char p[96];
	int i;
	if ((v = json_object_get(node, "mesh")) != NULL) {
		vrm_pathf(p, sizeof p, "%s.mesh", path);
		if (vrm_json_index(v, count_of(r->doc, "meshes"), "mesh", p, &i, err, errlen) ||
		    read_mesh(r, i, err, errlen))
			return -1;
	}
	if ((v = json_object_get(node, "skin")) != NULL) {
		vrm_pathf(p, sizeof p, "%s.skin", path);
		if (vrm_json_index(v, count_of(r->doc, "skins"), "skin", p, &i, err, errlen) ||
		    read_skin(r, i, err, errlen))
			return -1;
	}
	return 0;
}

static int check_scene(const json_t *doc, int i, char *err, size_t errlen)
{
	char path[64];
	const json_t *e = entry(doc, "scenes", i, path, sizeof path, err, errlen);
	return !e || check_refs(e, "nodes", count_of(doc, "nodes"), "node", path, err, errlen) ? -1
	                                                                                       : 0;
}

/* The arrays of the document: each an array, of a size this reader accepts. Then the
 * scenes (a viewer starts from them) and the default scene. */
static int check_structure(const json_t *doc, char *err, size_t errlen)
{
	static const char *const arrays[] = {"buffers", "bufferViews", "accessors", "meshes",
	                                     "skins",   "scenes",      "cameras",   NULL};
	int unused;
	for (int i = 0; arrays[i]; i++)
		if (array_count(doc, arrays[i], &unused, err, errlen))
			return -1;
	for (int i = 0; i < count_of(doc, "scenes"); i++)
		if (check_scene(doc, i, err, errlen))
			return -1;
	return check_ref(doc, "scene", count_of(doc, "scenes"), "scene", "glTF", err, errlen);
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

static int load_nodes(const json_t *doc, reads *r, vrm_graph *g, char *err, size_t errlen)
{
	json_t *nodes = json_object_get(doc, "nodes");
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
		if (read_node_refs(r, node, path, err, errlen) ||
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

int vrm_graph_load(const json_t *doc, size_t bin_len, vrm_graph *g, char *err, size_t errlen)
{
	json_t *nodes;
	memset(g, 0, sizeof *g);
	if (vrm_json_child(doc, "nodes", 1, "glTF", &nodes, err, errlen) ||
	    array_count(doc, "nodes", &g->count, err, errlen) || check_structure(doc, err, errlen))
		return -1;
	/* array_count capped every array at VRM_MAX_NODES entries */
	size_t nm = (size_t)count_of(doc, "meshes") + 1, ns = (size_t)count_of(doc, "skins") + 1,
	       na = (size_t)count_of(doc, "accessors") + 1,
	       nv = (size_t)count_of(doc, "bufferViews") + 1;
	reads r = {.doc = doc, .bin_len = bin_len, .g = g};
	unsigned char *ok = calloc(nm + ns + na + nv, 1);
	if (!ok)
		return vrm_fail(err, errlen, "out of memory for the document's %zu accessors",
		                na - 1);
	r.mesh_ok = ok;
	r.skin_ok = ok + nm;
	r.accessor_ok = ok + nm + ns;
	r.view_ok = ok + nm + ns + na;
	int rc = load_nodes(doc, &r, g, err, errlen);
	free(ok);
	return rc;
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
