/* REST handlers of /v1/instances/{id}/grabs (server/README.md "Touch and grabs"): each
 * one call of the door (instances_grab*), its answer as JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instances.h"
#include "rest_internal.h"

static void refused(resp_t *rs, const inst_err_t *e)
{
	resp_error(rs, inst_http_status(e->status), e->has_field ? e->field : NULL, "%s",
	           e->message);
}

/* {"id", "instance", "by", "strand", "point", "bone"} */
static json_t *grab_json(const grab_info_t *g)
{
	return json_pack("{s:I,s:I,s:I,s:i,s:i,s:s}", "id", (json_int_t)g->gid, "instance",
	                 (json_int_t)g->instance, "by", (json_int_t)g->by, "strand", g->strand,
	                 "point", g->point, "bone", pt_bone_name((pt_bone)g->bone));
}

void h_grab_create(const req_t *rq, resp_t *rs)
{
	const char *tok;
	size_t len;
	json_t *body = req_json_object(rq, rs);
	if (!body)
		return;
	if (!req_bearer(rq, rs, &tok, &len)) {
		json_decref(body);
		return;
	}
	grab_info_t g;
	inst_err_t e;
	inst_status_t st = instances_grab(rq->app, rq->id, body, tok, len, &g, &e);
	json_decref(body);
	if (st != INST_OK) {
		refused(rs, &e);
		return;
	}
	snprintf(rs->location, sizeof rs->location, "/v1/instances/%llu/grabs/%llu",
	         (unsigned long long)g.instance, (unsigned long long)g.gid);
	resp_json(rs, 201, grab_json(&g));
}

void h_grabs_list(const req_t *rq, resp_t *rs)
{
	grab_info_t *list;
	int n;
	inst_err_t e;
	if (instances_grabs(rq->app, rq->id, &list, &n, &e) != INST_OK) {
		refused(rs, &e);
		return;
	}
	json_t *arr = json_array();
	for (int i = 0; arr && i < n; i++)
		if (json_array_append_new(arr, grab_json(&list[i])) != 0) {
			json_decref(arr);
			arr = NULL;
		}
	free(list);
	resp_json(rs, 200, arr ? json_pack("{s:o,s:i}", "grabs", arr, "count", n) : NULL);
}

void h_grab_delete(const req_t *rq, resp_t *rs)
{
	const char *tok, *last = strrchr(rq->url, '/');
	size_t len;
	uint64_t gid = last ? strtoull(last + 1, NULL, 10) : 0;
	if (!req_bearer(rq, rs, &tok, &len))
		return;
	inst_err_t e;
	if (instances_release(rq->app, rq->id, gid, tok, len, &e) != INST_OK) {
		refused(rs, &e);
		return;
	}
	rs->status = 204;
}
