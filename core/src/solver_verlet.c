/* The verlet solver: a position-based particle chain per strand.
 *
 * This file says what a substep does and feeds strands to the one implementation of it,
 * the lane kernel (verlet_lanes.inc, compiled for AVX2 + FMA and for plain C, with
 * bit-identical results; every instance, alone or among others, steps through it).
 *
 * Per substep of length h:
 *  1. Verlet integration of every point: x' = x + (x - px) k + a h^2, where k is the
 *     kept-velocity factor (damping is defined per 1/60 s frame, so k = damping^(60 h)
 *     and the decay per second is the same at any substep count). Air acts as drag
 *     toward the (gusting) wind velocity W: a = D (W - v), D = wind.drag in 1/s. The
 *     velocity part is applied exactly, as the factor e^(-D h) on k (so it too is
 *     substep-invariant: e^(-D) per second), the rest as the acceleration D W. With no
 *     wind this is air resistance, which is what lets hair settle after a shake. A room
 *     wind (ponytail/wind.h) adds its W at each point, held over the tick: D h^2 W(x)
 *     more per substep, after the rest of the sum (verlet_lanes.inc, step_integrate).
 *  2. The roots are pinned to their anchors on the (interpolated) head.
 *  3. Lengths. Exact mode: the chain's linearised length constraints are solved directly
 *     (`iterations` Newton steps of a tridiagonal system, step_chain_solve) with corrections
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
 *     its parent segment (step_bend), the root segment toward its rest direction. The
 *     fraction is per 1/60 s frame and converted per substep.
 *  5. Self-collision between strands (optional, spatial hash).
 *  6. Exact mode: follow-the-leader (Mueller et al. 2012) puts every point at exactly
 *     segment_length from its parent and resolves colliders point by point, pushing in
 *     the plane normal to the segment so the push keeps the length (a push along the
 *     collider normal and a re-projection fight each other where a point sits between
 *     two colliders, and left segments up to 16 % long on the stress sequence).
 *     Friction acts here too, on the position (lv_contact_friction): pushed out along n
 *     at its length L from the parent, a point is left one free direction, the tangent
 *     tau = n x u of the circle where the sphere of radius L meets the collider. Its slide
 *     along tau over the substep is held to PT_CONTACT_FRICTION times the push's depth
 *     (stuck below that, Coulomb), and like the push this is a position correction, never
 *     velocity. Why: long hair draped over the head at 1 substep kept its first point
 *     sliding 4-8 mm to and fro every tick (0.3-0.5 m/s for ever, at any iteration
 *     count). Traced, the slide was in the positions, not the velocities: the chain below
 *     pulls that point with the tension T of ~18 points (T h^2 / m = 18 g h^2 ~ 49 mm of
 *     correction per tick), and the length solve (step 3) moves it 6-15 mm into the head
 *     and, where the segment to its child leans by s / L off the plane of n and u,
 *     sideways along tau by about T h^2 / (m L) = 1.6 times s for each of the two
 *     points, ~3 s for their offset: past the balance, so the slide changed sign every
 *     tick (+8, -4, +7, -8 mm). The push, in the plane of n and u, never sees that part.
 *     With its velocity kept such a step is stable up to a gain of 2 (1 + k) ~ 3.9, but
 *     a point in contact keeps almost none (0-3 mm per tick: step 7 takes the velocity
 *     into the collider and friction most of the rest), and without velocity a step is
 *     stable only under a gain of 2; so velocity rules could not reach it. The gain goes
 *     with h^2: from 2 substeps up (< 1) the slide died out alone. Bounding it by
 *     Coulomb's law at the position level (the
 *     tick's normal correction times mu, as position-based friction does, Macklin et al.
 *     2014) stops the overshoot where the real contact force would: the point sticks.
 *     The move is along tau only and keeps p's distance from the parent (a move with a
 *     part along u, re-projected onto L, went up to 1 mm into the collider and undid the
 *     final slop push). Known limit: friction, here and in step 7, acts on the motion in
 *     the world frame, not relative to a moving collider's surface.
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

/* Deterministic gust factor in [-1, 1] for strand s at time t (wind.c). */
static float gust(uint32_t seed, int s, double t)
{
	return pt_wind_gust(seed, s, t);
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

/* ---- batches (verlet_lanes.h) ------------------------------------------------------ */

/* Fills lanes past b->count with lane 0 and runs substeps [s0, s1) of the batch. */
static void run_phases(pt_world *w, pt_lanes *b, int s0, int s1, int phases)
{
	for (int l = b->count; l < PT_LANES; l++) {
		b->base[l] = b->base[0], b->iterations[l] = b->iterations[0], b->k[l] = b->k[0];
		b->bend[l] = b->bend[0], b->s0[l] = b->s0[0], b->emax[l] = b->emax[0];
		b->anchor[l] = b->anchor[0], b->mask[l] = b->mask[0];
		b->inst[l] = b->inst[0];
		b->wind[l] = b->wind[0], b->wc[l] = b->wc[0];
		for (int s = 0; s < b->substeps; s++)
			for (int a = 0; a < 3; a++)
				b->ah2[s][a][l] = b->ah2[s][a][0];
	}
	if (w->kernel == PT_KERNEL_AVX2)
		pt_verlet_lanes_avx2(w, b, s0, s1, phases);
	else if (w->scalar_fma)
		pt_verlet_lanes_scalar_fma(w, b, s0, s1, phases);
	else
		pt_verlet_lanes_scalar(w, b, s0, s1, phases);
}

static void run_batch(pt_world *w, pt_lanes *b)
{
	run_phases(w, b, 0, b->substeps, PT_PHASE_ALL);
	b->count = 0;
}

/* The pending batch for (points, substeps, mode), making room if all slots are taken. */
static pt_lanes *batch_for(pt_world *w, pt_batcher *bt, int points, int substeps,
                           pt_stretch_mode mode)
{
	int fullest = 0;
	for (int i = 0; i < bt->used; i++) {
		pt_lanes *b = &bt->batch[i];
		if (b->points == points && b->substeps == substeps && b->mode == mode)
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
	b->mode = mode;
	return b;
}

/* Lane l of b takes strand s of in, with the accelerations of substeps [s0, s1) (the
 * instance's clock advances by h per substep, exactly as it is stepped). */
static void fill_lane(pt_lanes *b, int l, const pt_inst *in, int s, int s0, int s1, float k,
                      float bend)
{
	const pt_strand_rt *st = &in->strands[s];
	float h = in->sub_h, h2 = h * h;
	b->base[l] = in->offset + st->first;
	b->iterations[l] = (float)in->iterations;
	b->k[l] = k, b->bend[l] = bend;
	b->s0[l] = in->stretch_stiffness, b->emax[l] = in->stretch_max_strain;
	b->anchor[l] = st->anchor, b->mask[l] = st->collider_mask;
	b->inst[l] = in;
	/* the room wind (pt_wind_prepare): a = D W, applied as D h^2 W per substep */
	b->wind[l] = in->room_wind ? in->room_wind->v + st->first : NULL;
	b->wc[l] = in->room_wind ? in->wind_drag * h2 : 1.0f;
	double t = in->time + (double)h * s0;
	for (int i = s0; i < s1; i++) {
		t += h;
		pt_vec3 ah2 = v3_scale(strand_accel(in, s, t), h2);
		b->ah2[i][0][l] = ah2.x, b->ah2[i][1][l] = ah2.y, b->ah2[i][2][l] = ah2.z;
	}
}

/* Step 5 needs every strand of the instance between the two halves of each substep:
 * the instance runs alone, one strand per batch (self-collision is the rare option; a
 * batch of one strand costs a lane group), substep by substep. */
static void step_self_colliding(pt_world *w, pt_inst *in, float k, float bend)
{
	pt_lanes b;
	for (int i = 0; i < in->sub_n; i++) {
		for (int phase = PT_PHASE_PREDICT; phase <= PT_PHASE_RESOLVE; phase++) {
			if (phase == PT_PHASE_RESOLVE)
				pt_self_collide(w, in);
			for (int s = 0; s < in->strand_count; s++) {
				b.count = 1, b.points = in->strands[s].points, b.substeps = in->sub_n;
				b.mode = in->stretch;
				fill_lane(&b, 0, in, s, i, i + 1, k, bend);
				run_phases(w, &b, i, i + 1, phase);
			}
		}
	}
}

/* An instance with touch or grabs this step (touch.c): its substeps now, one at a time,
 * its strands in batches of their own (of one point count each; a lane's result does not
 * depend on the others'), touch.c's passes around each substep. */
void pt_verlet_step_touched(pt_world *w, pt_inst *in)
{
	float k = kept_factor(in, in->sub_h), bend = bend_fraction(in, in->sub_h);
	float n = (float)in->sub_n;
	for (int i = 0; i < in->sub_n; i++) {
		pt_touch_pre(w, in, (float)(i + 1) / n, in->sub_h);
		if (in->self_scratch) {
			for (int phase = PT_PHASE_PREDICT; phase <= PT_PHASE_RESOLVE; phase++) {
				if (phase == PT_PHASE_RESOLVE)
					pt_self_collide(w, in);
				for (int s = 0; s < in->strand_count; s++) {
					pt_lanes b;
					b.count = 1, b.points = in->strands[s].points, b.substeps = in->sub_n;
					b.mode = in->stretch;
					fill_lane(&b, 0, in, s, i, i + 1, k, bend);
					run_phases(w, &b, i, i + 1, phase);
				}
			}
		} else {
			unsigned char done[PT_MAX_STRANDS] = {0};
			for (int s0 = 0; s0 < in->strand_count; s0++) {
				if (done[s0])
					continue;
				pt_lanes b;
				b.count = 0, b.points = in->strands[s0].points, b.substeps = in->sub_n;
				b.mode = in->stretch;
				for (int s = s0; s < in->strand_count; s++) {
					if (done[s] || in->strands[s].points != b.points)
						continue;
					done[s] = 1;
					fill_lane(&b, b.count, in, s, i, i + 1, k, bend);
					if (++b.count == PT_LANES) {
						run_phases(w, &b, i, i + 1, PT_PHASE_ALL);
						b.count = 0;
					}
				}
				if (b.count)
					run_phases(w, &b, i, i + 1, PT_PHASE_ALL);
			}
		}
		pt_touch_post(w, in, (float)i / n, (float)(i + 1) / n);
	}
}

void pt_verlet_batch_add(pt_world *w, pt_batcher *bt, pt_inst *in)
{
	/* per instance: the same for each of its strands */
	float k = kept_factor(in, in->sub_h), bend = bend_fraction(in, in->sub_h);
	if (in->self_scratch) {
		step_self_colliding(w, in, k, bend);
		return;
	}
	for (int s = 0; s < in->strand_count; s++) {
		pt_lanes *b = batch_for(w, bt, in->strands[s].points, in->sub_n, in->stretch);
		fill_lane(b, b->count, in, s, 0, in->sub_n, k, bend);
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
	return pt_self_collide_init(in, def->verlet.self_collision);
}

static void verlet_update(pt_inst *in, const pt_instance_def *def)
{
	if ((in->self_scratch != NULL) != (def->verlet.self_collision != 0)) {
		pt_self_collide_free(in);
		/* On allocation failure self-collision stays off (the motion continues) and
		 * the next update tries again. */
		(void)pt_self_collide_init(in, def->verlet.self_collision);
	}
}

static void verlet_rest(pt_world *w, pt_inst *in, const pt_pose *head)
{
	pt_inst_place_rest(w, in, head);
}

/* No per-instance substep: every verlet instance steps through pt_verlet_batch_add. */
const pt_solver_ops pt_verlet_ops = {
    verlet_init, verlet_update, pt_self_collide_free, verlet_rest, NULL,
};
