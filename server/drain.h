/* The daemon's life between start-up and exit: waiting for the stop signal while keeping
 * the tick-number floor in the store, and the graceful drain that follows.
 *
 * Tick numbers continue across restarts (PROTOCOL.md, "Ticks across restarts"): the store
 * keeps a floor, meta "tick_floor", which is always ahead of every tick served — written
 * once a second as the current tick + 2 s of ticks, and as the last tick + 1 at a clean
 * exit — and the sim starts from it. After kill -9 numbering jumps ahead by up to 2 s;
 * it never goes back.
 *
 * Threading: main thread only.
 */
#ifndef SERVER_DRAIN_H
#define SERVER_DRAIN_H

#include <signal.h>
#include <stdint.h>

#include "app.h"

/* The tick the sim starts after (0 for a new store). */
uint64_t drain_first_tick(store_t *store);

/* Blocks until one of sigs arrives, raising the floor once a second. Returns the signal. */
int drain_wait(app_t *app, const sigset_t *sigs);

/* Starts the drain: /readyz answers 503 and writes are refused ("shutting down") at once,
 * and a watchdog exits 1 if the whole shutdown takes more than --drain-timeout. Then
 * holds for the grace period (a quarter of --drain-timeout, at most 1 s) so that probes
 * and load balancers see the 503 before the listeners close. */
void drain_begin(app_t *app);

/* After the sim has stopped: the final floor (last tick + 1). */
void drain_end(app_t *app);

#endif
