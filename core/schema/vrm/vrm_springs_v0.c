/* vrm_springs: the VRM 0.x reader (extensions.VRM.secondaryAnimation), called by
 * vrm_springs_read (vrm_springs.c): bone groups of root bones, whose every descendant
 * path becomes a chain, and collider groups owning their spheres, flattened into the
 * same chains and colliders as VRM 1.0's. */
#include "vrm_springs.h"

#include <stdlib.h>
#include <string.h>

#include "vrm_springs_internal.h"

#define V0 "extensions.VRM.secondaryAnimation"

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
	    vrm_rd_check_count(c, arr, V0 ".colliderGroups"))
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
		vrm_chain *ch = vrm_rd_new_chain(c);
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
	    vrm_rd_check_count(c, arr, V0 ".boneGroups"))
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
		vrm_rd_clamp_params(c, sp, path, 0);
		center = json_object_get(o, "center");
		vrm_pathf(p, sizeof p, "%s.center", path);
		if (center && !(json_is_integer(center) && json_integer_value(center) == -1) &&
		    vrm_json_index(center, c->g->count, "node", p, &proto.center, c->err,
		                   c->errlen))
			return -1;
		if (vrm_rd_chain_add_groups(c, &proto, o, path) ||
		    vrm_json_child(o, "bones", 1, path, &bones, c->err, c->errlen) ||
		    vrm_rd_check_count(c, bones, path)) {
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

int vrm_read_v0(rd *c)
{
	json_t *vrm = json_object_get(json_object_get(c->doc, "extensions"), "VRM");
	json_t *sec = json_object_get(vrm, "secondaryAnimation");
	if (!json_is_object(sec))
		return vrm_fail(c->err, c->errlen, "no spring bones: " V0 " is %s",
		                sec ? "not an object" : "absent");
	return read_v0_colliders(c, sec) || read_v0_groups(c, sec);
}
