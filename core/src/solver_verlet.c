/* The verlet solver: a position-based particle chain per strand.
 *
 * Per substep of length h:
 *  1. Verlet integration of every point: x' = x + (x - px) k + a h^2, where k is the
 *     kept-velocity factor (damping is defined per 1/60 s frame, so k = damping^(60 h)
 *     and the decay per second is the same at any substep count). Air acts as drag
 *     toward the (gusting) wind velocity W: a = D (W - v), D = wind.drag in 1/s. The
 *     velocity part is applied exactly, as the factor e^(-D h) on k (so it too is
 *     substep-invariant: e^(-D) per second), the rest as the acceleration D W. With no
 *     wind this is air resistance, which is what lets hair settle after a shake.
 *  2. The roots are pinned to their anchors on the (interpolated) head.
 *  3. Lengths. Exact mode: the chain's linearised length constraints are solved directly
 *     (`iterations` Newton steps of a tridiagonal system, chain_solve) with corrections
 *     along each segment's direction at the start of the substep, as SHAKE does. Why:
 *     projecting along the *current* direction (nearest point, what Gauss-Seidel distance
 *     passes do) removes a slice of kinetic energy every substep, a numerical damping
 *     proportional to h, so a swing decayed per second 0.38 / 0.47 / 0.52 / 0.55 at
 *     1 / 2 / 4 / 8 substeps against the closed form 0.576; projecting along the old
 *     direction is the constrained Stoermer-Verlet scheme, which keeps energy, so all
 *     damping is the physical one above and the look is the same at every substep count.
 *     Nonlinear mode: `iterations` Gauss-Seidel passes whose correction grows with strain
 *     (soft when barely stretched, rigid beyond max_strain).
 *  4. Bending: each point moves a fraction toward where the rest shape puts it relative to
 *     its parent segment (bend_pass), the root segment toward its rest direction. The
 *     fraction is per 1/60 s frame and converted per substep.
 *  5. Self-collision between strands (optional, spatial hash).
 *  6. Exact mode: follow-the-leader (Mueller et al. 2012) puts every point at exactly
 *     segment_length from its parent and resolves colliders point by point, pushing in
 *     the plane normal to the segment so the push keeps the length (a push along the
 *     collider normal and a re-projection fight each other where a point sits between
 *     two colliders, and left segments up to 16 % long on the stress sequence).
 *     Nonlinear mode: a strain limit at (1 + max_strain) L, then a plain collider pass.
 *  7. Velocities (the previous positions) are set once, from what happened above:
 *     - a collider push is a position correction, never velocity;
 *     - follow-the-leader moved only the child; the velocity is split between child and
 *       parent by inverse mass, as a mass-weighted projection would have moved them, so
 *       the pass conserves momentum (Mueller's fix px_parent += 0.9 d removes 90 % of the
 *       child's correction from the parent alone, which damps in a step-dependent way);
 *     - a point in contact keeps no velocity into the collider (inelastic), and Coulomb
 *       friction (PT_CONTACT_FRICTION) takes tangential velocity up to mu times the normal
 *       impulse. This is the resting-contact fix: before it, a point lying on a collider
 *       kept the velocity it had before its push, g h^2 / (1 - k) per substep into the
 *       collider, about 2 m/s whatever h; every push converted part of it into sliding
 *       and the follow-the-leader fix fed it to the parent, so bangs on a forehead never
 *       came to rest at 4 or more substeps.
 */
#include <math.h>

#include "selfcollide.h"
#include "verlet_lanes.h"
#include "world_internal.h"

/* Deterministic gust factor in [-1, 1] for strand s at time t: three incommensurate
 * sines with seeded phases. */
static float gust(uint32_t seed, int s, double t)
{
	uint32_t h = seed * 2654435761u ^ (uint32_t)(s + 1) * 40503u;
	float p1 = (float)(h & 1023u) * 0.00614f, p2 = (float)((h >> 10) & 1023u) * 0.00614f;
	float p3 = (float)((h >> 20) & 1023u) * 0.00614f;
	float ft = (float)fmod(t, 1000.0);
	return 0.5f * sinf(2.1f * ft + p1) + 0.3f * sinf(4.7f * ft + p2) +
	       0.2f * sinf(9.3f * ft + p3);
}

