/* The springbone solver: VRMC_springBone 1.0 joints ("vrm") and the spring-bone lesson's
 * variant ("pull") on the world's point pool.
 *
 * The pool holds the tails: x = currentTail, px = prevTail, point 0 of a strand the root.
 * Teleport carry, reset, prewarm, hashing and read-back therefore need nothing from this
 * file beyond rest(). The chain step itself, and the derivation of its per-substep
 * terms, live in springbone_chain.c; the wide path that steps sixteen chains of many
 * instances at once, bit-identical to it, in springbone_lanes.{h,inc} (the world adds
 * instances to its batches through pt_sb_batch_add below, and calls sb_substep only for
 * instances the wide path does not take; branches step there after their parents, level
 * by level, in batches of their own: springbone_lanes.h).
 *
 * center = head (VRMC_springBone's `center` set to the head): the spec stores tails in
 * the center's space and evaluates inertia there ("The inertia is evaluated in the center
 * space"), i.e. both stored tails are carried rigidly with the head to its current pose
 * before the step. The pool holds world positions, so the head poses at which x and px
 * were written (pose_x, pose_px) are kept here: cur = H_now H_x^-1 x, prev = H_now
 * H_px^-1 px. Gravity and stiffness stay in world space, as the spec says.
 */
#include <stdlib.h>
#include <string.h>

#include "springbone.h"
#include "springbone_lanes.h"
#include "world_internal.h"

typedef pt_sb_data sb_data; /* springbone_lanes.h */

/* Head-local rest position of point k of strand sd. */
static pt_vec3 rest_point(const pt_strand_def *sd, int k)
{
	pt_vec3 p = sd->anchor;
	for (int j = 0; j < k; j++) {
		float len;
		pt_vec3 u;
		pt_strand_rest_segment(sd, j, &len, &u);
		p = sd->has_rest ? sd->joints[j].rest : v3_add(p, v3_scale(u, len));
	}
	return p;
}

