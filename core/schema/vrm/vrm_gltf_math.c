/* vrm_gltf: the 3D math of the importer, vectors, glTF matrices and rotations (see
 * vrm_gltf.h). */
#include "vrm_gltf.h"

#include <math.h>

#define VRM_PI 3.14159265358979323846 /* M_PI is not in strict C11 */

/* ---- math ---- */

double vrm_len(vrm_vec3 a)
{
	return sqrt(vrm_dot(a, a));
}

vrm_vec3 vrm_normalize(vrm_vec3 a)
{
	double l = vrm_len(a);
	return l < 1e-12 ? vrm_v3(0, 0, 0) : vrm_scale(a, 1.0 / l);
}

double vrm_angle_deg(vrm_vec3 a, vrm_vec3 b)
{
	double la = vrm_len(a), lb = vrm_len(b);
	if (la < 1e-12 || lb < 1e-12)
		return 0.0;
	/* atan2 of |a×b| and a·b stays accurate at tiny angles, where acos does not. */
	return atan2(vrm_len(vrm_cross(a, b)), vrm_dot(a, b)) * (180.0 / VRM_PI);
}

vrm_mat4 vrm_mat4_identity(void)
{
	vrm_mat4 m = {{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}};
	return m;
}

vrm_mat4 vrm_mat4_mul(const vrm_mat4 *a, const vrm_mat4 *b)
{
	vrm_mat4 c;
	for (int col = 0; col < 4; col++)
		for (int row = 0; row < 4; row++) {
			double s = 0;
			for (int k = 0; k < 4; k++)
				s += a->m[k * 4 + row] * b->m[col * 4 + k];
			c.m[col * 4 + row] = s;
		}
	return c;
}

vrm_rot vrm_rot_from_quat(const double q[4])
{
	double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
	double x = q[0] / n, y = q[1] / n, z = q[2] / n, w = q[3] / n;
	vrm_rot r = {{
	    1 - 2 * (y * y + z * z), 2 * (x * y + z * w), 2 * (x * z - y * w), /* column 0 */
	    2 * (x * y - z * w), 1 - 2 * (x * x + z * z), 2 * (y * z + x * w), /* column 1 */
	    2 * (x * z + y * w), 2 * (y * z - x * w), 1 - 2 * (x * x + y * y), /* column 2 */
	}};
	return r;
}

vrm_mat4 vrm_mat4_trs(vrm_vec3 t, const double q[4], vrm_vec3 s)
{
	vrm_rot r = vrm_rot_from_quat(q);
	double sc[3] = {s.x, s.y, s.z};
	vrm_mat4 m = vrm_mat4_identity();
	for (int col = 0; col < 3; col++)
		for (int row = 0; row < 3; row++)
			m.m[col * 4 + row] = r.r[col * 3 + row] * sc[col];
	m.m[12] = t.x;
	m.m[13] = t.y;
	m.m[14] = t.z;
	return m;
}

static vrm_vec3 mat4_col(const vrm_mat4 *m, int c)
{
	return vrm_v3(m->m[c * 4], m->m[c * 4 + 1], m->m[c * 4 + 2]);
}

vrm_vec3 vrm_mat4_dir(const vrm_mat4 *m, vrm_vec3 d)
{
	return vrm_add(vrm_add(vrm_scale(mat4_col(m, 0), d.x), vrm_scale(mat4_col(m, 1), d.y)),
	               vrm_scale(mat4_col(m, 2), d.z));
}

vrm_vec3 vrm_mat4_point(const vrm_mat4 *m, vrm_vec3 p)
{
	return vrm_add(vrm_mat4_dir(m, p), mat4_col(m, 3));
}

vrm_vec3 vrm_mat4_normal(const vrm_mat4 *m, vrm_vec3 n)
{
	/* With columns a, b, c the inverse transpose is [b×c, c×a, a×b] / det; the scale of
	 * det drops out in the normalisation, its sign does not. */
	vrm_vec3 a = mat4_col(m, 0), b = mat4_col(m, 1), c = mat4_col(m, 2);
	vrm_vec3 r =
	    vrm_add(vrm_add(vrm_scale(vrm_cross(b, c), n.x), vrm_scale(vrm_cross(c, a), n.y)),
	            vrm_scale(vrm_cross(a, b), n.z));
	return vrm_normalize(vrm_mat4_det3(m) < 0 ? vrm_scale(r, -1) : r);
}

