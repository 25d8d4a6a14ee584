/* `ponytail stream`: the arguments and the pose sources read ahead of the schedule
 * (a --poses file, loaded at the start; stdin, read as it comes). See stream.h. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "stream.h"

/* ---- arguments and inputs ----------------------------------------------------------------- */

int stream_parse_args(stream_t *s, int argc, char **argv)
{
	static const char *const motions[] = {"still",  "shake",  "nod", "jump",
	                                      "circle", "stress", "jog", NULL};
	const char *v, *motion = NULL;
	double amp = 0, period = 0;
	int has_amp = 0, has_period = 0, k;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if ((k = remote_flag(&s->r, argc, argv, &i, 1)) != 0) {
			if (k < 0)
				return -1;
		} else if ((k = cli_flag("stream", "--motion", argc, argv, &i, &v)) != 0) {
			if (k < 0 || cli_parse_choice("stream", "--motion", v, motions) < 0)
				return -1;
			motion = v;
		} else if ((k = cli_flag("stream", "--amplitude", argc, argv, &i, &v)) != 0) {
			if (k < 0 || cli_parse_real("stream", "--amplitude", v, 0, 180, &amp) != 0)
				return -1;
			has_amp = 1;
		} else if ((k = cli_flag("stream", "--period", argc, argv, &i, &v)) != 0) {
			if (k < 0 ||
			    cli_parse_real("stream", "--period", v, 0.01, 3600, &period) != 0)
				return -1;
			has_period = 1;
		} else if ((k = cli_flag("stream", "--poses", argc, argv, &i, &s->poses_path)) !=
		           0) {
			if (k < 0)
				return -1;
		} else if ((k = cli_flag("stream", "--room", argc, argv, &i, &s->r.room)) != 0) {
			if (k < 0 || remote_check_room("stream", "--room", s->r.room) != 0)
				return -1;
		} else if ((k = cli_switch("stream", "--loop", a)) != 0) {
			if (k < 0)
				return -1;
			s->loop = 1;
		} else if ((k = cli_switch("stream", "--stdin", a)) != 0) {
			if (k < 0)
				return -1;
			s->src = SRC_STDIN;
		} else if ((k = cli_flag("stream", "--rate", argc, argv, &i, &v)) != 0) {
			if (k < 0 || cli_parse_real("stream", "--rate", v, 1, 1000, &s->rate) != 0)
				return -1;
			s->rate_given = 1;
		} else if ((k = cli_flag("stream", "--count", argc, argv, &i, &v)) != 0) {
			if (k < 0 ||
			    cli_parse_int("stream", "--count", v, 1, 1000000000L, &s->count) != 0)
				return -1;
		} else if ((k = cli_flag("stream", "--duration", argc, argv, &i, &v)) != 0) {
			if (k < 0 ||
			    cli_parse_real("stream", "--duration", v, 1e-3, 1e6, &s->duration) != 0)
				return -1;
		} else if (a[0] == '-' && a[1] != '\0') {
			fprintf(stderr,
			        "ponytail stream: unknown flag '%s' (see ponytail stream --help)\n",
			        a);
			return -1;
		} else if (s->id) {
			fprintf(stderr, "ponytail stream: unexpected argument '%s' (one ID)\n", a);
			return -1;
		} else if (remote_parse_id("stream", a, &s->id) != 0) {
			return -1;
		}
	}
	int nsrc = (motion != NULL) + (s->poses_path != NULL) + (s->src == SRC_STDIN);
	if (!s->id || nsrc != 1) {
		fprintf(stderr, "ponytail stream: %s\n",
		        !s->id ? "missing instance ID"
		               : "give one pose source: --motion NAME, --poses FILE or --stdin");
		return -1;
	}
	if ((has_amp || has_period) && !motion) {
		fprintf(stderr, "ponytail stream: --%s needs --motion\n",
		        has_amp ? "amplitude" : "period");
		return -1;
	}
	if (s->loop && !s->poses_path) {
		fprintf(stderr, "ponytail stream: --loop needs --poses\n");
		return -1;
	}
	if (!s->r.token) {
		fprintf(stderr, "ponytail stream: needs the instance's write token: --token T (or "
		                "$PONYTAIL_TOKEN)\n");
		return -1;
	}
	if (motion) {
		s->src = SRC_MOTION;
		s->motion = pt_motion_default((pt_motion_kind)pt_motion_from_name(motion));
		if ((has_amp || has_period) && s->motion.kind == PT_MOTION_STRESS) {
			fprintf(
			    stderr,
			    "ponytail stream: --amplitude/--period: the stress motion is fixed\n");
			return -1;
		}
		pt_motion_kind kind = s->motion.kind;
		if (has_amp && kind != PT_MOTION_STILL && amp > pt_motion_amplitude_max(kind)) {
			fprintf(stderr, "ponytail stream: --amplitude: for %s, %s [0, %g]\n",
			        motion,
			        kind == PT_MOTION_JUMP     ? "peak g in"
			        : kind == PT_MOTION_CIRCLE ? "radius in metres"
			                                   : "vertical bob in metres",
			        pt_motion_amplitude_max(kind));
			return -1;
		}
		if (has_amp)
			s->motion.amplitude = (float)amp;
		if (has_period)
			s->motion.period = (float)period;
	} else if (s->poses_path) {
		s->src = SRC_FILE;
	}
	return 0;
}