/* Copies the joint parameters of def into d (topology unchanged since init). */
static void load(sb_data *d, const pt_inst *in, const pt_instance_def *def)
{
	d->form = def->springbone.form;
	d->center_head = def->springbone.center_head;
	d->h = 0.0f;
	d->branches = 0;
	d->levels = 1;
	int nb = 0; /* branches, each given a slot of d->broot while there are slots */
	int was = d->threevrm;
	d->threevrm = def->springbone.length == PT_SPRINGBONE_LENGTH_THREEVRM;
	d->tails_stale |= d->threevrm && !was; /* a patch switched it on */
	int k = 0;
	for (int s = 0; s < in->strand_count; s++) {
		const pt_strand_rt *st = &in->strands[s];
		const pt_strand_def *sd = &def->strands[s];
		pt_sb_chain *c = &d->chain[s];
		int has_limit = 0, has_hinge = 0;
		for (int j = 0; j < st->points - 1; j++, k++) {
			const pt_joint_def *jd = &sd->joints[j];
			pt_sb_param *p = &d->par[k];
			p->stiffness = jd->stiffness;
			p->drag = jd->drag_force;
			/* vrm gravity is this push; pull's is scaled in sb_substep */
			p->gravity_power = jd->gravity_power * sd->gravity_scale;
			p->gravity_dir = v3_norm_or(jd->gravity_dir, pt_v3(0.0f, -1.0f, 0.0f));
			p->hit_radius = jd->hit_radius;
			d->lim[k] = pt_sb_limit_from_def(jd);
			has_limit |= d->lim[k].type != PT_LIMIT_NONE;
			has_hinge |= d->lim[k].type == PT_LIMIT_HINGE;
			pt_strand_rest_segment(sd, j, &d->len[k], &d->dir[k]);
		}
		d->gravity_scale[s] = sd->gravity_scale;
		int first = k - (st->points - 1);
		c->form = d->form;
		c->joints = st->points - 1;
		c->length = st->length;
		c->anchor = st->anchor;
		c->direction = st->direction;
		c->j = d->run + first;
		c->lim = has_limit ? d->lim + first : NULL;
		c->len = sd->has_rest ? d->len + first : NULL;
		c->dir = sd->has_rest ? d->dir + first : NULL;
		c->hinge = has_hinge;
		c->cols = pt_inst_collider_order(in, s);
		c->ncols = st->ncols;
		c->cols_id = s;
		for (int t = 0; t < s && c->cols_id == s; t++)
			if (d->chain[t].ncols == c->ncols &&
			    memcmp(d->chain[t].cols, c->cols, (size_t)c->ncols) == 0)
				c->cols_id = t;
		c->free_length = 0;
		c->frame = in->bones ? in->bones->of_strand[s] + 1 : 0;
		c->parent = sd->parent_strand + 1;
		c->parent_point = sd->parent_point;
		c->parent_rest = sd->parent_strand >= 0
		                     ? rest_point(&def->strands[sd->parent_strand], sd->parent_point)
		                     : pt_v3(0.0f, 0.0f, 0.0f);
		d->branches |= c->parent > 0;
		c->children = 0;
		c->level = c->parent > 0 ? d->chain[c->parent - 1].level + 1 : 0;
		if (c->parent > 0)
			d->chain[c->parent - 1].children++;
		d->levels = c->level + 1 > d->levels ? c->level + 1 : d->levels;
		d->bslot[s] = c->parent > 0 && nb < d->nbroot ? nb : -1;
		nb += c->parent > 0;
		c->tail = d->threevrm ? d->tail + first : NULL;
		c->ptail = d->threevrm ? d->ptail + first : NULL;
	}
	for (int s = 0; s < in->strand_count; s++) { /* insertion: by level, then joints */
		const pt_sb_chain *c = &d->chain[s];
		int i = s;
		for (; i > 0; i--) {
			const pt_sb_chain *p = &d->chain[d->by_level[i - 1]];
			if (p->level < c->level || (p->level == c->level && p->joints <= c->joints))
				break;
			d->by_level[i] = d->by_level[i - 1];
		}
		d->by_level[i] = s;
	}
	d->nruns = 0;
	for (int i = 0; i < in->strand_count; i++) {
		const pt_sb_chain *c = &d->chain[d->by_level[i]];
		const pt_sb_chain *p = i ? &d->chain[d->by_level[i - 1]] : NULL;
		if (!p || p->level != c->level || p->joints != c->joints)
			d->run_at[d->nruns++] = i;
	}
	d->run_at[d->nruns] = in->strand_count;
	/* The wide path (springbone_lanes.h): colliders it evaluates, branches it has room
	 * for (an update that added some steps per chain); three-vrm's tails step per chain */
	d->lanes_ok = !d->threevrm && nb <= d->nbroot;
	/* room for the colliders' table (an update may bring more: none stays NULL) */
	if (in->collider_count > d->cw_cap) {
		size_t n = (size_t)in->collider_count * PT_MAX_SUBSTEPS * PT_SB_CREC;
		float *cw = realloc(d->cw, n * sizeof *cw);
		if (cw) {
			memset(cw, 0, n * sizeof *cw);
			d->cw = cw, d->cw_cap = in->collider_count;
		}
	}
	if (in->collider_count > d->cw_cap)
		d->lanes_ok = 0;
	for (int c = 0; c < in->collider_count; c++) {
		pt_shape sh = in->colliders[c].shape;
		if (sh != PT_SHAPE_SPHERE && sh != PT_SHAPE_CAPSULE && sh != PT_SHAPE_PLANE)
			d->lanes_ok = 0;
	}
}

size_t pt_sb_data_bytes(const pt_inst *in)
{
	const sb_data *d = in->solver_data;
	if (!d)
		return 0;
	size_t n = (size_t)d->njoints, ns = (size_t)in->strand_count;
	return sizeof *d +
	       n * (sizeof *d->par + sizeof *d->run + sizeof *d->lim + sizeof *d->len +
	            sizeof *d->dir + PT_SBF_COUNT * sizeof *d->block) +
	       ns * (sizeof *d->chain + sizeof *d->gravity_scale + sizeof *d->uniform +
	             sizeof *d->bslot + PT_SB_LREC * sizeof *d->lrec + sizeof *d->lflags +
	             sizeof *d->by_level + sizeof *d->run_at) + sizeof *d->run_at +
	       (size_t)d->nbroot * PT_MAX_SUBSTEPS * sizeof *d->broot +
	       (size_t)d->cw_cap * PT_MAX_SUBSTEPS * PT_SB_CREC * sizeof *d->cw;
}

