/* The worker pool (server/pool.c): fork-join runs every worker below n_used exactly once
 * per pool_run and returns after all of them; workers at or above n_used stay out; with
 * pin, the caller and each worker run on the CPU pool_cpu_of names, distinct CPUs when the
 * process may use several (the fix for two workers stacked on one CPU); without pin the
 * pool names none; pool_take_piece hands out every item of a range exactly once, alone
 * and shared by racing workers, in pieces within their bounds that never grow;
 * pool_set_realtime moves every thread to SCHED_FIFO and back, or (refused) leaves every
 * one at normal scheduling. Nothing here is timed. */
#define _GNU_SOURCE /* sched_getcpu; server/pool.c binds threads with the GNU calls */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "../../server/pool.c"

int log_min_level = LOG_WARN;
void log_emit(int level, const char *file, const char *fmt, ...)
{
	(void)level, (void)file, (void)fmt;
}

enum { MAXW = 8, RUNS = 200 };

typedef struct run_t {
	int calls[MAXW]; /* per worker index, over all runs (each written by its own thread) */
	int cpu[MAXW];   /* sched_getcpu() in the worker's latest call */
	int n_seen[MAXW];
	int bad_index;
} run_t;

static void count_fn(void *ctx, int w, int n)
{
	run_t *r = ctx;
	if (w < 0 || w >= MAXW) {
		__atomic_store_n(&r->bad_index, 1, __ATOMIC_RELAXED);
		return;
	}
	r->calls[w]++;
	r->n_seen[w] = n;
	r->cpu[w] = sched_getcpu();
}

static void test_fork_join_runs_each_worker_once(void **state)
{
	(void)state;
	for (int pin = 0; pin <= 1; pin++) {
		pool_t *p = pool_create(4, pin);
		assert_non_null(p);
		assert_int_equal(pool_size(p), 4);
		run_t r;
		memset(&r, 0, sizeof r);
		for (int k = 0; k < RUNS; k++) {
			pool_run(p, 4, count_fn, &r);
			/* joined: every worker's call of this run is already counted */
			for (int w = 0; w < 4; w++)
				assert_int_equal(r.calls[w], k + 1);
			if (k % 3 == 0)
				pool_rest(p); /* the next run wakes the resting workers all the same */
		}
		memset(&r, 0, sizeof r);
		for (int k = 0; k < RUNS; k++)
			pool_run(p, 2, count_fn, &r);
		assert_int_equal(r.calls[0], RUNS);
		assert_int_equal(r.calls[1], RUNS);
		assert_int_equal(r.calls[2], 0); /* at or above n_used: not run */
		assert_int_equal(r.calls[3], 0);
		assert_int_equal(r.n_seen[0], 2);
		assert_int_equal(r.n_seen[1], 2);
		assert_int_equal(r.bad_index, 0);
		pool_destroy(p);
	}
}

static void test_one_worker_runs_on_caller(void **state)
{
	(void)state;
	pool_t *p = pool_create(1, 1);
	assert_non_null(p);
	assert_int_equal(pool_cpu_of(p, 0), -1); /* nothing to place apart */
	run_t r;
	memset(&r, 0, sizeof r);
	pool_run(p, 3, count_fn, &r); /* n_used beyond the pool: clamped */
	assert_int_equal(r.calls[0], 1);
	assert_int_equal(r.n_seen[0], 1);
	assert_int_equal(r.calls[1], 0);
	pool_destroy(p);
}

static void test_unpinned_names_no_cpu(void **state)
{
	(void)state;
	pool_t *p = pool_create(2, 0);
	assert_non_null(p);
	assert_int_equal(pool_cpu_of(p, 0), -1);
	assert_int_equal(pool_cpu_of(p, 1), -1);
	pool_destroy(p);
}

/* Runs on its own thread, so binding the caller does not pin the test runner. */
static void *pinned_body(void *arg)
{
	run_t *r = arg;
	pool_t *p = pool_create(2, 1);
	if (!p)
		return NULL;
	pool_bind_caller(p);
	int want0 = pool_cpu_of(p, 0), want1 = pool_cpu_of(p, 1);
	for (int k = 0; k < 50; k++) {
		pool_run(p, 2, count_fn, r);
		if (r->cpu[0] != want0 || r->cpu[1] != want1)
			r->bad_index = 100 + k; /* ran off its CPU */
	}
	r->n_seen[2] = want0, r->n_seen[3] = want1;
	pool_destroy(p);
	return r;
}

static void test_pinned_threads_on_distinct_cpus(void **state)
{
	(void)state;
	int n = pool_cpus();
	cpu_set_t set;
	assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
	assert_int_equal(n, CPU_COUNT(&set));
	if (n < 2)
		skip(); /* one CPU: nothing to place apart */
	run_t r;
	memset(&r, 0, sizeof r);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, pinned_body, &r), 0);
	void *ret = NULL;
	pthread_join(th, &ret);
	assert_non_null(ret);
	assert_int_equal(r.bad_index, 0);
	assert_int_equal(r.calls[0], 50);
	assert_int_equal(r.calls[1], 50);
	int c0 = r.n_seen[2], c1 = r.n_seen[3];
	assert_true(c0 >= 0 && CPU_ISSET(c0, &set));
	assert_true(c1 >= 0 && CPU_ISSET(c1, &set));
	assert_int_not_equal(c0, c1);
}

