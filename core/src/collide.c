/* Collider shapes: world transform, signed distance, push-out. */
#include "collide.h"
#include "ponytail/collider.h"

void pt_collider_to_world(const pt_collider_def *k, const pt_pose *head, const pt_mat3 *rot,
                          pt_collider_rt *c)
{
	int head_attached = k->attach != PT_ATTACH_WORLD; /* head or bone: `head` is its frame */
	static const pt_mat3 ident = {{1, 0, 0, 0, 1, 0, 0, 0, 1}};
	const pt_mat3 *R = head_attached ? rot : &ident;
	pt_vec3 base = head_attached ? head->p : pt_v3(0, 0, 0);
	c->shape = k->shape;
	c->r = k->radius;
	c->rb = k->radius_b < 0.0f ? k->radius : k->radius_b;
	c->inv_len2 = 0.0f;
	switch (k->shape) {
	case PT_SHAPE_CAPSULE:
	case PT_SHAPE_INSIDE_CAPSULE: {
		c->c = v3_add(base, m3_mul(R, k->a));
		c->d = m3_mul(R, v3_sub(k->b, k->a));
		float l2 = v3_len2(c->d);
		c->inv_len2 = l2 > 1e-12f ? 1.0f / l2 : 0.0f;
		if (k->shape == PT_SHAPE_INSIDE_CAPSULE)
			c->rb = c->r;
		break;
	}
	case PT_SHAPE_PLANE:
		c->c = v3_add(base, m3_mul(R, k->center));
		c->d = m3_mul(R, v3_norm_or(k->normal, pt_v3(0, 1, 0)));
		break;
	case PT_SHAPE_ELLIPSOID:
		c->c = v3_add(base, m3_mul(R, k->center));
		c->inv_radii = pt_v3(1.0f / k->radii.x, 1.0f / k->radii.y, 1.0f / k->radii.z);
		c->rot = *R;
		break;
	default:
		c->c = v3_add(base, m3_mul(R, k->center));
		break;
	}
}

void pt_colliders_to_world(const pt_collider_def *defs, int n, const pt_pose *head,
                           const pt_mat3 *rot, pt_collider_rt *out)
{
	for (int i = 0; i < n; i++)
		pt_collider_to_world(&defs[i], head, rot, &out[i]);
}

/* Distance along delta from a round shape of radius r; `inside` flips the sense. */
static float radial(pt_vec3 delta, float r, int inside, pt_vec3 *dir)
{
	float l = v3_len(delta);
	/* A point exactly on the centre has no direction: push up, deterministically. */
	pt_vec3 n = l > 1e-9f ? v3_scale(delta, 1.0f / l) : pt_v3(0, 1, 0);
	if (inside) {
		*dir = v3_scale(n, -1.0f);
		return r - l;
	}
	*dir = n;
	return l - r;
}

float pt_collider_distance(const pt_collider_rt *c, pt_vec3 p, pt_vec3 *dir)
{
	switch (c->shape) {
	case PT_SHAPE_SPHERE:
		return radial(v3_sub(p, c->c), c->r, 0, dir);
	case PT_SHAPE_INSIDE_SPHERE:
		return radial(v3_sub(p, c->c), c->r, 1, dir);
	case PT_SHAPE_CAPSULE:
	case PT_SHAPE_INSIDE_CAPSULE: {
		pt_vec3 ap = v3_sub(p, c->c);
		float t = v3_dot(ap, c->d) * c->inv_len2;
		t = t < 0.0f ? 0.0f : (t > 1.0f ? 1.0f : t);
		pt_vec3 delta = v3_sub(ap, v3_scale(c->d, t));
		float r = c->r + (c->rb - c->r) * t;
		return radial(delta, r, c->shape == PT_SHAPE_INSIDE_CAPSULE, dir);
	}
	case PT_SHAPE_PLANE:
		*dir = c->d;
		return v3_dot(v3_sub(p, c->c), c->d);
	case PT_SHAPE_ELLIPSOID: {
		/* In the unit-sphere space of the ellipsoid the surface point on the ray from
		 * the centre is q / |q|; map it back to measure the distance in metres. */
		pt_vec3 q = m3_tmul(&c->rot, v3_sub(p, c->c));
		float s = v3_len(v3_mul(q, c->inv_radii));
		float l = v3_len(q);
		if (!(s > 1e-9f)) {
			*dir = m3_mul(&c->rot, pt_v3(0, 1, 0));
			return -1.0f / c->inv_radii.y;
		}
		*dir = m3_mul(&c->rot, v3_scale(q, 1.0f / l));
		return l - l / s;
	}
	default:
		*dir = pt_v3(0, 1, 0);
		return 1e30f;
	}
}

int pt_collide_point(const pt_collider_rt *cols, int n, const pt_collider_mask *mask, float radius,
                     pt_vec3 *p)
{
	int moved = 0;
	for (int i = 0; i < n; i++) {
		if (!pt_mask_test(mask, i))
			continue;
		pt_vec3 dir;
		float d = pt_collider_distance(&cols[i], *p, &dir) - radius;
		if (d < 0.0f) {
			*p = v3_sub(*p, v3_scale(dir, d));
			moved = 1;
		}
	}
	return moved;
}

float pt_collider_signed_distance(const pt_collider_def *c, pt_pose head, pt_vec3 p, pt_vec3 *dir)
{
	pt_mat3 R = m3_from_quat(head.q);
	pt_collider_rt rt;
	pt_vec3 unused;
	pt_colliders_to_world(c, 1, &head, &R, &rt);
	return pt_collider_distance(&rt, p, dir ? dir : &unused);
}
