/* World: id registry, point pool, instance lifetime, read-back; the step is world_step.c. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "springbone_lanes.h"
#include "verlet_lanes.h"
#include "world_internal.h"

pt_world_def pt_world_def_default(void)
{
	pt_world_def d;
	memset(&d, 0, sizeof d);
	d.initial_capacity = 16;
	d.prewarm_tick_hz = 60.0f;
	d.prewarm_substeps = 4;
	d.kernel = PT_KERNEL_AUTO;
	return d;
}

static pt_kernel resolve_kernel(pt_kernel k)
{
#ifdef PT_NO_SIMD
	(void)k;
	return PT_KERNEL_SCALAR;
#else
	if (k == PT_KERNEL_SCALAR)
		return PT_KERNEL_SCALAR;
	return pt_cpu_has_avx2() ? PT_KERNEL_AVX2 : PT_KERNEL_SCALAR;
#endif
}

pt_world *pt_world_create(const pt_world_def *def)
{
	pt_world *w = calloc(1, sizeof *w);
	if (!w)
		return NULL;
	w->def = def ? *def : pt_world_def_default();
	if (w->def.initial_capacity < 1)
		w->def.initial_capacity = 1;
	if (!(w->def.prewarm_tick_hz > 0.0f))
		w->def.prewarm_tick_hz = 60.0f;
	if (w->def.prewarm_substeps < 1)
		w->def.prewarm_substeps = 4;
	w->kernel = resolve_kernel(w->def.kernel);
#ifndef PT_NO_SIMD
	w->scalar_fma = w->kernel == PT_KERNEL_SCALAR && pt_cpu_has_fma();
#endif
	return w;
}

void pt_world_destroy(pt_world *w)
{
	if (!w)
		return;
	for (int i = 0; i < w->count; i++) {
		if (w->inst[i].ops->destroy)
			w->inst[i].ops->destroy(&w->inst[i]);
		pt_bones_free(&w->inst[i].bones);
		pt_wind_rt_free(&w->inst[i].room_wind);
		pt_touch_rt_free(&w->inst[i].touch);
		free(w->inst[i].strands);
	}
	free(w->slot_gen);
	free(w->slot_dense);
	free(w->free_slots);
	free(w->inst);
	free(w->cold);
	float **arrays[] = PT_POOL_ARRAYS(w);
	for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
		free(*arrays[i]);
	free(w);
}

pt_kernel pt_world_kernel(const pt_world *w)
{
	return w->kernel;
}

int pt_world_count(const pt_world *w)
{
	return w->count;
}

/* ---- storage -------------------------------------------------------------------- */

static int grow(void **p, int *cap, int need, size_t elem)
{
	if (need <= *cap)
		return 1;
	int nc = *cap ? *cap : 16;
	while (nc < need)
		nc *= 2;
	void *np = realloc(*p, (size_t)nc * elem);
	if (!np)
		return 0;
	*p = np;
	*cap = nc;
	return 1;
}

static int reserve_points(pt_world *w, int need)
{
	if (need <= w->pool_cap)
		return 1;
	int nc = w->pool_cap ? w->pool_cap : 256;
	while (nc < need)
		nc *= 2;
	float **arrays[] = PT_POOL_ARRAYS(w);
	for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
		float *np = realloc(*arrays[i], (size_t)nc * sizeof(float));
		if (!np)
			return 0; /* arrays already grown keep their larger size: harmless */
		*arrays[i] = np;
	}
	w->pool_cap = nc;
	return 1;
}

static int reserve_slot(pt_world *w)
{
	if (w->free_count > 0)
		return w->free_slots[--w->free_count];
	int cap = w->slot_cap, s = cap;
	int c1 = cap, c2 = cap, c3 = cap;
	if (!grow((void **)&w->slot_gen, &c1, s + 1, sizeof(uint32_t)) ||
	    !grow((void **)&w->slot_dense, &c2, s + 1, sizeof(int)) ||
	    !grow((void **)&w->free_slots, &c3, s + 1, sizeof(int)))
		return -1;
	for (int i = cap; i < c1; i++) {
		w->slot_gen[i] = 1;
		w->slot_dense[i] = -1;
	}
	/* Slots beyond s become free; push them in reverse so low indices are used first. */
	for (int i = c1 - 1; i > s; i--)
		w->free_slots[w->free_count++] = i;
	w->slot_cap = c1;
	return s;
}

