/* Latency histograms in fixed memory: 10 us buckets up to 100 ms, 1 ms buckets up to 10 s,
 * one overflow bucket. Percentiles are exact to the bucket (10 us where it matters); the
 * maximum is kept exactly. Used by stream, watch and load. */
#ifndef PONYTAIL_CLI_HIST_H
#define PONYTAIL_CLI_HIST_H

#include <stdint.h>

enum { HIST_FINE = 10000, HIST_COARSE = 9900, HIST_BUCKETS = HIST_FINE + HIST_COARSE + 1 };

typedef struct hist_t {
	uint64_t n;
	int64_t max_us;
	double sum_us;
	uint32_t b[HIST_BUCKETS];
} hist_t;

void hist_clear(hist_t *h);
void hist_add(hist_t *h, int64_t us); /* negative samples are ignored */
void hist_merge(hist_t *into, const hist_t *from);

/* The p-th percentile (p in [0, 100]) in us: the upper edge of the bucket holding it
 * (the exact maximum for the top sample); -1 when empty. */
double hist_pct(const hist_t *h, double p);

#endif
