/* Private to the rest*.c files: one request as the handlers see it, one response as they
 * build it, and the handlers of the route table (rest.c).
 *
 * Ownership: a handler reads req (borrowed for the call) and fills resp; resp->body is
 * malloc'ed and freed by rest.c after queueing; resp->fd (static files) is closed by
 * libmicrohttpd. Handlers run on MHD connection threads, concurrently.
 */
#ifndef SERVER_REST_INTERNAL_H
#define SERVER_REST_INTERNAL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "app.h"

typedef struct req_t {
	app_t *app;
	const char *method;
	const char *url;        /* path only, decoded by MHD */
	uint64_t id;            /* {id} of the route, 0 when it has none */
	const char *room;       /* ?room= (list), NULL when absent */
	const char *include;    /* ?include= (list: "bones"), NULL when absent */
	const char *path_room;  /* the route's {room} ("" when none or longer than a name) */
	const char *last;       /* ?last= (recording), NULL when absent */
	const char *rate;       /* ?rate= (replay), NULL when absent */
	const char *route_room; /* the room a proxy routed by: ?room=, else X-Ponytail-Room */
	const char *body;       /* NUL-terminated, body_len bytes (NULL when empty) */
	size_t body_len;
	const char *ip; /* client address */
	void *conn;     /* struct MHD_Connection *, for rare header lookups */
} req_t;

typedef struct resp_t {
	unsigned status;
	char *body; /* malloc'ed, owned by resp */
	size_t len;
	const char *content_type;
	int fd; /* >= 0: send this file (owned; closed by MHD) */
	uint64_t fd_size;
	const char *allow;    /* Allow header (405) */
	int www_authenticate; /* add WWW-Authenticate: Bearer (401) */
	const char *cache;    /* Cache-Control, default no-store */
	char location[64];    /* Location header (201), "" for none */
} resp_t;

/* JSON response; takes the reference to obj (NULL = 500 out of memory). */
void resp_json(resp_t *rs, unsigned status, json_t *obj);

/* {"error": {"code": ..., "message": ..., "field": ...}}; field NULL becomes null. */
void resp_error(resp_t *rs, unsigned status, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Plain text response (copied). */
void resp_text(resp_t *rs, unsigned status, const char *content_type, const char *text, size_t len);

/* Parses the body as a JSON object. Returns it (new reference), or NULL after answering
 * 400 (malformed, not an object) into rs. */
json_t *req_json_object(const req_t *rq, resp_t *rs);

/* Checks the Authorization header for a write to instance rq->id (the instance's token or
 * the admin token). Returns 1 when allowed; otherwise answers 401/403/404 into rs and
 * returns 0. */
int req_authorized(const req_t *rq, resp_t *rs);

/* The request's bearer token into *tok, *len (borrowed from the request): 1, or 0 with
 * 401 answered into rs. */
int req_bearer(const req_t *rq, resp_t *rs, const char **tok, size_t *len);

/* The same for a write to room {room}'s settings (instances_room_authorize). */
int req_room_authorized(const req_t *rq, resp_t *rs);

/* rest_rooms.c: a room's wind */
void h_room_wind_get(const req_t *rq, resp_t *rs);
void h_room_wind_put(const req_t *rq, resp_t *rs);
void h_room_wind_patch(const req_t *rq, resp_t *rs);

/* rest_instances.c */
void h_instances_list(const req_t *rq, resp_t *rs);
void h_instances_create(const req_t *rq, resp_t *rs);
void h_instance_get(const req_t *rq, resp_t *rs);
void h_instance_patch(const req_t *rq, resp_t *rs);
void h_instance_delete(const req_t *rq, resp_t *rs);
void h_instance_reset(const req_t *rq, resp_t *rs);
void h_instance_frame(const req_t *rq, resp_t *rs);
void h_instance_pose(const req_t *rq, resp_t *rs);

/* rest_grabs.c: grabs of an instance */
void h_grab_create(const req_t *rq, resp_t *rs);
void h_grabs_list(const req_t *rq, resp_t *rs);
void h_grab_delete(const req_t *rq, resp_t *rs);

/* rest_avatar.c: avatar files and the VRM import */
void h_avatar_put(const req_t *rq, resp_t *rs);
void h_avatar_get(const req_t *rq, resp_t *rs);
void h_import_vrm(const req_t *rq, resp_t *rs);

/* rest_system.c */
void h_room_recording(const req_t *rq, resp_t *rs); /* rest_record.c */
void h_replay(const req_t *rq, resp_t *rs);         /* rest_record.c */
void h_healthz(const req_t *rq, resp_t *rs);
void h_readyz(const req_t *rq, resp_t *rs);
void h_metrics(const req_t *rq, resp_t *rs);
void h_info(const req_t *rq, resp_t *rs);

/* rest_openapi.c: server/openapi.json */
void h_openapi(const req_t *rq, resp_t *rs);

/* rest_static.c: files of --web-root at "/", of --proto-js at "/proto/js/". */
void h_static(const req_t *rq, resp_t *rs);

/* Returns 1 when the client address may make another write now (token bucket per
 * address, --write-rate per second); 0 = answer 429. rest.c. */
int rest_rate_ok(const app_t *app, const char *ip);

#endif
