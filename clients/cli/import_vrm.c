/* `ponytail import-vrm AVATAR.vrm`: a VRM avatar's spring bones as an instance definition
 * for `ponytail sim` or POST /v1/instances.
 *
 * The command around vrm_import() (ponytail/vrm_import.h, the schema library's importer,
 * core/schema/vrm/, which the daemon runs too): it reads the file, imports it from memory
 * and prints the definition or the report, and the warnings on stderr.
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

#include "ponytail/types.h"
#include "ponytail/vrm_import.h"

/* The CLI's command table declares the entry points; tests that compile this file on its
 * own define VRM_NO_COMMANDS_H. The declaration below keeps the file self-sufficient. */
#if !defined(VRM_NO_COMMANDS_H) && defined(__has_include)
#if __has_include("commands.h")
#include "commands.h"
#endif
#endif
int cmd_import_vrm(int argc, char **argv);

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
	      "  --length L       springbone.length: three-vrm (default: each tail at the\n"
	      "                   length @pixiv/three-vrm measures, so the hair matches a\n"
	      "                   three-vrm client's) or rest (VRMC_springBone's rest length)\n"
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
	double prewarm = VRM_IMPORT_PREWARM_S;
	const char *length = NULL;

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
			if (strlen(name) >= PT_NAME_MAX)
				return bad_usage("--name '%s' is longer than 63 bytes", name);
			json_t *probe = json_string(name); /* NULL unless valid UTF-8 */
			if (!probe)
				return bad_usage("--name '%s' is not valid UTF-8", name);
			json_decref(probe);
		} else if (strcmp(a, "--length") == 0 || strncmp(a, "--length=", 9) == 0) {
			length = a[8] == '=' ? a + 9 : i + 1 < argc ? argv[++i] : NULL;
			if (!length)
				return bad_usage("%s needs a value", a);
			if (strcmp(length, "three-vrm") != 0 && strcmp(length, "rest") != 0)
				return bad_usage("--length '%s': expected three-vrm or rest", length);
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
	if (length)
		json_object_set_new(json_object_get(inst, "springbone"), "length",
		                    json_string(length));

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
