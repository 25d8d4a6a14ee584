/* Reading `ponytail sim`'s instance and pose files (see sim_input.h). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonfile.h"
#include "ponytail/schema.h"
#include "sim_input.h"

#define ERR(...) (fprintf(stderr, "ponytail sim: " __VA_ARGS__), -1)

static int print_error(const char *path, const char *prefix, const pt_error *e)
{
	if (e->field[0])
		return ERR("%s: %s%s: %s\n", path, prefix, e->field, e->message);
	return ERR("%s: %s\n", path, e->message);
}

int sim_load_instance(const char *path, pt_instance_def *def, sim_instance_file *extra)
{
	pt_error e;
	const char *prefix = "";
	memset(extra, 0, sizeof *extra);
	json_t *doc = cli_read_json_file(path, &e), *inst = doc;
	if (!doc)
		return print_error(path, "", &e);
	/* A bake file wraps the definition; its other keys (description, frames, ...) are the
	 * file's own business and ignored. */
	const json_t *wrapped = json_object_get(doc, "instance");
	if (wrapped) {
		const json_t *hz = json_object_get(doc, "tick_hz");
		const json_t *sub = json_object_get(doc, "substeps");
		const json_t *poses = json_object_get(doc, "poses");
		prefix = "instance.";
		inst = (json_t *)(uintptr_t)wrapped; /* jansson: parse only reads it */
		if (hz && (!json_is_number(hz) || !(json_number_value(hz) >= 1.0) ||
		           json_number_value(hz) > 1000.0)) {
			json_decref(doc);
			return ERR("%s: tick_hz: expected a number in [1, 1000]\n", path);
		}
		if (sub && (!json_is_integer(sub) || json_integer_value(sub) < 1 ||
		            json_integer_value(sub) > 16)) {
			json_decref(doc);
			return ERR("%s: substeps: expected an integer in [1, 16]\n", path);
		}
		if (poses && !json_is_array(poses)) {
			json_decref(doc);
			return ERR("%s: poses: expected an array of pose objects\n", path);
		}
		extra->tick_hz = hz ? json_number_value(hz) : 0.0;
		extra->substeps = sub ? (int)json_integer_value(sub) : 0;
		extra->poses = poses ? json_incref((json_t *)(uintptr_t)poses) : NULL;
	}
	int rc = pt_schema_parse(inst, def, NULL, &e);
	json_decref(doc);
	if (rc) {
		sim_instance_file_free(extra);
		return print_error(path, prefix, &e);
	}
	return 0;
}

void sim_instance_file_free(sim_instance_file *f)
{
	json_decref(f->poses);
	f->poses = NULL;
}

/* --- poses ---------------------------------------------------------------------------- */

static int num_array(const json_t *v, double *out, size_t n)
{
	if (!json_is_array(v) || json_array_size(v) != n)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const json_t *x = json_array_get(v, i);
		if (!json_is_number(x) || !isfinite(json_number_value(x)) ||
		    fabs(json_number_value(x)) > 1e6)
			return -1;
		out[i] = json_number_value(x);
	}
	return 0;
}

/* "bones": {"chest": {"p": [x, y, z], "q": [x, y, z, w]}, ...}: world poses of body bones
 * (core/SCHEMA.md "Body bones"), each held by the sim until the next line that has it. */
