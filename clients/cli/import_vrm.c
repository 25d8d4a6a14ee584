/* `ponytail import-vrm AVATAR.vrm`: a VRM avatar's spring bones as an instance definition
 * for `ponytail sim` or POST /v1/instances.
 *
 * vrm_import() is the library part (declared in vrm_springs.h): GLB and node graph
 * (vrm_gltf), the spring bones as the file has them (vrm_springs_read), then here: measure
 * every chain in head-local coordinates, choose what fits an instance, write it and the
 * report. cmd_import_vrm() at the end is the command around it.
 *
 * Exit status: 0 imported (approximations are listed on stderr as warnings), 1 the file
 * cannot be read or is not a valid VRM, 2 bad usage.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ponytail/schema.h"
#include "vrm_gltf.h"
#include "vrm_humanoid.h"
#include "vrm_springs.h"

/* The CLI's command table declares the entry points; tests that compile this file on its
 * own define VRM_NO_COMMANDS_H. The declaration below keeps the file self-sufficient. */
#if !defined(VRM_NO_COMMANDS_H) && defined(__has_include)
#if __has_include("commands.h")
#include "commands.h"
#endif
#endif
int cmd_import_vrm(int argc, char **argv);

#define VRM_PI 3.14159265358979323846

/* VRM 0.x's virtual tail after a leaf joint ("0.x interpretation" of the 1.0 spec). */
#define VIRTUAL_TAIL_M 0.07
/* The schema's range for every segment of a rest shape. */
#define SEG_MIN_M 0.001
#define SEG_MAX_M 1.0
/* Below these an approximation is too small to mention. */
#define WARN_SCALE 1e-4         /* |axis scale - 1| */
#define WARN_TILT_DEG 0.01      /* a limit's centre vs its segment's rest direction */
#define NOTE_HEAD_TURN_DEG 0.01 /* head bone's rest rotation vs identity */
/* Seconds of prewarm written into the instance (core/SCHEMA.md's default). */
#define DEFAULT_PREWARM_S 1.0

/* A chain measured in head-local coordinates, and its fate. */
typedef struct strand {
	vrm_vec3 pts[VRM_MAX_POINTS]; /* rest points, virtual tail included */
	int points;
	double len[VRM_MAX_POINTS]; /* len[i]: point i -> i + 1 */
	double mean, shortest, longest;
	double bend_deg;   /* largest angle between a segment and dir */
	double tip_offset; /* metres between the real tip and the straight strand's */
	vrm_vec3 dir;      /* along the first segment of non-zero length */
	int on_head;       /* the first joint is the head or below it */
	const char *drop;  /* why it is not in the instance; NULL if it is */
	int out;           /* index in the instance's strands, -1 if not there */
} strand;

typedef struct collider_use {
	int by_head, by_other; /* used by a kept strand on / off the head */
	int keep;
	int out; /* index in the instance's colliders, -1 if not there */
} collider_use;

typedef struct cv {
	json_t *doc;
	vrm_graph g;
	vrm_springs s;
	vrm_diag d;
	vrm_rot frame;         /* head frame: rest rotation (0.x: turned 180° about Y) */
	vrm_vec3 origin;       /* head rest world position */
	strand *st;            /* one per chain */
	collider_use *use;     /* one per collider */
	unsigned char *moving; /* per node: a joint some chain rotates */
	signed char *bone_of_node;        /* per node: vrm_humanoid.h */
	int bone_node[PT_BONE_COUNT];     /* a body bone some written collider is on: its node */
	unsigned char bone_used[PT_BONE_COUNT];
} cv;

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

static vrm_vec3 to_head(const cv *c, vrm_vec3 world)
{
	return vrm_rot_apply_inv(&c->frame, vrm_sub(world, c->origin));
}

static vrm_vec3 to_head_dir(const cv *c, vrm_vec3 d)
{
	return vrm_rot_apply_inv(&c->frame, d);
}

static vrm_vec3 node_pos(const cv *c, int node)
{
	return vrm_mat4_translation(&c->g.nodes[node].world);
}

static const char *node_name(const cv *c, int node)
{
	return c->g.nodes[node].name;
}

