/* The door for every change to an instance: see instances.h. */
#include "instances.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instances_internal.h"
#include "instdoc.h"
#include "log.h"
#include "metrics.h"
#include "shared_limits.h"

/* The writer lock: held from the store write through the registry update to the queue
 * push, so the store, the registry and the sim see writes in one order, and across a
 * patch's read-modify-write. Lock order: writer -> registry rwlock -> command queue. */
pthread_mutex_t inst_writer = PTHREAD_MUTEX_INITIALIZER; /* instances_internal.h */

/* ---- errors ---------------------------------------------------------------------- */

static const struct {
	unsigned http;
	ptp_code_t ws;
} status_map[] = {
    [INST_OK] = {200, 0},
    [INST_INVALID] = {422, PTP_CODE_LIMIT},
    [INST_NOT_FOUND] = {404, PTP_CODE_NOT_FOUND},
    [INST_FORBIDDEN] = {403, PTP_CODE_UNAUTHORIZED},
    [INST_DRIVEN] = {409, PTP_CODE_UNAUTHORIZED},
    [INST_RATE] = {429, PTP_CODE_RATE},
    [INST_BUSY] = {503, PTP_CODE_RATE},
    [INST_FULL] = {503, PTP_CODE_LIMIT},
    [INST_CLOSED] = {503, PTP_CODE_SHUTDOWN},
    [INST_NO_MEMORY] = {503, PTP_CODE_INTERNAL},
    [INST_STORE] = {503, PTP_CODE_INTERNAL},
    [INST_CONFLICT] = {409, PTP_CODE_LIMIT},
};

unsigned inst_http_status(inst_status_t s)
{
	return (unsigned)s < sizeof status_map / sizeof status_map[0] ? status_map[s].http : 500;
}

ptp_code_t inst_ptp_code(inst_status_t s)
{
	return (unsigned)s < sizeof status_map / sizeof status_map[0] ? status_map[s].ws
	                                                              : PTP_CODE_INTERNAL;
}

inst_status_t inst_refuse(inst_err_t *err, inst_status_t s, const char *field, const char *fmt, ...)
{
	err->status = s;
	err->has_field = field != NULL;
	snprintf(err->field, sizeof err->field, "%s", field ? field : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof err->message, fmt, ap);
	va_end(ap);
	return s;
}

inst_status_t inst_ok(inst_err_t *err)
{
	err->status = INST_OK;
	err->has_field = 0;
	err->field[0] = err->message[0] = '\0';
	return INST_OK;
}

static inst_status_t not_found(inst_err_t *err, uint64_t id)
{
	return inst_refuse(err, INST_NOT_FOUND, "id", "no instance %llu", (unsigned long long)id);
}

static inst_status_t invalid_def(inst_err_t *err, const pt_error *e)
{
	return inst_refuse(err, INST_INVALID, e->field, "%s%s%s", e->field, *e->field ? ": " : "",
	              e->message);
}

/* A sim result that is not CMD_OK. */
static inst_status_t unavailable(inst_err_t *err, cmd_result_t r, uint64_t id)
{
	if (r == CMD_NOT_FOUND)
		return not_found(err, id);
	if (r == CMD_CLOSED)
		return inst_refuse(err, INST_CLOSED, NULL, "the server is shutting down");
	return inst_refuse(err, INST_NO_MEMORY, NULL, "out of memory");
}

void inst_view_free(inst_view_t *v)
{
	if (!v)
		return;
	free(v->doc);
	v->doc = NULL;
	memset(v->token, 0, sizeof v->token);
}

/* ---- checks shared by create and patch ------------------------------------------- */

static reg_info_t info_of(uint64_t id, const pt_instance_def *def, const driver_t *drv,
                          int64_t created, int64_t updated)
{
	reg_info_t info;
	memset(&info, 0, sizeof info);
	info.id = id;
	memcpy(info.name, def->name, sizeof info.name);
	memcpy(info.room, def->room, sizeof info.room);
	info.driven = drv->enabled;
	info.created_at = created;
	info.updated_at = updated;
	return info;
}

/* The server's own size limits on top of core's: the strands a frame carries
 * (SERVER_MAX_STRANDS) and --max-points;
 * and, behind the proxy (docker/nginx.conf), which routes by ?room= or X-Ponytail-Room,
 * the room it was routed by: an instance of another room would live on the wrong node. */
