/* Definitions in tests and benchmarks: pt_instance_def_init and friends, aborting when
 * out of memory (a test has no use for that path; the library's own tests cover it).
 * Every tdef_init pairs with a pt_instance_def_fini, so LSan sees a leak as one. */
#ifndef PT_TEST_TESTDEF_H
#define PT_TEST_TESTDEF_H

#include <stdio.h>
#include <stdlib.h>

#include "ponytail/instance.h"

static inline pt_instance_def *tdef_init(pt_instance_def *d)
{
	if (!pt_instance_def_init(d)) {
		fprintf(stderr, "out of memory\n");
		abort();
	}
	return d;
}

static inline void tdef_strands(pt_instance_def *d, int n)
{
	if (!pt_instance_def_set_strand_count(d, n)) {
		fprintf(stderr, "out of memory\n");
		abort();
	}
}

static inline void tdef_copy(pt_instance_def *dst, const pt_instance_def *src)
{
	if (!pt_instance_def_copy(dst, src)) {
		fprintf(stderr, "out of memory\n");
		abort();
	}
}

/* A heap definition, initialised; tdef_free finishes and frees it (NULL ok). */
static inline pt_instance_def *tdef_new(void)
{
	pt_instance_def *d = malloc(sizeof *d);
	if (!d) {
		fprintf(stderr, "out of memory\n");
		abort();
	}
	return tdef_init(d);
}

static inline void tdef_free(pt_instance_def *d)
{
	pt_instance_def_fini(d);
	free(d);
}

#endif
