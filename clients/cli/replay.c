/* ponytail replay FILE: re-simulates a room's recording (GET /v1/rooms/{room}/recording;
 * core/RECORDING.md) and prints every instance's frame after every tick, or checks the
 * state hashes the recording carries (--verify). The recording and its replay are
 * core's (ponytail/record.h); this file reads the file and writes the lines. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "jsonfile.h"
#include "ponytail/record.h"
#include "sim_output.h"

static const char usage_text[] =
    "usage: ponytail replay RECORDING [--verify] [--id ID] [--kernel auto|scalar]\n"
    "\n"
    "Re-simulates a room's recording (GET /v1/rooms/{room}/recording, or a file\n"
    "ponytaild wrote) and prints every instance's frame after every tick as JSON\n"
    "lines, as `ponytail sim` does, with the instance's id and state hash:\n"
    "  {\"id\":7,\"tick\":1201,\"t\":20.016667,\"state_hash\":\"0123456789abcdef\",\n"
    "   \"head\":{\"p\":[x,y,z],\"q\":[x,y,z,w]},\"strands\":[[[x,y,z],...],...]}\n"
    "Coordinates are the shortest decimals that read back as the same floats. The\n"
    "state hash is core's (core/README.md \"State, snapshot and hash\"): the same bits\n"
    "as the daemon published for that tick, on any build.\n"
    "\n"
    "  --verify        print no frames: check every tick's hashes against the ones the\n"
    "                  recording carries and name the first tick and instance that\n"
    "                  differ (exit 1); a summary line on stderr\n"
    "  --id ID         only this instance's frames\n"
    "  --kernel K      auto (AVX2 where the CPU has it) or scalar (plain C): the same bits\n"
    "\n"
    "exit status: 0 ok (every hash agrees), 1 a bad recording or a hash that differs,\n"
    "2 usage error\n";

typedef struct opts {
	const char *path;
	int verify;
	uint64_t only;
	pt_kernel kernel;
} opts;

static int parse(int argc, char **argv, opts *o)
{
	memset(o, 0, sizeof *o);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(usage_text, stdout);
			return 1;
		} else if (strcmp(a, "--verify") == 0) {
			o->verify = 1;
		} else if (strcmp(a, "--id") == 0 || strcmp(a, "--kernel") == 0) {
			if (i + 1 >= argc) {
				fprintf(stderr, "replay: %s needs a value (see ponytail replay --help)\n", a);
				return -1;
			}
			const char *v = argv[++i];
			if (strcmp(a, "--id") == 0) {
				char *end;
				errno = 0;
				unsigned long long id = strtoull(v, &end, 10);
				if (errno || end == v || *end || id == 0 || v[0] == '-') {
					fprintf(stderr, "replay: --id: expected an instance id (a positive "
					                "integer), got '%s'\n", v);
					return -1;
				}
				o->only = id;
			} else if (strcmp(v, "auto") == 0 || strcmp(v, "scalar") == 0) {
				o->kernel = v[0] == 'a' ? PT_KERNEL_AUTO : PT_KERNEL_SCALAR;
			} else {
				fprintf(stderr, "replay: --kernel: expected auto or scalar, got '%s'\n", v);
				return -1;
			}
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "replay: unknown flag '%s' (see ponytail replay --help)\n", a);
			return -1;
		} else if (o->path) {
			fprintf(stderr, "replay: one recording at a time ('%s' and '%s')\n", o->path, a);
			return -1;
		} else {
			o->path = a;
		}
	}
	if (!o->path) {
		fprintf(stderr, "replay: missing RECORDING (see ponytail replay --help)\n");
		return -1;
	}
	return 0;
}

static void print_frame(pt_replay *r, const pt_rec_info *info, uint64_t tick, uint64_t id,
                        uint64_t hash)
{
	static pt_vec3 pts[PT_MAX_JOINTS];
	int counts[PT_MAX_STRANDS], strands = 0;
	pt_world *w = pt_replay_world(r);
	pt_id pid = pt_replay_find(r, id);
	int n = pt_world_shape(w, pid, &strands, counts);
	pt_world_read_points(w, pid, pts, n);
	pt_pose head;
	pt_world_get_head(w, pid, &head);
	printf("{\"id\":%" PRIu64 ",\"tick\":%" PRIu64 ",\"t\":%.6f,\"state_hash\":\"%016" PRIx64
	       "\",\"head\":{\"p\":",
	       id, tick, (double)tick / info->tick_hz, hash);
	sim_put_vec(stdout, &head.p.x, 3);
	fputs(",\"q\":", stdout);
	sim_put_vec(stdout, &head.q.x, 4);
	fputs("},\"strands\":[", stdout);
	for (int s = 0, k = 0; s < strands; s++) {
		fputs(s ? ",[" : "[", stdout);
		for (int j = 0; j < counts[s]; j++, k++) {
			if (j)
				fputc(',', stdout);
			sim_put_vec(stdout, &pts[k].x, 3);
		}
		fputc(']', stdout);
	}
	fputs("]}\n", stdout);
}

int cmd_replay(int argc, char **argv)
{
	opts o;
	int rc = parse(argc, argv, &o);
	if (rc)
		return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	size_t len;
	char *buf = cli_read_file(o.path, &len);
	if (!buf) {
		fprintf(stderr, "replay: %s: %s\n", o.path, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	char msg[256];
	pt_rec_reader rd;
	pt_rec_info info;
	pt_replay *r = NULL;
	int status = CLI_EXIT_FAIL;
	uint64_t ticks = 0, checked = 0;
	if (pt_rec_open(&rd, buf, len, &info, msg, sizeof msg) != 0)
		goto bad;
	r = pt_replay_create(&info, o.kernel);
	if (!r) {
		snprintf(msg, sizeof msg, "out of memory");
		goto bad;
	}
	pt_rec_event ev;
	int got;
	while ((got = pt_rec_next(&rd, &ev, msg, sizeof msg)) == 1) {
		if (pt_replay_apply(r, &ev, msg, sizeof msg) != 0)
			goto bad;
		if (ev.type != PT_REC_STEP)
			continue;
		ticks++;
		if (o.verify) {
			int k = pt_replay_mismatch(r, &ev);
			if (k >= 0) {
				uint64_t id = 0, hash = 0;
				if ((uint32_t)k < ev.n)
					pt_rec_step_entry(&ev, (uint32_t)k, &id, &hash);
				pt_id pid = pt_replay_find(r, id);
				if ((uint32_t)k >= ev.n)
					fprintf(stderr, "replay: %s: tick %" PRIu64 " (offset %zu): the replay "
					                "has an instance the recording does not list\n",
					        o.path, ev.tick, ev.offset);
				else
					fprintf(stderr,
					        "replay: %s: tick %" PRIu64 ", instance %" PRIu64 " (offset %zu): "
					        "recorded state hash %016" PRIx64 ", replayed %016" PRIx64 "\n",
					        o.path, ev.tick, id, ev.offset, hash,
					        pt_id_is_null(pid) ? 0 : pt_world_state_hash(pt_replay_world(r), pid));
				status = CLI_EXIT_FAIL;
				goto out;
			}
			checked += ev.n;
			continue;
		}
		for (uint32_t k = 0; k < ev.n; k++) {
			uint64_t id, hash;
			pt_rec_step_entry(&ev, k, &id, &hash);
			if (o.only && id != o.only)
				continue;
			if (pt_id_is_null(pt_replay_find(r, id)))
				continue;
			print_frame(r, &info, ev.tick, id,
			            pt_world_state_hash(pt_replay_world(r), pt_replay_find(r, id)));
		}
	}
	if (got < 0)
		goto bad;
	if (o.verify)
		fprintf(stderr,
		        "replay: %s: room '%s', ticks %" PRIu64 "-%" PRIu64 " (%" PRIu64 " steps): "
		        "all %" PRIu64 " state hashes agree\n",
		        o.path, info.room, info.first_tick + 1, info.first_tick + ticks, ticks, checked);
	status = CLI_EXIT_OK;
	goto out;
bad:
	fprintf(stderr, "replay: %s: %s\n", o.path, msg);
out:
	if (fflush(stdout) != 0 && status == CLI_EXIT_OK) {
		fprintf(stderr, "replay: writing the frames: %s\n", strerror(errno));
		status = CLI_EXIT_FAIL;
	}
	pt_replay_destroy(r);
	free(buf);
	return status;
}
