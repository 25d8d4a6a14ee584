/* The spring-bone chain step (both forms) and the per-substep form of its terms.
 *
 * Per step, per joint j, root to tip (VRMC_springBone 1.0, core/SCHEMA.md):
 *   next = cur + (cur - prev) kept                       inertia
 *   vrm:  next += stiff axis_j + push                    stiffness, external
 *   pull: next += push; next += stiff (rest - next)      gravity, pull toward rest
 *   next = joint + normalize(next - joint) L;  limit     length, angle limit
 *   per collider with signed distance d < 0 (beyond hit_radius):
 *         next -= dir d;  length;  limit
 *   prev = cur; cur = next
 *
 * axis_j is "parentWorldRotation * initialLocalRotation * boneAxis". On a straight strand
 * joint j's bone axis, in its parent's rest frame, is the parent's own bone
 * axis. For joint 0 the parent is the head: axis_0 = R_head direction. For j > 0 the
 * parent's world rotation is its rest frame turned by the shortest arc from the parent's
 * axis to where its segment now points (the spec's fromToQuaternion(boneAxis, to)), so
 * applied to that same axis it gives exactly the parent's current segment direction:
 * axis_j = e_{j-1}, the unit direction of segment j-1 after its update this substep
 * (its tail is joint j's world position). No rotation is needed for stiffness or a cone;
 * the full parent frame (the product of those arcs and the head rotation, twist
 * included) is only tracked, as a quaternion, on chains with a hinge, whose axis needs it.
 *
 * A chain with a rest shape (len, dir): each joint's world rotation is its head-local
 * rest rotation turned by D_j, and D_j = arc(axis_j -> e_j) D_{j-1} with D_{-1} the head
 * rotation (the spec's W_j = fromTo(axis_j, e_j) W_{j-1} initialLocalRotation_j, written
 * relative to the rest pose). So the frame is tracked and axis_{j+1} = D_j dir_{j+1};
 * for a straight chain that is again e_j.
 */
#include "springbone.h"

/* ---- per-substep terms ---------------------------------------------------------------
 *
 * Both forms are written per 1/60 s frame; a substep of h seconds is f = 60 h frames.
 *
 * Inertia. The spec keeps (1 - drag) of the tail's motion per frame, so over a substep
 * kept = (1 - drag)^f: the same decay per second at every substep count.
 *
 * VRM pushes. Without the length step, the tail's displacement per frame u follows
 * u' = (1 - d) u + p with p = c / 60, c = stiffness axis + gravity_power gravity_dir (m/s).
 * That is the 1/60 s sampling of dv/dt = -λ v + a with e^(-λ/60) = 1 - d, whose exact
 * step over τ seconds is v' = e^(-λτ) v + (a/λ)(1 - e^(-λτ)). Per frame this reads
 * 60 p = (a/λ) d, so the terminal velocity is a/λ = c / d (m/s), and over a substep
 * the displacement increment is
 *     q = h (a/λ)(1 - kept) = c h (1 - kept) / d,
 * which tends to c h f (= 60 c h^2, a plain acceleration) as d -> 0 and is c h at d = 1.
 * At f = 1, q = c / 60 = p: the spec itself. Decay rate and terminal velocity per second
 * are the spec's at every substep count, and the steady direction is exactly the spec's
 * because it does not depend on q's size at all: at rest the push must be radial, so
 * the segment lies along normalize(c) (tanθ = gravity_power / stiffness when the two
 * are perpendicular).
 *
 * Pull stiffness. The lesson pulls a fraction s of the way to rest per frame: a force
 * proportional to the displacement. Against gravity (g h^2 per frame, h = 1/60 s) one
 * joint settles where tanθ = g h^2 (1 - s) / (s L), the balance of a spring constant
 * K = s / ((1 - s) h^2) per s^2 with g. Keeping K over a substep of h_s = f h (gravity
 * stays an acceleration, g h_s^2 per substep) means
 *     s_s / (1 - s_s) = s f^2 / (1 - s),   s_s = s f^2 / (1 - s + s f^2),
 * which leaves every steady angle unchanged. At f = 1 both terms are the lesson's.
 *
 * What no conversion can keep. A chain is follow-the-leader: each tail is projected onto
 * its parent's new position and never acts back on the parent, which feeds energy into
 * the chain. At 60 Hz the spec's large steps dissipate it (each projection of a long
 * per-frame step shortens the motion); with more substeps less is lost, so a driven
 * chain swings wider and longer (tests/springbone/test_sb_substeps.c measures it), and
 * with little drag it may not settle for seconds. Single joints and steady states are
 * unaffected.
 */
