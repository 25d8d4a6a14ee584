/* Touch and grabs on the tick thread (server/README.md "Touch and grabs"; core's contract:
 * ponytail/touch.h). Core forgets both after every step, so every tick, before the step:
 *
 * - grabs: each grab in the table is checked (both instances exist and share a room, the
 *   grabbed one still grants the grabber grabs, the point exists, the grabber's hand bone
 *   is tc_fresh) and ends at once when one fails; the rest become pt_world_set_grabs of the
 *   grabbed instance, the target moving from the hand bone's position of the last tick
 *   to its newest one;
 * - hands: every instance that sent a hand or finger bone within the hold time is a
 *   toucher; per room, its hands become a table of colliders (its definition's colliders
 *   on those bones, else the defaults below), and every other instance of the room that
 *   grants it touch takes the colliders near it (a bounding sphere of its points),
 *   nearest first, at most PT_MAX_TOUCH, handed to core in table order.
 *
 * Nothing is kept in core between ticks: an instance that stops sending, leaves or is
 * deleted stops colliding and grabbing at the next tick. Sim thread only.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "ponytail/touch.h"
#include "sim_internal.h"

/* The bones of a hand: index 0/1 the left/right hand, 2..16 the left fingers
 * (pt_bone 24..38), 17..31 the right ones (39..53). */
enum { HAND_BONES = 32, HAND_COLS = 16 };
/* Defaults (README): a hand is a sphere of 5 cm at the hand bone, or a capsule of 4 cm to
 * its middle_proximal when that is sent too; a finger bone a capsule of 1 cm to the next
 * bone of its finger when that is sent, else a sphere of 1 cm. */
#define PALM_R 0.05f
#define PALM_CAPSULE_R 0.04f
#define FINGER_R 0.01f
/* What a point may move within a step beyond its last position, for the cull, m. */
#define TOUCH_SLACK 0.1f

static int tc_hand_index(int bone)
{
	if (bone == PT_BONE_LEFT_HAND)
		return 0;
	if (bone == PT_BONE_RIGHT_HAND)
		return 1;
	if (bone >= PT_BONE_LEFT_THUMB_METACARPAL && bone < PT_BONE_COUNT)
		return 2 + bone - PT_BONE_LEFT_THUMB_METACARPAL;
	return -1;
}

typedef struct own_col_t {
	int k;       /* hand index of its bone */
	int shape;   /* PT_SHAPE_SPHERE or _CAPSULE */
	float radius;
	pt_vec3 a, b; /* bone-local */
} own_col_t;

typedef struct hands_t {
	pt_pose now[HAND_BONES];  /* newest pose taken */
	pt_pose prev[HAND_BONES]; /* the pose its colliders had last tick (active bones) */
	uint64_t tick[HAND_BONES]; /* the tick that took `now`; 0: none */
	uint64_t conn[HAND_BONES]; /* the connection it came by (0: REST) */
	uint32_t active;           /* bones that made colliders last tick */
} hands_t;

struct sim_tx_t {
	interact_t ia; /* valid when has_ia (a listed mode) */
	int has_ia;
	own_col_t *own; /* its definition's colliders on hand bones */
	int nown;
	hands_t *hands;
	int rec_valid;  /* rec_idx is what its recording last got (TOUCH) */
	int rec_n;
	uint16_t rec_idx[PT_MAX_TOUCH];
};

typedef struct grab_t {
	grab_info_t g;
	uint64_t conn;
	pt_vec3 t0, t1; /* this tick's target: the hand bone's position last tick and now */
	int has_last;   /* t1 holds last tick's target */
} grab_t;

typedef struct ent_t {
	pt_touch t;
	uint64_t owner;
} ent_t;

typedef struct cand_t {
	float d;
	int idx;
} cand_t;

struct sim_touch_t {
	grab_t *grabs; /* by (instance, gid) */
	int ngrabs, cap_grabs;
	uint64_t next_gid;
	int *touchers; /* slots of instances with hands */
	int ntouchers, cap_touchers;
	uint64_t *touched, *touched_next; /* ids given touch last tick / this tick */
	int ntouched, ntouched_next, cap_touched, cap_touched_next;
	ent_t *tab; /* one room's hands, this tick */
	int ntab, cap_tab;
	cand_t *cand;
	int cap_cand;
	cmd_t **pending; /* CMD_GRABs of this tick: checked after its poses (tc_grabs_tick) */
	int npending, cap_pending;
	uint64_t dropped_logged; /* hands past the room's limit, logged once */
};