static void sb_free(sb_data *d)
{
	if (!d)
		return;
	free(d->par), free(d->run), free(d->lim), free(d->len), free(d->dir);
	free(d->block), free(d->chain), free(d->gravity_scale), free(d->uniform);
	free(d->tail), free(d->bslot), free(d->broot), free(d->cw), free(d->lrec);
	free(d->lflags), free(d->by_level), free(d->run_at), free(d);
}

static int sb_init(pt_inst *in, const pt_instance_def *def)
{
	int n = 0;
	for (int s = 0; s < in->strand_count; s++)
		n += in->strands[s].points - 1;
	sb_data *d = calloc(1, sizeof *d);
	if (!d)
		return 0;
	d->njoints = n;
	d->par = malloc((size_t)n * sizeof *d->par);
	d->run = malloc((size_t)n * sizeof *d->run);
	d->lim = malloc((size_t)n * sizeof *d->lim);
	d->len = malloc((size_t)n * sizeof *d->len);
	d->dir = malloc((size_t)n * sizeof *d->dir);
	d->block = malloc((size_t)n * PT_SBF_COUNT * sizeof *d->block);
	size_t ns = (size_t)in->strand_count;
	d->chain = calloc(ns, sizeof *d->chain);
	d->gravity_scale = malloc(ns * sizeof *d->gravity_scale);
	d->uniform = calloc(ns, sizeof *d->uniform); /* set by convert */
	d->tail = malloc((size_t)n * 2 * sizeof *d->tail);
	for (int s = 0; s < def->strand_count; s++)
		d->nbroot += def->strands[s].parent_strand >= 0;
	d->bslot = malloc(ns * sizeof *d->bslot);
	d->by_level = malloc(ns * sizeof *d->by_level);
	d->run_at = malloc((ns + 1) * sizeof *d->run_at);
	d->lrec = calloc(ns * PT_SB_LREC, sizeof *d->lrec);
	d->lflags = malloc(ns * sizeof *d->lflags);
	d->broot = d->nbroot ? malloc((size_t)d->nbroot * PT_MAX_SUBSTEPS * sizeof *d->broot) : NULL;
	if (!d->par || !d->run || !d->lim || !d->len || !d->dir || !d->block || !d->chain ||
	    !d->gravity_scale || !d->uniform || !d->tail || !d->bslot || (d->nbroot && !d->broot) || !d->lrec || !d->lflags ||
	    !d->by_level || !d->run_at) {
		sb_free(d);
		return 0;
	}
	d->ptail = d->tail + n;
	load(d, in, def);
	d->teleports = in->teleports;
	in->solver_data = d;
	return 1;
}

static void sb_update(pt_inst *in, const pt_instance_def *def)
{
	load(in->solver_data, in, def);
}

static void sb_destroy(pt_inst *in)
{
	sb_free(in->solver_data);
	in->solver_data = NULL;
}

/* three-vrm's tails where the points are (at rest; after a teleport carried them). */
static void tails_from_points(sb_data *d, const pt_world *w, const pt_inst *in)
{
	d->tails_stale = 0;
	for (int s = 0, k = 0; s < in->strand_count; s++)
		for (int j = 1; j < in->strands[s].points; j++, k++) {
			int i = in->offset + in->strands[s].first + j;
			d->tail[k] = pt_v3(w->x[i], w->y[i], w->z[i]);
			d->ptail[k] = pt_v3(w->px[i], w->py[i], w->pz[i]);
		}
}

static void sb_rest(pt_world *w, pt_inst *in, const pt_pose *head)
{
	sb_data *d = in->solver_data;
	pt_inst_place_rest(w, in, head);
	d->pose_x = d->pose_px = *head;
	d->teleports = in->teleports;
	tails_from_points(d, w, in);
}


/* Chain s's record and flags for the wide path (springbone_lanes.h, PT_SB_LREC), from
 * its block b of n joints. */
