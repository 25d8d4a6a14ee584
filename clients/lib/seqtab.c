/* Publish times per (instance, seq), shared by the connections of a context: a record's
 * last_seq is looked up here to give input-to-frame latency. One ring of PTC_SEQ_RING
 * entries per instance, indexed by seq; an entry holds its seq so a stale slot is never
 * mistaken for a newer pose. */
#include <stdlib.h>
#include <string.h>

#include "ptc_internal.h"

static int seq_find(const ptc_ctx_t *ctx, uint64_t id, int *at)
{
	int lo = 0, hi = ctx->nseqs;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (ctx->seqs[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*at = lo;
	return lo < ctx->nseqs && ctx->seqs[lo]->id == id;
}

void ptc_seq_put(ptc_ctx_t *ctx, uint64_t id, uint32_t seq, int64_t t_us)
{
	int at;
	if (!seq_find(ctx, id, &at)) {
		if (ctx->nseqs == ctx->cap_seqs) {
			int cap = ctx->cap_seqs ? 2 * ctx->cap_seqs : 16;
			ptc_seqring_t **n = realloc(ctx->seqs, (size_t)cap * sizeof *n);
			if (!n)
				return; /* no latency for this instance; nothing else suffers */
			ctx->seqs = n;
			ctx->cap_seqs = cap;
		}
		ptc_seqring_t *r = calloc(1, sizeof *r);
		if (!r)
			return;
		r->id = id;
		memmove(ctx->seqs + at + 1, ctx->seqs + at,
		        (size_t)(ctx->nseqs - at) * sizeof *ctx->seqs);
		ctx->seqs[at] = r;
		ctx->nseqs++;
	}
	ptc_seqring_t *r = ctx->seqs[at];
	r->seq[seq % PTC_SEQ_RING] = seq;
	r->t_us[seq % PTC_SEQ_RING] = t_us;
}

int64_t ptc_seq_time(const ptc_ctx_t *ctx, uint64_t id, uint32_t seq)
{
	int at;
	if (!seq_find(ctx, id, &at))
		return -1;
	const ptc_seqring_t *r = ctx->seqs[at];
	unsigned k = seq % PTC_SEQ_RING;
	return r->seq[k] == seq && r->t_us[k] > 0 ? r->t_us[k] : -1;
}

void ptc_seq_free(ptc_ctx_t *ctx)
{
	for (int i = 0; i < ctx->nseqs; i++)
		free(ctx->seqs[i]);
	free(ctx->seqs);
	ctx->seqs = NULL;
	ctx->nseqs = ctx->cap_seqs = 0;
}
