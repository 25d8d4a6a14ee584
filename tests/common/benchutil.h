/* Timing helpers for the benchmark programs (not for tests: tests never time). */
#ifndef PT_BENCHUTIL_H
#define PT_BENCHUTIL_H

#include <time.h>

static inline double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