static void check_scale(cv *c, int node)
{
	vrm_vec3 s = vrm_mat4_axis_scale(&c->g.nodes[node].world);
	if (fabs(s.x - 1) > WARN_SCALE || fabs(s.y - 1) > WARN_SCALE || fabs(s.z - 1) > WARN_SCALE)
		vrm_tally(&c->d, VRM_T_SCALE, "\"%s\" (%g, %g, %g)", node_name(c, node), s.x, s.y,
		          s.z);
}

/* ---- the head frame ---- */

static void set_frame(cv *c)
{
	const vrm_mat4 *hw = &c->g.nodes[c->s.head].world;
	vrm_rot r = vrm_rot_from_mat4(hw);
	double turn = vrm_rot_angle_deg(&r);
	c->origin = vrm_mat4_translation(hw);
	if (turn > NOTE_HEAD_TURN_DEG)
		vrm_note(&c->d,
		         "the head bone's rest rotation is not the identity (turned %.3g°): "
		         "head-local axes are the head bone's, so send the head bone's world "
		         "rotation relative to this rest rotation",
		         turn);
	if (vrm_mat4_det3(hw) < 0)
		vrm_warn(&c->d,
		         "the head bone's rest transform is mirrored: the mirror is dropped");
	check_scale(c, c->s.head);
	if (!c->s.v1) { /* VRM 0.x faces -Z: turn 180° about Y so head-local +Z is the face. */
		static const vrm_rot turn_y = {{-1, 0, 0, 0, 1, 0, 0, 0, -1}};
		r = vrm_rot_mul(&r, &turn_y);
	}
	c->frame = r;
}

/* ---- measuring chains ---- */

/* Cuts chains at a joint an earlier chain already rotates, then marks the joints this one
 * rotates (every point but the last; a 0.x leaf rotates toward its virtual tail). */
static void cut_shared(cv *c)
{
	for (int i = 0; i < c->s.nchains; i++) {
		vrm_chain *ch = &c->s.chains[i];
		for (int k = 0; k < ch->count; k++) {
			if (!c->moving[ch->nodes[k]])
				continue;
			vrm_tally(&c->d, VRM_T_REUSED, "%s at \"%s\"", ch->source,
			          node_name(c, ch->nodes[k]));
			ch->count = k + 1; /* the shared joint can still be this chain's tail */
			ch->virtual_tail = 0;
			break;
		}
		int rotated = ch->virtual_tail ? ch->count : ch->count - 1;
		for (int k = 0; k < rotated; k++)
			c->moving[ch->nodes[k]] = 1;
	}
}

static void measure(cv *c, int ci)
{
	vrm_chain *ch = &c->s.chains[ci];
	strand *st = &c->st[ci];
	vrm_vec3 w[VRM_MAX_POINTS];
	int n = ch->count;
	st->out = -1;
	for (int i = 0; i < n; i++) {
		w[i] = node_pos(c, ch->nodes[i]);
		check_scale(c, ch->nodes[i]);
	}
	if (ch->virtual_tail) {
		/* UniVRM 0.x: the leaf's tail continues the parent -> leaf direction by 7 cm. */
		int par = c->g.nodes[ch->nodes[n - 1]].parent;
		vrm_vec3 d = par >= 0 ? vrm_sub(w[n - 1], node_pos(c, par)) : vrm_v3(0, 0, 0);
		if (vrm_len(d) < 1e-9) {
			vrm_tally(&c->d, VRM_T_NO_TAIL, "%s at \"%s\"", ch->source,
			          node_name(c, ch->nodes[n - 1]));
			ch->virtual_tail = 0;
		} else {
			w[n] = vrm_add(w[n - 1], vrm_scale(vrm_normalize(d), VIRTUAL_TAIL_M));
			n++;
		}
	}
	st->points = n;
	st->on_head = n > 0 && vrm_graph_is_under(&c->g, ch->nodes[0], c->s.head);
	if (n < 2) {
		st->drop = "fewer than 2 points";
		vrm_tally(&c->d, VRM_T_SHORT, "%s: %s", ch->source, st->drop);
		return;
	}
	for (int i = 0; i < n; i++)
		st->pts[i] = to_head(c, w[i]);
	double sum = 0;
	int have_dir = 0;
	st->shortest = INFINITY;
	for (int i = 0; i + 1 < n; i++) {
		vrm_vec3 d = vrm_sub(st->pts[i + 1], st->pts[i]);
		st->len[i] = vrm_len(d);
		sum += st->len[i];
		st->shortest = fmin(st->shortest, st->len[i]);
		st->longest = fmax(st->longest, st->len[i]);
		if (st->len[i] < 1e-6)
			vrm_tally(&c->d, VRM_T_ZERO_SEGMENT, "%s segment %d", ch->source, i);
		else if (!have_dir) {
			st->dir = vrm_normalize(d);
			have_dir = 1;
		}
	}
	st->mean = sum / (n - 1);
	/* The strand carries every point's rest position ("rest"), so unequal and curved
	 * chains are exact; each segment must be one core can hold. */
	if (!have_dir || st->shortest < SEG_MIN_M || st->longest > SEG_MAX_M) {
		st->drop = "a segment length outside [1 mm, 1 m]";
		vrm_tally(&c->d, VRM_T_SHORT, "%s: segments %g..%g m", ch->source, st->shortest,
		          st->longest);
		return;
	}
	for (int i = 0; i + 1 < n; i++)
		if (st->len[i] >= 1e-6)
			st->bend_deg =
			    fmax(st->bend_deg,
			         vrm_angle_deg(vrm_sub(st->pts[i + 1], st->pts[i]), st->dir));
	vrm_vec3 tip = vrm_add(st->pts[0], vrm_scale(st->dir, st->mean * (n - 1)));
	st->tip_offset = vrm_len(vrm_sub(st->pts[n - 1], tip));
}

