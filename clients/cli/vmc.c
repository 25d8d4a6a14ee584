/* `ponytail vmc`: a bridge from VMC (OSC over UDP) to an instance's head and body bones.
 * Each packet is passed on unchanged (--forward), decoded (vmc_parse.c), and when it moved
 * the head or a bone the pose, bones with it, is published through the client library; the instance's frames come back for the
 * latency figure and, with --hair-out, as VMC-shaped joint messages (vmc_hair.c). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "hist.h"
#include "ponytail_client.h"
#include "remote.h"
#include "vmc.h"
#include "vmc_bridge.h"

static const char usage_text[] =
    "usage: ponytail vmc (--create FILE.json | --instance ID --token T) [--listen [HOST:]PORT]\n"
    "                    [--forward HOST:PORT] [--hair-out HOST:PORT] [--duration S] [--json]\n"
    "                    [--server URL] [--ws URL]\n"
    "\n"
    "Listens for the VMC protocol (OSC over UDP: VSeeFace, XR Animator, VMagicMirror,\n"
    "Warudo, VNyan ...) and publishes the head and body it describes to an instance, at\n"
    "the rate poses arrive (at most 220 per second, under the server's limit).\n"
    "\n"
    "The head: /VMC/Ext/Tra/Pos \"Head\" while one has come within the last second, else\n"
    "/VMC/Ext/Root/Pos * the /VMC/Ext/Bone/Pos chain Hips, Spine, Chest, UpperChest, Neck,\n"
    "Head (parent-relative; bones never received are skipped). The body: every other\n"
    "humanoid bone received (Unity's names: Hips, LeftUpperArm, LeftIndexProximal, ...)\n"
    "goes with each head pose as its world pose, Root * its received humanoid ancestors *\n"
    "itself, its last value until it comes again. Unity's left-handed frame becomes ours:\n"
    "position (x, y, z) -> (x, y, -z), rotation [x, y, z, w] -> [-x, -y, z, w].\n"
    "\n"
    "--create FILE    create an instance from a definition file first (prints its id and\n"
    "                 write token on stderr; it stays after the bridge stops)\n"
    "--instance ID    publish to an existing instance (with --token)\n"
    "--listen A       UDP address to listen on, [HOST:]PORT. Default 127.0.0.1:39539;\n"
    "                 0.0.0.0:39539 accepts trackers on other machines\n"
    "--forward A      send every packet received, unchanged, on to HOST:PORT (the VTuber\n"
    "                 app that renders the avatar)\n"
    "--hair-out A     send the simulated joints to HOST:PORT each frame, as\n"
    "                 /VMC/Thru/ponytail/Bone/Pos messages shaped like /VMC/Ext/Bone/Pos\n"
    "                 (name \"s<strand>j<joint>\", Unity-frame world position, rotation)\n"
    "--duration S     stop after S seconds, [0.1, 1000000]\n"
    "--json           the status each second (and a last one at the end) as JSON lines on\n"
    "                 stdout, instead of a line on stderr\n"
    "%s"
    "\n"
    "Malformed packets, unknown addresses and non-finite numbers are counted and ignored.\n"
    "Stops at --duration or Ctrl-C. Exit status: 0 ok, 1 the server refused or cannot be\n"
    "reached, or the address cannot be bound, 2 bad arguments.\n";

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* ---- arguments ---------------------------------------------------------------------- */

/* "[HOST:]PORT" (HOST may be [v6]) into an address. 0, or -1 (printed). */
static int resolve(const char *flag, const char *spec, int passive, udp_addr_t *out)
{
	out->spec = spec;
	char host[256], port[16];
	const char *colon = strrchr(spec, ':');
	const char *p = colon ? colon + 1 : spec;
	size_t hl = colon ? (size_t)(colon - spec) : 0;
	if (hl >= 2 && spec[0] == '[' && spec[hl - 1] == ']') {
		spec++;
		hl -= 2;
	}
	char *end;
	long pn = strtol(p, &end, 10);
	if (!*p || *end || pn < 1 || pn > 65535 || hl >= sizeof host || (colon && hl == 0)) {
		fprintf(stderr,
		        "ponytail vmc: %s: expected [HOST:]PORT with a port in [1, 65535], "
		        "got '%s'\n",
		        flag, out->spec);
		return -1;
	}
	if (colon)
		memcpy(host, spec, hl), host[hl] = '\0';
	else
		snprintf(host, sizeof host, "127.0.0.1");
	snprintf(port, sizeof port, "%ld", pn);
	struct addrinfo hints = {.ai_socktype = SOCK_DGRAM, .ai_flags = passive ? AI_PASSIVE : 0};
	struct addrinfo *ai = NULL;
	int rc = getaddrinfo(host, port, &hints, &ai);
	if (rc != 0 || !ai) {
		fprintf(stderr, "ponytail vmc: %s: %s: %s\n", flag, host, gai_strerror(rc));
		return -1;
	}
	memcpy(&out->sa, ai->ai_addr, ai->ai_addrlen);
	out->len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
}

