/* Ponytail core: built-in head motions for tests, bots, demos and load.
 *
 * Pure functions of time: pt_motion_pose(m, t) is the head pose at t seconds.
 * The standard stress sequence is PT_MOTION_STRESS (pt_motion_stress_end() is when it
 * ends): shake +-45 deg within 0.3 s, nod +-30 deg within 0.2 s, then a jump with >= 2 g
 * peak vertical acceleration, then the head stays still.
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
	PT_MOTION_COUNT
} pt_motion_kind;

typedef struct pt_motion {
	pt_motion_kind kind;
	float amplitude; /* degrees (shake, nod), g (jump), metres (circle) */
	float period;    /* seconds per cycle, > 0 */
	pt_pose base;    /* pose the motion is relative to (position, orientation) */
} pt_motion;

/* Defaults per kind: shake 45 deg / 0.6 s, nod 30 deg / 0.4 s, jump 2.5 g / 0.5 s,
 * circle 0.3 m / 2 s; base at (0, 1.5, 0), identity rotation. */
pt_motion pt_motion_default(pt_motion_kind kind);

/* "still", "shake", "nod", "jump", "circle", "stress" <-> kind; -1 / NULL if unknown. */
int pt_motion_from_name(const char *name);
const char *pt_motion_name(pt_motion_kind kind);

/* Head pose at time t >= 0. */
pt_pose pt_motion_pose(const pt_motion *m, double t);

/* For PT_MOTION_STRESS: the time at which the head stops moving (s). */
double pt_motion_stress_end(void);

#endif
