/* vrm_import(): measuring every chain in head-local coordinates and choosing what fits an
 * instance (see vrm_import_internal.h; vrm_import() in vrm_import.c calls these in
 * order). */
#include <math.h>

#include "vrm_humanoid.h"
#include "vrm_import_internal.h"

/* VRM 0.x's virtual tail after a leaf joint ("0.x interpretation" of the 1.0 spec). */
#define VIRTUAL_TAIL_M 0.07
/* The schema's range for every segment of a rest shape. */
#define SEG_MIN_M 0.001
#define SEG_MAX_M 1.0
/* Below these an approximation is too small to mention. */
#define WARN_SCALE 1e-4         /* |axis scale - 1| */
#define NOTE_HEAD_TURN_DEG 0.01 /* head bone's rest rotation vs identity */

void vrm_cv_check_scale(cv *c, int node)
{
	vrm_vec3 s = vrm_mat4_axis_scale(&c->g.nodes[node].world);
	if (fabs(s.x - 1) > WARN_SCALE || fabs(s.y - 1) > WARN_SCALE || fabs(s.z - 1) > WARN_SCALE)
		vrm_tally(&c->d, VRM_T_SCALE, "\"%s\" (%g, %g, %g)", node_name(c, node), s.x, s.y,
		          s.z);
}

/* ---- the head frame ---- */

void vrm_cv_set_frame(cv *c)
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
	vrm_cv_check_scale(c, c->s.head);
	if (!c->s.v1) { /* VRM 0.x faces -Z: turn 180° about Y so head-local +Z is the face. */
		static const vrm_rot turn_y = {{-1, 0, 0, 0, 1, 0, 0, 0, -1}};
		r = vrm_rot_mul(&r, &turn_y);
	}
	c->frame = r;
}

/* ---- measuring chains ---- */

/* Cuts chains at a joint an earlier chain already rotates, then marks the joints this one
 * rotates (every point but the last; a 0.x leaf rotates toward its virtual tail). */
void vrm_cv_cut_shared(cv *c)
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

void vrm_cv_measure(cv *c, int ci)
{
	vrm_chain *ch = &c->s.chains[ci];
	strand *st = &c->st[ci];
	vrm_vec3 w[VRM_MAX_POINTS];
	int n = ch->count;
	st->out = -1;
	for (int i = 0; i < n; i++) {
		w[i] = node_pos(c, ch->nodes[i]);
		vrm_cv_check_scale(c, ch->nodes[i]);
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

/* The chain whose rotated joints include `node` (cut_shared left at most one), and the
 * point it is; -1 for none. */
static int rotating_chain(const cv *c, int node, int *point)
{
	for (int i = 0; i < c->s.nchains; i++) {
		const vrm_chain *ch = &c->s.chains[i];
		int rotated = ch->virtual_tail ? ch->count : ch->count - 1;
		for (int k = 0; k < rotated; k++)
			if (ch->nodes[k] == node) {
				*point = k;
				return i;
			}
	}
	return -1;
}

/* A chain whose first joint sits below a joint some chain rotates moves, in VRM, with
 * that joint's bone: it is a branch of that chain (the nearest such joint). Otherwise a
 * chain off the head hangs from its nearest humanoid body bone. */
void vrm_cv_check_branching(cv *c, int ci)
{
	const vrm_chain *ch = &c->s.chains[ci];
	strand *st = &c->st[ci];
	st->bone = st->bone_node = st->parent = st->parent_point = -1;
	int root_parent = c->g.nodes[ch->nodes[0]].parent;
	for (int a = root_parent; a >= 0; a = c->g.nodes[a].parent)
		if (c->moving[a]) {
			int k, p = rotating_chain(c, a, &k);
			if (p >= 0 && p != ci && !c->st[p].drop) {
				st->parent = p, st->parent_point = k;
				break;
			}
		}
	if (st->on_head || root_parent < 0)
		return;
	int at, owner = vrm_humanoid_owner(&c->g, c->bone_of_node, root_parent, &at);
	if (owner >= 0)
		st->bone = owner, st->bone_node = at;
	else if (st->parent < 0)
		vrm_tally(&c->d, VRM_T_NONHEAD_CHAIN, "%s from \"%s\"", ch->source,
		          node_name(c, root_parent));
}

void vrm_cv_order_branches(cv *c)
{
	for (int i = 0; i < c->s.nchains; i++) {
		strand *st = &c->st[i];
		if (st->out >= 0 && st->parent >= 0 && c->st[st->parent].out < 0) {
			vrm_tally(&c->d, VRM_T_BRANCH, "%s below \"%s\"", c->s.chains[i].source,
			          c->s.chains[st->parent].source);
			st->parent = -1;
		}
	}
	for (int i = 0; i < c->s.nchains; i++)
		c->st[i].out = -1 - (c->st[i].out >= 0); /* -2: kept, to number; -1: not */
	/* parents first: a pass numbers every kept chain whose parent has its number */
	for (int next = 0, progress = 1; progress;) {
		progress = 0;
		for (int i = 0; i < c->s.nchains; i++) {
			strand *st = &c->st[i];
			if (st->out == -2 && (st->parent < 0 || c->st[st->parent].out >= 0))
				st->out = next++, progress = 1;
		}
	}
}

/* ---- choosing what fits ---- */

_Static_assert(PT_MAX_JOINTS == 4096, "the drop reason names the limit");

int vrm_cv_choose_strands(cv *c)
{
	int kept = 0, dropped = 0, next = 0, points = 0;
	const char *first = NULL;
	/* Head chains first: the instance follows the head, they are what it is for. */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < c->s.nchains; i++) {
			strand *st = &c->st[i];
			if (st->drop || st->on_head != (pass == 0))
				continue;
			if (kept < c->max_strands && points + st->points <= PT_MAX_JOINTS) {
				kept++; /* numbered below, in file order */
				points += st->points;
			} else {
				st->drop = kept < c->max_strands ? "over the 4096-point limit"
				                                 : c->drop_strands;
				if (!dropped++)
					first = c->s.chains[i].source;
			}
		}
	for (int i = 0; i < c->s.nchains; i++)
		c->st[i].out = c->st[i].drop ? -1 : next++;
	if (dropped)
		vrm_warn(&c->d,
		         "%d chains over the limits of an instance (%d strands, %d points) were "
		         "dropped (first: %s; chains on the head are kept first)",
		         dropped, c->max_strands, PT_MAX_JOINTS, first);
	return kept;
}

void vrm_cv_choose_colliders(cv *c)
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
