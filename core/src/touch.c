/* Touch and grabs (ponytail/touch.h): their checks, an instance's copy of them for its
 * next step (pt_touch_rt, world_internal.h), the cull that leaves an instance they cannot
 * reach on its batched path, and the two passes that run after every substep (or
 * spring-bone frame) of an instance they reach.
 *
 * The solvers are not changed: an instance with live touch or grabs steps alone, one
 * substep at a time, through the same code as every other (verlet: the lane kernel, a
 * batch of its own strands; spring bone: the per-chain step), and after each substep
 *
 *  1. the touch pass: root to tip, a point whose parent moved is put back at its
 *     length from it (follow-the-leader), then pushed out of every touch collider (at
 *     its pose at the end of the substep, with the point's radius: verlet's particle
 *     radius, the spring bone's hit_radius) within the sphere of that length about its
 *     parent: the push is in the plane normal to the segment, as the verlet kernel's
 *     contact push is (solver_verlet.c, step 6), re-projected onto the length, repeated
 *     until no touch holds the point deeper than PT_CONTACT_EPS, then a last plain push
 *     beyond PT_CONTACT_SLOP for a point wedged where no position at its length is free
 *     (between two hands, or a root inside one). A touch that moved more than half its
 *     radius over the substep pushes at evenly spaced poses along its sweep first, so a
 *     fast hand carries a point in front of it instead of jumping over it. The pushes are
 *     position corrections (the previous position moves with the point: the velocity is
 *     kept), except that a point in contact keeps no velocity into the touch relative to
 *     the touch's surface (inelastic against a moving body: a hand sweeping at 1 m/s
 *     leaves the hair it pushes moving at 1 m/s along its normal, no faster);
 *  2. the grab pass: per strand, grabs in point order; the chain from the root (or the
 *     previous grabbed point) to the grabbed point is bent onto the target by FABRIK
 *     (backward from the target, forward from the root, until the grabbed point is
 *     within PT_GRAB_TOL of it), or laid straight toward a target beyond its reach; the
 *     points past the last grab follow at their lengths. Lengths are the segments' own
 *     at the substep's end. The grabbed point's previous position is where it started
 *     the substep (its velocity is its motion); the others keep theirs.
 *
 * The checks of touch.h (pt_touch_validate, pt_grabs_validate) are in touch_check.c.
 *
 * Verlet grabs also act inside the step, so that the chain's dynamics, not FABRIK, shape
 * it: before each substep the grabbed point is made 1e6 times heavier (its inverse mass
 * in the pool, restored after) and given the velocity that lands it on the target, so
 * that the kernel's length solve treats it as pinned and the chain between root and grab
 * hangs as a chain held at both ends does (FABRIK then corrects only the rounding).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ponytail/touch.h"
#include "springbone_lanes.h"
#include "vecmath.h"
#include "verlet_lanes.h"
#include "world_internal.h"

#define PT_GRAB_TOL 1e-5f   /* m: FABRIK stops with the grabbed point this near its target */
#define PT_GRAB_ITERS 64    /* FABRIK passes at most */
#define PT_GRAB_HEAVY 1e-6f /* verlet: the grabbed point's inverse mass factor in a substep */
#define PT_TOUCH_ROUNDS 32  /* push-and-reproject rounds per point */
#define PT_TOUCH_SAMPLES 8  /* poses along a touch's sweep per substep, at most */
#define PT_TOUCH_MARGIN 0.01f /* m added to the cull's reach (rounding, slop) */

/* ---- an instance's touch and grabs ---------------------------------------------------- */

void pt_touch_rt_free(pt_touch_rt **rt)
{
	free(*rt);
	*rt = NULL;
}

/* The instance's storage, allocated on first use (NULL: out of memory). */
static pt_touch_rt *storage(pt_inst *in)
{
	if (!in->touch)
		in->touch = calloc(1, sizeof *in->touch);
	return in->touch;
}

int pt_world_set_touch(pt_world *w, pt_id id, const pt_touch *t, int n)
{
	pt_inst *in = pt_world_lookup(w, id);
	if (!in || !pt_touch_validate(t, n).ok)
		return 0;
	if (n == 0) {
		if (in->touch)
			in->touch->n = 0;
		return 1;
	}
	pt_touch_rt *rt = storage(in);
	if (!rt)
		return -1;
	memcpy(rt->t, t, (size_t)n * sizeof *t);
	rt->n = n;
	return 1;
}

