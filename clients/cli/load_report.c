/* `ponytail load`: the daemon's /metrics and the final report (text and JSON). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"

void load_error(load_t *L, const char *kind, uint64_t n)
{
	for (int i = 0; i < L->nerr; i++)
		if (strcmp(L->err_kind[i], kind) == 0) {
			L->err_count[i] += n;
			return;
		}
	int i = L->nerr < LOAD_MAX_ERR_KINDS ? L->nerr++ : LOAD_MAX_ERR_KINDS - 1;
	if (i == LOAD_MAX_ERR_KINDS - 1)
		kind = "other";
	snprintf(L->err_kind[i], sizeof L->err_kind[i], "%s", kind);
	L->err_count[i] += n;
}

/* The value of the line `name` (exactly, labels included) in Prometheus text. */
static int metric(const char *text, const char *name, double *out)
{
	size_t n = strlen(name);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, name, n) == 0 && p[n] == ' ') {
			*out = strtod(p + n + 1, NULL);
			return 0;
		}
	return -1;
}

void load_scrape(load_t *L, load_metrics_t *m)
{
	memset(m, 0, sizeof *m);
	http_resp_t h;
	remote_t quiet = L->r;
	if (remote_call(&quiet, "GET", "/metrics", NULL, NULL, 0, &h) != 0)
		return;
	if (h.status == 200) {
		const char *key = "ponytail_tick_duration_seconds_bucket{le=\"";
		size_t kn = strlen(key);
		for (const char *p = h.body; p && *p && m->ntick < 32;
		     p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
			if (strncmp(p, key, kn) != 0)
				continue;
			const char *q = p + kn;
			m->tick_le[m->ntick] = strncmp(q, "+Inf", 4) == 0 ? 1e30 : strtod(q, NULL);
			const char *sp = strchr(q, ' ');
			if (!sp)
				break;
			m->tick_cum[m->ntick++] = strtod(sp + 1, NULL);
		}
		m->ok = m->ntick > 0;
		metric(h.body, "ponytail_tick_overruns_total", &m->overruns);
		metric(h.body, "ponytail_ws_frames_skipped_total", &m->skipped);
		metric(h.body, "ponytail_ticks_total", &m->ticks);
		m->recent_p99 = -1;
		metric(h.body, "ponytail_tick_work_recent_seconds{quantile=\"0.99\"}",
		       &m->recent_p99);
		metric(h.body, "ponytail_ws_fanout_seconds_sum", &m->fanout_sum);
		metric(h.body, "ponytail_ws_fanout_seconds_count", &m->fanout_count);
	}
	http_free(&h);
}

/* The daemon's tick p99 over the window: the upper bound of the histogram bucket holding
 * the 99th percentile of the ticks between the two scrapes, in ms; -1 unknown. */
