/* Head poses as JSON lines (clients/README.md "Pose lines"): {"t": s, "p": [x, y, z], "q": [x, y,
 * z, w]}, optionally "tick": k instead of "t" (t = k / tick_hz), "v": [..] (m/s),
 * "w": [..] (rad/s) and "bones": {"chest": {"p": [..], "q": [..]}, ...} (body-bone world
 * poses, protocol 1.2). Used by `ponytail stream --poses / --stdin`. */
#ifndef PONYTAIL_CLI_POSELINE_H
#define PONYTAIL_CLI_POSELINE_H

#include <stddef.h>

#include "ponytail_client.h"

typedef struct pose_line_t {
	double t; /* seconds; meaningful when has_t */
	int has_t;
	ptc_pose_t pose;
} pose_line_t;

/* Parses one line (len bytes, need not be NUL-terminated). 0, 1 for a blank line, or -1
 * with the reason in msg ("p: expected ..."). Checks: known fields only; p finite within
 * 10 km; q finite with |q|^2 in [0.25, 4]; t finite and >= 0; tick an integer >= 0. */
int pose_line_parse(const char *line, size_t len, double tick_hz, pose_line_t *out, char *msg,
                    size_t cap);

#endif
