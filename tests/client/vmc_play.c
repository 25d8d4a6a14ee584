/* The VMC tracker of tests/client/vmc.test.sh: plays a recorded motion (a text capture,
 * tests/fixtures/vmc/) as VMC bundles through liblo at 60 Hz into `ponytail vmc`, throws
 * garbage, truncated bundles and non-finite numbers in between, and watches the
 * instance's frames over the client library to see which pose each frame shows.
 *
 * usage: vmc_play CAPTURE BRIDGE_PORT WS_URL INSTANCE_ID
 *
 * The expected head is computed here in Unity's frame (Root * Hips * ... * Head, the
 * same product formula) and only then converted (z -> -z, q -> [-x, -y, z, w]); the
 * bridge converts first and chains after, so a match also checks that the two agree.
 * Prints one JSON line: frames seen, frames matching a sent pose, the lag, the last.
 * Nothing here requires speed (issue 37): the last pose is waited for (up to 30 s), and the
 * lag is printed, not judged. */
#include <lo/lo.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ponytail_client.h"

enum { MAX_FRAMES = 4096, BONES = 7, HISTORY = 1024 };

typedef struct sample {
	char name[BONES][16];
	float v[BONES][7]; /* p, q in Unity's frame */
} sample;

static sample cap[MAX_FRAMES];
static int ncap;

/* What was sent, and the head each pose should give (ours). */
static double sent_head[HISTORY][7];
static int64_t sent_us[HISTORY];
static int nsent;

static long frames, matched, unmatched;
static double lag_ms[65536];
static long nlag;
static int last_match = -1; /* history index the newest frame matched */

static void qmul(const double a[4], const double b[4], double o[4])
{
	double r[4] = {a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
	               a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
	               a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
	               a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]};
	memcpy(o, r, sizeof r);
}

static void qrot(const double q[4], const double v[3], double o[3])
{
	double p[4] = {v[0], v[1], v[2], 0}, c[4] = {-q[0], -q[1], -q[2], q[3]}, t[4];
	qmul(q, p, t);
	qmul(t, c, t);
	o[0] = t[0], o[1] = t[1], o[2] = t[2];
}

/* Chain in Unity's frame, then convert to ours. */
static void expected_head(const sample *s, double out[7])
{
	double p[3] = {s->v[0][0], s->v[0][1], s->v[0][2]};
	double q[4] = {s->v[0][3], s->v[0][4], s->v[0][5], s->v[0][6]};
	for (int b = 1; b < BONES; b++) {
		double lp[3] = {s->v[b][0], s->v[b][1], s->v[b][2]}, r[3];
		double lq[4] = {s->v[b][3], s->v[b][4], s->v[b][5], s->v[b][6]};
		qrot(q, lp, r);
		for (int i = 0; i < 3; i++)
			p[i] += r[i];
		qmul(q, lq, q);
	}
	double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
	double o[7] = {p[0], p[1], -p[2], -q[0] / n, -q[1] / n, q[2] / n, q[3] / n};
	memcpy(out, o, sizeof o);
}

