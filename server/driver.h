/* Built-in head motions as bots: an instance whose definition has
 *
 *   "driver": {"motion": "shake", "amplitude": 30, "period": 1.2, "position": [0, 1.5, 0]}
 *
 * is moved by core's pt_motion (ponytail/motion.h) instead of client poses: demos, tests
 * and load. Motions: still, shake, nod (amplitude in degrees, [0, 180]), jump (peak g,
 * [0, 50]), circle (radius in m, [0, 10]), stress (fixed: no amplitude or period), jog
 * (vertical bob in m, [0, 0.2]; period = seconds of running, then still for good);
 * period in s, [0.01, 3600]; position = the head's base position in m (|x| <= 1000),
 * default (0, 1.5, 0). Omitted fields take pt_motion_default's values.
 *
 * Threading: pure functions; any thread (REST validates, the sim thread evaluates).
 */
#ifndef SERVER_DRIVER_H
#define SERVER_DRIVER_H

#include <jansson.h>

#include "ponytail/instance.h"
#include "ponytail/motion.h"

typedef struct driver_t {
	int enabled; /* 0: the instance follows client poses */
	pt_motion motion;
} driver_t;

/* Reads doc's "driver" member (doc borrowed). Absent or null: enabled = 0. Returns 0, or
 * -1 with err->field naming the member ("driver.amplitude") and err->message the rule. */
int driver_parse(const json_t *doc, driver_t *out, pt_error *err);

/* The canonical JSON of an enabled driver (new reference), or NULL when disabled or out
 * of memory. */
json_t *driver_dump(const driver_t *d);

/* Head pose at t seconds after the instance (re)started. */
pt_pose driver_pose(const driver_t *d, double t);

#endif
