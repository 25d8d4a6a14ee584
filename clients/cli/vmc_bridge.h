/* The state of one `ponytail vmc` run, shared by vmc.c (sockets, publishing, the loop)
 * and vmc_out.c (status lines, --hair-out). */
#ifndef PONYTAIL_CLI_VMC_BRIDGE_H
#define PONYTAIL_CLI_VMC_BRIDGE_H

#include <stdint.h>
#include <sys/socket.h>

#include "hist.h"
#include "ponytail_client.h"
#include "remote.h"
#include "vmc.h"

/* A UDP address from a [HOST:]PORT flag. */
typedef struct udp_addr_t {
	const char *spec;
	struct sockaddr_storage sa;
	socklen_t len;
} udp_addr_t;

typedef struct bridge_t {
	remote_t r;
	unsigned long long id;
	const char *create, *listen, *forward, *hair_out;
	double duration;
	udp_addr_t listen_a, forward_a, hair_a;
	char token_buf[160], room[PTP_MAX_NAME + 1];
	int fd, fwd_fd, hair_fd; /* UDP: bound to --listen; connected to the targets */
	unsigned char buf[65536];
	vmc_state st;
	ptc_conn_t *c;
	int fatal;
	char fatal_msg[1200];
	/* results */
	vmc_xf head; /* the last pose published, ours */
	int have_head;
	int bones; /* body bones in the last pose published */
	double frame_head[7]; /* the head of the last frame: p, q */
	uint64_t poses, not_published, forwarded, forward_errors, frames, rate_errors;
	uint64_t hair_bundles, hair_errors;
	int64_t last_publish_us;
	hist_t lat, lat_all; /* input-to-frame latency: this second, and since start */
	/* status: the counters at the last line */
	int64_t prev_us, t0_us;
	uint64_t prev_packets, prev_poses;
} bridge_t;

/* vmc_out.c: a status line (stderr) or JSON line (stdout, --json) for the second that
 * just ended; `last`: the final one. */
void bridge_status_begin(bridge_t *b, int64_t now_us);
void bridge_status(bridge_t *b, int64_t now_us, int last);

/* vmc_out.c: the frame's joints as /VMC/Thru/ponytail/Bone/Pos messages to --hair-out. */
void vmc_hair_send(bridge_t *b, const ptp_shape_t *shape, const float *xyz, size_t n);

#endif