static void lane_record(sb_data *d, int s, const float *b, int n)
{
	const pt_sb_chain *c = &d->chain[s];
	float *r = d->lrec + PT_SB_LREC * s;
	for (int f = PT_SBF_KEPT; f <= PT_SBF_LEN; f++)
		r[f] = b[f * n];
	r[PT_SB_LHRMAX] = 0.0f;
	for (int j = 0; j < n; j++)
		r[PT_SB_LHRMAX] = fmaxf(r[PT_SB_LHRMAX], b[PT_SBF_HITR * n + j]);
	pt_vec3 u = c->dir ? c->dir[0] : c->direction;
	float *a = r + PT_SB_LANCHOR;
	a[0] = c->anchor.x, a[1] = c->anchor.y, a[2] = c->anchor.z;
	a[3] = u.x, a[4] = u.y, a[5] = u.z;
	int pull = c->form == PT_SPRINGBONE_PULL, rest = c->dir != NULL, turn = rest || c->hinge;
	r[PT_SB_LPULL] = pull ? -1.0f : 0.0f;
	r[PT_SB_LCENTER] = d->center_head ? -1.0f : 0.0f;
	r[PT_SB_LREST] = rest ? -1.0f : 0.0f;
	r[PT_SB_LTURN] = turn ? -1.0f : 0.0f;
	d->lflags[s] = (pull ? PT_SB_F_PULL : PT_SB_F_VRM) | (d->center_head ? PT_SB_F_CENTER : 0) |
	               (rest ? PT_SB_F_REST : 0) | (c->lim ? PT_SB_F_LIM : 0) |
	               (turn ? PT_SB_F_TURN : 0) | (c->children > 0 ? PT_SB_F_KIDS : 0) |
	               (d->uniform[s] ? PT_SB_F_UNIFORM : 0);
}

/* The per-substep terms for substeps of h seconds, and the wide path's copy of them
 * (with the rest lengths and directions) field after field (springbone_lanes.h). */
static void convert(sb_data *d, const pt_inst *in, float h)
{
	/* with a room wind, every step (its push changes with the points and the gusts) */
	const pt_vec3 *wind = in->room_wind ? in->room_wind->v : NULL;
	if (d->h == h && !wind)
		return;
	for (int s = 0, k = 0; s < in->strand_count; k += in->strands[s].points - 1, s++) {
		const pt_sb_chain *c = &d->chain[s];
		int n = c->joints;
		pt_sb_convert(d->form, d->par + k, n, h, v3_scale(in->gravity, d->gravity_scale[s]),
		              d->run + k);
		/* The room wind through the joint's air drag (ponytail/wind.h): the tail's
		 * velocity relaxes toward the wind's W instead of toward 0, per 1/60 s frame
		 * v' = (1 - d) v + d W; over a step of h, W h (1 - kept) more push, the terminal
		 * push's share as for the vrm terms (springbone_chain.c). W at the tail, joint
		 * j's being point j + 1 of the chain. */
		for (int j = 0; wind && j < n; j++) {
			pt_sb_joint *r = &d->run[k + j];
			pt_vec3 v = wind[in->strands[s].first + j + 1];
			r->push = v3_add(r->push, v3_scale(v, h * (1.0f - r->kept)));
		}
		float *b = d->block + PT_SBF_COUNT * k;
		for (int j = 0; j < n; j++) {
			const pt_sb_joint *r = &d->run[k + j];
			pt_vec3 u = c->dir ? c->dir[j] : c->direction;
			b[PT_SBF_KEPT * n + j] = r->kept, b[PT_SBF_STIFF * n + j] = r->stiff;
			b[PT_SBF_PUSHX * n + j] = r->push.x, b[PT_SBF_PUSHY * n + j] = r->push.y;
			b[PT_SBF_PUSHZ * n + j] = r->push.z, b[PT_SBF_HITR * n + j] = r->hit_radius;
			b[PT_SBF_LEN * n + j] = c->len ? c->len[j] : c->length;
			b[PT_SBF_DIRX * n + j] = u.x, b[PT_SBF_DIRY * n + j] = u.y;
			b[PT_SBF_DIRZ * n + j] = u.z;
			const pt_sb_limit *l = &d->lim[k + j];
			b[PT_SBF_LTYPE * n + j] = (float)l->type;
			b[PT_SBF_COS * n + j] = l->cos_a, b[PT_SBF_SIN * n + j] = l->sin_a;
			b[PT_SBF_NSIN * n + j] = -l->sin_a;
			b[PT_SBF_LAXX * n + j] = l->axis.x, b[PT_SBF_LAXY * n + j] = l->axis.y;
			b[PT_SBF_LAXZ * n + j] = l->axis.z;
		}
		d->uniform[s] = 1;
		for (int f = PT_SBF_KEPT; f <= PT_SBF_LEN; f++)
			for (int j = 1; j < n; j++)
				if (memcmp(&b[f * n + j], &b[f * n], sizeof *b) != 0)
					d->uniform[s] = 0;
		lane_record(d, s, b, n);
	}
	d->h = wind ? -1.0f : h;
}

