/* Touch on hair that rests in contact (ponytail/touch.h, issue 40): the hairstyles of
 * test_hairstyles.c (bangs on the forehead, long hair over the head, a shoulder and the
 * neck, a strand on a plane, hair over an ellipsoid head; scenario_resting_style), left to
 * settle, then a hand sphere swept through the middle of their hair at every substep
 * count 1 to 16 and 1, 3 and 8 iterations: after every tick no point is deeper than 1 mm in
 * the hand, every segment keeps its length (exact stretch: 1e-5), nothing is non-finite,
 * the hair was pushed, and once the hand has gone the style settles at rest again (every
 * point under 1 cm/s from 3 s on, test_hairstyles' bound). Expectations are computed here:
 * the distance to the hand's centre, the lengths from the definition. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ponytail/touch.h"
#include "scenario.h"
#include "vecmath.h"

#define HAND_R 0.03f /* the hand sphere, m */
#define SPEED 0.5    /* m/s */

typedef struct result {
	double depth;   /* deepest a point was inside the hand (with its radius) after a tick */
	double lengths; /* largest relative segment length error after a tick */
	double moved;   /* farthest a point got from where the style had settled, m */
	double after;   /* largest point speed 3 s to 5 s after the hand left, m/s */
} result;

static result run(int k, int substeps, int iterations)
{
	pt_instance_def d;
	scenario_resting_style(&d, k);
	d.verlet.iterations = iterations;
	assert_true(pt_instance_validate(&d).ok);
	pt_world *w = pt_world_create(NULL);
	pt_pose head = {pt_v3(0, 1.5f, 0), pt_quat_identity()};
	pt_id id = pt_world_create_instance(w, &d, head);
	int sc, pts[PT_MAX_STRANDS];
	int n = pt_world_shape(w, id, &sc, pts);
	pt_vec3 *p = malloc(sizeof *p * (size_t)n), *rest = malloc(sizeof *rest * (size_t)n);
	pt_vec3 *prev = malloc(sizeof *prev * (size_t)n);
	assert_non_null(p && rest && prev);
	const float dt = 1.0f / 60.0f;
	for (int t = 0; t < 180; t++) /* settle 3 s */
		pt_world_step(w, dt, substeps);
	pt_world_read_points(w, id, rest, n);
	/* the hand goes along +x through the middle of the hair (its points but the roots) */
	pt_vec3 c = pt_v3(0, 0, 0);
	int m = 0;
	for (int s = 0, i = 0; s < sc; i += pts[s++])
		for (int j = 1; j < pts[s]; j++, m++)
			c = v3_add(c, rest[i + j]);
	c = v3_scale(c, 1.0f / (float)m);
	result r = {0, 0, 0, 0};
	int ticks = (int)(0.6 / SPEED * 60.0) + 1;
	for (int t = 0; t < ticks; t++) {
		pt_touch h;
		memset(&h, 0, sizeof h);
		h.shape = PT_SHAPE_SPHERE;
		h.radius = HAND_R;
		h.a0 = h.b0 = v3_add(c, pt_v3((float)(-0.3 + SPEED * t * dt), 0, 0));
		h.a1 = h.b1 = v3_add(c, pt_v3((float)(-0.3 + SPEED * (t + 1) * dt), 0, 0));
		assert_int_equal(pt_world_set_touch(w, id, &h, 1), 1);
		pt_world_step(w, dt, substeps);
		pt_world_read_points(w, id, p, n);
		for (int s = 0, i = 0; s < sc; i += pts[s++]) {
			const pt_strand_def *sd = &d.strands[s];
			for (int j = 0; j < pts[s]; j++) {
				pt_vec3 q = p[i + j];
				assert_true(isfinite(q.x) && isfinite(q.y) && isfinite(q.z));
				double dist = v3_len(v3_sub(q, h.a1));
				if (j > 0) /* a root stays on its anchor */
					r.depth = fmax(r.depth, (double)HAND_R + sd->radius - dist);
				r.moved = fmax(r.moved, v3_len(v3_sub(q, rest[i + j])));
				if (j > 0) {
					double l = v3_len(v3_sub(q, p[i + j - 1]));
					r.lengths = fmax(r.lengths, fabs(l - sd->segment_length) / sd->segment_length);
				}
			}
		}
	}
	/* gone: the style settles again */
	pt_world_read_points(w, id, prev, n);
	for (int t = 1; t <= 300; t++) {
		pt_world_step(w, dt, substeps);
		pt_world_read_points(w, id, p, n);
		for (int i = 0; t > 180 && i < n; i++)
			r.after = fmax(r.after, v3_len(v3_sub(p[i], prev[i])) / dt);
		memcpy(prev, p, sizeof *p * (size_t)n);
	}
	free(p), free(rest), free(prev);
	pt_world_destroy(w);
	pt_instance_def_fini(&d);
	return r;
}

static void test_hand_through_resting_styles(void **state)
{
	(void)state;
	const int subs[] = {1, 2, 4, 8, 16}, its[] = {1, 3, 8};
	for (int k = 0; k < SCENARIO_STYLES; k++) {
		result worst = {0, 0, 1, 0};
		for (int si = 0; si < 5; si++)
			for (int ii = 0; ii < 3; ii++) {
				result r = run(k, subs[si], its[ii]);
				worst.depth = fmax(worst.depth, r.depth);
				worst.lengths = fmax(worst.lengths, r.lengths);
				worst.moved = fmin(worst.moved, r.moved);
				worst.after = fmax(worst.after, r.after);
				if (r.depth > 0.001001 || r.lengths > 1e-5 || r.moved < 0.01 || r.after >= 0.01)
					print_error("%s %d substeps %d iterations: depth %.6f m, lengths %.2e, "
					            "moved %.3f m, speed after %.4f m/s\n",
					            scenario_style_name[k], subs[si], its[ii], r.depth, r.lengths,
					            r.moved, r.after);
				assert_true(r.depth <= 0.001001);
				assert_true(r.lengths <= 1e-5);
				assert_true(r.moved >= 0.01);
				assert_true(r.after < 0.01);
			}
		print_message("%-11s worst depth %.4f mm, length error %.1e, least push %.3f m, "
		              "speed after %.5f m/s\n",
		              scenario_style_name[k], worst.depth * 1e3, worst.lengths, worst.moved,
		              worst.after);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hand_through_resting_styles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
