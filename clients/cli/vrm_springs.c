/* vrm_springs: reading a VRM's spring bones, as the file has them (see vrm_springs.h).
 *
 * VRM 1.0 lists its chains (springs of joints), colliders and collider groups directly.
 * VRM 0.x lists bone groups of root bones, whose every descendant path is a chain, and
 * collider groups that each own their sphere colliders; those are flattened here into the
 * same chains and colliders, with each group's settings copied onto its chains.
 */
#include "vrm_springs.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VRM_PI 3.14159265358979323846

#define SB "extensions.VRMC_springBone"
#define V0 "extensions.VRM.secondaryAnimation"

const char *const vrm_shape_names[] = {"sphere", "capsule", "plane", "inside_sphere",
                                       "inside_capsule"};

/* ---- diagnostics ---- */

static const char *const tally_text[VRM_T_COUNT] = {
    [VRM_T_CLAMPED] = "parameter values outside the ranges ponytail accepts were clamped",
    [VRM_T_NONHEAD_CHAIN] = "chains hang from bones other than the head (anchor_bone): kept, "
                            "anchored to the head at their rest offset, so they follow the "
                            "head, not that bone",
    [VRM_T_NONHEAD_COLLIDER] = "colliders sit on nodes under no humanoid bone: attached to "
                               "the head at their rest offset, so they follow the head",
    [VRM_T_BRANCH] = "chains branch off another chain's moving joint: anchored at their rest "
                     "position instead of following that joint",
    [VRM_T_REUSED] = "chains reuse a joint of an earlier chain (VRM forbids it): cut before "
                     "the shared joint",
    [VRM_T_ORDER] = "springs list a joint that is not a descendant of the previous one: "
                    "positions used as given",
    [VRM_T_SCALE] = "nodes have a scale other than 1: positions are world metres, collider "
                    "radii are multiplied by their node's largest scale (as UniVRM does), "
                    "hit_radius is not",
    [VRM_T_CENTER] = "springs use a center node other than the head or a root: inertia is "
                     "measured in the world instead",
    [VRM_T_SPHERICAL] = "joints have a spherical angle limit, which ponytail does not "
                        "support: written as no limit",
    [VRM_T_TILT] = "angle limits are rotated away from their segment's rest direction: "
                   "ponytail centres them on the rest direction",
    [VRM_T_SHORT] = "chains have fewer than 2 points or segments outside [1 mm, 1 m]: dropped",
    [VRM_T_NO_TAIL] = "leaf joints have no direction for VRM 0.x's 7 cm virtual tail: the "
                      "chain ends at the leaf",
    [VRM_T_BAD_COLLIDER] = "colliders have no usable node or shape: skipped",
    [VRM_T_ZERO_SEGMENT] = "chains have zero-length segments (two joints at one place)",
    [VRM_T_LIMIT_VERSION] = "angle limits have an unknown VRMC_springBone_limit specVersion: "
                            "ignored",
};

int vrm_diag_init(vrm_diag *d)
{
	memset(d, 0, sizeof *d);
	d->notes = json_array();
	d->warnings = json_array();
	return d->notes && d->warnings ? 0 : -1;
}

void vrm_diag_free(vrm_diag *d)
{
	if (!d)
		return;
	json_decref(d->notes);
	json_decref(d->warnings);
	memset(d, 0, sizeof *d);
}

static void add_text(json_t *arr, const char *fmt, va_list ap)
{
	char buf[512];
	vsnprintf(buf, sizeof buf, fmt, ap);
	json_array_append_new(arr, json_string(buf));
}

void vrm_warn(vrm_diag *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_text(d->warnings, fmt, ap);
	va_end(ap);
}

void vrm_note(vrm_diag *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	add_text(d->notes, fmt, ap);
	va_end(ap);
}

void vrm_tally(vrm_diag *d, vrm_tally_id id, const char *fmt, ...)
{
	if (d->tallies[id].count++ == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(d->tallies[id].first, sizeof d->tallies[id].first, fmt, ap);
		va_end(ap);
	}
}

void vrm_diag_flush(vrm_diag *d)
{
	for (int i = 0; i < VRM_T_COUNT; i++)
		if (d->tallies[i].count)
			vrm_warn(d, "%s (%d; first: %s)", tally_text[i], d->tallies[i].count,
			         d->tallies[i].first);
}

double vrm_clamp(vrm_diag *d, double v, double lo, double hi, const char *path, const char *key)
{
	double r = v < lo ? lo : v > hi ? hi : v;
	if (r != v)
		vrm_tally(d, VRM_T_CLAMPED, "%s.%s %g -> %g", path, key, v, r);
	return r;
}

/* ---- reader state ---- */

typedef struct group {
	int *members; /* owned collider indices */
	int count;
} group;

