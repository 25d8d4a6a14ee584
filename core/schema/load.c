/* Reading JSON text (from memory: core does no I/O, the callers read files) with errors a
 * person can act on, and naming core's validation errors by the JSON path the user wrote. */
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

/* --- core field names -> JSON paths ------------------------------------------------- */

/* pt_instance_validate() names fields by their JSON paths already, with one exception it
 * cannot know about: a joint's value ("strands[S].springbone.KEY[J]", "...KEY[J].SUB" for
 * a limit) may have been written as that per-joint array entry, as the strand's single
 * value, or as the top-level springbone default. Name the place the user wrote. */
static int joint_field(const json_t *doc, const char *f, char *out, size_t cap)
{
	int s, j = -1, n = 0;
	char key[24] = "", sub[24] = "";
	if (sscanf(f, "strands[%d].springbone.%23[a-z_]%n", &s, key, &n) != 2)
		return 0;
	for (const char *p = f + n; *p;) { /* "[J]" and ".SUB", in either order */
		int m = 0;
		if (j < 0 && sscanf(p, "[%d]%n", &j, &m) == 1 && m > 0)
			p += m;
		else if (!sub[0] && sscanf(p, ".%23[a-z_]%n", sub, &m) == 1 && m > 0)
			p += m;
		else
			return 0;
	}
	if (j < 0)
		return 0;
	char tail[32] = "";
	if (sub[0])
		snprintf(tail, sizeof tail, ".%s", sub);
	const json_t *strand = json_array_get(json_object_get(doc, "strands"), (size_t)s);
	const json_t *v = json_object_get(json_object_get(strand, "springbone"), key);
	int per_joint = json_is_array(v) &&
	                (strcmp(key, "gravity_dir") != 0 || json_is_array(json_array_get(v, 0)));
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
	if (!joint_field(doc, core_field, out, cap))
		snprintf(out, cap, "%s", core_field);
}

void pt_schema_message_from_core(const char *core_field, const char *msg, char *out, size_t cap)
{
	/* Core repeats its field name in the message ("x.y: must be ..."); we report the
	 * field separately, under its JSON name. */
	size_t n = strlen(core_field);
	if (n > 0 && strncmp(msg, core_field, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ')
		msg += n + 2;
	snprintf(out, cap, "%s", msg);
}