static inst_status_t admissible(const app_t *app, const pt_instance_def *def,
                                const char *route_room, inst_err_t *err)
{
	if (route_room && strcmp(route_room, def->room) != 0)
		return inst_refuse(err, INST_INVALID, "room",
		              "room: '%s' differs from '%s', the room this request was routed by",
		              def->room, route_room);
	if (def->strand_count > SERVER_MAX_STRANDS)
		return inst_refuse(err, INST_INVALID, "strands",
		              "strands: %d strands; this server allows at most %d per instance "
		              "(what a frame carries)",
		              def->strand_count, (int)SERVER_MAX_STRANDS);
	int n = 0;
	for (int i = 0; i < def->strand_count; i++)
		n += def->strands[i].points;
	if (n > app->cfg->max_points)
		return inst_refuse(
		    err, INST_INVALID, "strands",
		    "strands: %d points in all; this server allows at most %d per instance", n,
		    app->cfg->max_points);
	return INST_OK;
}

/* ---- writes ---------------------------------------------------------------------- */

inst_status_t instances_create(app_t *app, const json_t *doc, const char *route_room,
                               inst_view_t *out, inst_err_t *err)
{
	memset(out, 0, sizeof *out);
	pt_instance_def *def = malloc(sizeof *def); /* a few KB: not on a connection stack */
	driver_t drv;
	interact_t ia;
	pt_error e;
	inst_status_t st;
	int rc;
	if (!def || !pt_instance_def_init(def)) {
		st = inst_refuse(err, INST_NO_MEMORY, NULL, "out of memory");
		goto out;
	}
	if ((rc = instdoc_parse(doc, def, &drv, &ia, &e)) != 0) {
		st = rc == -2 ? inst_refuse(err, INST_NO_MEMORY, NULL, "out of memory")
		              : invalid_def(err, &e);
		goto out;
	}
	if ((st = admissible(app, def, route_room, err)) != INST_OK)
		goto out;
	out->doc = instdoc_canonical(def, &drv, &ia);
	if (!out->doc || token_generate(out->token) != 0) {
		st = inst_refuse(err, INST_NO_MEMORY, NULL,
		            out->doc ? "no random bytes for a token" : "out of memory");
		goto out;
	}
	uint8_t hash[TOKEN_HASH_LEN];
	token_hash(out->token, TOKEN_LEN, hash);
	int64_t now = (int64_t)time(NULL);
	cmd_t cmd = {.kind = CMD_CREATE, .def = def, .driver = drv, .interaction = &ia};

	pthread_mutex_lock(&inst_writer);
	if (__atomic_load_n(&app->draining, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&inst_writer);
		st = inst_refuse(err, INST_CLOSED, NULL, "the server is shutting down");
		goto out;
	}
	if (registry_count(app->reg) >= app->cfg->max_instances) {
		pthread_mutex_unlock(&inst_writer);
		st = inst_refuse(err, INST_FULL, NULL,
		            "this server hosts at most %d instances (--max-instances)",
		            app->cfg->max_instances);
		goto out;
	}
	if (store_insert(app->store, out->doc, hash, now, &cmd.id) != 0 ||
	    (out->info = info_of(cmd.id, def, &drv, now, now),
	     registry_put(app->reg, &out->info, out->doc, hash) != 0)) {
		if (cmd.id)
			store_delete(app->store, cmd.id);
		pthread_mutex_unlock(&inst_writer);
		st = inst_refuse(err, INST_STORE, NULL, "the store could not save the instance");
		goto out;
	}
	cmdq_push(app->q, &cmd);
	pthread_mutex_unlock(&inst_writer);

	cmd_result_t r = cmdq_wait(app->q, &cmd);
	if (r != CMD_OK && r != CMD_CLOSED) {
		/* Not in the sim: take it back out of the store so a restart does not revive it. */
		pthread_mutex_lock(&inst_writer);
		store_delete(app->store, cmd.id);
		registry_remove(app->reg, cmd.id);
		pthread_mutex_unlock(&inst_writer);
	}
	if (r != CMD_OK) {
		st = unavailable(err, r == CMD_NOT_FOUND ? CMD_NO_MEMORY : r, cmd.id);
		goto out;
	}
	st = inst_ok(err);
out:
	if (st != INST_OK)
		inst_view_free(out);
	pt_instance_def_fini(def);
	free(def);
	return st;
}