/* The strands' point counts of in (pt_grabs_validate's shape). */
static void shape_of(const pt_inst *in, int *points)
{
	for (int s = 0; s < in->strand_count; s++)
		points[s] = in->strands[s].points;
}

/* Grabs sorted by strand, then point (a strand's grabs are bent on in that order). */
static void sort_grabs(pt_grab *g, int n)
{
	for (int i = 1; i < n; i++) {
		pt_grab k = g[i];
		int j = i;
		for (; j > 0 && (g[j - 1].strand > k.strand ||
		                 (g[j - 1].strand == k.strand && g[j - 1].point > k.point));
		     j--)
			g[j] = g[j - 1];
		g[j] = k;
	}
}

int pt_world_set_grabs(pt_world *w, pt_id id, const pt_grab *g, int n)
{
	pt_inst *in = pt_world_lookup(w, id);
	if (!in)
		return 0;
	int points[PT_MAX_STRANDS];
	shape_of(in, points);
	if (!pt_grabs_validate(g, n, in->strand_count, points).ok)
		return 0;
	if (n == 0) {
		if (in->touch)
			in->touch->ngrabs = 0;
		return 1;
	}
	pt_touch_rt *rt = storage(in);
	if (!rt)
		return -1;
	memcpy(rt->g, g, (size_t)n * sizeof *g);
	rt->ngrabs = n;
	sort_grabs(rt->g, n);
	return 1;
}

void pt_touch_refit(pt_inst *in)
{
	pt_touch_rt *rt = in->touch;
	if (!rt)
		return;
	int k = 0;
	for (int i = 0; i < rt->ngrabs; i++) {
		const pt_grab *g = &rt->g[i];
		if (g->strand < in->strand_count && g->point < in->strands[g->strand].points)
			rt->g[k++] = *g;
	}
	rt->ngrabs = k;
}

void pt_touch_clear(pt_inst *in)
{
	in->touch->n = 0;
	in->touch->ngrabs = 0;
	in->touch->nlive = 0;
}

/* ---- the cull ------------------------------------------------------------------------ */

/* The largest radius a point of in is pushed out with. */
static float max_radius(const pt_world *w, const pt_inst *in)
{
	float r = 0.0f;
	if (in->solver == PT_SOLVER_SPRINGBONE) {
		const pt_sb_data *d = in->solver_data;
		for (int k = 0; k < d->njoints; k++)
			r = d->par[k].hit_radius > r ? d->par[k].hit_radius : r;
	} else {
		for (int i = in->offset; i < in->offset + in->npoints; i++)
			r = w->rad[i] > r ? w->rad[i] : r;
	}
	return r;
}

/* How far from the head's position any point of strand s can be after any substep:
 * its anchor's distance plus its length (a branch: its parent's reach plus its length),
 * or -1 when that is not known (a strand on a body bone, whose pose is the host's). */
static float strand_reach(const pt_world *w, const pt_inst *in, int s, const float *reach)
{
	const pt_strand_rt *st = &in->strands[s];
	if (in->bones && in->bones->of_strand[s] >= 0)
		return -1.0f;
	float base = st->parent >= 0 ? reach[st->parent] : v3_len(st->anchor);
	if (base < 0.0f)
		return -1.0f;
	float len = 0.0f;
	for (int j = 1; j < st->points; j++)
		len += w->len[in->offset + st->first + j];
	if (in->solver == PT_SOLVER_VERLET && in->stretch == PT_STRETCH_NONLINEAR)
		len *= 1.0f + in->stretch_max_strain;
	return base + len;
}

/* Distance from p to the segment [a, b]. */
static float seg_dist(pt_vec3 p, pt_vec3 a, pt_vec3 b)
{
	pt_vec3 d = v3_sub(b, a), ap = v3_sub(p, a);
	float l2 = v3_len2(d), t = l2 > 1e-12f ? v3_dot(ap, d) / l2 : 0.0f;
	t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
	return v3_len(v3_sub(ap, v3_scale(d, t)));
}