enum { FRAME_HZ = 60 };

/* kept = (1 - d)^f and gain = (1 - kept) / d, the substep's share of the terminal push. */
static void inertia_terms(float d, float f, float *kept, float *gain)
{
	if (f == 1.0f) {
		*kept = 1.0f - d;
		*gain = 1.0f;
	} else if (d >= 1.0f) {
		*kept = 0.0f;
		*gain = 1.0f;
	} else if (d <= 0.0f) {
		*kept = 1.0f;
		*gain = f;
	} else {
		float l = f * log1pf(-d);
		*kept = expf(l);
		*gain = -expm1f(l) / d; /* expm1: no cancellation for small drag */
	}
}

void pt_sb_convert(pt_springbone_form form, const pt_sb_param *p, int n, float h, pt_vec3 gravity,
                   pt_sb_joint *out)
{
	float f = h * (float)FRAME_HZ;
	/* h = 1/60 in float times 60 is 1 within rounding: snap it, so that a 60 Hz step is
	 * the spec's arithmetic and nothing else. */
	if (fabsf(f - 1.0f) < 1e-5f)
		f = 1.0f;
	for (int i = 0; i < n; i++) {
		const pt_sb_param *q = &p[i];
		pt_sb_joint *o = &out[i];
		float gain;
		inertia_terms(q->drag, f, &o->kept, &gain);
		o->hit_radius = q->hit_radius;
		if (form == PT_SPRINGBONE_PULL) {
			float s = q->stiffness, sf2 = s * f * f;
			o->stiff = f == 1.0f ? s : sf2 / (1.0f - s + sf2);
			o->push = v3_scale(gravity, h * h);
		} else {
			float hg = h * gain;
			o->stiff = q->stiffness * hg;
			o->push = v3_scale(q->gravity_dir, q->gravity_power * hg);
		}
	}
}

pt_sb_limit pt_sb_limit_from_def(const pt_joint_def *j)
{
	pt_sb_limit l;
	l.type = j->limit;
	l.cos_a = cosf(j->limit_angle);
	l.sin_a = sinf(j->limit_angle);
	l.axis = v3_norm_or(j->limit_axis, pt_v3(1.0f, 0.0f, 0.0f));
	/* A cone of pi allows every direction: skip it in the step. */
	if (l.type == PT_LIMIT_CONE && !(j->limit_angle < 3.14159265f))
		l.type = PT_LIMIT_NONE;
	return l;
}

/* ---- the step ------------------------------------------------------------------------ */

/* A unit vector perpendicular to unit a, chosen deterministically. */
static pt_vec3 any_perp(pt_vec3 a)
{
	pt_vec3 t = fabsf(a.x) < 0.9f ? pt_v3(1.0f, 0.0f, 0.0f) : pt_v3(0.0f, 1.0f, 0.0f);
	return v3_norm_or(v3_cross(a, t), pt_v3(0.0f, 0.0f, 1.0f));
}

/* Shortest-arc rotation taking unit a to unit b, times a positive scale: (a x b, 1 + a.b)
 * is the half-angle quaternion without any trigonometry, sqrt(2 (1 + a.b)) long. */
static inline pt_quat q_from_to_scaled(pt_vec3 a, pt_vec3 b)
{
	float c = v3_dot(a, b);
	if (c < -0.99999f) {
		pt_vec3 t = any_perp(a);
		pt_quat r = {t.x, t.y, t.z, 0.0f};
		return r;
	}
	pt_vec3 k = v3_cross(a, b);
	pt_quat r = {k.x, k.y, k.z, 1.0f + c};
	return r;
}

/* The parent frame after its segment turned from `axis` to `e`: one normalisation for
 * the product instead of one per factor. */
static inline pt_quat turn_frame(pt_quat parent, pt_vec3 axis, pt_vec3 e)
{
	pt_quat q = q_mul(q_from_to_scaled(axis, e), parent);
	float inv = 1.0f / sqrtf(q_dot(q, q));
	pt_quat r = {q.x * inv, q.y * inv, q.z * inv, q.w * inv};
	return r;
}

/* Clamps unit direction e of a segment whose rest direction (rotated by the parent) is
 * `rest`; `n` is the hinge's plane normal in world space. Works on cosines and
 * sines only: the clamped direction is cos_a rest + sin_a t, t the unit tangent toward
 * e, so no acos/atan2 is needed. */
