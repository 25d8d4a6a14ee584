/* `ponytail load`: the run itself -- the connections and their callbacks, the publishers'
 * schedule, the progress line, the event loop over ramp, measurement and drain -- and the
 * closing of every connection (see load.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "commands.h"
#include "load.h"

/* ---- connections -------------------------------------------------------------------------- */

static void on_state(ptc_conn_t *c, ptc_state_t s, const char *why, void *user)
{
	(void)c;
	lconn_t *lc = user;
	if (s == PTC_READY) {
		lc->ready_once = 1;
	} else if (s == PTC_CLOSED) {
		if (lc->ready_once) {
			lc->lost = 1;
			load_error(lc->L, "disconnected", 1);
		} else {
			lc->failed = 1;
			load_error(lc->L, "connect_failed", 1);
			if (!lc->L->first_connect_error[0])
				snprintf(lc->L->first_connect_error,
				         sizeof lc->L->first_connect_error, "%s", why);
		}
	}
}

static void on_batch(ptc_conn_t *c, uint64_t tick, int64_t server_us, int records, void *user)
{
	(void)c, (void)server_us, (void)records;
	lconn_t *lc = user;
	load_t *L = lc->L;
	if (tick > L->max_tick)
		L->max_tick = tick;
	if (tick <= lc->last_tick)
		return; /* the rest of a split batch */
	lc->last_tick = tick;
	if (tick >= L->tick0 && tick <= L->tick1)
		lc->win_ticks++;
}

static void on_frame(ptc_conn_t *c, const ptc_frame_t *f, void *user)
{
	lconn_t *lc = user;
	load_t *L = lc->L;
	if (f->tick < L->tick0 || f->tick > L->tick1)
		return;
	lc->win_records++;
	/* One sample per pose (a record reflecting two poses counts both, the older with its
	 * longer wait), the time from its publication to the first record carrying it. */
	if (f->first_new_seq)
		for (uint32_t s = f->first_new_seq;; s++) {
			hist_add(&L->lat, ptc_pose_latency_us(c, f, s));
			if (s == f->last_seq)
				break;
		}
	hist_add(&L->deliv, f->delivery_us);
}

static void on_error(ptc_conn_t *c, const ptc_error_t *e, void *user)
{
	(void)c;
	char kind[48];
	snprintf(kind, sizeof kind, "server:%s", e->name);
	load_error(((lconn_t *)user)->L, kind, 1);
}

/* Publisher j serves room j % R (so that its connection can go to the node that owns the
 * room); each room's instances are dealt round-robin to its publishers. Fills pub_start
 * (P + 1) and pub_inst (the instances of publisher j are pub_inst[pub_start[j] ..
 * pub_start[j + 1])). 0, or -1 printed (a publisher past 64 instances after --reuse). */
static int assign_publishers(load_t *L)
{
	long P = L->publishers, R = L->rooms;
	L->pub_start = calloc((size_t)P + 1, sizeof *L->pub_start);
	L->pub_inst = calloc((size_t)L->ninst + 1, sizeof *L->pub_inst);
	long *pub_of = calloc((size_t)L->ninst + 1, sizeof *pub_of);
	long *next = calloc((size_t)(P > R ? P : R) + 1, sizeof *next);
	if (!L->pub_start || !L->pub_inst || !pub_of || !next) {
		fprintf(stderr, "ponytail load: out of memory\n");
		free(pub_of);
		free(next);
		return -1;
	}
	int rc = 0;
	for (long k = 0; k < L->ninst; k++) { /* next[r]: instances of room r so far */
		long r = L->inst_room[k], npub = P / R + (r < P % R);
		pub_of[k] = r + R * (next[r]++ % npub);
		L->pub_start[pub_of[k] + 1]++;
	}
	for (long j = 0; j < P; j++) {
		if (L->pub_start[j + 1] > 64 && rc == 0) {
			fprintf(
			    stderr,
			    "ponytail load: publisher %ld would serve %ld instances (at most 64): "
			    "give more --publishers\n",
			    j, L->pub_start[j + 1]);
			rc = -1;
		}
		L->pub_start[j + 1] += L->pub_start[j];
		next[j] = L->pub_start[j]; /* now: where publisher j's next instance goes */
	}
	for (long k = 0; rc == 0 && k < L->ninst; k++)
		L->pub_inst[next[pub_of[k]]++] = k;
	free(pub_of);
	free(next);
	return rc;
}

