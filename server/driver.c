/* Drivers: see driver.h. The ranges match `ponytail sim --motion` so that a bot and an
 * offline run of the same motion accept the same values. */
#include "driver.h"

#include "jutil.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int number(const json_t *v, double lo, double hi, double *out)
{
	if (!json_is_number(v))
		return -1;
	double x = json_number_value(v);
	if (!isfinite(x) || x < lo || x > hi)
		return -1;
	*out = x;
	return 0;
}

int driver_parse(const json_t *doc, driver_t *out, pt_error *err)
{
	memset(out, 0, sizeof *out);
	err->ok = 1;
	err->field[0] = err->message[0] = '\0';
	const json_t *d = json_object_get(doc, "driver");
	if (!d || json_is_null(d))
		return 0;
	if (!json_is_object(d))
		return jutil_reject(err, "driver", "expected an object or null");
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)(uintptr_t)d, key, v)
	{
		if (strcmp(key, "motion") && strcmp(key, "amplitude") && strcmp(key, "period") &&
		    strcmp(key, "position")) {
			char f[96];
			snprintf(f, sizeof f, "driver.%.80s", key);
			return jutil_reject(err, f, "unknown field");
		}
	}
	const json_t *m = json_object_get(d, "motion");
	int kind = json_is_string(m) ? pt_motion_from_name(json_string_value(m)) : -1;
	if (kind < 0)
		return jutil_reject(err, "driver.motion",
		              "expected one of still, shake, nod, jump, circle, stress, jog");
	pt_motion mo = pt_motion_default((pt_motion_kind)kind);
	const json_t *amp = json_object_get(d, "amplitude"), *per = json_object_get(d, "period");
	if (kind == PT_MOTION_STRESS && (amp || per))
		return jutil_reject(err, amp ? "driver.amplitude" : "driver.period",
		              "the stress motion is fixed (no amplitude or period)");
	double x;
	if (amp) {
		double hi = kind == PT_MOTION_STILL ? 180 : pt_motion_amplitude_max(kind);
		if (number(amp, 0, hi, &x) != 0) {
			char msg[96];
			snprintf(msg, sizeof msg, "expected a number in [0, %g] (%s)", hi,
			         kind == PT_MOTION_JUMP     ? "peak g"
			         : kind == PT_MOTION_CIRCLE ? "radius, m"
			         : kind == PT_MOTION_JOG    ? "vertical bob, m"
			                                    : "degrees");
			return jutil_reject(err, "driver.amplitude", msg);
		}
		mo.amplitude = (float)x;
	}
	if (per) {
		if (number(per, 0.01, 3600, &x) != 0)
			return jutil_reject(err, "driver.period",
			              "expected a number in [0.01, 3600] (seconds)");
		mo.period = (float)x;
	}
	const json_t *pos = json_object_get(d, "position");
	if (pos) {
		double c[3];
		if (!json_is_array(pos) || json_array_size(pos) != 3)
			return jutil_reject(err, "driver.position", "expected [x, y, z] in metres");
		for (size_t i = 0; i < 3; i++)
			if (number(json_array_get(pos, i), -1000, 1000, &c[i]) != 0)
				return jutil_reject(err, "driver.position",
				              "expected [x, y, z], each a number in [-1000, 1000]");
		mo.base.p = pt_v3((float)c[0], (float)c[1], (float)c[2]);
	}
	out->enabled = 1;
	out->motion = mo;
	return 0;
}

json_t *driver_dump(const driver_t *d)
{
	if (!d->enabled)
		return NULL;
	const pt_motion *m = &d->motion;
	json_t *o = json_pack("{s:s}", "motion", pt_motion_name(m->kind));
	if (!o)
		return NULL;
	if (m->kind != PT_MOTION_STRESS &&
	    (json_object_set_new(o, "amplitude", jutil_float(m->amplitude)) != 0 ||
	     json_object_set_new(o, "period", jutil_float(m->period)) != 0)) {
		json_decref(o);
		return NULL;
	}
	if (json_object_set_new(o, "position",
	                        json_pack("[ooo]", jutil_float(m->base.p.x),
	                                  jutil_float(m->base.p.y), jutil_float(m->base.p.z))) !=
	    0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

pt_pose driver_pose(const driver_t *d, double t)
{
	return pt_motion_pose(&d->motion, t);
}