inst_status_t instances_patch(app_t *app, uint64_t id, const json_t *patch, const char *route_room,
                              inst_view_t *out, inst_err_t *err)
{
	memset(out, 0, sizeof *out);
	pt_instance_def *def = malloc(sizeof *def);
	char *old = NULL;
	driver_t drv;
	interact_t ia;
	pt_error e;
	reg_info_t info;
	int oom = 0;
	inst_status_t st;
	if (!def || !pt_instance_def_init(def)) {
		st = inst_refuse(err, INST_NO_MEMORY, NULL, "out of memory");
		goto out;
	}
	pthread_mutex_lock(&inst_writer);
	old = registry_doc(app->reg, id, &info, &oom);
	int rc = old ? instdoc_patch(old, patch, def, &drv, &ia, &out->doc, &e) : -3;
	if (rc != 0) {
		pthread_mutex_unlock(&inst_writer);
		st = rc == -1           ? invalid_def(err, &e)
		     : rc == -3 && !oom ? not_found(err, id)
		                        : inst_refuse(err, INST_NO_MEMORY, NULL, "out of memory");
		goto out;
	}
	if ((st = admissible(app, def, route_room, err)) != INST_OK) {
		pthread_mutex_unlock(&inst_writer);
		goto out;
	}
	/* Behind the proxy (--node-id) each room lives on one node, maybe not this one for
	 * the new room: moving an instance to another room is a create there. */
	if (app->cfg->node_id != 0 && strcmp(def->room, info.room) != 0) {
		pthread_mutex_unlock(&inst_writer);
		st = inst_refuse(err, INST_INVALID, "room",
		            "room: stays '%s' on a node behind the proxy (--node-id %d); the room "
		            "'%s' may live on another node: create the instance there",
		            info.room, app->cfg->node_id, def->room);
		goto out;
	}
	if (strcmp(out->doc, old) == 0) {
		/* Nothing changes: no write, no command, same answer. */
		pthread_mutex_unlock(&inst_writer);
		out->info = info;
		st = inst_ok(err);
		goto out;
	}
	out->info = info_of(id, def, &drv, info.created_at, (int64_t)time(NULL));
	if (store_update(app->store, id, out->doc, out->info.updated_at) != 0 ||
	    registry_put(app->reg, &out->info, out->doc, NULL) != 0) {
		store_update(app->store, id, old, info.updated_at);
		pthread_mutex_unlock(&inst_writer);
		st = inst_refuse(err, INST_STORE, NULL, "the store could not save the change");
		goto out;
	}
	cmd_t cmd = {.kind = CMD_UPDATE, .id = id, .def = def, .driver = drv, .interaction = &ia};
	cmdq_push(app->q, &cmd);
	pthread_mutex_unlock(&inst_writer);

	cmd_result_t r = cmdq_wait(app->q, &cmd);
	if (r == CMD_NO_MEMORY) {
		pthread_mutex_lock(&inst_writer);
		store_update(app->store, id, old, info.updated_at);
		registry_put(app->reg, &info, old, NULL);
		pthread_mutex_unlock(&inst_writer);
	}
	st = r == CMD_OK ? inst_ok(err) : unavailable(err, r, id);
out:
	if (st != INST_OK)
		inst_view_free(out);
	free(old);
	pt_instance_def_fini(def);
	free(def);
	return st;
}

inst_status_t instances_delete(app_t *app, uint64_t id, inst_err_t *err)
{
	pthread_mutex_lock(&inst_writer);
	if (!registry_info(app->reg, id, NULL)) {
		pthread_mutex_unlock(&inst_writer);
		return not_found(err, id);
	}
	if (store_delete(app->store, id) != 0) {
		pthread_mutex_unlock(&inst_writer);
		return inst_refuse(err, INST_STORE, NULL, "the store could not delete the instance");
	}
	registry_remove(app->reg, id);
	cmd_t cmd = {.kind = CMD_DELETE, .id = id};
	cmdq_push(app->q, &cmd);
	pthread_mutex_unlock(&inst_writer);
	cmd_result_t r = cmdq_wait(app->q, &cmd);
	/* Gone from the store either way; a closed sim simply never loads it again. */
	if (r != CMD_OK && r != CMD_CLOSED && r != CMD_NOT_FOUND)
		return unavailable(err, r, id);
	return inst_ok(err);
}

inst_status_t instances_reset(app_t *app, uint64_t id, inst_err_t *err)
{
	cmd_t cmd = {.kind = CMD_RESET, .id = id};
	cmd_result_t r = cmdq_submit(app->q, &cmd);
	return r == CMD_OK ? inst_ok(err) : unavailable(err, r, id);
}