static void integrate(pt_world *w, int off, int n, float k, pt_vec3 ah2)
{
	void (*kern)(float *, float *, int, float, float) =
	    w->kernel == PT_KERNEL_AVX2 ? pt_integrate_avx2 : pt_integrate_scalar;
	kern(w->x + off, w->px + off, n, k, ah2.x);
	kern(w->y + off, w->py + off, n, k, ah2.y);
	kern(w->z + off, w->pz + off, n, k, ah2.z);
}

static inline pt_vec3 P(const pt_world *w, int i)
{
	return pt_v3(w->x[i], w->y[i], w->z[i]);
}
static inline void SET(pt_world *w, int i, pt_vec3 p)
{
	w->x[i] = p.x, w->y[i] = p.y, w->z[i] = p.z;
}

static void distance_pass(pt_world *w, const pt_inst *in, const pt_strand_rt *st, int base)
{
	int nonlinear = in->stretch == PT_STRETCH_NONLINEAR;
	float s0 = in->stretch_stiffness, inv_emax = 1.0f / in->stretch_max_strain;
	for (int j = 0; j + 1 < st->points; j++) {
		int a = base + j, b = a + 1;
		float wa = w->w[a], wb = w->w[b], L = w->len[b];
		float dx = w->x[b] - w->x[a], dy = w->y[b] - w->y[a], dz = w->z[b] - w->z[a];
		float d2 = dx * dx + dy * dy + dz * dz;
		if (!(d2 > 1e-20f))
			continue;
		float d = sqrtf(d2);
		float err = (d - L) / d; /* fraction of the segment vector to remove */
		if (nonlinear) {
			float e = fabsf(d - L) / L * inv_emax;
			float stiff = e >= 1.0f ? 1.0f : s0 + (1.0f - s0) * e * e;
			err *= stiff;
		}
		float sa = err * wa / (wa + wb), sb = err * wb / (wa + wb);
		w->x[a] += dx * sa, w->y[a] += dy * sa, w->z[a] += dz * sa;
		w->x[b] -= dx * sb, w->y[b] -= dy * sb, w->z[b] -= dz * sb;
	}
}

/* Exact-mode lengths: Newton steps on the chain's constraints C_j = |q_j|^2 - L^2
 * (q_j = x_{j+1} - x_j), each point moved by w_i (lam_{i-1} e_{i-1} - lam_i e_i) along
 * the start-of-substep segment directions e_j (SHAKE). Linearised, the multipliers solve
 * a tridiagonal system (Thomas algorithm, O(n)):
 *   (w_j + w_{j+1}) (q_j.e_j) lam_j - w_{j+1} (q_j.e_{j+1}) lam_{j+1} - w_j (q_j.e_{j-1}) lam_{j-1}
 *     = (L^2 - |q_j|^2) / 2.
 * Where a segment has turned far within the substep (cos < PT_SHAKE_COS_MIN) its current
 * direction is used instead (the old one would meet the constraint sphere far away). A
 * step that does not reduce the largest error is undone and the solve stops, so it never
 * makes a strand worse; follow-the-leader then takes the rest. Newton converges
 * quadratically: once every |q^2 - L^2| is under PT_SOLVE_TOL of the least L^2 (a length
 * error of 5e-5) the remaining iterations are skipped. */
