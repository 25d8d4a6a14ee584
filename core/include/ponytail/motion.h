/* Ponytail core: built-in head motions for tests, bots, demos and load.
 *
 * Pure functions of time: pt_motion_pose(m, t) is the head pose at t seconds.
 * The standard stress sequence is PT_MOTION_STRESS (pt_motion_stress_end() is when it
 * ends): shake +-45 deg within 0.3 s, nod +-30 deg within 0.2 s, then a jump with >= 2 g
 * peak vertical acceleration, then the head stays still.
 *
 * The jog (PT_MOTION_JOG) is a running head on a treadmill, for the mass-spring article's
 * realism figures (tip speed, tip-displacement sigma, damping ratio of the decay after
 * the head stops). Figures chosen, from typical jogging:
 *   - PT_JOG_STEP_HZ = 2.8 steps/s (168 steps/min; recreational jogging is ~2.6-3).
 *   - Vertical bob at the step frequency: y = -A (1 - cos(2 pi 2.8 t)), A = amplitude,
 *     default 0.03 m: 6 cm peak to peak (the low end of runners' 6-10 cm vertical
 *     oscillation), peak acceleration A (2 pi 2.8)^2 = 9.3 m/s^2 = 0.95 g, so the head
 *     is nearly weightless at the top of each step as in real running. Starting at the
 *     top with zero vertical speed, the head's height and vertical speed are continuous
 *     at the start and at the stop.
 *   - Lateral sway at half the step frequency (one stride = left + right step):
 *     x = (A / 2) sin(2 pi 1.4 t): 1.5 cm amplitude at the default (real: ~1-2 cm).
 *   - No forward travel: a steady run is invisible to the solvers except through air
 *     drag, which here is linear in world velocity (wind.drag, default 2 /s: a 3 m/s run
 *     would push every point with 0.6 g, far more than real air), and a travelling head
 *     would leave viewers' cameras. The head bobs and sways in place.
 *   - It runs for `period` seconds, rounded to whole strides (at least one) so that the
 *     head ends where it began, then stands still for good: the decay after the stop
 *     can be measured. Default 5 s = 7 strides.
 */
#ifndef PONYTAIL_MOTION_H
#define PONYTAIL_MOTION_H

#include "ponytail/types.h"

typedef enum pt_motion_kind {
	PT_MOTION_STILL = 0,
	PT_MOTION_SHAKE = 1,  /* yaw about +Y: amplitude in degrees, sin(2 pi t / period) */
	PT_MOTION_NOD = 2,    /* pitch about +X: amplitude in degrees */
	PT_MOTION_JUMP = 3,   /* vertical: amplitude = peak acceleration in g; one hop per period */
	PT_MOTION_CIRCLE = 4, /* horizontal circle in XZ: amplitude = radius in metres */
	PT_MOTION_STRESS = 5, /* the stress sequence; amplitude/period ignored */
	PT_MOTION_JOG = 6,    /* running in place: amplitude = bob in metres, period = run time */
	PT_MOTION_COUNT
} pt_motion_kind;

typedef struct pt_motion {
	pt_motion_kind kind;
	float amplitude; /* degrees (shake, nod), g (jump), metres (circle, jog's bob) */
	float period;    /* seconds per cycle, > 0 (jog: seconds of running) */
	pt_pose base;    /* pose the motion is relative to (position, orientation) */
} pt_motion;

#define PT_JOG_STEP_HZ 2.8

/* Defaults per kind: shake 45 deg / 0.6 s, nod 30 deg / 0.4 s, jump 2.5 g / 0.5 s,
 * circle 0.3 m / 2 s, jog 0.03 m / 5 s; base at (0, 1.5, 0), identity rotation. */
pt_motion pt_motion_default(pt_motion_kind kind);

/* The largest amplitude callers accept for a kind, in its unit: shake and nod 180
 * (degrees), jump 50 (g), circle 10 (m), jog 0.2 (m of bob), still and stress 0. */
double pt_motion_amplitude_max(pt_motion_kind kind);

/* "still", "shake", "nod", "jump", "circle", "stress", "jog" <-> kind; -1 / NULL if
 * unknown. */
int pt_motion_from_name(const char *name);
const char *pt_motion_name(pt_motion_kind kind);

/* Head pose at time t >= 0. */
pt_pose pt_motion_pose(const pt_motion *m, double t);

/* For PT_MOTION_STRESS: the time at which the head stops moving (s). */
double pt_motion_stress_end(void);

/* For PT_MOTION_JOG: the time at which the head stops (s): `period` rounded to whole
 * strides of 2 / PT_JOG_STEP_HZ s, at least one. */
double pt_motion_jog_end(const pt_motion *m);

#endif