/* Copies a published snapshot into *out (one malloc for the points). */
static inst_status_t frame_from_snap(const app_t *app, frame_snap_t *snap, cmd_frame_t *out,
                                     inst_err_t *err)
{
	memset(out, 0, sizeof *out);
	out->snap = snap;
	out->tick = snap->tick;
	out->t = (double)snap->tick / app->cfg->tick_hz;
	out->head = snap->head;
	out->last_seq = snap->last_seq;
	out->state_hash = snap->state_hash;
	out->strand_count = snap->strand_count;
	for (int i = 0; i < snap->strand_count; i++)
		out->points[i] = snap->points[i];
	out->n = snap->n;
	out->xyz = malloc((size_t)snap->n * sizeof *out->xyz);
	if (!out->xyz)
		return unavailable(err, CMD_NO_MEMORY, snap->id);
	memcpy(out->xyz, snap->xyz, (size_t)snap->n * sizeof *out->xyz);
	return inst_ok(err);
}

inst_status_t instances_frame(app_t *app, uint64_t id, cmd_frame_t *out, inst_err_t *err)
{
	/* Kept for a second of ticks (at least 4) after each read. */
	uint64_t keep = app->cfg->tick_hz > 4 ? (uint64_t)app->cfg->tick_hz : 4;
	frame_snap_t *snap = app->ring ? frame_ring_snapshot(app->ring, id, keep) : NULL;
	if (snap)
		return frame_from_snap(app, snap, out, err);
	cmd_t cmd = {.kind = CMD_FRAME, .id = id};
	cmd_result_t r = cmdq_submit(app->q, &cmd);
	*out = cmd.frame;
	return r == CMD_OK ? inst_ok(err) : unavailable(err, r, id);
}

const char *inst_frame_text(const cmd_frame_t *f)
{
	return f->snap ? frame_snap_text(f->snap) : NULL;
}

const char *inst_frame_keep_text(cmd_frame_t *f, char *text)
{
	if (!f->snap) {
		free(text);
		return NULL;
	}
	return frame_snap_set_text(f->snap, text);
}

void inst_frame_release(cmd_frame_t *f)
{
	free(f->xyz);
	frame_snap_unref(f->snap);
	f->xyz = NULL;
	f->snap = NULL;
}

/* ---- poses ----------------------------------------------------------------------- */

void inst_rate_init(const app_t *app, inst_rate_t *r)
{
	r->tokens = app->cfg->pose_rate;
	r->last_ns = sim_mono_ns();
}

/* 1 when the bucket has a token (and takes it). */
static int rate_take(const app_t *app, inst_rate_t *r)
{
	const double rate = app->cfg->pose_rate, burst = rate / 4 > 8 ? rate / 4 : 8;
	int64_t now = sim_mono_ns();
	r->tokens += (double)(now - r->last_ns) * 1e-9 * rate;
	if (r->tokens > burst)
		r->tokens = burst;
	r->last_ns = now;
	if (r->tokens < 1.0)
		return 0;
	r->tokens -= 1.0;
	return 1;
}

/* The field of bone i: "bones.<name><sub>" when the edge took it by name (REST; the name
 * cut to 64 bytes at a character boundary), else "bones[i]<sub>" (the wire's order). */
static void bone_field(char *f, size_t cap, const inst_pose_t *pose, int i, const char *sub)
{
	const char *name = pose->bones[i].name;
	if (!name) {
		snprintf(f, cap, "bones[%d]%s", i, sub);
		return;
	}
	int n = (int)strnlen(name, 65);
	if (n > 64)
		for (n = 64; n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80; n--)
			;
	snprintf(f, cap, "bones.%.*s%s", n, name, sub);
}