static inline pt_vec3 apply_limit(const pt_sb_limit *l, pt_vec3 e, pt_vec3 rest, pt_vec3 n)
{
	if (l->type == PT_LIMIT_CONE) {
		float c = v3_dot(e, rest);
		if (c >= l->cos_a)
			return e;
		pt_vec3 t = v3_norm_or(v3_sub(e, v3_scale(rest, c)), any_perp(rest));
		return v3_add(v3_scale(rest, l->cos_a), v3_scale(t, l->sin_a));
	}
	/* Hinge: into the plane normal to n, then within the angle of the rest direction's
	 * projection on that plane (the plane's zero). An axis along the bone leaves no
	 * zero direction: then only the plane applies. */
	pt_vec3 r = v3_sub(rest, v3_scale(n, v3_dot(rest, n)));
	pt_vec3 ep = v3_sub(e, v3_scale(n, v3_dot(e, n)));
	if (!(v3_len2(r) > 1e-12f))
		return v3_norm_or(ep, any_perp(n));
	r = v3_scale(r, 1.0f / v3_len(r));
	ep = v3_norm_or(ep, r);
	if (v3_dot(ep, r) >= l->cos_a)
		return ep;
	pt_vec3 t = v3_cross(n, r);
	float side = v3_dot(ep, t) >= 0.0f ? l->sin_a : -l->sin_a;
	return v3_add(v3_scale(r, l->cos_a), v3_scale(t, side));
}

static inline pt_vec3 load3(const float *x, const float *y, const float *z, int i)
{
	return pt_v3(x[i], y[i], z[i]);
}

/* Where a chain's step has got to: joint j's world position (the tail of joint j - 1),
 * its rest axis, and the parent's world rotation (tracked for hinges only). */
typedef struct chain_state {
	pt_vec3 joint, axis;
	pt_quat parent;
} chain_state;

static inline void chain_begin(const pt_sb_chain *c, pt_pose fr, const pt_mat3 *R,
                               chain_state *st, float *x, float *y, float *z, float *px,
                               float *py, float *pz)
{
	st->joint = v3_add(fr.p, m3_mul(R, c->anchor));
	x[0] = px[0] = st->joint.x;
	y[0] = py[0] = st->joint.y;
	z[0] = pz[0] = st->joint.z;
	st->axis = m3_mul(R, c->dir ? c->dir[0] : c->direction);
	st->parent = fr.q;
}

static inline void step_joint(const pt_sb_chain *c, const pt_sb_frame *f, chain_state *st, int j,
                              float *x, float *y, float *z, float *px, float *py, float *pz)
{
	const pt_sb_joint *J = &c->j[j];
	const pt_sb_limit *lim = c->lim && c->lim[j].type != PT_LIMIT_NONE ? &c->lim[j] : 0;
	const float L = c->len ? c->len[j] : c->length;
	const int fixed = !c->free_length;
	const pt_vec3 joint = st->joint, axis = st->axis;
	int i = j + 1;
	pt_vec3 cur = load3(x, y, z, i), prev = load3(px, py, pz, i);
	px[i] = cur.x, py[i] = cur.y, pz[i] = cur.z;
	float Lt = L; /* the tail's length: three-vrm's from the child bone before the step */
	if (c->tail) {
		Lt = v3_len(v3_sub(cur, joint));
		cur = c->tail[j], prev = c->ptail[j];
	}
	if (f->center) {
		cur = v3_add(m3_mul(&f->mc, cur), f->tc);
		prev = v3_add(m3_mul(&f->mp, prev), f->tp);
	}
	pt_vec3 next = v3_add(cur, v3_scale(v3_sub(cur, prev), J->kept));
	if (c->form == PT_SPRINGBONE_PULL) {
		next = v3_add(next, J->push);
		pt_vec3 rest = v3_add(joint, v3_scale(axis, L));
		next = v3_add(next, v3_scale(v3_sub(rest, next), J->stiff));
	} else {
		next = v3_add(v3_add(next, v3_scale(axis, J->stiff)), J->push);
	}
	pt_vec3 n = lim && lim->type == PT_LIMIT_HINGE ? q_rotate(st->parent, lim->axis) : axis;
	pt_vec3 e = v3_norm_or(v3_sub(next, joint), axis);
	if (lim)
		e = apply_limit(lim, e, axis, n);
	if (fixed || lim)
		next = v3_add(joint, v3_scale(e, fixed ? Lt : v3_len(v3_sub(next, joint))));
	for (int k = 0; k < c->ncols; k++) {
		pt_vec3 dir;
		float d;
		if (!pt_sb_penetrates(&f->cols[c->cols[k]], next, J->hit_radius, &d, &dir))
			continue;
		next = v3_sub(next, v3_scale(dir, d));
		float len = fixed ? Lt : v3_len(v3_sub(next, joint));
		e = v3_norm_or(v3_sub(next, joint), e);
		if (lim)
			e = apply_limit(lim, e, axis, n);
		next = v3_add(joint, v3_scale(e, len));
	}
	if (c->tail) { /* the tail moves on; the bone points at it at its rest length */
		c->ptail[j] = c->tail[j], c->tail[j] = next;
		next = v3_add(joint, v3_scale(e, L));
	}
	x[i] = next.x, y[i] = next.y, z[i] = next.z;
	if (c->hinge || c->dir)
		st->parent = turn_frame(st->parent, axis, e);
	st->axis = c->dir && j + 1 < c->joints ? q_rotate(st->parent, c->dir[j + 1]) : e;
	st->joint = next;
}