static int open_conn(load_t *L, long i)
{
	lconn_t *lc = &L->conns[i];
	char err[256], name[64];
	ptc_conn_params_t p = ptc_conn_params_default();
	snprintf(name, sizeof name, "ponytail load %s %ld", lc->kind == LOAD_PUB ? "pub" : "sub",
	         (long)lc->index);
	char url[700], room[128];
	snprintf(room, sizeof room, "%s-%d", L->prefix, lc->room);
	remote_url_with_room(L->ws, room, url, sizeof url); /* a room-hashing proxy routes it */
	p.url = url;
	p.client_name = name;
	p.decode = L->decode;
	p.reconnect = 0; /* a lost connection is a result to report, not to hide */
	p.ping_interval_ms = 0;
	p.cb.on_state = on_state;
	p.cb.on_error = on_error;
	if (lc->kind == LOAD_SUB) {
		p.cb.on_batch = on_batch;
		p.cb.on_frame = on_frame;
	}
	p.user = lc;
	lc->c = ptc_connect(L->ctx, &p, err, sizeof err);
	if (!lc->c) {
		fprintf(stderr, "ponytail load: %s\n", err);
		return -1;
	}
	if (lc->kind == LOAD_SUB) {
		ptc_subscribe(lc->c, room, NULL, 0);
	} else {
		for (long q = L->pub_start[lc->index]; q < L->pub_start[lc->index + 1]; q++)
			ptc_authorize(lc->c, L->ids[L->pub_inst[q]], L->tokens[L->pub_inst[q]]);
	}
	return 0;
}

/* Publisher i publishes all its instances at t_start + (n + i / P) / rate: the
 * publishers are spread over the period like independent clients, so input-to-frame
 * latency samples every phase against the server's tick instead of one lucky or unlucky
 * phase. *slot counts publications (slot % P is the publisher); returns the next due
 * time. Behind by more than a period (a stall), it skips ahead rather than burst. */
static int64_t publish_due(load_t *L, int64_t now, int64_t t_start, uint64_t *slot)
{
	if (L->publishers == 0)
		return INT64_MAX;
	double step = 1e6 / L->rate / (double)L->publishers;
	uint64_t behind = (uint64_t)((double)(now - t_start) / step);
	if (behind > *slot + (uint64_t)L->publishers)
		*slot = behind;
	for (;; ++*slot) {
		int64_t due = t_start + (int64_t)((double)*slot * step);
		if (due > now)
			return due;
		lconn_t *lc = &L->conns[*slot % (uint64_t)L->publishers];
		if (!lc->c || ptc_conn_state(lc->c) != PTC_READY)
			continue;
		double t = (double)(now - t_start) * 1e-6;
		for (long q = L->pub_start[lc->index]; q < L->pub_start[lc->index + 1]; q++) {
			long k = L->pub_inst[q];
			/* Each instance its own phase, so the room does not move as one. */
			pt_pose pp = pt_motion_pose(&L->motion, t + 0.137 * (double)k);
			ptc_pose_t pose = {.p = {pp.p.x, pp.p.y, pp.p.z},
			                   .q = {pp.q.x, pp.q.y, pp.q.z, pp.q.w}};
			if (ptc_publish(lc->c, L->ids[k], &pose, NULL) == PTC_EFULL)
				L->publish_dropped++;
		}
	}
}

static double cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

typedef struct progress_t {
	int64_t at;
	uint64_t batches, records, in, out;
} progress_t;

