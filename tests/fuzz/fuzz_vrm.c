/* libFuzzer target: the VRM/glTF importer (vrm_import(), ponytail/vrm_import.h: the
 * schema library's core/schema/vrm/, linked in by tests/fuzz/fuzz.mk) on arbitrary bytes,
 * as `ponytail import-vrm` and the daemon's POST /v1/import/vrm give it a file.
 *
 * An input that starts with the GLB magic "glTF" is the file itself; any other input is
 * taken as the JSON chunk and wrapped into a GLB here (mutating JSON text finds far more
 * of the importer than mutating the binary container), with a BIN chunk of as many bytes
 * as the last input byte says. Beyond "never crash, never read outside the input" it
 * checks: what the importer produces is a definition the schema accepts and validates
 * (the importer clamps and warns rather than emit something the daemon would refuse). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ponytail/schema.h"
#include "ponytail/vrm_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16),
	p[3] = (uint8_t)(v >> 24);
}

/* data as the JSON chunk of a GLB with a BIN chunk of bin_len zero bytes. */
static uint8_t *wrap(const uint8_t *data, size_t size, size_t bin_len, size_t *len)
{
	size_t jp = (size + 3) & ~(size_t)3, bp = (bin_len + 3) & ~(size_t)3;
	size_t total = 12 + 8 + jp + (bin_len ? 8 + bp : 0);
	uint8_t *b = calloc(total, 1);
	if (!b)
		return NULL;
	memcpy(b, "glTF", 4);
	put32(b + 4, 2);
	put32(b + 8, (uint32_t)total);
	put32(b + 12, (uint32_t)jp);
	put32(b + 16, 0x4E4F534A);
	memcpy(b + 20, data, size);
	memset(b + 20 + size, ' ', jp - size);
	if (bin_len) {
		put32(b + 20 + jp, (uint32_t)bp);
		put32(b + 24 + jp, 0x004E4942);
	}
	*len = total;
	return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *glb = NULL;
	size_t len = size;
	if (size < 4 || memcmp(data, "glTF", 4) != 0) {
		glb = wrap(data, size, size ? data[size - 1] : 0, &len);
		if (!glb)
			return 0;
	}
	vrm_report report = {0};
	char err[512];
	json_t *inst = vrm_import(glb ? glb : data, len, &report, err, sizeof err);
	free(glb);
	if (getenv("FUZZ_VERBOSE")) /* for writing seeds: what each one reaches */
		fprintf(stderr, "%s\n", inst ? "imported" : err);
	if (inst) {
		static pt_instance_def d; /* initialised once, reused */
		static int have_def;
		pt_error e;
		if (!have_def && !(have_def = pt_instance_def_init(&d)))
			abort();
		pt_error v = pt_schema_parse(inst, &d, NULL, &e) != 0 ? e : pt_instance_validate(&d);
		if (!v.ok) {
			fprintf(stderr, "the importer wrote an invalid definition: %s\n", v.message);
			abort(); /* ... which the daemon would refuse */
		}
		json_decref(inst);
	}
	vrm_report_free(&report);
	return 0;
}
