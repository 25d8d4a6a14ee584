/* The world's step: head poses per substep (slerp, teleports, IMU extrapolation), verlet
 * strands batched into the lane kernel, spring bones at substep or frame rate, and the
 * step entry points (world.h). Instances never interact, so the order is free. */
#include <assert.h>
#include <math.h>
#include <string.h>

#include "springbone_lanes.h"
#include "verlet_lanes.h"
#include "world_internal.h"

/* ---- stepping ------------------------------------------------------------------- */

/* Moves every strand rigidly from its frame with the head at pose a (and the bones at
 * their previous poses) to its frame with the head at b (the bones at their newest):
 * teleport "keep". A head strand moves with the head, a strand on a bone with that bone,
 * a branch with the strand it hangs from. */
static void carry_rigidly(pt_world *w, pt_inst *in, const pt_pose *a, const pt_pose *b)
{
	float *xs[2] = {w->x, w->px}, *ys[2] = {w->y, w->py}, *zs[2] = {w->z, w->pz};
	for (int s = 0; s < in->strand_count; s++) {
		pt_pose fa = pt_strand_frame(in, s, a, 0.0f), fb = pt_strand_frame(in, s, b, 1.0f);
		pt_mat3 Ra = m3_from_quat(fa.q), Rb = m3_from_quat(fb.q);
		int from = in->offset + in->strands[s].first, to = from + in->strands[s].points;
		for (int k = 0; k < 2; k++)
			for (int i = from; i < to; i++) {
				pt_vec3 local = m3_tmul(
				    &Ra, v3_sub(pt_v3(xs[k][i], ys[k][i], zs[k][i]), fa.p));
				pt_vec3 p = v3_add(fb.p, m3_mul(&Rb, local));
				xs[k][i] = p.x, ys[k][i] = p.y, zs[k][i] = p.z;
			}
	}
}

static void handle_teleport(pt_world *w, pt_inst *in)
{
	float dist = v3_len(v3_sub(in->head_target.p, in->head_prev.p));
	float ang = q_angle_between(in->head_prev.q, in->head_target.q);
	if (!(dist > in->teleport_distance || ang > in->teleport_angle))
		return;
	in->teleports++;
	if (in->teleport_mode == PT_TELEPORT_KEEP)
		carry_rigidly(w, in, &in->head_prev, &in->head_target);
	else
		in->ops->rest(w, in, &in->head_target);
	in->head_prev = in->head_target;
	pt_bones_settle(in->bones); /* bones jump with the head, they do not sweep */
}

/* The interpolated head pose at the end of each substep: position lerp, rotation slerp
 * from the pose used at the previous step to the newest one. */
static void substep_poses(pt_inst *in)
{
	/* q_slerp at each substep's alpha, its angle taken once per step */
	pt_quat a = in->head_prev.q, b = in->head_target.q;
	float d = q_dot(a, b);
	if (d < 0.0f) {
		b.x = -b.x, b.y = -b.y, b.z = -b.z, b.w = -b.w;
		d = -d;
	}
	int linear = d > 0.9995f;
	float th = 0.0f, inv_s = 0.0f;
	if (!linear && in->sub_n > 1)
		th = acosf(d), inv_s = 1.0f / sinf(th);
	for (int s = 0; s < in->sub_n; s++) {
		float alpha = (float)(s + 1) / (float)in->sub_n;
		float wa = 0.0f, wb = 1.0f; /* the last substep ends on the target exactly */
		if (s + 1 < in->sub_n) {
			wa = linear ? 1.0f - alpha : sinf((1.0f - alpha) * th) * inv_s;
			wb = linear ? alpha : sinf(alpha * th) * inv_s;
		}
		pt_quat q = {a.x * wa + b.x * wb, a.y * wa + b.y * wb, a.z * wa + b.z * wb,
		             a.w * wa + b.w * wb};
		in->sub_pose[s].p = v3_lerp(in->head_prev.p, in->head_target.p, alpha);
		in->sub_pose[s].q = q_norm(q);
		in->sub_rot[s] = m3_from_quat(in->sub_pose[s].q);
	}
}

/* Roots pinned to their anchors at `head` (a frame-rate spring bone between its steps:
 * the tails wait for the next 1/60 s step, the roots stay on the head or their bone; a
 * branch's root waits with the tails it hangs from). */
static void pin_roots(pt_world *w, pt_inst *in, const pt_pose *head)
{
	for (int s = 0; s < in->strand_count; s++) {
		if (in->strands[s].parent >= 0)
			continue;
		int i = in->offset + in->strands[s].first;
		pt_pose f = pt_strand_frame(in, s, head, 1.0f);
		pt_mat3 R = m3_from_quat(f.q);
		pt_vec3 r = v3_add(f.p, m3_mul(&R, in->strands[s].anchor));
		w->x[i] = w->px[i] = r.x, w->y[i] = w->py[i] = r.y, w->z[i] = w->pz[i] = r.z;
	}
}

