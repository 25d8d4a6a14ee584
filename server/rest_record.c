/* GET /v1/rooms/{room}/recording?last=S: the room's recording of the last S seconds
 * (record.h; the format: core/RECORDING.md), as one binary body; POST /v1/replay: a
 * recording re-simulated into frames for the browser page. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rest_internal.h"

void h_room_recording(const req_t *rq, resp_t *rs)
{
	int keep = rq->app->cfg->record_seconds;
	if (keep <= 0) {
		resp_error(rs, 404, "room", "recordings are off (ponytaild --record-seconds 0)");
		return;
	}
	double last = keep;
	if (rq->last) {
		char *end;
		last = strtod(rq->last, &end);
		if (end == rq->last || *end || !isfinite(last) || last <= 0.0 || last > keep) {
			resp_error(rs, 422, "last", "must be a number of seconds in (0, %d], got '%.40s'",
			           keep, rq->last);
			return;
		}
	}
	unsigned char *buf;
	size_t n;
	int rc = rq->path_room[0] ? rec_read(rq->app->rec, rq->path_room, last, &buf, &n) : -1;
	if (rc == -1) {
		resp_error(rs, 404, "room", "no instances in room '%s'", rq->path_room);
		return;
	}
	if (rc != 0) {
		free(buf);
		resp_error(rs, 503, NULL, "out of memory");
		return;
	}
	free(rs->body);
	rs->body = (char *)buf;
	rs->len = n;
	rs->status = 200;
	rs->content_type = "application/vnd.ponytail.recording";
}

/* ---- POST /v1/replay?rate=R ---------------------------------------------------------- */

enum { REPLAY_ANSWER_MAX = 64 << 20 }; /* bytes of frames JSON one answer may hold */

typedef struct defs_t { /* the newest definition text of each instance, by id */
	uint64_t *id;
	const char **json;
	size_t *len;
	int n, cap;
} defs_t;

static int defs_set(defs_t *d, uint64_t id, const char *json, size_t len)
{
	for (int i = 0; i < d->n; i++)
		if (d->id[i] == id) {
			d->json[i] = json, d->len[i] = len;
			return 0;
		}
	if (d->n == d->cap) {
		int nc = d->cap ? 2 * d->cap : 16;
		uint64_t *ni = realloc(d->id, (size_t)nc * sizeof *ni);
		if (ni)
			d->id = ni;
		const char **nj = ni ? realloc(d->json, (size_t)nc * sizeof *nj) : NULL;
		if (nj)
			d->json = nj;
		size_t *nl = nj ? realloc(d->len, (size_t)nc * sizeof *nl) : NULL;
		if (!nl)
			return -1;
		d->len = nl, d->cap = nc;
	}
	d->id[d->n] = id, d->json[d->n] = json, d->len[d->n] = len;
	d->n++;
	return 0;
}