static void chain_solve(pt_world *w, const pt_inst *in, const pt_strand_rt *st, int base)
{
	int m = st->points - 1;
	float L2[PT_MAX_POINTS];
	float ex[PT_MAX_POINTS], ey[PT_MAX_POINTS], ez[PT_MAX_POINTS];
	float cp[PT_MAX_POINTS], dp[PT_MAX_POINTS], lam[PT_MAX_POINTS];
	float sx[PT_MAX_POINTS], sy[PT_MAX_POINTS], sz[PT_MAX_POINTS];
	const float *X = w->x + base, *Y = w->y + base, *Z = w->z + base, *W = w->w + base;
	float err = 0.0f;
	for (int j = 0; j < m; j++) {
		L2[j] = w->len[base + j + 1] * w->len[base + j + 1];
		float qx = X[j + 1] - X[j], qy = Y[j + 1] - Y[j], qz = Z[j + 1] - Z[j];
		float ox = w->px[base + j + 1] - w->px[base + j];
		float oy = w->py[base + j + 1] - w->py[base + j];
		float oz = w->pz[base + j + 1] - w->pz[base + j];
		float qe = qx * ox + qy * oy + qz * oz, qq = qx * qx + qy * qy + qz * qz;
		float oo = ox * ox + oy * oy + oz * oz;
		int keep = qe > 0.0f && qe * qe > PT_SHAKE_COS_MIN * PT_SHAKE_COS_MIN * qq * oo;
		ex[j] = keep ? ox : qx, ey[j] = keep ? oy : qy, ez[j] = keep ? oz : qz;
		err = fmaxf(err, fabsf(qq - L2[j]));
	}
	float tol = 1e30f;
	for (int j = 0; j < m; j++)
		tol = fminf(tol, L2[j]);
	tol *= PT_SOLVE_TOL; /* converged: no more Newton steps */
	for (int it = 0; it < in->iterations && err > tol; it++) {
		for (int i = 1; i <= m; i++)
			sx[i] = X[i], sy[i] = Y[i], sz[i] = Z[i];
		for (int j = 0; j < m; j++) {
			float qx = X[j + 1] - X[j], qy = Y[j + 1] - Y[j], qz = Z[j + 1] - Z[j];
			float diag = (W[j] + W[j + 1]) * (qx * ex[j] + qy * ey[j] + qz * ez[j]);
			float up =
			    j + 1 < m
			        ? -W[j + 1] * (qx * ex[j + 1] + qy * ey[j + 1] + qz * ez[j + 1])
			        : 0.0f;
			float lo = j > 0
			               ? -W[j] * (qx * ex[j - 1] + qy * ey[j - 1] + qz * ez[j - 1])
			               : 0.0f;
			float rhs = 0.5f * (L2[j] - (qx * qx + qy * qy + qz * qz));
			float den = diag - (j > 0 ? lo * cp[j - 1] : 0.0f);
			den = fabsf(den) > 1e-20f ? den : 1e-20f;
			cp[j] = up / den;
			dp[j] = (rhs - (j > 0 ? lo * dp[j - 1] : 0.0f)) / den;
		}
		lam[m - 1] = dp[m - 1];
		for (int j = m - 2; j >= 0; j--)
			lam[j] = dp[j] - cp[j] * lam[j + 1];
		for (int i = 1; i <= m; i++) {
			float lx = lam[i - 1] * ex[i - 1], ly = lam[i - 1] * ey[i - 1],
			      lz = lam[i - 1] * ez[i - 1];
			if (i < m)
				lx -= lam[i] * ex[i], ly -= lam[i] * ey[i], lz -= lam[i] * ez[i];
			w->x[base + i] += W[i] * lx, w->y[base + i] += W[i] * ly,
			    w->z[base + i] += W[i] * lz;
		}
		float after = 0.0f;
		for (int j = 0; j < m; j++) {
			float qx = X[j + 1] - X[j], qy = Y[j + 1] - Y[j], qz = Z[j + 1] - Z[j];
			after = fmaxf(after, fabsf(qx * qx + qy * qy + qz * qz - L2[j]));
		}
		if (!(after < err)) {
			for (int i = 1; i <= m; i++)
				w->x[base + i] = sx[i], w->y[base + i] = sy[i],
				            w->z[base + i] = sz[i];
			break;
		}
		err = after;
	}
}

