/* Colliders in world space and point push-out (private to core). */
#ifndef PT_COLLIDE_H
#define PT_COLLIDE_H

#include "ponytail/instance.h"
#include "vecmath.h"

/* A collider transformed to world space for one substep. */
typedef struct pt_collider_rt {
	pt_shape shape;
	pt_vec3 c;      /* centre, capsule end a, or plane point (world) */
	pt_vec3 d;      /* capsule b - a, or the plane's unit normal (world) */
	float r, rb;    /* radius (at a) and radius at b */
	float inv_len2; /* capsule: 1 / |b - a|^2 (0 when degenerate) */
	pt_vec3 inv_radii; /* ellipsoid */
	pt_mat3 rot;       /* ellipsoid: local -> world rotation */
} pt_collider_rt;

/* Transforms one collider definition by the head pose (rotation `rot` of head->q); for a
 * bone-attached collider `head` is the bone's pose instead (bones.h chooses). */
void pt_collider_to_world(const pt_collider_def *k, const pt_pose *head, const pt_mat3 *rot,
			  pt_collider_rt *out);

/* Transforms n collider definitions by the head pose (rotation `rot` of head->q). */
void pt_colliders_to_world(const pt_collider_def *defs, int n, const pt_pose *head,
			   const pt_mat3 *rot, pt_collider_rt *out);

/* Signed distance from p to the collider surface (negative: penetrating) and the unit
 * direction in which increasing distance lies. For ellipsoids and tapered capsules the
 * distance is measured along the ray from the centre / axis (exact on the surface). */
float pt_collider_distance(const pt_collider_rt *c, pt_vec3 p, pt_vec3 *dir);

/* Pushes p (a sphere of `radius`) out of the colliders selected by mask. Returns 1 if
 * p moved. */
int pt_collide_point(const pt_collider_rt *cols, int n, const pt_collider_mask *mask, float radius,
                     pt_vec3 *p);

#endif
