/* Room wind: zones of moving air a host sets on an instance from outside its definition
 * (the daemon: every instance of a room, server/README.md "Room wind"), added to the
 * instance's own `wind` and acting through the same air drag (core/SCHEMA.md "wind"):
 *
 *   verlet:     a = D (W_own + W_room(x) - v), D = wind.drag (1/s);
 *   springbone: the joint's drag_force makes the tail's velocity relax toward W_room(x)
 *               instead of toward rest air: per 1/60 s frame v' = (1 - d) v + d W, so
 *               the push per step is W h (1 - kept); for them W also carries the
 *               instance's own wind, V (1 + turbulence g(seed, strand, t)) at the
 *               tick's middle, added after the zones' sum.
 *
 * W_room(x) is the sum over the zones of weight(x) V (1 + turbulence g(seed, strand, t)):
 * V = strength * direction / |direction|, g the gust of the instance wind (three seeded
 * sines, in [-1, 1]) at the middle of the tick, weight 1 for a global zone; for a sphere
 * or a box 1 inside, 0 outside, and with falloff f > 0 a linear ramp (distance inside the
 * edge) / f, clamped to [0, 1]. It is evaluated once per tick at every point (the
 * position at the tick's start) and held over the tick's substeps. Deterministic: no
 * state but the zones, the points and the instance's simulated time.
 */
#ifndef PONYTAIL_WIND_H
#define PONYTAIL_WIND_H

#include <stdint.h>

#include "ponytail/instance.h"
#include "ponytail/types.h"

enum { PT_MAX_WIND_ZONES = 16 }; /* zones a room (an instance) takes */

typedef enum pt_wind_type {
	PT_WIND_GLOBAL = 0, /* everywhere */
	PT_WIND_SPHERE = 1, /* center, radius, falloff */
	PT_WIND_BOX = 2,    /* center, size (full edge lengths, world axes), falloff */
	PT_WIND_TYPES
} pt_wind_type;

/* Every member four bytes (no padding: recordings and the state hash take it as bytes). */
typedef struct pt_wind_zone {
	int32_t type;       /* pt_wind_type */
	pt_vec3 direction;  /* world; length in [1e-6, 1e6], normalised where used */
	float strength;     /* m/s, [0, 100] */
	float turbulence;   /* gust amplitude as a fraction of strength, [0, 2] */
	uint32_t seed;      /* gust phases */
	pt_vec3 center;     /* sphere, box: world m, |center| <= 10000 */
	float radius;       /* sphere: m, (0, 1000] */
	pt_vec3 size;       /* box: m, each in (0, 2000] */
	float falloff;      /* sphere, box: m, [0, 1000]; 0 = a hard edge */
} pt_wind_zone;

/* A zone with the defaults: global, direction +X, strength 0, turbulence 0, seed 1,
 * center 0, radius 1, size 1 x 1 x 1, falloff 0. */
pt_wind_zone pt_wind_zone_default(void);

/* Checks n zones (n in [0, PT_MAX_WIND_ZONES]) against the ranges above; the first error
 * names its field as "zones[2].radius" with the allowed range. */
pt_error pt_wind_zones_validate(const pt_wind_zone *zones, int n);

/* The name of a type ("global", "sphere", "box"), NULL out of range; the type of a name,
 * -1 when unknown. */
const char *pt_wind_type_name(int type);
int pt_wind_type_of(const char *name);

/* The zones' wind at world point x for strand s at time t (seconds), m/s. */
pt_vec3 pt_wind_at(const pt_wind_zone *zones, int n, pt_vec3 x, int s, double t);

/* The gust factor in [-1, 1] of seed for strand s at time t (the instance wind's). */
float pt_wind_gust(uint32_t seed, int s, double t);

#endif