static void progress(load_t *L, progress_t *pg, int64_t now, int64_t t_start, const char *phase)
{
	uint64_t batches = 0, records = 0, in = 0, out = 0;
	long ready = 0, failed = 0;
	for (long i = 0; i < L->opened; i++) {
		ptc_stats_t st;
		ptc_conn_stats(L->conns[i].c, &st);
		batches += st.batches;
		records += st.records;
		in += st.bytes_in;
		out += st.bytes_out;
		ready += ptc_conn_state(L->conns[i].c) == PTC_READY;
		failed += L->conns[i].failed || L->conns[i].lost;
	}
	double dt = (double)(now - pg->at) * 1e-6;
	uint64_t errs = 0;
	for (int i = 0; i < L->nerr; i++)
		errs += L->err_count[i];
	hist_t *h = &L->lat;
	fprintf(
	    stderr,
	    "[%5.1fs] %-7s conns %ld/%ld ready, %ld failed; %.0f frames/s, %.0f records/s; latency",
	    (double)(now - t_start) * 1e-6, phase, ready, L->nconns, failed,
	    (double)(batches - pg->batches) / dt, (double)(records - pg->records) / dt);
	if (L->measuring && h->n)
		fprintf(stderr, " p50 %.1f ms p99 %.1f ms", hist_pct(h, 50) / 1000,
		        hist_pct(h, 99) / 1000);
	else
		fprintf(stderr, " -");
	fprintf(stderr, "; in %.1f kB/s, out %.1f kB/s; errors %llu\n",
	        (double)(in - pg->in) / dt / 1000, (double)(out - pg->out) / dt / 1000,
	        (unsigned long long)errs);
	pg->at = now;
	pg->batches = batches;
	pg->records = records;
	pg->in = in;
	pg->out = out;
}

