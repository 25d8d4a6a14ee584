/* Worker pool: see pool.h. A generation counter under one mutex: workers sleep until the
 * generation changes, run their share, and the last one to finish signals the caller.
 * A tick runs three of these back to back (drivers, step, encode) with little between
 * them, and on a shared machine a sleeping thread's wake-up can take far longer than the
 * gap: so a worker that finished first polls the generation for up to POOL_SPIN_NS
 * before it sleeps, and the caller polls `pending` as long before it waits. Between ticks
 * (milliseconds) everyone sleeps. gen and pending are written under the mutex and read
 * atomically outside it.
 *
 * POOL_SPIN_NS is 1 ms, not the 50 us of before: on this VM a CPU that idled even briefly
 * between the drivers' pass and the step ran its share slowly (the same 4,000-instance
 * step on two bound threads, the tick's rhythm, four alternating rounds: 4.3-5.3 ms
 * polling 50 us, 3.4-4.0 ms polling 1 ms, 3.4-3.9 ms never sleeping; one thread
 * 5.8-7.5 ms). It costs at most 1 ms of one CPU per pool_run that nothing follows (6 % of
 * a CPU at 60 Hz), and only ticks with PARALLEL_MIN instances or more use the pool; the
 * tick thread calls pool_rest after its last run of the tick, which ends the poll at once
 * (under --realtime a polling worker would keep the WebSocket thread's fan-out off its
 * CPU).
 *
 * Placement (pool.h, pin): each thread is bound to its own CPU of the process's affinity
 * set. Unbound, Linux queues a worker woken by the tick thread on the tick thread's own
 * CPU (wake-affine: the other CPU sat idle between ticks) and moves it only at the next
 * load balance, a scheduler tick (4 ms at HZ 250) later: measured with the tick's rhythm
 * (a step of 4,000 instances every 16.7 ms), one of the two started 4.2 ms late in most
 * ticks and two workers stepped no faster than one (5.77 vs 5.78 ms); bound, 3.30 ms. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setaffinity_np, sched_getaffinity, CPU_* */
#endif
#include "pool.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

enum { POOL_SPIN_NS = 1000000 }; /* 1 ms */

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Polls *v until it differs from `was`, *stop or *rest is set, or POOL_SPIN_NS pass; 1 when
 * it changed (or stop/rest was set). */
static int spin_while(const unsigned long *v, unsigned long was, const int *stop,
                      const int *rest)
{
	int64_t end = now_ns() + POOL_SPIN_NS;
	for (int i = 0;; i++) {
		if (__atomic_load_n(v, __ATOMIC_ACQUIRE) != was || __atomic_load_n(stop, __ATOMIC_ACQUIRE))
			return 1;
		if (__atomic_load_n(rest, __ATOMIC_ACQUIRE))
			return 0;
		relax();
		if ((i & 63) == 63 && now_ns() > end)
			return 0;
	}
}

typedef struct worker_t {
	pool_t *p;
	int index;
	pthread_t th;
} worker_t;

enum { POOL_MAX_CPUS = 1024 };

struct pool_t {
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	unsigned long gen;     /* atomic reads outside mu */
	unsigned long pending; /* atomic reads outside mu */
	int n, n_used, stop;
	int rest;                 /* pool_rest: no more runs this tick, sleep now (atomic) */
	int ncpus;                /* 0 = not pinned */
	short cpu[POOL_MAX_CPUS]; /* the affinity set's CPUs, thread i on cpu[i % ncpus] */
	pool_fn fn;
	void *ctx;
	worker_t *w;
};

/* The CPUs this process may run on (taskset, a container's cpuset), in order. */
static int allowed_cpus(short *cpu, int max)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return 0;
	int n = 0;
	for (int c = 0; c < CPU_SETSIZE && n < max; c++)
		if (CPU_ISSET(c, &set))
			cpu[n++] = (short)c;
	return n;
}