static sim_touch_t *tc_touch_of(sim_t *s)
{
	if (!s->touch)
		s->touch = calloc(1, sizeof *s->touch);
	return s->touch;
}

static struct sim_tx_t *tc_tx_of(sim_inst_t *in)
{
	if (!in->tx)
		in->tx = calloc(1, sizeof *in->tx);
	return in->tx;
}

static int tc_grow(void **p, int *cap, int need, size_t size)
{
	if (need <= *cap)
		return 0;
	int nc = *cap ? *cap : 16;
	while (nc < need)
		nc *= 2;
	void *np = realloc(*p, (size_t)nc * size);
	if (!np)
		return -1;
	*p = np;
	*cap = nc;
	return 0;
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
		        tc_hand_index((int)def->colliders[i].bone) >= 0;
	own_col_t *own = NULL;
	if (nown > 0 && !(own = malloc((size_t)nown * sizeof *own)))
		return -1;
	if ((listed || nown > 0) && !tc_tx_of(in)) {
		free(own);
		return -1;
	}
	nown = 0;
	for (int i = 0; i < def->collider_count; i++) {
		const pt_collider_def *c = &def->colliders[i];
		int k = c->attach == PT_ATTACH_BONE ? tc_hand_index((int)c->bone) : -1;
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

static int tc_grants(const sim_inst_t *in, int mode, uint64_t who, int tc_same_room)
{
	if (mode == INTERACT_LISTED)
		return in->tx && in->tx->has_ia && interact_grants(&in->tx->ia, mode, who, tc_same_room);
	interact_t ia = {.touch = (uint8_t)mode};
	return interact_grants(&ia, mode, who, tc_same_room);
}

static int tc_same_room(const sim_inst_t *a, const sim_inst_t *b)
{
	return strcmp(a->meta->room, b->meta->room) == 0;
}

/* ---- hands ---- */

static uint64_t tc_hold_ticks(const sim_t *s)
{
	/* --hand-hold-ms (default 0.25 s) of ticks, rounded, at least one */
	int ms = s->cfg.hand_hold_ms > 0 ? s->cfg.hand_hold_ms : 250;
	int64_t h = ((int64_t)ms * s->cfg.tick_hz + 500) / 1000;
	return (uint64_t)(h > 0 ? h : 1);
}

static int tc_fresh(const sim_t *s, const hands_t *h, int k)
{
	return h->tick[k] && s->tick + 1 - h->tick[k] < tc_hold_ticks(s);
}

void simtouch_bone(sim_t *s, sim_inst_t *in, pt_bone bone, pt_pose pose, uint64_t conn)
{
	int k = tc_hand_index((int)bone);
	if (k < 0)
		return;
	sim_touch_t *T = tc_touch_of(s);
	struct sim_tx_t *tx = T ? tc_tx_of(in) : NULL;
	if (tx && !tx->hands && (tx->hands = calloc(1, sizeof *tx->hands)) != NULL) {
		int slot = (int)(in - s->inst);
		if (tc_grow((void **)&T->touchers, &T->cap_touchers, T->ntouchers + 1, sizeof(int)) != 0) {
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
		if (is_side && tc_fresh(s, h, k))
			on |= 1u << k;
	}
	if (!on)
		return 0;
	if (tc_grow((void **)&T->tab, &T->cap_tab, T->ntab + HAND_COLS, sizeof *T->tab) != 0)
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
			T->tab[T->ntab + n++] = (ent_t){t, in->id};
		}
		if (own || n >= HAND_COLS)
			continue;
		/* the defaults: toward the next bone when it is sent too */
		int next = -1;
		float r = FINGER_R;
		if (k < 2) {
			next = tc_hand_index(k == 0 ? PT_BONE_LEFT_MIDDLE_PROXIMAL : PT_BONE_RIGHT_MIDDLE_PROXIMAL);
			r = (on & (1u << next)) ? PALM_CAPSULE_R : PALM_R;
		} else if ((k - 2) % 3 != 2)
			next = k + 1;
		int cap = next >= 0 && (on & (1u << next));
		pt_pose q1 = cap ? h->now[next] : p1;
		pt_pose q0 = cap ? (h->active & (1u << next) ? h->prev[next] : q1) : p0;
		pt_touch t = {.shape = cap ? PT_SHAPE_CAPSULE : PT_SHAPE_SPHERE, .radius = r};
		t.a0 = p0.p, t.a1 = p1.p, t.b0 = q0.p, t.b1 = q1.p;
		T->tab[T->ntab + n++] = (ent_t){t, in->id};
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

/* The touch of instance `in` from the room's table T->tab, set in core and recorded.
 * Returns its collider count. */
static int tc_touch_one(sim_t *s, sim_touch_t *T, sim_inst_t *in)
{
	int nc = 0;
	for (int i = 0; i < T->ntab; i++)
		if (T->tab[i].owner != in->id && tc_grants(in, in->touch_mode, T->tab[i].owner, 1))
			nc++;
	if (nc == 0)
		return 0;
	if (tc_grow((void **)&T->cand, &T->cap_cand, T->ntab, sizeof *T->cand) != 0)
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
		const ent_t *e = &T->tab[i];
		if (e->owner == in->id || !tc_grants(in, in->touch_mode, e->owner, 1))
			continue;
		float sweep = fmaxf(tc_len(tc_sub(e->t.a1, e->t.a0)), tc_len(tc_sub(e->t.b1, e->t.b0)));
		float d = tc_seg_dist(c, e->t.a1, e->t.b1) - e->t.radius - sweep;
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
		t[i] = T->tab[idx[i]].t;
	if (nc > 0 && pt_world_set_touch(s->world, in->pid, t, nc) != 1)
		return 0;
	if (in->rec) {
		struct sim_tx_t *tx = tc_tx_of(in);
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
			any = tc_fresh(s, in->tx->hands, k);
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
		if (rec && T->ntab > 0) {
			pt_rec_buf *b = rec_stage(rec);
			pt_touch *all = malloc((size_t)T->ntab * sizeof *all);
			if (!all)
				b->failed = 1;
			for (int i = 0; all && i < T->ntab; i++)
				all[i] = T->tab[i].t;
			if (all)
				pt_rec_put_hands(b, all, (uint32_t)T->ntab);
			free(all);
		}
		for (int i = 0; fr && T->ntab > 0 && i < fr->count; i++) {
			sim_inst_t *in = &s->inst[s->room_order[fr->first + i]];
			if (in->touch_mode != INTERACT_NONE && tc_touch_one(s, T, in) > 0 &&
			    tc_grow((void **)&T->touched_next, &T->cap_touched_next, T->ntouched_next + 1,
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
			if (tc_fresh(s, h, k)) {
				h->prev[k] = h->now[k];
				h->active |= 1u << k;
			}
	}
}

/* ---- grabs ---- */

static void tc_grab_end(sim_touch_t *T, int i, const char *why)
{
	const grab_info_t *g = &T->grabs[i].g;
	LOG(LOG_DEBUG, "grab %llu of instance %llu by %llu ended: %s", (unsigned long long)g->gid,
	    (unsigned long long)g->instance, (unsigned long long)g->by, why);
	memmove(&T->grabs[i], &T->grabs[i + 1], (size_t)(T->ngrabs - i - 1) * sizeof *T->grabs);
	T->ngrabs--;
}

/* Why grab g cannot go on (NULL: it can); its target into *t. */
static const char *tc_grab_check(sim_t *s, const grab_info_t *g, pt_vec3 *t)
{
	int ts = sim_slot_of(s, g->instance), bs = sim_slot_of(s, g->by);
	if (ts < 0)
		return "the grabbed instance is gone";
	if (bs < 0)
		return "the grabber is gone";
	sim_inst_t *in = &s->inst[ts], *by = &s->inst[bs];
	int same = tc_same_room(in, by);
	if (!same)
		return "the grabber left the room";
	if (!tc_grants(in, in->grab_mode, g->by, same))
		return "the grant was taken away";
	int sc, pts[PT_MAX_STRANDS];
	pt_world_shape(s->world, in->pid, &sc, pts);
	if (g->strand >= sc || g->point >= pts[g->strand])
		return "the point no longer exists";
	int k = tc_hand_index(g->bone);
	if (!by->tx || !by->tx->hands || !tc_fresh(s, by->tx->hands, k))
		return "the grabber's hand is stale";
	*t = by->tx->hands->now[k].p;
	return NULL;
}

static cmd_result_t tc_grab_new(sim_t *s, sim_touch_t *T, cmd_grab_t *c);

static void tc_grabs_tick(sim_t *s, sim_touch_t *T)
{
	for (int i = 0; i < T->npending; i++) /* completed with the tick's other commands */
		T->pending[i]->result = tc_grab_new(s, T, T->pending[i]->grab);
	T->npending = 0;
	for (int i = 0; i < T->ngrabs;) {
		pt_vec3 t;
		const char *why = tc_grab_check(s, &T->grabs[i].g, &t);
		if (why) {
			tc_grab_end(T, i, why);
			continue;
		}
		grab_t *g = &T->grabs[i++];
		g->t0 = g->has_last ? g->t1 : t;
		g->t1 = t;
		g->has_last = 1;
	}
	/* the table is ordered by instance: one run per grabbed instance */
	for (int i = 0; i < T->ngrabs;) {
		int e = i, n = 0;
		pt_grab gs[PT_MAX_GRABS];
		for (; e < T->ngrabs && T->grabs[e].g.instance == T->grabs[i].g.instance; e++)
			if (n < PT_MAX_GRABS) {
				const grab_t *g = &T->grabs[e];
				gs[n++] = (pt_grab){g->g.strand, g->g.point, g->t0, g->t1};
			}
		sim_inst_t *in = &s->inst[sim_slot_of(s, T->grabs[i].g.instance)];
		if (pt_world_set_grabs(s->world, in->pid, gs, n) == 1 && in->rec)
			pt_rec_put_grabs(rec_stage(in->rec), in->id, gs, n);
		i = e;
	}
}

static cmd_result_t tc_refuse(cmd_grab_t *c, int why, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static cmd_result_t tc_refuse(cmd_grab_t *c, int why, const char *field, const char *fmt, ...)
{
	c->refused = why;
	snprintf(c->field, sizeof c->field, "%s", field);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->message, sizeof c->message, fmt, ap);
	va_end(ap);
	return CMD_OK;
}

static const char *tc_MODE_NAMES[] = {"none", "room", "listed"};

static cmd_result_t tc_grab_new(sim_t *s, sim_touch_t *T, cmd_grab_t *c)
{
	grab_info_t *g = &c->g;
	int ts = sim_slot_of(s, g->instance), bs = sim_slot_of(s, g->by);
	unsigned long long id = (unsigned long long)g->instance, by = (unsigned long long)g->by;
	if (ts < 0)
		return tc_refuse(c, GRAB_NOT_FOUND, "id", "no instance %llu", id);
	if (bs < 0)
		return tc_refuse(c, GRAB_INVALID, "by", "by: no instance %llu", by);
	if (ts == bs)
		return tc_refuse(c, GRAB_INVALID, "by", "by: an instance cannot grab itself");
	int k = tc_hand_index(g->bone);
	if (k < 0)
		return tc_refuse(c, GRAB_INVALID, "bone", "bone: not a hand or finger bone");
	sim_inst_t *in = &s->inst[ts], *bi = &s->inst[bs];
	int same = tc_same_room(in, bi);
	if (!tc_grants(in, in->grab_mode, g->by, same))
		return tc_refuse(c, GRAB_FORBIDDEN, "interaction.grab",
		              "interaction.grab: instance %llu (grab: %s) does not let instance %llu "
		              "grab it%s",
		              id, tc_MODE_NAMES[in->grab_mode % 3], by,
		              in->grab_mode == INTERACT_NONE ? ""
		              : !same                        ? " (not in its room)"
		                                             : " (not in its allow list)");
	int sc, pts[PT_MAX_STRANDS];
	pt_world_shape(s->world, in->pid, &sc, pts);
	if (g->strand < 0 || g->strand >= sc)
		return tc_refuse(c, GRAB_INVALID, "strand",
		              "strand: %d does not exist (instance %llu has strands 0..%d)", g->strand,
		              id, sc - 1);
	if (g->point < 1 || g->point >= pts[g->strand])
		return tc_refuse(c, GRAB_INVALID, "point",
		              "point: %d does not exist or is the root (strand %d has points 1..%d to "
		              "grab)",
		              g->point, g->strand, pts[g->strand] - 1);
	int n = 0, at = T->ngrabs;
	for (int i = 0; i < T->ngrabs; i++) {
		const grab_info_t *o = &T->grabs[i].g;
		if (o->instance != g->instance)
			continue;
		if (o->strand == g->strand && o->point == g->point)
			return tc_refuse(c, GRAB_CONFLICT, "point",
			              "point: point %d of strand %d is already grabbed (grab %llu)",
			              g->point, g->strand, (unsigned long long)o->gid);
		n++;
		at = i + 1;
	}
	if (n >= PT_MAX_GRABS)
		return tc_refuse(c, GRAB_CONFLICT, "grabs",
		              "grabs: instance %llu has %d grabs, the most one takes (limits.grabs)", id,
		              n);
	if (!bi->tx || !bi->tx->hands || !tc_fresh(s, bi->tx->hands, k))
		return tc_refuse(c, GRAB_CONFLICT, "bone",
		              "bone: instance %llu has sent no %s pose in the last %.2f s", by,
		              pt_bone_name((pt_bone)g->bone),
		              (double)tc_hold_ticks(s) / s->cfg.tick_hz);
	if (n == 0) /* first grab of this instance: after the smaller instance ids */
		for (at = 0; at < T->ngrabs && T->grabs[at].g.instance < g->instance; at++)
			;
	if (tc_grow((void **)&T->grabs, &T->cap_grabs, T->ngrabs + 1, sizeof *T->grabs) != 0)
		return CMD_NO_MEMORY;
	memmove(&T->grabs[at + 1], &T->grabs[at], (size_t)(T->ngrabs - at) * sizeof *T->grabs);
	g->gid = ++T->next_gid;
	T->grabs[at] = (grab_t){.g = *g, .conn = c->conn};
	T->ngrabs++;
	c->refused = GRAB_OK;
	return CMD_OK;
}

cmd_result_t simtouch_cmd(sim_t *s, cmd_t *c)
{
	sim_touch_t *T = tc_touch_of(s);
	cmd_grab_t *g = c->grab;
	if (!T)
		return CMD_NO_MEMORY;
	switch (c->kind) {
	case CMD_GRAB: /* after this tick's poses, so a hand sent with it counts */
		if (tc_grow((void **)&T->pending, &T->cap_pending, T->npending + 1, sizeof *T->pending))
			return CMD_NO_MEMORY;
		g->g.instance = c->id;
		T->pending[T->npending++] = c;
		return CMD_OK;
	case CMD_UNGRAB:
		for (int i = 0; i < T->ngrabs; i++)
			if (T->grabs[i].g.gid == g->g.gid && T->grabs[i].g.instance == c->id) {
				g->g = T->grabs[i].g;
				tc_grab_end(T, i, "released");
				g->refused = GRAB_OK;
				return CMD_OK;
			}
		return tc_refuse(g, GRAB_NOT_FOUND, "grab", "no grab %llu of instance %llu",
		              (unsigned long long)g->g.gid, (unsigned long long)c->id);
	case CMD_GRABS:
		g->n = 0;
		g->list = NULL;
		for (int i = 0; i < T->ngrabs; i++)
			if (T->grabs[i].g.instance == c->id) {
				if (!g->list && !(g->list = malloc(PT_MAX_GRABS * sizeof *g->list)))
					return CMD_NO_MEMORY;
				if (g->n < PT_MAX_GRABS)
					g->list[g->n++] = T->grabs[i].g;
			}
		return sim_slot_of(s, c->id) >= 0 || g->n > 0 ? CMD_OK : CMD_NOT_FOUND;
	case CMD_CONN_GONE:
		for (int i = 0; i < T->ngrabs;)
			if (T->grabs[i].conn == g->conn)
				tc_grab_end(T, i, "its WebSocket connection closed");
			else
				i++;
		for (int i = 0; i < T->ntouchers; i++) {
			hands_t *h = s->inst[T->touchers[i]].tx->hands;
			for (int k = 0; k < HAND_BONES; k++)
				if (h->conn[k] == g->conn)
					h->tick[k] = 0;
		}
		return CMD_OK;
	default:
		return CMD_NOT_FOUND;
	}
}

void simtouch_tick(sim_t *s)
{
	sim_touch_t *T = s->touch;
	if (!T)
		return;
	if (T->ngrabs > 0 || T->npending > 0)
		tc_grabs_tick(s, T);
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
	free(T->cand);
	free(T);
	s->touch = NULL;
}