vrm_vec3 vrm_mat4_translation(const vrm_mat4 *m)
{
	return mat4_col(m, 3);
}

vrm_vec3 vrm_mat4_axis_scale(const vrm_mat4 *m)
{
	return vrm_v3(vrm_len(mat4_col(m, 0)), vrm_len(mat4_col(m, 1)), vrm_len(mat4_col(m, 2)));
}

double vrm_mat4_det3(const vrm_mat4 *m)
{
	return vrm_dot(vrm_cross(mat4_col(m, 0), mat4_col(m, 1)), mat4_col(m, 2));
}

static vrm_rot rot_from_axes(vrm_vec3 x, vrm_vec3 y, vrm_vec3 z)
{
	vrm_rot r = {{x.x, x.y, x.z, y.x, y.y, y.z, z.x, z.y, z.z}};
	return r;
}

vrm_rot vrm_rot_from_mat4(const vrm_mat4 *m)
{
	vrm_vec3 x = vrm_normalize(mat4_col(m, 0));
	if (vrm_len(x) == 0)
		x = vrm_v3(1, 0, 0);
	vrm_vec3 y = mat4_col(m, 1);
	y = vrm_normalize(vrm_sub(y, vrm_scale(x, vrm_dot(x, y))));
	if (vrm_len(y) == 0) /* degenerate: any unit vector perpendicular to x */
		y = vrm_normalize(fabs(x.y) < 0.9 ? vrm_cross(vrm_v3(0, 0, 1), x)
		                                  : vrm_cross(x, vrm_v3(1, 0, 0)));
	return rot_from_axes(x, y, vrm_cross(x, y));
}

vrm_rot vrm_rot_mul(const vrm_rot *a, const vrm_rot *b)
{
	vrm_rot c;
	for (int col = 0; col < 3; col++)
		for (int row = 0; row < 3; row++) {
			double s = 0;
			for (int k = 0; k < 3; k++)
				s += a->r[k * 3 + row] * b->r[col * 3 + k];
			c.r[col * 3 + row] = s;
		}
	return c;
}

vrm_vec3 vrm_rot_apply(const vrm_rot *r, vrm_vec3 v)
{
	return vrm_v3(r->r[0] * v.x + r->r[3] * v.y + r->r[6] * v.z,
	              r->r[1] * v.x + r->r[4] * v.y + r->r[7] * v.z,
	              r->r[2] * v.x + r->r[5] * v.y + r->r[8] * v.z);
}

vrm_vec3 vrm_rot_apply_inv(const vrm_rot *r, vrm_vec3 v)
{
	return vrm_v3(r->r[0] * v.x + r->r[1] * v.y + r->r[2] * v.z,
	              r->r[3] * v.x + r->r[4] * v.y + r->r[5] * v.z,
	              r->r[6] * v.x + r->r[7] * v.y + r->r[8] * v.z);
}

vrm_rot vrm_rot_between(vrm_vec3 a, vrm_vec3 b)
{
	double d = vrm_dot(a, b);
	double q[4];
	if (d < -1.0 + 1e-12) {
		vrm_vec3 k = vrm_cross(a, vrm_v3(0, 0, 1));
		if (vrm_len(k) < 1e-6)
			k = vrm_cross(a, vrm_v3(1, 0, 0));
		k = vrm_normalize(k);
		q[0] = k.x, q[1] = k.y, q[2] = k.z, q[3] = 0; /* 180° about k */
	} else {
		/* Half-way quaternion: (a × b, 1 + a·b) normalised is the shortest arc. */
		vrm_vec3 c = vrm_cross(a, b);
		q[0] = c.x, q[1] = c.y, q[2] = c.z, q[3] = 1.0 + d;
	}
	return vrm_rot_from_quat(q);
}

double vrm_rot_angle_deg(const vrm_rot *r)
{
	double c = (r->r[0] + r->r[4] + r->r[8] - 1.0) / 2.0;
	c = c > 1 ? 1 : c < -1 ? -1 : c;
	return acos(c) * (180.0 / VRM_PI);
}