/* Rest direction of segment i (ending at point i) turned into world space by R. */
static inline pt_vec3 rest_dir(const pt_world *w, const pt_mat3 *R, int i)
{
	return m3_mul(R, pt_v3(w->ux[i], w->uy[i], w->uz[i]));
}

/* Step 4: each point toward where the rest shape puts it from its parent: the root
 * segment along its rest direction, segment i along its rest direction turned by the arc
 * that turns the parent segment's rest direction into the parent's current direction
 * (for a straight rest shape: the straight continuation of the parent). The correction
 * is shared with the parent by inverse mass (the root's share is the head's): a one-way
 * pull toward a target the parent defines is a follower force, and with a curved rest
 * shape it spun a strand round its root for ever with the head still. */
static void bend_pass(pt_world *w, const pt_strand_rt *st, int base, const pt_mat3 *R, float b)
{
	for (int j = 1; j < st->points; j++) {
		int i = base + j;
		pt_vec3 parent = P(w, i - 1), dir = rest_dir(w, R, i);
		if (j > 1) {
			pt_vec3 a = rest_dir(w, R, i - 1);
			dir = v3_turn(dir, a, v3_norm_or(v3_sub(parent, P(w, i - 2)), a));
		}
		pt_vec3 target = v3_add(parent, v3_scale(dir, w->len[i]));
		pt_vec3 x = P(w, i), d = v3_scale(v3_sub(target, x), b);
		float wp = w->w[i - 1], wc = w->w[i], sc = wc / (wp + wc);
		SET(w, i, v3_add(x, v3_scale(d, sc)));
		SET(w, i - 1, v3_sub(parent, v3_scale(d, 1.0f - sc)));
	}
}

/* Pushes p (at distance L from parent) out of the colliders, in the plane normal to the
 * segment where that clears the collider to first order, then back onto the length;
 * rounds until clear (PT_CONTACT_ROUNDS), then a last plain push. *n gets the normal of
 * the last collider that pushed. Returns 1 if p moved. */
static int contact_push(const pt_collider_rt *cols, int nc, uint32_t mask, float r, pt_vec3 parent,
                        float L, pt_vec3 *p, pt_vec3 *n)
{
	pt_vec3 fallback = pt_v3(0, -1, 0);
	int moved = 0;
	for (int round = 0; round < PT_CONTACT_ROUNDS; round++) {
		int hit = 0;
		for (int c = 0; c < nc; c++) {
			if (!(mask & (1u << c)))
				continue;
			pt_vec3 dir;
			float d = pt_collider_distance(&cols[c], *p, &dir) - r;
			if (!(d < -PT_CONTACT_EPS)) /* a micron deep: clear enough to stop the rounds */
				continue;
			hit = 1, *n = dir;
			/* p is at length L here: the first round's projection, then re-projections */
			pt_vec3 u = v3_scale(v3_sub(*p, parent), 1.0f / L);
			float du = v3_dot(dir, u), tt = 1.0f - du * du;
			pt_vec3 t = v3_sub(dir, v3_scale(u, du));
			*p = tt > PT_CONTACT_TANGENT_MIN ? v3_sub(*p, v3_scale(t, d / tt))
			                                 : v3_sub(*p, v3_scale(dir, d));
			*p = v3_add(parent, v3_scale(v3_norm_or(v3_sub(*p, parent), fallback), L));
		}
		moved |= hit;
		if (!hit)
			return moved;
	}
	/* Still wedged (between head and neck, say): no point at length L clears every
	 * collider, so give way on the length only for penetration beyond PT_CONTACT_SLOP. */
	pt_vec3 before = *p;
	for (int c = 0; c < nc; c++) {
		if (!(mask & (1u << c)))
			continue;
		pt_vec3 dir;
		float d = pt_collider_distance(&cols[c], *p, &dir) - r + PT_CONTACT_SLOP;
		if (d < 0.0f)
			*p = v3_sub(*p, v3_scale(dir, d)), *n = dir;
	}
	return moved | (v3_len2(v3_sub(*p, before)) > 0.0f);
}