static int parse_bones(const json_t *o, sim_poses *ps, sim_pose *out, char *msg, size_t cap)
{
	const char *name;
	json_t *b;
	out->nbones = 0;
	out->bone_at = ps->nbone;
	if (!o)
		return 0;
	if (!json_is_object(o) || json_object_size(o) > SIM_MAX_BONES)
		return snprintf(msg, cap,
		                "bones: expected an object of at most %d bones (every body bone once), "
		                "{\"chest\": {\"p\": [x, y, z], \"q\": [x, y, z, w]}, ...}",
		                SIM_MAX_BONES),
		       -1;
	if (ps->bone_cap - ps->nbone < SIM_MAX_BONES) {
		size_t nc = ps->bone_cap ? 2 * ps->bone_cap : 1024;
		pt_bone *nb = realloc(ps->bone, nc * sizeof *nb);
		if (nb)
			ps->bone = nb;
		pt_pose *np = nb ? realloc(ps->bone_pose, nc * sizeof *np) : NULL;
		if (!np)
			return snprintf(msg, cap, "out of memory"), -1;
		ps->bone_pose = np;
		ps->bone_cap = nc;
	}
	json_object_foreach((json_t *)(uintptr_t)o, name, b)
	{
		double p[3], q[4];
		int bone = pt_bone_from_name(name);
		if (bone < 0)
			return snprintf(msg, cap, "bones.%.64s: not a body bone (VRM humanoid names in snake_case: "
			                "hips, spine, chest, ..., right_little_distal; core/SCHEMA.md)",
			                name),
			       -1;
		if (!json_is_object(b) || num_array(json_object_get(b, "p"), p, 3) ||
		    fabs(p[0]) > 1e4 || fabs(p[1]) > 1e4 || fabs(p[2]) > 1e4)
			return snprintf(msg, cap, "bones.%s.p: expected [x, y, z] in metres, within 10 km",
			                name),
			       -1;
		double n2 = 0;
		if (num_array(json_object_get(b, "q"), q, 4) == 0)
			n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
		if (!(n2 >= 0.25 && n2 <= 4.0))
			return snprintf(msg, cap,
			                "bones.%s.q: expected [x, y, z, w], a quaternion of length near 1",
			                name),
			       -1;
		double n = sqrt(n2);
		size_t k = out->bone_at + (size_t)out->nbones++;
		ps->bone[k] = (pt_bone)bone;
		ps->bone_pose[k].p = pt_v3((float)p[0], (float)p[1], (float)p[2]);
		ps->bone_pose[k].q = (pt_quat){(float)(q[0] / n), (float)(q[1] / n),
		                               (float)(q[2] / n), (float)(q[3] / n)};
	}
	ps->nbone += (size_t)out->nbones; /* kept: append() takes the line or the load fails */
	return 0;
}

/* One pose object; on error writes "field: message" into msg and returns -1. */
static int parse_pose(const json_t *o, double tick_hz, sim_poses *ps, sim_pose *out, char *msg,
                      size_t cap)
{
	double p[3], q[4];
	const char *key;
	json_t *v;
	if (!json_is_object(o))
		return snprintf(msg, cap, "expected a pose object {\"t\", \"p\", \"q\"}"), -1;
	json_object_foreach((json_t *)(uintptr_t)o, key, v)
	{
		if (strcmp(key, "t") && strcmp(key, "tick") && strcmp(key, "p") && strcmp(key, "q") &&
		    strcmp(key, "v") && strcmp(key, "w") && strcmp(key, "bones"))
			return snprintf(msg, cap,
			                "%s: unknown field (expected t, tick, p, q, v, w, bones)", key),
			       -1;
	}
	const json_t *t = json_object_get(o, "t"), *tick = json_object_get(o, "tick");
	if (t) {
		if (!json_is_number(t) || !(json_number_value(t) >= 0.0) ||
		    json_number_value(t) > 1e9)
			return snprintf(msg, cap, "t: expected a time in seconds >= 0"), -1;
		out->t = json_number_value(t);
	} else if (tick) {
		if (!json_is_integer(tick) || json_integer_value(tick) < 0)
			return snprintf(msg, cap, "tick: expected an integer >= 0"), -1;
		out->t = (double)json_integer_value(tick) / tick_hz;
	} else {
		return snprintf(msg, cap, "t: missing (the pose's time in seconds)"), -1;
	}
	if (!json_object_get(o, "p") || num_array(json_object_get(o, "p"), p, 3))
		return snprintf(msg, cap, "p: expected [x, y, z] in metres"), -1;
	if (!json_object_get(o, "q") || num_array(json_object_get(o, "q"), q, 4))
		return snprintf(msg, cap, "q: expected a quaternion [x, y, z, w]"), -1;
	double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
	if (!(n > 1e-6))
		return snprintf(msg, cap, "q: must not be zero"), -1;
	out->pose.p = pt_v3((float)p[0], (float)p[1], (float)p[2]);
	out->pose.q.x = (float)(q[0] / n);
	out->pose.q.y = (float)(q[1] / n);
	out->pose.q.z = (float)(q[2] / n);
	out->pose.q.w = (float)(q[3] / n);
	/* v (m/s, world) and w (rad/s, world axes): the head is extrapolated from this pose
	 * until the next, for at most PT_EXTRAPOLATE_MAX_S */
	static const char *const motion_keys[2] = {"v", "w"};
	static const char *const motion_units[2] = {"m/s", "rad/s"};
	out->moving = 0;
	out->v = out->w = pt_v3(0, 0, 0);
	for (int k = 0; k < 2; k++) {
		const json_t *x = json_object_get(o, motion_keys[k]);
		double a[3];
		if (!x)
			continue;
		if (num_array(x, a, 3) || sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]) > 100.0)
			return snprintf(msg, cap, "%s: expected [x, y, z] in %s, length at most 100",
			                motion_keys[k], motion_units[k]),
			       -1;
		*(k ? &out->w : &out->v) = pt_v3((float)a[0], (float)a[1], (float)a[2]);
		out->moving = 1;
	}
	return parse_bones(json_object_get(o, "bones"), ps, out, msg, cap);
}

