/* Worker pool: see pool.h. A generation counter under one mutex: workers sleep until the
 * generation changes, run their share, and the last one to finish signals the caller. Two
 * condition-variable handoffs per tick cost microseconds, far below a tick. */
#include "pool.h"

#include <pthread.h>
#include <stdlib.h>

#include "log.h"

typedef struct worker_t {
	pool_t *p;
	int index;
	pthread_t th;
} worker_t;

struct pool_t {
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	unsigned long gen;
	int n, n_used, pending, stop;
	pool_fn fn;
	void *ctx;
	worker_t *w;
};

static void *worker_main(void *arg)
{
	worker_t *w = arg;
	pool_t *p = w->p;
	unsigned long seen = 0;
	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (p->gen == seen && !p->stop)
			pthread_cond_wait(&p->go, &p->mu);
		if (p->stop)
			break;
		seen = p->gen;
		if (w->index >= p->n_used)
			continue;
		pool_fn fn = p->fn;
		void *ctx = p->ctx;
		int n = p->n_used;
		pthread_mutex_unlock(&p->mu);
		fn(ctx, w->index, n);
		pthread_mutex_lock(&p->mu);
		if (--p->pending == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

pool_t *pool_create(int n)
{
	pool_t *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->n = n < 1 ? 1 : n;
	p->w = calloc((size_t)p->n, sizeof *p->w);
	if (!p->w) {
		free(p);
		return NULL;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->go, NULL);
	pthread_cond_init(&p->done, NULL);
	for (int i = 1; i < p->n; i++) {
		p->w[i].p = p;
		p->w[i].index = i;
		if (pthread_create(&p->w[i].th, NULL, worker_main, &p->w[i]) != 0) {
			LOG(LOG_WARN, "could start only %d of %d workers", i, p->n);
			p->n = i;
			break;
		}
	}
	return p;
}

int pool_size(const pool_t *p)
{
	return p->n;
}

void pool_run(pool_t *p, int n_used, pool_fn fn, void *ctx)
{
	if (n_used > p->n)
		n_used = p->n;
	if (n_used <= 1) {
		fn(ctx, 0, 1);
		return;
	}
	pthread_mutex_lock(&p->mu);
	p->fn = fn;
	p->ctx = ctx;
	p->n_used = n_used;
	p->pending = n_used - 1;
	p->gen++;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	fn(ctx, 0, n_used);
	pthread_mutex_lock(&p->mu);
	while (p->pending > 0)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

void pool_destroy(pool_t *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	for (int i = 1; i < p->n; i++)
		pthread_join(p->w[i].th, NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->go);
	pthread_cond_destroy(&p->done);
	free(p->w);
	free(p);
}