typedef struct rd {
	const json_t *doc;
	const vrm_graph *g;
	vrm_springs *s;
	vrm_diag *d;
	group *groups; /* collider groups, needed only while reading */
	int ngroups;
	char *err;
	size_t errlen;
} rd;

/* The ranges core validates (instance.h), so an imported definition is always accepted. */
static void clamp_params(rd *c, vrm_segment *sp, const char *path, int v1)
{
	sp->stiffness =
	    vrm_clamp(c->d, sp->stiffness, 0, 100, path, v1 ? "stiffness" : "stiffiness");
	sp->drag = vrm_clamp(c->d, sp->drag, 0, 1, path, "dragForce");
	sp->gravity_power = vrm_clamp(c->d, sp->gravity_power, 0, 100, path, "gravityPower");
	sp->hit_radius = vrm_clamp(c->d, sp->hit_radius, 0, 1, path, "hitRadius");
}

static vrm_chain *new_chain(rd *c)
{
	vrm_springs *s = c->s;
	if (s->nchains == VRM_MAX_READ) {
		vrm_fail(c->err, c->errlen,
		         "more than %d spring-bone chains: not an avatar this importer reads",
		         VRM_MAX_READ);
		return NULL;
	}
	if (s->nchains == s->chains_cap) {
		int cap = s->chains_cap ? s->chains_cap * 2 : 16;
		vrm_chain *p = realloc(s->chains, sizeof *p * (size_t)cap);
		if (!p) {
			vrm_fail(c->err, c->errlen, "out of memory");
			return NULL;
		}
		s->chains = p;
		s->chains_cap = cap;
	}
	vrm_chain *ch = &s->chains[s->nchains++];
	memset(ch, 0, sizeof *ch);
	ch->center = -1;
	ch->name = "";
	return ch;
}

/* Adds the colliders of group gi to the chain, each once. */
static int chain_add_group(rd *c, vrm_chain *ch, int gi)
{
	const group *gr = &c->groups[gi];
	for (int k = 0; k < gr->count; k++) {
		int m = gr->members[k], seen = 0;
		for (int i = 0; i < ch->ncolliders && !seen; i++)
			seen = ch->colliders[i] == m;
		if (seen)
			continue;
		int *p = realloc(ch->colliders, sizeof *p * (size_t)(ch->ncolliders + 1));
		if (!p)
			return vrm_fail(c->err, c->errlen, "out of memory");
		ch->colliders = p;
		ch->colliders[ch->ncolliders++] = m;
	}
	return 0;
}

/* obj.colliderGroups: indices of collider groups, whose colliders are added. */
static int chain_add_groups(rd *c, vrm_chain *ch, const json_t *obj, const char *path)
{
	json_t *arr;
	if (vrm_json_child(obj, "colliderGroups", 1, path, &arr, c->err, c->errlen))
		return -1;
	for (size_t i = 0; arr && i < json_array_size(arr); i++) {
		char p[160];
		int gi;
		vrm_pathf(p, sizeof p, "%s.colliderGroups[%zu]", path, i);
		if (vrm_json_index(json_array_get(arr, i), c->ngroups, "collider group", p, &gi,
		                   c->err, c->errlen) ||
		    chain_add_group(c, ch, gi))
			return -1;
	}
	return 0;
}

static int check_count(rd *c, const json_t *arr, const char *path)
{
	if (arr && json_array_size(arr) > VRM_MAX_READ)
		return vrm_fail(c->err, c->errlen,
		                "%s: %zu entries, more than the %d this importer reads", path,
		                json_array_size(arr), VRM_MAX_READ);
	return 0;
}

/* ---- VRM 1.0 ---- */