static int append(sim_poses *ps, const sim_pose *p, char *msg, size_t cap)
{
	if (ps->n > 0 && p->t < ps->v[ps->n - 1].t)
		return snprintf(msg, cap, "t: %g comes before the previous pose's %g", p->t,
		                ps->v[ps->n - 1].t),
		       -1;
	if (ps->n == ps->cap) {
		size_t nc = ps->cap ? 2 * ps->cap : 256;
		sim_pose *nv = realloc(ps->v, nc * sizeof *nv);
		if (!nv)
			return snprintf(msg, cap, "out of memory"), -1;
		ps->v = nv;
		ps->cap = nc;
	}
	ps->v[ps->n++] = *p;
	return 0;
}

int sim_load_pose_array(const char *path, const json_t *arr, double tick_hz, sim_poses *out)
{
	char msg[200];
	for (size_t i = 0; i < json_array_size(arr); i++) {
		sim_pose p;
		if (parse_pose(json_array_get(arr, i), tick_hz, out, &p, msg, sizeof msg) ||
		    append(out, &p, msg, sizeof msg))
			return ERR("%s: poses[%zu].%s\n", path, i, msg);
	}
	if (out->n == 0)
		return ERR("%s: poses: no poses\n", path);
	return 0;
}

/* JSON lines: every non-blank line one pose object. */
static int load_lines(const char *path, const char *buf, double tick_hz, sim_poses *out)
{
	char msg[200];
	long line = 0;
	for (const char *s = buf; *s;) {
		const char *e = strchr(s, '\n');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		line++;
		if (strspn(s, " \t\r") < len) {
			json_error_t je;
			sim_pose p;
			json_t *o = json_loadb(s, len, JSON_REJECT_DUPLICATES, &je);
			if (!o)
				return ERR("%s:%ld:%d: %s\n", path, line, je.column, je.text);
			int rc = parse_pose(o, tick_hz, out, &p, msg, sizeof msg) ||
			         append(out, &p, msg, sizeof msg);
			json_decref(o);
			if (rc)
				return ERR("%s:%ld: %s\n", path, line, msg);
		}
		s += len + (e ? 1 : 0);
	}
	if (out->n == 0)
		return ERR("%s: no poses\n", path);
	return 0;
}

int sim_load_pose_file(const char *path, double tick_hz, sim_poses *out)
{
	size_t len = 0;
	json_error_t je;
	char *buf = cli_read_file(path, &len);
	if (!buf)
		return ERR("%s: cannot open: %s\n", path, strerror(errno));
	int rc;
	/* One JSON document (a bake file or a single pose), or else JSON lines. A document
	 * whose first line is not a complete JSON value is not JSON lines: report its own
	 * syntax error rather than line 1's. */
	json_t *doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	const char *first = buf + strspn(buf, " \t\r\n");
	size_t first_len = strcspn(first, "\n");
	json_error_t je1;
	json_t *line1 = doc ? NULL : json_loadb(first, first_len, 0, &je1);
	if (doc && json_is_object(doc) && json_object_get(doc, "poses")) {
		const json_t *arr = json_object_get(doc, "poses");
		rc = json_is_array(arr)
		         ? sim_load_pose_array(path, arr, tick_hz, out)
		         : ERR("%s: poses: expected an array of pose objects\n", path);
	} else if (doc || line1) {
		rc = load_lines(path, buf, tick_hz, out);
	} else {
		rc = ERR("%s:%d:%d: %s\n", path, je.line, je.column, je.text);
	}
	json_decref(doc);
	json_decref(line1);
	free(buf);
	return rc;
}

pt_pose sim_poses_at(sim_poses *p, double t)
{
	if (p->use_motion)
		return pt_motion_pose(&p->motion, t);
	/* Pose times and tick times are computed differently (k / hz vs k * (1 / hz)): allow a
	 * nanosecond of slack so a pose stamped for a tick is used at that tick. */
	double slack = 1e-9 * (t > 1.0 ? t : 1.0);
	while (p->cursor + 1 < p->n && p->v[p->cursor + 1].t <= t + slack)
		p->cursor++;
	return p->v[p->cursor].pose;
}

const sim_pose *sim_poses_record(const sim_poses *p)
{
	return p->use_motion || p->n == 0 ? NULL : &p->v[p->cursor];
}

void sim_poses_free(sim_poses *p)
{
	free(p->v);
	free(p->bone);
	free(p->bone_pose);
	p->v = NULL;
	p->bone = NULL;
	p->bone_pose = NULL;
	p->n = p->cap = p->nbone = p->bone_cap = 0;
}
