/* Latency histograms (see hist.h). */
#include <string.h>

#include "hist.h"

void hist_clear(hist_t *h)
{
	memset(h, 0, sizeof *h);
}

static int bucket(int64_t us)
{
	if (us < 10 * HIST_FINE)
		return (int)(us / 10);
	int64_t ms = us / 1000; /* >= 100 */
	return ms - 100 < HIST_COARSE ? HIST_FINE + (int)(ms - 100) : HIST_BUCKETS - 1;
}

static double upper_edge(int b)
{
	if (b < HIST_FINE)
		return (b + 1) * 10.0;
	return (b - HIST_FINE + 101) * 1000.0;
}

void hist_add(hist_t *h, int64_t us)
{
	if (us < 0)
		return;
	h->b[bucket(us)]++;
	h->n++;
	h->sum_us += (double)us;
	if (us > h->max_us)
		h->max_us = us;
}

void hist_merge(hist_t *into, const hist_t *from)
{
	for (int i = 0; i < HIST_BUCKETS; i++)
		into->b[i] += from->b[i];
	into->n += from->n;
	into->sum_us += from->sum_us;
	if (from->max_us > into->max_us)
		into->max_us = from->max_us;
}

double hist_pct(const hist_t *h, double p)
{
	if (h->n == 0)
		return -1;
	/* The rank of the sample at or above p % of all samples (nearest-rank method). */
	uint64_t rank = (uint64_t)(p / 100.0 * (double)h->n + 0.999999);
	if (rank < 1)
		rank = 1;
	if (rank > h->n)
		rank = h->n;
	uint64_t cum = 0;
	for (int i = 0; i < HIST_BUCKETS; i++) {
		cum += h->b[i];
		if (cum >= rank) {
			double e = i == HIST_BUCKETS - 1 ? (double)h->max_us : upper_edge(i);
			return e < (double)h->max_us ? e : (double)h->max_us;
		}
	}
	return (double)h->max_us;
}