/* holder.extensions.VRMC_springBone_limit (draft), if any, into sp's limit fields. */
static int read_limit(rd *c, const json_t *holder, const char *path, vrm_segment *sp)
{
	json_t *exts, *ext, *lim, *cone, *hinge, *sph;
	char p[192];
	if (vrm_json_child(holder, "extensions", 0, path, &exts, c->err, c->errlen))
		return -1;
	vrm_pathf(p, sizeof p, "%s.extensions", path);
	if (vrm_json_child(exts, "VRMC_springBone_limit", 0, p, &ext, c->err, c->errlen))
		return -1;
	if (!ext)
		return 0;
	vrm_pathf(p, sizeof p, "%s.extensions.VRMC_springBone_limit", path);
	const json_t *ver = json_object_get(ext, "specVersion");
	if (ver && !json_is_string(ver))
		return vrm_fail(c->err, c->errlen, "%s.specVersion: expected a string", p);
	/* three-vrm reads "1.0-draft"; UniVRM writes none; "1.0" is what it will become. */
	if (ver && strcmp(json_string_value(ver), "1.0-draft") != 0 &&
	    strcmp(json_string_value(ver), "1.0") != 0) {
		vrm_tally(c->d, VRM_T_LIMIT_VERSION, "%s \"%s\"", p, json_string_value(ver));
		return 0;
	}
	if (vrm_json_child(ext, "limit", 0, p, &lim, c->err, c->errlen))
		return -1;
	if (!lim)
		return vrm_fail(c->err, c->errlen, "%s.limit: required", p);
	vrm_pathf(p, sizeof p, "%s.extensions.VRMC_springBone_limit.limit", path);
	if (vrm_json_child(lim, "cone", 0, p, &cone, c->err, c->errlen) ||
	    vrm_json_child(lim, "hinge", 0, p, &hinge, c->err, c->errlen) ||
	    vrm_json_child(lim, "spherical", 0, p, &sph, c->err, c->errlen))
		return -1;
	if (!!cone + !!hinge + !!sph != 1)
		return vrm_fail(c->err, c->errlen,
		                "%s: expected exactly one of cone, hinge, spherical", p);
	if (sph) {
		vrm_tally(c->d, VRM_T_SPHERICAL, "%s", path);
		sp->limit = VRM_LIMIT_NONE;
		return 0;
	}
	const json_t *l = cone ? cone : hinge;
	static const double ident[4] = {0, 0, 0, 1};
	char pl[224];
	vrm_pathf(pl, sizeof pl, "%s.%s", p, cone ? "cone" : "hinge");
	if (!json_object_get(l, "angle"))
		return vrm_fail(c->err, c->errlen, "%s.angle: required", pl);
	if (vrm_json_number(l, "angle", 0, pl, &sp->limit_angle, c->err, c->errlen) ||
	    vrm_json_numbers(l, "rotation", 4, ident, pl, sp->limit_q, c->err, c->errlen))
		return -1;
	if (sp->limit_angle < 0)
		return vrm_fail(c->err, c->errlen, "%s.angle: %g is negative", pl, sp->limit_angle);
	const double *q = sp->limit_q;
	if (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] < 1e-12)
		return vrm_fail(c->err, c->errlen, "%s.rotation: zero quaternion", pl);
	/* The draft: an angle of pi or more is read as pi (radians). */
	sp->limit_angle = fmin(sp->limit_angle, VRM_PI);
	sp->limit = cone ? VRM_LIMIT_CONE : VRM_LIMIT_HINGE;
	return 0;
}

/* A collider's shape object (base or extended): exactly one of sphere, capsule (and, in
 * the extension, plane). */
static int read_shape(rd *c, const json_t *holder, const char *path, int extended, vrm_collider *co)
{
	static const double zero[3] = {0, 0, 0}, plus_z[3] = {0, 0, 1};
	json_t *shape, *sph, *cap, *pl = NULL;
	char p[160], ps[192];
	double off[3], tail[3], n[3];
	if (vrm_json_child(holder, "shape", 0, path, &shape, c->err, c->errlen))
		return -1;
	vrm_pathf(p, sizeof p, "%s.shape", path);
	if (vrm_json_child(shape, "sphere", 0, p, &sph, c->err, c->errlen) ||
	    vrm_json_child(shape, "capsule", 0, p, &cap, c->err, c->errlen) ||
	    (extended && vrm_json_child(shape, "plane", 0, p, &pl, c->err, c->errlen)))
		return -1;
	if (!sph && !cap && !pl) {
		vrm_tally(c->d, VRM_T_BAD_COLLIDER, "%s: no shape", path);
		co->node = -1;
		return 0;
	}
	if (!!sph + !!cap + !!pl > 1)
		return vrm_fail(c->err, c->errlen, "%s: expected exactly one shape, got several",
		                p);
	const json_t *s = sph ? sph : cap ? cap : pl;
	vrm_pathf(ps, sizeof ps, "%s.%s", p, sph ? "sphere" : cap ? "capsule" : "plane");
	const json_t *inside = json_object_get(s, "inside");
	if (inside && !json_is_boolean(inside))
		return vrm_fail(c->err, c->errlen, "%s.inside: expected true or false", ps);
	if (vrm_json_numbers(s, "offset", 3, zero, ps, off, c->err, c->errlen) ||
	    vrm_json_numbers(s, "tail", 3, zero, ps, tail, c->err, c->errlen) ||
	    vrm_json_numbers(s, "normal", 3, plus_z, ps, n, c->err, c->errlen) ||
	    vrm_json_number(s, "radius", 0, ps, &co->radius, c->err, c->errlen))
		return -1;
	co->offset = vrm_v3(off[0], off[1], off[2]);
	co->tail = vrm_v3(tail[0], tail[1], tail[2]);
	co->normal = vrm_v3(n[0], n[1], n[2]);
	co->radius = vrm_clamp(c->d, co->radius, 0, 10, ps, "radius");
	int in = extended && json_is_true(inside);
	co->shape = sph   ? (in ? VRM_INSIDE_SPHERE : VRM_SPHERE)
	            : cap ? (in ? VRM_INSIDE_CAPSULE : VRM_CAPSULE)
	                  : VRM_PLANE;
	if (pl && vrm_len(co->normal) < 1e-9) {
		vrm_tally(c->d, VRM_T_BAD_COLLIDER, "%s: zero normal", ps);
		co->node = -1;
	}
	return 0;
}

