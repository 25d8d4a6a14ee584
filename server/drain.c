/* Waiting, the tick floor and the drain: see drain.h. */
#include "drain.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static const char *const FLOOR = "tick_floor";

uint64_t drain_first_tick(store_t *store)
{
	uint64_t t = 0;
	return store_meta_get_u64(store, FLOOR, &t) == 1 ? t : 0;
}

int drain_wait(app_t *app, const sigset_t *sigs)
{
	struct timespec second = {1, 0};
	for (;;) {
		uint64_t floor = sim_tick_now(app->sim, NULL) + 2 * (uint64_t)app->cfg->tick_hz;
		store_meta_set_u64(app->store, FLOOR, floor);
		int sig = sigtimedwait(sigs, NULL, &second);
		if (sig > 0)
			return sig;
		if (errno != EAGAIN && errno != EINTR)
			return SIGTERM;
	}
}

static void *watchdog(void *arg)
{
	const app_t *app = arg;
	sleep((unsigned)app->cfg->drain_timeout);
	LOG(LOG_ERROR, "shutdown took longer than --drain-timeout %d s: exiting now",
	    app->cfg->drain_timeout);
	_exit(1);
}

void drain_begin(app_t *app)
{
	pthread_t wd;
	if (pthread_create(&wd, NULL, watchdog, app) == 0)
		pthread_detach(wd);
	__atomic_store_n(&app->draining, 1, __ATOMIC_RELEASE);
	int grace_ms = app->cfg->drain_timeout * 250;
	grace_ms = grace_ms > 1000 ? 1000 : grace_ms;
	LOG(LOG_INFO, "draining: /readyz 503 and writes refused; listeners close in %d ms",
	    grace_ms);
	struct timespec ts = {grace_ms / 1000, (long)(grace_ms % 1000) * 1000000};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

void drain_end(app_t *app)
{
	store_meta_set_u64(app->store, FLOOR, sim_tick_now(app->sim, NULL) + 1);
}
