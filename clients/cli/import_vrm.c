/* `ponytail import-vrm AVATAR.vrm`: a VRM avatar's spring bones as an instance definition
 * for `ponytail sim` or POST /v1/instances.
 *
 * vrm_import() is the library part (declared in vrm_springs.h): GLB and node graph
 * (vrm_gltf), the spring bones as the file has them (vrm_springs_read), then measure
 * every chain in head-local coordinates and choose what fits an instance
 * (import_vrm_chains.c), write it and the report (import_vrm_json.c). cmd_import_vrm() at
 * the end is the command around it.
 *
 * Exit status: 0 imported (approximations are listed on stderr as warnings), 1 the file
 * cannot be read or is not a valid VRM, 2 bad usage.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "import_vrm_internal.h"
#include "ponytail/schema.h"
#include "vrm_gltf.h"
#include "vrm_humanoid.h"
#include "vrm_springs.h"

/* The CLI's command table declares the entry points; tests that compile this file on its
 * own define VRM_NO_COMMANDS_H. The declaration below keeps the file self-sufficient. */
#if !defined(VRM_NO_COMMANDS_H) && defined(__has_include)
#if __has_include("commands.h")
#include "commands.h"
#endif
#endif
int cmd_import_vrm(int argc, char **argv);

/* ---- the import ---- */

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
	cv c;
	vrm_glb glb;
	json_t *inst;
	int kept;
	memset(&c, 0, sizeof c);
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

/* ---- the command ---- */

#define CMD "ponytail import-vrm"

/* Larger than any avatar (they are tens of MB); the GLB header cannot describe more than
 * 4 GiB anyway. */
#define MAX_FILE_BYTES ((size_t)1 << 30)

static void usage(FILE *to)
{
	fputs("usage: " CMD " [options] AVATAR.vrm\n"
	      "\n"
	      "Reads a VRM 1.0 or 0.x avatar (glTF binary, .vrm/.glb; '-' reads stdin) and prints\n"
	      "a \"springbone\" instance definition of its spring-bone chains and colliders,\n"
	      "in head-local coordinates, ready for `ponytail sim` or POST /v1/instances.\n"
	      "What cannot be represented exactly is listed on stderr as warnings.\n"
	      "\n"
	      "options:\n"
	      "  --report         print the import report (JSON) instead of the instance\n"
	      "  --report=FILE    also write the report to FILE\n"
	      "  --name NAME      the instance's name (default: the avatar's own)\n"
	      "  --prewarm S      prewarm_s, seconds in [0, 10] (default 1)\n"
	      "  -h, --help       this text\n"
	      "\n"
	      "exit status: 0 imported, 1 unreadable or malformed file, 2 bad usage\n",
	      to);
}

static int
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    bad_usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, CMD ": ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\nTry '" CMD " --help'.\n");
	va_end(ap);
	return 2;
}

/* Reads all of path ('-' = stdin) into a new buffer. Returns 0, or -1 with a message. */
static int read_file(const char *path, uint8_t **out, size_t *len, char *err, size_t errlen)
{
	int is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	size_t cap = 0, n = 0;
	uint8_t *buf = NULL;
	int rc = 0;
	*out = NULL;
	*len = 0;
	if (!f) {
		snprintf(err, errlen, "cannot open: %s", strerror(errno));
		return -1;
	}
	for (;;) {
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 1 << 16;
			uint8_t *p;
			if (cap >= MAX_FILE_BYTES) {
				snprintf(err, errlen, "larger than %zu bytes: not an avatar",
				         MAX_FILE_BYTES);
				rc = -1;
				break;
			}
			p = realloc(buf, ncap);
			if (!p) {
				snprintf(err, errlen, "out of memory");
				rc = -1;
				break;
			}
			buf = p;
			cap = ncap;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f)) {
				snprintf(err, errlen, "read error: %s", strerror(errno));
				rc = -1;
			}
			break;
		}
	}
	if (!is_stdin)
		fclose(f);
	if (rc) {
		free(buf);
		return -1;
	}
	*out = buf;
	*len = n;
	return 0;
}