int pt_touch_begin(const pt_world *w, pt_inst *in)
{
	pt_touch_rt *rt = in->touch;
	rt->nlive = 0;
	if (rt->n > 0) {
		/* every point stays within `reach` of the head's position, which moves on the
		 * segment from head_prev to head_target (world_step.c, substep_poses) */
		float reach[PT_MAX_STRANDS], r = 0.0f;
		for (int s = 0; s < in->strand_count && r >= 0.0f; s++) {
			reach[s] = strand_reach(w, in, s, reach);
			r = reach[s] < 0.0f ? -1.0f : (reach[s] > r ? reach[s] : r);
		}
		if (r >= 0.0f)
			r += max_radius(w, in) + PT_TOUCH_MARGIN;
		for (int i = 0; i < rt->n; i++) {
			const pt_touch *t = &rt->t[i];
			/* the touch sweeps within the sphere about its four ends' middle */
			pt_vec3 b0 = t->shape == PT_SHAPE_CAPSULE ? t->b0 : t->a0;
			pt_vec3 b1 = t->shape == PT_SHAPE_CAPSULE ? t->b1 : t->a1;
			pt_vec3 c = v3_scale(v3_add(v3_add(t->a0, b0), v3_add(t->a1, b1)), 0.25f);
			float tr = fmaxf(fmaxf(v3_len(v3_sub(t->a0, c)), v3_len(v3_sub(b0, c))),
			                 fmaxf(v3_len(v3_sub(t->a1, c)), v3_len(v3_sub(b1, c))));
			if (r < 0.0f ||
			    seg_dist(c, in->head_prev.p, in->head_target.p) <= r + tr + t->radius)
				rt->live[rt->nlive++] = (unsigned char)i;
		}
	}
	if (rt->nlive == 0 && rt->ngrabs == 0) {
		pt_touch_clear(in);
		return 0;
	}
	return 1;
}

/* ---- the passes ---------------------------------------------------------------------- */

/* A touch at fraction a of the step (linear in its ends). */
typedef struct tpose {
	pt_vec3 a, d;   /* end a, and b - a */
	float il;       /* 1 / |d|^2, 0 for a sphere */
	float r;
} tpose;

static tpose pose_at(const pt_touch *t, float a)
{
	tpose p;
	p.a = v3_lerp(t->a0, t->a1, a);
	p.d = pt_v3(0.0f, 0.0f, 0.0f);
	if (t->shape == PT_SHAPE_CAPSULE)
		p.d = v3_sub(v3_lerp(t->b0, t->b1, a), p.a);
	float l2 = v3_len2(p.d);
	p.il = l2 > 1e-12f ? 1.0f / l2 : 0.0f;
	p.r = t->radius;
	return p;
}

/* Signed distance of a point of radius rad from the touch, the direction it grows in and
 * the segment parameter of the nearest axis point. */
static float tdist(const tpose *t, pt_vec3 p, float rad, pt_vec3 *dir, float *u)
{
	pt_vec3 ap = v3_sub(p, t->a);
	float s = v3_dot(ap, t->d) * t->il;
	s = s < 0.0f ? 0.0f : (s > 1.0f ? 1.0f : s);
	pt_vec3 delta = v3_sub(ap, v3_scale(t->d, s));
	float reach = t->r + rad, l2 = v3_len2(delta);
	*u = s;
	if (l2 >= reach * reach)
		return 1.0f; /* clear: the caller reads only the sign */
	float l = sqrtf(l2);
	*dir = l > 1e-9f ? v3_scale(delta, 1.0f / l) : pt_v3(0.0f, 1.0f, 0.0f);
	return l - reach;
}

/* p (at distance L from parent) pushed out by d < 0 along dir, within the sphere of
 * radius L about parent: the kernel's contact push (verlet_lanes.inc, lv_contact_push). */
static pt_vec3 push_on_sphere(pt_vec3 p, pt_vec3 parent, float L, pt_vec3 dir, float d)
{
	if (!(L > 1e-6f))
		return v3_sub(p, v3_scale(dir, d));
	pt_vec3 u = v3_scale(v3_sub(p, parent), 1.0f / L);
	float du = v3_dot(dir, u), tt = 1.0f - du * du;
	pt_vec3 q = tt > PT_CONTACT_TANGENT_MIN
	                ? v3_sub(p, v3_scale(v3_sub(dir, v3_scale(u, du)), d / tt))
	                : v3_sub(p, v3_scale(dir, d));
	return v3_add(parent, v3_scale(v3_norm_or(v3_sub(q, parent), dir), L));
}

/* The touches of a pass: each live one at the substep's end, its motion over the
 * substep at both ends, and the poses along its sweep it pushes at first. */
