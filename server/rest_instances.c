/* REST handlers for /v1/instances: each translates one request into a call of the door
 * (instances.h) and its result into an answer. No store, registry or queue access here.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instances.h"
#include "instdoc.h"
#include "jutil.h"
#include "log.h"
#include "metrics.h"
#include "rest_internal.h"

/* {"url", "bytes"} of id's avatar file, or null when it has none. */
static json_t *avatar_json(const app_t *app, uint64_t id)
{
	int64_t n = instances_avatar_size(app, id);
	char url[64];
	snprintf(url, sizeof url, "/v1/instances/%llu/avatar", (unsigned long long)id);
	return n < 0 ? json_null() : json_pack("{s:s,s:I}", "url", url, "bytes", (json_int_t)n);
}

/* Adds "bones" (instdoc_bones: names, rest and anchor bone per strand) and "avatar" to an
 * instance's JSON o (NULL passes through). doc borrowed. */
static json_t *with_bones(const app_t *app, json_t *o, uint64_t id, const json_t *doc)
{
	json_t *bones = doc ? instdoc_bones(doc) : NULL;
	if (o && (json_object_set_new(o, "bones", bones ? bones : json_null()) != 0 ||
	          json_object_set_new(o, "avatar", avatar_json(app, id)) != 0)) {
		json_decref(o);
		return NULL;
	}
	if (!o)
		json_decref(bones);
	return o;
}

/* {"id", "name", "room", "driven", "created_at", "updated_at", "definition", "bones",
 * "avatar"}; takes doc. */
static json_t *instance_json(const app_t *app, const reg_info_t *info, json_t *doc)
{
	json_t *o = json_pack("{s:I,s:s,s:s,s:b,s:I,s:I,s:O}", "id", (json_int_t)info->id, "name",
	                      info->name, "room", info->room, "driven", info->driven,
	                      "created_at", (json_int_t)info->created_at, "updated_at",
	                      (json_int_t)info->updated_at, "definition",
	                      doc ? doc : json_null());
	o = with_bones(app, o, info->id, doc);
	json_decref(doc);
	return o;
}

/* The door's error as {"error": {...}} with its HTTP status. */
static void refused(resp_t *rs, const inst_err_t *e)
{
	resp_error(rs, inst_http_status(e->status), e->has_field ? e->field : NULL, "%s",
	           e->message);
}

