/* Signed distances to the colliders of an instance definition, for `ponytail sim
 * --summary`'s penetration measure. Independent of core's collision code on purpose: a
 * second implementation is what makes the measure worth having. Exact for every shape
 * (tapered capsules are round cones, ellipsoids are solved, not approximated). */
#ifndef PONYTAIL_CLI_SDF_H
#define PONYTAIL_CLI_SDF_H

#include "ponytail/instance.h"
#include "ponytail/types.h"

/* Signed distance in metres from world point p to collider c (head-attached colliders
 * placed by `head`; bone-attached ones by `head` standing for their bone's pose): > 0
 * where a point may be (outside a solid shape, inside an inside_* shape), < 0 where it
 * penetrates. A plane's normal need not be unit length. */
double sim_sdf(const pt_collider_def *c, const pt_pose *head, pt_vec3 p);

/* World point p in the head's frame: q^-1 (p - head position), double precision. */
void sim_head_local(const pt_pose *head, pt_vec3 p, double out[3]);

/* The primitives, in the collider's own frame (double precision). */
double sim_sdf_round_cone(const double p[3], const double a[3], const double b[3], double ra,
                          double rb);
double sim_sdf_ellipsoid(const double p[3], const double radii[3]);

#endif
