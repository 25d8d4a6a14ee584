/* Small inline vector and quaternion helpers used across core (private). */
#ifndef PT_VECMATH_H
#define PT_VECMATH_H

#include <math.h>

#include "ponytail/types.h"

static inline pt_vec3 v3_add(pt_vec3 a, pt_vec3 b) { return pt_v3(a.x + b.x, a.y + b.y, a.z + b.z); }
static inline pt_vec3 v3_sub(pt_vec3 a, pt_vec3 b) { return pt_v3(a.x - b.x, a.y - b.y, a.z - b.z); }
static inline pt_vec3 v3_scale(pt_vec3 a, float s) { return pt_v3(a.x * s, a.y * s, a.z * s); }
static inline pt_vec3 v3_mul(pt_vec3 a, pt_vec3 b) { return pt_v3(a.x * b.x, a.y * b.y, a.z * b.z); }
static inline float v3_dot(pt_vec3 a, pt_vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static inline float v3_len2(pt_vec3 a) { return v3_dot(a, a); }
static inline float v3_len(pt_vec3 a) { return sqrtf(v3_dot(a, a)); }
static inline pt_vec3 v3_lerp(pt_vec3 a, pt_vec3 b, float t)
{
	return pt_v3(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t);
}
static inline pt_vec3 v3_cross(pt_vec3 a, pt_vec3 b)
{
	return pt_v3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
/* Unit vector, or `fallback` when a is (nearly) zero. */
static inline pt_vec3 v3_norm_or(pt_vec3 a, pt_vec3 fallback)
{
	float l2 = v3_len2(a);
	if (!(l2 > 1e-24f))
		return fallback;
	return v3_scale(a, 1.0f / sqrtf(l2));
}
/* v turned by the shortest arc that takes unit a to unit b (Rodrigues with c = a x b,
 * no square root): v (a.b) + c x v + c (c.v) / (1 + a.b). Where b is opposite a the arc
 * is undefined and b itself is returned. */
static inline pt_vec3 v3_turn(pt_vec3 v, pt_vec3 a, pt_vec3 b)
{
	float d = v3_dot(a, b);
	if (!(d > -0.9999f))
		return b;
	pt_vec3 c = v3_cross(a, b);
	return v3_add(v3_add(v3_scale(v, d), v3_cross(c, v)), v3_scale(c, v3_dot(c, v) / (1.0f + d)));
}

static inline int v3_finite(pt_vec3 a) { return isfinite(a.x) && isfinite(a.y) && isfinite(a.z); }

static inline pt_quat q_mul(pt_quat a, pt_quat b)
{
	pt_quat r = {a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
		     a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
		     a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
		     a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
	return r;
}
static inline pt_quat q_conj(pt_quat a)
{
	pt_quat r = {-a.x, -a.y, -a.z, a.w};
	return r;
}
static inline float q_dot(pt_quat a, pt_quat b) { return a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w; }
static inline pt_quat q_norm(pt_quat a)
{
	float l = sqrtf(q_dot(a, a));
	pt_quat r = {a.x / l, a.y / l, a.z / l, a.w / l};
	return r;
}
/* Rotation of v by unit quaternion q: v + 2 w (u x v) + 2 u x (u x v). */
static inline pt_vec3 q_rotate(pt_quat q, pt_vec3 v)
{
	pt_vec3 u = pt_v3(q.x, q.y, q.z);
	pt_vec3 t = v3_scale(v3_cross(u, v), 2.0f);
	return v3_add(v3_add(v, v3_scale(t, q.w)), v3_cross(u, t));
}
static inline pt_quat q_axis_angle(pt_vec3 axis, float angle)
{
	float s = sinf(angle * 0.5f);
	pt_quat r = {axis.x * s, axis.y * s, axis.z * s, cosf(angle * 0.5f)};
	return r;
}
/* Rotation angle (radians, [0, pi]) between two unit quaternions. */
static inline float q_angle_between(pt_quat a, pt_quat b)
{
	float d = fabsf(q_dot(a, b));
	if (d > 1.0f)
		d = 1.0f;
	return 2.0f * acosf(d);
}
/* Shortest-arc spherical interpolation; nlerp when the angle is tiny. */
static inline pt_quat q_slerp(pt_quat a, pt_quat b, float t)
{
	float d = q_dot(a, b);
	if (d < 0.0f) {
		b.x = -b.x, b.y = -b.y, b.z = -b.z, b.w = -b.w;
		d = -d;
	}
	float wa, wb;
	if (d > 0.9995f) {
		wa = 1.0f - t;
		wb = t;
	} else {
		float th = acosf(d), s = sinf(th);
		wa = sinf((1.0f - t) * th) / s;
		wb = sinf(t * th) / s;
	}
	pt_quat r = {a.x * wa + b.x * wb, a.y * wa + b.y * wb, a.z * wa + b.z * wb, a.w * wa + b.w * wb};
	return q_norm(r);
}

/* Row-major 3x3 rotation matrix of a unit quaternion: cheaper than q_rotate when many
 * points share one rotation. */
typedef struct pt_mat3 {
	float m[9];
} pt_mat3;

static inline pt_mat3 m3_from_quat(pt_quat q)
{
	float xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
	float xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z;
	float wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
	pt_mat3 r = {{1 - 2 * (yy + zz), 2 * (xy - wz), 2 * (xz + wy), 2 * (xy + wz), 1 - 2 * (xx + zz),
		      2 * (yz - wx), 2 * (xz - wy), 2 * (yz + wx), 1 - 2 * (xx + yy)}};
	return r;
}
static inline pt_vec3 m3_mul(const pt_mat3 *r, pt_vec3 v)
{
	const float *m = r->m;
	return pt_v3(m[0] * v.x + m[1] * v.y + m[2] * v.z, m[3] * v.x + m[4] * v.y + m[5] * v.z,
		     m[6] * v.x + m[7] * v.y + m[8] * v.z);
}
/* Transpose product: the inverse rotation. */
static inline pt_vec3 m3_tmul(const pt_mat3 *r, pt_vec3 v)
{
	const float *m = r->m;
	return pt_v3(m[0] * v.x + m[3] * v.y + m[6] * v.z, m[1] * v.x + m[4] * v.y + m[7] * v.z,
		     m[2] * v.x + m[5] * v.y + m[8] * v.z);
}

#endif
