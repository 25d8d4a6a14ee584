/* The simulation thread: sole owner of the pt_world.
 *
 * Every tick, on an absolute deadline (clock_nanosleep TIMER_ABSTIME on CLOCK_MONOTONIC,
 * so there is no drift): apply the queued commands (cmdq.h, from instances.c), apply the newest head pose
 * of every instance (client poses from the inbox, or the instance's driver), step every
 * instance (spread over the worker pool when there are many), encode each instance's
 * frame record once (proto's strand codec, shared by every subscriber), publish the frame
 * set and instance events (frame_ring.h), then complete the commands. A tick whose work
 * ends after the next deadline is an overrun: counted and logged, and the next tick starts
 * at once (a schedule more than 5 ticks behind is re-anchored, also logged).
 *
 * Ids: the sim maps each public id (the store's) to a core pt_id and a sim slot; neither
 * leaves this module except as the frame set's slot layout.
 *
 * Threading: sim_create/sim_preload/sim_start/sim_stop/sim_destroy from the main thread
 * (preload before start); sim_tick_now from any thread.
 */
#ifndef SERVER_SIM_H
#define SERVER_SIM_H

#include <stdint.h>

#include "cmdq.h"
#include "driver.h"
#include "frame_ring.h"
#include "record.h"
#include "ponytail/instance.h"

typedef struct sim_config_t {
	int tick_hz;           /* usually 60 */
	int substeps;          /* usually 4 */
	int workers;           /* >= 1 */
	int keyframe_interval; /* ticks */
	uint64_t first_tick;   /* the tick before the first one: numbering continues across
	                        * restarts (main.c keeps a floor in the store) */
	int pin_workers;       /* 1: the tick thread and each worker on a CPU of its own
	                        * (pool.h); 0: the scheduler places them */
	int realtime;          /* 1-99: SCHED_FIFO priority of the tick thread and workers
	                        * while the ticks keep up; 0: normal scheduling */
	rec_t *rec;            /* the recordings (record.h), borrowed; NULL: none kept */
	int hand_hold_ms;      /* a hand bone pose is fresh this long (sim_touch.c; 0: 250) */
} sim_config_t;

typedef struct sim_t sim_t;

/* q and ring are borrowed and must outlive the sim. NULL on failure. */
sim_t *sim_create(const sim_config_t *cfg, cmdq_t *q, frame_ring_t *ring);

/* Adds an instance before the thread starts (the store's contents at start-up). def must
 * have passed pt_instance_validate; ia: its touch and grab grants (NULL: the defaults).
 * Returns 0, or -1 when out of memory. */
int sim_preload(sim_t *s, uint64_t id, const pt_instance_def *def, const driver_t *driver,
                const interact_t *ia);

/* Sets a room's wind before the thread starts (the store's rooms at start-up, before the
 * instances: each is given its room's as it is preloaded). The zones must have passed
 * pt_wind_zones_validate. Returns 0, or -1 when out of memory. */
int sim_preload_wind(sim_t *s, const char *room, const pt_wind_zone *z, int n);

/* Starts the tick thread. Returns 0 or -1. */
int sim_start(sim_t *s);

/* Finishes the tick in progress, fails every queued command with CMD_CLOSED, joins. */
void sim_stop(sim_t *s);

void sim_destroy(sim_t *s); /* NULL ok; after sim_stop */

/* Newest completed tick (0 before the first) and the monotonic time it completed, ns. */
uint64_t sim_tick_now(const sim_t *s, int64_t *completed_ns);

/* CLOCK_MONOTONIC now, ns; and CLOCK_REALTIME now, us. */
int64_t sim_mono_ns(void);
int64_t sim_wall_us(void);

#endif