void pt_sb_terms_stale(pt_inst *in)
{
	sb_data *d = in->solver_data;
	if (d)
		d->h = -1.0f;
}

/* The rigid motion taking the head from pose `from` to `to` (rotation rt = R_to) as
 * p -> m p + t. */
static void carry(const pt_pose *from, const pt_pose *to, const pt_mat3 *rt, pt_mat3 *m, pt_vec3 *t)
{
	pt_mat3 rf = m3_from_quat(from->q);
	/* unrolled: once per instance and step on the wide path, where a loop's overhead
	 * showed in callgrind */
	_Pragma("GCC unroll 3") for (int r = 0; r < 3; r++)
		_Pragma("GCC unroll 3") for (int c = 0; c < 3; c++)
			m->m[3 * r + c] = rt->m[3 * r] * rf.m[3 * c] +
			                  rt->m[3 * r + 1] * rf.m[3 * c + 1] +
			                  rt->m[3 * r + 2] * rf.m[3 * c + 2];
	*t = v3_sub(to->p, m3_mul(m, from->p));
}

static void sb_substep(pt_world *w, pt_inst *in, int sub, const pt_collider_rt *cols, float h,
                       double t)
{
	(void)t;
	sb_data *d = in->solver_data;
	const pt_pose *head = &in->sub_pose[sub];
	const pt_mat3 *rot = &in->sub_rot[sub];
	convert(d, in, h);
	/* A teleport in "keep" mode carried x and px rigidly to the new head pose: the poses
	 * they were written at are now that pose. */
	if (d->teleports != in->teleports) {
		d->pose_x = d->pose_px = *head;
		d->teleports = in->teleports;
		d->tails_stale = 1;
	}
	if (d->tails_stale)
		tails_from_points(d, w, in);
	pt_sb_frame f;
	f.head = head;
	f.rot = rot;
	f.cols = cols;
	f.ncols = in->collider_count;
	f.center = d->center_head;
	if (f.center) {
		carry(&d->pose_x, head, rot, &f.mc, &f.tc);
		carry(&d->pose_px, head, rot, &f.mp, &f.tp);
	}
	/* the bones' frames of this substep (pt_bones_substeps filled them) */
	pt_pose frames[PT_BONE_COUNT];
	pt_mat3 frame_rots[PT_BONE_COUNT];
	for (int k = 0; in->bones && k < in->bones->count; k++)
		frames[k] = in->bones->b[k].frame[sub], frame_rots[k] = in->bones->b[k].frame_rot[sub];
	f.frames = frames;
	f.frame_rots = frame_rots;
	int first[PT_MAX_STRANDS];
	for (int s = 0; s < in->strand_count; s++)
		first[s] = in->strands[s].first;
	int o = in->offset;
	pt_sb_step_chains(d->chain, in->strand_count, &f, first, w->x + o, w->y + o, w->z + o,
	                  w->px + o, w->py + o, w->pz + o);
	d->pose_px = d->pose_x;
	d->pose_x = *head;
}

/* ---- the wide path (springbone_lanes.h) ------------------------------------------- */

/* Fills lanes past b->count with lane 0 and runs the batch. */
static void run_batch(pt_world *w, pt_sb_lanes *b)
{
	for (int l = b->count; l < PT_SB_LANES; l++) {
		b->base[l] = b->base[0], b->inst[l] = b->inst[0];
		b->data[l] = b->data[0], b->strand[l] = b->strand[0];
	}
	if (w->kernel == PT_KERNEL_AVX2)
		pt_sb_lanes_avx2(w, b);
	else
		pt_sb_lanes_scalar(w, b);
	b->count = 0;
}