static pt_inst *lookup(const pt_world *w, pt_id id)
{
	if (id.index == 0 || (int)id.index > w->slot_cap)
		return NULL;
	uint32_t s = id.index - 1;
	if (w->slot_gen[s] != id.generation || w->slot_dense[s] < 0)
		return NULL;
	return &w->inst[w->slot_dense[s]];
}

pt_inst *pt_world_lookup(const pt_world *w, pt_id id)
{
	return lookup(w, id);
}

int pt_world_valid(const pt_world *w, pt_id id)
{
	return lookup(w, id) != NULL;
}

pt_id pt_world_id_at(const pt_world *w, int i)
{
	pt_id id = {0, 0};
	if (i < 0 || i >= w->count)
		return id;
	id.index = w->cold[i].slot + 1;
	id.generation = w->slot_gen[w->cold[i].slot];
	return id;
}

/* ---- definition -> runtime ------------------------------------------------------ */

static int topology_of(const pt_instance_def *d)
{
	int n = 0;
	for (int s = 0; s < d->strand_count; s++)
		n += d->strands[s].points;
	return n;
}

/* A body (world_internal.h) for `strands` strands and `colliders` colliders: its size,
 * and the offsets of its colliders, poses and rotations (the collider lists follow). */
static size_t body_layout(int strands, int colliders, size_t *o_col, size_t *o_pose, size_t *o_rot)
{
	*o_col = sizeof(pt_strand_rt) * (size_t)strands;
	*o_pose = *o_col + sizeof(pt_collider_def) * (size_t)colliders;
	*o_rot = *o_pose + sizeof(pt_pose) * PT_MAX_SUBSTEPS;
	return *o_rot + sizeof(pt_mat3) * PT_MAX_SUBSTEPS + (size_t)strands * (size_t)colliders;
}

/* A new block for that body, NULL when out of memory. */
static char *body_alloc(int strands, int colliders)
{
	size_t o_col, o_pose, o_rot;
	size_t size = body_layout(strands, colliders, &o_col, &o_pose, &o_rot);
	return aligned_alloc(64, (size + 63) / 64 * 64);
}

/* Makes block `b` (body_alloc(strands, colliders)) the body of `in`, with its current
 * strands (strand_count <= strands) copied over, and frees the old one. */
static void body_install(pt_inst *in, char *b, int strands, int colliders)
{
	size_t o_col, o_pose, o_rot;
	body_layout(strands, colliders, &o_col, &o_pose, &o_rot);
	assert(in->strand_count <= strands);
	if (in->strand_count > 0)
		memcpy(b, in->strands, sizeof(pt_strand_rt) * (size_t)in->strand_count);
	free(in->strands);
	in->strands = (pt_strand_rt *)b;
	in->colliders = (pt_collider_def *)(b + o_col);
	in->sub_pose = (pt_pose *)(b + o_pose);
	in->sub_rot = (pt_mat3 *)(b + o_rot);
	in->collider_count = colliders;
}

static void load_params(pt_world *w, pt_inst *in, const pt_instance_def *d)
{
	w->cold[in - w->inst].prewarm_s = d->prewarm_s;
	in->substeps = d->substeps;
	in->gravity = d->gravity;
	in->wind_velocity = d->wind.velocity;
	in->wind_turbulence = d->wind.turbulence;
	in->wind_drag = d->wind.drag;
	in->wind_seed = d->wind.seed;
	in->damping = d->verlet.damping;
	in->iterations = d->verlet.iterations;
	in->bend = d->verlet.bend_stiffness;
	in->stretch = d->verlet.stretch;
	in->stretch_stiffness = d->verlet.stretch_stiffness;
	in->stretch_max_strain = d->verlet.stretch_max_strain;
	assert(in->collider_count == d->collider_count); /* the body's size (body_install) */
	memcpy(in->colliders, d->colliders, sizeof(pt_collider_def) * (size_t)d->collider_count);
	for (int s = 0; s < d->strand_count; s++) {
		const pt_strand_def *sd = &d->strands[s];
		uint8_t *order = pt_inst_collider_order(in, s);
		int n = sd->collider_n == PT_COLLIDERS_ALL ? d->collider_count : sd->collider_n;
		int all = sd->collider_n == PT_COLLIDERS_ALL;
		for (int k = 0; k < n; k++)
			order[k] = all ? (uint8_t)k : sd->collider_list[k];
		in->strands[s].ncols = n;
		in->strands[s].collider_mask = pt_strand_collider_mask(sd, d->collider_count);
		in->strands[s].radius = d->strands[s].radius;
		in->strands[s].gravity_scale = d->strands[s].gravity_scale;
	}
	in->teleport_distance = d->teleport.distance;
	in->teleport_angle = d->teleport.angle_deg * 3.14159265f / 180.0f;
	in->teleport_mode = d->teleport.mode;
	in->sb_rate = d->springbone.rate;
}