int stream_load_poses(stream_t *s, double tick_hz)
{
	size_t len;
	char *text = remote_read_file("stream", s->poses_path, &len);
	if (!text)
		return -1;
	size_t cap = 0;
	long lineno = 0;
	double last_t = 0;
	for (char *p = text; p < text + len;) {
		char *e = memchr(p, '\n', (size_t)(text + len - p));
		size_t n = e ? (size_t)(e - p) : (size_t)(text + len - p);
		lineno++;
		pose_line_t pl;
		char msg[200];
		int rc = pose_line_parse(p, n, tick_hz, &pl, msg, sizeof msg);
		p += n + (e != NULL);
		if (rc == 1)
			continue;
		if (rc == 0 && pl.has_t && pl.t < last_t) {
			snprintf(msg, sizeof msg, "t: %g comes before the previous line's %g", pl.t,
			         last_t);
			rc = -1;
		}
		if (rc < 0) {
			fprintf(stderr, "ponytail stream: %s:%ld: %s\n", s->poses_path, lineno,
			        msg);
			free(text);
			return -1;
		}
		if (pl.has_t)
			last_t = pl.t;
		if (s->nlines == cap) {
			cap = cap ? 2 * cap : 256;
			pose_line_t *nl = realloc(s->lines, cap * sizeof *nl);
			if (!nl) {
				fprintf(stderr, "ponytail stream: out of memory\n");
				free(text);
				return -1;
			}
			s->lines = nl;
		}
		s->lines[s->nlines++] = pl;
	}
	free(text);
	if (s->nlines == 0) {
		fprintf(stderr, "ponytail stream: %s: no poses\n", s->poses_path);
		return -1;
	}
	return 0;
}

/* Reads what stdin has and parses whole lines into the FIFO. Never blocks: one read per
 * poll that says data is there (stdin is not switched to O_NONBLOCK, a flag the terminal
 * or pipe it shares with the shell would keep after we exit). */
int stream_read_stdin(stream_t *s, double tick_hz)
{
	while (!s->in_eof && s->f_n < FIFO) {
		struct pollfd pf = {.fd = 0, .events = POLLIN};
		if (poll(&pf, 1, 0) <= 0)
			break;
		ssize_t got = read(0, s->in + s->in_len, sizeof s->in - s->in_len);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			break;
		if (got <= 0)
			s->in_eof = 1;
		else
			s->in_len += (size_t)got;
		char *nl;
		while (s->f_n < FIFO && (nl = memchr(s->in, '\n', s->in_len)) != NULL) {
			size_t n = (size_t)(nl - s->in);
			pose_line_t pl;
			char msg[200];
			s->in_lineno++;
			int rc = pose_line_parse(s->in, n, tick_hz, &pl, msg, sizeof msg);
			memmove(s->in, nl + 1, s->in_len - n - 1);
			s->in_len -= n + 1;
			if (rc < 0) {
				fprintf(stderr, "ponytail stream: stdin:%ld: %s\n", s->in_lineno,
				        msg);
				return -1;
			}
			if (rc == 0)
				s->fifo[(s->f_head + s->f_n++) % FIFO] = pl;
		}
		if (s->in_len == sizeof s->in) {
			fprintf(stderr, "ponytail stream: stdin:%ld: line longer than %zu bytes\n",
			        s->in_lineno + 1, sizeof s->in);
			return -1;
		}
		if (s->in_eof && s->in_len > 0) { /* a last line without its newline */
			s->in[s->in_len] = '\0';
			s->in_len = 0;
			pose_line_t pl;
			char msg[200];
			int rc =
			    pose_line_parse(s->in, strlen(s->in), tick_hz, &pl, msg, sizeof msg);
			if (rc < 0) {
				fprintf(stderr, "ponytail stream: stdin:%ld: %s\n",
				        s->in_lineno + 1, msg);
				return -1;
			}
			if (rc == 0 && s->f_n < FIFO)
				s->fifo[(s->f_head + s->f_n++) % FIFO] = pl;
		}
	}
	return 0;
}