/* The pending batch for (joints, steps), making room if all slots are taken. */
static pt_sb_lanes *batch_for(pt_world *w, pt_sb_batcher *bt, int joints, int steps)
{
	int hint = bt->of_joints[joints];
	if (hint >= 0 && hint < bt->used && bt->batch[hint].joints == joints &&
	    bt->batch[hint].steps == steps)
		return &bt->batch[hint];
	int fullest = 0;
	for (int i = 0; i < bt->used; i++) {
		pt_sb_lanes *b = &bt->batch[i];
		if (b->joints == joints && b->steps == steps) {
			bt->of_joints[joints] = (signed char)i;
			return b;
		}
		if (b->count > bt->batch[fullest].count)
			fullest = i;
	}
	pt_sb_lanes *b;
	if (bt->used < PT_SB_BATCH_SLOTS) {
		b = &bt->batch[bt->used++];
	} else {
		b = &bt->batch[fullest];
		if (b->count)
			run_batch(w, b);
	}
	b->count = 0;
	b->joints = joints;
	b->steps = steps;
	bt->of_joints[joints] = (signed char)(b - bt->batch);
	return b;
}

void pt_sb_batch_init(pt_sb_batcher *bt)
{
	bt->used = 0;
	bt->nbranchy = 0;
	memset(bt->of_joints, -1, sizeof bt->of_joints);
}

/* Collider c of `in` at step s, as the kernels read it (springbone_lanes.h): what
 * pt_collider_world_sub and pt_collider_to_world give, operation for operation, written
 * straight into the record for the three shapes the wide path takes (load() sends the
 * others per chain): the general pair filled a pt_collider_rt and switched on its shape
 * for every collider of every instance at every step, which showed in callgrind. */
static void collider_record(const pt_inst *in, int c, int s, float *r)
{
	static const pt_pose origin = {{0, 0, 0}, {0, 0, 0, 1}};
	static const pt_mat3 ident = {{1, 0, 0, 0, 1, 0, 0, 0, 1}};
	const pt_collider_def *k = &in->colliders[c];
	const pt_pose *f = &in->sub_pose[s]; /* the frame: the head's, or its bone's */
	const pt_mat3 *R = &in->sub_rot[s];
	if (k->attach == PT_ATTACH_WORLD) {
		f = &origin, R = &ident;
	} else if (k->attach == PT_ATTACH_BONE && in->bones && in->bones->of_collider[c] >= 0) {
		const pt_bone_rt *br = &in->bones->b[in->bones->of_collider[c]];
		f = &br->sub[s], R = &br->sub_rot[s];
	}
	float rb = k->radius_b < 0.0f ? k->radius : k->radius_b;
	pt_vec3 p, d = pt_v3(0.0f, 0.0f, 0.0f), bc;
	float il = 0.0f, br, kind;
	if (k->shape == PT_SHAPE_CAPSULE) {
		p = v3_add(f->p, m3_mul(R, k->a));
		d = m3_mul(R, v3_sub(k->b, k->a));
		float l2 = v3_len2(d);
		il = l2 > 1e-12f ? 1.0f / l2 : 0.0f;
		/* the bounding sphere (springbone_lanes_in.inc, sb_slot_fill), about its middle;
		 * the larger radius by a comparison: fmaxf is a call into libm here, and the
		 * registers saved around it cost more than the rest of the capsule (callgrind) */
		bc = v3_add(p, v3_scale(d, 0.5f));
		br = 0.5f * v3_len(d) + (k->radius > rb ? k->radius : rb);
		kind = (float)PT_SB_KIND_CAPSULE;
	} else {
		p = v3_add(f->p, m3_mul(R, k->center));
		if (k->shape == PT_SHAPE_PLANE)
			d = m3_mul(R, v3_norm_or(k->normal, pt_v3(0, 1, 0)));
		rb = 0.0f;
		bc = p, br = k->radius;
		kind = (float)(k->shape == PT_SHAPE_SPHERE ? PT_SB_KIND_SPHERE : PT_SB_KIND_PLANE);
	}
	r[0] = p.x, r[1] = p.y, r[2] = p.z;
	r[3] = d.x, r[4] = d.y, r[5] = d.z;
	r[6] = k->radius, r[PT_SB_CRB] = rb, r[PT_SB_CIL] = il;
	r[PT_SB_CBC] = bc.x, r[PT_SB_CBC + 1] = bc.y, r[PT_SB_CBC + 2] = bc.z, r[PT_SB_CBR] = br;
	r[PT_SB_CKIND] = kind;
}

/* Adds the chains of level L of `in` (its n steps converted) to their batches, a run of
 * one joint count at a time (pt_sb_data.run_at: no per-chain search for where a run
 * ends, which showed in callgrind at 40 chains an instance). */