static void load_topology(pt_world *w, pt_inst *in, const pt_instance_def *d)
{
	in->solver = d->solver;
	in->ops = d->solver == PT_SOLVER_SPRINGBONE ? &pt_springbone_ops : &pt_verlet_ops;
	in->strand_count = d->strand_count;
	int first = 0;
	for (int s = 0; s < d->strand_count; s++) {
		const pt_strand_def *sd = &d->strands[s];
		pt_strand_rt *st = &in->strands[s];
		st->anchor = sd->anchor;
		st->parent = sd->parent_strand;
		st->parent_point = sd->parent_point;
		pt_strand_rest_segment(sd, 0, &st->length, &st->direction);
		st->first = first;
		st->points = sd->points;
		int o = in->offset + first;
		w->w[o] = 0.0f; /* the root is pinned */
		w->len[o] = st->length, w->rad[o] = sd->radius;
		w->ux[o] = st->direction.x, w->uy[o] = st->direction.y, w->uz[o] = st->direction.z;
		for (int j = 1; j < sd->points; j++) {
			const pt_joint_def *jd = &sd->joints[j - 1];
			float t = sd->points > 2 ? (float)(j - 1) / (float)(sd->points - 2) : 0.0f;
			float m = jd->mass > 0.0f ? jd->mass
			                          : sd->mass_root + (sd->mass_tip - sd->mass_root) * t;
			pt_vec3 u;
			w->w[o + j] = 1.0f / m;
			pt_strand_rest_segment(sd, j - 1, &w->len[o + j], &u);
			w->ux[o + j] = u.x, w->uy[o + j] = u.y, w->uz[o + j] = u.z;
			w->rad[o + j] = jd->radius < 0.0f ? sd->radius : jd->radius;
		}
		first += sd->points;
	}
}

void pt_inst_place_rest(pt_world *w, pt_inst *in, const pt_pose *head)
{
	for (int s = 0; s < in->strand_count; s++) {
		const pt_strand_rt *st = &in->strands[s];
		pt_pose f = pt_strand_frame(in, s, head, 1.0f);
		pt_mat3 R = m3_from_quat(f.q);
		pt_vec3 p = v3_add(f.p, m3_mul(&R, st->anchor));
		for (int j = 0; j < st->points; j++) {
			int i = in->offset + st->first + j;
			if (j > 0) {
				pt_vec3 u = pt_v3(w->ux[i], w->uy[i], w->uz[i]);
				p = v3_add(p, v3_scale(m3_mul(&R, u), w->len[i]));
			}
			w->x[i] = w->px[i] = p.x;
			w->y[i] = w->py[i] = p.y;
			w->z[i] = w->pz[i] = p.z;
		}
	}
}

static void rest_and_prewarm(pt_world *w, pt_inst *in)
{
	in->extrapolate = 0; /* the head stays where it is, during prewarm and after */
	in->head_prev = in->head_target;
	pt_bones_settle(in->bones);
	in->ops->rest(w, in, &in->head_target);
	int di = (int)(in - w->inst);
	int ticks = (int)lroundf(w->cold[di].prewarm_s * w->def.prewarm_tick_hz);
	float dt = 1.0f / w->def.prewarm_tick_hz;
	in->sb_frames = 0.0;
	for (int t = 0; t < ticks; t++)
		pt_world_step_dense(w, dt, w->def.prewarm_substeps, di, di + 1);
	in->time = 0.0;
	in->sb_frames = 0.0;
}

