/* REST handlers for /v1/instances: the command logic of the HTTP API.
 *
 * Writes keep one order for the store, the registry and the sim: under
 * registry_serialize() they write the store (durable, fsync'ed), update the registry and
 * push the sim command; then, outside the lock, they wait for the sim to apply it. A
 * failure in the sim (out of memory) is rolled back in the store before answering.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instdoc.h"
#include "jutil.h"
#include "log.h"
#include "metrics.h"
#include "rest_internal.h"
#include "token.h"

/* {"id", "name", "room", "driven", "created_at", "updated_at", "definition"}; takes doc. */
static json_t *instance_json(const reg_info_t *info, json_t *doc)
{
	return json_pack("{s:I,s:s,s:s,s:b,s:I,s:I,s:o}", "id", (json_int_t)info->id, "name",
	                 info->name, "room", info->room, "driven", info->driven, "created_at",
	                 (json_int_t)info->created_at, "updated_at", (json_int_t)info->updated_at,
	                 "definition", doc ? doc : json_null());
}

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

static void invalid(resp_t *rs, const pt_error *e)
{
	resp_error(rs, 422, e->field, "%s%s%s", e->field, *e->field ? ": " : "", e->message);
}

/* The server's own size limit on top of core's (32 strands x 64 points): --max-points.
 * Returns 1 within it; otherwise answers 422 naming "strands" and returns 0. */
static int within_limits(const req_t *rq, const pt_instance_def *def, resp_t *rs)
{
	int n = 0;
	for (int i = 0; i < def->strand_count; i++)
		n += def->strands[i].points;
	if (n <= rq->app->cfg->max_points)
		return 1;
	resp_error(rs, 422, "strands",
	           "strands: %d points in all; this server allows at most %d per instance", n,
	           rq->app->cfg->max_points);
	return 0;
}

/* Behind the proxy (docker/nginx.conf) requests are routed by ?room= or X-Ponytail-Room;
 * an instance whose room differs from the one it was routed by would live on the wrong
 * node. Returns 1 when neither is given or the room matches; else answers 422, returns 0. */
static int room_routed_here(const req_t *rq, const pt_instance_def *def, resp_t *rs)
{
	if (!rq->route_room || strcmp(rq->route_room, def->room) == 0)
		return 1;
	resp_error(rs, 422, "room",
	           "room: '%s' differs from '%s', the room this request was routed by", def->room,
	           rq->route_room);
	return 0;
}

static void unavailable(resp_t *rs, cmd_result_t r)
{
	if (r == CMD_CLOSED)
		resp_error(rs, 503, NULL, "the server is shutting down");
	else
		resp_error(rs, 503, NULL, "out of memory");
}

