/* A fixed team of threads that run one function together (fork-join), for stepping and
 * encoding disjoint ranges of instances inside a tick.
 *
 * Threading: pool_create/run/destroy from one thread (the sim thread), which also works
 * as worker 0 during pool_run.
 */
#ifndef SERVER_POOL_H
#define SERVER_POOL_H

typedef struct pool_t pool_t;

typedef void (*pool_fn)(void *ctx, int worker, int nworkers);

/* n workers in total (n - 1 threads are started). NULL on failure. */
pool_t *pool_create(int n);
int pool_size(const pool_t *p);

/* Runs fn(ctx, w, n) for w = 0 .. n-1 (w = 0 on the caller) and returns when all are done.
 * n_used <= pool_size: only workers below n_used run (the rest stay asleep). */
void pool_run(pool_t *p, int n_used, pool_fn fn, void *ctx);

void pool_destroy(pool_t *p); /* NULL ok; joins the threads */

#endif