static int read_v1_colliders(rd *c, const json_t *sb)
{
	json_t *arr;
	if (vrm_json_child(sb, "colliders", 1, SB, &arr, c->err, c->errlen) ||
	    check_count(c, arr, SB ".colliders"))
		return -1;
	c->s->ncolliders = arr ? (int)json_array_size(arr) : 0;
	c->s->colliders = calloc((size_t)c->s->ncolliders + 1, sizeof *c->s->colliders);
	if (!c->s->colliders)
		return vrm_fail(c->err, c->errlen, "out of memory");
	for (int i = 0; i < c->s->ncolliders; i++) {
		const json_t *o = json_array_get(arr, (size_t)i), *node;
		json_t *exts, *ext = NULL;
		vrm_collider *co = &c->s->colliders[i];
		char path[96], p[160];
		vrm_pathf(path, sizeof path, SB ".colliders[%d]", i);
		vrm_pathf(co->source, sizeof co->source, "colliders[%d]", i);
		if (!json_is_object(o))
			return vrm_fail(c->err, c->errlen, "%s: expected an object", path);
		node = json_object_get(o, "node");
		vrm_pathf(p, sizeof p, "%s.node", path);
		/* three-vrm documents models that write -1 here; skip those, refuse the rest. */
		if (json_is_integer(node) && json_integer_value(node) == -1) {
			vrm_tally(c->d, VRM_T_BAD_COLLIDER, "%s: node -1", co->source);
			co->node = -1;
			continue;
		}
		if (vrm_json_index(node, c->g->count, "node", p, &co->node, c->err, c->errlen) ||
		    vrm_json_child(o, "extensions", 0, path, &exts, c->err, c->errlen))
			return -1;
		vrm_pathf(p, sizeof p, "%s.extensions", path);
		if (vrm_json_child(exts, "VRMC_springBone_extended_collider", 0, p, &ext, c->err,
		                   c->errlen))
			return -1;
		if (ext) {
			const json_t *ver = json_object_get(ext, "specVersion");
			vrm_pathf(p, sizeof p, "%s.extensions.VRMC_springBone_extended_collider",
			          path);
			if (ver && !json_is_string(ver))
				return vrm_fail(c->err, c->errlen,
				                "%s.specVersion: expected a string", p);
			if (!ver || strcmp(json_string_value(ver), "1.0") == 0) {
				if (read_shape(c, ext, p, 1, co))
					return -1;
				continue;
			}
			vrm_warn(c->d, "%s: unknown specVersion \"%s\": its fallback shape is used",
			         p, json_string_value(ver));
		}
		if (read_shape(c, o, path, 0, co))
			return -1;
	}
	return 0;
}

static int read_v1_groups(rd *c, const json_t *sb)
{
	json_t *arr;
	if (vrm_json_child(sb, "colliderGroups", 1, SB, &arr, c->err, c->errlen) ||
	    check_count(c, arr, SB ".colliderGroups"))
		return -1;
	c->ngroups = arr ? (int)json_array_size(arr) : 0;
	c->groups = calloc((size_t)c->ngroups + 1, sizeof *c->groups);
	if (!c->groups)
		return vrm_fail(c->err, c->errlen, "out of memory");
	for (int i = 0; i < c->ngroups; i++) {
		const json_t *o = json_array_get(arr, (size_t)i);
		json_t *cols;
		char path[96];
		vrm_pathf(path, sizeof path, SB ".colliderGroups[%d]", i);
		if (!json_is_object(o))
			return vrm_fail(c->err, c->errlen, "%s: expected an object", path);
		if (vrm_json_child(o, "colliders", 1, path, &cols, c->err, c->errlen) ||
		    check_count(c, cols, path))
			return -1;
		size_t n = cols ? json_array_size(cols) : 0;
		c->groups[i].members = calloc(n + 1, sizeof(int));
		if (!c->groups[i].members)
			return vrm_fail(c->err, c->errlen, "out of memory");
		for (size_t k = 0; k < n; k++) {
			char p[128];
			vrm_pathf(p, sizeof p, "%s.colliders[%zu]", path, k);
			if (vrm_json_index(json_array_get(cols, k), c->s->ncolliders, "collider", p,
			                   &c->groups[i].members[c->groups[i].count++], c->err,
			                   c->errlen))
				return -1;
		}
	}
	return 0;
}