static int parse_args(bridge_t *b, int argc, char **argv)
{
	const char *v;
	int k;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((k = remote_flag(&b->r, argc, argv, &i, 1)) != 0) {
			if (k < 0)
				return -1;
		} else if ((k = cli_flag("vmc", "--create", argc, argv, &i, &b->create)) != 0) {
			if (k < 0)
				return -1;
		} else if ((k = cli_flag("vmc", "--instance", argc, argv, &i, &v)) != 0) {
			if (k < 0 || remote_parse_id("vmc", v, &b->id) != 0)
				return -1;
		} else if ((k = cli_flag("vmc", "--listen", argc, argv, &i, &b->listen)) != 0) {
			if (k < 0)
				return -1;
		} else if ((k = cli_flag("vmc", "--forward", argc, argv, &i, &b->forward)) != 0) {
			if (k < 0)
				return -1;
		} else if ((k = cli_flag("vmc", "--hair-out", argc, argv, &i, &b->hair_out)) != 0) {
			if (k < 0)
				return -1;
		} else if ((k = cli_flag("vmc", "--duration", argc, argv, &i, &v)) != 0) {
			if (k < 0 || cli_parse_real("vmc", "--duration", v, 0.1, 1e6, &b->duration))
				return -1;
		} else if (a[0] == '-' && a[1] != '\0') {
			fprintf(stderr,
			        "ponytail vmc: unknown flag '%s' (see ponytail vmc --help)\n", a);
			return -1;
		} else {
			fprintf(stderr, "ponytail vmc: unexpected argument '%s'\n", a);
			return -1;
		}
	}
	if (!!b->create == !!b->id) {
		fprintf(stderr, "ponytail vmc: give one target: --create FILE.json or --instance "
		                "ID --token T\n");
		return -1;
	}
	if (resolve("--listen", b->listen ? b->listen : "39539", 1, &b->listen_a) != 0 ||
	    (b->forward && resolve("--forward", b->forward, 0, &b->forward_a) != 0) ||
	    (b->hair_out && resolve("--hair-out", b->hair_out, 0, &b->hair_a) != 0))
		return -1;
	if (b->id && !b->r.token) {
		fprintf(stderr, "ponytail vmc: --instance needs the instance's write token: "
		                "--token T (or $PONYTAIL_TOKEN)\n");
		return -1;
	}
	return 0;
}