void h_instances_list(const req_t *rq, resp_t *rs)
{
	if (rq->room && strlen(rq->room) >= PT_NAME_MAX) {
		resp_error(rs, 400, "room", "room names are at most %d bytes", PT_NAME_MAX - 1);
		return;
	}
	reg_info_t *all;
	int n = registry_list(rq->app->reg, rq->room, &all);
	json_t *arr = n >= 0 ? json_array() : NULL;
	for (int i = 0; arr && i < n; i++)
		if (json_array_append_new(arr, json_pack("{s:I,s:s,s:s,s:b}", "id",
		                                         (json_int_t)all[i].id, "name", all[i].name,
		                                         "room", all[i].room, "driven",
		                                         all[i].driven)) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	free(all);
	resp_json(rs, 200, arr ? json_pack("{s:o,s:i}", "instances", arr, "count", n) : NULL);
}

void h_instances_create(const req_t *rq, resp_t *rs)
{
	app_t *app = rq->app;
	json_t *body = req_json_object(rq, rs);
	if (!body)
		return;
	pt_instance_def *def = malloc(sizeof *def); /* ~100 KB: not on a connection stack */
	driver_t drv;
	pt_error e;
	char token[TOKEN_LEN + 1];
	char *doc = NULL;
	if (!def) {
		resp_error(rs, 503, NULL, "out of memory");
		goto out;
	}
	if (instdoc_parse(body, def, &drv, &e) != 0) {
		invalid(rs, &e);
		goto out;
	}
	if (!room_routed_here(rq, def, rs) || !within_limits(rq, def, rs))
		goto out;
	doc = instdoc_canonical(def, &drv);
	if (!doc || token_generate(token) != 0) {
		resp_error(rs, 503, NULL, doc ? "no random bytes for a token" : "out of memory");
		goto out;
	}
	uint8_t hash[TOKEN_HASH_LEN];
	token_hash(token, TOKEN_LEN, hash);
	int64_t now = (int64_t)time(NULL);
	cmd_t cmd = {.kind = CMD_CREATE, .def = def, .driver = drv};

	registry_serialize(app->reg);
	if (__atomic_load_n(&app->draining, __ATOMIC_ACQUIRE)) {
		registry_unserialize(app->reg);
		resp_error(rs, 503, NULL, "the server is shutting down");
		goto out;
	}
	if (registry_count(app->reg) >= app->cfg->max_instances) {
		registry_unserialize(app->reg);
		resp_error(rs, 503, NULL,
		           "this server hosts at most %d instances (--max-instances)",
		           app->cfg->max_instances);
		goto out;
	}
	reg_info_t info;
	if (store_insert(app->store, doc, hash, now, &cmd.id) != 0 ||
	    (info = info_of(cmd.id, def, &drv, now, now),
	     registry_put(app->reg, &info, doc, hash) != 0)) {
		if (cmd.id)
			store_delete(app->store, cmd.id);
		registry_unserialize(app->reg);
		resp_error(rs, 503, NULL, "the store could not save the instance");
		goto out;
	}
	cmdq_push(app->q, &cmd);
	registry_unserialize(app->reg);

	cmd_result_t r = cmdq_wait(app->q, &cmd);
	if (r != CMD_OK && r != CMD_CLOSED) {
		/* Not in the sim: take it back out of the store so a restart does not revive it. */
		registry_serialize(app->reg);
		store_delete(app->store, cmd.id);
		registry_remove(app->reg, cmd.id);
		registry_unserialize(app->reg);
	}
	if (r != CMD_OK) {
		unavailable(rs, r);
		goto out;
	}
	LOG(LOG_INFO, "created instance %llu '%s' in room '%s' (%s)", (unsigned long long)cmd.id,
	    def->name, def->room, rq->ip);
	json_t *j = instance_json(&info, json_loads(doc, 0, NULL));
	if (j && json_object_set_new(j, "token", json_string(token)) != 0) {
		json_decref(j);
		j = NULL;
	}
	snprintf(rs->location, sizeof rs->location, "/v1/instances/%llu",
	         (unsigned long long)cmd.id);
	resp_json(rs, 201, j);
out:
	memset(token, 0, sizeof token);
	json_decref(body);
	free(doc);
	free(def);
}

void h_instance_get(const req_t *rq, resp_t *rs)
{
	reg_info_t info;
	int oom;
	char *doc = registry_doc(rq->app->reg, rq->id, &info, &oom);
	if (!doc) {
		if (oom)
			resp_error(rs, 503, NULL, "out of memory");
		else
			resp_error(rs, 404, "id", "no instance %llu", (unsigned long long)rq->id);
		return;
	}
	resp_json(rs, 200, instance_json(&info, json_loads(doc, 0, NULL)));
	free(doc);
}

void h_instance_patch(const req_t *rq, resp_t *rs)
{
	app_t *app = rq->app;
	json_t *patch = req_json_object(rq, rs);
	if (!patch)
		return;
	pt_instance_def *def = malloc(sizeof *def);
	char *old = NULL, *doc = NULL;
	driver_t drv;
	pt_error e;
	reg_info_t info;
	int oom = 0;
	if (!def) {
		resp_error(rs, 503, NULL, "out of memory");
		goto out;
	}
	registry_serialize(app->reg);
	old = registry_doc(app->reg, rq->id, &info, &oom);
	int rc = old ? instdoc_patch(old, patch, def, &drv, &doc, &e) : -3;
	if (rc != 0) {
		registry_unserialize(app->reg);
		if (rc == -1)
			invalid(rs, &e);
		else if (rc == -3 && !oom)
			resp_error(rs, 404, "id", "no instance %llu", (unsigned long long)rq->id);
		else
			resp_error(rs, 503, NULL, "out of memory");
		goto out;
	}
	if (!room_routed_here(rq, def, rs) || !within_limits(rq, def, rs)) {
		registry_unserialize(app->reg);
		goto out;
	}
	if (strcmp(doc, old) == 0) {
		/* Nothing changes: no write, no command, same answer. */
		registry_unserialize(app->reg);
		resp_json(rs, 200, instance_json(&info, json_loads(doc, 0, NULL)));
		goto out;
	}
	reg_info_t next = info_of(rq->id, def, &drv, info.created_at, (int64_t)time(NULL));
	if (store_update(app->store, rq->id, doc, next.updated_at) != 0 ||
	    registry_put(app->reg, &next, doc, NULL) != 0) {
		store_update(app->store, rq->id, old, info.updated_at);
		registry_unserialize(app->reg);
		resp_error(rs, 503, NULL, "the store could not save the change");
		goto out;
	}
	cmd_t cmd = {.kind = CMD_UPDATE, .id = rq->id, .def = def, .driver = drv};
	cmdq_push(app->q, &cmd);
	registry_unserialize(app->reg);

	cmd_result_t r = cmdq_wait(app->q, &cmd);
	if (r == CMD_NO_MEMORY) {
		registry_serialize(app->reg);
		store_update(app->store, rq->id, old, info.updated_at);
		registry_put(app->reg, &info, old, NULL);
		registry_unserialize(app->reg);
	}
	if (r == CMD_NOT_FOUND)
		resp_error(rs, 404, "id", "no instance %llu", (unsigned long long)rq->id);
	else if (r != CMD_OK)
		unavailable(rs, r);
	else
		resp_json(rs, 200, instance_json(&next, json_loads(doc, 0, NULL)));
out:
	json_decref(patch);
	free(old);
	free(doc);
	free(def);
}

void h_instance_delete(const req_t *rq, resp_t *rs)
{
	app_t *app = rq->app;
	registry_serialize(app->reg);
	if (!registry_info(app->reg, rq->id, NULL)) {
		registry_unserialize(app->reg);
		resp_error(rs, 404, "id", "no instance %llu", (unsigned long long)rq->id);
		return;
	}
	if (store_delete(app->store, rq->id) != 0) {
		registry_unserialize(app->reg);
		resp_error(rs, 503, NULL, "the store could not delete the instance");
		return;
	}
	registry_remove(app->reg, rq->id);
	cmd_t cmd = {.kind = CMD_DELETE, .id = rq->id};
	cmdq_push(app->q, &cmd);
	registry_unserialize(app->reg);
	cmd_result_t r = cmdq_wait(app->q, &cmd);
	/* Gone from the store either way; a closed sim simply never loads it again. */
	if (r == CMD_OK || r == CMD_CLOSED || r == CMD_NOT_FOUND) {
		LOG(LOG_INFO, "deleted instance %llu (%s)", (unsigned long long)rq->id, rq->ip);
		resp_text(rs, 204, NULL, "", 0);
	} else {
		unavailable(rs, r);
	}
}

void h_instance_reset(const req_t *rq, resp_t *rs)
{
	cmd_t cmd = {.kind = CMD_RESET, .id = rq->id};
	cmd_result_t r = cmdq_submit(rq->app->q, &cmd);
	if (r == CMD_OK)
		resp_text(rs, 204, NULL, "", 0);
	else if (r == CMD_NOT_FOUND)
		resp_error(rs, 404, "id", "no instance %llu", (unsigned long long)rq->id);
	else
		unavailable(rs, r);
}

static json_t *vec(const float *v, int n)
{
	json_t *a = json_array();
	for (int i = 0; a && i < n; i++)
		if (json_array_append_new(a, jutil_float(v[i])) != 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* DESIGN.md's JSON frame: {"tick", "t", "head": {"p", "q"}, "strands": [[[x,y,z]...]...]}. */
static json_t *frame_json(uint64_t id, const cmd_frame_t *f)
{
	json_t *strands = json_array();
	int k = 0;
	for (int s = 0; strands && s < f->strand_count; s++) {
		json_t *pts = json_array();
		for (int j = 0; pts && j < f->points[s] && k < f->n; j++, k++)
			if (json_array_append_new(pts, vec(&f->xyz[k].x, 3)) != 0) {
				json_decref(pts);
				pts = NULL;
			}
		if (!pts || json_array_append_new(strands, pts) != 0) {
			json_decref(strands);
			strands = NULL;
		}
	}
	const pt_pose *h = &f->head;
	float p[3] = {h->p.x, h->p.y, h->p.z}, q[4] = {h->q.x, h->q.y, h->q.z, h->q.w};
	if (!strands)
		return NULL;
	return json_pack("{s:I,s:I,s:f,s:I,s:{s:o,s:o},s:o}", "id", (json_int_t)id, "tick",
	                 (json_int_t)f->tick, "t", f->t, "last_seq", (json_int_t)f->last_seq,
	                 "head", "p", vec(p, 3), "q", vec(q, 4), "strands", strands);
}

void h_instance_frame(const req_t *rq, resp_t *rs)
{
	cmd_t cmd = {.kind = CMD_FRAME, .id = rq->id};
	cmd_result_t r = cmdq_submit(rq->app->q, &cmd);
	if (r == CMD_OK)
		resp_json(rs, 200, frame_json(rq->id, &cmd.frame));
	else if (r == CMD_NOT_FOUND)
		resp_error(rs, 404, "id", "no instance %llu", (unsigned long long)rq->id);
	else
		unavailable(rs, r);
	free(cmd.frame.xyz);
}

/* Reads n numbers of arr into out, each finite with |x| <= lim. */
static int numbers(const json_t *arr, int n, double lim, double *out)
{
	if (!json_is_array(arr) || (int)json_array_size(arr) != n)
		return -1;
	for (int i = 0; i < n; i++) {
		const json_t *v = json_array_get(arr, (size_t)i);
		if (!json_is_number(v))
			return -1;
		out[i] = json_number_value(v);
		if (!isfinite(out[i]) || fabs(out[i]) > lim)
			return -1;
	}
	return 0;
}

void h_instance_pose(const req_t *rq, resp_t *rs)
{
	json_t *body = req_json_object(rq, rs);
	if (!body)
		return;
	const char *key;
	json_t *v;
	double p[3], q[4];
	pose_in_t in = {.id = rq->id};
	json_object_foreach(body, key, v)
	{
		if (strcmp(key, "p") && strcmp(key, "q") && strcmp(key, "seq") &&
		    strcmp(key, "t")) {
			resp_error(rs, 422, key, "%s: unknown field (expected p, q, seq, t)", key);
			goto rejected;
		}
	}
	if (numbers(json_object_get(body, "p"), 3, 1e4, p) != 0) {
		resp_error(rs, 422, "p",
		           "p: expected [x, y, z] in metres, each finite and within 10 km");
		goto rejected;
	}
	double l2 = 0;
	if (numbers(json_object_get(body, "q"), 4, 2, q) == 0)
		l2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
	if (!(l2 >= 0.25 && l2 <= 4)) {
		resp_error(rs, 422, "q", "q: expected [x, y, z, w], a quaternion of length near 1");
		goto rejected;
	}
	v = json_object_get(body, "seq");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 0 ||
	          json_integer_value(v) > 0xffffffffLL)) {
		resp_error(rs, 422, "seq", "seq: expected an integer in [0, 4294967295]");
		goto rejected;
	}
	reg_info_t info;
	if (!registry_info(rq->app->reg, rq->id, &info)) {
		resp_error(rs, 404, "id", "no instance %llu", (unsigned long long)rq->id);
		goto out;
	}
	if (info.driven) {
		resp_error(
		    rs, 409, "driver",
		    "instance %llu is moved by its driver; remove it (\"driver\": null) first",
		    (unsigned long long)rq->id);
		goto out;
	}
	double l = sqrt(l2);
	in.seq = v ? (uint32_t)json_integer_value(v) : 0;
	in.pose.p = pt_v3((float)p[0], (float)p[1], (float)p[2]);
	in.pose.q =
	    (pt_quat){(float)(q[0] / l), (float)(q[1] / l), (float)(q[2] / l), (float)(q[3] / l)};
	int r = cmdq_post_pose(rq->app->q, &in);
	if (r == 0) {
		metrics_add(&metrics.poses_received, 1);
		resp_text(rs, 204, NULL, "", 0);
	} else {
		metrics_add(&metrics.poses_rejected_full, 1);
		resp_error(rs, 503, NULL,
		           r == -2 ? "the server is shutting down"
		                   : "too many poses this tick; try again");
	}
	goto out;
rejected:
	metrics_add(&metrics.poses_rejected_invalid, 1);
out:
	json_decref(body);
}
