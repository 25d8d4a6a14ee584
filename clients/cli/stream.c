/* `ponytail stream`: publishes head poses for one instance over WebSocket -- a built-in
 * motion, a JSONL pose file or stdin -- at a given rate, and reports what the server
 * applied (the echoed sequence numbers) with input-to-frame latency. The arguments and
 * the pose file / stdin readers are in stream_input.c; the state they share in stream.h. */
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "stream.h"

static const char usage_text[] =
    "usage: ponytail stream ID (--motion NAME [--amplitude A] [--period S] | --poses FILE.jsonl\n"
    "                       [--loop] | --stdin) [--rate HZ] [--count N] [--duration S]\n"
    "                       --token T [--room R] [--server URL] [--ws URL] [--json]\n"
    "\n"
    "Publishes head poses for instance ID over WebSocket, then reports which pose the\n"
    "server applied last and the input-to-frame latency (it subscribes to ID to see).\n"
    "\n"
    "--motion NAME    still, shake, nod, jump, circle, stress or jog, sampled at --rate\n"
    "                 (jog: running in place, see ponytail sim --help)\n"
    "--amplitude A    shake/nod: degrees [0, 180]; jump: peak g [0, 50]; circle: radius in\n"
    "                 m [0, 10]; jog: bob in m [0, 0.2]. Default 45, 30, 2.5, 0.3, 0.03\n"
    "--period S       seconds per cycle, [0.01, 3600]; jog: seconds of running. Default\n"
    "                 0.6, 0.4, 0.5, 2; jog 5\n"
    "--poses FILE     JSON lines {\"t\": s, \"p\": [x,y,z], \"q\": [x,y,z,w]} (\"tick\": k for\n"
    "                 t = k / tick_hz; optional \"v\", \"w\"), sent at their t, or at --rate\n"
    "                 when given (or when a line has no t)\n"
    "--loop           start the file over at its end (until --count / --duration / Ctrl-C)\n"
    "--stdin          the same JSON lines from stdin, each sent when read; with --rate, one\n"
    "                 per period (ask for no more than the server's 240 poses/s)\n"
    "--rate HZ        poses per second, [1, 1000]. Default 60\n"
    "--count N        stop after N poses, [1, 1000000000]\n"
    "--duration S     stop after S seconds, [0.001, 1000000]\n"
    "--room R         the instance's room, for a proxy that routes by room (docker/);\n"
    "                 default: the room GET /v1/instances/ID names\n"
    "--json           print the final report as JSON\n"
    "%s"
    "\n"
    "Stops at the end of the input, --count, --duration or Ctrl-C, then waits up to 2 s for\n"
    "the last pose to come back in a frame. Exit status: 0 ok, 1 the server refused (wrong\n"
    "token, unknown instance) or cannot be reached, 2 bad arguments or input.\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = stop + 1; /* the second Ctrl-C does not wait for the echo */
}

static void on_error(ptc_conn_t *c, const ptc_error_t *e, void *user)
{
	(void)c;
	stream_t *s = user;
	if (e->code == PTP_CODE_RATE) {
		if (s->rate_errors++ == 0)
			fprintf(stderr, "ponytail stream: the server drops poses: %s\n", e->text);
		return;
	}
	if (e->code == PTP_CODE_UNAUTHORIZED || e->code == PTP_CODE_NOT_FOUND) {
		if (s->fatal)
			return; /* the first refusal says why (wrong token, before "not authorized")
			         */
		s->fatal = 1;
		snprintf(s->fatal_msg, sizeof s->fatal_msg,
		         "the server refused instance %llu: %s (%s)", s->id, e->text, e->name);
		return;
	}
	fprintf(stderr, "ponytail stream: server error %s: %s\n", e->name, e->text);
}