static void test_pieces_cover_range_once(void **state)
{
	(void)state;
	static unsigned char seen[5000];
	for (int count = 0; count <= 5000; count += count < 100 ? 1 : 97)
		for (int workers = 1; workers <= 8; workers++) {
			memset(seen, 0, sizeof seen);
			int next = 0, b, e, last = 1 << 30, expect = 0;
			while (pool_take_piece(&next, count, workers, 32, 256, &b, &e)) {
				assert_int_equal(b, expect); /* alone: consecutive */
				assert_true(e > b && e <= count);
				int size = e - b;
				assert_true(size <= 256);
				assert_true(size >= 32 || e == count); /* only the tail is short */
				assert_true(size <= last);             /* guided: never grows */
				int want = (count - b) / (2 * workers);
				want = want < 32 ? 32 : want > 256 ? 256 : want;
				assert_int_equal(size, want < count - b ? want : count - b);
				last = size;
				for (int i = b; i < e; i++)
					seen[i]++;
				expect = e;
			}
			assert_int_equal(expect, count);
			for (int i = 0; i < count; i++)
				assert_int_equal(seen[i], 1);
		}
}

typedef struct share_t {
	int next, count;
	int hits[20000]; /* atomic increments */
	int pieces[MAXW];
} share_t;

static void take_fn(void *ctx, int w, int n)
{
	share_t *sh = ctx;
	int b, e;
	while (pool_take_piece(&sh->next, sh->count, n, 1, 64, &b, &e)) {
		for (int i = b; i < e; i++)
			__atomic_fetch_add(&sh->hits[i], 1, __ATOMIC_RELAXED);
		sh->pieces[w]++;
	}
}

static void test_pieces_shared_by_workers(void **state)
{
	(void)state;
	pool_t *p = pool_create(4, 0);
	assert_non_null(p);
	share_t *sh = calloc(1, sizeof *sh);
	assert_non_null(sh);
	for (int round = 0; round < 50; round++) {
		memset(sh, 0, sizeof *sh);
		sh->count = 20000 - round * 37;
		pool_run(p, 4, take_fn, sh);
		assert_int_equal(sh->next >= sh->count, 1);
		for (int i = 0; i < sh->count; i++)
			assert_int_equal(sh->hits[i], 1);
		for (int i = sh->count; i < 20000; i++)
			assert_int_equal(sh->hits[i], 0);
	}
	free(sh);
	pool_destroy(p);
}

typedef struct policy_t {
	int policy[MAXW];
	int prio[MAXW];
} policy_t;

static void policy_fn(void *ctx, int w, int n)
{
	(void)n;
	policy_t *r = ctx;
	struct sched_param sp;
	pthread_getschedparam(pthread_self(), &r->policy[w], &sp);
	r->prio[w] = sp.sched_priority;
}

static void *realtime_body(void *arg)
{
	int *out = arg; /* [0] rc of the switch, [1..] checks: 1 = as expected */
	pool_t *p = pool_create(3, 0);
	if (!p)
		return NULL;
	policy_t r;
	memset(&r, 0, sizeof r);
	out[0] = pool_set_realtime(p, 3);
	pool_run(p, 3, policy_fn, &r);
	for (int w = 0; w < 3; w++)
		out[1 + w] = out[0] == 0 ? r.policy[w] == SCHED_FIFO && r.prio[w] == 3
		                         : r.policy[w] == SCHED_OTHER; /* all or none */
	if (out[0] == 0) {
		out[4] = pool_set_realtime(p, 0);
		memset(&r, 0xff, sizeof r);
		pool_run(p, 3, policy_fn, &r);
		for (int w = 0; w < 3; w++)
			out[5 + w] = r.policy[w] == SCHED_OTHER && r.prio[w] == 0;
	} else {
		out[4] = 0;
		out[5] = out[6] = out[7] = 1;
	}
	pool_destroy(p);
	return out;
}

static void test_realtime_all_or_none(void **state)
{
	(void)state;
	int out[8];
	memset(out, 0, sizeof out);
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, realtime_body, out), 0);
	void *ret = NULL;
	pthread_join(th, &ret);
	assert_non_null(ret);
	if (out[0] != 0)
		assert_int_equal(out[0], EPERM); /* the only expected refusal */
	for (int i = 1; i < 8; i++)
		assert_int_equal(out[i], i == 4 ? 0 : 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fork_join_runs_each_worker_once),
	    cmocka_unit_test(test_one_worker_runs_on_caller),
	    cmocka_unit_test(test_unpinned_names_no_cpu),
	    cmocka_unit_test(test_pinned_threads_on_distinct_cpus),
	    cmocka_unit_test(test_pieces_cover_range_once),
	    cmocka_unit_test(test_pieces_shared_by_workers),
	    cmocka_unit_test(test_realtime_all_or_none),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
