/* REST handlers for a room's settings: GET, PUT and PATCH /v1/rooms/{room}/wind (the room
 * wind, server/README.md "Room wind"). Writes need the room's authorization, checked by
 * rest.c before the body (R_RAUTH: req_room_authorized). */
#include <stdlib.h>

#include "instances.h"
#include "log.h"
#include "rest_internal.h"

static void answer(resp_t *rs, inst_status_t st, const inst_err_t *e, char *doc)
{
	if (st != INST_OK)
		resp_error(rs, inst_http_status(st), e->has_field ? e->field : NULL, "%s", e->message);
	else
		resp_json(rs, 200, json_loads(doc, 0, NULL));
	free(doc);
}

void h_room_wind_get(const req_t *rq, resp_t *rs)
{
	char *doc;
	inst_err_t e;
	inst_status_t st = instances_wind_get(rq->app, rq->path_room, &doc, &e);
	answer(rs, st, &e, doc);
}

static void set(const req_t *rq, resp_t *rs, int merge)
{
	json_t *body = req_json_object(rq, rs);
	if (!body)
		return;
	char *doc;
	inst_err_t e;
	inst_status_t st = instances_wind_set(rq->app, rq->path_room, body, merge, rq->route_room,
	                                      &doc, &e);
	if (st == INST_OK)
		LOG(LOG_INFO, "room '%s': wind set (%s)", rq->path_room, rq->ip);
	answer(rs, st, &e, doc);
	json_decref(body);
}

void h_room_wind_put(const req_t *rq, resp_t *rs)
{
	set(rq, rs, 0);
}

void h_room_wind_patch(const req_t *rq, resp_t *rs)
{
	set(rq, rs, 1);
}