/* Step 7 for one point: velocity v (x - px) with its push c removed; in contact along n,
 * no velocity into the collider and Coulomb friction on the tangential rest. */
static pt_vec3 contact_velocity(pt_vec3 v, pt_vec3 c, pt_vec3 n)
{
	float vn = v3_dot(v, n), impulse = v3_dot(c, n);
	if (vn < 0.0f)
		v = v3_sub(v, v3_scale(n, vn)), impulse -= vn, vn = 0.0f;
	pt_vec3 vt = v3_sub(v, v3_scale(n, vn));
	/* a push that ended along another collider's normal can have no impulse along n */
	float lt = v3_len(vt), cap = PT_CONTACT_FRICTION * fmaxf(impulse, 0.0f);
	if (lt <= cap)
		return v3_scale(n, vn);
	return v3_sub(v, v3_scale(vt, cap / lt));
}

/* Follow-the-leader with per-point collisions (steps 6 and 7 of the file comment). */
static void ftl_pass(pt_world *w, const pt_inst *in, const pt_strand_rt *st, int base,
                     const pt_collider_rt *cols)
{
	int n = st->points;
	pt_vec3 D[PT_MAX_POINTS], C[PT_MAX_POINTS], N[PT_MAX_POINTS], V[PT_MAX_POINTS];
	pt_vec3 parent = P(w, base), fallback = pt_v3(0, -1, 0);
	for (int j = 1; j < n; j++) {
		int i = base + j;
		float L = w->len[i], r = w->rad[i];
		pt_vec3 orig = P(w, i);
		pt_vec3 proj =
		    v3_add(parent, v3_scale(v3_norm_or(v3_sub(orig, parent), fallback), L));
		pt_vec3 p = proj;
		N[j] = pt_v3(0, 0, 0);
		contact_push(cols, in->collider_count, st->collider_mask, r, parent, L, &p, &N[j]);
		SET(w, i, p);
		D[j] = v3_sub(proj, orig), C[j] = v3_sub(p, proj);
		V[j] = v3_sub(v3_sub(p, pt_v3(w->px[i], w->py[i], w->pz[i])), C[j]);
		parent = p;
	}
	for (int j = 1; j < n; j++) {
		float wa = w->w[base + j - 1], wb = w->w[base + j];
		pt_vec3 d = v3_scale(D[j], wa / (wa + wb)); /* 0 for the root's child */
		V[j] = v3_sub(V[j], d);
		if (j >= 2)
			V[j - 1] = v3_sub(V[j - 1], d);
	}
	for (int j = 1; j < n; j++) {
		int i = base + j;
		if (v3_len2(N[j]) > 0.0f)
			V[j] = contact_velocity(V[j], C[j], N[j]);
		pt_vec3 pp = v3_sub(P(w, i), V[j]);
		w->px[i] = pp.x, w->py[i] = pp.y, w->pz[i] = pp.z;
	}
}

/* Nonlinear mode, after its soft passes: every segment within (1 -+ max_strain) L, root
 * to tip (Provot's strain limit), then the point pushed out of the colliders with the
 * contact rule of ftl_pass. The limit's cut is left to become velocity, so it also stops
 * the motion that reached it, at any substep count (the soft passes alone let the stress
 * sequence stretch 59 % at 1 substep and 10 % at 4). */
