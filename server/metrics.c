/* Metrics: see metrics.h. */
#include "metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

metrics_t metrics;

/* Upper bounds in seconds. A tick at 60 Hz has 16.7 ms; the buckets resolve the range
 * where "p99 under half the budget" is decided. */
static const double tick_le[METRICS_TICK_BUCKETS] = {0.00025, 0.0005, 0.001,  0.002, 0.004, 0.006,
                                                     0.008,   0.012,  0.0167, 0.025, 0.05,  0.1};

static const unsigned codes[METRICS_CODES] = {200, 201, 204, 304, 400, 401, 403, 404, 405,
                                              409, 413, 415, 422, 429, 500, 503, 0};

static const char *const *route_names;
static int n_routes;

void metrics_tick(uint64_t work_ns, uint64_t step_ns, uint64_t encode_ns)
{
	double s = (double)work_ns * 1e-9;
	int b = 0;
	while (b < METRICS_TICK_BUCKETS && s > tick_le[b])
		b++;
	metrics_add(&metrics.tick_bucket[b], 1);
	uint64_t n = metrics_get(&metrics.ticks);
	metrics_set(&metrics.tick_window[n % METRICS_WINDOW], work_ns);
	metrics_add(&metrics.ticks, 1);
	metrics_add(&metrics.tick_work_ns_sum, work_ns);
	metrics_add(&metrics.tick_step_ns_sum, step_ns);
	metrics_add(&metrics.tick_encode_ns_sum, encode_ns);
	metrics_set(&metrics.tick_work_ns_last, work_ns);
	metrics_set(&metrics.tick_step_ns_last, step_ns);
	metrics_set(&metrics.tick_encode_ns_last, encode_ns);
}

void metrics_set_routes(const char *const *names, int n)
{
	route_names = names;
	n_routes = n < METRICS_ROUTES - 1 ? n : METRICS_ROUTES - 1;
}

void metrics_http(int route, unsigned status)
{
	int r = route >= 0 && route < n_routes ? route : METRICS_ROUTES - 1;
	int c = 0;
	while (c < METRICS_CODES - 1 && codes[c] != status)
		c++;
	metrics_add(&metrics.http_requests[r][c], 1);
}

typedef struct out_t {
	char *p;
	size_t len, cap;
	int oom;
} out_t;

__attribute__((format(printf, 2, 3))) static void put(out_t *o, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(o->p ? o->p + o->len : NULL, o->p ? o->cap - o->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0 || o->oom)
			return;
		if (o->p && o->len + (size_t)n < o->cap) {
			o->len += (size_t)n;
			return;
		}
		size_t nc = o->cap ? o->cap * 2 : 8192;
		while (nc < o->len + (size_t)n + 1)
			nc *= 2;
		char *np = realloc(o->p, nc);
		if (!np) {
			o->oom = 1;
			return;
		}
		o->p = np;
		o->cap = nc;
	}
}

static void counter(out_t *o, const char *name, const char *help, const uint64_t *v)
{
	put(o, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name,
	    (unsigned long long)metrics_get(v));
}

static void gauge(out_t *o, const char *name, const char *help, const uint64_t *v)
{
	put(o, "# HELP %s %s\n# TYPE %s gauge\n%s %llu\n", name, help, name, name,
	    (unsigned long long)metrics_get(v));
}

static void seconds(out_t *o, const char *name, const char *help, const uint64_t *ns, int total)
{
	put(o, "# HELP %s %s\n# TYPE %s %s\n%s %.9f\n", name, help, name,
	    total ? "counter" : "gauge", name, (double)metrics_get(ns) * 1e-9);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Exact quantiles of the newest METRICS_WINDOW ticks: the histogram's buckets are too
 * coarse to tell 7 ms from 8.3 ms (half a 60 Hz tick, the capacity criterion). */
static void window_summary(out_t *o)
{
	uint64_t w[METRICS_WINDOW];
	uint64_t ticks = metrics_get(&metrics.ticks);
	int n = ticks < METRICS_WINDOW ? (int)ticks : METRICS_WINDOW;
	for (int i = 0; i < n; i++)
		w[i] = metrics_get(&metrics.tick_window[i]);
	qsort(w, (size_t)n, sizeof w[0], cmp_u64);
	const char *h = "ponytail_tick_work_recent_seconds";
	put(o, "# HELP %s Tick work time over the newest %d ticks.\n# TYPE %s summary\n", h,
	    METRICS_WINDOW, h);
	static const double q[] = {0.5, 0.9, 0.99, 1.0};
	for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
		int k = n ? (int)(q[i] * (n - 1) + 0.5) : 0;
		put(o, "%s{quantile=\"%g\"} %.9f\n", h, q[i], n ? (double)w[k] * 1e-9 : 0.0);
	}
	uint64_t sum = 0;
	for (int i = 0; i < n; i++)
		sum += w[i];
	put(o, "%s_sum %.9f\n%s_count %d\n", h, (double)sum * 1e-9, h, n);
}