static pt_pose normalised(pt_pose p, int *ok)
{
	float l2 = q_dot(p.q, p.q);
	*ok = v3_finite(p.p) && isfinite(p.q.x) && isfinite(p.q.y) && isfinite(p.q.z) &&
	      isfinite(p.q.w) && l2 > 1e-12f && isfinite(l2) && fabsf(p.p.x) < 1e6f &&
	      fabsf(p.p.y) < 1e6f && fabsf(p.p.z) < 1e6f;
	if (*ok)
		p.q = q_norm(p.q);
	return p;
}

/* Fills the next dense header for `slot` at the end of the pool; `bones` (NULL or the
 * bone table of the instance it replaces, whose poses carry over) becomes its own. */
static int append_instance(pt_world *w, const pt_instance_def *def, pt_pose head, int slot,
                           pt_bones_rt *bones)
{
	int n = topology_of(def);
	if (!grow((void **)&w->inst, &w->cap, w->count + 1, sizeof(pt_inst)) ||
	    !grow((void **)&w->cold, &w->cold_cap, w->count + 1, sizeof(pt_inst_cold)) ||
	    !reserve_points(w, w->pool_count + n))
		return 0;
	pt_inst *in = &w->inst[w->count];
	memset(in, 0, sizeof *in);
	char *body = body_alloc(def->strand_count, def->collider_count);
	if (!body)
		return 0;
	body_install(in, body, def->strand_count, def->collider_count);
	memset(&w->cold[w->count], 0, sizeof w->cold[0]);
	w->cold[w->count].slot = (uint32_t)slot;
	in->offset = w->pool_count;
	in->npoints = n;
	in->bones = bones;
	if (!pt_bones_load(&in->bones, def)) {
		pt_bones_free(&in->bones);
		free(in->strands);
		return 0;
	}
	load_topology(w, in, def);
	load_params(w, in, def);
	if (pt_wind_sb_own(def) && !(in->room_wind = pt_wind_rt_new(n))) {
		pt_bones_free(&in->bones);
		free(in->strands);
		return 0;
	}
	if (in->ops->init && !in->ops->init(in, def)) {
		pt_wind_rt_free(&in->room_wind);
		pt_bones_free(&in->bones);
		free(in->strands);
		return 0;
	}
	in->head_target = head;
	w->pool_count += n;
	w->slot_dense[slot] = w->count++;
	pt_state_params_refresh(w, in);
	rest_and_prewarm(w, in);
	return 1;
}

pt_id pt_world_create_instance(pt_world *w, const pt_instance_def *def, pt_pose head)
{
	pt_id id = {0, 0};
	assert(pt_instance_validate(def).ok);
	int ok;
	head = normalised(head, &ok);
	if (!ok)
		head.q = pt_quat_identity(), head.p = pt_v3(0, 0, 0);
	int slot = reserve_slot(w);
	if (slot < 0)
		return id;
	if (!append_instance(w, def, head, slot, NULL)) {
		w->free_slots[w->free_count++] = slot;
		return id;
	}
	id.index = (uint32_t)slot + 1;
	id.generation = w->slot_gen[slot];
	return id;
}

/* Removes dense entry `di` and its points, keeping the rest densely packed. */
static void remove_dense(pt_world *w, int di)
{
	pt_inst *in = &w->inst[di];
	if (in->ops->destroy)
		in->ops->destroy(in);
	pt_bones_free(&in->bones);
	pt_wind_rt_free(&in->room_wind);
	pt_touch_rt_free(&in->touch);
	free(in->strands);
	int off = in->offset, n = in->npoints, tail = w->pool_count - off - n;
	float **arrays[] = PT_POOL_ARRAYS(w);
	for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
		memmove(*arrays[i] + off, *arrays[i] + off + n, (size_t)tail * sizeof(float));
	w->pool_count -= n;
	w->slot_dense[w->cold[di].slot] = -1;
	memmove(&w->inst[di], &w->inst[di + 1], (size_t)(w->count - di - 1) * sizeof(pt_inst));
	memmove(&w->cold[di], &w->cold[di + 1], (size_t)(w->count - di - 1) * sizeof(pt_inst_cold));
	w->count--;
	for (int i = di; i < w->count; i++) {
		w->inst[i].offset -= n;
		w->slot_dense[w->cold[i].slot] = i;
	}
}