/* A chain whose first joint sits below a joint some chain rotates would, in VRM, move
 * with that joint; here it is anchored at rest. */
static void check_branching(cv *c, int ci)
{
	const vrm_chain *ch = &c->s.chains[ci];
	for (int a = c->g.nodes[ch->nodes[0]].parent; a >= 0; a = c->g.nodes[a].parent)
		if (c->moving[a]) {
			vrm_tally(&c->d, VRM_T_BRANCH, "%s below \"%s\"", ch->source,
			          node_name(c, a));
			return;
		}
}

/* ---- choosing what fits ---- */

static int choose_strands(cv *c)
{
	int kept = 0, dropped = 0, next = 0;
	const char *first = NULL;
	/* Head chains first: the instance follows the head, they are what it is for. */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < c->s.nchains; i++) {
			strand *st = &c->st[i];
			if (st->drop || st->on_head != (pass == 0))
				continue;
			if (kept < VRM_MAX_STRANDS) {
				kept++; /* numbered below, in file order */
			} else {
				st->drop = "over the 32-strand limit";
				if (!dropped++)
					first = c->s.chains[i].source;
			}
		}
	for (int i = 0; i < c->s.nchains; i++)
		c->st[i].out = c->st[i].drop ? -1 : next++;
	if (dropped)
		vrm_warn(&c->d,
		         "%d chains over the %d-strand limit of an instance were dropped (first: "
		         "%s; chains on the head are kept first)",
		         dropped, VRM_MAX_STRANDS, first);
	return kept;
}

static void choose_colliders(cv *c)
{
	int kept = 0, dropped = 0, next = 0;
	const char *first = NULL;
	for (int i = 0; i < c->s.nchains; i++) {
		const vrm_chain *ch = &c->s.chains[i];
		if (c->st[i].drop)
			continue;
		for (int k = 0; k < ch->ncolliders; k++) {
			collider_use *u = &c->use[ch->colliders[k]];
			if (c->st[i].on_head)
				u->by_head = 1;
			else
				u->by_other = 1;
		}
	}
	/* Colliders of head chains first, as for strands. */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < c->s.ncolliders; i++) {
			collider_use *u = &c->use[i];
			int wanted = pass == 0 ? u->by_head : !u->by_head && u->by_other;
			if (!wanted || c->s.colliders[i].node < 0)
				continue;
			if (kept < VRM_MAX_COLLIDERS) {
				u->keep = 1;
				kept++;
			} else if (!dropped++) {
				first = c->s.colliders[i].source;
			}
		}
	for (int i = 0; i < c->s.ncolliders; i++)
		c->use[i].out = c->use[i].keep ? next++ : -1;
	if (dropped)
		vrm_warn(&c->d,
		         "%d colliders over the %d-collider limit of an instance were dropped "
		         "(first: %s; colliders of head chains are kept first)",
		         dropped, VRM_MAX_COLLIDERS, first);
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
	uint64_t mask = 0; /* out indices are < VRM_MAX_COLLIDERS = 32 */
	json_t *a = json_array();
	for (int k = 0; k < ch->ncolliders; k++) {
		int o = c->use[ch->colliders[k]].out;
		if (o >= 0)
			mask |= (uint64_t)1 << o;
	}
	for (int o = 0; o < VRM_MAX_COLLIDERS; o++)
		if (mask >> o & 1)
			json_array_append_new(a, json_integer(o));
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
		vrm_tally(&c->d, VRM_T_NONHEAD_CHAIN, "%s from \"%s\"", ch->source, bone);
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
	check_scale(c, co->node);
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

