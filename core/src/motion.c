/* Built-in head motions: closed-form functions of time. */
#include <math.h>
#include <string.h>

#include "ponytail/motion.h"
#include "vecmath.h"

#define PT_PI 3.14159265358979323846
#define PT_G 9.81

static const char *const motion_names[PT_MOTION_COUNT] = {
    "still", "shake", "nod", "jump", "circle", "stress", "jog"};

int pt_motion_from_name(const char *name)
{
	for (int i = 0; name && i < PT_MOTION_COUNT; i++)
		if (strcmp(name, motion_names[i]) == 0)
			return i;
	return -1;
}

const char *pt_motion_name(pt_motion_kind kind)
{
	return (unsigned)kind < PT_MOTION_COUNT ? motion_names[kind] : NULL;
}

pt_motion pt_motion_default(pt_motion_kind kind)
{
	pt_motion m;
	memset(&m, 0, sizeof m);
	m.kind = kind;
	m.base.p = pt_v3(0.0f, 1.5f, 0.0f);
	m.base.q = pt_quat_identity();
	switch (kind) {
	case PT_MOTION_SHAKE: m.amplitude = 45.0f, m.period = 0.6f; break;
	case PT_MOTION_NOD: m.amplitude = 30.0f, m.period = 0.4f; break;
	case PT_MOTION_JUMP: m.amplitude = 2.5f, m.period = 0.5f; break;
	case PT_MOTION_CIRCLE: m.amplitude = 0.3f, m.period = 2.0f; break;
	case PT_MOTION_JOG: m.amplitude = 0.03f, m.period = 5.0f; break;
	default: m.amplitude = 0.0f, m.period = 1.0f; break;
	}
	return m;
}

double pt_motion_amplitude_max(pt_motion_kind kind)
{
	switch (kind) {
	case PT_MOTION_SHAKE:
	case PT_MOTION_NOD: return 180;
	case PT_MOTION_JUMP: return 50;
	case PT_MOTION_CIRCLE: return 10;
	case PT_MOTION_JOG: return 0.2;
	default: return 0;
	}
}

static double jog_end(double period)
{
	double stride = 2.0 / PT_JOG_STEP_HZ, n = floor(period / stride + 0.5);
	return (n < 1 ? 1 : n) * stride;
}

double pt_motion_jog_end(const pt_motion *m)
{
	return jog_end(m->period > 0 ? m->period : 1.0);
}

static pt_pose offset_pose(const pt_pose *base, pt_vec3 dp, pt_quat dq)
{
	pt_pose r;
	r.p = v3_add(base->p, dp);
	r.q = q_norm(q_mul(base->q, dq));
	return r;
}

/* One primitive at phase time t (seconds since the primitive started). */
static pt_pose primitive(pt_motion_kind kind, double amp, double period, const pt_pose *base,
			 double t)
{
	double w = 2.0 * PT_PI / period;
	pt_vec3 zero = pt_v3(0, 0, 0);
	switch (kind) {
	case PT_MOTION_SHAKE: {
		double yaw = amp * PT_PI / 180.0 * sin(w * t);
		return offset_pose(base, zero, q_axis_angle(pt_v3(0, 1, 0), (float)yaw));
	}
	case PT_MOTION_NOD: {
		double pitch = amp * PT_PI / 180.0 * sin(w * t);
		return offset_pose(base, zero, q_axis_angle(pt_v3(1, 0, 0), (float)pitch));
	}
	case PT_MOTION_JUMP: {
		/* y = h (1 - cos wt) / 2 has peak acceleration h w^2 / 2 = amp * g. */
		double h = 2.0 * amp * PT_G / (w * w);
		double y = h * (1.0 - cos(w * t)) * 0.5;
		return offset_pose(base, pt_v3(0, (float)y, 0), pt_quat_identity());
	}
	case PT_MOTION_CIRCLE: {
		double x = amp * (cos(w * t) - 1.0), z = amp * sin(w * t);
		return offset_pose(base, pt_v3((float)x, 0, (float)z), pt_quat_identity());
	}
	case PT_MOTION_JOG: {
		/* See motion.h: bob at the step rate from the top, sway at the stride rate. */
		if (t >= jog_end(period))
			return *base;
		double ws = 2.0 * PT_PI * PT_JOG_STEP_HZ;
		double y = -amp * (1.0 - cos(ws * t)), x = 0.5 * amp * sin(0.5 * ws * t);
		return offset_pose(base, pt_v3((float)x, (float)y, 0), pt_quat_identity());
	}
	default: return *base;
	}
}

/* The stress sequence: still, 2 shakes (+-45 deg, half period 0.3 s), pause, 2 nods
 * (+-30 deg, half period 0.2 s), pause, 2 hops of 2.5 g, then still for good. */
static const struct {
	pt_motion_kind kind;
	double amp, period, duration;
} stress[] = {
    {PT_MOTION_STILL, 0, 1, 0.5}, {PT_MOTION_SHAKE, 45, 0.6, 1.2}, {PT_MOTION_STILL, 0, 1, 0.3},
    {PT_MOTION_NOD, 30, 0.4, 0.8}, {PT_MOTION_STILL, 0, 1, 0.3},   {PT_MOTION_JUMP, 2.5, 0.5, 1.0},
};

double pt_motion_stress_end(void)
{
	double t = 0;
	for (size_t i = 0; i < sizeof stress / sizeof stress[0]; i++)
		t += stress[i].duration;
	return t;
}

pt_pose pt_motion_pose(const pt_motion *m, double t)
{
	if (t < 0)
		t = 0;
	if (m->kind != PT_MOTION_STRESS)
		return primitive(m->kind, m->amplitude, m->period > 0 ? m->period : 1.0, &m->base, t);
	for (size_t i = 0; i < sizeof stress / sizeof stress[0]; i++) {
		if (t < stress[i].duration)
			return primitive(stress[i].kind, stress[i].amp, stress[i].period, &m->base, t);
		t -= stress[i].duration;
	}
	return m->base;
}
