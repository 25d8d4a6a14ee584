/* `ponytail load`, private: the run's state, shared by load.c (flags, the command),
 * load_run.c (the connections and the event loop), load_instances.c (creating, listing and
 * deleting the instances) and load_report.c (the daemon's /metrics, the final report). */
#ifndef PONYTAIL_CLI_LOAD_H
#define PONYTAIL_CLI_LOAD_H

#include <signal.h>
#include <stdint.h>

#include "hist.h"
#include "ponytail/motion.h"
#include "ponytail_client.h"
#include "remote.h"

enum { LOAD_PUB = 1, LOAD_SUB = 2, LOAD_MAX_ERR_KINDS = 32 };

/* One connection of the run. */
typedef struct lconn_t {
	struct load_t *L;
	ptc_conn_t *c;
	int kind, index;
	int ready_once, lost, failed;
	/* subscriber: its room; distinct ticks and records inside the measured window */
	int room;
	uint64_t last_tick, win_ticks, win_records;
	/* stats of the conn at the window's start (bytes) */
	uint64_t base_in, base_out;
} lconn_t;

/* What the daemon's /metrics said, the parts the report uses. */
typedef struct load_metrics_t {
	int ok;
	double tick_le[32];  /* histogram bucket bounds, s (last: +Inf) */
	double tick_cum[32]; /* cumulative counts */
	int ntick;
	double overruns, skipped, ticks;
	double recent_p99;               /* exact p99 of the newest ticks (newer daemons), s; -1 */
	double fanout_sum, fanout_count; /* tick deadline -> last batch written, s / ticks */
} load_metrics_t;

typedef struct load_t {
	remote_t r;
	/* flags */
	long rooms, per_room, publishers, subscribers;
	double duration, ramp, rate;
	int keep, reuse, decode, rate_given;
	const char *json_path, *prefix_arg, *instance_path;
	char prefix[80];
	pt_motion motion;
	/* instances */
	long ninst;
	uint64_t *ids;
	char (*tokens)[129];
	int *inst_room;
	long created;               /* how many of ids[] this run created (and deletes) */
	long *pub_start, *pub_inst; /* publisher j: instances pub_inst[pub_start[j] ..
	                               pub_start[j + 1]) */
	/* the run */
	char ws[512];
	int tick_hz;
	ptc_ctx_t *ctx;
	lconn_t *conns;
	long nconns, opened;
	uint64_t max_tick;     /* newest tick any connection has seen */
	uint64_t tick0, tick1; /* measured window (inclusive); tick0 = UINT64_MAX before */
	int measuring;
	hist_t lat;   /* input-to-frame, one sample per pose, inside the window */
	hist_t deliv; /* tick deadline -> receipt, one sample per record, same window */
	char err_kind[LOAD_MAX_ERR_KINDS][48];
	uint64_t err_count[LOAD_MAX_ERR_KINDS];
	int nerr;
	char first_connect_error[320];
	uint64_t publish_dropped;
	double win_s, cpu_s;
	load_metrics_t m0, m1;
} load_t;

/* Set by SIGINT/SIGTERM (counts them): 1 ends the measurement, 2 aborts. */
extern volatile sig_atomic_t load_stop;

/* load_instances.c: fills ids, tokens and inst_room, sets ninst (and created). 0, or -1
 * printed. Deleting uses each instance's own token and retries the daemon's 429s. */
int load_create_instances(load_t *L);
int load_list_instances(load_t *L);
void load_delete_instances(load_t *L);

/* load_run.c: creates or finds the instances, opens the connections over the ramp,
 * measures for --duration, then drains. CLI_EXIT_OK when the measurement ran (the
 * connections stay open for load_report), else CLI_EXIT_FAIL (printed, unless Ctrl-C came
 * during the ramp). */
int load_run(load_t *L);
/* Closes every connection, lets the close frames go out, destroys the context. */
void load_shutdown_conns(load_t *L);

/* Counts n errors of a kind ("connect_failed", "server:rate", "decode", ...). */
void load_error(load_t *L, const char *kind, uint64_t n);

/* Reads the daemon's /metrics into *m (m->ok = 0 when unavailable, never fatal). */
void load_scrape(load_t *L, load_metrics_t *m);

/* Prints the final report to stdout and, with --json FILE, writes it there. Returns 0, or
 * -1 when the JSON file cannot be written. */
int load_report(load_t *L);

#endif