/* The rules of the header comment, in their order; INST_OK when the pose may be posted. */
static inst_status_t admit_pose(app_t *app, const inst_pose_t *pose, inst_rate_t *rate,
                                inst_err_t *err)
{
	const double *p = pose->p, *q = pose->q;
	for (int i = 0; i < 3; i++)
		if (!isfinite(p[i]) || fabs(p[i]) > PTP_POSE_MAX_M)
			return inst_refuse(
			    err, INST_INVALID, "p",
			    "p: expected [x, y, z] in metres, each finite and within 10 km");
	double l2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
	if (!(l2 >= PTP_QUAT_NORM2_MIN && l2 <= PTP_QUAT_NORM2_MAX)) /* also NaN */
		return inst_refuse(err, INST_INVALID, "q",
		              "q: expected [x, y, z, w], a quaternion of length near 1");
	static const char *const motion_field[2] = {"v", "w"};
	for (int k = 0; pose->moving && k < 2; k++) {
		const double *m = k ? pose->w : pose->v;
		double m2 = m[0] * m[0] + m[1] * m[1] + m[2] * m[2];
		if (!(m2 <= 100.0 * 100.0)) /* also NaN and infinities */
			return inst_refuse(err, INST_INVALID, motion_field[k],
			              k ? "w: expected [x, y, z] in rad/s (world axes), length at most 100"
			                : "v: expected [x, y, z] in m/s, length at most 100");
	}
	if (pose->seq < 0 || pose->seq > 0xffffffffLL)
		return inst_refuse(err, INST_INVALID, "seq",
		              "seq: expected an integer in [0, 4294967295]");
	if (pose->nbones < 0 || pose->nbones > PTP_MAX_POSE_BONES)
		return inst_refuse(err, INST_INVALID, "bones",
		              "bones: at most %d bone poses (every body bone once), got %d",
		              PTP_MAX_POSE_BONES, pose->nbones);
	for (int i = 0; i < pose->nbones; i++) {
		char f[80];
		const double *bp = pose->bones[i].p, *bq = pose->bones[i].q;
		if (pose->bones[i].bone < 0 || pose->bones[i].bone >= PT_BONE_COUNT) {
			bone_field(f, sizeof f, pose, i, pose->bones[i].name ? "" : ".bone");
			return inst_refuse(err, INST_INVALID, f,
			              "%s: not a body bone (ids 0..%d, names hips, spine, chest, "
			              "upper_chest, neck, ..., right_little_distal: proto/PROTOCOL.md "
			              "section 5; the head is the pose's own p and q)",
			              f, PT_BONE_COUNT - 1);
		}
		for (int k = 0; k < 3; k++)
			if (!isfinite(bp[k]) || fabs(bp[k]) > PTP_POSE_MAX_M) {
				bone_field(f, sizeof f, pose, i, ".p");
				return inst_refuse(err, INST_INVALID, f,
				              "%s: expected [x, y, z] in metres, each finite and within "
				              "10 km",
				              f);
			}
		double b2 = bq[0] * bq[0] + bq[1] * bq[1] + bq[2] * bq[2] + bq[3] * bq[3];
		if (!(b2 >= PTP_QUAT_NORM2_MIN && b2 <= PTP_QUAT_NORM2_MAX)) {
			bone_field(f, sizeof f, pose, i, ".q");
			return inst_refuse(err, INST_INVALID, f,
			              "%s: expected [x, y, z, w], a quaternion of length near 1", f);
		}
	}
	reg_info_t info;
	if (!registry_info(app->reg, pose->id, &info))
		return not_found(err, pose->id);
	if (info.driven)
		return inst_refuse(
		    err, INST_DRIVEN, "driver",
		    "instance %llu is moved by its driver; remove it (\"driver\": null) first",
		    (unsigned long long)pose->id);
	if (rate && !rate_take(app, rate))
		return inst_refuse(err, INST_RATE, NULL, "more than %d poses per second: dropped",
		              app->cfg->pose_rate);
	return inst_ok(err);
}

inst_status_t instances_pose(app_t *app, const inst_pose_t *pose, inst_rate_t *rate,
                             inst_err_t *err)
{
	inst_status_t st = admit_pose(app, pose, rate, err);
	if (st == INST_OK) {
		const double *q = pose->q;
		double l = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
		pose_in_t in = {.id = pose->id, .seq = (uint32_t)pose->seq};
		in.pose.p = pt_v3((float)pose->p[0], (float)pose->p[1], (float)pose->p[2]);
		in.pose.q = (pt_quat){(float)(q[0] / l), (float)(q[1] / l), (float)(q[2] / l),
		                      (float)(q[3] / l)};
		in.moving = pose->moving;
		in.v = pt_v3((float)pose->v[0], (float)pose->v[1], (float)pose->v[2]);
		in.w = pt_v3((float)pose->w[0], (float)pose->w[1], (float)pose->w[2]);
		in.arrival_ns = sim_mono_ns();
		in.conn = pose->conn;
		bone_in_t bones[PTP_MAX_POSE_BONES];
		for (int i = 0; i < pose->nbones; i++) {
			const double *bp = pose->bones[i].p, *bq = pose->bones[i].q;
			double bl = sqrt(bq[0] * bq[0] + bq[1] * bq[1] + bq[2] * bq[2] + bq[3] * bq[3]);
			bones[i].bone = (pt_bone)pose->bones[i].bone;
			bones[i].pose.p = pt_v3((float)bp[0], (float)bp[1], (float)bp[2]);
			bones[i].pose.q = (pt_quat){(float)(bq[0] / bl), (float)(bq[1] / bl),
			                            (float)(bq[2] / bl), (float)(bq[3] / bl)};
		}
		in.nbones = pose->nbones;
		in.bones = bones;
		int r = cmdq_post_pose(app->q, &in);
		if (r != 0)
			st = r == -2 ? inst_refuse(err, INST_CLOSED, NULL, "the server is shutting down")
			             : inst_refuse(err, INST_BUSY, NULL,
			                      "too many poses this tick; try again");
	}
	metrics_add(st == INST_OK                          ? &metrics.poses_received
	            : st == INST_INVALID                   ? &metrics.poses_rejected_invalid
	            : st == INST_RATE                      ? &metrics.poses_rejected_rate
	            : st == INST_BUSY || st == INST_CLOSED ? &metrics.poses_rejected_full
	                                                   : &metrics.poses_rejected_auth,
	            1);
	return st;
}

