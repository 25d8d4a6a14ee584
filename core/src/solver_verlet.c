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
 *  3. `iterations` Gauss-Seidel passes of distance constraints, corrections shared by
 *     inverse mass (roots have none); in nonlinear mode each pass corrects a fraction
 *     of the error that grows with strain (soft when barely stretched, rigid beyond
 *     max_strain).
 *  4. Bending: each point moves a fraction toward the straight continuation of its
 *     parent segment (the rest shape is straight), the root segment toward the rest
 *     direction. The fraction is per 1/60 s frame and converted per substep.
 *  5. Self-collision between strands (optional, spatial hash).
 *  6. Exact mode: follow-the-leader (Mueller et al. 2012) from root to tip puts every
 *     point at exactly segment_length from its parent, resolving colliders point by
 *     point; the velocity correction px_i += s d_{i+1} removes the energy the pass
 *     would otherwise pump in. Nonlinear mode: a plain collider pass.
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
	float L = st->length;
	int nonlinear = in->stretch == PT_STRETCH_NONLINEAR;
	float s0 = in->stretch_stiffness, inv_emax = 1.0f / in->stretch_max_strain;
	for (int j = 0; j + 1 < st->points; j++) {
		int a = base + j, b = a + 1;
		float wa = w->w[a], wb = w->w[b];
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

static void bend_pass(pt_world *w, const pt_strand_rt *st, int base, pt_vec3 rest_dir, float b)
{
	float L = st->length;
	for (int j = 1; j < st->points; j++) {
		int i = base + j;
		pt_vec3 parent = P(w, i - 1);
		pt_vec3 dir = j == 1 ? rest_dir : v3_norm_or(v3_sub(parent, P(w, i - 2)), rest_dir);
		pt_vec3 target = v3_add(parent, v3_scale(dir, L));
		SET(w, i, v3_lerp(P(w, i), target, b));
	}
}

/* Follow-the-leader with per-point collisions and Mueller's velocity correction.
 * The length correction d_i feeds the parent's velocity fix; a collider's push c_i is
 * applied to the previous position too, so contact is inelastic: a push must not turn
 * into outward velocity (at 240 Hz a 1 cm push would be 2.4 m/s). */
static void ftl_pass(pt_world *w, const pt_inst *in, const pt_strand_rt *st, int base,
                     const pt_collider_rt *cols)
{
	float L = st->length, r = st->radius;
	uint32_t mask = st->collider_mask;
	int nc = in->collider_count;
	pt_vec3 parent = P(w, base), fallback = pt_v3(0, -1, 0);
	for (int j = 1; j < st->points; j++) {
		int i = base + j;
		pt_vec3 orig = P(w, i);
		pt_vec3 proj =
		    v3_add(parent, v3_scale(v3_norm_or(v3_sub(orig, parent), fallback), L));
		pt_vec3 p = proj;
		/* Push out and re-project until clear; 4 rounds settle a point wedged between two
		 * colliders (head and neck) to within 0.5 % of its length on the stress test. */
		for (int round = 0; round < 4 && pt_collide_point(cols, nc, mask, r, &p); round++)
			p = v3_add(parent, v3_scale(v3_norm_or(v3_sub(p, parent), fallback), L));
		pt_collide_point(cols, nc, mask, r, &p);
		SET(w, i, p);
		pt_vec3 c = v3_sub(p, proj);
		w->px[i] += c.x, w->py[i] += c.y, w->pz[i] += c.z;
		if (j >= 2) {
			pt_vec3 d = v3_scale(v3_sub(proj, orig), PT_FTL_VELOCITY_FIX);
			w->px[i - 1] += d.x, w->py[i - 1] += d.y, w->pz[i - 1] += d.z;
		}
		parent = p;
	}
}

static void collide_pass(pt_world *w, const pt_inst *in, const pt_strand_rt *st, int base,
                         const pt_collider_rt *cols)
{
	for (int j = 1; j < st->points; j++) {
		int i = base + j;
		pt_vec3 p = P(w, i), before = p;
		if (pt_collide_point(cols, in->collider_count, st->collider_mask, st->radius, &p)) {
			SET(w, i, p);
			pt_vec3 c = v3_sub(p, before); /* inelastic contact, as in ftl_pass */
			w->px[i] += c.x, w->py[i] += c.y, w->pz[i] += c.z;
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
	return v3_add(in->gravity, v3_scale(wind, in->wind_drag));
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
	for (int it = 0; it < in->iterations; it++)
		for (int s = 0; s < in->strand_count; s++)
			distance_pass(w, in, &in->strands[s], in->offset + in->strands[s].first);
	float b = bend_fraction(in, h);
	if (b > 0.0f)
		for (int s = 0; s < in->strand_count; s++) {
			const pt_strand_rt *st = &in->strands[s];
			bend_pass(w, st, in->offset + st->first, m3_mul(rot, st->direction), b);
		}
	if (in->self_scratch)
		pt_self_collide(w, in);
	for (int s = 0; s < in->strand_count; s++) {
		const pt_strand_rt *st = &in->strands[s];
		if (in->stretch == PT_STRETCH_EXACT)
			ftl_pass(w, in, st, in->offset + st->first, cols);
		else
			collide_pass(w, in, st, in->offset + st->first, cols);
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
		b->length[l] = b->length[0], b->bend[l] = b->bend[0], b->radius[l] = b->radius[0];
		b->anchor[l] = b->anchor[0], b->dir[l] = b->dir[0], b->mask[l] = b->mask[0];
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
		b->k[l] = k, b->length[l] = st->length, b->bend[l] = bend,
		b->radius[l] = st->radius;
		b->anchor[l] = st->anchor, b->dir[l] = st->direction,
		b->mask[l] = st->collider_mask;
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
