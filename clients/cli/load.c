/* `ponytail load`: the load generator. Creates rooms of instances over REST, then runs
 * P publishing and S subscribing WebSocket connections from one thread (one client-
 * library context: event-driven, thousands of connections), prints a progress line each
 * second and a final report (load_report.c), and deletes what it created. Here: the flags
 * and the command; the run itself is load_run.c. */
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "args.h"
#include "commands.h"
#include "load.h"

static const char usage_text[] =
    "usage: ponytail load --rooms R --publishers P --subscribers S --duration D\n"
    "                     [--per-room N] [--instance FILE.json] [--motion NAME [--amplitude A]\n"
    "                     [--period S]] [--rate HZ] [--ramp S] [--prefix NAME] [--reuse]\n"
    "                     [--decode] [--keep] [--json FILE] [--server URL] [--ws URL]\n"
    "                     [--token T]\n"
    "\n"
    "Creates R rooms of N instances (REST), opens P publishing and S subscribing WebSocket\n"
    "connections over --ramp seconds, measures for D seconds, prints a progress line each\n"
    "second and a report, then deletes the instances it created. Publisher j serves room\n"
    "j %% R, a room's instances dealt among its publishers (one pose per instance per\n"
    "period); subscriber j watches room j %% R. Connections carry ?room= and REST calls\n"
    "X-Ponytail-Room, so a run also goes through docker/'s room-hashing proxy.\n"
    "\n"
    "--rooms R        rooms, [1, 10000]\n"
    "--per-room N     instances per room, [1, 1000]. Default 10\n"
    "--publishers P   publishing connections: 0, or [rooms, instances], each with at most\n"
    "                 64 instances\n"
    "--subscribers S  subscribing connections, [0, 100000]\n"
    "--duration D     seconds measured after the ramp, [0.01, 86400]\n"
    "--instance FILE  the definition of every instance (default: {}, the defaults of\n"
    "                 core/SCHEMA.md); name and room are set by the generator\n"
    "--motion NAME    the publishers' head motion: still, shake, nod, jump, circle, stress,\n"
    "                 jog. Default shake; each instance runs it with its own phase\n"
    "--amplitude A    shake/nod: degrees [0, 180]; jump: g [0, 50]; circle: m [0, 10];\n"
    "                 jog: bob in m [0, 0.2]\n"
    "--period S       seconds per cycle, [0.01, 3600]; jog: seconds of running, then still\n"
    "--rate HZ        poses per second per instance, [1, 240]. Default: the server's tick\n"
    "--ramp S         seconds over which connections are opened, [0, 600]. Default 1\n"
    "--prefix NAME    rooms are NAME-0 .. NAME-(R-1) (A-Z a-z 0-9 _ . -). Default\n"
    "                 load-<pid>\n"
    "--reuse          use the instances already in those rooms instead of creating any;\n"
    "                 publishers then authorize with --token (the admin token)\n"
    "--decode         subscribers also reconstruct every point (~50 ns per point of CPU)\n"
    "--keep           leave the created instances on the server\n"
    "--json FILE      also write the report as JSON\n"
    "%s"
    "\n"
    "Report: connections made/failed/lost; frames (per-tick batches) expected and received\n"
    "per subscriber (p50, p1); input-to-frame latency p50/p99/max (every pose: its publish\n"
    "to the first subscriber frame reflecting it); delivery p50/p99 (the tick's deadline to\n"
    "the frame's receipt); bytes/s in and out; frames skipped; errors by kind;\n"
    "the daemon's tick p99 (from /metrics). The daemon limits connections per address\n"
    "(ponytaild --max-conns-per-ip, default 64) and writes per second (--write-rate).\n"
    "Exit status: 0 the run completed (whatever it measured), 1 setup failed, 2 bad flags.\n";

volatile sig_atomic_t load_stop;

static void on_signal(int sig)
{
	(void)sig;
	load_stop = load_stop + 1;
}

/* ---- flags ------------------------------------------------------------------------------- */