static int write_json(json_t *j, FILE *to)
{
	/* 9 significant digits: a float's worth, without double-rounding noise. */
	return json_dumpf(j, to, JSON_INDENT(2) | JSON_REAL_PRECISION(9)) || fputc('\n', to) == EOF;
}

int cmd_import_vrm(int argc, char **argv)
{
	const char *path = NULL, *name = NULL, *report_file = NULL;
	int report_stdout = 0, options_done = 0;
	double prewarm = DEFAULT_PREWARM_S;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (options_done || a[0] != '-' || strcmp(a, "-") == 0) {
			if (path)
				return bad_usage("one avatar file at a time (got '%s' too)", a);
			path = a;
		} else if (strcmp(a, "--") == 0) {
			options_done = 1;
		} else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--report") == 0) {
			report_stdout = 1;
		} else if (strncmp(a, "--report=", 9) == 0 && a[9]) {
			report_file = a + 9;
		} else if (strcmp(a, "--name") == 0 || strncmp(a, "--name=", 7) == 0) {
			name = a[6] == '=' ? a + 7 : i + 1 < argc ? argv[++i] : NULL;
			if (!name)
				return bad_usage("%s needs a value", a);
			if (strlen(name) >= VRM_NAME_MAX)
				return bad_usage("--name '%s' is longer than 63 bytes", name);
			json_t *probe = json_string(name); /* NULL unless valid UTF-8 */
			if (!probe)
				return bad_usage("--name '%s' is not valid UTF-8", name);
			json_decref(probe);
		} else if (strcmp(a, "--prewarm") == 0 || strncmp(a, "--prewarm=", 10) == 0) {
			const char *v = a[9] == '=' ? a + 10 : i + 1 < argc ? argv[++i] : NULL;
			char *end;
			if (!v)
				return bad_usage("%s needs a value", a);
			errno = 0;
			prewarm = strtod(v, &end);
			if (end == v || *end || errno || !(prewarm >= 0 && prewarm <= 10))
				return bad_usage("--prewarm '%s': expected seconds in [0, 10]", v);
		} else {
			return bad_usage("unknown option '%s'", a);
		}
	}
	if (!path)
		return bad_usage("missing the avatar file (AVATAR.vrm)");

	char err[512];
	uint8_t *data;
	size_t len;
	if (read_file(path, &data, &len, err, sizeof err)) {
		fprintf(stderr, CMD ": %s: %s\n", path, err);
		return 1;
	}
	vrm_report report = {0};
	json_t *inst = vrm_import(data, len, &report, err, sizeof err);
	free(data);
	if (!inst) {
		fprintf(stderr, CMD ": %s: %s\n", path, err);
		return 1;
	}
	if (name)
		json_object_set_new(inst, "name", json_string(name)); /* UTF-8 checked above */
	json_object_set_new(inst, "prewarm_s", json_real(prewarm));

	const json_t *warnings = json_object_get(report.json, "warnings");
	for (size_t i = 0; i < json_array_size(warnings); i++)
		fprintf(stderr, CMD ": warning: %s\n",
		        json_string_value(json_array_get(warnings, i)));

	int rc = 0;
	if (report_file) {
		FILE *f = fopen(report_file, "w");
		if (!f || write_json(report.json, f)) {
			fprintf(stderr, CMD ": cannot write the report to %s: %s\n", report_file,
			        strerror(errno));
			rc = 1;
		}
		if (f && fclose(f) && !rc) {
			fprintf(stderr, CMD ": cannot write the report to %s: %s\n", report_file,
			        strerror(errno));
			rc = 1;
		}
	}
	if (!rc && write_json(report_stdout ? report.json : inst, stdout)) {
		fprintf(stderr, CMD ": cannot write to stdout: %s\n", strerror(errno));
		rc = 1;
	}
	fflush(stdout);
	json_decref(inst);
	vrm_report_free(&report);
	return rc;
}
