/* libFuzzer target: the instance-definition parser and validator (core/schema) on
 * arbitrary bytes, as the daemon's POST body and the CLI's files reach them.
 *
 * Beyond "never crash, never read outside the input" it checks: a definition that parses
 * and validates dumps to JSON that parses and validates again to the same definition (the
 * canonical form round-trips), and stepping it briefly under a moving head keeps every
 * point finite (the ranges exclude what makes a solver non-finite; prewarm and the step
 * count are capped to keep executions fast). */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ponytail/schema.h"
#include "ponytail/world.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int finite_points(pt_world *w, pt_id id)
{
	static pt_vec3 p[PT_MAX_JOINTS];
	int n = pt_world_read_points(w, id, p, PT_MAX_JOINTS);
	for (int i = 0; i < n; i++)
		if (!isfinite(p[i].x) || !isfinite(p[i].y) || !isfinite(p[i].z))
			return 0;
	return n > 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static pt_instance_def d, d2; /* initialised once, reused: reachable, not leaked */
	static int have_defs;
	static pt_world *w;
	pt_error e;
	if (!have_defs && !(have_defs = pt_instance_def_init(&d) && pt_instance_def_init(&d2)))
		abort();
	json_t *j = pt_schema_read_buffer((const char *)data, size, &e);
	if (!j)
		return 0;
	int ok = json_is_object(j) && pt_schema_parse(j, &d, NULL, &e) == 0;
	json_decref(j);
	pt_error v = ok ? pt_instance_validate(&d) : e;
	if (getenv("FUZZ_VERBOSE")) /* for writing seeds: what each one reaches */
		fprintf(stderr, "%s\n", ok && v.ok ? "valid" : v.message);
	if (!ok || !v.ok)
		return 0;

	json_t *dump = pt_schema_dump(&d);
	char *text = dump ? json_dumps(dump, PT_SCHEMA_DUMP_FLAGS) : NULL;
	json_decref(dump);
	if (!text)
		abort();
	json_t *again = pt_schema_read_buffer(text, strlen(text), &e);
	if (!again || pt_schema_parse(again, &d2, NULL, &e) != 0 || !pt_instance_validate(&d2).ok)
		abort(); /* the canonical form of a valid definition must be valid */
	json_decref(again);
	json_t *dump2 = pt_schema_dump(&d2);
	char *text2 = dump2 ? json_dumps(dump2, PT_SCHEMA_DUMP_FLAGS) : NULL;
	json_decref(dump2);
	if (!text2 || strcmp(text, text2) != 0)
		abort(); /* ... and the same definition */
	free(text);
	free(text2);

	if (!w)
		w = pt_world_create(NULL);
	d.prewarm_s = d.prewarm_s < 0.05f ? d.prewarm_s : 0.05f;
	pt_pose head = {pt_v3(0, 1.5f, 0), pt_quat_identity()};
	pt_id id = pt_world_create_instance(w, &d, head);
	if (pt_id_is_null(id))
		abort();
	for (int t = 0; t < 8; t++) {
		head.p.x += (t & 1) ? 0.4f : -0.3f;
		head.q = (pt_quat){0.0f, (t & 2) ? 0.38f : -0.2f, 0.0f, 0.93f};
		pt_world_set_head(w, id, head);
		pt_world_step(w, 1.0f / 60.0f, 4);
	}
	if (!finite_points(w, id))
		abort(); /* a valid definition went non-finite */
	pt_world_destroy_instance(w, id);
	return 0;
}