typedef struct tlive {
	tpose end;
	pt_vec3 va, vb; /* motion of ends a and b over the substep */
	int samples;    /* poses at (k / samples) of the substep, k = 1 .. samples */
	float a0, a1;
	const pt_touch *t;
} tlive;

/* Pushes p (a point of radius rad at length L from parent) out of the touches; 1 when it
 * touched one, with the last pushing normal and that touch's surface motion there. */
static int push_point(const tlive *tl, int nt, pt_vec3 parent, float L, float rad, pt_vec3 *p,
                      pt_vec3 *n, pt_vec3 *vc)
{
	int hit = 0;
	pt_vec3 dir;
	float u;
	for (int i = 0; i < nt; i++) { /* along the sweep: carried, not jumped over */
		for (int k = 1; k < tl[i].samples; k++) {
			float a = tl[i].a0 + (tl[i].a1 - tl[i].a0) * (float)k / (float)tl[i].samples;
			tpose t = pose_at(tl[i].t, a);
			float d = tdist(&t, *p, rad, &dir, &u);
			if (d < 0.0f)
				*p = push_on_sphere(*p, parent, L, dir, d);
		}
	}
	int round = 0, any = 1;
	for (; any && round < PT_TOUCH_ROUNDS; round++) {
		any = 0;
		for (int i = 0; i < nt; i++) {
			float d = tdist(&tl[i].end, *p, rad, &dir, &u);
			if (d < 0.0f) {
				hit = 1;
				*n = dir;
				*vc = v3_lerp(tl[i].va, tl[i].vb, u);
			}
			if (d < -PT_CONTACT_EPS) {
				*p = push_on_sphere(*p, parent, L, dir, d);
				any = 1;
			}
		}
	}
	if (any) /* wedged: no place at its length is free; within the slop at least */
		for (int i = 0; i < nt; i++) {
			float d = tdist(&tl[i].end, *p, rad, &dir, &u);
			if (d + PT_CONTACT_SLOP < 0.0f)
				*p = v3_sub(*p, v3_scale(dir, d + PT_CONTACT_SLOP));
		}
	return hit;
}

static pt_vec3 get(const pt_world *w, int i)
{
	return pt_v3(w->x[i], w->y[i], w->z[i]);
}
static pt_vec3 getp(const pt_world *w, int i)
{
	return pt_v3(w->px[i], w->py[i], w->pz[i]);
}
static void put(pt_world *w, int i, pt_vec3 p)
{
	w->x[i] = p.x, w->y[i] = p.y, w->z[i] = p.z;
}
static void putp(pt_world *w, int i, pt_vec3 p)
{
	w->px[i] = p.x, w->py[i] = p.y, w->pz[i] = p.z;
}
static int same(pt_vec3 a, pt_vec3 b)
{
	return a.x == b.x && a.y == b.y && a.z == b.z;
}

/* Moves point i to p as a position correction (its previous position moves with it). */
static void shift(pt_world *w, int i, pt_vec3 p)
{
	pt_vec3 x = get(w, i);
	putp(w, i, v3_add(getp(w, i), v3_sub(p, x)));
	put(w, i, p);
}

/* The length the passes keep segment (i - 1, i) at: the rest length where the solver
 * keeps it exactly, else the segment's own (`now`, measured before the pass). */
static float seg_len(const pt_world *w, const pt_inst *in, int i, float now)
{
	if (in->solver == PT_SOLVER_VERLET && in->stretch == PT_STRETCH_NONLINEAR)
		return now;
	return w->len[i];
}

/* The radius point j of strand s is pushed out with. */
static float point_radius(const pt_world *w, const pt_inst *in, int s, int j, int i)
{
	if (in->solver != PT_SOLVER_SPRINGBONE)
		return w->rad[i];
	const pt_sb_data *d = in->solver_data;
	const pt_sb_chain *c = &d->chain[s];
	return d->par[(int)(c->j - d->run) + j - 1].hit_radius;
}