void h_instances_list(const req_t *rq, resp_t *rs)
{
	if (rq->room && strlen(rq->room) >= PT_NAME_MAX) {
		resp_error(rs, 400, "room", "room names are at most %d bytes", PT_NAME_MAX - 1);
		return;
	}
	reg_info_t *all;
	int n;
	inst_err_t e;
	if (instances_list(rq->app, rq->room, &all, &n, &e) != INST_OK) {
		refused(rs, &e);
		return;
	}
	int bones = 0;
	if (rq->include) {
		if (strcmp(rq->include, "bones") != 0) {
			resp_error(rs, 400, "include", "include: expected \"bones\", got '%s'",
			           rq->include);
			free(all);
			return;
		}
		bones = 1;
	}
	json_t *arr = json_array();
	for (int i = 0; arr && i < n; i++) {
		json_t *o = json_pack("{s:I,s:s,s:s,s:b}", "id", (json_int_t)all[i].id, "name",
		                      all[i].name, "room", all[i].room, "driven", all[i].driven);
		if (bones) {
			/* the definition as GET /v1/instances/{id} reads it; an instance deleted
			 * meanwhile lists with "bones": null */
			inst_view_t v;
			inst_err_t e2;
			json_t *doc = instances_get(rq->app, all[i].id, &v, &e2) == INST_OK
			                  ? json_loads(v.doc, 0, NULL)
			                  : NULL;
			inst_view_free(&v);
			o = with_bones(rq->app, o, all[i].id, doc);
			json_decref(doc);
		}
		if (json_array_append_new(arr, o) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	}
	free(all);
	resp_json(rs, 200, arr ? json_pack("{s:o,s:i}", "instances", arr, "count", n) : NULL);
}

void h_instances_create(const req_t *rq, resp_t *rs)
{
	json_t *body = req_json_object(rq, rs);
	if (!body)
		return;
	inst_view_t v;
	inst_err_t e;
	if (instances_create(rq->app, body, rq->route_room, &v, &e) != INST_OK) {
		refused(rs, &e);
		json_decref(body);
		return;
	}
	json_decref(body);
	LOG(LOG_INFO, "created instance %llu '%s' in room '%s' (%s)", (unsigned long long)v.info.id,
	    v.info.name, v.info.room, rq->ip);
	json_t *j = instance_json(rq->app, &v.info, json_loads(v.doc, 0, NULL));
	if (j && json_object_set_new(j, "token", json_string(v.token)) != 0) {
		json_decref(j);
		j = NULL;
	}
	snprintf(rs->location, sizeof rs->location, "/v1/instances/%llu",
	         (unsigned long long)v.info.id);
	resp_json(rs, 201, j);
	inst_view_free(&v);
}

void h_instance_get(const req_t *rq, resp_t *rs)
{
	inst_view_t v;
	inst_err_t e;
	if (instances_get(rq->app, rq->id, &v, &e) != INST_OK) {
		refused(rs, &e);
		return;
	}
	resp_json(rs, 200, instance_json(rq->app, &v.info, json_loads(v.doc, 0, NULL)));
	inst_view_free(&v);
}

void h_instance_patch(const req_t *rq, resp_t *rs)
{
	json_t *patch = req_json_object(rq, rs);
	if (!patch)
		return;
	inst_view_t v;
	inst_err_t e;
	if (instances_patch(rq->app, rq->id, patch, rq->route_room, &v, &e) != INST_OK)
		refused(rs, &e);
	else
		resp_json(rs, 200, instance_json(rq->app, &v.info, json_loads(v.doc, 0, NULL)));
	inst_view_free(&v);
	json_decref(patch);
}

void h_instance_delete(const req_t *rq, resp_t *rs)
{
	inst_err_t e;
	if (instances_delete(rq->app, rq->id, &e) != INST_OK) {
		refused(rs, &e);
		return;
	}
	LOG(LOG_INFO, "deleted instance %llu (%s)", (unsigned long long)rq->id, rq->ip);
	resp_text(rs, 204, NULL, "", 0);
}

void h_instance_reset(const req_t *rq, resp_t *rs)
{
	inst_err_t e;
	if (instances_reset(rq->app, rq->id, &e) != INST_OK)
		refused(rs, &e);
	else
		resp_text(rs, 204, NULL, "", 0);
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

/* The frame JSON (server/README.md "The frame JSON"): {"id", "tick", "t", "last_seq",
 * "state_hash", "head": {"p", "q"}, "strands": [[[x,y,z]...]...]}; state_hash as 16
 * lowercase hex digits (a JSON number would lose bits in JavaScript). */
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
	char hash[17];
	if (!strands)
		return NULL;
	snprintf(hash, sizeof hash, "%016" PRIx64, f->state_hash);
	return json_pack("{s:I,s:I,s:f,s:I,s:s,s:{s:o,s:o},s:o}", "id", (json_int_t)id, "tick",
	                 (json_int_t)f->tick, "t", f->t, "last_seq", (json_int_t)f->last_seq,
	                 "state_hash", hash, "head", "p", vec(p, 3), "q", vec(q, 4), "strands",
	                 strands);
}

/* Answered from the newest published frame when the sim keeps a snapshot of the
 * instance (instances.h), and then rendered once per tick: the first reader of a tick
 * keeps its body with the snapshot, later readers of the same tick copy it. */
void h_instance_frame(const req_t *rq, resp_t *rs)
{
	cmd_frame_t f;
	inst_err_t e;
	if (instances_frame(rq->app, rq->id, &f, &e) != INST_OK) {
		refused(rs, &e);
		inst_frame_release(&f);
		return;
	}
	const char *text = inst_frame_text(&f);
	if (!text) {
		json_t *j = frame_json(rq->id, &f);
		if (!f.snap) { /* read through the queue: nobody shares this rendering */
			resp_json(rs, 200, j);
			inst_frame_release(&f);
			return;
		}
		/* resp_json's format, kept with the snapshot */
		char *s = j ? json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(15)) : NULL;
		json_decref(j);
		text = s ? inst_frame_keep_text(&f, s) : NULL;
	}
	if (text)
		resp_text(rs, 200, "application/json", text, strlen(text));
	else
		resp_json(rs, 200, NULL); /* out of memory: 500 */
	inst_frame_release(&f);
}

