/* Room wind (ponytail/wind.h): the zones, their checks, their wind at a point, and an
 * instance's copy of them with the per-point wind of the tick (world_internal.h,
 * pt_wind_rt), which the solvers read. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h> /* snprintf only: core does no I/O */
#include <stdlib.h>
#include <string.h>

#include "ponytail/wind.h"
#include "vecmath.h"
#include "world_internal.h"

_Static_assert(sizeof(pt_wind_zone) == 15 * 4, "pt_wind_zone: four-byte members, no padding");

static const char *const type_names[PT_WIND_TYPES] = {"global", "sphere", "box"};

const char *pt_wind_type_name(int type)
{
	return type >= 0 && type < PT_WIND_TYPES ? type_names[type] : NULL;
}

int pt_wind_type_of(const char *name)
{
	for (int i = 0; i < PT_WIND_TYPES; i++)
		if (strcmp(name, type_names[i]) == 0)
			return i;
	return -1;
}

pt_wind_zone pt_wind_zone_default(void)
{
	pt_wind_zone z;
	memset(&z, 0, sizeof z);
	z.type = PT_WIND_GLOBAL;
	z.direction = pt_v3(1.0f, 0.0f, 0.0f);
	z.seed = 1;
	z.radius = 1.0f;
	z.size = pt_v3(1.0f, 1.0f, 1.0f);
	return z;
}

/* ---- checks ------------------------------------------------------------------------ */

__attribute__((format(printf, 4, 5))) static pt_error fail(pt_error e, int i, const char *field,
                                                           const char *fmt, ...)
{
	e.ok = 0;
	int n = snprintf(e.field, sizeof e.field, "zones[%d]%s%s", i, *field ? "." : "", field);
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	n = snprintf(e.message, sizeof e.message, "%s: %s", e.field, msg);
	(void)n;
	return e;
}

static int in_range(float v, float lo, float hi)
{
	return isfinite(v) && v >= lo && v <= hi;
}

pt_error pt_wind_zones_validate(const pt_wind_zone *zones, int n)
{
	pt_error e;
	memset(&e, 0, sizeof e);
	e.ok = 1;
	if (n < 0 || n > PT_MAX_WIND_ZONES) {
		e.ok = 0;
		snprintf(e.field, sizeof e.field, "zones");
		snprintf(e.message, sizeof e.message, "zones: %d zones; at most %d per room", n,
		         (int)PT_MAX_WIND_ZONES);
		return e;
	}
	for (int i = 0; i < n; i++) {
		const pt_wind_zone *z = &zones[i];
		if (!pt_wind_type_name(z->type))
			return fail(e, i, "type", "must be global, sphere or box");
		pt_vec3 d = z->direction;
		float dl = v3_finite(d) ? v3_len(d) : NAN;
		if (!(dl >= 1e-6f && dl <= 1e6f))
			return fail(e, i, "direction", "expected [x, y, z], finite, of length in [1e-06, 1e+06]");
		if (!in_range(z->strength, 0.0f, 100.0f))
			return fail(e, i, "strength", "must be a number in [0, 100] (m/s)");
		if (!in_range(z->turbulence, 0.0f, 2.0f))
			return fail(e, i, "turbulence", "must be a number in [0, 2]");
		if (z->type == PT_WIND_GLOBAL)
			continue;
		if (!v3_finite(z->center) || !(v3_len(z->center) <= 10000.0f))
			return fail(e, i, "center", "expected [x, y, z] in metres, within 10000 of the origin");
		if (z->type == PT_WIND_SPHERE && !(isfinite(z->radius) && z->radius > 0.0f &&
		                                   z->radius <= 1000.0f))
			return fail(e, i, "radius", "must be a number in (0, 1000] (m)");
		if (z->type == PT_WIND_BOX) {
			const float s[3] = {z->size.x, z->size.y, z->size.z};
			for (int k = 0; k < 3; k++)
				if (!(isfinite(s[k]) && s[k] > 0.0f && s[k] <= 2000.0f))
					return fail(e, i, "size",
					            "expected [x, y, z] edge lengths in metres, each in (0, 2000]");
		}
		if (!in_range(z->falloff, 0.0f, 1000.0f))
			return fail(e, i, "falloff", "must be a number in [0, 1000] (m)");
	}
	return e;
}

/* ---- the wind ---------------------------------------------------------------------- */

/* Deterministic gust factor in [-1, 1] for strand s at time t: three incommensurate
 * sines with seeded phases (the instance wind's, solver_verlet.c). */
float pt_wind_gust(uint32_t seed, int s, double t)
{
	uint32_t h = seed * 2654435761u ^ (uint32_t)(s + 1) * 40503u;
	float p1 = (float)(h & 1023u) * 0.00614f, p2 = (float)((h >> 10) & 1023u) * 0.00614f;
	float p3 = (float)((h >> 20) & 1023u) * 0.00614f;
	float ft = (float)fmod(t, 1000.0);
	return 0.5f * sinf(2.1f * ft + p1) + 0.3f * sinf(4.7f * ft + p2) +
	       0.2f * sinf(9.3f * ft + p3);
}