/* Root to tip: lengths behind moved parents, touches. Returns 1 if a point moved. */
static int touch_strand(pt_world *w, const pt_inst *in, int s, const tlive *tl, int nt)
{
	const pt_strand_rt *st = &in->strands[s];
	int o = in->offset + st->first, moved = 0, parent_moved = 0;
	pt_vec3 parent_was = get(w, o), parent = parent_was;
	for (int j = 1; j < st->points; j++) {
		int i = o + j;
		pt_vec3 x = get(w, i), p = x, n = pt_v3(0, 0, 0), vc = n;
		float L = seg_len(w, in, i, v3_len(v3_sub(x, parent_was)));
		if (parent_moved)
			p = v3_add(parent, v3_scale(v3_norm_or(v3_sub(p, parent), pt_v3(0, -1, 0)), L));
		int hit = push_point(tl, nt, parent, L, point_radius(w, in, s, j, i), &p, &n, &vc);
		parent_was = x;
		parent_moved = !same(p, x);
		if (parent_moved) {
			shift(w, i, p);
			moved = 1;
		}
		if (hit) { /* no velocity into the touch, relative to its surface */
			pt_vec3 v = v3_sub(p, getp(w, i));
			float vn = v3_dot(v, n), cn = v3_dot(vc, n);
			if (vn < cn)
				putp(w, i, v3_sub(p, v3_add(v, v3_scale(n, cn - vn))));
		}
		parent = p;
	}
	return moved;
}

/* A grab's target at fraction a of the step. */
static pt_vec3 target_at(const pt_grab *g, float a)
{
	return v3_lerp(g->t0, g->t1, a);
}

/* FABRIK passes on x[from .. to] (x[from] staying) toward T; 1 when x[to] reached it. */
static int fabrik_passes(pt_vec3 *x, int from, int to, const float *L, pt_vec3 T)
{
	for (int it = 0; it < PT_GRAB_ITERS; it++) {
		x[to] = T;
		for (int j = to - 1; j > from; j--)
			x[j] = v3_add(x[j + 1],
			              v3_scale(v3_norm_or(v3_sub(x[j], x[j + 1]), pt_v3(0, 1, 0)), L[j + 1]));
		for (int j = from + 1; j <= to; j++)
			x[j] = v3_add(x[j - 1],
			              v3_scale(v3_norm_or(v3_sub(x[j], x[j - 1]), pt_v3(0, -1, 0)), L[j]));
		if (v3_len2(v3_sub(x[to], T)) <= PT_GRAB_TOL * PT_GRAB_TOL)
			return 1;
	}
	return 0;
}

/* Points (from, to] of the strand at base o bent onto target T by FABRIK, point `from`
 * staying; lengths L[j] of segments (j - 1, j). */
static void fabrik(pt_world *w, int o, int from, int to, const float *L, pt_vec3 T)
{
	pt_vec3 x[PT_MAX_POINTS];
	for (int j = from; j <= to; j++)
		x[j] = get(w, o + j);
	pt_vec3 root = x[from], d = v3_sub(T, root);
	float reach = 0.0f;
	for (int j = from + 1; j <= to; j++)
		reach += L[j];
	float dl = v3_len(d);
	if (dl >= reach) { /* beyond reach: straight toward it */
		pt_vec3 u = v3_norm_or(d, pt_v3(0, -1, 0));
		float at = 0.0f;
		for (int j = from + 1; j <= to; j++) {
			at += L[j];
			x[j] = v3_add(root, v3_scale(u, at));
		}
	} else {
		for (int attempt = 0; attempt < 2; attempt++) {
			if (attempt) { /* a straight chain cannot fold toward its root: bow it */
				pt_vec3 u = v3_norm_or(v3_sub(x[to], root), pt_v3(0, -1, 0));
				pt_vec3 side = v3_norm_or(v3_cross(u, pt_v3(0, 0, 1)), pt_v3(1, 0, 0));
				for (int j = from + 1; j < to; j++)
					x[j] = v3_add(x[j], v3_scale(side, 0.1f * L[j] *
					                                       sinf(3.14159265f * (float)(j - from) /
					                                            (float)(to - from))));
			}
			if (fabrik_passes(x, from, to, L, T))
				break;
		}
	}
	for (int j = from + 1; j <= to; j++)
		if (!same(x[j], get(w, o + j)))
			shift(w, o + j, x[j]);
}

