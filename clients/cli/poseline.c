/* Parsing of pose lines (see poseline.h). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "poseline.h"
#include "ptp/proto.h"

static int numbers(const json_t *a, int n, double lim, float *out)
{
	if (!json_is_array(a) || (int)json_array_size(a) != n)
		return -1;
	for (int i = 0; i < n; i++) {
		const json_t *v = json_array_get(a, (size_t)i);
		double x = json_number_value(v);
		if (!json_is_number(v) || !isfinite(x) || fabs(x) > lim)
			return -1;
		out[i] = (float)x;
	}
	return 0;
}

/* "bones": {"chest": {"p": [x, y, z], "q": [x, y, z, w]}, ...} (protocol 1.2), checked as
 * the head's p and q are. */
static int bones(json_t *o, ptc_pose_t *pose, char *msg, size_t cap)
{
	const char *name;
	json_t *b;
	if (!o)
		return 0;
	if (!json_is_object(o) || json_object_size(o) > PTP_MAX_POSE_BONES) {
		snprintf(msg, cap,
		         "bones: expected an object of at most %d bones, {\"chest\": {\"p\": [x, y, "
		         "z], \"q\": [x, y, z, w]}, ...}",
		         PTP_MAX_POSE_BONES);
		return -1;
	}
	json_object_foreach(o, name, b)
	{
		ptp_bone_pose_t *bp = &pose->bones[pose->nbones];
		int id = ptp_bone_from_name(name);
		if (id < 0) {
			snprintf(msg, cap,
			         "bones.%.64s: not a body bone (VRM humanoid names in snake_case: "
			         "chest, upper_chest, neck, left_shoulder, ...; proto/PROTOCOL.md)",
			         name);
			return -1;
		}
		if (numbers(json_object_get(b, "p"), 3, PTP_POSE_MAX_M, bp->p) != 0) {
			snprintf(msg, cap, "bones.%s.p: expected [x, y, z] in metres, within 10 km",
			         name);
			return -1;
		}
		double l2 = 0;
		if (numbers(json_object_get(b, "q"), 4, 2, bp->q) == 0)
			l2 = (double)bp->q[0] * bp->q[0] + (double)bp->q[1] * bp->q[1] +
			     (double)bp->q[2] * bp->q[2] + (double)bp->q[3] * bp->q[3];
		if (!(l2 >= PTP_QUAT_NORM2_MIN && l2 <= PTP_QUAT_NORM2_MAX)) {
			snprintf(msg, cap,
			         "bones.%s.q: expected [x, y, z, w], a quaternion of length near 1",
			         name);
			return -1;
		}
		bp->bone = (uint8_t)id;
		pose->nbones++;
	}
	return 0;
}

int pose_line_parse(const char *line, size_t len, double tick_hz, pose_line_t *out, char *msg,
                    size_t cap)
{
	size_t k = 0;
	while (k < len && (line[k] == ' ' || line[k] == '\t' || line[k] == '\r'))
		k++;
	if (k == len)
		return 1;
	memset(out, 0, sizeof *out);
	json_error_t e;
	json_t *o = json_loadb(line, len, JSON_REJECT_DUPLICATES, &e);
	int rc = -1;
	const char *key;
	json_t *v;
	if (!o) {
		snprintf(msg, cap, "column %d: %s", e.column, e.text);
		return -1;
	}
	if (!json_is_object(o)) {
		snprintf(msg, cap, "expected a JSON object per line");
		goto out;
	}
	json_object_foreach(o, key, v)
	{
		if (strcmp(key, "t") && strcmp(key, "tick") && strcmp(key, "p") &&
		    strcmp(key, "q") && strcmp(key, "v") && strcmp(key, "w") && strcmp(key, "bones")) {
			snprintf(msg, cap, "%s: unknown field (expected t, tick, p, q, v, w, bones)",
			         key);
			goto out;
		}
	}
	const json_t *t = json_object_get(o, "t"), *tick = json_object_get(o, "tick");
	if (t && tick) {
		snprintf(msg, cap, "give t or tick, not both");
		goto out;
	}
	if (t) {
		out->t = json_number_value(t);
		if (!json_is_number(t) || !isfinite(out->t) || out->t < 0) {
			snprintf(msg, cap, "t: expected seconds >= 0");
			goto out;
		}
		out->has_t = 1;
	} else if (tick) {
		if (!json_is_integer(tick) || json_integer_value(tick) < 0 || !(tick_hz > 0)) {
			snprintf(msg, cap, "tick: expected an integer >= 0");
			goto out;
		}
		out->t = (double)json_integer_value(tick) / tick_hz;
		out->has_t = 1;
	}
	if (numbers(json_object_get(o, "p"), 3, PTP_POSE_MAX_M, out->pose.p) != 0) {
		snprintf(msg, cap, "p: expected [x, y, z] in metres, finite, within 10 km");
		goto out;
	}
	const float *q = out->pose.q;
	double l2 = 0;
	if (numbers(json_object_get(o, "q"), 4, 2, out->pose.q) == 0)
		l2 = (double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2] +
		     (double)q[3] * q[3];
	if (!(l2 >= PTP_QUAT_NORM2_MIN && l2 <= PTP_QUAT_NORM2_MAX)) {
		snprintf(msg, cap, "q: expected [x, y, z, w], a quaternion of length near 1");
		goto out;
	}
	if (json_object_get(o, "v")) {
		if (numbers(json_object_get(o, "v"), 3, 1e4, out->pose.v) != 0) {
			snprintf(msg, cap, "v: expected [vx, vy, vz] in m/s, finite");
			goto out;
		}
		out->pose.has_v = 1;
	}
	if (json_object_get(o, "w")) {
		if (numbers(json_object_get(o, "w"), 3, 1e4, out->pose.w) != 0) {
			snprintf(msg, cap, "w: expected [wx, wy, wz] in rad/s, finite");
			goto out;
		}
		out->pose.has_w = 1;
	}
	if (bones(json_object_get(o, "bones"), &out->pose, msg, cap) != 0)
		goto out;
	rc = 0;
out:
	json_decref(o);
	return rc;
}