pt_pose pt_sb_branch_frame(const pt_sb_chain *p, pt_pose root, int k, pt_vec3 rest_k,
                           const float *x, const float *y, const float *z)
{
	pt_quat R = root.q;
	int last = k < p->joints ? k : p->joints - 1;
	for (int j = 0; j <= last; j++) {
		pt_vec3 axis = q_rotate(R, p->dir ? p->dir[j] : p->direction);
		pt_vec3 e = v3_norm_or(v3_sub(load3(x, y, z, j + 1), load3(x, y, z, j)), axis);
		R = turn_frame(R, axis, e);
	}
	pt_pose f = {v3_sub(load3(x, y, z, k), q_rotate(R, rest_k)), R};
	return f;
}

/* Chains are independent: stepping joint j of every chain before joint j + 1 of any
 * lets the CPU overlap one chain's square roots and divisions with the next chain's,
 * which a single chain, each joint waiting for its parent, cannot. Branches wait for
 * their parents: chains step level by level (level 0 on the head or a bone, level L + 1
 * on a chain of level L). */
void pt_sb_step_chains(const pt_sb_chain *c, int n, const pt_sb_frame *f, const int *first,
                       float *x, float *y, float *z, float *px, float *py, float *pz)
{
	chain_state st[PT_MAX_STRANDS];
	pt_pose root[PT_MAX_STRANDS];    /* each chain's frame this step (branches' parents) */
	unsigned char level[PT_MAX_STRANDS];
	int levels = 1;
	for (int s = 0; s < n; s++) {
		level[s] = c[s].parent > 0 ? (unsigned char)(level[c[s].parent - 1] + 1) : 0;
		levels = level[s] + 1 > levels ? level[s] + 1 : levels;
	}
	for (int L = 0; L < levels; L++) {
		int most = 0;
		for (int s = 0; s < n; s++) {
			if (level[s] != L)
				continue;
			int b = first[s];
			const pt_mat3 *R = f->rot;
			pt_mat3 own;
			root[s] = *f->head;
			if (c[s].parent > 0) {
				int p = c[s].parent - 1, pb = first[p];
				root[s] = pt_sb_branch_frame(&c[p], root[p], c[s].parent_point,
				                             c[s].parent_rest, x + pb, y + pb, z + pb);
				own = m3_from_quat(root[s].q);
				R = &own;
			} else if (c[s].frame > 0) {
				root[s] = f->frames[c[s].frame - 1];
				R = &f->frame_rots[c[s].frame - 1];
			}
			chain_begin(&c[s], root[s], R, &st[s], x + b, y + b, z + b, px + b, py + b,
			            pz + b);
			most = c[s].joints > most ? c[s].joints : most;
		}
		for (int j = 0; j < most; j++)
			for (int s = 0; s < n; s++) {
				int b = first[s];
				if (level[s] == L && j < c[s].joints)
					step_joint(&c[s], f, &st[s], j, x + b, y + b, z + b, px + b,
					           py + b, pz + b);
			}
	}
}

void pt_sb_step_chain(const pt_sb_chain *c, const pt_sb_frame *f, float *x, float *y, float *z,
                      float *px, float *py, float *pz)
{
	const int first = 0;
	pt_sb_step_chains(c, 1, f, &first, x, y, z, px, py, pz);
}