/* The grabs of one strand (rt->g[g0 .. g1), by point), then its points past them. */
static void grab_strand(pt_world *w, const pt_inst *in, const pt_touch_rt *rt, int g0, int g1,
                        float a)
{
	const pt_strand_rt *st = &in->strands[rt->g[g0].strand];
	int o = in->offset + st->first;
	float L[PT_MAX_POINTS];
	L[0] = 0.0f;
	for (int j = 1; j < st->points; j++)
		L[j] = seg_len(w, in, o + j, v3_len(v3_sub(get(w, o + j), get(w, o + j - 1))));
	int from = 0;
	for (int k = g0; k < g1; k++) {
		fabrik(w, o, from, rt->g[k].point, L, target_at(&rt->g[k], a));
		from = rt->g[k].point;
	}
	/* the rest hangs from the last grab (follow-the-leader) */
	for (int j = from + 1; j < st->points; j++) {
		pt_vec3 parent = get(w, o + j - 1), x = get(w, o + j);
		pt_vec3 p = v3_add(parent, v3_scale(v3_norm_or(v3_sub(x, parent), pt_v3(0, -1, 0)), L[j]));
		if (!same(p, x))
			shift(w, o + j, p);
	}
}

void pt_touch_pre(pt_world *w, pt_inst *in, float a1, float h)
{
	pt_touch_rt *rt = in->touch;
	int verlet = in->solver == PT_SOLVER_VERLET;
	float k = 0.0f;
	if (verlet && rt->ngrabs > 0)
		k = powf(in->damping, 60.0f * h) * expf(-in->wind_drag * h);
	for (int g = 0; g < rt->ngrabs; g++) {
		const pt_grab *gr = &rt->g[g];
		int i = in->offset + in->strands[gr->strand].first + gr->point;
		rt->start[g] = get(w, i);
		if (!verlet)
			continue;
		/* heavy, and moving so that the integration lands it on the target (gravity and
		 * the instance wind's mean push as the kernel adds them; the rest is FABRIK's) */
		rt->w_saved[g] = w->w[i];
		w->w[i] *= PT_GRAB_HEAVY;
		if (k > 0.01f) {
			const pt_strand_rt *st = &in->strands[gr->strand];
			pt_vec3 acc = v3_add(v3_scale(in->gravity, st->gravity_scale),
			                     v3_scale(in->wind_velocity, in->wind_drag));
			pt_vec3 x = rt->start[g], T = target_at(gr, a1);
			pt_vec3 v = v3_scale(v3_sub(v3_sub(T, x), v3_scale(acc, h * h)), 1.0f / k);
			putp(w, i, v3_sub(x, v));
		}
	}
}

void pt_touch_post(pt_world *w, pt_inst *in, float a0, float a1)
{
	pt_touch_rt *rt = in->touch;
	if (in->solver == PT_SOLVER_VERLET) /* before anything reads the masses */
		for (int g = 0; g < rt->ngrabs; g++)
			w->w[in->offset + in->strands[rt->g[g].strand].first + rt->g[g].point] =
			    rt->w_saved[g];
	tlive tl[PT_MAX_TOUCH];
	int nt = rt->nlive, moved = 0;
	for (int i = 0; i < nt; i++) {
		const pt_touch *t = &rt->t[rt->live[i]];
		tpose p0 = pose_at(t, a0);
		tl[i].t = t;
		tl[i].a0 = a0, tl[i].a1 = a1;
		tl[i].end = pose_at(t, a1);
		tl[i].va = v3_sub(tl[i].end.a, p0.a);
		tl[i].vb = v3_sub(v3_add(tl[i].end.a, tl[i].end.d), v3_add(p0.a, p0.d));
		float m = fmaxf(v3_len(tl[i].va), v3_len(tl[i].vb));
		int n = 1 + (int)(m / (0.5f * t->radius));
		tl[i].samples = n < PT_TOUCH_SAMPLES ? n : PT_TOUCH_SAMPLES;
	}
	if (nt > 0)
		for (int s = 0; s < in->strand_count; s++)
			moved |= touch_strand(w, in, s, tl, nt);
	for (int g0 = 0, g1; g0 < rt->ngrabs; g0 = g1) {
		for (g1 = g0 + 1; g1 < rt->ngrabs && rt->g[g1].strand == rt->g[g0].strand; g1++)
			;
		grab_strand(w, in, rt, g0, g1, a1);
		moved = 1;
	}
	for (int g = 0; g < rt->ngrabs; g++) /* a grabbed point moves as its target moved it */
		putp(w, in->offset + in->strands[rt->g[g].strand].first + rt->g[g].point, rt->start[g]);
	if (moved && in->solver == PT_SOLVER_SPRINGBONE) {
		pt_sb_data *d = in->solver_data;
		d->tails_stale |= d->threevrm; /* three-vrm's own tails: from the moved points */
	}
}
