/* vrm_import() (ponytail/vrm_import.h): a VRM avatar in memory as an instance definition.
 *
 * GLB and node graph (vrm_gltf), the spring bones as the file has them
 * (vrm_springs_read), then measure every chain in head-local coordinates and choose what
 * fits an instance (vrm_import_chains.c), write it and the report (vrm_import_json.c).
 * Reading the file is the caller's: `ponytail import-vrm` (clients/cli/import_vrm.c) and
 * the daemon (server/instances_avatar.c).
 */
#include <stdio.h> /* snprintf only: core does no I/O */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ponytail/schema.h"
#include "ponytail/vrm_import.h"
#include "vrm_gltf.h"
#include "vrm_humanoid.h"
#include "vrm_import_internal.h"
#include "vrm_springs.h"

void vrm_report_free(vrm_report *report)
{
	if (!report)
		return;
	json_decref(report->json);
	report->json = NULL;
	report->warning_count = 0;
}

static void cv_free(cv *c)
{
	free(c->st);
	free(c->use);
	free(c->moving);
	free(c->bone_of_node);
	vrm_springs_free(&c->s);
	vrm_graph_free(&c->g);
	vrm_diag_free(&c->d);
	json_decref(c->doc);
}

json_t *vrm_import(const uint8_t *data, size_t len, vrm_report *report, char *err, size_t errlen)
{
	return vrm_import_max(data, len, VRM_MAX_STRANDS, report, err, errlen);
}

json_t *vrm_import_max(const uint8_t *data, size_t len, int max_strands, vrm_report *report,
                       char *err, size_t errlen)
{
	cv c;
	vrm_glb glb;
	json_t *inst;
	int kept;
	memset(&c, 0, sizeof c);
	c.max_strands = max_strands < 1 ? 1 : max_strands > VRM_MAX_STRANDS ? VRM_MAX_STRANDS
	                                                                    : max_strands;
	snprintf(c.drop_strands, sizeof c.drop_strands, "over the %d-strand limit", c.max_strands);
	report->json = NULL;
	report->warning_count = 0;
	if (vrm_diag_init(&c.d)) {
		vrm_fail(err, errlen, "out of memory");
		goto fail;
	}
	if (vrm_glb_parse(data, len, &glb, err, errlen) ||
	    !(c.doc = vrm_glb_json(&glb, err, errlen)) ||
	    vrm_graph_load(c.doc, glb.bin ? glb.bin_len : 0, &c.g, err, errlen) ||
	    vrm_springs_read(c.doc, &c.g, &c.s, &c.d, err, errlen))
		goto fail;
	if (glb.trailing)
		vrm_note(&c.d, "%zu bytes after the GLB's declared length are ignored",
		         glb.trailing);
	if (c.g.views_past_length)
		vrm_warn(&c.d,
		         "buffer 0 declares %zu bytes but the GLB's BIN chunk holds %zu: %d buffer "
		         "view%s past the declared length %s read from the chunk, as three.js "
		         "does (%s%s)",
		         c.g.buffer0_length, glb.bin_len, c.g.views_past_length,
		         c.g.views_past_length == 1 ? "" : "s",
		         c.g.views_past_length == 1 ? "is" : "are",
		         c.g.views_past_length == 1 ? "" : "first: ", c.g.first_past_length);
	c.st = calloc((size_t)c.s.nchains + 1, sizeof *c.st);
	c.use = calloc((size_t)c.s.ncolliders + 1, sizeof *c.use);
	c.moving = calloc((size_t)c.g.count + 1, 1);
	c.bone_of_node = calloc((size_t)c.g.count + 1, 1);
	if (!c.st || !c.use || !c.moving || !c.bone_of_node) {
		vrm_fail(err, errlen, "out of memory");
		goto fail;
	}
	vrm_humanoid_read(c.doc, c.s.v1, c.s.head, c.g.count, c.bone_of_node);
	vrm_cv_set_frame(&c);
	vrm_cv_cut_shared(&c);
	for (int i = 0; i < c.s.nchains; i++)
		vrm_cv_measure(&c, i);
	for (int i = 0; i < c.s.nchains; i++)
		if (!c.st[i].drop)
			vrm_cv_check_branching(&c, i);
	kept = vrm_cv_choose_strands(&c);
	if (kept == 0) {
		if (c.s.nchains == 0)
			vrm_fail(err, errlen, "no spring-bone chains: the file defines none");
		else
			vrm_fail(err, errlen, "no spring-bone chain could be imported (%s: %s)",
			         c.s.chains[0].source, c.st[0].drop);
		goto fail;
	}
	vrm_cv_order_branches(&c);
	vrm_cv_choose_colliders(&c);
	inst = vrm_cv_build_instance(&c);
	/* Whatever the file says (a bone 20 m from the head, say), never emit a definition the
	 * daemon would refuse: found by tests/fuzz/fuzz_vrm.c. */
	pt_instance_def *def = malloc(sizeof *def);
	pt_error e = {0};
	int have = def && pt_instance_def_init(def);
	if (!have || pt_schema_parse(inst, def, NULL, &e) != 0 ||
	    !(e = pt_instance_validate(def)).ok) {
		vrm_fail(err, errlen, "the avatar does not fit an instance definition (%s)",
		         have ? e.message : "out of memory");
		pt_instance_def_fini(def);
		free(def);
		json_decref(inst);
		goto fail;
	}
	pt_instance_def_fini(def);
	free(def);
	report->json = vrm_cv_build_report(&c, len);
	vrm_diag_flush(&c.d);
	report->warning_count = (int)json_array_size(c.d.warnings);
	json_object_set(report->json, "notes", c.d.notes);
	json_object_set(report->json, "warnings", c.d.warnings);
	cv_free(&c);
	return inst;
fail:
	cv_free(&c);
	return NULL;
}