static double tick_p99_ms(const load_metrics_t *a, const load_metrics_t *b)
{
	if (!a->ok || !b->ok || a->ntick != b->ntick)
		return -1;
	double total = b->tick_cum[b->ntick - 1] - a->tick_cum[a->ntick - 1];
	if (total <= 0)
		return -1;
	for (int i = 0; i < b->ntick; i++)
		if (b->tick_cum[i] - a->tick_cum[i] >= 0.99 * total)
			return b->tick_le[i] >= 1e30 ? 1e30 : b->tick_le[i] * 1000;
	return -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int load_report(load_t *L)
{
	long made = 0, failed = 0, lost = 0, nsub = 0;
	uint64_t in = 0, out = 0, records = 0, gaps = 0, decode_errors = 0;
	uint64_t *got = calloc((size_t)L->subscribers + 1, sizeof *got);
	for (long i = 0; i < L->nconns; i++) {
		lconn_t *lc = &L->conns[i];
		made += lc->ready_once;
		failed += !lc->ready_once;
		lost += lc->lost;
		ptc_stats_t st;
		memset(&st, 0, sizeof st);
		if (lc->c)
			ptc_conn_stats(lc->c, &st);
		in += st.bytes_in - lc->base_in;
		decode_errors += st.decode_errors;
		out += st.bytes_out - lc->base_out;
		if (lc->kind == LOAD_SUB) {
			if (got)
				got[nsub] = lc->win_ticks;
			nsub++;
			records += lc->win_records;
		}
	}
	if (decode_errors) /* messages or records the library could not decode */
		load_error(L, "decode", decode_errors);
	uint64_t expected =
	    L->tick1 >= L->tick0 && L->tick0 != UINT64_MAX ? L->tick1 - L->tick0 + 1 : 0;
	for (long i = 0; got && i < nsub; i++)
		gaps += expected > got[i] ? expected - got[i] : 0;
	uint64_t p50 = 0, p1 = 0, mn = 0;
	double mean = 0;
	if (got && nsub > 0) {
		qsort(got, (size_t)nsub, sizeof *got, cmp_u64);
		p50 = got[(nsub - 1) / 2];
		p1 = got[(long)((double)(nsub - 1) * 0.01)];
		mn = got[0];
		for (long i = 0; i < nsub; i++)
			mean += (double)got[i];
		mean /= (double)nsub;
	}
	free(got);
	double win = L->win_s > 0 ? L->win_s : 1;
	double lp50 = hist_pct(&L->lat, 50) / 1000, lp99 = hist_pct(&L->lat, 99) / 1000;
	double lmax = L->lat.n ? (double)L->lat.max_us / 1000 : -1;
	double dp50 = hist_pct(&L->deliv, 50) / 1000, dp99 = hist_pct(&L->deliv, 99) / 1000;
	double tick_ms = 1000.0 / (L->tick_hz > 0 ? L->tick_hz : 60);
	double tp99 = tick_p99_ms(&L->m0, &L->m1);
	double srv_skipped = L->m0.ok && L->m1.ok ? L->m1.skipped - L->m0.skipped : -1;
	double overruns = L->m0.ok && L->m1.ok ? L->m1.overruns - L->m0.overruns : -1;
	double recent_p99 = L->m1.ok && L->m1.recent_p99 >= 0 ? L->m1.recent_p99 * 1000 : -1;
	double fan_n = L->m1.fanout_count - L->m0.fanout_count;
	double fanout = L->m0.ok && L->m1.ok && fan_n > 0
	                    ? (L->m1.fanout_sum - L->m0.fanout_sum) / fan_n * 1000
	                    : -1;
	uint64_t rec_expected = 0;
	for (long i = 0; i < L->nconns; i++)
		if (L->conns[i].kind == LOAD_SUB)
			rec_expected += expected * (uint64_t)L->per_room;
	int frames_ok = nsub == 0 || (expected > 0 && (double)p1 >= 0.99 * (double)expected);
	int lat_ok = L->lat.n > 0 && lp99 <= 2 * tick_ms;
	int failed_ok = failed == 0 && lost == 0;

	printf("ponytail load: %ld room%s x %ld instances, %ld publishers at %.0f Hz, %ld "
	       "subscribers, "
	       "%.1f s measured (%d Hz ticks)\n",
	       L->rooms, L->rooms == 1 ? "" : "s", L->per_room, L->publishers, L->rate,
	       L->subscribers, L->win_s, L->tick_hz);
	printf("  connections   %ld made, %ld failed, %ld lost\n", made, failed, lost);
	if (failed && L->first_connect_error[0] &&
	    strncmp(L->first_connect_error, "TLS: ", 5) == 0)
		printf("                first failure: %s\n                %s\n",
		       L->first_connect_error, remote_tls_hint(&L->r, L->first_connect_error));
	else if (failed && L->first_connect_error[0])
		printf("                first failure: %s\n                (ponytaild refuses "
		       "connections "
		       "past --max-conns-per-ip, default 64, and --max-ws-conns)\n",
		       L->first_connect_error);
	if (nsub)
		printf("  frames/sub    %llu expected; received p50 %llu, p1 %llu, min %llu, mean "
		       "%.1f (p1 "
		       "%.2f %%)\n",
		       (unsigned long long)expected, (unsigned long long)p50,
		       (unsigned long long)p1, (unsigned long long)mn, mean,
		       expected ? 100.0 * (double)p1 / (double)expected : 0);
	if (nsub)
		printf("  records       %llu received of %llu expected\n",
		       (unsigned long long)records, (unsigned long long)rec_expected);
	if (L->lat.n)
		printf("  latency       input-to-frame p50 %.2f ms, p99 %.2f ms, max %.2f ms (%llu "
		       "samples; "
		       "a tick is %.2f ms)\n",
		       lp50, lp99, lmax, (unsigned long long)L->lat.n, tick_ms);
	else
		printf("  latency       no samples (no publishers, or no frame echoed a pose)\n");
	if (L->deliv.n)
		printf("  delivery      tick deadline to receipt p50 %.2f ms, p99 %.2f ms (%llu "
		       "records; clock offset from ping/pong)\n",
		       dp50, dp99, (unsigned long long)L->deliv.n);
	printf("  traffic       in %.1f kB/s, out %.1f kB/s (protocol bytes)\n",
	       (double)in / win / 1000, (double)out / win / 1000);
	printf("  skipped       %llu frames missed by subscribers", (unsigned long long)gaps);
	if (srv_skipped >= 0)
		printf(", %.0f skipped by the daemon (slow connections)", srv_skipped);
	printf("\n  errors       ");
	if (L->nerr == 0 && !L->publish_dropped)
		printf(" none");
	for (int i = 0; i < L->nerr; i++)
		printf(" %s %llu%s", L->err_kind[i], (unsigned long long)L->err_count[i],
		       i + 1 < L->nerr || L->publish_dropped ? "," : "");
	if (L->publish_dropped)
		printf(" poses not sent (queue full) %llu", (unsigned long long)L->publish_dropped);
	printf("\n  daemon        tick p99 ");
	if (recent_p99 >= 0)
		printf("%.3g ms (its newest ticks), ", recent_p99);
	if (tp99 < 0)
		printf("unknown (no /metrics)");
	else if (tp99 >= 1e30)
		printf("> 100 ms");
	else
		printf("<= %.3g ms (histogram over the window)", tp99);
	if (overruns >= 0)
		printf(", %.0f overruns", overruns);
	if (fanout >= 0)
		printf(", fan-out %.2f ms mean (tick deadline to last batch written)", fanout);
	printf("\n  generator     %.0f %% of one core\n", 100 * L->cpu_s / win);
	printf("  verdict       frames >= 99 %% at p1: %s; latency p99 <= 2 ticks: %s; no failed "
	       "connections: %s\n",
	       frames_ok ? "yes" : "no", lat_ok ? "yes" : "no", failed_ok ? "yes" : "no");

	if (!L->json_path)
		return 0;
	json_t *errs = json_object();
	for (int i = 0; i < L->nerr; i++)
		json_object_set_new(errs, L->err_kind[i],
		                    json_integer((json_int_t)L->err_count[i]));
	if (L->publish_dropped)
		json_object_set_new(errs, "publish_dropped",
		                    json_integer((json_int_t)L->publish_dropped));
	json_t *j = json_pack("{s:i,s:i,s:i,s:i,s:i,s:f,s:f,s:i,s:f}", "rooms", (int)L->rooms,
	                      "per_room", (int)L->per_room, "instances", (int)L->ninst,
	                      "publishers", (int)L->publishers, "subscribers", (int)L->subscribers,
	                      "duration_s", L->win_s, "rate_hz", L->rate, "tick_hz", L->tick_hz,
	                      "generator_cpu", L->cpu_s / win);
	json_object_set_new(j, "connections",
	                    json_pack("{s:i,s:i,s:i}", "made", (int)made, "failed", (int)failed,
	                              "lost", (int)lost));
	json_object_set_new(j, "frames",
	                    json_pack("{s:I,s:I,s:I,s:I,s:f}", "expected", (json_int_t)expected,
	                              "received_p50", (json_int_t)p50, "received_p1",
	                              (json_int_t)p1, "received_min", (json_int_t)mn,
	                              "received_mean", mean));
	json_object_set_new(j, "records",
	                    json_pack("{s:I,s:I}", "expected", (json_int_t)rec_expected, "received",
	                              (json_int_t)records));
	json_object_set_new(j, "latency_ms",
	                    json_pack("{s:f,s:f,s:f,s:I}", "p50", lp50, "p99", lp99, "max", lmax,
	                              "samples", (json_int_t)L->lat.n));
	json_object_set_new(j, "delivery_ms",
	                    json_pack("{s:f,s:f,s:I}", "p50", dp50, "p99", dp99, "records",
	                              (json_int_t)L->deliv.n));
	json_object_set_new(
	    j, "bytes_per_s",
	    json_pack("{s:f,s:f}", "in", (double)in / win, "out", (double)out / win));
	json_object_set_new(
	    j, "frames_skipped",
	    json_pack("{s:I,s:f}", "subscribers", (json_int_t)gaps, "daemon", srv_skipped));
	json_object_set_new(j, "errors", errs);
	json_object_set_new(j, "daemon",
	                    json_pack("{s:f,s:f,s:f,s:f}", "tick_p99_ms", tp99 >= 1e30 ? 1e9 : tp99,
	                              "tick_recent_p99_ms", recent_p99, "tick_overruns", overruns,
	                              "fanout_mean_ms", fanout));
	json_object_set_new(j, "pass",
	                    json_pack("{s:b,s:b,s:b}", "frames_99", frames_ok, "latency_2_ticks",
	                              lat_ok, "connections", failed_ok));
	FILE *f = j ? fopen(L->json_path, "w") : NULL;
	int rc = f && json_dumpf(j, f, JSON_INDENT(1) | JSON_REAL_PRECISION(6)) == 0 ? 0 : -1;
	if (f) {
		fputc('\n', f);
		if (fclose(f) != 0)
			rc = -1;
	}
	json_decref(j);
	if (rc != 0)
		fprintf(stderr, "ponytail load: --json: cannot write %s\n", L->json_path);
	return rc;
}
