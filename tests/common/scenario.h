/* Scenario builders and measurements shared by the core tests and benchmarks. */
#ifndef PT_TEST_SCENARIO_H
#define PT_TEST_SCENARIO_H

#include "ponytail/instance.h"
#include "ponytail/motion.h"
#include "ponytail/world.h"
#include "ptp/proto.h"
#include "testdef.h"

/* Sets d's colliders to the standard head: a head sphere (r 0.1 at the head origin) and a
 * neck capsule (r 0.05 from (0, -0.08, 0) to (0, -0.2, 0)), both head-attached. */
void scenario_head_and_neck(pt_instance_def *d);

/* Initialises *d (finish it with pt_instance_def_fini) as the default instance with
 * twin tails (two 12 x 0.03 m strands behind the head), a head sphere (r 0.1) and a
 * neck capsule (r 0.05), verlet, 3 iterations. */
void scenario_twin_tails(pt_instance_def *d);

/* The wire's shape of d (strand points, segment length, anchor, direction), as the proto
 * tests and benchmarks hand it to an encoder. */
ptp_shape_t scenario_shape(const pt_instance_def *d);

/* Per-tick measurements of one instance against its definition. */
typedef struct scenario_stats {
	double max_penetration_m;  /* deepest point inside any collider it selects */
	double max_segment_error;  /* max |len - L| / L */
	double max_tip_speed;      /* m/s */
	int nan_count;             /* non-finite coordinates seen */
} scenario_stats;

/* Measures the current state (head pose `head`) into `st` (max-accumulating) and
 * returns the largest tip speed of this tick given the previous tips (may be NULL),
 * which it updates; dt = 0 only records the tips. */
double scenario_measure(const pt_world *w, pt_id id, const pt_instance_def *def, pt_pose head,
			double dt, pt_vec3 *prev_tips, scenario_stats *st);

/* Runs `motion` for `seconds` at tick_hz x substeps; returns stats, and the time after
 * `still_from` at which every tip stayed below 1 cm/s for good (-1 if never). */
scenario_stats scenario_run(pt_world *w, pt_id id, const pt_instance_def *def,
			    const pt_motion *motion, double seconds, double tick_hz, int substeps,
			    double still_from, double *settle_s);

/* Appends a collider of `shape` attached by `attach`, zeroed otherwise (radius_b -1). */
pt_collider_def *scenario_add_collider(pt_instance_def *d, pt_shape shape, pt_attach attach);

/* Hairstyles that rest in contact (test_hairstyles.c, test_touch_contact.c): bangs on the
 * forehead, long hair over the head, a shoulder and the neck, a strand on a world plane,
 * hair over an ellipsoid head. scenario_resting_style initialises *d (finish it with
 * pt_instance_def_fini) as style k, released from its rest pose with no prewarm. */
enum { SCENARIO_STYLE_BANGS, SCENARIO_STYLE_LONG, SCENARIO_STYLE_PLANE, SCENARIO_STYLE_ELLIPSOID,
       SCENARIO_STYLES };
extern const char *const scenario_style_name[SCENARIO_STYLES];
void scenario_resting_style(pt_instance_def *d, int k);

#endif
