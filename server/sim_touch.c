/* Touch and grabs on the tick thread (server/README.md "Touch and grabs"; core's contract:
 * ponytail/touch.h). Core forgets both after every step, so every tick, before the step:
 *
 * - grabs: each grab in the table is checked (both instances exist and share a room, the
 *   grabbed one still grants the grabber grabs, the point exists, the grabber's hand bone
 *   is fresh) and ends at once when one fails; the rest become pt_world_set_grabs of the
 *   grabbed instance, the target moving from the hand bone's position of the last tick
 *   to its newest one;
 * - hands: every instance that sent a hand or finger bone within the hold time is a
 *   toucher; per room, its hands become a table of colliders (its definition's colliders
 *   on those bones, else the defaults below), and every other instance of the room that
 *   grants it touch takes the colliders near it (a bounding sphere of its points),
 *   nearest first, at most PT_MAX_TOUCH, handed to core in table order.
 *
 * Nothing is kept in core between ticks: an instance that stops sending, leaves or is
 * deleted stops colliding and grabbing at the next tick. This file has the hands; the
 * grabs are sim_grab.c's. Sim thread only.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sim_touch_internal.h"

sim_touch_t *simtouch_state(sim_t *s)
{
	if (!s->touch)
		s->touch = calloc(1, sizeof *s->touch);
	return s->touch;
}

struct sim_tx_t *simtouch_tx(sim_inst_t *in)
{
	if (!in->tx)
		in->tx = calloc(1, sizeof *in->tx);
	return in->tx;
}

/* ---- vectors ---- */