static int parse_args(load_t *L, int argc, char **argv)
{
	static const char *const motions[] = {"still",  "shake",  "nod", "jump",
	                                      "circle", "stress", "jog", NULL};
	const char *v, *motion = "shake";
	double amp = 0, period = 0;
	int has_amp = 0, has_period = 0, k, seen = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((k = remote_flag(&L->r, argc, argv, &i, 0)) != 0) {
			if (k < 0)
				return -1;
		} else if ((k = cli_flag("load", "--rooms", argc, argv, &i, &v)) != 0) {
			if (k < 0 || cli_parse_int("load", "--rooms", v, 1, 10000, &L->rooms) != 0)
				return -1;
			seen |= 1;
		} else if ((k = cli_flag("load", "--publishers", argc, argv, &i, &v)) != 0) {
			if (k < 0 || cli_parse_int("load", "--publishers", v, 0, 100000,
			                           &L->publishers) != 0)
				return -1;
			seen |= 2;
		} else if ((k = cli_flag("load", "--subscribers", argc, argv, &i, &v)) != 0) {
			if (k < 0 || cli_parse_int("load", "--subscribers", v, 0, 100000,
			                           &L->subscribers) != 0)
				return -1;
			seen |= 4;
		} else if ((k = cli_flag("load", "--duration", argc, argv, &i, &v)) != 0) {
			if (k < 0 ||
			    cli_parse_real("load", "--duration", v, 0.01, 86400, &L->duration) != 0)
				return -1;
			seen |= 8;
		} else if ((k = cli_flag("load", "--per-room", argc, argv, &i, &v)) != 0) {
			if (k < 0 ||
			    cli_parse_int("load", "--per-room", v, 1, 1000, &L->per_room) != 0)
				return -1;
		} else if ((k = cli_flag("load", "--instance", argc, argv, &i,
		                         &L->instance_path)) != 0) {
			if (k < 0)
				return -1;
		} else if ((k = cli_flag("load", "--motion", argc, argv, &i, &v)) != 0) {
			if (k < 0 || cli_parse_choice("load", "--motion", v, motions) < 0)
				return -1;
			motion = v;
		} else if ((k = cli_flag("load", "--amplitude", argc, argv, &i, &v)) != 0) {
			if (k < 0 || cli_parse_real("load", "--amplitude", v, 0, 180, &amp) != 0)
				return -1;
			has_amp = 1;
		} else if ((k = cli_flag("load", "--period", argc, argv, &i, &v)) != 0) {
			if (k < 0 ||
			    cli_parse_real("load", "--period", v, 0.01, 3600, &period) != 0)
				return -1;
			has_period = 1;
		} else if ((k = cli_flag("load", "--rate", argc, argv, &i, &v)) != 0) {
			if (k < 0 || cli_parse_real("load", "--rate", v, 1, 240, &L->rate) != 0)
				return -1;
			L->rate_given = 1;
		} else if ((k = cli_flag("load", "--ramp", argc, argv, &i, &v)) != 0) {
			if (k < 0 || cli_parse_real("load", "--ramp", v, 0, 600, &L->ramp) != 0)
				return -1;
		} else if ((k = cli_flag("load", "--prefix", argc, argv, &i, &L->prefix_arg)) !=
		           0) {
			if (k < 0 || remote_check_room("load", "--prefix", L->prefix_arg) != 0)
				return -1;
			if (strlen(L->prefix_arg) > 40) {
				fprintf(stderr, "ponytail load: --prefix: at most 40 bytes\n");
				return -1;
			}
		} else if ((k = cli_switch("load", "--reuse", a)) != 0 ||
		           (k = cli_switch("load", "--keep", a)) != 0 ||
		           (k = cli_switch("load", "--decode", a)) != 0) {
			if (k < 0)
				return -1;
			*(strcmp(a, "--reuse") == 0  ? &L->reuse
			  : strcmp(a, "--keep") == 0 ? &L->keep
			                             : &L->decode) = 1;
		} else if ((k = cli_flag("load", "--json", argc, argv, &i, &L->json_path)) != 0) {
			if (k < 0)
				return -1;
		} else {
			fprintf(stderr,
			        "ponytail load: unknown %s '%s' (see ponytail load --help)\n",
			        a[0] == '-' ? "flag" : "argument", a);
			return -1;
		}
	}
	static const char *const need[] = {"--rooms", "--publishers", "--subscribers",
	                                   "--duration"};
	for (int b = 0; b < 4; b++)
		if (!(seen & (1 << b))) {
			fprintf(stderr, "ponytail load: missing %s (see ponytail load --help)\n",
			        need[b]);
			return -1;
		}
	if (L->rooms * L->per_room > 100000) {
		fprintf(stderr, "ponytail load: --rooms x --per-room: at most 100000 instances\n");
		return -1;
	}
	if (L->publishers + L->subscribers < 1) {
		fprintf(stderr,
		        "ponytail load: nothing to run: --publishers and --subscribers are 0\n");
		return -1;
	}
	if (!L->reuse && L->publishers > L->rooms * L->per_room) {
		fprintf(stderr, "ponytail load: --publishers: at most one per instance (%ld)\n",
		        L->rooms * L->per_room);
		return -1;
	}
	if (L->publishers > 0 && L->publishers < L->rooms) {
		fprintf(stderr, "ponytail load: --publishers: at least one per room (%ld), or 0\n",
		        L->rooms);
		return -1;
	}
	/* The fewest publishers a room gets is P / R; each publishes at most 64 instances. */
	if (!L->reuse && L->publishers > 0 &&
	    (L->per_room + L->publishers / L->rooms - 1) / (L->publishers / L->rooms) > 64) {
		fprintf(stderr,
		        "ponytail load: --publishers: each publishes at most 64 instances; need "
		        "at least %ld\n",
		        L->rooms * ((L->per_room + 63) / 64));
		return -1;
	}
	if (L->reuse && (L->instance_path || L->keep)) {
		fprintf(stderr,
		        "ponytail load: --reuse creates nothing: no --instance or --keep\n");
		return -1;
	}
	if (L->reuse && L->publishers > 0 && !L->r.token) {
		fprintf(stderr,
		        "ponytail load: --reuse with publishers needs --token (the admin token)\n");
		return -1;
	}
	if ((has_amp || has_period) && strcmp(motion, "stress") == 0) {
		fprintf(stderr,
		        "ponytail load: --amplitude/--period: the stress motion is fixed\n");
		return -1;
	}
	L->motion = pt_motion_default((pt_motion_kind)pt_motion_from_name(motion));
	pt_motion_kind kind = L->motion.kind;
	if (has_amp && kind != PT_MOTION_STILL && amp > pt_motion_amplitude_max(kind)) {
		fprintf(stderr, "ponytail load: --amplitude: for %s, %s in [0, %g]\n", motion,
		        kind == PT_MOTION_JUMP ? "g" : "metres", pt_motion_amplitude_max(kind));
		return -1;
	}
	if (has_amp)
		L->motion.amplitude = (float)amp;
	if (has_period)
		L->motion.period = (float)period;
	if (L->prefix_arg)
		snprintf(L->prefix, sizeof L->prefix, "%s", L->prefix_arg);
	else
		snprintf(L->prefix, sizeof L->prefix, "load-%ld", (long)getpid());
	return 0;
}

