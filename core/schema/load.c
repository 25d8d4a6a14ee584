/* Reading JSON text with errors a person can act on, and naming core's validation errors
 * by the JSON path the user wrote. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema_internal.h"

static void set_err(pt_error *err, const char *msg)
{
	if (!err)
		return;
	err->ok = 0;
	err->field[0] = '\0';
	snprintf(err->message, sizeof err->message, "%s", msg);
}

static void syntax_err(pt_error *err, const json_error_t *je)
{
	char msg[sizeof err->message];
	if (!err)
		return;
	if (je->line > 0)
		snprintf(msg, sizeof msg, "line %d, column %d: %s", je->line, je->column, je->text);
	else
		snprintf(msg, sizeof msg, "%s", je->text);
	set_err(err, msg);
}

json_t *pt_schema_read_file(const char *path, pt_error *err)
{
	json_error_t je;
	/* Open it ourselves: jansson's message for a missing file does not keep errno. */
	FILE *f = fopen(path, "rb");
	if (!f) {
		char msg[sizeof err->message];
		snprintf(msg, sizeof msg, "cannot open: %s", strerror(errno));
		set_err(err, msg);
		return NULL;
	}
	json_t *j = json_loadf(f, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
	fclose(f);
	if (!j)
		syntax_err(err, &je);
	else if (err)
		err->ok = 1;
	return j;
}

json_t *pt_schema_read_buffer(const char *buf, size_t len, pt_error *err)
{
	json_error_t je;
	json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
	if (!j)
		syntax_err(err, &je);
	else if (err)
		err->ok = 1;
	return j;
}

int pt_schema_load_file(const char *path, pt_instance_def *out, const char *const *extra_keys,
                        pt_error *err)
{
	json_t *j = pt_schema_read_file(path, err);
	if (!j)
		return -1;
	int rc = pt_schema_parse(j, out, extra_keys, err);
	json_decref(j);
	return rc;
}

/* --- core field names -> JSON paths ------------------------------------------------- */

/* Renames of a dotted tail between the C struct and JSON, for core names that follow the
 * C struct rather than the JSON form. */
static const struct {
	const char *core, *json;
} renames[] = {
    {"verlet.stretch_stiffness", "verlet.stretch.stiffness"},
    {"verlet.stretch_max_strain", "verlet.stretch.max_strain"},
    {"springbone.center_head", "springbone.center"},
    {"mass_root", "mass.root"},
    {"mass_tip", "mass.tip"},
    {"collider_mask", "colliders"},
    {"strand_count", "strands"},
    {"collider_count", "colliders"},
};

static void rename_tail(const char *s, char *out, size_t cap)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < sizeof renames / sizeof renames[0]; i++) {
		size_t k = strlen(renames[i].core);
		if (n >= k && strcmp(s + n - k, renames[i].core) == 0 &&
		    (n == k || s[n - k - 1] == '.')) {
			snprintf(out, cap, "%.*s%s", (int)(n - k), s, renames[i].json);
			return;
		}
	}
	snprintf(out, cap, "%s", s);
}

/* Core names joint j's field "strands[S].springbone.KEY[.SUB][J]" (or with "joints[J]."
 * as in the C struct). The user wrote it in one of three places: the strand's per-joint
 * array, the strand's single value, or the top-level springbone default. Name that one. */
static int joint_field(const json_t *doc, const char *f, char *out, size_t cap)
{
	int s, j, n = 0;
	char key[24] = "", sub[24] = "";
	if (sscanf(f, "strands[%d].springbone.%23[a-z_]%n", &s, key, &n) == 2) {
		const char *p = f + n;
		int m = 0;
		if (sscanf(p, ".%23[a-z_]%n", sub, &m) == 1)
			p += m;
		if (sscanf(p, "[%d]%n", &j, &m) != 1 || p[m] != '\0')
			return 0;
	} else if (sscanf(f, "strands[%d].joints[%d].%23[a-z_]%n", &s, &j, key, &n) == 3 &&
	           f[n] == '\0') {
		static const char *const limit_fields[][2] = {
		    {"limit", "type"}, {"limit_angle", "angle_deg"}, {"limit_axis", "axis"}};
		for (size_t i = 0; i < 3; i++)
			if (strcmp(key, limit_fields[i][0]) == 0) {
				snprintf(sub, sizeof sub, "%s", limit_fields[i][1]);
				snprintf(key, sizeof key, "limit");
			}
	} else {
		return 0;
	}
	char tail[32] = "";
	if (sub[0])
		snprintf(tail, sizeof tail, ".%s", sub);
	const json_t *strand = json_array_get(json_object_get(doc, "strands"), (size_t)s);
	const json_t *v = json_object_get(json_object_get(strand, "springbone"), key);
	int per_joint = json_is_array(v) && (strcmp(key, "gravity_dir") != 0 ||
	                                     json_is_array(json_array_get(v, 0)));
	if (v && per_joint)
		snprintf(out, cap, "strands[%d].springbone.%s[%d]%s", s, key, j, tail);
	else if (v)
		snprintf(out, cap, "strands[%d].springbone.%s%s", s, key, tail);
	else
		snprintf(out, cap, "springbone.%s%s", key, tail);
	return 1;
}

void pt_schema_field_from_core(const json_t *doc, const char *core_field, char *out, size_t cap)
{
	int c;
	if (joint_field(doc, core_field, out, cap))
		return;
	/* A plane keeps its point in `center`; the JSON calls it "point". */
	if (sscanf(core_field, "colliders[%d].center", &c) == 1) {
		const json_t *col = json_array_get(json_object_get(doc, "colliders"), (size_t)c);
		const char *shape = json_string_value(json_object_get(col, "shape"));
		const char *rest = strstr(core_field, ".center") + strlen(".center");
		if (shape && strcmp(shape, "plane") == 0) {
			snprintf(out, cap, "colliders[%d].point%s", c, rest);
			return;
		}
	}
	rename_tail(core_field, out, cap);
}

void pt_schema_message_from_core(const char *core_field, const char *msg, char *out, size_t cap)
{
	/* Core may repeat its field name in the message ("x.y: must be ..."); we report the
	 * field separately, under its JSON name. */
	size_t n = strlen(core_field);
	if (n > 0 && strncmp(msg, core_field, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
		msg += n + 2;
	snprintf(out, cap, "%s", msg);
}