static int load(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[4096];
	while (ncap < MAX_FRAMES && fgets(line, sizeof line, f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		sample *s = &cap[ncap];
		char *tok = strtok(line, " \n");
		for (int b = 0; b < BONES; b++) {
			tok = strtok(NULL, " \n");
			if (!tok)
				break;
			snprintf(s->name[b], sizeof s->name[b], "%s", tok);
			for (int i = 0; i < 7 && (tok = strtok(NULL, " \n")); i++)
				s->v[b][i] = strtof(tok, NULL);
		}
		ncap++;
	}
	fclose(f);
	return ncap > 0 ? 0 : -1;
}

static void on_frame(ptc_conn_t *c, const ptc_frame_t *f, void *user)
{
	(void)c;
	(void)user;
	if (f->last_seq == 0 || nsent == 0)
		return; /* the bridge has not published yet */
	frames++;
	/* The newest sent pose this frame shows. */
	for (int k = nsent - 1; k >= 0 && k >= nsent - HISTORY; k--) {
		const double *e = sent_head[k % HISTORY];
		double dp = 0, dq = 0;
		for (int i = 0; i < 3; i++)
			dp += (f->head_p[i] - e[i]) * (f->head_p[i] - e[i]);
		for (int i = 0; i < 4; i++)
			dq += f->head_q[i] * e[3 + i];
		if (sqrt(dp) < 1e-3 && fabs(dq) > 1 - 1e-6) {
			matched++;
			last_match = k;
			/* How long a newer pose had been sent without this frame showing it. */
			double lag = 0;
			if (k + 1 < nsent && sent_us[(k + 1) % HISTORY] < f->recv_us)
				lag = (double)(f->recv_us - sent_us[(k + 1) % HISTORY]) / 1000;
			if (nlag < (long)(sizeof lag_ms / sizeof lag_ms[0]))
				lag_ms[nlag++] = lag;
			return;
		}
	}
	unmatched++;
	if (unmatched <= 3)
		fprintf(stderr,
		        "vmc_play: frame %llu head (%.4f %.4f %.4f) [%.4f %.4f %.4f %.4f] matches "
		        "no pose sent\n",
		        (unsigned long long)f->tick, f->head_p[0], f->head_p[1], f->head_p[2],
		        f->head_q[0], f->head_q[1], f->head_q[2], f->head_q[3]);
}

/* One capture frame as the bundle a tracker sends (plus addresses the head ignores). */
static void send_sample(lo_address to, const sample *s)
{
	lo_bundle b = lo_bundle_new(LO_TT_IMMEDIATE);
	lo_message ok = lo_message_new();
	lo_message_add_int32(ok, 1);
	lo_bundle_add_message(b, "/VMC/Ext/OK", ok);
	lo_message tm = lo_message_new();
	lo_message_add_float(tm, (float)nsent / 60);
	lo_bundle_add_message(b, "/VMC/Ext/T", tm);
	for (int k = 0; k < BONES; k++) {
		lo_message m = lo_message_new();
		lo_message_add_string(m, s->name[k]);
		for (int i = 0; i < 7; i++)
			lo_message_add_float(m, s->v[k][i]);
		lo_bundle_add_message(b, k == 0 ? "/VMC/Ext/Root/Pos" : "/VMC/Ext/Bone/Pos", m);
	}
	lo_message bl = lo_message_new();
	lo_message_add_string(bl, "Joy");
	lo_message_add_float(bl, 0.5f);
	lo_bundle_add_message(b, "/VMC/Ext/Blend/Val", bl);
	expected_head(s, sent_head[nsent % HISTORY]);
	sent_us[nsent % HISTORY] = ptc_now_us();
	nsent++;
	lo_send_bundle(to, b);
	lo_bundle_free_recursive(b);
}

/* Services the connection until `us` has passed. */
static void wait_us(ptc_ctx_t *ctx, int64_t us)
{
	int64_t end = ptc_now_us() + us;
	for (int64_t now; (now = ptc_now_us()) < end;)
		ptc_service(ctx,
		            (int)((end - now) / 1000) + 1 > 5 ? 5 : (int)((end - now) / 1000) + 1);
}

static void play(ptc_ctx_t *ctx, lo_address to, int from, int count)
{
	int64_t t0 = ptc_now_us();
	for (int k = 0; k < count; k++) {
		send_sample(to, &cap[(from + k) % ncap]);
		int64_t due = t0 + (int64_t)(k + 1) * 1000000 / 60;
		wait_us(ctx, due - ptc_now_us());
	}
}

/* Everything a broken or hostile sender may throw, as raw datagrams. */
static void abuse(int fd, const struct sockaddr_in *to, lo_address lo_to)
{
	unsigned char junk[512];
	srand(7);
	for (int k = 0; k < 20; k++) {
		size_t n = 1 + (size_t)(rand() % (int)sizeof junk);
		for (size_t i = 0; i < n; i++)
			junk[i] = (unsigned char)rand();
		if (k % 4 == 0)
			memcpy(junk, "#bundle",
			       n < 8 ? n : 8); /* junk that claims to be a bundle */
		sendto(fd, junk, n, 0, (const struct sockaddr *)to, sizeof *to);
	}
	/* A real bundle cut short at every length, and one whose element size lies. */
	lo_bundle b = lo_bundle_new(LO_TT_IMMEDIATE);
	lo_message m = lo_message_new();
	lo_message_add_string(m, "Head");
	for (int i = 0; i < 7; i++)
		lo_message_add_float(m, i == 6 ? 1.0f : 0.0f);
	lo_bundle_add_message(b, "/VMC/Ext/Bone/Pos", m);
	size_t len = 0;
	unsigned char *data = lo_bundle_serialise(b, NULL, &len);
	for (size_t n = 1; data && n < len; n += 3)
		sendto(fd, data, n, 0, (const struct sockaddr *)to, sizeof *to);
	if (data && len > 20) {
		data[19] = 0xff; /* the element's size: far beyond the packet */
		sendto(fd, data, len, 0, (const struct sockaddr *)to, sizeof *to);
	}
	free(data);
	lo_bundle_free_recursive(b);
	/* Non-finite numbers, an unknown address, wrong types, a zero rotation. */
	lo_send(lo_to, "/VMC/Ext/Bone/Pos", "sfffffff", "Head", (double)NAN, 0.0, 0.0, 0.0, 0.0,
	        0.0, 1.0);
	lo_send(lo_to, "/VMC/Ext/Root/Pos", "sfffffff", "root", 0.0, (double)INFINITY, 0.0, 0.0,
	        0.0, 0.0, 1.0);
	lo_send(lo_to, "/obs/scene", "s", "Scene 2");
	lo_send(lo_to, "/VMC/Ext/Bone/Pos", "sii", "Head", 1, 2);
	lo_send(lo_to, "/VMC/Ext/Bone/Pos", "sfffffff", "Head", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
	sendto(fd, "", 0, 0, (const struct sockaddr *)to, sizeof *to);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: vmc_play CAPTURE BRIDGE_PORT WS_URL INSTANCE_ID\n");
		return 2;
	}
	if (load(argv[1]) != 0) {
		fprintf(stderr, "vmc_play: cannot read %s\n", argv[1]);
		return 1;
	}
	char err[256];
	ptc_ctx_t *ctx = ptc_ctx_create(err, sizeof err);
	ptc_conn_params_t p = ptc_conn_params_default();
	p.url = argv[3];
	p.decode = 0;
	p.cb.on_frame = on_frame;
	ptc_conn_t *c = ctx ? ptc_connect(ctx, &p, err, sizeof err) : NULL;
	if (!c) {
		fprintf(stderr, "vmc_play: %s\n", err);
		return 1;
	}
	uint64_t id = strtoull(argv[4], NULL, 10);
	ptc_subscribe(c, NULL, &id, 1);
	int64_t deadline = ptc_now_us() + 30000000; /* a loaded machine; a broken one reaches it */
	while (ptc_conn_state(c) != PTC_READY && ptc_now_us() < deadline)
		ptc_service(ctx, 10);
	if (ptc_conn_state(c) != PTC_READY) {
		fprintf(stderr, "vmc_play: no connection to %s\n", argv[3]);
		return 1;
	}
	lo_address to = lo_address_new("127.0.0.1", argv[2]);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	struct sockaddr_in sin = {.sin_family = AF_INET,
	                          .sin_port = htons((uint16_t)atoi(argv[2])),
	                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};

	play(ctx, to, 0, ncap); /* the whole capture */
	long before_abuse = unmatched;
	abuse(fd, &sin, to);
	play(ctx, to, 0, ncap / 2); /* still following? */
	play(ctx, to, ncap - 1, 1);
	/* The last pose, then quiet: it must become the frames' pose (when is the machine's
	 * speed: waited for) and stay it (300 ms more for a frame that would say otherwise). */
	deadline = ptc_now_us() + 30000000;
	while (last_match != nsent - 1 && ptc_now_us() < deadline)
		wait_us(ctx, 10000);
	wait_us(ctx, 300000);

	/* lag percentiles */
	for (long i = 1; i < nlag; i++)
		for (long j = i; j > 0 && lag_ms[j - 1] > lag_ms[j]; j--) {
			double t = lag_ms[j];
			lag_ms[j] = lag_ms[j - 1];
			lag_ms[j - 1] = t;
		}
	double p50 = nlag ? lag_ms[nlag / 2] : -1, p95 = nlag ? lag_ms[nlag * 95 / 100] : -1;
	double mx = nlag ? lag_ms[nlag - 1] : -1;
	printf("{\"sent\": %d, \"frames\": %ld, \"matched\": %ld, \"unmatched\": %ld, "
	       "\"unmatched_after_abuse\": %ld, \"lag_ms\": {\"p50\": %.2f, \"p95\": %.2f, "
	       "\"max\": %.2f}, \"last_frame_shows_last_pose\": %s}\n",
	       nsent, frames, matched, unmatched, unmatched - before_abuse, p50, p95, mx,
	       last_match == nsent - 1 ? "true" : "false");
	lo_address_free(to);
	close(fd);
	ptc_close(c);
	ptc_ctx_destroy(ctx);
	return 0;
}