int cmd_load(int argc, char **argv)
{
	if (cli_wants_help(argc, argv)) {
		printf(usage_text, remote_flags_help);
		return CLI_EXIT_OK;
	}
	load_t *L = calloc(1, sizeof *L);
	if (!L) {
		fprintf(stderr, "ponytail load: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	remote_init(&L->r, "load");
	L->per_room = 10;
	L->ramp = 1;
	int rc = CLI_EXIT_USAGE;
	if (parse_args(L, argc, argv) == 0) {
		cli_catch_stop_signals(on_signal);
		rc = load_run(L);
		/* The report needs the connections' stats: before they are closed. */
		if (rc == CLI_EXIT_OK && load_report(L) != 0)
			rc = CLI_EXIT_FAIL;
		else if (rc != CLI_EXIT_OK && load_stop)
			fprintf(stderr,
			        "ponytail load: interrupted before the measurement began\n");
		load_shutdown_conns(L);
		if (!L->keep)
			load_delete_instances(L);
		else if (L->created)
			fprintf(stderr, "ponytail load: kept %ld instances in rooms %s-*\n",
			        L->created, L->prefix);
	}
	free(L->conns);
	free(L->pub_start);
	free(L->pub_inst);
	free(L->ids);
	free(L->tokens);
	free(L->inst_room);
	free(L);
	remote_global_cleanup();
	return rc;
}
