/* `ponytail watch`: subscribes to instances or a room and prints (or records) every frame
 * as the frame JSON (server/README.md "The frame JSON"), one line each, with a live status
 * line on stderr (fps, delivery latency, kB/s) when stderr is a terminal. */
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "hist.h"
#include "ponytail_client.h"
#include "remote.h"
#include "sim_output.h"

static const char usage_text[] =
    "usage: ponytail watch (ID... | --room R) [--record FILE.jsonl] [--count N]\n"
    "                      [--duration S] [--server URL] [--ws URL]\n"
    "\n"
    "Subscribes to instances (and/or a whole room, present and future instances) over\n"
    "WebSocket and writes every frame as one JSON line:\n"
    "  {\"id\", \"tick\", \"t\", \"last_seq\", \"head\": {\"p\", \"q\"}, \"strands\": "
    "[[[x,y,z],...],...]}\n"
    "with world positions in metres, strands[s][0] the anchor (the frame JSON of\n"
    "server/README.md, plus the instance id and the last applied pose seq). Frames\n"
    "decoded from a keyframe carry \"state_hash\" after \"last_seq\" (16 hex digits,\n"
    "the REST frame's; protocol 1.4 daemons send it, once a second by default). On a\n"
    "terminal, stderr shows a live line: frames per second, delivery latency (tick\n"
    "deadline to receipt), kB/s.\n"
    "\n"
    "--room R         every instance of room R (and, behind docker/'s room-hashing proxy,\n"
    "                 the node to ask: give the instances' room with IDs there)\n"
    "--record FILE    write the frames to FILE instead of stdout\n"
    "--count N        stop after N frames, [1, 1000000000]\n"
    "--duration S     stop after S seconds, [0.001, 1000000]\n"
    "%s"
    "\n"
    "Exit status: 0 ok (also on Ctrl-C), 1 unknown instance or unreachable server, 2 bad\n"
    "arguments.\n";

typedef struct watch_t {
	remote_t r;
	uint64_t ids[PTP_MAX_IDS];
	int nids;
	const char *room, *record;
	long count;
	double duration;
	FILE *out;
	long frames, undecoded;
	int fatal;
	char fatal_msg[1024];
	/* the live line: counts over the current second */
	long sec_batches;
	hist_t sec_delivery;
} watch_t;

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void write_frame(FILE *out, const ptc_frame_t *f)
{
	float q[4] = {(float)f->head_q[0], (float)f->head_q[1], (float)f->head_q[2],
	              (float)f->head_q[3]};
	fprintf(out, "{\"id\":%llu,\"tick\":%llu,\"t\":%.9g,\"last_seq\":%u,",
	        (unsigned long long)f->id, (unsigned long long)f->tick, f->t, f->last_seq);
	if (f->has_hash) /* keyframes, from protocol 1.4 on */
		fprintf(out, "\"state_hash\":\"%016" PRIx64 "\",", f->state_hash);
	fputs("\"head\":{\"p\":", out);
	sim_put_vec(out, f->head_p, 3);
	fputs(",\"q\":", out);
	sim_put_vec(out, q, 4);
	fputs("},\"strands\":[", out);
	const float *p = f->xyz;
	for (int s = 0; s < f->shape->strand_count; s++) {
		fputs(s ? ",[" : "[", out);
		for (int i = 0; i < f->shape->strands[s].points; i++, p += 3) {
			if (i)
				fputc(',', out);
			sim_put_vec(out, p, 3);
		}
		fputc(']', out);
	}
	fputs("]}\n", out);
}

static void on_batch(ptc_conn_t *c, uint64_t tick, int64_t server_us, int records, void *user)
{
	(void)c, (void)tick, (void)server_us, (void)records;
	((watch_t *)user)->sec_batches++;
}

static void on_frame(ptc_conn_t *c, const ptc_frame_t *f, void *user)
{
	(void)c;
	watch_t *w = user;
	if (w->count && w->frames >= w->count)
		return;
	if (!f->xyz) {
		w->undecoded++; /* a keyframe is on its way */
		return;
	}
	hist_add(&w->sec_delivery, f->delivery_us);
	write_frame(w->out, f);
	w->frames++;
}

static void on_error(ptc_conn_t *c, const ptc_error_t *e, void *user)
{
	(void)c;
	watch_t *w = user;
	if (e->code == PTP_CODE_NOT_FOUND || e->code == PTP_CODE_LIMIT) {
		w->fatal = 1;
		snprintf(w->fatal_msg, sizeof w->fatal_msg, "%s (%s)", e->text, e->name);
		return;
	}
	fprintf(stderr, "ponytail watch: server error %s: %s\n", e->name, e->text);
}