/* ---- reads ----------------------------------------------------------------------- */

inst_status_t instances_authorize(const app_t *app, uint64_t id, const char *token, size_t len,
                                  inst_err_t *err)
{
	int r = registry_auth_write(app->reg, app->cfg->admin_token, id, token, len);
	if (r < 0)
		return not_found(err, id);
	if (r == 0)
		return inst_refuse(err, INST_FORBIDDEN, NULL, "wrong token for instance %llu",
		              (unsigned long long)id);
	return inst_ok(err);
}

inst_status_t instances_get(const app_t *app, uint64_t id, inst_view_t *out, inst_err_t *err)
{
	int oom = 0;
	memset(out, 0, sizeof *out);
	out->doc = registry_doc(app->reg, id, &out->info, &oom);
	if (out->doc)
		return inst_ok(err);
	return oom ? inst_refuse(err, INST_NO_MEMORY, NULL, "out of memory") : not_found(err, id);
}

inst_status_t instances_list(const app_t *app, const char *room, reg_info_t **out, int *n,
                             inst_err_t *err)
{
	*n = registry_list(app->reg, room, out);
	if (*n < 0) {
		*out = NULL;
		*n = 0;
		return inst_refuse(err, INST_NO_MEMORY, NULL, "out of memory");
	}
	return inst_ok(err);
}

int instances_count(const app_t *app)
{
	return registry_count(app->reg);
}

/* ---- start-up -------------------------------------------------------------------- */

typedef struct load_t {
	app_t *app;
	pt_instance_def *def;
	int loaded, skipped;
} load_t;

/* store_load callback: one stored instance into the registry and the sim. */
static int load_row(void *ctx, uint64_t id, const char *doc, const uint8_t hash[TOKEN_HASH_LEN],
                    int64_t created_at, int64_t updated_at)
{
	load_t *l = ctx;
	json_error_t je;
	json_t *j = json_loads(doc, 0, &je);
	driver_t drv;
	interact_t ia;
	pt_error e = {0};
	int rc = j ? instdoc_parse(j, l->def, &drv, &ia, &e) : -1;
	if (rc == -2) {
		json_decref(j);
		LOG(LOG_ERROR, "out of memory loading instance %llu", (unsigned long long)id);
		return -1;
	}
	if (rc != 0) {
		/* Valid when stored; a newer, stricter build may disagree. Keep the row, skip it.
		 */
		LOG(LOG_ERROR, "stored instance %llu no longer loads (%s%s%s): skipped, row kept",
		    (unsigned long long)id, j ? e.field : "", j ? ": " : "",
		    j ? e.message : je.text);
		json_decref(j);
		l->skipped++;
		return 0;
	}
	json_decref(j);
	reg_info_t info = info_of(id, l->def, &drv, created_at, updated_at);
	if (registry_put(l->app->reg, &info, doc, hash) != 0 ||
	    sim_preload(l->app->sim, id, l->def, &drv, &ia) != 0) {
		LOG(LOG_ERROR, "out of memory loading instance %llu", (unsigned long long)id);
		return -1;
	}
	l->loaded++;
	return 0;
}

int instances_load(app_t *app, int *loaded, int *skipped)
{
	load_t l = {app, malloc(sizeof *l.def), 0, 0};
	int rc = l.def && pt_instance_def_init(l.def) ? store_load(app->store, load_row, &l) : -1;
	pt_instance_def_fini(l.def);
	free(l.def);
	*loaded = l.loaded;
	*skipped = l.skipped;
	return rc;
}
