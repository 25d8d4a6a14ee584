/* The client library in one page: connect, subscribe to an instance, publish head poses
 * for it (when given its token) and print what comes back.
 *
 *   ponytail-client-example ws://127.0.0.1:8081 ID [TOKEN] [--frames N] [--timeout S]
 *                           [--ca FILE]
 *
 * A wss:// URL is verified against the system's CAs, or the CA in --ca FILE.
 * Prints one line per frame: tick, the newest pose applied (last_seq), input-to-frame
 * latency and the first strand's tip. Exits 0 after N frames (default 120) and, when
 * publishing, once a frame has echoed a seq this program sent; 1 on a server error, a
 * lost connection or the timeout (default 10 s); 2 on bad arguments. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ponytail_client.h"

typedef struct app_t {
	uint64_t id;
	long frames, want_frames;
	uint32_t first_seq; /* first seq we published (0: not publishing yet) */
	int echoed;         /* a frame carried one of our seqs */
	int failed;
} app_t;

static void on_state(ptc_conn_t *c, ptc_state_t s, const char *why, void *user)
{
	(void)user;
	const ptc_server_t *srv = ptc_conn_server(c);
	if (s == PTC_READY)
		printf("connected: %s, protocol 1.%d, %d Hz, points within %g m\n", srv->version,
		       srv->minor, srv->tick_hz, srv->max_error_m);
	else if (s == PTC_RETRYING || s == PTC_CLOSED)
		printf("%s: %s\n", ptc_state_name(s), why);
}

static void on_error(ptc_conn_t *c, const ptc_error_t *e, void *user)
{
	(void)c;
	app_t *a = user;
	fprintf(stderr, "server error %s (instance %llu): %s\n", e->name,
	        (unsigned long long)e->instance_id, e->text);
	a->failed = 1;
}

static void on_frame(ptc_conn_t *c, const ptc_frame_t *f, void *user)
{
	(void)c;
	app_t *a = user;
	if (f->id != a->id || !f->xyz)
		return;
	a->frames++;
	if (a->first_seq && f->last_seq >= a->first_seq)
		a->echoed = 1;
	const float *tip = f->xyz + 3 * (f->shape->strands[0].points - 1);
	char lat[32] = "-";
	if (f->latency_us >= 0)
		snprintf(lat, sizeof lat, "%.2f ms", (double)f->latency_us / 1000.0);
	printf("tick %llu seq %u latency %s tip %.4f %.4f %.4f\n", (unsigned long long)f->tick,
	       f->last_seq, lat, (double)tip[0], (double)tip[1], (double)tip[2]);
}

int main(int argc, char **argv)
{
	const char *url = NULL, *token = NULL;
	app_t a = {.want_frames = 120};
	double timeout_s = 10;
	ptc_tls_t tls = {NULL, 0};
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--ca") == 0 && i + 1 < argc)
			tls.ca_file = argv[++i];
		else if (strcmp(argv[i], "--frames") == 0 && i + 1 < argc)
			a.want_frames = strtol(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
			timeout_s = strtod(argv[++i], NULL);
		else if (!url)
			url = argv[i];
		else if (!a.id)
			a.id = strtoull(argv[i], NULL, 10);
		else if (!token)
			token = argv[i];
	}
	if (!url || a.id == 0 || a.want_frames < 1 || !(timeout_s > 0)) {
		fprintf(stderr,
		        "usage: %s WS_URL ID [TOKEN] [--frames N] [--timeout S] [--ca FILE]\n",
		        argv[0]);
		return 2;
	}

	char err[256];
	ptc_ctx_t *ctx = ptc_ctx_create_tls(&tls, err, sizeof err);
	if (!ctx) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	ptc_conn_params_t p = ptc_conn_params_default();
	p.url = url;
	p.client_name = "ponytail-client-example";
	p.reconnect = 0;
	p.cb.on_state = on_state;
	p.cb.on_frame = on_frame;
	p.cb.on_error = on_error;
	p.user = &a;
	ptc_conn_t *c = ptc_connect(ctx, &p, err, sizeof err);
	if (!c) {
		fprintf(stderr, "%s\n", err);
		ptc_ctx_destroy(ctx);
		return 2;
	}
	/* Remembered by the connection: sent as soon as it is ready (and after reconnects). */
	ptc_subscribe(c, NULL, &a.id, 1);
	if (token)
		ptc_authorize(c, a.id, token);

	int64_t t0 = ptc_now_us(), next_pose = t0;
	while (!a.failed && ptc_conn_state(c) != PTC_CLOSED) {
		int64_t now = ptc_now_us();
		if (now - t0 > (int64_t)(timeout_s * 1e6))
			break;
		if (a.frames >= a.want_frames && (!token || a.echoed))
			break;
		if (token && now >= next_pose && ptc_conn_state(c) == PTC_READY) {
			/* A nod: pitch 20 degrees at 1 Hz. */
			double t = (double)(now - t0) * 1e-6,
			       ang = 0.35 * sin(6.283185307179586 * t);
			ptc_pose_t pose = {.p = {0, 1.5f, 0},
			                   .q = {(float)sin(ang / 2), 0, 0, (float)cos(ang / 2)}};
			uint32_t seq;
			if (ptc_publish(c, a.id, &pose, &seq) == PTC_OK && !a.first_seq)
				a.first_seq = seq;
			next_pose += 1000000 / 60;
		}
		int wait_ms = token ? (int)((next_pose - ptc_now_us()) / 1000) : 100;
		ptc_service(ctx, wait_ms < 1 ? 1 : wait_ms);
	}
	ptc_stats_t st;
	ptc_conn_stats(c, &st);
	int ok = !a.failed && a.frames >= a.want_frames && (!token || a.echoed);
	printf("%s: %ld frames, %llu poses sent, %llu bytes in, rtt %.2f ms%s%s\n",
	       ok ? "ok" : "FAILED", a.frames, (unsigned long long)st.poses_sent,
	       (unsigned long long)st.bytes_in, (double)st.rtt_us / 1000.0,
	       ptc_conn_last_error(c)[0] ? ", last error: " : "", ptc_conn_last_error(c));
	ptc_close(c);
	ptc_ctx_destroy(ctx);
	return ok ? 0 : 1;
}
