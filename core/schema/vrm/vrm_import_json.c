/* vrm_import(): writing the instance definition and the import report from the measured,
 * chosen chains and colliders (see vrm_import_internal.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "vrm_humanoid.h"
#include "vrm_import_internal.h"

#define VRM_PI 3.14159265358979323846

/* Below this an approximation is too small to mention. */
#define WARN_TILT_DEG 0.01 /* a limit's centre vs its segment's rest direction */

/* ---- small helpers ---- */

/* Rounds away float noise: 1e-17 prints as 0, -0 as 0. */
static json_t *jnum(double x)
{
	if (fabs(x) < 5e-10)
		x = 0.0;
	return json_real(x + 0.0);
}

static json_t *jvec(vrm_vec3 v)
{
	json_t *a = json_array();
	json_array_append_new(a, jnum(v.x));
	json_array_append_new(a, jnum(v.y));
	json_array_append_new(a, jnum(v.z));
	return a;
}

/* Copies s into out (VRM_NAME_MAX bytes) without splitting a UTF-8 sequence; 1 if cut. */
static int copy_name(char *out, const char *s)
{
	size_t n = strlen(s);
	int cut = n >= VRM_NAME_MAX;
	if (cut) {
		n = VRM_NAME_MAX - 1;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	memcpy(out, s, n);
	out[n] = '\0';
	return cut;
}

/* ---- writing the instance ---- */

/* "head" or "world" for a chain's center node (VRM: the space inertia is measured in). */
static const char *center_of(cv *c, const vrm_chain *ch)
{
	if (ch->center < 0)
		return "world";
	if (ch->center == c->s.head)
		return "head";
	/* A root (the avatar's own origin) holds still while the head moves over it: as far as
	 * a head-driven instance can tell, that is the world. */
	if (c->g.nodes[ch->center].parent < 0)
		return "world";
	vrm_tally(&c->d, VRM_T_CENTER, "%s center \"%s\"", ch->source, node_name(c, ch->center));
	return "world";
}

/* Segment i's angle limit. The draft's frame: the joint's rest rotation, then the shortest
 * arc from +Y to the bone axis, then the limit's own `rotation`; the cone opens around
 * that frame's +Y, the hinge turns about its +X. */
static json_t *limit_json(cv *c, const vrm_chain *ch, const strand *st, int i)
{
	const vrm_segment *sp = &ch->seg[i];
	json_t *o = json_object();
	vrm_vec3 d = vrm_normalize(vrm_sub(st->pts[i + 1], st->pts[i]));
	if (sp->limit == VRM_LIMIT_NONE || vrm_len(d) == 0) {
		json_object_set_new(o, "type", json_string("none"));
		return o;
	}
	/* Everything in head-local terms: the joint's rotation relative to the head frame. */
	vrm_rot rj = vrm_rot_from_mat4(&c->g.nodes[ch->nodes[i]].world), rh;
	for (int col = 0; col < 3; col++) {
		vrm_vec3 v =
		    to_head_dir(c, vrm_v3(rj.r[col * 3], rj.r[col * 3 + 1], rj.r[col * 3 + 2]));
		rh.r[col * 3] = v.x, rh.r[col * 3 + 1] = v.y, rh.r[col * 3 + 2] = v.z;
	}
	vrm_rot arc = vrm_rot_between(vrm_v3(0, 1, 0), vrm_rot_apply_inv(&rh, d));
	vrm_rot q = vrm_rot_from_quat(sp->limit_q);
	vrm_rot t = vrm_rot_mul(&rh, &arc);
	t = vrm_rot_mul(&t, &q);
	double tilt = vrm_angle_deg(vrm_rot_apply(&t, vrm_v3(0, 1, 0)), d);
	if (tilt > WARN_TILT_DEG)
		vrm_tally(&c->d, VRM_T_TILT, "%s joint %d: %.3g°", ch->source, i, tilt);
	if (sp->limit == VRM_LIMIT_HINGE) {
		/* The strand is straight along dir: keep the hinge axis perpendicular to it. */
		vrm_vec3 ax = vrm_rot_apply(&t, vrm_v3(1, 0, 0));
		ax = vrm_normalize(vrm_sub(ax, vrm_scale(st->dir, vrm_dot(ax, st->dir))));
		if (vrm_len(ax) == 0) {
			vrm_tally(&c->d, VRM_T_TILT, "%s joint %d: hinge axis along the strand",
			          ch->source, i);
			json_object_set_new(o, "type", json_string("none"));
			return o;
		}
		json_object_set_new(o, "type", json_string("hinge"));
		json_object_set_new(o, "angle_deg", jnum(sp->limit_angle * (180.0 / VRM_PI)));
		json_object_set_new(o, "axis", jvec(ax));
		return o;
	}
	json_object_set_new(o, "type", json_string("cone"));
	json_object_set_new(o, "angle_deg", jnum(sp->limit_angle * (180.0 / VRM_PI)));
	return o;
}

static json_t *strand_colliders(const cv *c, const vrm_chain *ch)
{
	/* In the chain's order: its collider groups as the spring lists them, each group's
	 * colliders in the group's order (what three-vrm's VRMSpringBoneJoint._collision
	 * iterates), a collider once (vrm_springs.c keeps its first place). */
	unsigned char on[VRM_MAX_COLLIDERS] = {0}; /* out indices are < VRM_MAX_COLLIDERS */
	json_t *a = json_array();
	for (int k = 0; k < ch->ncolliders; k++) {
		int o = c->use[ch->colliders[k]].out;
		if (o >= 0 && o < VRM_MAX_COLLIDERS && !on[o]) {
			on[o] = 1;
			json_array_append_new(a, json_integer(o));
		}
	}
	return a;
}

static const char *anchor_bone_of(const cv *c, const vrm_chain *ch)
{
	int par = c->g.nodes[ch->nodes[0]].parent;
	return node_name(c, par >= 0 ? par : ch->nodes[0]);
}

static json_t *strand_json(cv *c, int ci)
{
	const vrm_chain *ch = &c->s.chains[ci];
	const strand *st = &c->st[ci];
	json_t *s = json_object(), *sb = json_object(), *lim = json_array();
	json_t *stiff = json_array(), *drag = json_array(), *gp = json_array(), *hr = json_array(),
	       *gd = json_array();
	int any_limit = 0;
	json_t *rest = json_array();
	for (int i = 0; i < st->points; i++)
		json_array_append_new(rest, jvec(st->pts[i]));
	json_object_set_new(s, "rest", rest);
	/* The bone at every point, the root first (core/SCHEMA.md "Joint names"); the 0.x
	 * virtual tail has none. */
	json_t *names = json_array();
	for (int i = 0; i < st->points; i++) {
		char nm[VRM_NAME_MAX] = "";
		if (i < ch->count && copy_name(nm, node_name(c, ch->nodes[i])))
			vrm_note(&c->d, "%s: joint name \"%s\" shortened to %d bytes", ch->source,
			         node_name(c, ch->nodes[i]), VRM_NAME_MAX - 1);
		json_array_append_new(names, json_string(nm));
	}
	json_object_set_new(s, "joints", names);
	if (!st->on_head) {
		char name[VRM_NAME_MAX];
		const char *bone = anchor_bone_of(c, ch);
		if (copy_name(name, bone))
			vrm_note(&c->d, "%s: anchor_bone \"%s\" shortened to %d bytes", ch->source,
			         bone, VRM_NAME_MAX - 1);
		json_object_set_new(s, "anchor_bone", json_string(name));
	}
	if (st->parent >= 0) {
		json_t *p = json_object();
		json_object_set_new(p, "strand", json_integer(c->st[st->parent].out));
		json_object_set_new(p, "point", json_integer(st->parent_point));
		json_object_set_new(s, "parent", p);
	} else if (st->bone >= 0) {
		json_object_set_new(s, "bone", json_string(pt_bone_name((pt_bone)st->bone)));
		c->bone_used[st->bone] = 1;
		c->bone_node[st->bone] = st->bone_node;
	}
	json_object_set_new(s, "colliders", strand_colliders(c, ch));
	for (int i = 0; i + 1 < st->points; i++) {
		const vrm_segment *sp = &ch->seg[i];
		vrm_vec3 g = vrm_normalize(sp->gravity_dir);
		if (vrm_len(g) == 0) {
			if (sp->gravity_power > 0)
				vrm_tally(&c->d, VRM_T_CLAMPED,
				          "%s joint %d: zero gravityDir -> (0, -1, 0)", ch->source,
				          i);
			g = vrm_v3(0, -1, 0);
		}
		json_array_append_new(stiff, jnum(sp->stiffness));
		json_array_append_new(drag, jnum(sp->drag));
		json_array_append_new(gp, jnum(sp->gravity_power));
		json_array_append_new(hr, jnum(sp->hit_radius));
		json_array_append_new(gd, jvec(vrm_normalize(to_head_dir(c, g))));
		json_array_append_new(lim, limit_json(c, ch, st, i));
		any_limit |= sp->limit != VRM_LIMIT_NONE;
	}
	json_object_set_new(sb, "stiffness", stiff);
	json_object_set_new(sb, "drag_force", drag);
	json_object_set_new(sb, "gravity_power", gp);
	json_object_set_new(sb, "hit_radius", hr);
	json_object_set_new(sb, "gravity_dir", gd);
	if (any_limit)
		json_object_set_new(sb, "limit", lim);
	else
		json_decref(lim);
	json_object_set_new(s, "springbone", sb);
	return s;
}

/* The bone a collider moves with (vrm_humanoid_owner): a body bone's name, or "head"
 * (also for a node under no humanoid bone, with a warning). *base: that bone's rest
 * position, head-local; the collider's coordinates are written relative to it, along the
 * head's rest axes (the bone's table entry has rotation identity: a client sends a bone's
 * rotation relative to its rest, as it does the head's). */
static const char *collider_attach(cv *c, const vrm_collider *co, vrm_vec3 *base)
{
	int at, owner = vrm_humanoid_owner(&c->g, c->bone_of_node, co->node, &at);
	*base = (vrm_vec3){0, 0, 0};
	if (owner >= 0) {
		c->bone_used[owner] = 1;
		c->bone_node[owner] = at;
		*base = to_head(c, node_pos(c, at));
		return pt_bone_name((pt_bone)owner);
	}
	if (owner == VRM_BONE_NONE)
		vrm_tally(&c->d, VRM_T_NONHEAD_COLLIDER, "%s on \"%s\"", co->source,
		          node_name(c, co->node));
	return "head";
}

/* A point of the collider, in its bone's frame. */
static json_t *collider_point(const cv *c, const vrm_mat4 *m, vrm_vec3 p, vrm_vec3 base)
{
	return jvec(vrm_sub(to_head(c, vrm_mat4_point(m, p)), base));
}

static json_t *collider_json(cv *c, const vrm_collider *co)
{
	const vrm_mat4 *m = &c->g.nodes[co->node].world;
	vrm_vec3 s = vrm_mat4_axis_scale(m), base;
	json_t *o = json_object();
	double r = vrm_clamp(&c->d, co->radius * fmax(s.x, fmax(s.y, s.z)), 0, 10, co->source,
	                     "radius (scaled)");
	vrm_cv_check_scale(c, co->node);
	json_object_set_new(o, "shape", json_string(vrm_shape_names[co->shape]));
	json_object_set_new(o, "attach", json_string(collider_attach(c, co, &base)));
	switch (co->shape) {
	case VRM_SPHERE:
	case VRM_INSIDE_SPHERE:
		json_object_set_new(o, "center", collider_point(c, m, co->offset, base));
		json_object_set_new(o, "radius", jnum(r));
		break;
	case VRM_CAPSULE:
	case VRM_INSIDE_CAPSULE:
		json_object_set_new(o, "a", collider_point(c, m, co->offset, base));
		json_object_set_new(o, "b", collider_point(c, m, co->tail, base));
		json_object_set_new(o, "radius", jnum(r));
		break;
	case VRM_PLANE:
		json_object_set_new(o, "point", collider_point(c, m, co->offset, base));
		json_object_set_new(
		    o, "normal",
		    jvec(vrm_normalize(to_head_dir(c, vrm_mat4_normal(m, co->normal)))));
		break;
	}
	return o;
}

/* The rest table of the body bones (NULL when no written collider or strand is on one):
 * every humanoid body bone of the file, so that an unposed bone follows its nearest posed
 * ancestor (core/SCHEMA.md "Body bones"): head-local position of the bone's node,
 * rotation identity (collider_attach). */
static json_t *bones_json(cv *c)
{
	int any = 0, node_of[PT_BONE_COUNT];
	for (int b = 0; b < PT_BONE_COUNT; b++)
		any |= c->bone_used[b], node_of[b] = c->bone_used[b] ? c->bone_node[b] : -1;
	if (!any)
		return NULL;
	for (int n = 0; n < c->g.count; n++)
		if (c->bone_of_node[n] >= 0 && node_of[c->bone_of_node[n]] < 0)
			node_of[c->bone_of_node[n]] = n;
	json_t *o = json_object();
	for (int b = 0; b < PT_BONE_COUNT; b++) {
		if (node_of[b] < 0)
			continue;
		json_t *e = json_object(), *q = json_array();
		json_object_set_new(e, "position", jvec(to_head(c, node_pos(c, node_of[b]))));
		for (int k = 0; k < 4; k++)
			json_array_append_new(q, json_real(k == 3 ? 1.0 : 0.0));
		json_object_set_new(e, "rotation", q);
		json_object_set_new(o, pt_bone_name((pt_bone)b), e);
	}
	return o;
}

static const char *meta_name(const cv *c)
{
	const json_t *exts = json_object_get(c->doc, "extensions");
	const json_t *meta = c->s.v1 ? json_object_get(json_object_get(exts, "VRMC_vrm"), "meta")
	                             : json_object_get(json_object_get(exts, "VRM"), "meta");
	const char *n = json_string_value(json_object_get(meta, c->s.v1 ? "name" : "title"));
	return n && *n ? n : "vrm-avatar";
}

json_t *vrm_cv_build_instance(cv *c)
{
	json_t *inst = json_object(), *sb = json_object(), *strands = json_array(),
	       *cols = json_array();
	char name[VRM_NAME_MAX];
	int heads = 0, worlds = 0;
	if (copy_name(name, meta_name(c)))
		vrm_note(&c->d, "the avatar's name is shortened to %d bytes", VRM_NAME_MAX - 1);
	for (int out = 0;; out++) { /* in out order: a branch after its parent */
		int i = 0;
		while (i < c->s.nchains && c->st[i].out != out)
			i++;
		if (i == c->s.nchains)
			break;
		json_array_append_new(strands, strand_json(c, i));
		if (strcmp(center_of(c, &c->s.chains[i]), "head") == 0)
			heads++;
		else
			worlds++;
	}
	for (int i = 0; i < c->s.ncolliders; i++)
		if (c->use[i].out >= 0)
			json_array_append_new(cols, collider_json(c, &c->s.colliders[i]));
	json_t *bones = bones_json(c);
	if (heads && worlds)
		vrm_warn(&c->d,
		         "%d chains measure inertia in the head's space (center) and %d in the "
		         "world's; an instance has one center: \"world\" is used",
		         heads, worlds);
	json_object_set_new(sb, "form", json_string("vrm"));
	/* the tails' length as three-vrm measures it: a viewer on three-vrm sees this hair */
	json_object_set_new(sb, "length", json_string("three-vrm"));
	json_object_set_new(sb, "center", json_string(heads && !worlds ? "head" : "world"));
	json_object_set_new(inst, "name", json_string(name));
	json_object_set_new(inst, "solver", json_string("springbone"));
	json_object_set_new(inst, "prewarm_s", json_real(VRM_IMPORT_PREWARM_S));
	json_object_set_new(inst, "springbone", sb);
	json_object_set_new(inst, "strands", strands);
	json_object_set_new(inst, "colliders", cols);
	if (bones)
		json_object_set_new(inst, "bones", bones);
	return inst;
}

/* ---- the report ---- */

static json_t *chain_report(const cv *c, int ci)
{
	const vrm_chain *ch = &c->s.chains[ci];
	const strand *st = &c->st[ci];
	json_t *o = json_object(), *joints = json_array();
	json_object_set_new(o, "source", json_string(ch->source));
	json_object_set_new(o, "name", json_string(ch->name));
	json_object_set_new(o, "strand", st->out >= 0 ? json_integer(st->out) : json_null());
	if (st->drop)
		json_object_set_new(o, "dropped", json_string(st->drop));
	for (int k = 0; k < ch->count; k++)
		json_array_append_new(joints, json_string(node_name(c, ch->nodes[k])));
	json_object_set_new(o, "joints", joints);
	json_object_set_new(o, "virtual_tail", json_boolean(ch->virtual_tail));
	if (ch->count > 0) {
		json_object_set_new(o, "on_head", json_boolean(st->on_head));
		json_object_set_new(o, "anchor_bone", json_string(anchor_bone_of(c, ch)));
		/* what it moves with: "head", a body bone, or "strand S point K" (a branch) */
		char with[64] = "head";
		if (st->out >= 0 && st->parent >= 0)
			snprintf(with, sizeof with, "strand %d point %d", c->st[st->parent].out,
			         st->parent_point);
		else if (st->out >= 0 && st->bone >= 0)
			snprintf(with, sizeof with, "%s", pt_bone_name((pt_bone)st->bone));
		json_object_set_new(o, "moves_with", json_string(with));
	}
	json_object_set_new(o, "center",
	                    ch->center >= 0 ? json_string(node_name(c, ch->center)) : json_null());
	if (st->points >= 2 && st->mean > 0) {
		json_t *lens = json_array();
		for (int i = 0; i + 1 < st->points; i++)
			json_array_append_new(lens, jnum(st->len[i]));
		json_object_set_new(o, "points", json_integer(st->points));
		json_object_set_new(o, "segment_lengths", lens);
		json_object_set_new(o, "segment_length_mean", jnum(st->mean));
		json_object_set_new(o, "segment_length_min", jnum(st->shortest));
		json_object_set_new(o, "segment_length_max", jnum(st->longest));
		json_object_set_new(o, "rest_bend_max_deg", jnum(st->bend_deg));
		json_object_set_new(o, "tip_offset_m", jnum(st->tip_offset));
	}
	return o;
}

json_t *vrm_cv_build_report(cv *c, size_t bytes)
{
	json_t *r = json_object(), *src = json_object(), *head = json_object(),
	       *chains = json_array(), *cols = json_array();
	vrm_rot hr = vrm_rot_from_mat4(&c->g.nodes[c->s.head].world);
	json_object_set_new(src, "format", json_string(c->s.v1 ? "VRM 1.0" : "VRM 0.x"));
	json_object_set_new(src, "bytes", json_integer((json_int_t)bytes));
	json_object_set_new(src, "nodes", json_integer(c->g.count));
	json_object_set_new(head, "node", json_integer(c->s.head));
	json_object_set_new(head, "name", json_string(node_name(c, c->s.head)));
	json_object_set_new(head, "rest_position", jvec(c->origin));
	json_object_set_new(head, "rest_rotation_deg", jnum(vrm_rot_angle_deg(&hr)));
	json_object_set_new(src, "head", head);
	json_object_set_new(r, "source", src);
	json_object_set_new(
	    r, "coordinates",
	    json_string(c->s.v1 ? "head-local: metres from the head bone's rest position, along "
	                          "its rest axes; +Y up, the face looking +Z (VRM 1.0 as stored)"
	                        : "head-local: metres from the head bone's rest position, along "
	                          "its rest axes turned 180° about Y; +Y up, the face looking +Z "
	                          "(VRM 0.x models face -Z)"));
	for (int i = 0; i < c->s.nchains; i++)
		json_array_append_new(chains, chain_report(c, i));
	for (int i = 0; i < c->s.ncolliders; i++) {
		const vrm_collider *co = &c->s.colliders[i];
		json_t *o = json_object();
		json_object_set_new(o, "source", json_string(co->source));
		json_object_set_new(o, "collider",
		                    c->use[i].out >= 0 ? json_integer(c->use[i].out) : json_null());
		json_object_set_new(
		    o, "node", co->node >= 0 ? json_string(node_name(c, co->node)) : json_null());
		json_object_set_new(o, "shape", json_string(vrm_shape_names[co->shape]));
		json_object_set_new(
		    o, "on_head",
		    json_boolean(co->node >= 0 && vrm_graph_is_under(&c->g, co->node, c->s.head)));
		int at, owner = co->node >= 0
		                    ? vrm_humanoid_owner(&c->g, c->bone_of_node, co->node, &at)
		                    : VRM_BONE_NONE;
		json_object_set_new(o, "bone",
		                    owner >= 0 ? json_string(pt_bone_name((pt_bone)owner))
		                               : json_string("head"));
		json_object_set_new(o, "used",
		                    json_boolean(c->use[i].by_head || c->use[i].by_other));
		json_array_append_new(cols, o);
	}
	json_object_set_new(r, "strands", chains);
	json_object_set_new(r, "colliders", cols);
	return r;
}