static void out_printf(pt_rec_buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
	va_end(ap);
	if (n > 0)
		pt_rec_buf_put(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

static void out_floats(pt_rec_buf *b, const float *v, int n)
{
	pt_rec_buf_put(b, "[", 1);
	for (int i = 0; i < n; i++)
		out_printf(b, i ? ",%.9g" : "%.9g", (double)v[i]);
	pt_rec_buf_put(b, "]", 1);
}

/* One frame: every instance the replay has, after the tick of `step`, a STEP record whose
 * hashes pt_replay_mismatch found equal to the replay's: its entries are the instances in
 * the replay's (id) order, so the hashes are taken from it, not computed again. */
static void out_frame(pt_rec_buf *b, pt_replay *r, const pt_rec_event *step, int first)
{
	static _Thread_local pt_vec3 pts[PT_MAX_JOINTS];
	pt_world *w = pt_replay_world(r);
	out_printf(b, "%s{\"tick\":%llu,\"instances\":[", first ? "" : ",",
	           (unsigned long long)step->tick);
	for (int i = 0; i < pt_replay_count(r); i++) {
		uint64_t id, hash;
		pt_rec_step_entry(step, (uint32_t)i, &id, &hash);
		pt_id pid = pt_replay_find(r, id);
		int counts[PT_MAX_STRANDS], strands = 0;
		int n = pt_world_shape(w, pid, &strands, counts);
		pt_world_read_points(w, pid, pts, n);
		pt_pose head;
		pt_world_get_head(w, pid, &head);
		out_printf(b, "%s{\"id\":%llu,\"state_hash\":\"%016llx\",\"head\":{\"p\":", i ? "," : "",
		           (unsigned long long)id, (unsigned long long)hash);
		out_floats(b, &head.p.x, 3);
		pt_rec_buf_put(b, ",\"q\":", 5);
		out_floats(b, &head.q.x, 4);
		pt_rec_buf_put(b, "},\"strands\":[", 13);
		for (int s = 0, k = 0; s < strands; k += counts[s], s++) {
			if (s)
				pt_rec_buf_put(b, ",", 1);
			out_floats(b, &pts[k].x, 3 * counts[s]);
		}
		pt_rec_buf_put(b, "]}", 2);
	}
	pt_rec_buf_put(b, "]}", 2);
}

/* The recording in the body re-simulated (every hash checked), its frames at `rate` Hz as
 * JSON: what the browser page plays and scrubs (clients/web/js/replay.mjs). */
void h_replay(const req_t *rq, resp_t *rs)
{
	int rate = 30;
	if (rq->rate) {
		char *end;
		long v = strtol(rq->rate, &end, 10);
		if (end == rq->rate || *end || (v != 60 && v != 30 && v != 20 && v != 10)) {
			resp_error(rs, 422, "rate", "must be 60, 30, 20 or 10 (frames per second), got '%.40s'",
			           rq->rate);
			return;
		}
		rate = (int)v;
	}
	char msg[256];
	pt_rec_reader rd;
	pt_rec_info info;
	if (pt_rec_open(&rd, rq->body ? rq->body : "", rq->body_len, &info, msg, sizeof msg) != 0) {
		resp_error(rs, 422, "body", "not a recording Ponytail can replay: %s", msg);
		return;
	}
	pt_replay *r = pt_replay_create(&info, PT_KERNEL_AUTO);
	pt_rec_buf out = {0};
	defs_t defs = {0};
	int every = (int)lround(info.tick_hz / rate), frames = 0, status = 0;
	every = every < 1 ? 1 : every;
	if (!r)
		status = 503, snprintf(msg, sizeof msg, "out of memory");
	json_t *room = json_string(info.room); /* the room's name, escaped */
	char *rj = room ? json_dumps(room, JSON_ENCODE_ANY) : NULL;
	json_decref(room);
	if (!rj)
		status = 503, snprintf(msg, sizeof msg, "out of memory");
	else
		out_printf(&out, "{\"room\":%s,\"tick_hz\":%g,\"rate\":%d,\"first_tick\":%llu,\"frames\":[",
		           rj, info.tick_hz, rate, (unsigned long long)info.first_tick);
	free(rj);
	pt_rec_event ev;
	int got = 0;
	while (!status && (got = pt_rec_next(&rd, &ev, msg, sizeof msg)) == 1) {
		if ((ev.type == PT_REC_SNAPSHOT || ev.type == PT_REC_CREATE || ev.type == PT_REC_UPDATE) &&
		    defs_set(&defs, ev.id, ev.def_json, ev.def_len) != 0)
			status = 503, snprintf(msg, sizeof msg, "out of memory");
		else if (pt_replay_apply(r, &ev, msg, sizeof msg) != 0)
			status = 422;
		else if (ev.type == PT_REC_STEP) {
			int k = pt_replay_mismatch(r, &ev);
			if (k >= 0) {
				snprintf(msg, sizeof msg, "offset %zu: tick %llu: the replay's state differs from "
				         "the recorded hash (a corrupt recording, or one from another version)",
				         ev.offset, (unsigned long long)ev.tick);
				status = 422;
			} else if (ev.tick % (uint64_t)every == 0) {
				out_frame(&out, r, &ev, frames++ == 0);
				if (out.n > REPLAY_ANSWER_MAX) {
					resp_error(rs, 422, "rate", "the frames at %d Hz exceed %d MiB: ask for a "
					           "lower rate or a shorter recording", rate, REPLAY_ANSWER_MAX >> 20);
					status = -1;
				}
			}
		}
	}
	if (!status && got < 0)
		status = 422;
	if (!status) {
		pt_rec_buf_put(&out, "],\"instances\":{", 15);
		for (int i = 0; i < defs.n; i++) {
			out_printf(&out, "%s\"%llu\":", i ? "," : "", (unsigned long long)defs.id[i]);
			pt_rec_buf_put(&out, defs.json[i], defs.len[i]);
		}
		pt_rec_buf_put(&out, "}}", 2);
		if (out.failed)
			status = 503, snprintf(msg, sizeof msg, "out of memory");
	}
	if (status > 0)
		resp_error(rs, (unsigned)status, status == 422 ? "body" : NULL, "%s", msg);
	else if (status == 0) {
		free(rs->body);
		rs->body = (char *)out.p, rs->len = out.n, rs->status = 200;
		rs->content_type = "application/json";
		out.p = NULL;
	}
	pt_rec_buf_free(&out);
	free(defs.id), free(defs.json), free(defs.len);
	pt_replay_destroy(r);
}
