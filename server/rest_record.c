/* GET /v1/rooms/{room}/recording?last=S: the room's recording of the last S seconds
 * (record.h; the format: core/RECORDING.md), as one binary body. */
#include <math.h>
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
