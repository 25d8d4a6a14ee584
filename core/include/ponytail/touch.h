/* Touch and grabs: what other avatars' hands do to an instance, set by a host from outside
 * the instance's definition (the daemon: server/README.md "Touch and grabs") and valid
 * for the next step only.
 *
 * Touch: world-space spheres and capsules that every point of every strand is kept out
 * of, as out of the definition's own colliders (verlet: with the point's particle radius;
 * spring bone: with the joint's hit_radius), swept from their pose at the step's start
 * (a0, b0) to their pose at its end (a1, b1), linearly per substep (per 1/60 s frame for
 * frame-rate spring bones). After every substep no point is deeper than 1 mm in a touch
 * and every segment keeps its length as the solver keeps it without touch.
 *
 * Grab: point `point` of strand `strand` is pinned to a world target moving from t0 to t1
 * over the step (linearly per substep or frame); the points from the strand's root to it
 * keep their segment lengths (the root stays where the strand hangs from), so a target
 * beyond the chain's reach leaves the grabbed point on the line from the root toward it,
 * at its reach; the points past it hang from it as usual.
 *
 * Both are consumed by the step that uses them (pt_world_step, _range): a host that stops
 * setting them stops them within one step, so a hand that left leaves no ghost collider.
 * Neither is part of the instance's snapshot or state hash (like a head pose, they are
 * inputs of one step; a recording keeps the calls).
 */
#ifndef PONYTAIL_TOUCH_H
#define PONYTAIL_TOUCH_H

#include <stdint.h>

#include "ponytail/instance.h"
#include "ponytail/types.h"
#include "ponytail/world.h"

enum {
	PT_MAX_TOUCH = 64, /* touch colliders an instance takes for one step */
	PT_MAX_GRABS = 8,  /* grabs an instance takes for one step */
};

/* Every member four bytes (no padding: recordings take it as bytes). */
typedef struct pt_touch {
	int32_t shape;  /* PT_SHAPE_SPHERE (a only) or PT_SHAPE_CAPSULE */
	float radius;   /* m, [0.001, 1] */
	pt_vec3 a0, b0; /* world ends at the step's start, |.| <= 10000 m */
	pt_vec3 a1, b1; /* world ends at the step's end */
} pt_touch;

typedef struct pt_grab {
	int32_t strand; /* [0, the instance's strand count) */
	int32_t point;  /* [1, that strand's points): the root cannot be grabbed */
	pt_vec3 t0, t1; /* the target at the step's start and end, world, |.| <= 10000 m */
} pt_grab;

/* Checks n touch colliders (n in [0, PT_MAX_TOUCH]); the first error names its field as
 * "touch[3].radius" with the allowed range. Non-finite values are refused. */
pt_error pt_touch_validate(const pt_touch *t, int n);

/* Checks n grabs (n in [0, PT_MAX_GRABS]) against a shape: strand_count strands of
 * points[s] points (pt_world_shape's); errors name "grabs[1].point" and the range. Two
 * grabs of one point are refused. */
pt_error pt_grabs_validate(const pt_grab *g, int n, int strand_count, const int *points);

/* Sets the touch colliders (grabs) of the instance's next step; n = 0 clears them. They
 * must pass pt_touch_validate (pt_grabs_validate against the instance's shape), else 0 is
 * returned and nothing changes. Returns 1; 0 for a stale id or invalid input; -1 on
 * allocation failure (unchanged). The storage is allocated on the first call and kept,
 * so a host setting them every tick does not allocate. */
int pt_world_set_touch(pt_world *w, pt_id id, const pt_touch *t, int n);
int pt_world_set_grabs(pt_world *w, pt_id id, const pt_grab *g, int n);

#endif