int pt_world_destroy_instance(pt_world *w, pt_id id)
{
	pt_inst *in = lookup(w, id);
	if (!in)
		return 0;
	uint32_t slot = w->cold[in - w->inst].slot;
	remove_dense(w, (int)(in - w->inst));
	w->slot_gen[slot]++;
	if (w->slot_gen[slot] == 0)
		w->slot_gen[slot] = 1;
	w->free_slots[w->free_count++] = (int)slot;
	return 1;
}

static int same_topology(const pt_world *w, const pt_inst *in, const pt_instance_def *d)
{
	if (in->solver != d->solver || in->strand_count != d->strand_count)
		return 0;
	for (int s = 0; s < d->strand_count; s++) {
		const pt_strand_rt *st = &in->strands[s];
		const pt_strand_def *sd = &d->strands[s];
		if (st->points != sd->points || memcmp(&st->anchor, &sd->anchor, sizeof(pt_vec3)) != 0)
			return 0;
		for (int j = 0; j + 1 < sd->points; j++) {
			int i = in->offset + st->first + j + 1;
			float len;
			pt_vec3 u;
			pt_strand_rest_segment(sd, j, &len, &u);
			if (len != w->len[i] || u.x != w->ux[i] || u.y != w->uy[i] || u.z != w->uz[i])
				return 0;
		}
	}
	return 1;
}

int pt_world_update_instance(pt_world *w, pt_id id, const pt_instance_def *def)
{
	pt_inst *in = lookup(w, id);
	if (!in)
		return 0;
	assert(pt_instance_validate(def).ok);
	if (same_topology(w, in, def)) {
		/* a new body first when the collider count changes, so that a failure below
		 * leaves the instance untouched */
		char *body = NULL;
		pt_wind_rt *own = NULL; /* a spring bone's own wind that starts to blow */
		if (pt_wind_sb_own(def) && !in->room_wind && !(own = pt_wind_rt_new(in->npoints)))
			return -1;
		if (def->collider_count != in->collider_count &&
		    !(body = body_alloc(in->strand_count, def->collider_count))) {
			pt_wind_rt_free(&own);
			return -1;
		}
		if (!pt_bones_load(&in->bones, def)) {
			free(body);
			pt_wind_rt_free(&own);
			return -1;
		}
		if (body)
			body_install(in, body, in->strand_count, def->collider_count);
		load_params(w, in, def);
		if (own)
			in->room_wind = own;
		else if (in->room_wind && in->room_wind->n == 0 && !pt_wind_sb_own(def))
			pt_wind_rt_free(&in->room_wind); /* its own wind stopped, no zones */
		if (in->solver == PT_SOLVER_SPRINGBONE)
			pt_sb_terms_stale(in);
		/* Masses are parameters too; they live in the pool. */
		load_topology(w, in, def);
		if (in->ops->update_params)
			in->ops->update_params(in, def);
		pt_state_params_refresh(w, in);
		return 1;
	}
	/* Topology change: reserve first so a failure leaves the instance untouched. */
	if (!reserve_points(w, w->pool_count + topology_of(def)) ||
	    !grow((void **)&w->inst, &w->cap, w->count + 1, sizeof(pt_inst)) ||
	    !grow((void **)&w->cold, &w->cold_cap, w->count + 1, sizeof(pt_inst_cold)))
		return -1;
	in = lookup(w, id);
	if (!pt_wind_rt_fit(in->room_wind, topology_of(def)))
		return -1;
	pt_pose head = in->head_target;
	uint32_t teleports = in->teleports;
	int slot = (int)w->cold[in - w->inst].slot;
	pt_bones_rt *bones = in->bones; /* the bones' poses outlive the re-creation */
	pt_wind_rt *wind = in->room_wind; /* and so does the room's wind (after the prewarm) */
	pt_touch_rt *touch = in->touch;   /* and the next step's touch and grabs */
	in->bones = NULL;
	in->room_wind = NULL;
	in->touch = NULL;
	remove_dense(w, (int)(in - w->inst));
	if (!append_instance(w, def, head, slot, bones)) {
		pt_wind_rt_free(&wind);
		pt_touch_rt_free(&touch);
		return -1;
	}
	pt_inst *ni = &w->inst[w->count - 1];
	ni->teleports = teleports;
	if (wind && (wind->n > 0 || !ni->room_wind)) { /* the room's zones win; an own wind's
	                                                 * runtime is the same for both */
		pt_wind_rt_free(&ni->room_wind);
		ni->room_wind = wind;
	} else {
		pt_wind_rt_free(&wind);
	}
	if (ni->room_wind && ni->room_wind->n == 0 && !pt_wind_sb_own(def))
		pt_wind_rt_free(&ni->room_wind);
	ni->touch = touch;
	pt_touch_refit(ni);
	pt_state_params_refresh(w, ni);
	return 1;
}

