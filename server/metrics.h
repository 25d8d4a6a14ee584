/* Metrics: process-wide counters and gauges, rendered in the Prometheus text format at
 * GET /metrics.
 *
 * One global, `metrics`, like Redis's `server` struct: every module bumps its own
 * counters with relaxed atomics (metrics_add/metrics_set) and never reads others'. The
 * tick histogram is written by the sim thread only.
 *
 * Threading: every function, any thread.
 */
#ifndef SERVER_METRICS_H
#define SERVER_METRICS_H

#include <stddef.h>
#include <stdint.h>

enum {
	METRICS_TICK_BUCKETS = 12,
	METRICS_ROUTES = 16,
	METRICS_CODES = 17,
	METRICS_WINDOW = 256 /* ticks kept for the exact quantiles (4.3 s at 60 Hz) */
};

typedef struct metrics_t {
	/* sim */
	uint64_t ticks, tick_overruns, tick_bucket[METRICS_TICK_BUCKETS + 1]; /* last = +Inf */
	uint64_t tick_work_ns_sum, tick_step_ns_sum, tick_encode_ns_sum;
	uint64_t tick_work_ns_last, tick_step_ns_last, tick_encode_ns_last;
	uint64_t tick_window[METRICS_WINDOW]; /* work ns of the newest ticks, a ring */
	uint64_t instances, commands, keyframes_encoded, frame_bytes_encoded;
	uint64_t instances_nonfinite_resets; /* sim_guard.c */
	/* poses (WebSocket and REST) */
	uint64_t poses_received, poses_rejected_invalid, poses_rejected_auth, poses_rejected_rate,
	    poses_rejected_full;
	/* WebSocket */
	uint64_t ws_connections, ws_accepted, ws_refused, ws_subscriptions, ws_batches_sent,
	    ws_records_sent, ws_keyframes_sent, ws_bytes_sent, ws_frames_skipped,
	    ws_protocol_errors, ws_messages_received;
	uint64_t ws_fanout_us_last, ws_fanout_us_sum,
	    ws_fanout_ticks; /* deadline -> last batch out */
	/* per-viewer rates (ws_conn.c): connections moved down / up a rate, and how many are
	 * below the rate they asked for now */
	uint64_t ws_rate_down, ws_rate_up, ws_conns_slowed;
	/* pose latency inside the server (sim.c): admitted -> the frame set that applied it
	 * published, summed over poses (a summary) */
	uint64_t pose_to_publish_us_sum, pose_to_publish_count;
	/* REST: [route][code] */
	uint64_t http_requests[METRICS_ROUTES][METRICS_CODES];
} metrics_t;

extern metrics_t metrics;

static inline void metrics_add(uint64_t *c, uint64_t v)
{
	__atomic_add_fetch(c, v, __ATOMIC_RELAXED);
}
static inline void metrics_set(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, v, __ATOMIC_RELAXED);
}
static inline uint64_t metrics_get(const uint64_t *c)
{
	return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* Sim thread: one tick's work time (and its step and encode parts), ns. */
void metrics_tick(uint64_t work_ns, uint64_t step_ns, uint64_t encode_ns);

/* Route names for the http_requests labels (index = route index); set once at start. */
void metrics_set_routes(const char *const *names, int n);

/* Counts one REST answer. route < 0 counts as "other". */
void metrics_http(int route, unsigned status);

/* The text exposition (malloc'ed, NUL-terminated, caller frees), or NULL. */
char *metrics_render(size_t *len);

#endif