/* The rest table of the body bones the written colliders are on (NULL when none):
 * head-local position of the bone's node, rotation identity (collider_attach). */
static json_t *bones_json(cv *c)
{
	json_t *o = NULL;
	for (int b = 0; b < PT_BONE_COUNT; b++) {
		if (!c->bone_used[b])
			continue;
		json_t *e = json_object(), *q = json_array();
		if (!o)
			o = json_object();
		json_object_set_new(e, "position", jvec(to_head(c, node_pos(c, c->bone_node[b]))));
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

static json_t *build_instance(cv *c)
{
	json_t *inst = json_object(), *sb = json_object(), *strands = json_array(),
	       *cols = json_array();
	char name[VRM_NAME_MAX];
	int heads = 0, worlds = 0;
	if (copy_name(name, meta_name(c)))
		vrm_note(&c->d, "the avatar's name is shortened to %d bytes", VRM_NAME_MAX - 1);
	for (int i = 0; i < c->s.nchains; i++) {
		if (c->st[i].out < 0)
			continue;
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
	json_object_set_new(sb, "center", json_string(heads && !worlds ? "head" : "world"));
	json_object_set_new(inst, "name", json_string(name));
	json_object_set_new(inst, "solver", json_string("springbone"));
	json_object_set_new(inst, "prewarm_s", json_real(DEFAULT_PREWARM_S));
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

static json_t *build_report(cv *c, size_t bytes)
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
		int at, owner = co->node >= 0 ? vrm_humanoid_owner(&c->g, c->bone_of_node,
		                                                   co->node, &at)
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

/* ---- the import ---- */

void vrm_report_free(vrm_report *report)
{
	if (!report)
		return;
	json_decref(report->json);
	report->json = NULL;
	report->warning_count = 0;
}

static void cv_free(cv *c)
{
	free(c->st);
	free(c->use);
	free(c->moving);
	free(c->bone_of_node);
	vrm_springs_free(&c->s);
	vrm_graph_free(&c->g);
	vrm_diag_free(&c->d);
	json_decref(c->doc);
}

json_t *vrm_import(const uint8_t *data, size_t len, vrm_report *report, char *err, size_t errlen)
{
	cv c;
	vrm_glb glb;
	json_t *inst;
	int kept;
	memset(&c, 0, sizeof c);
	report->json = NULL;
	report->warning_count = 0;
	if (vrm_diag_init(&c.d)) {
		vrm_fail(err, errlen, "out of memory");
		goto fail;
	}
	if (vrm_glb_parse(data, len, &glb, err, errlen) ||
	    !(c.doc = vrm_glb_json(&glb, err, errlen)) ||
	    vrm_graph_load(c.doc, glb.bin ? glb.bin_len : 0, &c.g, err, errlen) ||
	    vrm_springs_read(c.doc, &c.g, &c.s, &c.d, err, errlen))
		goto fail;
	if (glb.trailing)
		vrm_note(&c.d, "%zu bytes after the GLB's declared length are ignored",
		         glb.trailing);
	c.st = calloc((size_t)c.s.nchains + 1, sizeof *c.st);
	c.use = calloc((size_t)c.s.ncolliders + 1, sizeof *c.use);
	c.moving = calloc((size_t)c.g.count + 1, 1);
	c.bone_of_node = calloc((size_t)c.g.count + 1, 1);
	if (!c.st || !c.use || !c.moving || !c.bone_of_node) {
		vrm_fail(err, errlen, "out of memory");
		goto fail;
	}
	vrm_humanoid_read(c.doc, c.s.v1, c.s.head, c.g.count, c.bone_of_node);
	set_frame(&c);
	cut_shared(&c);
	for (int i = 0; i < c.s.nchains; i++)
		measure(&c, i);
	for (int i = 0; i < c.s.nchains; i++)
		if (!c.st[i].drop)
			check_branching(&c, i);
	kept = choose_strands(&c);
	if (kept == 0) {
		if (c.s.nchains == 0)
			vrm_fail(err, errlen, "no spring-bone chains: the file defines none");
		else
			vrm_fail(err, errlen, "no spring-bone chain could be imported (%s: %s)",
			         c.s.chains[0].source, c.st[0].drop);
		goto fail;
	}
	choose_colliders(&c);
	inst = build_instance(&c);
	/* Whatever the file says (a bone 20 m from the head, say), never emit a definition the
	 * daemon would refuse: found by tests/fuzz/fuzz_vrm.c. */
	pt_instance_def *def = malloc(sizeof *def);
	pt_error e = {0};
	int have = def && pt_instance_def_init(def);
	if (!have || pt_schema_parse(inst, def, NULL, &e) != 0 ||
	    !(e = pt_instance_validate(def)).ok) {
		vrm_fail(err, errlen, "the avatar does not fit an instance definition (%s)",
		         have ? e.message : "out of memory");
		pt_instance_def_fini(def);
		free(def);
		json_decref(inst);
		goto fail;
	}
	pt_instance_def_fini(def);
	free(def);
	report->json = build_report(&c, len);
	vrm_diag_flush(&c.d);
	report->warning_count = (int)json_array_size(c.d.warnings);
	json_object_set(report->json, "notes", c.d.notes);
	json_object_set(report->json, "warnings", c.d.warnings);
	cv_free(&c);
	return inst;
fail:
	cv_free(&c);
	return NULL;
}

/* ---- the command ---- */

#define CMD "ponytail import-vrm"

/* Larger than any avatar (they are tens of MB); the GLB header cannot describe more than
 * 4 GiB anyway. */
#define MAX_FILE_BYTES ((size_t)1 << 30)

static void usage(FILE *to)
{
	fputs("usage: " CMD " [options] AVATAR.vrm\n"
	      "\n"
	      "Reads a VRM 1.0 or 0.x avatar (glTF binary, .vrm/.glb; '-' reads stdin) and prints\n"
	      "a \"springbone\" instance definition of its spring-bone chains and colliders,\n"
	      "in head-local coordinates, ready for `ponytail sim` or POST /v1/instances.\n"
	      "What cannot be represented exactly is listed on stderr as warnings.\n"
	      "\n"
	      "options:\n"
	      "  --report         print the import report (JSON) instead of the instance\n"
	      "  --report=FILE    also write the report to FILE\n"
	      "  --name NAME      the instance's name (default: the avatar's own)\n"
	      "  --prewarm S      prewarm_s, seconds in [0, 10] (default 1)\n"
	      "  -h, --help       this text\n"
	      "\n"
	      "exit status: 0 imported, 1 unreadable or malformed file, 2 bad usage\n",
	      to);
}

static int
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    bad_usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, CMD ": ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry '" CMD " --help'.\n");
	va_end(ap);
	return 2;
}

/* Reads all of path ('-' = stdin) into a new buffer. Returns 0, or -1 with a message. */
static int read_file(const char *path, uint8_t **out, size_t *len, char *err, size_t errlen)
{
	int is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	size_t cap = 0, n = 0;
	uint8_t *buf = NULL;
	int rc = 0;
	*out = NULL;
	*len = 0;
	if (!f) {
		snprintf(err, errlen, "cannot open: %s", strerror(errno));
		return -1;
	}
	for (;;) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 1 << 16;
			uint8_t *p;
			if (cap >= MAX_FILE_BYTES) {
				snprintf(err, errlen, "larger than %zu bytes: not an avatar",
				         MAX_FILE_BYTES);
				rc = -1;
				break;
			}
			p = realloc(buf, ncap);
			if (!p) {
				snprintf(err, errlen, "out of memory");
				rc = -1;
				break;
			}
			buf = p;
			cap = ncap;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f)) {
				snprintf(err, errlen, "read error: %s", strerror(errno));
				rc = -1;
			}
			break;
		}
	}
	if (!is_stdin)
		fclose(f);
	if (rc) {
		free(buf);
		return -1;
	}
	*out = buf;
	*len = n;
	return 0;
}