static pt_vec3 tc_add(pt_vec3 a, pt_vec3 b) { return pt_v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static pt_vec3 tc_sub(pt_vec3 a, pt_vec3 b) { return pt_v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static float tc_dot(pt_vec3 a, pt_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static float tc_len(pt_vec3 a) { return sqrtf(tc_dot(a, a)); }

static pt_vec3 tc_rotate(pt_quat q, pt_vec3 v)
{
	/* v + 2w(u x v) + 2u x (u x v) */
	pt_vec3 u = pt_v3(q.x, q.y, q.z);
	pt_vec3 t = pt_v3(2 * (u.y * v.z - u.z * v.y), 2 * (u.z * v.x - u.x * v.z),
	                  2 * (u.x * v.y - u.y * v.x));
	return pt_v3(v.x + q.w * t.x + (u.y * t.z - u.z * t.y), v.y + q.w * t.y + (u.z * t.x - u.x * t.z),
	             v.z + q.w * t.z + (u.x * t.y - u.y * t.x));
}

static pt_vec3 tc_xform(pt_pose p, pt_vec3 v) { return tc_add(p.p, tc_rotate(p.q, v)); }

/* Distance from c to the segment a-b. */
static float tc_seg_dist(pt_vec3 c, pt_vec3 a, pt_vec3 b)
{
	pt_vec3 ab = tc_sub(b, a), ac = tc_sub(c, a);
	float l2 = tc_dot(ab, ab), t = l2 > 0 ? tc_dot(ac, ab) / l2 : 0;
	t = t < 0 ? 0 : t > 1 ? 1 : t;
	return tc_len(tc_sub(ac, pt_v3(ab.x * t, ab.y * t, ab.z * t)));
}

static float tc_clamp_r(float r) { return r < 0.001f ? 0.001f : r > 1.0f ? 1.0f : r; }

/* ---- definitions ---- */

int simtouch_def(sim_t *s, sim_inst_t *in, const pt_instance_def *def, const interact_t *ia)
{
	(void)s;
	interact_t dflt = interact_default();
	if (!ia)
		ia = &dflt;
	int listed = ia->touch == INTERACT_LISTED || ia->grab == INTERACT_LISTED;
	int nown = 0;
	for (int i = 0; i < def->collider_count; i++)
		nown += def->colliders[i].attach == PT_ATTACH_BONE &&
		        simtouch_hand_index((int)def->colliders[i].bone) >= 0;
	own_col_t *own = NULL;
	if (nown > 0 && !(own = malloc((size_t)nown * sizeof *own)))
		return -1;
	if ((listed || nown > 0) && !simtouch_tx(in)) {
		free(own);
		return -1;
	}
	nown = 0;
	for (int i = 0; i < def->collider_count; i++) {
		const pt_collider_def *c = &def->colliders[i];
		int k = c->attach == PT_ATTACH_BONE ? simtouch_hand_index((int)c->bone) : -1;
		if (k < 0)
			continue;
		own_col_t o = {.k = k, .shape = PT_SHAPE_SPHERE, .a = c->center, .b = c->center};
		if (c->shape == PT_SHAPE_SPHERE)
			o.radius = c->radius;
		else if (c->shape == PT_SHAPE_ELLIPSOID) /* conservatively: its largest semi-axis */
			o.radius = fmaxf(c->radii.x, fmaxf(c->radii.y, c->radii.z));
		else if (c->shape == PT_SHAPE_CAPSULE) {
			o.shape = PT_SHAPE_CAPSULE, o.a = c->a, o.b = c->b;
			o.radius = c->radius_b < 0 ? c->radius : fmaxf(c->radius, c->radius_b);
		} else
			continue; /* planes and inside shapes are no hand */
		o.radius = tc_clamp_r(o.radius);
		own[nown++] = o;
	}
	if (in->tx) {
		free(in->tx->own);
		in->tx->own = own;
		in->tx->nown = nown;
		in->tx->has_ia = listed;
		if (listed)
			in->tx->ia = *ia;
	}
	in->touch_mode = ia->touch;
	in->grab_mode = ia->grab;
	return 0;
}

int simtouch_grants(const sim_inst_t *in, int mode, uint64_t who, int same)
{
	if (mode == INTERACT_LISTED)
		return in->tx && in->tx->has_ia && interact_grants(&in->tx->ia, mode, who, same);
	interact_t ia = {.touch = (uint8_t)mode};
	return interact_grants(&ia, mode, who, same);
}

int simtouch_same_room(const sim_inst_t *a, const sim_inst_t *b)
{
	return strcmp(a->meta->room, b->meta->room) == 0;
}

/* ---- hands ---- */

uint64_t simtouch_hold(const sim_t *s)
{
	/* --hand-hold-ms (default 0.25 s) of ticks, rounded, at least one */
	int ms = s->cfg.hand_hold_ms > 0 ? s->cfg.hand_hold_ms : 250;
	int64_t h = ((int64_t)ms * s->cfg.tick_hz + 500) / 1000;
	return (uint64_t)(h > 0 ? h : 1);
}

int simtouch_fresh(const sim_t *s, const hands_t *h, int k)
{
	return h->tick[k] && s->tick + 1 - h->tick[k] < simtouch_hold(s);
}

void simtouch_bone(sim_t *s, sim_inst_t *in, pt_bone bone, pt_pose pose, uint64_t conn)
{
	int k = simtouch_hand_index((int)bone);
	if (k < 0)
		return;
	sim_touch_t *T = simtouch_state(s);
	struct sim_tx_t *tx = T ? simtouch_tx(in) : NULL;
	if (tx && !tx->hands && (tx->hands = calloc(1, sizeof *tx->hands)) != NULL) {
		int slot = (int)(in - s->inst);
		if (srv_grow((void **)&T->touchers, &T->cap_touchers, T->ntouchers + 1, sizeof(int)) != 0) {
			free(tx->hands);
			tx->hands = NULL;
		} else
			T->touchers[T->ntouchers++] = slot;
	}
	if (!tx || !tx->hands) {
		LOG(LOG_ERROR, "out of memory: the hands of instance %llu are ignored",
		    (unsigned long long)in->id);
		return;
	}
	tx->hands->now[k] = pose;
	tx->hands->tick[k] = s->tick + 1;
	tx->hands->conn[k] = conn;
}

/* Appends the colliders of one side's fresh bones to T->tab (at most HAND_COLS). */
static int tc_build_hand(sim_t *s, sim_touch_t *T, const sim_inst_t *in, int side)
{
	const hands_t *h = in->tx->hands;
	uint32_t on = 0;
	for (int k = 0; k < HAND_BONES; k++) {
		int is_side = k < 2 ? k == side : (k - 2) / 15 == side;
		if (is_side && simtouch_fresh(s, h, k))
			on |= 1u << k;
	}
	if (!on)
		return 0;
	if (srv_grow((void **)&T->tab, &T->cap_tab, T->ntab + HAND_COLS, sizeof *T->tab) != 0 ||
	    srv_grow((void **)&T->who, &T->cap_who, T->ntab + HAND_COLS, sizeof *T->who) != 0)
		return -1;
	int n = 0;
	for (int k = 0; k < HAND_BONES && n < HAND_COLS; k++) {
		if (!(on & (1u << k)))
			continue;
		pt_pose p1 = h->now[k], p0 = h->active & (1u << k) ? h->prev[k] : p1;
		int own = 0;
		for (int i = 0; i < in->tx->nown && n < HAND_COLS; i++) {
			const own_col_t *o = &in->tx->own[i];
			if (o->k != k)
				continue;
			own = 1;
			pt_touch t = {.shape = o->shape, .radius = o->radius};
			t.a0 = tc_xform(p0, o->a), t.b0 = tc_xform(p0, o->b);
			t.a1 = tc_xform(p1, o->a), t.b1 = tc_xform(p1, o->b);
			T->tab[T->ntab + n] = t;
			T->who[T->ntab + n++] = (ent_t){in->id, side};
		}
		if (own || n >= HAND_COLS)
			continue;
		/* the defaults: toward the next bone when it is sent too */
		int next = -1;
		float r = FINGER_R;
		if (k < 2) {
			next = simtouch_hand_index(k == 0 ? PT_BONE_LEFT_MIDDLE_PROXIMAL : PT_BONE_RIGHT_MIDDLE_PROXIMAL);
			r = (on & (1u << next)) ? PALM_CAPSULE_R : PALM_R;
		} else if ((k - 2) % 3 != 2)
			next = k + 1;
		int cap = next >= 0 && (on & (1u << next));
		pt_pose q1 = cap ? h->now[next] : p1;
		pt_pose q0 = cap ? (h->active & (1u << next) ? h->prev[next] : q1) : p0;
		pt_touch t = {.shape = cap ? PT_SHAPE_CAPSULE : PT_SHAPE_SPHERE, .radius = r};
		t.a0 = p0.p, t.a1 = p1.p, t.b0 = q0.p, t.b1 = q1.p;
		T->tab[T->ntab + n] = t;
		T->who[T->ntab + n++] = (ent_t){in->id, side};
	}
	T->ntab += n;
	return 1;
}

static int tc_cand_cmp(const void *a, const void *b)
{
	const cand_t *x = a, *y = b;
	if (x->d != y->d)
		return x->d < y->d ? -1 : 1;
	return x->idx - y->idx;
}

static int tc_idx_cmp(const void *a, const void *b)
{
	return (int)*(const uint16_t *)a - (int)*(const uint16_t *)b;
}

/* 1 when hand `side` of `owner` holds a grab of instance `inst`: that hand does not push
 * the hair it holds (its grip is the contact; pushed out of the hand, the points next to
 * the grabbed one would fight the grab for their lengths). */
static int tc_grips(const sim_touch_t *T, uint64_t inst, uint64_t owner, int side)
{
	for (int i = 0; i < T->ngrabs; i++) {
		const grab_info_t *g = &T->grabs[i].g;
		int k = g->instance == inst && g->by == owner ? simtouch_hand_index(g->bone) : -1;
		if (k >= 0 && (k < 2 ? k : (k - 2) / 15) == side)
			return 1;
	}
	return 0;
}

/* Whether collider i of the room's table touches instance `in`. */
static int tc_touches(const sim_touch_t *T, int i, const sim_inst_t *in)
{
	const ent_t *e = &T->who[i];
	return e->owner != in->id && simtouch_grants(in, in->touch_mode, e->owner, 1) &&
	       !(T->ngrabs > 0 && tc_grips(T, in->id, e->owner, e->side));
}

/* The touch of instance `in` from the room's table T->tab, set in core and recorded.
 * Returns its collider count. */
static int tc_touch_one(sim_t *s, sim_touch_t *T, sim_inst_t *in)
{
	int nc = 0;
	for (int i = 0; i < T->ntab; i++)
		if (tc_touches(T, i, in))
			nc++;
	if (nc == 0)
		return 0;
	if (srv_grow((void **)&T->cand, &T->cap_cand, T->ntab, sizeof *T->cand) != 0)
		return 0;
	/* a bounding sphere of its points after the last tick */
	pt_vec3 *pts = s->scratch[0].pts;
	int n = pt_world_read_points(s->world, in->pid, pts, SERVER_MAX_POINTS);
	if (n <= 0 || n > SERVER_MAX_POINTS)
		return 0;
	pt_vec3 lo = pts[0], hi = pts[0];
	for (int i = 1; i < n; i++) {
		lo = pt_v3(fminf(lo.x, pts[i].x), fminf(lo.y, pts[i].y), fminf(lo.z, pts[i].z));
		hi = pt_v3(fmaxf(hi.x, pts[i].x), fmaxf(hi.y, pts[i].y), fmaxf(hi.z, pts[i].z));
	}
	pt_vec3 c = pt_v3((lo.x + hi.x) * 0.5f, (lo.y + hi.y) * 0.5f, (lo.z + hi.z) * 0.5f);
	float R = tc_len(tc_sub(hi, c)) + in->touch_margin + TOUCH_SLACK;
	nc = 0;
	for (int i = 0; i < T->ntab; i++) {
		const pt_touch *e = &T->tab[i];
		if (!tc_touches(T, i, in))
			continue;
		float sweep = fmaxf(tc_len(tc_sub(e->a1, e->a0)), tc_len(tc_sub(e->b1, e->b0)));
		float d = tc_seg_dist(c, e->a1, e->b1) - e->radius - sweep;
		if (d <= R)
			T->cand[nc++] = (cand_t){d, i};
	}
	if (nc > PT_MAX_TOUCH) {
		qsort(T->cand, (size_t)nc, sizeof *T->cand, tc_cand_cmp);
		nc = PT_MAX_TOUCH;
	}
	uint16_t idx[PT_MAX_TOUCH];
	for (int i = 0; i < nc; i++)
		idx[i] = (uint16_t)T->cand[i].idx;
	qsort(idx, (size_t)nc, sizeof *idx, tc_idx_cmp);
	pt_touch t[PT_MAX_TOUCH];
	for (int i = 0; i < nc; i++)
		t[i] = T->tab[idx[i]];
	if (nc > 0 && pt_world_set_touch(s->world, in->pid, t, nc) != 1)
		return 0;
	if (in->rec) {
		struct sim_tx_t *tx = simtouch_tx(in);
		if (!tx) {
			rec_stage(in->rec)->failed = 1;
		} else if (!tx->rec_valid || tx->rec_n != nc ||
		           memcmp(tx->rec_idx, idx, (size_t)nc * sizeof *idx) != 0) {
			pt_rec_put_touch(rec_stage(in->rec), in->id, idx, nc);
			memcpy(tx->rec_idx, idx, (size_t)nc * sizeof *idx);
			tx->rec_n = nc;
			tx->rec_valid = 1;
		}
	}
	return nc;
}

static const sim_t *tc_sort_sim; /* the tick thread's only: qsort has no context argument */

static int tc_toucher_cmp(const void *a, const void *b)
{
	const sim_inst_t *x = &tc_sort_sim->inst[*(const int *)a], *y = &tc_sort_sim->inst[*(const int *)b];
	int c = strcmp(x->meta->room, y->meta->room);
	return c ? c : (x->id < y->id ? -1 : x->id > y->id);
}

/* Index into s->rooms of room, or -1 (s->rooms current). */
static int tc_find_room(const sim_t *s, const char *room)
{
	int lo = 0, hi = s->nrooms - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		int c = strcmp(s->inst[s->room_order[s->rooms[mid].first]].meta->room, room);
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static void tc_hands_tick(sim_t *s, sim_touch_t *T)
{
	/* the touchers that still have a fresh bone */
	int nt = 0;
	for (int i = 0; i < T->ntouchers; i++) {
		sim_inst_t *in = &s->inst[T->touchers[i]];
		int any = 0;
		for (int k = 0; in->id && in->tx && in->tx->hands && k < HAND_BONES && !any; k++)
			any = simtouch_fresh(s, in->tx->hands, k);
		if (any)
			T->touchers[nt++] = T->touchers[i];
		else if (in->id && in->tx) { /* no hands now: forgotten until it sends again */
			free(in->tx->hands);
			in->tx->hands = NULL;
		}
	}
	T->ntouchers = nt;
	T->ntouched_next = 0;
	if (nt > 0 && s->order_dirty && sim_rebuild_order(s) != 0)
		nt = 0; /* out of memory: no touch this tick */
	tc_sort_sim = s;
	qsort(T->touchers, (size_t)nt, sizeof *T->touchers, tc_toucher_cmp);
	for (int g = 0; g < nt;) {
		const char *room = s->inst[T->touchers[g]].meta->room;
		int e = g;
		while (e < nt && strcmp(s->inst[T->touchers[e]].meta->room, room) == 0)
			e++;
		T->ntab = 0;
		int hands = 0;
		for (int i = g; i < e; i++)
			for (int side = 0; side < 2; side++) {
				if (hands >= SERVER_MAX_ROOM_HANDS) {
					if (!T->dropped_logged++)
						LOG(LOG_WARN, "room '%s' has more than %d hands (limits.hands): "
						              "the hands of the highest ids are left out",
						    room, SERVER_MAX_ROOM_HANDS);
					continue;
				}
				int r = tc_build_hand(s, T, &s->inst[T->touchers[i]], side);
				hands += r > 0;
			}
		int r = tc_find_room(s, room);
		const frame_room_t *fr = r >= 0 ? &s->rooms[r] : NULL;
		rec_room_t *rec = NULL;
		for (int i = 0; fr && i < fr->count && !rec; i++)
			rec = s->inst[s->room_order[fr->first + i]].rec;
		if (rec && T->ntab > 0)
			pt_rec_put_hands(rec_stage(rec), T->tab, (uint32_t)T->ntab);
		for (int i = 0; fr && T->ntab > 0 && i < fr->count; i++) {
			sim_inst_t *in = &s->inst[s->room_order[fr->first + i]];
			if (in->touch_mode != INTERACT_NONE && tc_touch_one(s, T, in) > 0 &&
			    srv_grow((void **)&T->touched_next, &T->cap_touched_next, T->ntouched_next + 1,
			         sizeof(uint64_t)) == 0)
				T->touched_next[T->ntouched_next++] = in->id;
		}
		g = e;
	}
	/* the ones touched last tick and not now: their recording learns it */
	for (int i = 0; i < T->ntouched; i++) {
		int still = 0;
		for (int j = 0; j < T->ntouched_next && !still; j++)
			still = T->touched_next[j] == T->touched[i];
		int slot = still ? -1 : sim_slot_of(s, T->touched[i]);
		sim_inst_t *in = slot >= 0 ? &s->inst[slot] : NULL;
		if (in && in->rec && in->tx && (!in->tx->rec_valid || in->tx->rec_n != 0)) {
			pt_rec_put_touch(rec_stage(in->rec), in->id, NULL, 0);
			in->tx->rec_n = 0;
			in->tx->rec_valid = 1;
		}
	}
	uint64_t *sw = T->touched;
	int cw = T->cap_touched;
	T->touched = T->touched_next, T->cap_touched = T->cap_touched_next;
	T->touched_next = sw, T->cap_touched_next = cw;
	T->ntouched = T->ntouched_next;
	/* what this tick used is the next one's start */
	for (int i = 0; i < nt; i++) {
		hands_t *h = s->inst[T->touchers[i]].tx->hands;
		h->active = 0;
		for (int k = 0; k < HAND_BONES; k++)
			if (simtouch_fresh(s, h, k)) {
				h->prev[k] = h->now[k];
				h->active |= 1u << k;
			}
	}
}

void simtouch_tick(sim_t *s)
{
	sim_touch_t *T = s->touch;
	if (!T)
		return;
	if (T->ngrabs > 0 || T->npending > 0)
		simgrab_tick(s, T);
	if (T->ntouchers > 0 || T->ntouched > 0)
		tc_hands_tick(s, T);
}

void simtouch_forget(sim_t *s, sim_inst_t *in)
{
	if (in->tx) {
		if (in->tx->hands && s->touch) {
			sim_touch_t *T = s->touch;
			int slot = (int)(in - s->inst);
			for (int i = 0; i < T->ntouchers; i++)
				if (T->touchers[i] == slot) {
					T->touchers[i] = T->touchers[--T->ntouchers];
					break;
				}
		}
		free(in->tx->hands);
		free(in->tx->own);
		free(in->tx);
		in->tx = NULL;
	}
}

void simtouch_snapshot(sim_inst_t *in)
{
	if (in->tx)
		in->tx->rec_valid = 0;
}

void simtouch_destroy(sim_t *s)
{
	sim_touch_t *T = s->touch;
	if (!T)
		return;
	free(T->grabs);
	free(T->pending);
	free(T->touchers);
	free(T->touched);
	free(T->touched_next);
	free(T->tab);
	free(T->who);
	free(T->cand);
	free(T);
	s->touch = NULL;
}