static void on_frame(ptc_conn_t *c, const ptc_frame_t *f, void *user)
{
	(void)c;
	stream_t *s = user;
	if (f->id != s->id || !s->first_seq || f->last_seq == 0)
		return;
	/* Only our own poses count: seqs from first_seq on (modulo 2^32). */
	if ((int32_t)(f->last_seq - s->first_seq) < 0)
		return;
	if (!s->have_applied || (int32_t)(f->last_seq - s->applied) > 0) {
		s->applied = f->last_seq;
		s->have_applied = 1;
	}
	hist_add(&s->lat, f->latency_us);
}

/* ---- the run ----------------------------------------------------------------------------------
 */

static void publish(stream_t *s, const ptc_pose_t *pose)
{
	uint32_t seq;
	int rc = ptc_publish(s->c, s->id, pose, &seq);
	if (rc == PTC_OK) {
		if (!s->first_seq)
			s->first_seq = seq;
		s->last_seq = seq;
		s->sent++;
	} else {
		s->dropped++; /* not connected (reconnecting) or the queue is full */
	}
}

/* Publishes what is due at `el` seconds since the start; returns 1 when the input is
 * exhausted. `k` counts scheduled slots (motion, paced lines), `li` the next file line. */
static int step(stream_t *s, double el, long *k, size_t *li, double *loop_off, double *next_due)
{
	ptc_pose_t pose;
	int send = 0;
	*next_due = el + 0.02;
	if (s->src == SRC_MOTION) {
		/* Behind by more than one period (a stall): skip to now rather than burst. */
		long now_k = (long)floor(el * s->rate);
		if (*k < now_k)
			*k = now_k;
		if (*k / s->rate <= el) {
			pt_pose pp = pt_motion_pose(&s->motion, *k / s->rate);
			pose = (ptc_pose_t){.p = {pp.p.x, pp.p.y, pp.p.z},
			                    .q = {pp.q.x, pp.q.y, pp.q.z, pp.q.w}};
			send = 1;
			++*k;
		}
		*next_due = *k / s->rate;
	} else if (s->src == SRC_FILE) {
		if (*li >= s->nlines) {
			if (!s->loop)
				return 1;
			const pose_line_t *last = &s->lines[s->nlines - 1];
			*loop_off += (last->has_t && !s->rate_given ? last->t : 0) + 1 / s->rate;
			*li = 0;
		}
		/* The newest line that is due wins; older due lines are skipped. */
		int found = 0;
		for (;;) {
			const pose_line_t *l = &s->lines[*li];
			double due = l->has_t && !s->rate_given ? *loop_off + l->t : *k / s->rate;
			if (due > el) {
				*next_due = due;
				break;
			}
			pose = l->pose;
			found = 1;
			++*li;
			if (!(l->has_t && !s->rate_given))
				++*k;
			if (*li >= s->nlines)
				break;
		}
		send = found;
	} else {
		if (s->f_n == 0)
			return s->in_eof;
		if (s->rate_given) {
			if (*k / s->rate > el) {
				*next_due = *k / s->rate;
				return 0;
			}
			++*k;
			if (*k < (long)floor(el * s->rate))
				*k = (long)floor(el * s->rate);
		}
		pose = s->fifo[s->f_head].pose;
		s->f_head = (s->f_head + 1) % FIFO;
		s->f_n--;
		send = 1;
		*next_due = s->rate_given ? *k / s->rate : el;
	}
	if (send)
		publish(s, &pose);
	return 0;
}

static void status_line(const stream_t *s, double el)
{
	fprintf(stderr, "\r\033[Kstream %llu: %ld poses (%.1f/s)", s->id, s->sent,
	        el > 0 ? s->sent / el : 0.0);
	if (s->have_applied)
		fprintf(stderr, ", applied #%ld", (long)(s->applied - s->first_seq) + 1);
	if (s->lat.n)
		fprintf(stderr, ", latency p50 %.1f ms", hist_pct(&s->lat, 50) / 1000);
}