static int read_v1_joint(rd *c, const json_t *j, const char *path, vrm_segment *sp)
{
	static const double down[3] = {0, -1, 0};
	double g[3];
	/* Defaults of VRMC_springBone.joint.schema.json. */
	if (vrm_json_number(j, "stiffness", 1.0, path, &sp->stiffness, c->err, c->errlen) ||
	    vrm_json_number(j, "dragForce", 0.5, path, &sp->drag, c->err, c->errlen) ||
	    vrm_json_number(j, "gravityPower", 0.0, path, &sp->gravity_power, c->err, c->errlen) ||
	    vrm_json_number(j, "hitRadius", 0.0, path, &sp->hit_radius, c->err, c->errlen) ||
	    vrm_json_numbers(j, "gravityDir", 3, down, path, g, c->err, c->errlen) ||
	    read_limit(c, j, path, sp))
		return -1;
	sp->gravity_dir = vrm_v3(g[0], g[1], g[2]);
	clamp_params(c, sp, path, 1);
	return 0;
}

static int read_v1_springs(rd *c, const json_t *sb)
{
	json_t *arr;
	if (vrm_json_child(sb, "springs", 1, SB, &arr, c->err, c->errlen) ||
	    check_count(c, arr, SB ".springs"))
		return -1;
	for (size_t i = 0; arr && i < json_array_size(arr); i++) {
		const json_t *s = json_array_get(arr, i), *name, *center;
		json_t *joints;
		char path[96];
		vrm_pathf(path, sizeof path, SB ".springs[%zu]", i);
		if (!json_is_object(s))
			return vrm_fail(c->err, c->errlen, "%s: expected an object", path);
		vrm_chain *ch = new_chain(c);
		if (!ch)
			return -1;
		vrm_pathf(ch->source, sizeof ch->source, "springs[%zu]", i);
		name = json_object_get(s, "name");
		if (name && !json_is_string(name))
			return vrm_fail(c->err, c->errlen, "%s.name: expected a string", path);
		ch->name = name ? json_string_value(name) : "";
		center = json_object_get(s, "center");
		if (center) {
			char p[128];
			vrm_pathf(p, sizeof p, "%s.center", path);
			if (vrm_json_index(center, c->g->count, "node", p, &ch->center, c->err,
			                   c->errlen))
				return -1;
		}
		/* An older draft put the limit on the spring: it then holds for every joint. */
		vrm_segment spring_limit = {0};
		if (chain_add_groups(c, ch, s, path) || read_limit(c, s, path, &spring_limit) ||
		    vrm_json_child(s, "joints", 1, path, &joints, c->err, c->errlen) ||
		    check_count(c, joints, path))
			return -1;
		size_t nj = joints ? json_array_size(joints) : 0;
		for (size_t k = 0; k < nj; k++) {
			const json_t *j = json_array_get(joints, k);
			char jp[128], np[160];
			int node;
			vrm_segment sp = spring_limit;
			vrm_pathf(jp, sizeof jp, "%s.joints[%zu]", path, k);
			vrm_pathf(np, sizeof np, "%s.node", jp);
			if (!json_is_object(j))
				return vrm_fail(c->err, c->errlen, "%s: expected an object", jp);
			if (vrm_json_index(json_object_get(j, "node"), c->g->count, "node", np,
			                   &node, c->err, c->errlen) ||
			    read_v1_joint(c, j, jp, &sp))
				return -1;
			if (ch->count == VRM_MAX_POINTS)
				continue; /* still validated; the warning follows */
			ch->nodes[ch->count] = node;
			ch->seg[ch->count] = sp;
			ch->count++;
		}
		if (nj > VRM_MAX_POINTS)
			vrm_warn(c->d,
			         "%s: %zu joints, more than the %d points of a strand: truncated",
			         ch->source, nj, VRM_MAX_POINTS);
		for (int k = 0; k + 1 < ch->count; k++)
			if (!vrm_graph_is_under(c->g, ch->nodes[k + 1], ch->nodes[k]))
				vrm_tally(c->d, VRM_T_ORDER, "%s joint %d \"%s\" after \"%s\"",
				          ch->source, k + 1, c->g->nodes[ch->nodes[k + 1]].name,
				          c->g->nodes[ch->nodes[k]].name);
	}
	return 0;
}

static int read_v1(rd *c)
{
	json_t *exts = json_object_get(c->doc, "extensions");
	json_t *sb = json_object_get(exts, "VRMC_springBone");
	if (!json_is_object(sb))
		return vrm_fail(c->err, c->errlen, "no spring bones: " SB " is %s",
		                sb ? "not an object" : "absent");
	const json_t *ver = json_object_get(sb, "specVersion");
	if (!json_is_string(ver))
		vrm_note(c->d, SB ".specVersion is missing: read as 1.0");
	else if (strcmp(json_string_value(ver), "1.0") != 0 &&
	         strcmp(json_string_value(ver), "1.0-beta") != 0)
		vrm_warn(c->d, SB ".specVersion \"%s\" is not 1.0: read as 1.0",
		         json_string_value(ver));
	return read_v1_colliders(c, sb) || read_v1_groups(c, sb) || read_v1_springs(c, sb);
}