static void limit_collide_pass(pt_world *w, const pt_inst *in, const pt_strand_rt *st, int base,
                               const pt_collider_rt *cols)
{
	float e = in->stretch_max_strain;
	for (int j = 1; j < st->points; j++) {
		int i = base + j;
		pt_vec3 parent = P(w, i - 1), p = P(w, i), d = v3_sub(p, parent);
		float l2 = v3_len2(d), lmax = w->len[i] * (1.0f + e), lmin = w->len[i] * (1.0f - e);
		if (l2 > lmax * lmax)
			p = v3_add(parent, v3_scale(d, lmax / sqrtf(l2)));
		else if (l2 < lmin * lmin && l2 > 1e-20f)
			p = v3_add(parent, v3_scale(d, lmin / sqrtf(l2)));
		pt_vec3 before = p, n = pt_v3(0, 0, 0);
		contact_push(cols, in->collider_count, st->collider_mask, w->rad[i], parent,
		             v3_len(v3_sub(p, parent)), &p, &n);
		SET(w, i, p);
		if (v3_len2(n) > 0.0f) {
			pt_vec3 v = v3_sub(before, pt_v3(w->px[i], w->py[i], w->pz[i]));
			pt_vec3 pp = v3_sub(p, contact_velocity(v, v3_sub(p, before), n));
			w->px[i] = pp.x, w->py[i] = pp.y, w->pz[i] = pp.z;
		}
	}
}

/* Kept-velocity factor for a substep of h seconds: damping is per 1/60 s frame. */
static float kept_factor(const pt_inst *in, float h)
{
	return powf(in->damping, 60.0f * h) * expf(-in->wind_drag * h);
}

static float bend_fraction(const pt_inst *in, float h)
{
	return in->bend > 0.0f ? 1.0f - powf(1.0f - in->bend, 60.0f * h) : 0.0f;
}

/* Gravity plus the wind's push on strand s at time t. */
static pt_vec3 strand_accel(const pt_inst *in, int s, double t)
{
	pt_vec3 wind = in->wind_velocity;
	if (in->wind_turbulence > 0.0f && v3_len2(wind) > 0.0f)
		wind = v3_scale(wind, 1.0f + in->wind_turbulence * gust(in->wind_seed, s, t));
	return v3_add(v3_scale(in->gravity, in->strands[s].gravity_scale),
	              v3_scale(wind, in->wind_drag));
}

/* The per-instance path (any options): one strand after another. */
static void verlet_substep(pt_world *w, pt_inst *in, const pt_pose *head, const pt_mat3 *rot,
                           const pt_collider_rt *cols, float h, double t)
{
	float k = kept_factor(in, h), h2 = h * h;
	for (int s = 0; s < in->strand_count; s++) {
		const pt_strand_rt *st = &in->strands[s];
		int base = in->offset + st->first;
		integrate(w, base, st->points, k, v3_scale(strand_accel(in, s, t), h2));
		pt_vec3 root = v3_add(head->p, m3_mul(rot, st->anchor));
		SET(w, base, root);
		w->px[base] = root.x, w->py[base] = root.y, w->pz[base] = root.z;
	}
	for (int s = 0; s < in->strand_count; s++) {
		const pt_strand_rt *st = &in->strands[s];
		if (in->stretch == PT_STRETCH_EXACT)
			chain_solve(w, in, st, in->offset + st->first);
		else
			for (int it = 0; it < in->iterations; it++)
				distance_pass(w, in, st, in->offset + st->first);
	}
	float b = bend_fraction(in, h);
	if (b > 0.0f)
		for (int s = 0; s < in->strand_count; s++) {
			const pt_strand_rt *st = &in->strands[s];
			bend_pass(w, st, in->offset + st->first, rot, b);
		}
	if (in->self_scratch)
		pt_self_collide(w, in);
	for (int s = 0; s < in->strand_count; s++) {
		const pt_strand_rt *st = &in->strands[s];
		if (in->stretch == PT_STRETCH_EXACT)
			ftl_pass(w, in, st, in->offset + st->first, cols);
		else
			limit_collide_pass(w, in, st, in->offset + st->first, cols);
	}
}

/* ---- the wide path (verlet_lanes.h) ------------------------------------------------ */

int pt_verlet_lanes_eligible(const pt_inst *in)
{
	if (in->stretch != PT_STRETCH_EXACT || in->self_collision)
		return 0;
	for (int c = 0; c < in->collider_count; c++) {
		pt_shape sh = in->colliders[c].shape;
		if (sh != PT_SHAPE_SPHERE && sh != PT_SHAPE_CAPSULE && sh != PT_SHAPE_PLANE)
			return 0;
	}
	return 1;
}