char *metrics_render(size_t *len)
{
	out_t o = {0};
	window_summary(&o);
	const char *h = "ponytail_tick_duration_seconds";
	put(&o,
	    "# HELP %s Work time of one simulation tick (commands, step, encode, publish).\n"
	    "# TYPE %s histogram\n",
	    h, h);
	uint64_t cum = 0;
	for (int b = 0; b <= METRICS_TICK_BUCKETS; b++) {
		cum += metrics_get(&metrics.tick_bucket[b]);
		if (b < METRICS_TICK_BUCKETS)
			put(&o, "%s_bucket{le=\"%g\"} %llu\n", h, tick_le[b],
			    (unsigned long long)cum);
		else
			put(&o, "%s_bucket{le=\"+Inf\"} %llu\n", h, (unsigned long long)cum);
	}
	put(&o, "%s_sum %.9f\n%s_count %llu\n", h,
	    (double)metrics_get(&metrics.tick_work_ns_sum) * 1e-9, h, (unsigned long long)cum);
	counter(&o, "ponytail_ticks_total", "Simulation ticks run.", &metrics.ticks);
	counter(&o, "ponytail_tick_overruns_total", "Ticks whose work ran past the next deadline.",
	        &metrics.tick_overruns);
	seconds(&o, "ponytail_tick_step_seconds_total", "Time spent stepping instances.",
	        &metrics.tick_step_ns_sum, 1);
	seconds(&o, "ponytail_tick_encode_seconds_total", "Time spent encoding frames.",
	        &metrics.tick_encode_ns_sum, 1);
	seconds(&o, "ponytail_tick_last_work_seconds", "Work time of the newest tick.",
	        &metrics.tick_work_ns_last, 0);
	seconds(&o, "ponytail_tick_last_step_seconds", "Step time of the newest tick.",
	        &metrics.tick_step_ns_last, 0);
	gauge(&o, "ponytail_instances", "Instances hosted.", &metrics.instances);
	counter(&o, "ponytail_commands_total", "REST commands applied by the sim.",
	        &metrics.commands);
	counter(&o, "ponytail_instances_nonfinite_resets_total",
	        "Instances found with non-finite points and put back at rest.",
	        &metrics.instances_nonfinite_resets);
	counter(&o, "ponytail_keyframes_encoded_total", "Keyframe records encoded on request.",
	        &metrics.keyframes_encoded);
	counter(&o, "ponytail_frame_bytes_encoded_total", "Bytes of frame records encoded.",
	        &metrics.frame_bytes_encoded);
	counter(&o, "ponytail_poses_received_total", "Head poses accepted (WebSocket and REST).",
	        &metrics.poses_received);
	put(&o, "# HELP ponytail_poses_rejected_total Head poses refused, by reason.\n"
	        "# TYPE ponytail_poses_rejected_total counter\n");
	const struct {
		const char *reason;
		const uint64_t *v;
	} rej[] = {{"invalid", &metrics.poses_rejected_invalid},
	           {"unauthorized", &metrics.poses_rejected_auth},
	           {"rate", &metrics.poses_rejected_rate},
	           {"inbox_full", &metrics.poses_rejected_full}};
	for (size_t i = 0; i < sizeof rej / sizeof rej[0]; i++)
		put(&o, "ponytail_poses_rejected_total{reason=\"%s\"} %llu\n", rej[i].reason,
		    (unsigned long long)metrics_get(rej[i].v));
	gauge(&o, "ponytail_ws_connections", "Open WebSocket connections.",
	      &metrics.ws_connections);
	counter(&o, "ponytail_ws_accepted_total", "WebSocket connections accepted.",
	        &metrics.ws_accepted);
	counter(&o, "ponytail_ws_refused_total", "WebSocket connections refused by limits.",
	        &metrics.ws_refused);
	gauge(&o, "ponytail_ws_subscriptions", "Instance and room subscriptions.",
	      &metrics.ws_subscriptions);
	counter(&o, "ponytail_ws_frames_sent_total", "Frame batch messages sent.",
	        &metrics.ws_batches_sent);
	counter(&o, "ponytail_ws_records_sent_total", "Instance frame records sent.",
	        &metrics.ws_records_sent);
	counter(&o, "ponytail_ws_keyframes_sent_total", "Keyframe records sent.",
	        &metrics.ws_keyframes_sent);
	counter(&o, "ponytail_ws_bytes_sent_total", "Bytes of WebSocket messages sent.",
	        &metrics.ws_bytes_sent);
	counter(&o, "ponytail_ws_frames_skipped_total",
	        "Ticks a subscribed connection skipped (slow, or waiting for a keyframe).",
	        &metrics.ws_frames_skipped);
	put(&o,
	    "# HELP ponytail_ws_fanout_seconds From a tick's deadline to its last frame batch "
	    "written (all connections).\n# TYPE ponytail_ws_fanout_seconds summary\n"
	    "ponytail_ws_fanout_seconds_sum %.6f\nponytail_ws_fanout_seconds_count %llu\n",
	    (double)metrics_get(&metrics.ws_fanout_us_sum) * 1e-6,
	    (unsigned long long)metrics_get(&metrics.ws_fanout_ticks));
	put(&o,
	    "# HELP ponytail_ws_fanout_last_seconds The same for the newest tick.\n"
	    "# TYPE ponytail_ws_fanout_last_seconds gauge\nponytail_ws_fanout_last_seconds %.6f\n",
	    (double)metrics_get(&metrics.ws_fanout_us_last) * 1e-6);
	counter(&o, "ponytail_ws_rate_down_total",
	        "Times a connection whose socket backed up was moved down a rate (60, 30, 20, "
	        "10 Hz).",
	        &metrics.ws_rate_down);
	counter(&o, "ponytail_ws_rate_up_total",
	        "Times a connection that drained was moved back up a rate.", &metrics.ws_rate_up);
	gauge(&o, "ponytail_ws_connections_slowed",
	      "Connections now below the rate they subscribed at.", &metrics.ws_conns_slowed);
	put(&o,
	    "# HELP ponytail_pose_to_publish_seconds From a head pose admitted by the door to "
	    "the publication of the first frame set that applied it.\n"
	    "# TYPE ponytail_pose_to_publish_seconds summary\n"
	    "ponytail_pose_to_publish_seconds_sum %.6f\nponytail_pose_to_publish_seconds_count "
	    "%llu\n",
	    (double)metrics_get(&metrics.pose_to_publish_us_sum) * 1e-6,
	    (unsigned long long)metrics_get(&metrics.pose_to_publish_count));
	counter(&o, "ponytail_ws_messages_received_total", "WebSocket messages received.",
	        &metrics.ws_messages_received);
	counter(&o, "ponytail_ws_protocol_errors_total", "Client messages answered with an error.",
	        &metrics.ws_protocol_errors);
	put(&o, "# HELP ponytail_http_requests_total REST requests by route and status.\n"
	        "# TYPE ponytail_http_requests_total counter\n");
	for (int r = 0; r < METRICS_ROUTES; r++)
		for (int c = 0; c < METRICS_CODES; c++) {
			uint64_t v = metrics_get(&metrics.http_requests[r][c]);
			if (!v)
				continue;
			const char *name = r < n_routes ? route_names[r] : "other";
			if (codes[c])
				put(&o,
				    "ponytail_http_requests_total{route=\"%s\",code=\"%u\"} %llu\n",
				    name, codes[c], (unsigned long long)v);
			else
				put(&o,
				    "ponytail_http_requests_total{route=\"%s\",code=\"other\"} "
				    "%llu\n",
				    name, (unsigned long long)v);
		}
	if (o.oom) {
		free(o.p);
		return NULL;
	}
	*len = o.len;
	return o.p;
}