/* A spring-bone instance at frame rate: one step of exactly 1/60 s at every whole frame
 * of simulated time this tick, the head interpolated at that instant. Frames are counted
 * as dt * 60 and snapped to whole numbers within 1e-4, so 60, 30 and 120 Hz ticks (and
 * their float dt) give exactly 1, 2 and 1/2 steps a tick, for ever. */
static void step_frames(pt_world *w, pt_inst *in, float dt, pt_sb_batcher *sb, int touched)
{
	const float h = 1.0f / 60.0f;
	double per_tick = (double)dt * 60.0, start = in->sb_frames, total = start + per_tick;
	if (fabs(total - floor(total + 0.5)) < 1e-4)
		total = floor(total + 0.5);
	int steps = (int)floor(total);
	pt_collider_rt cols[PT_MAX_COLLIDERS];
	/* Up to PT_MAX_SUBSTEPS frames go to the wide path (springbone_lanes.h) at their
	 * poses in the step scratch; more, or an instance it does not take, step here. */
	int wide = steps > 0 && steps <= PT_MAX_SUBSTEPS && !touched; /* touch: one at a time */
	float alphas[PT_MAX_SUBSTEPS];
	for (int k = 1; k <= steps; k++) {
		float alpha = k == steps && total == floor(total) ? 1.0f
		                                                  : (float)(((double)k - start) / per_tick);
		pt_pose p = {v3_lerp(in->head_prev.p, in->head_target.p, alpha),
		             q_slerp(in->head_prev.q, in->head_target.q, alpha)};
		pt_mat3 R = m3_from_quat(p.q);
		int at = wide ? k - 1 : 0; /* more frames than scratch: one at a time in 0 */
		in->sub_pose[at] = p, in->sub_rot[at] = R;
		alphas[at] = alpha;
		if (wide)
			continue;
		pt_bones_substeps(in->bones, in->sub_pose, alphas, 1);
		pt_inst_colliders_world(in, &p, &R, alpha, cols);
		if (touched)
			pt_touch_pre(w, in, alpha, h);
		in->ops->substep(w, in, 0, cols, h, in->time + (double)h * k);
		if (touched) /* the touch at this frame's instant, swept from the last one's */
			pt_touch_post(w, in, (float)(((double)k - 1.0 - start) / per_tick), alpha);
	}
	if (wide) {
		in->sub_n = steps, in->sub_h = h;
		pt_bones_substeps(in->bones, in->sub_pose, alphas, steps);
		if (!pt_sb_batch_add(w, sb, in))
			for (int k = 1; k <= steps; k++) {
				for (int c = 0; c < in->collider_count; c++)
					pt_collider_world_sub(in, c, k - 1, &cols[c]);
				in->ops->substep(w, in, k - 1, cols, h, in->time + (double)h * k);
			}
	}
	in->sb_frames = total - steps;
	in->time += dt;
	if (steps == 0)
		pin_roots(w, in, &in->head_target);
	if (steps == 0 && touched) { /* no frame: the touch still pushes, the grabs still hold */
		pt_touch_pre(w, in, 1.0f, h);
		pt_touch_post(w, in, 0.0f, 1.0f);
	}
}

/* An instance with touch or grabs this step (touch.c): alone, substep by substep, the
 * touch passes around each. */
static void step_touched(pt_world *w, pt_inst *in)
{
	if (in->solver == PT_SOLVER_VERLET) {
		pt_verlet_step_touched(w, in);
		for (int s = 0; s < in->sub_n; s++)
			in->time += in->sub_h;
		return;
	}
	pt_collider_rt cols[PT_MAX_COLLIDERS];
	float n = (float)in->sub_n;
	for (int s = 0; s < in->sub_n; s++) {
		pt_inst_colliders_world(in, &in->sub_pose[s], &in->sub_rot[s], (float)(s + 1) / n, cols);
		in->time += in->sub_h;
		pt_touch_pre(w, in, (float)(s + 1) / n, in->sub_h);
		in->ops->substep(w, in, s, cols, in->sub_h, in->time);
		pt_touch_post(w, in, (float)s / n, (float)(s + 1) / n);
	}
}

/* The lines of an instance record (its five, world_internal.h), asked for
 * PREFETCH_INST instances ahead: each tick touches a few lines of each instance, which
 * the hardware prefetcher did not follow when records were ~5 KB apart (perf: a quarter
 * of this function's time at 9,000 instances waited on in->substeps and in->bones). No
 * effect on results. */
static void prefetch_inst(const pt_inst *in)
{
	prefetch_span(in, sizeof *in);
}

/* The step scratch prefetch_points asks for: that of the first PREFETCH_SUBSTEPS
 * substeps (the server's default count; more are written as the step reaches them). */
enum { PREFETCH_SUBSTEPS = 4 };