/* Fills lanes past b->count with lane 0 and runs the batch. */
static void run_batch(pt_world *w, pt_lanes *b)
{
	for (int l = b->count; l < PT_LANES; l++) {
		b->base[l] = b->base[0], b->iterations[l] = b->iterations[0], b->k[l] = b->k[0];
		b->bend[l] = b->bend[0];
		b->anchor[l] = b->anchor[0], b->mask[l] = b->mask[0];
		b->inst[l] = b->inst[0];
		for (int s = 0; s < b->substeps; s++)
			for (int a = 0; a < 3; a++)
				b->ah2[s][a][l] = b->ah2[s][a][0];
	}
	if (w->kernel == PT_KERNEL_AVX2)
		pt_verlet_lanes_avx2(w, b);
	else
		pt_verlet_lanes_scalar(w, b);
	b->count = 0;
}

/* The pending batch for (points, substeps), making room if all slots are taken. */
static pt_lanes *batch_for(pt_world *w, pt_batcher *bt, int points, int substeps)
{
	int fullest = 0;
	for (int i = 0; i < bt->used; i++) {
		pt_lanes *b = &bt->batch[i];
		if (b->points == points && b->substeps == substeps)
			return b;
		if (b->count > bt->batch[fullest].count)
			fullest = i;
	}
	pt_lanes *b;
	if (bt->used < PT_BATCH_SLOTS) {
		b = &bt->batch[bt->used++];
	} else {
		b = &bt->batch[fullest];
		if (b->count)
			run_batch(w, b);
	}
	b->count = 0;
	b->points = points;
	b->substeps = substeps;
	return b;
}

void pt_verlet_batch_add(pt_world *w, pt_batcher *bt, pt_inst *in)
{
	float h = in->sub_h;
	float k = kept_factor(in, h), bend = bend_fraction(in, h), h2 = h * h;
	for (int s = 0; s < in->strand_count; s++) {
		const pt_strand_rt *st = &in->strands[s];
		pt_lanes *b = batch_for(w, bt, st->points, in->sub_n);
		int l = b->count;
		b->base[l] = in->offset + st->first;
		b->iterations[l] = (float)in->iterations;
		b->k[l] = k, b->bend[l] = bend;
		b->anchor[l] = st->anchor, b->mask[l] = st->collider_mask;
		b->inst[l] = in;
		/* the instance's clock advances by h per substep, exactly as it is stepped */
		double t = in->time;
		for (int i = 0; i < in->sub_n; i++) {
			t += h;
			pt_vec3 ah2 = v3_scale(strand_accel(in, s, t), h2);
			b->ah2[i][0][l] = ah2.x, b->ah2[i][1][l] = ah2.y, b->ah2[i][2][l] = ah2.z;
		}
		if (++b->count == PT_LANES)
			run_batch(w, b);
	}
}

void pt_verlet_batch_flush(pt_world *w, pt_batcher *bt)
{
	for (int i = 0; i < bt->used; i++)
		if (bt->batch[i].count)
			run_batch(w, &bt->batch[i]);
	bt->used = 0;
}

static int verlet_init(pt_inst *in, const pt_instance_def *def)
{
	in->self_collision = def->verlet.self_collision;
	return pt_self_collide_init(in);
}

static void verlet_update(pt_inst *in, const pt_instance_def *def)
{
	if (in->self_collision != def->verlet.self_collision) {
		pt_self_collide_free(in);
		in->self_collision = def->verlet.self_collision;
		/* On allocation failure self-collision stays off; the motion continues. */
		if (!pt_self_collide_init(in))
			in->self_collision = 0;
	}
}

static void verlet_rest(pt_world *w, pt_inst *in, const pt_pose *head)
{
	pt_inst_place_rest(w, in, head);
}

const pt_solver_ops pt_verlet_ops = {
    verlet_init, verlet_update, pt_self_collide_free, verlet_rest, verlet_substep,
};
