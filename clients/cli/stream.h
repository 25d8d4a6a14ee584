/* `ponytail stream`, private: the run's state, shared by stream.c (the session: callbacks,
 * the publishing schedule, the report, the command) and stream_input.c (the arguments
 * and the pose sources: a --poses file, stdin). */
#ifndef PONYTAIL_CLI_STREAM_H
#define PONYTAIL_CLI_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "hist.h"
#include "ponytail/motion.h"
#include "ponytail_client.h"
#include "poseline.h"
#include "remote.h"

enum { SRC_NONE, SRC_MOTION, SRC_FILE, SRC_STDIN, FIFO = 256 };

typedef struct stream_t {
	remote_t r;
	unsigned long long id;
	int src, loop, rate_given;
	const char *poses_path;
	char room[PTP_MAX_NAME + 1]; /* the instance's room (routing), from GET */
	pt_motion motion;
	double rate, duration;
	long count;
	pose_line_t *lines; /* --poses */
	size_t nlines;
	/* --stdin: a line buffer and a FIFO of parsed poses */
	char in[65536];
	size_t in_len;
	long in_lineno;
	int in_eof;
	pose_line_t fifo[FIFO];
	int f_head, f_n;
	/* the session */
	ptc_conn_t *c;
	int fatal;
	char fatal_msg[1024];
	long sent, dropped;
	uint32_t first_seq, last_seq, applied;
	int have_applied;
	hist_t lat;
	uint64_t rate_errors;
} stream_t;

/* Parses the command line into s (s->r, the pose source, rate, limits); 0, or -1 with
 * the reason printed. */
int stream_parse_args(stream_t *s, int argc, char **argv);
/* Reads s->poses_path into s->lines (t from "tick" with tick_hz); 0, or -1 printed. */
int stream_load_poses(stream_t *s, double tick_hz);
/* Moves what stdin has (never blocking) into s->fifo as parsed poses; 0, or -1 printed
 * on a bad line. */
int stream_read_stdin(stream_t *s, double tick_hz);

#endif