int load_run(load_t *L)
{
	char err[256];
	if (remote_ws_url(&L->r, L->ws, sizeof L->ws, &L->tick_hz) != 0)
		return CLI_EXIT_FAIL;
	if (L->tick_hz < 1)
		L->tick_hz = 60;
	if (!L->rate_given)
		L->rate = L->tick_hz > 240 ? 240 : L->tick_hz;
	if (L->reuse)
		fprintf(stderr, "ponytail load: finding the instances of %ld room%s (%s-*)...\n",
		        L->rooms, L->rooms == 1 ? "" : "s", L->prefix);
	else
		fprintf(stderr, "ponytail load: creating %ld instances in %ld room%s (%s-*)...\n",
		        L->rooms * L->per_room, L->rooms, L->rooms == 1 ? "" : "s", L->prefix);
	if ((L->reuse ? load_list_instances(L) : load_create_instances(L)) != 0)
		return CLI_EXIT_FAIL;
	if (L->reuse)
		L->per_room = (L->ninst + L->rooms - 1) / L->rooms;
	if (L->publishers > 0 && assign_publishers(L) != 0)
		return CLI_EXIT_FAIL;

	/* Many sockets in one process: lift the soft descriptor limit to the hard one. */
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 &&
	    (rlim_t)(L->publishers + L->subscribers + 64) > rl.rlim_cur)
		fprintf(stderr,
		        "ponytail load: warning: %ld connections but only %llu file descriptors "
		        "(ulimit -n)\n",
		        L->publishers + L->subscribers, (unsigned long long)rl.rlim_cur);

	L->ctx = remote_ctx_create(&L->r, err, sizeof err);
	L->nconns = L->publishers + L->subscribers;
	L->conns = calloc((size_t)L->nconns, sizeof *L->conns);
	if (!L->ctx || !L->conns) {
		fprintf(stderr, "ponytail load: %s\n", L->ctx ? "out of memory" : err);
		return CLI_EXIT_FAIL;
	}
	for (long i = 0; i < L->nconns; i++) {
		lconn_t *lc = &L->conns[i];
		lc->L = L;
		lc->kind = i < L->publishers ? LOAD_PUB : LOAD_SUB;
		lc->index = (int)(lc->kind == LOAD_PUB ? i : i - L->publishers);
		lc->room = (int)(lc->index % L->rooms);
	}
	L->tick0 = UINT64_MAX;
	L->tick1 = UINT64_MAX;

	int64_t t_start = ptc_now_us(), ramp_us = (int64_t)(L->ramp * 1e6);
	int64_t next_pub = t_start, next_progress = t_start + 1000000;
	uint64_t slot = 0;
	int64_t win_start = 0, win_end = 0, settle_deadline = t_start + ramp_us + 10000000;
	double cpu0 = 0;
	progress_t pg = {.at = t_start};
	enum { RAMP, MEASURE, GRACE } phase = RAMP;
	int64_t grace_end = 0;
	while (load_stop < 2) {
		int64_t now = ptc_now_us();
		/* Open what the ramp schedules by now (publishers first). */
		while (L->opened < L->nconns &&
		       (ramp_us == 0 || now - t_start >= ramp_us * L->opened / L->nconns)) {
			if (open_conn(L, L->opened) != 0)
				return CLI_EXIT_FAIL;
			L->opened++;
		}
		if (now >= next_pub)
			next_pub = publish_due(L, now, t_start, &slot);
		if (phase == RAMP && L->opened == L->nconns && now - t_start >= ramp_us) {
			long pending = 0;
			for (long i = 0; i < L->nconns; i++)
				pending += !L->conns[i].ready_once && !L->conns[i].failed;
			/* Half a second after everyone is connected (or failed) the keyframes are
			 * through and the window opens. */
			if (!win_start && (pending == 0 || now > settle_deadline))
				win_start = now + 500000;
			if (win_start && now >= win_start) {
				load_scrape(L, &L->m0);
				for (long i = 0; i < L->nconns; i++) {
					ptc_stats_t st;
					ptc_conn_stats(L->conns[i].c, &st);
					L->conns[i].base_in = st.bytes_in;
					L->conns[i].base_out = st.bytes_out;
				}
				hist_clear(&L->lat);
				hist_clear(&L->deliv);
				L->tick0 = L->max_tick + 1;
				L->measuring = 1;
				cpu0 = cpu_seconds();
				win_start = ptc_now_us();
				win_end = win_start + (int64_t)(L->duration * 1e6);
				phase = MEASURE;
			}
		}
		if (phase == MEASURE && (now >= win_end || load_stop)) {
			L->tick1 = L->max_tick;
			L->win_s = (double)(now - win_start) * 1e-6;
			L->cpu_s = cpu_seconds() - cpu0;
			grace_end = now + 250000; /* batches of ticks <= tick1 still on their way */
			phase = GRACE;
		}
		if (phase == GRACE && now >= grace_end)
			break;
		if (phase == RAMP && load_stop)
			break;
		if (now >= next_progress) {
			progress(L, &pg, now, t_start, phase == RAMP ? "ramp" : "measure");
			next_progress += 1000000;
		}
		int64_t wake = next_pub < next_progress ? next_pub : next_progress;
		if (L->opened < L->nconns)
			wake = now + 1000;
		int ms = (int)((wake - ptc_now_us()) / 1000);
		ptc_service(L->ctx, ms < 1 ? 1 : ms > 10 ? 10 : ms);
	}
	if (phase != RAMP)
		load_scrape(L, &L->m1);
	return phase == RAMP ? CLI_EXIT_FAIL : CLI_EXIT_OK;
}

void load_shutdown_conns(load_t *L)
{
	if (!L->ctx)
		return;
	for (long i = 0; i < L->opened; i++)
		ptc_close(L->conns[i].c);
	/* Let the close frames go out before the context goes. */
	int64_t until = ptc_now_us() + 300000;
	while (ptc_now_us() < until)
		ptc_service(L->ctx, 20);
	ptc_ctx_destroy(L->ctx);
	L->ctx = NULL;
}
