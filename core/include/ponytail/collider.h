/* Ponytail core: collider geometry for callers outside the solver (measurements, tools).
 *
 * The same signed distances the solvers push points out with, so a tool that reports
 * penetration measures exactly what the simulation resolves.
 */
#ifndef PONYTAIL_COLLIDER_H
#define PONYTAIL_COLLIDER_H

#include "ponytail/instance.h"
#include "ponytail/types.h"

/* Signed distance (m) from world point p to the surface of collider `c` when the head
 * is at `head` (head-attached colliders move with it): negative inside the solid part
 * (for inside_* shapes: outside the allowed volume). Ellipsoids and tapered capsules
 * are measured along the ray from the centre / axis, exact on the surface. If `dir` is
 * not NULL it receives the unit direction in which the distance grows. `c` must be
 * valid (pt_instance_validate). */
float pt_collider_signed_distance(const pt_collider_def *c, pt_pose head, pt_vec3 p, pt_vec3 *dir);

#endif