static int parse_args(watch_t *w, int argc, char **argv)
{
	const char *v;
	int k;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((k = remote_flag(&w->r, argc, argv, &i, 0)) != 0) {
			if (k < 0)
				return -1;
		} else if ((k = cli_flag("watch", "--room", argc, argv, &i, &w->room)) != 0) {
			if (k < 0 || remote_check_room("watch", "--room", w->room) != 0)
				return -1;
			w->r.room = w->room; /* also routes through a room-hashing proxy */
		} else if ((k = cli_flag("watch", "--record", argc, argv, &i, &w->record)) != 0) {
			if (k < 0)
				return -1;
		} else if ((k = cli_flag("watch", "--count", argc, argv, &i, &v)) != 0) {
			if (k < 0 ||
			    cli_parse_int("watch", "--count", v, 1, 1000000000L, &w->count) != 0)
				return -1;
		} else if ((k = cli_flag("watch", "--duration", argc, argv, &i, &v)) != 0) {
			if (k < 0 ||
			    cli_parse_real("watch", "--duration", v, 1e-3, 1e6, &w->duration) != 0)
				return -1;
		} else if (a[0] == '-' && a[1] != '\0') {
			fprintf(stderr,
			        "ponytail watch: unknown flag '%s' (see ponytail watch --help)\n",
			        a);
			return -1;
		} else {
			unsigned long long id;
			if (remote_parse_id("watch", a, &id) != 0)
				return -1;
			if (w->nids == PTP_MAX_IDS) {
				fprintf(stderr, "ponytail watch: at most %d instance ids\n",
				        PTP_MAX_IDS);
				return -1;
			}
			w->ids[w->nids++] = id;
		}
	}
	if (w->nids == 0 && !w->room) {
		fprintf(stderr, "ponytail watch: give instance IDs or --room R\n");
		return -1;
	}
	return 0;
}

static int run(watch_t *w)
{
	char ws[512], err[256];
	if (remote_ws_url(&w->r, ws, sizeof ws, NULL) != 0)
		return CLI_EXIT_FAIL;
	w->out = stdout;
	if (w->record && !(w->out = fopen(w->record, "w"))) {
		fprintf(stderr, "ponytail watch: --record: cannot write %s\n", w->record);
		return CLI_EXIT_FAIL;
	}
	ptc_ctx_t *ctx = remote_ctx_create(&w->r, err, sizeof err);
	ptc_conn_params_t p = ptc_conn_params_default();
	p.url = ws;
	p.client_name = "ponytail watch";
	p.cb.on_batch = on_batch;
	p.cb.on_frame = on_frame;
	p.cb.on_error = on_error;
	p.user = w;
	ptc_conn_t *c = ctx ? ptc_connect(ctx, &p, err, sizeof err) : NULL;
	if (!c) {
		fprintf(stderr, "ponytail watch: %s: %s\n", ws, err);
		if (w->record)
			fclose(w->out);
		ptc_ctx_destroy(ctx);
		return CLI_EXIT_FAIL;
	}
	ptc_subscribe(c, w->room, w->ids, w->nids);

	int tty = isatty(2), ready = 0;
	int64_t t_start = ptc_now_us(), t0 = 0, sec_t = t_start;
	uint64_t sec_bytes = 0;
	ptc_stats_t st;
	while (!stop && !w->fatal && !(w->count && w->frames >= w->count) && !ferror(w->out)) {
		int64_t now = ptc_now_us();
		ptc_state_t state = ptc_conn_state(c);
		if (state == PTC_READY && !ready) {
			ready = 1;
			t0 = now;
		}
		if (!ready &&
		    (state == PTC_CLOSED || now - t_start > (int64_t)(w->r.timeout_s * 1e6))) {
			w->fatal = 1;
			snprintf(w->fatal_msg, sizeof w->fatal_msg, "cannot connect to %s: %s%s", ws,
			         ptc_conn_last_error(c)[0] ? ptc_conn_last_error(c) : "timed out",
			         remote_tls_hint(&w->r, ptc_conn_last_error(c)));
			break;
		}
		if (ready && w->duration && now - t0 >= (int64_t)(w->duration * 1e6))
			break;
		if (now - sec_t >= 1000000) {
			ptc_conn_stats(c, &st);
			double dt = (double)(now - sec_t) * 1e-6;
			if (tty) {
				double lat = hist_pct(&w->sec_delivery, 50);
				fprintf(stderr,
				        "\r\033[Kwatch: %.1f fps, latency %s%.1f ms, %.1f kB/s, "
				        "%ld frames, %s",
				        w->sec_batches / dt, lat < 0 ? "-" : "",
				        lat < 0 ? 0 : lat / 1000,
				        (double)(st.bytes_in - sec_bytes) / dt / 1000, w->frames,
				        ptc_state_name(state));
			}
			sec_bytes = st.bytes_in;
			sec_t = now;
			w->sec_batches = 0;
			hist_clear(&w->sec_delivery);
		}
		ptc_service(ctx, 50);
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	fflush(w->out);
	int werr = ferror(w->out);
	if (w->record && fclose(w->out) != 0)
		werr = 1;
	ptc_conn_stats(c, &st);
	ptc_close(c);
	ptc_ctx_destroy(ctx);
	if (w->fatal) {
		fprintf(stderr, "ponytail watch: %s\n", w->fatal_msg);
		return CLI_EXIT_FAIL;
	}
	if (werr) {
		fprintf(stderr, "ponytail watch: write error on %s\n",
		        w->record ? w->record : "stdout");
		return CLI_EXIT_FAIL;
	}
	fprintf(stderr, "watch: %ld frames in %llu batches, %llu ticks skipped, %.1f kB received\n",
	        w->frames, (unsigned long long)st.batches, (unsigned long long)st.ticks_skipped,
	        (double)st.bytes_in / 1000);
	return CLI_EXIT_OK;
}

int cmd_watch(int argc, char **argv)
{
	if (cli_wants_help(argc, argv)) {
		printf(usage_text, remote_flags_help);
		return CLI_EXIT_OK;
	}
	watch_t *w = calloc(1, sizeof *w);
	if (!w) {
		fprintf(stderr, "ponytail watch: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	remote_init(&w->r, "watch");
	int rc = CLI_EXIT_USAGE;
	if (parse_args(w, argc, argv) == 0) {
		cli_catch_stop_signals(on_signal);
		rc = run(w);
	}
	free(w);
	remote_global_cleanup();
	return rc;
}