static void report(const stream_t *s, double el)
{
	long applied_n = s->have_applied ? (long)(s->applied - s->first_seq) + 1 : 0;
	double p50 = hist_pct(&s->lat, 50) / 1000, p99 = hist_pct(&s->lat, 99) / 1000;
	double mx = s->lat.n ? (double)s->lat.max_us / 1000 : -1;
	if (s->r.json) {
		json_t *j = json_pack(
		    "{s:I,s:I,s:I,s:f,s:f,s:I,s:I,s:b,s:I,s:I}", "instance", (json_int_t)s->id,
		    "poses_sent", (json_int_t)s->sent, "poses_dropped", (json_int_t)s->dropped,
		    "duration_s", el, "rate_hz", el > 0 ? s->sent / el : 0.0, "last_seq_sent",
		    (json_int_t)s->last_seq, "last_seq_applied",
		    (json_int_t)(s->have_applied ? s->applied : 0), "last_applied",
		    s->have_applied && s->applied == s->last_seq, "frames_timed",
		    (json_int_t)s->lat.n, "rate_errors", (json_int_t)s->rate_errors);
		json_object_set_new(
		    j, "latency_ms",
		    s->lat.n ? json_pack("{s:f,s:f,s:f}", "p50", p50, "p99", p99, "max", mx)
		             : json_null());
		char *txt = json_dumps(j, JSON_COMPACT | JSON_REAL_PRECISION(6));
		if (txt)
			printf("%s\n", txt);
		free(txt);
		json_decref(j);
		return;
	}
	printf("streamed %ld poses to instance %llu in %.2f s (%.1f/s)", s->sent, s->id, el,
	       el > 0 ? s->sent / el : 0.0);
	if (s->dropped)
		printf(", %ld dropped while not connected", s->dropped);
	if (!s->have_applied)
		printf("\nno frame has shown one of these poses yet\n");
	else if (s->applied == s->last_seq)
		printf("\nthe server applied the last one (seq %u)\n", s->applied);
	else
		printf("\nthe server applied %ld of them so far (up to seq %u)\n", applied_n,
		       s->applied);
	if (s->lat.n)
		printf(
		    "input-to-frame latency: p50 %.2f ms, p99 %.2f ms, max %.2f ms (%llu frames)\n",
		    p50, p99, mx, (unsigned long long)s->lat.n);
	if (s->rate_errors)
		printf("the server refused poses for coming too fast (%llu rate errors)\n",
		       (unsigned long long)s->rate_errors);
}