static void add_level(pt_world *w, pt_sb_batcher *bt, pt_inst *in, int L)
{
	sb_data *d = in->solver_data;
	for (int r = 0; r < d->nruns; r++) {
		const pt_sb_chain *c = &d->chain[d->by_level[d->run_at[r]]];
		if (c->level != L)
			continue;
		pt_sb_lanes *b = batch_for(w, bt, c->joints, in->sub_n);
		int l = b->count; /* in a local: the stores below could alias b->count */
		for (int i = d->run_at[r], end = d->run_at[r + 1]; i < end; i++) {
			int s = d->by_level[i];
			b->base[l] = in->offset + in->strands[s].first;
			b->inst[l] = in;
			b->data[l] = d;
			b->strand[l] = s;
			if (++l == PT_SB_LANES) {
				b->count = l;
				run_batch(w, b);
				l = 0;
			}
		}
		b->count = l;
	}
}

int pt_sb_batch_add(pt_world *w, pt_sb_batcher *bt, pt_inst *in)
{
	sb_data *d = in->solver_data;
	int n = in->sub_n;
	if (!d->lanes_ok || d->lanes_off || n < 1 || n > PT_MAX_SUBSTEPS)
		return 0;
	/* What sb_substep does at each step before the chains move, for all steps at once:
	 * the terms, the teleport, and the carries of center = head. */
	convert(d, in, in->sub_h);
	if (d->teleports != in->teleports) {
		d->pose_x = d->pose_px = in->sub_pose[0];
		d->teleports = in->teleports;
	}
	for (int s = 0; s < n; s++) {
		const pt_pose *head = &in->sub_pose[s];
		for (int c = 0; c < in->collider_count; c++)
			collider_record(in, c, s, d->cw + PT_SB_CREC * (s * in->collider_count + c));
		if (d->center_head) {
			pt_sb_carry *k = &d->carry[s];
			carry(&d->pose_x, head, &in->sub_rot[s], &k->mc, &k->tc);
			carry(&d->pose_px, head, &in->sub_rot[s], &k->mp, &k->tp);
		}
		d->pose_px = d->pose_x;
		d->pose_x = *head;
	}
	add_level(w, bt, in, 0);
	if (d->branches) { /* the branches when the level-0 chains have stepped */
		bt->branchy[bt->nbranchy++] = in;
		if (bt->nbranchy == PT_SB_BRANCHY)
			pt_sb_batch_flush(w, bt);
	}
	return 1;
}

static void run_all(pt_world *w, pt_sb_batcher *bt)
{
	for (int i = 0; i < bt->used; i++)
		if (bt->batch[i].count)
			run_batch(w, &bt->batch[i]);
	bt->used = 0;
}

void pt_sb_batch_flush(pt_world *w, pt_sb_batcher *bt)
{
	run_all(w, bt);
	int levels = 1;
	for (int i = 0; i < bt->nbranchy; i++) {
		const sb_data *d = bt->branchy[i]->solver_data;
		levels = d->levels > levels ? d->levels : levels;
	}
	for (int L = 1; L < levels; L++) {
		for (int i = 0; i < bt->nbranchy; i++)
			add_level(w, bt, bt->branchy[i], L);
		run_all(w, bt);
	}
	bt->nbranchy = 0;
}

void pt_sb_branch_roots(const pt_inst *in, pt_sb_data *d, int s, int step, const float *x,
                        const float *y, const float *z)
{
	const pt_pose *root;
	const pt_mat3 *R;
	pt_sb_root_frame(in, d, s, step, &root, &R);
	for (int t = s + 1, left = d->chain[s].children; left > 0 && t < in->strand_count; t++) {
		const pt_sb_chain *c = &d->chain[t];
		if (c->parent != s + 1)
			continue;
		left--;
		pt_sb_root *o = &d->broot[PT_MAX_SUBSTEPS * d->bslot[t] + step];
		o->pose = pt_sb_branch_frame(&d->chain[s], *root, c->parent_point, c->parent_rest, x,
		                             y, z);
		o->rot = m3_from_quat(o->pose.q); /* as pt_sb_step_chains turns it */
	}
}

const pt_solver_ops pt_springbone_ops = {sb_init, sb_update, sb_destroy, sb_rest, sb_substep};