/* ---- VRM 0.x ---- */

/* obj[key] as VRM 0.x's {"x", "y", "z"} object (absent components 0); absent -> def. */
static int read_xyz(rd *c, const json_t *obj, const char *key, vrm_vec3 def, const char *path,
                    vrm_vec3 *out)
{
	json_t *v;
	char p[160];
	double x = 0, y = 0, z = 0;
	if (vrm_json_child(obj, key, 0, path, &v, c->err, c->errlen))
		return -1;
	if (!v) {
		*out = def;
		return 0;
	}
	vrm_pathf(p, sizeof p, "%s.%s", path, key);
	if (vrm_json_number(v, "x", 0, p, &x, c->err, c->errlen) ||
	    vrm_json_number(v, "y", 0, p, &y, c->err, c->errlen) ||
	    vrm_json_number(v, "z", 0, p, &z, c->err, c->errlen))
		return -1;
	*out = vrm_v3(x, y, z);
	return 0;
}

/* VRM 0.x wrote collider offsets and gravity directions in Unity's left-handed frame;
 * glTF's differs by the sign of z (three-vrm flips the offsets for this reason). */
static vrm_vec3 unity_to_gltf(vrm_vec3 v)
{
	return vrm_v3(v.x, v.y, -v.z);
}

static int read_v0_colliders(rd *c, const json_t *sec)
{
	json_t *arr;
	size_t total = 0;
	if (vrm_json_child(sec, "colliderGroups", 1, V0, &arr, c->err, c->errlen) ||
	    check_count(c, arr, V0 ".colliderGroups"))
		return -1;
	c->ngroups = arr ? (int)json_array_size(arr) : 0;
	for (int i = 0; i < c->ngroups; i++) {
		const json_t *cols = json_object_get(json_array_get(arr, (size_t)i), "colliders");
		total += json_is_array(cols) ? json_array_size(cols) : 0;
	}
	if (total > VRM_MAX_READ)
		return vrm_fail(c->err, c->errlen,
		                V0 ".colliderGroups: %zu colliders, more than the %d "
		                   "this importer reads",
		                total, VRM_MAX_READ);
	c->groups = calloc((size_t)c->ngroups + 1, sizeof *c->groups);
	c->s->colliders = calloc(total + 1, sizeof *c->s->colliders);
	if (!c->groups || !c->s->colliders)
		return vrm_fail(c->err, c->errlen, "out of memory");
	for (int i = 0; i < c->ngroups; i++) {
		const json_t *o = json_array_get(arr, (size_t)i), *node;
		json_t *cols;
		char path[96], p[128];
		int nd = -1;
		vrm_pathf(path, sizeof path, V0 ".colliderGroups[%d]", i);
		if (!json_is_object(o))
			return vrm_fail(c->err, c->errlen, "%s: expected an object", path);
		node = json_object_get(o, "node");
		vrm_pathf(p, sizeof p, "%s.node", path);
		if (json_is_integer(node) && json_integer_value(node) == -1)
			vrm_tally(c->d, VRM_T_BAD_COLLIDER, "colliderGroups[%d]: node -1", i);
		else if (vrm_json_index(node, c->g->count, "node", p, &nd, c->err, c->errlen))
			return -1;
		if (vrm_json_child(o, "colliders", 1, path, &cols, c->err, c->errlen))
			return -1;
		size_t n = cols ? json_array_size(cols) : 0;
		c->groups[i].members = calloc(n + 1, sizeof(int));
		if (!c->groups[i].members)
			return vrm_fail(c->err, c->errlen, "out of memory");
		for (size_t k = 0; k < n; k++) {
			const json_t *s = json_array_get(cols, k);
			vrm_collider *co = &c->s->colliders[c->s->ncolliders];
			vrm_vec3 off;
			vrm_pathf(p, sizeof p, "%s.colliders[%zu]", path, k);
			if (!json_is_object(s))
				return vrm_fail(c->err, c->errlen, "%s: expected an object", p);
			if (read_xyz(c, s, "offset", vrm_v3(0, 0, 0), p, &off) ||
			    vrm_json_number(s, "radius", 0, p, &co->radius, c->err, c->errlen))
				return -1;
			vrm_pathf(co->source, sizeof co->source,
			          "colliderGroups[%d].colliders[%zu]", i, k);
			co->node = nd;
			co->shape = VRM_SPHERE;
			co->offset = unity_to_gltf(off);
			co->radius = vrm_clamp(c->d, co->radius, 0, 10, p, "radius");
			c->groups[i].members[c->groups[i].count++] = c->s->ncolliders++;
		}
	}
	return 0;
}

