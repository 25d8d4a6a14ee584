/* REST handlers for avatars: POST /v1/import/vrm (a .vrm in, its spring bones out as an
 * instance definition), PUT and GET /v1/instances/{id}/avatar (the file every viewer of the
 * room downloads to draw that instance). rest.c has already checked the Content-Type
 * (model/gltf-binary or application/octet-stream) and capped the body at --max-avatar;
 * everything else is the door's (instances_avatar.c).
 */
#include <stdlib.h>
#include <string.h>

#include "instances.h"
#include "rest_internal.h"

static void refused(resp_t *rs, const inst_err_t *e)
{
	resp_error(rs, inst_http_status(e->status), e->has_field ? e->field : NULL, "%s",
	           e->message);
}

static int have_body(const req_t *rq, resp_t *rs)
{
	if (rq->body && rq->body_len > 0)
		return 1;
	resp_error(rs, 400, "body", "the body must be the avatar's .vrm (glTF binary) file");
	return 0;
}

void h_import_vrm(const req_t *rq, resp_t *rs)
{
	if (!have_body(rq, rs))
		return;
	json_t *def, *report;
	inst_err_t e;
	if (instances_import_vrm(rq->app, (const uint8_t *)rq->body, rq->body_len, &def, &report,
	                         &e) != INST_OK) {
		refused(rs, &e);
		return;
	}
	resp_json(rs, 200, json_pack("{s:o,s:o}", "definition", def, "report", report));
}

void h_avatar_put(const req_t *rq, resp_t *rs)
{
	if (!have_body(rq, rs))
		return;
	inst_err_t e;
	if (instances_avatar_put(rq->app, rq->id, (const uint8_t *)rq->body, rq->body_len, &e) !=
	    INST_OK)
		refused(rs, &e);
	else
		resp_text(rs, 204, NULL, "", 0);
}

void h_avatar_get(const req_t *rq, resp_t *rs)
{
	uint8_t *glb;
	size_t len;
	inst_err_t e;
	if (instances_avatar_get(rq->app, rq->id, &glb, &len, &e) != INST_OK) {
		refused(rs, &e);
		return;
	}
	free(rs->body);
	rs->status = 200;
	rs->body = (char *)glb; /* malloc'ed: rest.c hands it to MHD, which frees it */
	rs->len = len;
	rs->content_type = "model/gltf-binary";
}
