/* Simulation thread: see sim.h. This file holds the instance table and the tick loop;
 * sim_frame.c encodes and publishes each tick's frame set. */
#include "sim.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "metrics.h"
#include "ptp/compact.h"
#include "sim_internal.h"

/* Below this many instances one thread steps them all: handing work to the pool costs
 * two wake-ups (~10-50 us), more than stepping a few dozen small instances. */
enum { PARALLEL_MIN = 64 };

int64_t sim_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t sim_wall_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

sim_t *sim_create(const sim_config_t *cfg, cmdq_t *q, frame_ring_t *ring)
{
	sim_t *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	s->cfg = *cfg;
	if (s->cfg.workers < 1)
		s->cfg.workers = 1;
	if (s->cfg.workers > FRAME_MAX_WORKERS)
		s->cfg.workers = FRAME_MAX_WORKERS;
	s->q = q;
	s->ring = ring;
	s->rec = cfg->rec;
	s->dt = 1.0f / (float)cfg->tick_hz;
	for (int c = 0; c < FRAME_CODINGS; c++)
		for (int r = 0; r < FRAME_RATES; r++) {
			s->div[c][r] = frame_rate_divisor(cfg->tick_hz, c, r);
			s->own |= SIM_STREAM_BIT(c, frame_rate_stream(cfg->tick_hz, c, r));
		}
	s->tick = cfg->first_tick;
	pt_world_def wd = pt_world_def_default();
	wd.initial_capacity = 256;
	wd.prewarm_tick_hz = (float)cfg->tick_hz;
	wd.prewarm_substeps = cfg->substeps;
	s->world = pt_world_create(&wd);
	s->pool = pool_create(s->cfg.workers, s->cfg.pin_workers);
	s->scratch = calloc((size_t)s->cfg.workers, sizeof *s->scratch);
	if (!s->world || !s->pool || !s->scratch) {
		sim_destroy(s);
		return NULL;
	}
	return s;
}

void sim_destroy(sim_t *s)
{
	if (!s)
		return;
	pool_destroy(s->pool);
	for (int i = 0; i < s->nslots; i++)
		if (s->inst[i].id) {
			sim_enc_destroy(&s->inst[i]);
			meta_unref(s->inst[i].meta);
			free(s->inst[i].rec_def);
			simtouch_forget(s, &s->inst[i]);
		}
	simtouch_destroy(s);
	for (int i = 0; i < s->nev; i++) {
		meta_unref(s->ev[i].meta);
		meta_unref(s->ev[i].old);
	}
	free(s->ev);
	free(s->inst);
	free(s->free_slots);
	free(s->index);
	free(s->room_order);
	free(s->rooms);
	free(s->winds);
	free(s->scratch);
	pt_world_destroy(s->world);
	free(s);
}

uint64_t sim_tick_now(const sim_t *s, int64_t *completed_ns)
{
	if (completed_ns)
		*completed_ns = __atomic_load_n(&s->tick_done_ns, __ATOMIC_ACQUIRE);
	return __atomic_load_n(&s->tick, __ATOMIC_ACQUIRE);
}

/* ---- instance table --------------------------------------------------------------- */

void sim_enc_force_key(sim_inst_t *in)
{
	for (int c = 0; c < FRAME_CODINGS; c++)
		for (int r = 0; r < FRAME_RATES; r++)
			if (in->enc[c][r])
				ptp_encoder_force_key(in->enc[c][r]);
}

void sim_enc_destroy(sim_inst_t *in)
{
	/* remade (for the current shape) when watched */
	for (int c = 0; c < FRAME_CODINGS; c++)
		for (int r = 0; r < FRAME_RATES; r++) {
			ptp_encoder_destroy(in->enc[c][r]);
			in->enc[c][r] = NULL;
		}
}