/* One chain per path through the tree under root: children[0] continues a chain, every
 * further child starts one of its own (UniVRM 0.x aims each joint at its first child and
 * simulates every descendant). An explicit stack: the tree may be as deep as it is large. */
static int walk_v0(rd *c, int root, const vrm_chain *proto)
{
	int *stack = malloc(sizeof *stack * ((size_t)c->g->count + 1));
	int top = 0, rc = 0;
	if (!stack)
		return vrm_fail(c->err, c->errlen, "out of memory");
	stack[top++] = root;
	while (top > 0 && rc == 0) {
		int start = stack[--top], cur = start;
		vrm_chain *ch = new_chain(c);
		if (!ch) {
			rc = -1;
			break;
		}
		memcpy(ch->source, proto->source, sizeof ch->source);
		if (start != root)
			vrm_pathf(ch->source, sizeof ch->source, "%s/%s", proto->source,
			          c->g->nodes[start].name);
		ch->name = proto->name;
		ch->center = proto->center;
		if (proto->ncolliders) {
			ch->colliders = malloc(sizeof(int) * (size_t)proto->ncolliders);
			if (!ch->colliders) {
				rc = vrm_fail(c->err, c->errlen, "out of memory");
				break;
			}
			memcpy(ch->colliders, proto->colliders,
			       sizeof(int) * (size_t)proto->ncolliders);
			ch->ncolliders = proto->ncolliders;
		}
		while (cur >= 0 && ch->count < VRM_MAX_POINTS) {
			const vrm_node *nd = &c->g->nodes[cur];
			ch->nodes[ch->count] = cur;
			ch->seg[ch->count] = proto->seg[0];
			ch->count++;
			for (int k = nd->child_count - 1; k >= 1; k--) /* glTF order when popped */
				stack[top++] = nd->children[k];
			cur = nd->first_child;
		}
		if (cur >= 0)
			vrm_warn(
			    c->d,
			    "%s: more than %d joints in a row: truncated, \"%s\" and below dropped",
			    ch->source, VRM_MAX_POINTS, c->g->nodes[cur].name);
		/* The virtual tail needs a 65th point when the chain already has 64. */
		ch->virtual_tail = cur < 0 && ch->count < VRM_MAX_POINTS;
	}
	free(stack);
	return rc;
}

static int read_v0_groups(rd *c, const json_t *sec)
{
	json_t *arr;
	if (vrm_json_child(sec, "boneGroups", 1, V0, &arr, c->err, c->errlen) ||
	    check_count(c, arr, V0 ".boneGroups"))
		return -1;
	for (size_t i = 0; arr && i < json_array_size(arr); i++) {
		const json_t *o = json_array_get(arr, i), *comment, *center, *stiff;
		json_t *bones;
		char path[96], p[128];
		vrm_chain proto;
		vrm_segment *sp = &proto.seg[0];
		vrm_vec3 gdir;
		memset(&proto, 0, sizeof proto);
		proto.center = -1;
		vrm_pathf(path, sizeof path, V0 ".boneGroups[%zu]", i);
		if (!json_is_object(o))
			return vrm_fail(c->err, c->errlen, "%s: expected an object", path);
		comment = json_object_get(o, "comment");
		if (comment && !json_is_string(comment))
			return vrm_fail(c->err, c->errlen, "%s.comment: expected a string", path);
		proto.name = comment ? json_string_value(comment) : "";
		/* The 0.x schema spells it "stiffiness"; accept the corrected key too. */
		stiff = json_object_get(o, "stiffiness");
		/* UniVRM 0.x's defaults (drag 0.4, hit radius 0.02). */
		if (vrm_json_number(o, stiff ? "stiffiness" : "stiffness", 1.0, path,
		                    &sp->stiffness, c->err, c->errlen) ||
		    vrm_json_number(o, "dragForce", 0.4, path, &sp->drag, c->err, c->errlen) ||
		    vrm_json_number(o, "gravityPower", 0.0, path, &sp->gravity_power, c->err,
		                    c->errlen) ||
		    vrm_json_number(o, "hitRadius", 0.02, path, &sp->hit_radius, c->err,
		                    c->errlen) ||
		    read_xyz(c, o, "gravityDir", vrm_v3(0, -1, 0), path, &gdir))
			return -1;
		sp->gravity_dir = unity_to_gltf(gdir);
		clamp_params(c, sp, path, 0);
		center = json_object_get(o, "center");
		vrm_pathf(p, sizeof p, "%s.center", path);
		if (center && !(json_is_integer(center) && json_integer_value(center) == -1) &&
		    vrm_json_index(center, c->g->count, "node", p, &proto.center, c->err,
		                   c->errlen))
			return -1;
		if (chain_add_groups(c, &proto, o, path) ||
		    vrm_json_child(o, "bones", 1, path, &bones, c->err, c->errlen) ||
		    check_count(c, bones, path)) {
			free(proto.colliders);
			return -1;
		}
		for (size_t k = 0; bones && k < json_array_size(bones); k++) {
			int root;
			vrm_pathf(p, sizeof p, "%s.bones[%zu]", path, k);
			vrm_pathf(proto.source, sizeof proto.source, "boneGroups[%zu].bones[%zu]",
			          i, k);
			if (vrm_json_index(json_array_get(bones, k), c->g->count, "node", p, &root,
			                   c->err, c->errlen) ||
			    walk_v0(c, root, &proto)) {
				free(proto.colliders);
				return -1;
			}
		}
		free(proto.colliders);
	}
	return 0;
}

