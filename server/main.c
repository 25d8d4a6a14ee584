/* ponytaild: wires the modules together and owns their lifetimes. No logic lives here.
 *
 * Start-up: configuration -> TLS credentials (tls.h) -> store -> registry + sim loaded
 * from the store -> WebSocket -> tick thread -> HTTP. Shutdown (SIGTERM/SIGINT, drain.h): readiness 503 and writes
 * refused at once, a grace period, then stop accepting HTTP, finish the requests in
 * flight, finish the tick and stop the sim, close every WebSocket with 1012, close
 * (checkpoint) the store, exit 0. Beyond --drain-timeout a watchdog exits 1.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "drain.h"
#include "instances.h"
#include "log.h"
#include "pool.h"
#include "rest.h"
#include "ws.h"

enum { POSE_INBOX = 1 << 16 };

int main(int argc, char **argv)
{
	config_t cfg;
	char err[512];
	int rc = config_load(&cfg, argc, argv, stdout, err, sizeof err);
	if (rc == CONFIG_EXIT)
		return 0;
	if (rc != CONFIG_OK) {
		fprintf(stderr, "ponytaild: %s\n", err);
		return 2;
	}
	log_set_level(cfg.log_level);
	if (cfg.workers == 0) {
		int n = pool_cpus();
		cfg.workers = n > 64 ? 64 : n;
	}
	config_log(&cfg);

	/* Signals are taken synchronously by this thread (sigwait); every thread started
	 * from here on inherits the blocked mask. */
	sigset_t sigs;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	app_t app;
	memset(&app, 0, sizeof app);
	app.cfg = &cfg;
	tls_creds_t tls;
	int tls_on = tls_load(&cfg, &tls, err, sizeof err);
	if (tls_on < 0) {
		fprintf(stderr, "ponytaild: %s\n", err);
		return 2;
	}
	app.tls = tls_on ? &tls : NULL;
	int loaded = 0, skipped = 0;
	sim_config_t sc = {.tick_hz = cfg.tick_hz,
	                   .substeps = cfg.substeps,
	                   .workers = cfg.workers,
	                   .keyframe_interval = cfg.keyframe_interval,
	                   .pin_workers = cfg.pin_workers,
	                   .realtime = cfg.realtime,
	                   .hand_hold_ms = cfg.hand_hold_ms};
	rest_t *rest = NULL;
	ws_t *ws = NULL;
	int status = 1;

	app.store = store_open(cfg.data, cfg.node_id, err, sizeof err);
	if (!app.store)
		goto fail;
	sc.first_tick = drain_first_tick(app.store);
	app.reg = registry_create();
	app.q = cmdq_create(POSE_INBOX);
	app.ring = frame_ring_create(cfg.max_instances);
	if (cfg.record_dir[0]) {
		if (cfg.record_seconds == 0) {
			snprintf(err, sizeof err, "--record %s needs --record-seconds > 0", cfg.record_dir);
			goto fail;
		}
		app.rec_disk = rec_disk_start(cfg.record_dir, cfg.tick_hz, cfg.substeps, err, sizeof err);
		if (!app.rec_disk)
			goto fail;
	}
	app.rec = rec_create(cfg.record_seconds, (size_t)cfg.record_max_mb << 20, cfg.tick_hz,
	                     cfg.substeps, app.rec_disk);
	sc.rec = app.rec;
	app.sim = app.ring && app.q && app.rec ? sim_create(&sc, app.q, app.ring) : NULL;
	if (!app.reg || !app.q || !app.ring || !app.rec || !app.sim) {
		snprintf(err, sizeof err, "out of memory");
		goto fail;
	}
	/* the rooms' winds first: each instance gets its room's as it is preloaded */
	if (instances_load_rooms(&app) != 0 || instances_load(&app, &loaded, &skipped) != 0) {
		snprintf(err, sizeof err, "cannot load the store in %s", cfg.data);
		goto fail;
	}
	LOG(LOG_INFO, "loaded %d instances from %s (%d skipped)", loaded, cfg.data, skipped);

	ws = ws_start(&app, err, sizeof err);
	if (!ws)
		goto fail;
	if (sim_start(app.sim) != 0) {
		snprintf(err, sizeof err, "cannot start the tick thread");
		goto fail;
	}
	rest = rest_start(&app, err, sizeof err);
	if (!rest)
		goto fail;
	LOG(LOG_INFO, "listening: %s://%s:%d/ %s://%s:%d/ (pid %d)", app.tls ? "https" : "http",
	    cfg.bind, app.http_port, app.tls ? "wss" : "ws", cfg.bind, app.ws_port, (int)getpid());

	int sig = drain_wait(&app, &sigs);
	LOG(LOG_INFO, "%s: shutting down", sig == SIGINT ? "SIGINT" : "SIGTERM");
	drain_begin(&app);
	rest_quiesce(rest);
	rest_stop(rest); /* requests in flight finish: the sim is still ticking */
	rest = NULL;
	status = 0;
fail:
	if (status != 0)
		fprintf(stderr, "ponytaild: %s\n", err);
	rest_stop(rest);
	sim_stop(app.sim); /* finishes its tick; queued commands fail with 503 */
	if (status == 0)
		drain_end(&app);
	ws_shutdown(ws); /* error "shutdown", close 1012 */
	store_close(app.store);
	sim_destroy(app.sim);
	rec_destroy(app.rec);
	rec_disk_stop(app.rec_disk); /* after the sim: what its last tick wrote is on disk */
	frame_ring_destroy(app.ring);
	cmdq_destroy(app.q);
	registry_destroy(app.reg);
	tls_free(&tls);
	if (status == 0)
		LOG(LOG_INFO, "stopped cleanly");
	return status;
}