/* A UDP socket bound to the --listen address, or connected to a target's. */
static int open_udp(const char *flag, const udp_addr_t *a, int bind_it)
{
	int fd = socket(a->sa.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || (bind_it ? bind(fd, (const struct sockaddr *)&a->sa, a->len)
	                       : connect(fd, (const struct sockaddr *)&a->sa, a->len)) != 0) {
		fprintf(stderr, "ponytail vmc: %s %s: %s\n", flag, a->spec, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* ---- the instance ------------------------------------------------------------------- */

/* --create: POST the file; fills id and the token. */
static int create_instance(bridge_t *b)
{
	size_t len;
	char *body = remote_read_file("vmc", b->create, &len);
	if (!body)
		return -1;
	http_resp_t h;
	int rc = remote_call(&b->r, "POST", "/v1/instances", body, "application/json", 0, &h);
	free(body);
	if (rc != 0)
		return -1;
	if (h.status != 201 && h.status != 200) {
		remote_print_error(&b->r, &h);
		http_free(&h);
		return -1;
	}
	json_t *j = json_loads(h.body, 0, NULL);
	json_int_t id = json_integer_value(json_object_get(j, "id"));
	const char *tok = json_string_value(json_object_get(j, "token"));
	if (id <= 0 || !tok || strlen(tok) >= sizeof b->token_buf) {
		fprintf(stderr,
		        "ponytail vmc: the server's answer to the create has no id and "
		        "token: %.200s\n",
		        h.body);
		json_decref(j);
		http_free(&h);
		return -1;
	}
	b->id = (unsigned long long)id;
	snprintf(b->token_buf, sizeof b->token_buf, "%s", tok);
	b->r.token = b->token_buf;
	fprintf(stderr, "ponytail vmc: created instance %llu, token: %s\n", b->id, tok);
	json_decref(j);
	http_free(&h);
	return 0;
}

/* The instance must follow client poses; its room routes the WebSocket. */
static int check_instance(bridge_t *b)
{
	char path[64];
	snprintf(path, sizeof path, "/v1/instances/%llu", b->id);
	http_resp_t h;
	if (remote_call(&b->r, "GET", path, NULL, NULL, 0, &h) != 0)
		return -1;
	if (h.status != 200) {
		remote_print_error(&b->r, &h);
		http_free(&h);
		return -1;
	}
	json_t *j = json_loads(h.body, 0, NULL);
	int driven = json_is_true(json_object_get(j, "driven"));
	const char *room = json_string_value(json_object_get(j, "room"));
	if (!b->r.room && room && *room) {
		snprintf(b->room, sizeof b->room, "%s", room);
		b->r.room = b->room;
	}
	json_decref(j);
	http_free(&h);
	if (driven) {
		fprintf(stderr,
		        "ponytail vmc: instance %llu is moved by its driver; patch it with "
		        "{\"driver\": null} first\n",
		        b->id);
		return -1;
	}
	return 0;
}

static void on_error(ptc_conn_t *c, const ptc_error_t *e, void *user)
{
	(void)c;
	bridge_t *b = user;
	if (e->code == PTP_CODE_RATE) {
		b->rate_errors++;
		return;
	}
	if (e->code == PTP_CODE_UNAUTHORIZED || e->code == PTP_CODE_NOT_FOUND) {
		if (!b->fatal)
			snprintf(b->fatal_msg, sizeof b->fatal_msg,
			         "the server refused instance %llu: %s (%s)", b->id, e->text,
			         e->name);
		b->fatal = 1;
		return;
	}
	fprintf(stderr, "ponytail vmc: server error %s: %s\n", e->name, e->text);
}

static void on_frame(ptc_conn_t *c, const ptc_frame_t *f, void *user)
{
	(void)c;
	bridge_t *b = user;
	if (f->id != b->id)
		return;
	if (f->latency_us >= 0) {
		hist_add(&b->lat, f->latency_us);
		hist_add(&b->lat_all, f->latency_us);
	}
	for (int i = 0; i < 3; i++)
		b->frame_head[i] = f->head_p[i];
	for (int i = 0; i < 4; i++)
		b->frame_head[3 + i] = f->head_q[i];
	b->frames++;
	if (b->hair_fd >= 0 && f->xyz && f->shape)
		vmc_hair_send(b, f->shape, f->xyz, f->n_points);
}

/* ---- the loop ----------------------------------------------------------------------- */

static void publish(bridge_t *b, int64_t now)
{
	vmc_xf h;
	if (!b->st.changed || now - b->last_publish_us < 4500 || !vmc_head(&b->st, now, &h))
		return;
	b->st.changed = 0;
	ptc_pose_t p = {.has_v = 0};
	for (int i = 0; i < 3; i++)
		p.p[i] = (float)h.p[i];
	for (int i = 0; i < 4; i++)
		p.q[i] = (float)h.q[i];
	b->head = h;
	b->have_head = 1;
	/* every body bone received, as world poses next to the head's (protocol 1.2; the
	 * library drops them for an older server). One far beyond the server's 10 km would
	 * refuse the whole pose, head included: such a bone is left out. */
	unsigned char ids[VMC_NBODY];
	vmc_xf wb[VMC_NBODY];
	int n = vmc_body_bones(&b->st, ids, wb);
	for (int i = 0; i < n; i++) {
		if (fabs(wb[i].p[0]) > PTP_POSE_MAX_M || fabs(wb[i].p[1]) > PTP_POSE_MAX_M ||
		    fabs(wb[i].p[2]) > PTP_POSE_MAX_M)
			continue;
		ptp_bone_pose_t *bp = &p.bones[p.nbones++];
		bp->bone = ids[i];
		for (int k = 0; k < 3; k++)
			bp->p[k] = (float)wb[i].p[k];
		for (int k = 0; k < 4; k++)
			bp->q[k] = (float)wb[i].q[k];
	}
	b->bones = p.nbones;
	int rc = ptc_publish(b->c, b->id, &p, NULL);
	if (rc == PTC_OK) {
		b->poses++;
		b->last_publish_us = now;
	} else {
		b->not_published++; /* not connected yet, or the queue is full */
	}
}

/* Drains the socket: forward, decode, publish. */
static void receive(bridge_t *b)
{
	for (int i = 0; i < 256; i++) {
		ssize_t n = recv(b->fd, b->buf, sizeof b->buf, MSG_DONTWAIT);
		if (n < 0)
			break; /* EAGAIN, or an ICMP error left by an earlier send: nothing to read
			        */
		int64_t now = ptc_now_us();
		if (b->fwd_fd >= 0) {
			if (send(b->fwd_fd, b->buf, (size_t)n, MSG_DONTWAIT) == n)
				b->forwarded++;
			else
				b->forward_errors++;
		}
		vmc_feed(&b->st, b->buf, (size_t)n, now);
		publish(b, now);
	}
}

static int bridge_run(bridge_t *b)
{
	if (b->create && create_instance(b) != 0)
		return CLI_EXIT_FAIL;
	if (check_instance(b) != 0)
		return CLI_EXIT_FAIL;
	char ws[512], err[256];
	if (remote_ws_url(&b->r, ws, sizeof ws, NULL) != 0)
		return CLI_EXIT_FAIL;
	b->fd = open_udp("--listen", &b->listen_a, 1);
	if (b->fd < 0)
		return CLI_EXIT_FAIL;
	if (b->forward && (b->fwd_fd = open_udp("--forward", &b->forward_a, 0)) < 0)
		return CLI_EXIT_FAIL;
	if (b->hair_out && (b->hair_fd = open_udp("--hair-out", &b->hair_a, 0)) < 0)
		return CLI_EXIT_FAIL;
	ptc_ctx_t *ctx = remote_ctx_create(&b->r, err, sizeof err);
	if (!ctx) {
		fprintf(stderr, "ponytail vmc: %s\n", err);
		return CLI_EXIT_FAIL;
	}
	ptc_conn_params_t p = ptc_conn_params_default();
	p.url = ws;
	p.client_name = "ponytail vmc";
	p.decode = b->hair_fd >= 0;
	p.cb.on_error = on_error;
	p.cb.on_frame = on_frame;
	p.user = b;
	b->c = ptc_connect(ctx, &p, err, sizeof err);
	if (!b->c) {
		fprintf(stderr, "ponytail vmc: %s: %s\n", ws, err);
		ptc_ctx_destroy(ctx);
		return CLI_EXIT_FAIL;
	}
	uint64_t id64 = b->id;
	ptc_authorize(b->c, id64, b->r.token);
	ptc_subscribe(b->c, NULL, &id64, 1);

	int64_t t0 = ptc_now_us(), next_status = t0 + 1000000;
	bridge_status_begin(b, t0);
	while (!stop && !b->fatal) {
		int64_t now = ptc_now_us();
		if (b->duration > 0 && now - t0 >= (int64_t)(b->duration * 1e6))
			break;
		if (ptc_conn_state(b->c) == PTC_CLOSED) {
			snprintf(b->fatal_msg, sizeof b->fatal_msg, "lost %s: %s%s", ws,
			         ptc_conn_last_error(b->c),
			         remote_tls_hint(&b->r, ptc_conn_last_error(b->c)));
			b->fatal = 1;
			break;
		}
		/* The UDP socket and the WebSocket take turns: a packet waits at most 2 ms
		 * for poll to return, a pose at most one ptc_service for its write. */
		struct pollfd pf = {.fd = b->fd, .events = POLLIN};
		if (poll(&pf, 1, 2) > 0)
			receive(b);
		publish(b, ptc_now_us()); /* one held back by the rate cap */
		ptc_service(ctx, 0);
		if (now >= next_status) {
			bridge_status(b, now, 0);
			next_status += 1000000;
			if (next_status < now)
				next_status = now + 1000000;
		}
	}
	bridge_status(b, ptc_now_us(), 1);
	int rc = CLI_EXIT_OK;
	if (b->fatal) {
		fprintf(stderr, "ponytail vmc: %s\n", b->fatal_msg);
		rc = CLI_EXIT_FAIL;
	}
	ptc_close(b->c);
	ptc_ctx_destroy(ctx);
	return rc;
}

int cmd_vmc(int argc, char **argv)
{
	if (cli_wants_help(argc, argv)) {
		printf(usage_text, remote_flags_help);
		return CLI_EXIT_OK;
	}
	bridge_t *b = calloc(1, sizeof *b);
	if (!b) {
		fprintf(stderr, "ponytail vmc: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	remote_init(&b->r, "vmc");
	b->fd = b->fwd_fd = b->hair_fd = -1;
	int rc = CLI_EXIT_USAGE;
	if (parse_args(b, argc, argv) == 0) {
		cli_catch_stop_signals(on_signal);
		rc = bridge_run(b);
	}
	if (b->fd >= 0)
		close(b->fd);
	if (b->fwd_fd >= 0)
		close(b->fwd_fd);
	if (b->hair_fd >= 0)
		close(b->hair_fd);
	free(b);
	remote_global_cleanup();
	return rc;
}