static int run(stream_t *s)
{
	/* The instance must exist and follow client poses: REST says so clearly. */
	char path[64], ws[512], err[256];
	snprintf(path, sizeof path, "/v1/instances/%llu", s->id);
	http_resp_t h;
	if (remote_call(&s->r, "GET", path, NULL, NULL, 0, &h) != 0)
		return CLI_EXIT_FAIL;
	if (h.status != 200) {
		remote_print_error(&s->r, &h);
		http_free(&h);
		return CLI_EXIT_FAIL;
	}
	json_t *j = json_loads(h.body, 0, NULL);
	int driven = json_is_true(json_object_get(j, "driven"));
	const char *room = json_string_value(json_object_get(j, "room"));
	if (!s->r.room && room && *room) { /* the WebSocket goes to the node of its room */
		snprintf(s->room, sizeof s->room, "%s", room);
		s->r.room = s->room;
	}
	json_decref(j);
	http_free(&h);
	if (driven) {
		fprintf(stderr,
		        "ponytail stream: instance %llu is moved by its driver; patch it with "
		        "{\"driver\": null} first\n",
		        s->id);
		return CLI_EXIT_FAIL;
	}
	int tick_hz;
	if (remote_ws_url(&s->r, ws, sizeof ws, &tick_hz) != 0)
		return CLI_EXIT_FAIL;
	if (s->src == SRC_FILE && stream_load_poses(s, tick_hz) != 0)
		return CLI_EXIT_USAGE;

	ptc_ctx_t *ctx = remote_ctx_create(&s->r, err, sizeof err);
	if (!ctx) {
		fprintf(stderr, "ponytail stream: %s\n", err);
		return CLI_EXIT_FAIL;
	}
	ptc_conn_params_t p = ptc_conn_params_default();
	p.url = ws;
	p.client_name = "ponytail stream";
	p.decode = 0; /* only last_seq matters here */
	p.cb.on_error = on_error;
	p.cb.on_frame = on_frame;
	p.user = s;
	s->c = ptc_connect(ctx, &p, err, sizeof err);
	if (!s->c) {
		fprintf(stderr, "ponytail stream: %s: %s\n", ws, err);
		ptc_ctx_destroy(ctx);
		return CLI_EXIT_FAIL;
	}
	unsigned long long id = s->id;
	uint64_t id64 = id;
	ptc_authorize(s->c, id64, s->r.token);
	ptc_subscribe(s->c, NULL, &id64, 1);

	int tty = isatty(2), rc = CLI_EXIT_OK;
	int64_t t_conn = ptc_now_us(), t0 = 0, last_status = 0, t_end_wait = 0;
	long k = 0;
	size_t li = 0;
	double loop_off = 0, next_due = 0;
	int done = 0;
	while (!s->fatal) {
		int64_t now = ptc_now_us();
		ptc_state_t st = ptc_conn_state(s->c);
		if (!t0 && st != PTC_READY) {
			if (now - t_conn > (int64_t)(s->r.timeout_s * 1e6) || st == PTC_CLOSED) {
				snprintf(s->fatal_msg, sizeof s->fatal_msg,
				         "cannot connect to %s: %s%s", ws,
				         ptc_conn_last_error(s->c)[0] ? ptc_conn_last_error(s->c)
				                                      : "timed out",
				         remote_tls_hint(&s->r, ptc_conn_last_error(s->c)));
				s->fatal = 1;
				break;
			}
			ptc_service(ctx, 20);
			continue;
		}
		if (!t0)
			t0 = now; /* the schedule starts when the server is there */
		double el = (double)(now - t0) * 1e-6;
		if (s->src == SRC_STDIN && stream_read_stdin(s, tick_hz) != 0) {
			rc = CLI_EXIT_USAGE;
			break;
		}
		if (!done) {
			done = stop || (s->count && s->sent >= s->count) ||
			       (s->duration && el >= s->duration);
			if (!done && step(s, el, &k, &li, &loop_off, &next_due))
				done = 1;
			if (done)
				t_end_wait = now;
		}
		if (done &&
		    (stop > 1 || !s->sent || (s->have_applied && s->applied == s->last_seq) ||
		     now - t_end_wait > 2000000))
			break;
		if (tty && now - last_status > 250000) {
			status_line(s, el);
			last_status = now;
		}
		double wait = done ? 0.02 : next_due - el;
		ptc_service(ctx, wait > 0.02 ? 20 : wait < 0.001 ? 1 : (int)(wait * 1000));
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	double el = t0 ? (double)(ptc_now_us() - t0) * 1e-6 : 0;
	if (s->fatal) {
		fprintf(stderr, "ponytail stream: %s\n", s->fatal_msg);
		rc = CLI_EXIT_FAIL;
	} else if (rc == CLI_EXIT_OK) {
		report(s, el);
	}
	ptc_close(s->c);
	ptc_ctx_destroy(ctx);
	return rc;
}

int cmd_stream(int argc, char **argv)
{
	if (cli_wants_help(argc, argv)) {
		printf(usage_text, remote_flags_help);
		return CLI_EXIT_OK;
	}
	stream_t *s = calloc(1, sizeof *s);
	if (!s) {
		fprintf(stderr, "ponytail stream: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	remote_init(&s->r, "stream");
	s->rate = 60;
	int rc = CLI_EXIT_USAGE;
	if (stream_parse_args(s, argc, argv) == 0) {
		cli_catch_stop_signals(on_signal);
		rc = run(s);
	}
	free(s->lines);
	free(s);
	remote_global_cleanup();
	return rc;
}