int pt_world_set_room_wind(pt_world *w, pt_id id, const pt_wind_zone *zones, int n)
{
	pt_inst *in = lookup(w, id);
	if (!in || (n > 0 && !zones) || !pt_wind_zones_validate(zones, n).ok)
		return 0;
	if (n == 0) {
		if (in->solver == PT_SOLVER_SPRINGBONE && v3_len2(in->wind_velocity) > 0.0f) {
			if (in->room_wind)
				in->room_wind->n = 0; /* its own wind still blows through it */
		} else {
			pt_wind_rt_free(&in->room_wind);
		}
	} else {
		pt_wind_rt *rt = in->room_wind;
		if (!rt) {
			rt = calloc(1, sizeof *rt);
			if (!rt || !pt_wind_rt_fit(rt, in->npoints)) {
				pt_wind_rt_free(&rt);
				return -1;
			}
			in->room_wind = rt;
		}
		memcpy(rt->zones, zones, (size_t)n * sizeof *zones);
		rt->n = n;
	}
	/* the spring bones' terms hold the wind's push: made again at the next step */
	if (in->solver == PT_SOLVER_SPRINGBONE)
		pt_sb_terms_stale(in);
	pt_state_params_refresh(w, in);
	return 1;
}

int pt_world_get_room_wind(const pt_world *w, pt_id id, pt_wind_zone *out, int cap)
{
	const pt_inst *in = lookup(w, id);
	if (!in)
		return -1;
	int n = in->room_wind ? in->room_wind->n : 0;
	for (int i = 0; i < n && i < cap; i++)
		out[i] = in->room_wind->zones[i];
	return n;
}

int pt_world_set_head(pt_world *w, pt_id id, pt_pose head)
{
	pt_inst *in = lookup(w, id);
	int ok;
	head = normalised(head, &ok);
	if (!in || !ok)
		return 0;
	in->head_target = head;
	in->extrapolate = 0;
	return 1;
}

int pt_world_set_head_motion(pt_world *w, pt_id id, pt_pose head, pt_vec3 v, pt_vec3 wvel,
                             float age_s)
{
	pt_inst *in = lookup(w, id);
	int ok;
	head = normalised(head, &ok);
	if (!in || !ok || !v3_finite(v) || !v3_finite(wvel) || !(v3_len(v) <= 100.0f) ||
	    !(v3_len(wvel) <= 100.0f) || !(age_s >= -1.0f && age_s <= 10.0f))
		return 0;
	in->head_target = head;
	in->extrapolate = 1;
	in->sampled = head, in->sampled_v = v, in->sampled_w = wvel;
	in->sampled_age = age_s;
	return 1;
}

/* The sampled pose carried t seconds along its velocities (t clamped to
 * [0, PT_EXTRAPOLATE_MAX_S]); the rotation is exp(w t / 2) q, w in world axes. */
pt_pose pt_inst_extrapolated(const pt_inst *in, double t)
{
	float s = (float)(t < 0.0 ? 0.0 : t > PT_EXTRAPOLATE_MAX_S ? PT_EXTRAPOLATE_MAX_S : t);
	pt_pose p = in->sampled;
	p.p = v3_add(p.p, v3_scale(in->sampled_v, s));
	float rate = v3_len(in->sampled_w);
	if (rate > 0.0f)
		p.q = q_norm(q_mul(q_axis_angle(v3_scale(in->sampled_w, 1.0f / rate), rate * s), p.q));
	return p;
}

int pt_world_set_bone_pose(pt_world *w, pt_id id, pt_bone bone, pt_pose pose)
{
	pt_inst *in = lookup(w, id);
	int ok;
	pose = normalised(pose, &ok);
	if (!in || !ok || (unsigned)bone >= PT_BONE_COUNT)
		return 0;
	pt_bones_set(in->bones, bone, pose);
	return 1;
}

