/* REST handlers for the operational routes: /healthz, /readyz, /metrics, /v1/info. */
#include <stdlib.h>

#include "instances.h"
#include "ponytail/wind.h"
#include "metrics.h"
#include "shared_limits.h"
#include "interact.h"
#include "ponytail/touch.h"
#include "rest_internal.h"

#ifndef PONYTAIL_VERSION
#define PONYTAIL_VERSION "0.1.0"
#endif

/* Liveness: the tick thread completed a tick recently (10 periods, at least 2 s, so a
 * busy machine's overruns do not count as death). */
void h_healthz(const req_t *rq, resp_t *rs)
{
	int64_t done_ns;
	uint64_t tick = sim_tick_now(rq->app->sim, &done_ns);
	int64_t limit = 10 * 1000000000LL / rq->app->cfg->tick_hz;
	if (limit < 2000000000LL)
		limit = 2000000000LL;
	int alive = done_ns == 0 || sim_mono_ns() - done_ns < limit; /* 0: not ticked yet */
	resp_json(
	    rs, alive ? 200 : 503,
	    json_pack("{s:s,s:I}", "status", alive ? "ok" : "stalled", "tick", (json_int_t)tick));
}

/* Readiness: both listeners up, the sim ticking, not shutting down. */
void h_readyz(const req_t *rq, resp_t *rs)
{
	const app_t *app = rq->app;
	int draining = __atomic_load_n(&app->draining, __ATOMIC_ACQUIRE);
	int ws = __atomic_load_n(&app->ws_ready, __ATOMIC_ACQUIRE);
	int64_t done_ns; /* 0 until the first tick completes (numbers start above 0, drain.h) */
	sim_tick_now(app->sim, &done_ns);
	const char *why = draining       ? "shutting down"
	                  : !ws          ? "websocket not listening"
	                  : done_ns == 0 ? "no tick yet"
	                                 : NULL;
	resp_json(rs, why ? 503 : 200,
	          json_pack("{s:s,s:s?}", "status", why ? "not ready" : "ready", "reason", why));
}

void h_metrics(const req_t *rq, resp_t *rs)
{
	(void)rq;
	size_t len;
	char *text = metrics_render(&len);
	if (!text) {
		resp_error(rs, 503, NULL, "out of memory");
		return;
	}
	free(rs->body);
	rs->body = text;
	rs->len = len;
	rs->status = 200;
	rs->content_type = "text/plain; version=0.0.4; charset=utf-8";
}

/* What a client needs before connecting: where the WebSocket is and how fast it ticks,
 * and how big an instance may be here (the strands a frame carries, --max-points, and
 * core's caps on points per strand, colliders and body bones), the zones a room's
 * wind takes, and touch and grabs' limits (server/README.md "Touch and grabs"). */
void h_info(const req_t *rq, resp_t *rs)
{
	const app_t *app = rq->app;
	const char *url = app->cfg->ws_public_url;
	json_t *limits = json_pack(
	    "{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i}", "strands", (int)SERVER_MAX_STRANDS, "points",
	    app->cfg->max_points, "points_per_strand", (int)PT_MAX_POINTS, "colliders",
	    (int)PT_MAX_COLLIDERS, "bones", (int)PT_MAX_BONES, "wind_zones", (int)PT_MAX_WIND_ZONES,
	    "grabs", (int)PT_MAX_GRABS, "hands", (int)SERVER_MAX_ROOM_HANDS, "touch",
	    (int)PT_MAX_TOUCH, "allow", (int)INTERACT_MAX_ALLOW);
	resp_json(rs, 200,
	          json_pack("{s:s,s:s,s:i,s:i,s:i,s:i,s:s?,s:s,s:i,s:i,s:I,s:o}", "name",
	                    "ponytaild",
	                    "version", PONYTAIL_VERSION, "node_id", app->cfg->node_id, "tick_hz",
	                    app->cfg->tick_hz, "substeps", app->cfg->substeps, "ws_port",
	                    app->ws_port, "ws_url", *url ? url : NULL, "ws_subprotocol",
	                    "ponytail.v1", "max_instances", app->cfg->max_instances, "instances",
	                    instances_count(app), "tick",
	                    (json_int_t)sim_tick_now(app->sim, NULL), "limits", limits));
}