static int write_json(json_t *j, FILE *to)
{
	/* 9 significant digits: a float's worth, without double-rounding noise. */
	return json_dumpf(j, to, JSON_INDENT(2) | JSON_REAL_PRECISION(9)) || fputc('\n', to) == EOF;
}

int cmd_import_vrm(int argc, char **argv)
{
	const char *path = NULL, *name = NULL, *report_file = NULL;
	int report_stdout = 0, options_done = 0;
	double prewarm = DEFAULT_PREWARM_S;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (options_done || a[0] != '-' || strcmp(a, "-") == 0) {
			if (path)
				return bad_usage("one avatar file at a time (got '%s' too)", a);
			path = a;
		} else if (strcmp(a, "--") == 0) {
			options_done = 1;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--report") == 0) {
			report_stdout = 1;
		} else if (strncmp(a, "--report=", 9) == 0 && a[9]) {
			report_file = a + 9;
		} else if (strcmp(a, "--name") == 0 || strncmp(a, "--name=", 7) == 0) {
			name = a[6] == '=' ? a + 7 : i + 1 < argc ? argv[++i] : NULL;
			if (!name)
				return bad_usage("%s needs a value", a);
			if (strlen(name) >= VRM_NAME_MAX)
				return bad_usage("--name '%s' is longer than 63 bytes", name);
			json_t *probe = json_string(name); /* NULL unless valid UTF-8 */
			if (!probe)
				return bad_usage("--name '%s' is not valid UTF-8", name);
			json_decref(probe);
		} else if (strcmp(a, "--prewarm") == 0 || strncmp(a, "--prewarm=", 10) == 0) {
			const char *v = a[9] == '=' ? a + 10 : i + 1 < argc ? argv[++i] : NULL;
			char *end;
			if (!v)
				return bad_usage("%s needs a value", a);
			errno = 0;
			prewarm = strtod(v, &end);
			if (end == v || *end || errno || !(prewarm >= 0 && prewarm <= 10))
				return bad_usage("--prewarm '%s': expected seconds in [0, 10]", v);
		} else {
			return bad_usage("unknown option '%s'", a);
		}
	}
	if (!path)
		return bad_usage("missing the avatar file (AVATAR.vrm)");

	char err[512];
	uint8_t *data;
	size_t len;
	if (read_file(path, &data, &len, err, sizeof err)) {
		fprintf(stderr, CMD ": %s: %s\n", path, err);
		return 1;
	}
	vrm_report report = {0};
	json_t *inst = vrm_import(data, len, &report, err, sizeof err);
	free(data);
	if (!inst) {
		fprintf(stderr, CMD ": %s: %s\n", path, err);
		return 1;
	}
	if (name)
		json_object_set_new(inst, "name", json_string(name)); /* UTF-8 checked above */
	json_object_set_new(inst, "prewarm_s", json_real(prewarm));

	const json_t *warnings = json_object_get(report.json, "warnings");
	for (size_t i = 0; i < json_array_size(warnings); i++)
		fprintf(stderr, CMD ": warning: %s\n",
		        json_string_value(json_array_get(warnings, i)));

	int rc = 0;
	if (report_file) {
		FILE *f = fopen(report_file, "w");
		if (!f || write_json(report.json, f)) {
			fprintf(stderr, CMD ": cannot write the report to %s: %s\n", report_file,
			        strerror(errno));
			rc = 1;
		}
		if (f && fclose(f) && !rc) {
			fprintf(stderr, CMD ": cannot write the report to %s: %s\n", report_file,
			        strerror(errno));
			rc = 1;
		}
	}
	if (!rc && write_json(report_stdout ? report.json : inst, stdout)) {
		fprintf(stderr, CMD ": cannot write to stdout: %s\n", strerror(errno));
		rc = 1;
	}
	fflush(stdout);
	json_decref(inst);
	vrm_report_free(&report);
	return rc;
}