int pt_world_get_bone_pose(const pt_world *w, pt_id id, pt_bone bone, pt_pose *out)
{
	const pt_inst *in = lookup(w, id);
	if (!in || !in->bones)
		return 0;
	int n = pt_bones_node(in->bones, bone);
	if (n < 0)
		return 0;
	*out = pt_bones_node_pose(in->bones, n, &in->head_target, 1.0f);
	return 1;
}

int pt_world_get_head(const pt_world *w, pt_id id, pt_pose *out)
{
	const pt_inst *in = lookup(w, id);
	if (!in)
		return 0;
	*out = in->head_target;
	return 1;
}

int pt_world_reset_instance(pt_world *w, pt_id id)
{
	pt_inst *in = lookup(w, id);
	if (!in)
		return 0;
	rest_and_prewarm(w, in);
	return 1;
}

/* ---- read back ------------------------------------------------------------------ */

int pt_world_shape(const pt_world *w, pt_id id, int *strand_count, int *points_per_strand)
{
	const pt_inst *in = lookup(w, id);
	if (!in)
		return -1;
	if (strand_count)
		*strand_count = in->strand_count;
	if (points_per_strand)
		for (int s = 0; s < in->strand_count; s++)
			points_per_strand[s] = in->strands[s].points;
	return in->npoints;
}

int pt_world_read_points(const pt_world *w, pt_id id, pt_vec3 *out, int cap)
{
	const pt_inst *in = lookup(w, id);
	if (!in)
		return -1;
	if (in->npoints > cap)
		return in->npoints;
	for (int i = 0; i < in->npoints; i++) {
		int k = in->offset + i;
		out[i] = pt_v3(w->x[k], w->y[k], w->z[k]);
	}
	return in->npoints;
}

void pt_world_prefetch(const pt_world *w, pt_id id, int stage)
{
	const pt_inst *in = lookup(w, id);
	if (!in)
		return;
	if (stage == 0) { /* offset and npoints on the first line, head_target on the second */
		PT_PREFETCH(in);
		PT_PREFETCH((const char *)in + 64);
		PT_PREFETCH((const char *)in + 128);
		return;
	}
	prefetch_floats(&w->x[in->offset], in->npoints);
	prefetch_floats(&w->y[in->offset], in->npoints);
	prefetch_floats(&w->z[in->offset], in->npoints);
}

/* How many per-point arrays the pool has. */
static size_t pool_arrays(void)
{
	static pt_world probe; /* addresses only: PT_POOL_ARRAYS wants a world named w */
	pt_world *w = &probe;
	float **arrays[] = PT_POOL_ARRAYS(w);
	return sizeof arrays / sizeof arrays[0];
}

size_t pt_world_instance_bytes(const pt_world *w, pt_id id)
{
	const pt_inst *in = lookup(w, id);
	if (!in)
		return 0;
	size_t o_col, o_pose, o_rot;
	size_t b = sizeof(pt_inst) + sizeof(pt_inst_cold) +
	           body_layout(in->strand_count, in->collider_count, &o_col, &o_pose, &o_rot);
	if (in->solver == PT_SOLVER_SPRINGBONE)
		b += pt_sb_data_bytes(in);
	if (in->bones)
		b += sizeof *in->bones + sizeof(pt_bone_rt) * (size_t)in->bones->count;
	return b + sizeof(float) * pool_arrays() * (size_t)in->npoints;
}

uint32_t pt_world_teleports(const pt_world *w, pt_id id)
{
	const pt_inst *in = lookup(w, id);
	return in ? in->teleports : 0;
}

static uint64_t fnv(uint64_t h, const float *v, int n)
{
	const unsigned char *b = (const unsigned char *)v;
	for (size_t i = 0; i < (size_t)n * sizeof(float); i++) {
		h ^= b[i];
		h *= 1099511628211ull;
	}
	return h;
}

static uint64_t hash_range(const pt_world *w, uint64_t h, int off, int n)
{
	const float *arrays[] = {w->x, w->y, w->z, w->px, w->py, w->pz};
	for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
		h = fnv(h, arrays[i] + off, n);
	return h;
}

uint64_t pt_world_hash(const pt_world *w)
{
	return hash_range(w, 14695981039346656037ull, 0, w->pool_count);
}

uint64_t pt_world_instance_hash(const pt_world *w, pt_id id)
{
	const pt_inst *in = lookup(w, id);
	return in ? hash_range(w, 14695981039346656037ull, in->offset, in->npoints) : 0;
}