static int index_pos(const sim_t *s, uint64_t id)
{
	int lo = 0, hi = s->nindex - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		if (s->index[mid].id == id)
			return mid;
		if (s->index[mid].id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -lo - 1;
}

int sim_slot_of(const sim_t *s, uint64_t id)
{
	int p = index_pos(s, id);
	return p >= 0 ? s->index[p].slot : -1;
}

/* Makes room for one more instance in every per-slot array. Returns 0 or -1. */
static int reserve(sim_t *s)
{
	if (s->nslots < s->cap || s->nfree > 0)
		return 0;
	int nc = s->cap ? s->cap * 2 : 64;
	sim_inst_t *ni = realloc(s->inst, (size_t)nc * sizeof *ni);
	if (!ni)
		return -1;
	s->inst = ni;
	int *nf = realloc(s->free_slots, (size_t)nc * sizeof *nf);
	if (!nf)
		return -1;
	s->free_slots = nf;
	id_slot_t *nx = realloc(s->index, (size_t)nc * sizeof *nx);
	if (!nx)
		return -1;
	s->index = nx;
	int *no = realloc(s->room_order, (size_t)nc * sizeof *no);
	if (!no)
		return -1;
	s->room_order = no;
	s->cap = nc;
	return 0;
}

static inst_meta_t *make_meta(uint64_t id, const pt_instance_def *def)
{
	inst_meta_t *m = meta_new(def->strand_count);
	if (!m)
		return NULL;
	m->id = id;
	memcpy(m->name, def->name, sizeof m->name);
	memcpy(m->room, def->room, sizeof m->room);
	for (int i = 0; i < def->strand_count; i++) {
		const pt_strand_def *sd = &def->strands[i];
		ptp_shape_strand_t *st = &m->shape.strands[i];
		st->points = (uint8_t)sd->points;
		st->segment_length = sd->segment_length;
		st->anchor[0] = sd->anchor.x, st->anchor[1] = sd->anchor.y,
		st->anchor[2] = sd->anchor.z;
		st->direction[0] = sd->direction.x, st->direction[1] = sd->direction.y,
		st->direction[2] = sd->direction.z;
	}
	return m;
}

/* The largest radius a point of def collides with, m: what the touch cull adds to the
 * bounding sphere of its points (sim_touch.c). */
static float touch_margin(const pt_instance_def *def)
{
	float r = 0;
	for (int i = 0; i < def->strand_count; i++) {
		const pt_strand_def *sd = &def->strands[i];
		r = sd->radius > r ? sd->radius : r;
		for (int j = 0; j < sd->points - 1; j++) {
			r = sd->joints[j].hit_radius > r ? sd->joints[j].hit_radius : r;
			r = sd->joints[j].radius > r ? sd->joints[j].radius : r;
		}
	}
	return r;
}

static int same_shape(const ptp_shape_t *a, const ptp_shape_t *b)
{
	if (a->strand_count != b->strand_count)
		return 0;
	for (int i = 0; i < a->strand_count; i++) {
		const ptp_shape_strand_t *x = &a->strands[i], *y = &b->strands[i];
		if (x->points != y->points || x->segment_length != y->segment_length ||
		    memcmp(x->anchor, y->anchor, sizeof x->anchor) != 0 ||
		    memcmp(x->direction, y->direction, sizeof x->direction) != 0)
			return 0;
	}
	return 1;
}

ptp_encoder_t *sim_make_encoder(const sim_t *s, const inst_meta_t *m, int coding, int stream)
{
	ptp_encoder_params_t p = ptp_encoder_params_default();
	/* A stream's encoder ticks once per `div` ticks: the same keyframe spacing in time. */
	int every = s->cfg.keyframe_interval / s->div[coding][stream];
	p.keyframe_interval = every > 1 ? every : 1;
	ptp_encoder_t *e = coding == FRAME_COMPACT ? ptp_encoder_create_compact(&m->shape, &p)
	                                           : ptp_encoder_create(&m->shape, &p);
	/* Each instance's periodic keyframes on a tick of its own (ids are consecutive, so
	 * the instances of a room or a restart spread evenly): a keyframe tick costs ~1.6
	 * times a delta tick, and all of them at once was a spike once a second. */
	ptp_encoder_set_key_phase(e, (uint32_t)(m->id % (uint64_t)p.keyframe_interval));
	return e;
}

void sim_push_event(sim_t *s, ptp_event_kind_t kind, inst_meta_t *m, inst_meta_t *old)
{
	if (s->nev == s->cap_ev) {
		int nc = s->cap_ev ? s->cap_ev * 2 : 64;
		frame_event_t *ne = realloc(s->ev, (size_t)nc * sizeof *ne);
		if (!ne) {
			LOG(LOG_ERROR, "out of memory: event for instance %llu dropped",
			    (unsigned long long)m->id);
			meta_unref(m);
			meta_unref(old);
			return;
		}
		s->ev = ne;
		s->cap_ev = nc;
	}
	s->ev[s->nev++] = (frame_event_t){(uint8_t)kind, s->tick + 1, m, old};
}

static cmd_result_t inst_create(sim_t *s, uint64_t id, const pt_instance_def *def,
                                const driver_t *drv, const interact_t *ia)
{
	if (index_pos(s, id) >= 0 || reserve(s) != 0)
		return CMD_NO_MEMORY;
	inst_meta_t *m = make_meta(id, def);
	ptp_encoder_t *enc = m ? sim_make_encoder(s, m, FRAME_CLASSIC, 0) : NULL;
	pt_pose head = {pt_v3(0, 0, 0), pt_quat_identity()};
	if (drv->enabled)
		head = driver_pose(drv, 0.0);
	pt_id pid = enc ? pt_world_create_instance(s->world, def, head) : (pt_id){0, 0};
	if (pt_id_is_null(pid)) {
		ptp_encoder_destroy(enc);
		meta_unref(m);
		return CMD_NO_MEMORY;
	}
	int slot = s->nfree > 0 ? s->free_slots[--s->nfree] : s->nslots++;
	sim_inst_t *in = &s->inst[slot];
	memset(in, 0, sizeof *in);
	in->id = id;
	in->pid = pid;
	in->driver = *drv;
	s->ndriven += drv->enabled != 0;
	in->born_tick = in->drive_origin = s->tick + 1;
	in->npoints = pt_world_shape(s->world, pid, NULL, NULL);
	in->enc[FRAME_CLASSIC][0] = enc;
	in->meta = m;
	in->touch_margin = touch_margin(def);
	if (simtouch_def(s, in, def, ia) != 0)
		LOG(LOG_ERROR, "out of memory: instance %llu keeps the default touch and grab grants",
		    (unsigned long long)id);
	int p = -index_pos(s, id) - 1;
	memmove(&s->index[p + 1], &s->index[p], (size_t)(s->nindex - p) * sizeof *s->index);
	s->index[p] = (id_slot_t){id, slot};
	s->nindex++;
	s->order_dirty = 1;
	metrics_set(&metrics.instances, (uint64_t)s->nindex);
	sim_push_event(s, PTP_EVENT_ADDED, meta_ref(m), NULL);
	simrec_create(s, in, def, head);
	simwind_join(s, in, def->room, 0);
	return CMD_OK;
}

static cmd_result_t inst_update(sim_t *s, int slot, const pt_instance_def *def, const driver_t *drv,
                                const interact_t *ia)
{
	sim_inst_t *in = &s->inst[slot];
	inst_meta_t *m = make_meta(in->id, def);
	if (!m || simtouch_def(s, in, def, ia) != 0) {
		meta_unref(m);
		return CMD_NO_MEMORY;
	}
	in->touch_margin = touch_margin(def);
	int reshaped = !same_shape(&m->shape, &in->meta->shape);
	ptp_encoder_t *enc = reshaped ? sim_make_encoder(s, m, FRAME_CLASSIC, 0) : NULL;
	if (reshaped && !enc) {
		meta_unref(m);
		return CMD_NO_MEMORY;
	}
	int r = pt_world_update_instance(s->world, in->pid, def);
	if (r != 1) {
		ptp_encoder_destroy(enc);
		meta_unref(m);
		return r == 0 ? CMD_NOT_FOUND : CMD_NO_MEMORY;
	}
	if (strcmp(m->room, in->meta->room) != 0)
		s->order_dirty = 1;
	if (reshaped) {
		sim_enc_destroy(in); /* the slower streams' are made again, for the new shape */
		in->enc[FRAME_CLASSIC][0] = enc;
		in->born_tick = s->tick + 1;
		in->npoints = pt_world_shape(s->world, in->pid, NULL, NULL);
	} else {
		/* PROTOCOL.md: after "changed" the next record is a keyframe (clients rebuild
		 * their decoder from the event's shape). A new encoder starts with one anyway. */
		sim_enc_force_key(in);
	}
	/* A new or changed driver starts its motion from t = 0. */
	if (drv->enabled && (!in->driver.enabled ||
	                     memcmp(&drv->motion, &in->driver.motion, sizeof drv->motion) != 0))
		in->drive_origin = s->tick + 1;
	s->ndriven += (drv->enabled != 0) - (in->driver.enabled != 0);
	in->driver = *drv;
	simrec_update(s, in, def, in->meta->room);
	if (strcmp(def->room, in->meta->room) != 0) /* the new room's wind, or none */
		simwind_join(s, in, def->room, 1);
	sim_push_event(s, PTP_EVENT_CHANGED, meta_ref(m), in->meta); /* the old meta moves */
	in->meta = m;
	return CMD_OK;
}

static void inst_delete(sim_t *s, int slot)
{
	sim_inst_t *in = &s->inst[slot];
	simrec_delete(s, in);
	simtouch_forget(s, in);
	pt_world_destroy_instance(s->world, in->pid);
	sim_enc_destroy(in);
	s->ndriven -= in->driver.enabled != 0;
	sim_push_event(s, PTP_EVENT_REMOVED, in->meta, NULL); /* the table's reference moves */
	int p = index_pos(s, in->id);
	memmove(&s->index[p], &s->index[p + 1], (size_t)(s->nindex - p - 1) * sizeof *s->index);
	s->nindex--;
	memset(in, 0, sizeof *in);
	s->free_slots[s->nfree++] = slot;
	s->order_dirty = 1;
	metrics_set(&metrics.instances, (uint64_t)s->nindex);
}

static cmd_result_t read_frame(sim_t *s, int slot, cmd_frame_t *f)
{
	sim_inst_t *in = &s->inst[slot];
	memset(f, 0, sizeof *f);
	f->tick = s->tick;
	f->t = (double)s->tick / s->cfg.tick_hz;
	f->last_seq = in->last_seq;
	pt_world_get_head(s->world, in->pid, &f->head);
	int n = pt_world_shape(s->world, in->pid, &f->strand_count, f->points);
	f->xyz = malloc((size_t)n * sizeof *f->xyz);
	if (!f->xyz)
		return CMD_NO_MEMORY;
	f->n = pt_world_read_points(s->world, in->pid, f->xyz, n);
	/* Never hand REST a NaN (it would answer 500): reset and serve the rest pose. */
	if (f->n > 0 && !sim_points_finite(f->xyz, f->n)) {
		sim_guard_reset(s, slot, "a REST frame read");
		f->n = pt_world_read_points(s->world, in->pid, f->xyz, n);
	}
	f->state_hash = pt_world_state_hash(s->world, in->pid);
	return CMD_OK;
}

static cmd_result_t apply(sim_t *s, cmd_t *c)
{
	if (c->kind == CMD_CREATE)
		return inst_create(s, c->id, c->def, &c->driver, c->interaction);
	if (c->kind == CMD_WIND)
		return simwind_set(s, c->room, c->zones, c->nzones);
	if (c->kind == CMD_GRAB || c->kind == CMD_UNGRAB || c->kind == CMD_GRABS ||
	    c->kind == CMD_CONN_GONE)
		return simtouch_cmd(s, c);
	int slot = sim_slot_of(s, c->id);
	if (slot < 0)
		return CMD_NOT_FOUND;
	switch (c->kind) {
	case CMD_UPDATE:
		return inst_update(s, slot, c->def, &c->driver, c->interaction);
	case CMD_DELETE:
		inst_delete(s, slot);
		return CMD_OK;
	case CMD_RESET:
		pt_world_reset_instance(s->world, s->inst[slot].pid);
		simrec_id(&s->inst[slot], PT_REC_RESET);
		sim_enc_force_key(&s->inst[slot]);
		sim_push_event(s, PTP_EVENT_RESET, meta_ref(s->inst[slot].meta), NULL);
		return CMD_OK;
	case CMD_FRAME:
		return read_frame(s, slot, &c->frame);
	default:
		return CMD_NOT_FOUND;
	}
}

int sim_preload(sim_t *s, uint64_t id, const pt_instance_def *def, const driver_t *driver,
                const interact_t *ia)
{
	int rc = inst_create(s, id, def, driver, ia) == CMD_OK ? 0 : -1;
	/* Nobody is subscribed before start: the ADDED events would only be noise. */
	for (int i = 0; i < s->nev; i++) {
		meta_unref(s->ev[i].meta);
		meta_unref(s->ev[i].old);
	}
	s->nev = 0;
	return rc;
}

/* ---- one tick --------------------------------------------------------------------- */

/* Applies queued commands oldest first until a quarter of the tick budget is spent
 * (creates prewarm, which costs real time); the rest wait for the next tick, in order.
 * Returns the list of applied commands, to complete after publishing. */
static cmd_t *apply_commands(sim_t *s, int64_t t0, int64_t budget_ns)
{
	cmd_t *fresh = cmdq_take(s->q);
	if (fresh) {
		cmd_t **tail = &s->backlog;
		while (*tail)
			tail = &(*tail)->next;
		*tail = fresh;
	}
	cmd_t *done = NULL, **done_tail = &done;
	while (s->backlog) {
		if (done && sim_mono_ns() - t0 > budget_ns / 4)
			break;
		cmd_t *c = s->backlog;
		s->backlog = c->next;
		c->next = NULL;
		c->result = apply(s, c);
		metrics_add(&metrics.commands, 1);
		*done_tail = c;
		done_tail = &c->next;
	}
	return done;
}

/* Worker w of n: the driver poses of its blocks of slots for the coming tick. */
static void drive_part(void *ctx, int w, int n)
{
	sim_t *s = ctx;
	uint64_t tick = s->tick + 1;
	(void)w, (void)n;
	SIM_FOR_SLOTS(s, slot)
	{
		sim_inst_t *in = &s->inst[slot];
		if (in->id && in->driver.enabled)
			in->drive_pose = driver_pose(
			    &in->driver, (double)(tick - in->drive_origin) / s->cfg.tick_hz);
	}
}

static void apply_poses(sim_t *s)
{
	const pose_in_t *p;
	int n;
	cmdq_take_poses(s->q, &p, &n);
	for (int i = 0; i < n; i++) {
		int slot = sim_slot_of(s, p[i].id);
		if (slot < 0 || s->inst[slot].driver.enabled)
			continue; /* admitted by the door, then deleted or given a driver
			           * before this tick: not a second admission check, a race */
		sim_inst_t *in = &s->inst[slot];
		/* PROTOCOL.md: a seq older than one already taken (mod 2^32, within 2^31) is
		 * dropped, so a reordered or replayed pose never moves the head back. */
		if (p[i].seq && in->seq_seen && (int32_t)(p[i].seq - in->seq_seen) < 0)
			continue;
		/* Bones are held by core until the next pose of theirs: set them now (the
		 * newest of this tick's wins, as for the head). */
		for (int b = 0; b < p[i].nbones; b++) {
			pt_world_set_bone_pose(s->world, in->pid, p[i].bones[b].bone,
			                       p[i].bones[b].pose);
			simtouch_bone(s, in, p[i].bones[b].bone, p[i].bones[b].pose, p[i].conn);
			if (in->rec)
				pt_rec_put_bone(rec_stage(in->rec), in->id, p[i].bones[b].bone,
				                p[i].bones[b].pose);
		}
		if (!in->has_pose) /* the first since the last applied: what its frame answers */
			in->first_arrival_ns = p[i].arrival_ns;
		in->pose = p[i].pose;
		in->has_pose = 1;
		in->moving = p[i].moving, in->v = p[i].v, in->w = p[i].w;
		in->arrival_ns = p[i].arrival_ns;
		if (p[i].seq)
			in->pending_seq = in->seq_seen = p[i].seq;
	}
	const uint64_t *keys;
	int nk = frame_ring_take_key_requests(s->ring, &keys);
	for (int i = 0; i < nk; i++) {
		int slot = sim_slot_of(s, FRAME_KEY_ID(keys[i]));
		if (slot >= 0)
			s->inst[slot].key_wanted |=
			    SIM_STREAM_BIT(FRAME_KEY_CODING(keys[i]), FRAME_KEY_STREAM(keys[i]));
	}
	/* Motions are pure functions of time: evaluated on the workers (thousands of bots
	 * cost a measurable part of a tick), then handed to core on this thread. Without
	 * enough of them the pool is not woken: a sleeping worker's wake-up (~70 us on this
	 * VM) came before every tick's step when 200 clients drove their own heads. */
	s->next_work = 0;
	if (s->ndriven >= PARALLEL_MIN && pool_size(s->pool) > 1)
		pool_run(s->pool, pool_size(s->pool), drive_part, s);
	else if (s->ndriven > 0)
		drive_part(s, 0, 1);
	for (int i = 0; i < s->nindex; i++) {
		sim_inst_t *in = &s->inst[s->index[i].slot];
		in->applied_arrival_ns = 0;
		if (in->driver.enabled) {
			pt_world_set_head(s->world, in->pid, in->drive_pose);
			simrec_head(in, in->drive_pose);
		} else if (in->has_pose) {
			/* Held until a newer one arrives: a silent client's head stays put (or, with
			 * velocities, is extrapolated from its arrival for at most 50 ms). The step
			 * about to run ends now, so it starts dt ago: the pose's age then. */
			if (in->moving) {
				float age = (float)((double)(sim_mono_ns() - in->arrival_ns) * 1e-9 - s->dt);
				pt_world_set_head_motion(s->world, in->pid, in->pose, in->v, in->w, age);
				if (in->rec)
					pt_rec_put_motion(rec_stage(in->rec), in->id, in->pose, in->v, in->w, age);
			} else {
				pt_world_set_head(s->world, in->pid, in->pose);
				simrec_head(in, in->pose);
			}
			in->has_pose = 0;
			in->last_seq = in->pending_seq;
			in->applied_arrival_ns = in->first_arrival_ns;
			s->poses_arrival_sum_ns += in->arrival_ns;
			s->poses_applied++;
		}
	}
}

/* Stepping is handed out in pieces of core's index order (guided self-scheduling): a
 * piece is what is left over twice the workers, between STEP_PIECE_MIN and STEP_PIECE_MAX
 * instances. Big first pieces keep core's batches full; the small last ones let the
 * workers finish within a small piece of each other, where fixed 256-instance chunks left
 * one idle for half a chunk on average (~0.13 ms of a 2.3 ms step of 4,000 instances); and
 * a delayed worker's share is still picked up by the others (the fixed halves of before
 * left the tick waiting for the slower one). */
enum { STEP_PIECE_MIN = 32, STEP_PIECE_MAX = 256 };

static void step_part(void *ctx, int w, int n)
{
	sim_t *s = ctx;
	(void)w;
	int count = pt_world_count(s->world), b, e;
	while (pool_take_piece(&s->next_work, count, n, STEP_PIECE_MIN, STEP_PIECE_MAX, &b, &e))
		pt_world_step_range(s->world, s->dt, s->cfg.substeps, b, e);
}

static void step_all(sim_t *s)
{
	int count = pt_world_count(s->world);
	s->next_work = 0;
	if (count >= PARALLEL_MIN && pool_size(s->pool) > 1)
		pool_run(s->pool, pool_size(s->pool), step_part, s);
	else if (count > 0)
		pt_world_step(s->world, s->dt, s->cfg.substeps);
}

static void tick_once(sim_t *s, int64_t deadline_ns, int64_t budget_ns)
{
	int64_t t0 = sim_mono_ns();
	cmd_t *done = apply_commands(s, t0, budget_ns);
	apply_poses(s);
	simtouch_tick(s);
	int64_t t1 = sim_mono_ns();
	step_all(s);
	int64_t t2 = sim_mono_ns();
	s->tick++;
	sim_publish(s, deadline_ns);
	pool_rest(s->pool); /* the tick's last pool_run was the encode pass */
	simrec_end_tick(s);
	if (s->poses_applied) {
		/* admitted -> published, in the server: the rest of a pose's latency is the
		 * network, the fan-out and the client (server/README.md, Latency) */
		int64_t pub = sim_mono_ns();
		metrics_add(&metrics.pose_to_publish_us_sum,
		            (uint64_t)(((int64_t)s->poses_applied * pub - s->poses_arrival_sum_ns) /
		                       1000));
		metrics_add(&metrics.pose_to_publish_count, s->poses_applied);
		s->poses_arrival_sum_ns = 0;
		s->poses_applied = 0;
	}
	sim_guard_sweep(s);
	int64_t t3 = sim_mono_ns();
	__atomic_store_n(&s->tick_done_ns, t3, __ATOMIC_RELEASE);
	__atomic_store_n(&s->tick, s->tick, __ATOMIC_RELEASE);
	/* Completed after publishing: when a REST call returns, WebSocket clients can already
	 * subscribe to what it created. */
	cmdq_complete(s->q, done);
	metrics_tick((uint64_t)(sim_mono_ns() - t0), (uint64_t)(t2 - t1), (uint64_t)(t3 - t2));
}

static void *sim_main(void *arg)
{
	sim_t *s = arg;
	const int64_t period = 1000000000LL / s->cfg.tick_hz;
	s->wall_offset_us = sim_wall_us() - sim_mono_ns() / 1000;
	int64_t deadline = sim_mono_ns() + period;
	uint64_t overruns_logged = 0;
	int64_t last_overrun_log = 0;
	pool_bind_caller(s->pool);
	if (s->cfg.realtime > 0) {
		int rc = pool_set_realtime(s->pool, s->cfg.realtime);
		if (rc == 0)
			s->realtime_on = 1;
		else
			LOG(LOG_WARN,
			    "--realtime %d refused (%s): normal scheduling (it needs CAP_SYS_NICE "
			    "or a real-time priority limit: ulimit -r, docker run --ulimit rtprio=N)",
			    s->cfg.realtime, strerror(rc));
	}
	LOG(LOG_INFO, "tick thread: %d Hz, %d substeps, %d workers%s%s, %d instances", s->cfg.tick_hz,
	    s->cfg.substeps, pool_size(s->pool),
	    pool_cpu_of(s->pool, 0) >= 0 ? " (one CPU each)" : "",
	    s->realtime_on ? " (SCHED_FIFO)" : "", s->nindex);
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		struct timespec ts = {(time_t)(deadline / 1000000000),
		                      (long)(deadline % 1000000000)};
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		if (__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE))
			break;
		tick_once(s, deadline, period);
		int64_t now = sim_mono_ns();
		deadline += period;
		if (now > deadline) {
			metrics_add(&metrics.tick_overruns, 1);
			uint64_t total = metrics_get(&metrics.tick_overruns);
			/* Logged at most once a second, with the count since the last line. */
			if (now - last_overrun_log > 1000000000LL) {
				LOG(LOG_WARN,
				    "tick %llu overran by %.2f ms (%llu overruns since last "
				    "report)",
				    (unsigned long long)s->tick, (double)(now - deadline) / 1e6,
				    (unsigned long long)(total - overruns_logged));
				overruns_logged = total;
				last_overrun_log = now;
			}
			if (now - deadline > 5 * period) {
				LOG(LOG_WARN, "tick schedule %lld ticks behind: re-anchored",
				    (long long)((now - deadline) / period));
				deadline = now;
				/* Overloaded under SCHED_FIFO, the tick would keep both CPUs from the
				 * REST and WebSocket threads that could shed the load: give it up. */
				if (s->realtime_on) {
					pool_set_realtime(s->pool, 0);
					s->realtime_on = 0;
					LOG(LOG_WARN, "left real-time scheduling (--realtime) for good: the "
					              "ticks fell behind");
				}
			}
		}
	}
	/* Fail what is still queued; REST answers 503. */
	for (cmd_t *c = s->backlog; c; c = c->next)
		c->result = CMD_CLOSED;
	cmdq_complete(s->q, s->backlog);
	s->backlog = NULL;
	cmdq_close(s->q);
	LOG(LOG_INFO, "tick thread stopped after tick %llu", (unsigned long long)s->tick);
	return NULL;
}

int sim_start(sim_t *s)
{
	if (pthread_create(&s->th, NULL, sim_main, s) != 0)
		return -1;
	s->started = 1;
	return 0;
}

void sim_stop(sim_t *s)
{
	if (!s || !s->started)
		return;
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	pthread_join(s->th, NULL);
	s->started = 0;
}