int pool_cpus(void)
{
	short cpu[POOL_MAX_CPUS];
	int n = allowed_cpus(cpu, POOL_MAX_CPUS);
	return n > 0 ? n : 1;
}

static void bind_thread(const pool_t *p, int index)
{
	if (p->ncpus == 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(p->cpu[index % p->ncpus], &set);
	int rc = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	if (rc != 0)
		LOG(LOG_WARN, "worker %d: could not bind to CPU %d (%s): the scheduler places it",
		    index, p->cpu[index % p->ncpus], strerror(rc));
}

void pool_bind_caller(pool_t *p)
{
	bind_thread(p, 0);
}

void pool_rest(pool_t *p)
{
	__atomic_store_n(&p->rest, 1, __ATOMIC_RELEASE);
}

int pool_set_realtime(pool_t *p, int priority)
{
	struct sched_param sp = {.sched_priority = priority};
	int policy = priority > 0 ? SCHED_FIFO : SCHED_OTHER;
	int rc = pthread_setschedparam(pthread_self(), policy, &sp);
	for (int i = 1; i < p->n && rc == 0; i++)
		rc = pthread_setschedparam(p->w[i].th, policy, &sp);
	if (rc != 0 && priority > 0) { /* all or none */
		struct sched_param normal = {.sched_priority = 0};
		pthread_setschedparam(pthread_self(), SCHED_OTHER, &normal);
		for (int i = 1; i < p->n; i++)
			pthread_setschedparam(p->w[i].th, SCHED_OTHER, &normal);
	}
	return rc;
}

int pool_cpu_of(const pool_t *p, int index)
{
	return p->ncpus ? p->cpu[index % p->ncpus] : -1;
}

static void *worker_main(void *arg)
{
	worker_t *w = arg;
	pool_t *p = w->p;
	unsigned long seen = 0;
	bind_thread(p, w->index);
	pthread_mutex_lock(&p->mu);
	for (;;) {
		if (p->gen == seen && !p->stop) {
			pthread_mutex_unlock(&p->mu);
			spin_while(&p->gen, seen, &p->stop, &p->rest);
			pthread_mutex_lock(&p->mu);
		}
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
		__atomic_store_n(&p->pending, p->pending - 1, __ATOMIC_RELEASE);
		if (p->pending == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

pool_t *pool_create(int n, int pin)
{
	pool_t *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	p->n = n < 1 ? 1 : n;
	if (pin && p->n > 1)
		p->ncpus = allowed_cpus(p->cpu, POOL_MAX_CPUS);
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
	__atomic_store_n(&p->rest, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&p->pending, (unsigned long)(n_used - 1), __ATOMIC_RELEASE);
	__atomic_store_n(&p->gen, p->gen + 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&p->go);
	pthread_mutex_unlock(&p->mu);
	fn(ctx, 0, n_used);
	if (__atomic_load_n(&p->pending, __ATOMIC_ACQUIRE) > 0) {
		static const int never = 0;
		unsigned long left = __atomic_load_n(&p->pending, __ATOMIC_ACQUIRE);
		while (left > 0 && spin_while(&p->pending, left, &never, &never))
			left = __atomic_load_n(&p->pending, __ATOMIC_ACQUIRE);
	}
	pthread_mutex_lock(&p->mu);
	while (p->pending > 0)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

int pool_take_piece(int *next, int count, int workers, int min_piece, int max_piece,
                    int *begin, int *end)
{
	int b = __atomic_load_n(next, __ATOMIC_RELAXED);
	for (;;) {
		if (b >= count)
			return 0;
		int size = (count - b) / (2 * (workers > 0 ? workers : 1));
		size = size < min_piece ? min_piece : size > max_piece ? max_piece : size;
		if (size < 1)
			size = 1;
		if (__atomic_compare_exchange_n(next, &b, b + size, 0, __ATOMIC_RELAXED,
		                                __ATOMIC_RELAXED)) {
			*begin = b;
			*end = b + size < count ? b + size : count;
			return 1;
		}
	}
}

void pool_destroy(pool_t *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	__atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
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