/* The lines of an instance's body a step reads or writes (strands, colliders, the step
 * scratch of the first substeps), and, for a verlet instance, the pool rows
 * lanes_gather reads for its strands (nine arrays, twelve with bending), asked for
 * PREFETCH_POINTS instances ahead. A batch takes sixteen strands (five or six instances
 * of three) and runs as soon as it is full, so the rows must be asked for before the
 * batch that needs them is filled: at 10,000 instances the pool is megabytes that do not
 * stay in cache between ticks, and without this the gather waited on its loads (perf,
 * bench_verlet at 1 substep: 14 % of the samples on the loads' first use). Reads the
 * record's header, which prefetch_inst asked for two instances earlier. No effect on
 * results. */
static void prefetch_points(const pt_world *w, const pt_inst *in)
{
	prefetch_span(in->strands, (size_t)((const char *)(in->colliders + in->collider_count) -
	                                    (const char *)in->strands));
	prefetch_span(in->sub_pose, PREFETCH_SUBSTEPS * sizeof(pt_pose));
	prefetch_span(in->sub_rot, PREFETCH_SUBSTEPS * sizeof(pt_mat3));
	if (in->solver != PT_SOLVER_VERLET)
		return;
	const float *const rows[12] = {w->x, w->y,   w->z,   w->px, w->py, w->pz,
	                               w->w, w->len, w->rad, w->ux, w->uy, w->uz};
	for (int a = 0; a < (in->bend > 0.0f ? 12 : 9); a++)
		prefetch_floats(rows[a] + in->offset, in->npoints);
}

enum { PREFETCH_POINTS = 8, PREFETCH_INST = PREFETCH_POINTS + 2 };

/* Steps dense instances [begin, end). Verlet strands are batched across instances and
 * run all their substeps inside the batch (verlet_lanes.h); spring-bone instances step
 * their substeps one after another. Instances never interact, so the order is free. */
void pt_world_step_dense(pt_world *w, float dt, int substeps, int begin, int end)
{
	pt_batcher batch;
	batch.used = 0;
	pt_sb_batcher sb;
	pt_sb_batch_init(&sb);
	for (int i = begin; i < end; i++) {
		pt_inst *in = &w->inst[i];
		if (i + PREFETCH_INST < end)
			prefetch_inst(&w->inst[i + PREFETCH_INST]);
		if (i + PREFETCH_POINTS < end)
			prefetch_points(w, &w->inst[i + PREFETCH_POINTS]);
		in->sub_n = in->substeps > 0 ? in->substeps : (substeps > 0 ? substeps : 1);
		in->sub_h = dt / (float)in->sub_n;
		if (in->extrapolate) {
			in->head_target = pt_inst_extrapolated(in, in->sampled_age + (double)dt);
			in->sampled_age += (double)dt;
		}
		handle_teleport(w, in);
		if (in->room_wind)
			pt_wind_prepare(w, in, dt);
		int touched = in->touch && pt_touch_begin(w, in);
		if (in->solver == PT_SOLVER_SPRINGBONE && in->sb_rate == PT_SPRINGBONE_RATE_FRAME) {
			step_frames(w, in, dt, &sb, touched);
			if (touched)
				pt_touch_clear(in);
			continue;
		}
		substep_poses(in);
		pt_bones_substeps(in->bones, in->sub_pose, NULL, in->sub_n);
		if (touched) {
			step_touched(w, in);
			pt_touch_clear(in);
			continue;
		}
		int verlet = in->solver == PT_SOLVER_VERLET;
		if (verlet || (in->solver == PT_SOLVER_SPRINGBONE && pt_sb_batch_add(w, &sb, in))) {
			if (verlet)
				pt_verlet_batch_add(w, &batch, in);
			for (int s = 0; s < in->sub_n; s++)
				in->time += in->sub_h;
			continue;
		}
		pt_collider_rt cols[PT_MAX_COLLIDERS];
		for (int s = 0; s < in->sub_n; s++) {
			pt_inst_colliders_world(in, &in->sub_pose[s], &in->sub_rot[s],
			                        (float)(s + 1) / (float)in->sub_n, cols);
			in->time += in->sub_h;
			in->ops->substep(w, in, s, cols, in->sub_h, in->time);
		}
	}
	pt_verlet_batch_flush(w, &batch);
	pt_sb_batch_flush(w, &sb);
	for (int i = begin; i < end; i++) {
		w->inst[i].head_prev = w->inst[i].head_target;
		pt_bones_settle(w->inst[i].bones);
	}
}

void pt_world_step_range(pt_world *w, float dt, int substeps, int begin, int end)
{
	assert(dt > 0.0f && dt <= 1.0f && substeps >= 1);
	if (begin < 0)
		begin = 0;
	if (end > w->count)
		end = w->count;
	pt_world_step_dense(w, dt, substeps, begin, end);
}

void pt_world_step(pt_world *w, float dt, int substeps)
{
	pt_world_step_range(w, dt, substeps, 0, w->count);
}