static int read_v0(rd *c)
{
	json_t *vrm = json_object_get(json_object_get(c->doc, "extensions"), "VRM");
	json_t *sec = json_object_get(vrm, "secondaryAnimation");
	if (!json_is_object(sec))
		return vrm_fail(c->err, c->errlen, "no spring bones: " V0 " is %s",
		                sec ? "not an object" : "absent");
	return read_v0_colliders(c, sec) || read_v0_groups(c, sec);
}

/* ---- the head bone ---- */

static int find_head(rd *c)
{
	json_t *exts = json_object_get(c->doc, "extensions"), *hb, *h;
	if (c->s->v1) {
		json_t *vrmc = json_object_get(exts, "VRMC_vrm");
		if (!json_is_object(vrmc))
			return vrm_fail(
			    c->err, c->errlen,
			    "missing head bone: extensions.VRMC_vrm (the humanoid) is absent");
		if (vrm_json_child(vrmc, "humanoid", 0, "extensions.VRMC_vrm", &h, c->err,
		                   c->errlen) ||
		    vrm_json_child(h, "humanBones", 0, "extensions.VRMC_vrm.humanoid", &hb, c->err,
		                   c->errlen) ||
		    vrm_json_child(hb, "head", 0, "extensions.VRMC_vrm.humanoid.humanBones", &h,
		                   c->err, c->errlen))
			return -1;
		if (!h)
			return vrm_fail(c->err, c->errlen,
			                "missing head bone: "
			                "extensions.VRMC_vrm.humanoid.humanBones.head "
			                "is absent");
		return vrm_json_index(json_object_get(h, "node"), c->g->count, "node",
		                      "extensions.VRMC_vrm.humanoid.humanBones.head.node",
		                      &c->s->head, c->err, c->errlen);
	}
	json_t *vrm = json_object_get(exts, "VRM");
	if (vrm_json_child(vrm, "humanoid", 0, "extensions.VRM", &h, c->err, c->errlen) ||
	    vrm_json_child(h, "humanBones", 1, "extensions.VRM.humanoid", &hb, c->err, c->errlen))
		return -1;
	for (size_t i = 0; hb && i < json_array_size(hb); i++) {
		const json_t *b = json_array_get(hb, i);
		const char *bone = json_string_value(json_object_get(b, "bone"));
		if (bone && strcmp(bone, "head") == 0) {
			char p[96];
			vrm_pathf(p, sizeof p, "extensions.VRM.humanoid.humanBones[%zu].node", i);
			return vrm_json_index(json_object_get(b, "node"), c->g->count, "node", p,
			                      &c->s->head, c->err, c->errlen);
		}
	}
	return vrm_fail(c->err, c->errlen,
	                "missing head bone: extensions.VRM.humanoid.humanBones "
	                "has no entry with \"bone\": \"head\"");
}
int vrm_springs_read(const json_t *doc, const vrm_graph *g, vrm_springs *s, vrm_diag *d, char *err,
                     size_t errlen)
{
	rd c = {doc, g, s, d, NULL, 0, err, errlen};
	json_t *exts;
	int rc;
	memset(s, 0, sizeof *s);
	if (vrm_json_child(doc, "extensions", 0, "glTF", &exts, err, errlen))
		return -1;
	int has1 = json_object_get(exts, "VRMC_vrm") || json_object_get(exts, "VRMC_springBone");
	int has0 = json_object_get(exts, "VRM") != NULL;
	if (!has1 && !has0)
		return vrm_fail(err, errlen,
		                "not a VRM: the file has neither extensions.VRMC_vrm "
		                "(VRM 1.0) nor extensions.VRM (VRM 0.x)");
	s->v1 = has1;
	if (has1 && has0)
		vrm_note(d, "the file has both VRM 1.0 and VRM 0.x extensions: read as VRM 1.0");
	rc = find_head(&c) || (s->v1 ? read_v1(&c) : read_v0(&c));
	for (int i = 0; i < c.ngroups; i++)
		free(c.groups[i].members);
	free(c.groups);
	return rc ? -1 : 0;
}

void vrm_springs_free(vrm_springs *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->nchains; i++)
		free(s->chains[i].colliders);
	free(s->chains);
	free(s->colliders);
	memset(s, 0, sizeof *s);
}