/* Reads n numbers of arr into out; NaN throughout when arr is not an array of n numbers
 * (the door then refuses it, in its order of checks). */
static void numbers(const json_t *arr, int n, double *out)
{
	int ok = json_is_array(arr) && (int)json_array_size(arr) == n;
	for (int i = 0; ok && i < n; i++) {
		const json_t *v = json_array_get(arr, (size_t)i);
		ok = json_is_number(v);
		out[i] = ok ? json_number_value(v) : NAN;
	}
	for (int i = 0; !ok && i < n; i++)
		out[i] = NAN;
}

/* "bones": {"chest": {"p": [x, y, z], "q": [x, y, z, w]}, ...} (the wire's head_pose
 * bones, by name, each at most once: a repeated key is the body's 400): translated for
 * the door, which checks names and values ("bones.<name>", ".p", ".q"). Only the shape
 * of the JSON is refused here: not an object, more than every bone, a bone that is not
 * {"p", "q"}. */
static int pose_bones(json_t *o, inst_pose_t *p, resp_t *rs)
{
	const char *name, *key;
	json_t *b, *v;
	if (!o)
		return 1;
	if (!json_is_object(o) || json_object_size(o) > PTP_MAX_POSE_BONES) {
		metrics_add(&metrics.poses_rejected_invalid, 1);
		resp_error(rs, 422, "bones",
		           "bones: expected an object of at most %d bones (every body bone once), "
		           "{\"chest\": {\"p\": [x, y, z], \"q\": [x, y, z, w]}, ...}",
		           PTP_MAX_POSE_BONES);
		return 0;
	}
	json_object_foreach(o, name, b)
	{
		json_object_foreach(b, key, v)
		{
			if (strcmp(key, "p") && strcmp(key, "q")) {
				char f[140];
				snprintf(f, sizeof f, "bones.%.64s.%.64s", name, key);
				metrics_add(&metrics.poses_rejected_invalid, 1);
				resp_error(rs, 422, f, "%s: unknown field (expected p, q)", f);
				return 0;
			}
		}
		int i = p->nbones++;
		p->bones[i].name = name;
		p->bones[i].bone = ptp_bone_from_name(name);
		numbers(json_is_object(b) ? json_object_get(b, "p") : NULL, 3, p->bones[i].p);
		numbers(json_is_object(b) ? json_object_get(b, "q") : NULL, 4, p->bones[i].q);
	}
	return 1;
}

void h_instance_pose(const req_t *rq, resp_t *rs)
{
	json_t *body = req_json_object(rq, rs);
	if (!body)
		return;
	const char *key;
	json_t *v;
	json_object_foreach(body, key, v)
	{
		if (strcmp(key, "p") && strcmp(key, "q") && strcmp(key, "seq") &&
		    strcmp(key, "t") && strcmp(key, "v") && strcmp(key, "w") &&
		    strcmp(key, "bones")) {
			metrics_add(&metrics.poses_rejected_invalid, 1);
			resp_error(rs, 422, key,
			           "%s: unknown field (expected p, q, seq, t, v, w, bones)", key);
			json_decref(body);
			return;
		}
	}
	inst_pose_t p = {.id = rq->id};
	numbers(json_object_get(body, "p"), 3, p.p);
	numbers(json_object_get(body, "q"), 4, p.q);
	/* v and w: missing ones are zero, unreadable ones NaN (refused by the door) */
	for (int k = 0; k < 2; k++) {
		json_t *m = json_object_get(body, k ? "w" : "v");
		if (m)
			p.moving = 1, numbers(m, 3, k ? p.w : p.v);
	}
	v = json_object_get(body, "seq");
	p.seq = !v ? 0 : json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
	if (!pose_bones(json_object_get(body, "bones"), &p, rs)) {
		json_decref(body);
		return;
	}
	inst_err_t e;
	if (instances_pose(rq->app, &p, NULL, &e) != INST_OK)
		refused(rs, &e);
	else
		resp_text(rs, 204, NULL, "", 0);
	json_decref(body);
}
