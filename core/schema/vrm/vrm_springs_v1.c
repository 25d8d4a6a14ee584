/* vrm_springs: the VRM 1.0 reader (extensions.VRMC_springBone, with the
 * VRMC_springBone_extended_collider and draft VRMC_springBone_limit extensions), called
 * by vrm_springs_read (vrm_springs.c): springs of joints, colliders and collider groups
 * as listed. */
#include "vrm_springs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "vrm_springs_internal.h"

#define VRM_PI 3.14159265358979323846

#define SB "extensions.VRMC_springBone"

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
	    vrm_rd_check_count(c, arr, SB ".colliders"))
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
	    vrm_rd_check_count(c, arr, SB ".colliderGroups"))
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
		    vrm_rd_check_count(c, cols, path))
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
	vrm_rd_clamp_params(c, sp, path, 1);
	return 0;
}

static int read_v1_springs(rd *c, const json_t *sb)
{
	json_t *arr;
	if (vrm_json_child(sb, "springs", 1, SB, &arr, c->err, c->errlen) ||
	    vrm_rd_check_count(c, arr, SB ".springs"))
		return -1;
	for (size_t i = 0; arr && i < json_array_size(arr); i++) {
		const json_t *s = json_array_get(arr, i), *name, *center;
		json_t *joints;
		char path[96];
		vrm_pathf(path, sizeof path, SB ".springs[%zu]", i);
		if (!json_is_object(s))
			return vrm_fail(c->err, c->errlen, "%s: expected an object", path);
		vrm_chain *ch = vrm_rd_new_chain(c);
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
		if (vrm_rd_chain_add_groups(c, ch, s, path) ||
		    read_limit(c, s, path, &spring_limit) ||
		    vrm_json_child(s, "joints", 1, path, &joints, c->err, c->errlen) ||
		    vrm_rd_check_count(c, joints, path))
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

int vrm_read_v1(rd *c)
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