/* A zone's weight at x: 1 inside, 0 outside, the ramp `inside / falloff` between. */
static float weight(const pt_wind_zone *z, pt_vec3 x)
{
	float inside; /* distance from the edge, positive within */
	if (z->type == PT_WIND_SPHERE) {
		inside = z->radius - v3_len(v3_sub(x, z->center));
	} else if (z->type == PT_WIND_BOX) {
		pt_vec3 d = v3_sub(x, z->center);
		float ex = 0.5f * z->size.x - fabsf(d.x), ey = 0.5f * z->size.y - fabsf(d.y);
		float ez = 0.5f * z->size.z - fabsf(d.z);
		inside = ex < ey ? ex : ey;
		inside = ez < inside ? ez : inside;
	} else {
		return 1.0f;
	}
	if (!(inside > 0.0f))
		return 0.0f;
	if (!(z->falloff > 0.0f) || inside >= z->falloff)
		return 1.0f;
	return inside / z->falloff;
}

/* Each zone's wind for strand s at time t, before its weight (the gust depends on the
 * strand and the time only: once per strand, not per point). */
static void zone_velocities(const pt_wind_zone *zones, int n, int s, double t, pt_vec3 *vz)
{
	for (int i = 0; i < n; i++) {
		const pt_wind_zone *z = &zones[i];
		float m = z->strength;
		if (z->turbulence > 0.0f && m != 0.0f)
			m *= 1.0f + z->turbulence * pt_wind_gust(z->seed, s, t);
		vz[i] = v3_scale(v3_norm_or(z->direction, pt_v3(1, 0, 0)), m);
	}
}

static pt_vec3 sum_at(const pt_wind_zone *zones, int n, const pt_vec3 *vz, pt_vec3 x)
{
	pt_vec3 sum = pt_v3(0.0f, 0.0f, 0.0f);
	for (int i = 0; i < n; i++) {
		float f = weight(&zones[i], x);
		if (f == 1.0f)
			sum = v3_add(sum, vz[i]);
		else if (f != 0.0f)
			sum = v3_add(sum, v3_scale(vz[i], f));
	}
	return sum;
}

pt_vec3 pt_wind_at(const pt_wind_zone *zones, int n, pt_vec3 x, int s, double t)
{
	pt_vec3 vz[PT_MAX_WIND_ZONES];
	zone_velocities(zones, n, s, t, vz);
	return sum_at(zones, n, vz, x);
}

/* ---- an instance's room wind ----------------------------------------------------------- */

void pt_wind_rt_free(pt_wind_rt **rt)
{
	if (*rt) {
		free((*rt)->v);
		free(*rt);
		*rt = NULL;
	}
}

pt_wind_rt *pt_wind_rt_new(int npoints)
{
	pt_wind_rt *rt = calloc(1, sizeof *rt);
	if (rt && !pt_wind_rt_fit(rt, npoints))
		pt_wind_rt_free(&rt);
	return rt;
}

int pt_wind_sb_own(const pt_instance_def *def)
{
	return def->solver == PT_SOLVER_SPRINGBONE && v3_len2(def->wind.velocity) > 0.0f;
}

int pt_wind_rt_fit(pt_wind_rt *rt, int npoints)
{
	if (!rt || rt->cap >= npoints)
		return 1;
	pt_vec3 *v = malloc((size_t)npoints * sizeof *v);
	if (!v)
		return 0;
	free(rt->v);
	rt->v = v;
	rt->cap = npoints;
	return 1;
}

void pt_wind_prepare(const pt_world *w, pt_inst *in, float dt)
{
	pt_wind_rt *rt = in->room_wind;
	double t = in->time + 0.5 * (double)dt; /* the middle of the tick */
	pt_vec3 vz[PT_MAX_WIND_ZONES];
	/* a spring bone's own wind, added after the zones' sum: velocity (1 + turbulence g),
	 * the gust of its seed for the strand at the same instant (verlet adds its own) */
	int own = in->solver == PT_SOLVER_SPRINGBONE && v3_len2(in->wind_velocity) > 0.0f;
	for (int s = 0; s < in->strand_count; s++) {
		const pt_strand_rt *st = &in->strands[s];
		zone_velocities(rt->zones, rt->n, s, t, vz);
		pt_vec3 wo = pt_v3(0.0f, 0.0f, 0.0f);
		if (own) {
			float m = 1.0f;
			if (in->wind_turbulence > 0.0f)
				m += in->wind_turbulence * pt_wind_gust(in->wind_seed, s, t);
			wo = v3_scale(in->wind_velocity, m);
		}
		for (int j = 0; j < st->points; j++) {
			int p = st->first + j, o = in->offset + p;
			rt->v[p] = sum_at(rt->zones, rt->n, vz, pt_v3(w->x[o], w->y[o], w->z[o]));
			if (own)
				rt->v[p] = v3_add(rt->v[p], wo);
		}
	}
}
