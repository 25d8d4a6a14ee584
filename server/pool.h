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

/* n workers in total (n - 1 threads are started). NULL on failure. pin (n > 1): thread i
 * (0 = the caller, see pool_bind_caller) is bound to the i-th CPU of the process's
 * affinity set, modulo its size (pool.c says why); a bind that fails is logged and the
 * thread left to the scheduler. */
pool_t *pool_create(int n, int pin);
int pool_size(const pool_t *p);

/* Binds the calling thread, which runs worker 0 in pool_run, to its CPU (no-op unpinned). */
void pool_bind_caller(pool_t *p);

/* No more pool_run until the next tick: workers polling for one sleep now instead of
 * after POOL_SPIN_NS (pool.c). The next pool_run wakes them as usual. */
void pool_rest(pool_t *p);

/* Puts the calling thread (worker 0) and every worker under SCHED_FIFO at `priority`
 * (1-99), or back to normal scheduling (0). All or none: 0 on success, else the errno of
 * the refusal (EPERM without CAP_SYS_NICE) with every thread left at normal scheduling. */
int pool_set_realtime(pool_t *p, int priority);

/* The CPU thread `index` is bound to, -1 when the pool is not pinned. */
int pool_cpu_of(const pool_t *p, int index);

/* CPUs this process may run on (its affinity set: taskset, a container's cpuset), >= 1. */
int pool_cpus(void);

/* Runs fn(ctx, w, n) for w = 0 .. n-1 (w = 0 on the caller) and returns when all are done.
 * n_used <= pool_size: only workers below n_used run (the rest stay asleep). */
void pool_run(pool_t *p, int n_used, pool_fn fn, void *ctx);

void pool_destroy(pool_t *p); /* NULL ok; joins the threads */

/* Guided self-scheduling of [0, count) among `workers` threads that share *next (0 before
 * pool_run): takes the next piece, (count - *next) / (2 * workers) items clamped to
 * [min_piece, max_piece], and returns 1 with it in [*begin, *end), or 0 when none is left.
 * Every item is taken exactly once over all callers; pieces shrink towards the end, so
 * the workers finish within a small piece of each other. */
int pool_take_piece(int *next, int count, int workers, int min_piece, int max_piece,
                    int *begin, int *end);

#endif
