/* `ponytail sim --summary`'s max_segment_error_ratio (sim_output.c): every segment is
 * measured against its own rest length, from the strand's rest shape ("rest") when it has
 * one, else segment_length. Frames are built here from the rest shape, posed rigidly with
 * the head, then stretched by known amounts. The CLI is not a library, so its files are
 * compiled in here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "../../clients/cli/sdf.c"
#include "../../clients/cli/sim_output.c"
/* both files have a static finite3() of their own */
#define finite3 sim_tips_finite3
#include "../../clients/cli/sim_tips.c"
#undef finite3
#include "ponytail/schema.h"

/* A chain of three unequal segments, 1, 5 and 2 cm, not in a line: the schema sets
 * segment_length to the first one's, so measuring every segment against segment_length
 * (the old rule) reads 4.0 for the second. */
static const char *const unequal =
    "{\"prewarm_s\": 0, %s \"colliders\": [],"
    " \"strands\": [{\"rest\": [[0, 0.05, -0.1], [0, 0.04, -0.1], [0, -0.01, -0.1],"
    "                          [0.012, -0.026, -0.1]]},"
    "               {\"anchor\": [0.05, 0.05, -0.1], \"points\": 4, \"segment_length\": 0.03}]}";

static void parse(pt_instance_def *d, const char *solver)
{
	char text[1024];
	json_error_t je;
	pt_error e;
	snprintf(text, sizeof text, unequal, solver);
	json_t *j = json_loads(text, 0, &je);
	assert_non_null(j);
	assert_true(pt_instance_def_init(d));
	assert_int_equal(pt_schema_parse(j, d, NULL, &e), 0);
	json_decref(j);
}

/* q v q^-1 */
static pt_vec3 rotate(pt_quat q, pt_vec3 v)
{
	double x = q.x, y = q.y, z = q.z, w = q.w;
	double tx = 2 * (y * v.z - z * v.y), ty = 2 * (z * v.x - x * v.z),
	       tz = 2 * (x * v.y - y * v.x);
	pt_vec3 r = {(float)(v.x + w * tx + (y * tz - z * ty)),
	             (float)(v.y + w * ty + (z * tx - x * tz)),
	             (float)(v.z + w * tz + (x * ty - y * tx))};
	return r;
}

/* The world points of every strand at rest with the head at `head`; point `stretch_at`
 * of strand 0 (and every point after it) moved out along its segment by `stretch` of
 * that segment's rest length. */
static void rest_frame(const pt_instance_def *d, const pt_pose *head, sim_layout *lay, pt_vec3 *pts,
                       int stretch_at, double stretch)
{
	memset(lay, 0, sizeof *lay);
	lay->strands = d->strand_count;
	for (int s = 0; s < d->strand_count; s++) {
		const pt_strand_def *st = &d->strands[s];
		pt_vec3 at = st->anchor, shift = {0, 0, 0};
		lay->first[s] = lay->total;
		lay->points[s] = st->points;
		for (int i = 0; i < st->points; i++) {
			if (i > 0) {
				float len;
				pt_vec3 dir;
				pt_strand_rest_segment(st, i - 1, &len, &dir);
				at.x += dir.x * len, at.y += dir.y * len, at.z += dir.z * len;
				if (s == 0 && i == stretch_at) {
					shift.x = (float)(dir.x * len * stretch);
					shift.y = (float)(dir.y * len * stretch);
					shift.z = (float)(dir.z * len * stretch);
				}
			}
			pt_vec3 local = {at.x + shift.x, at.y + shift.y, at.z + shift.z};
			pt_vec3 r = rotate(head->q, local);
			pt_vec3 w = {head->p.x + r.x, head->p.y + r.y, head->p.z + r.z};
			pts[lay->total++] = w;
		}
	}
}

/* max_segment_error_ratio over one frame. */
static double ratio_of(const pt_instance_def *d, int stretch_at, double stretch)
{
	static const pt_pose turned = {{0.1f, 1.5f, -0.2f}, {0.2f, 0.3f, -0.1f, 0.92736185f}};
	sim_layout lay;
	pt_vec3 pts[PT_MAX_JOINTS];
	sim_metrics m;
	rest_frame(d, &turned, &lay, pts, 0, 0);
	sim_metrics_init(&m, d, &lay, 60, &turned, pts);
	rest_frame(d, &turned, &lay, pts, stretch_at, stretch);
	sim_metrics_add(&m, 0, &turned, pts);
	return m.max_segment_error;
}

/* The old rule's figure for the same rest frame: every segment against segment_length. */
static double old_rule(const pt_instance_def *d)
{
	const pt_strand_def *st = &d->strands[0];
	double worst = 0;
	for (int j = 0; j < st->points - 1; j++) {
		float len;
		pt_vec3 dir;
		pt_strand_rest_segment(st, j, &len, &dir);
		worst = fmax(worst, fabs(len - st->segment_length) / st->segment_length);
	}
	return worst;
}

static void check_solver(const char *name, const char *solver)
{
	pt_instance_def d;
	parse(&d, solver);
	assert_true(d.strands[0].has_rest);
	assert_true(old_rule(&d) > 3.9); /* what the summary used to report at rest */
	double at_rest = ratio_of(&d, 0, 0);
	print_message("%s: at rest %.3g (the old rule: %.3g)\n", name, at_rest, old_rule(&d));
	assert_true(at_rest < 1e-4); /* float rounding of world points ~1.5 m from the origin */
	/* each segment stretched by 1 %, the short first one and the long second one */
	for (int i = 1; i < d.strands[0].points; i++) {
		double r = ratio_of(&d, i, 0.01);
		assert_true(fabs(r - 0.01) < 1e-4);
	}
	/* compressed by 3 % */
	assert_true(fabs(ratio_of(&d, 2, -0.03) - 0.03) < 1e-4);
	pt_instance_def_fini(&d);
}

static void test_unequal_rest_segments_verlet(void **state)
{
	(void)state;
	check_solver("verlet", "");
}

static void test_unequal_rest_segments_springbone(void **state)
{
	(void)state;
	check_solver("springbone", "\"solver\": \"springbone\",");
}

/* A straight strand keeps segment_length: 3 cm segments, one of them 3.06 cm. */
static void test_straight_strand(void **state)
{
	static const pt_pose still = {{0, 1.5f, 0}, {0, 0, 0, 1}};
	pt_instance_def d;
	sim_layout lay;
	pt_vec3 pts[PT_MAX_JOINTS];
	sim_metrics m;
	(void)state;
	parse(&d, "");
	rest_frame(&d, &still, &lay, pts, 0, 0);
	sim_metrics_init(&m, &d, &lay, 60, &still, pts);
	sim_metrics_add(&m, 0, &still, pts);
	assert_true(m.max_segment_error < 1e-4);
	pt_vec3 *tip = &pts[lay.first[1] + 3];
	tip->y -= 0.0006f; /* the last segment points down: 3 cm -> 3.06 cm */
	sim_metrics_add(&m, 1, &still, pts);
	assert_true(fabs(m.max_segment_error - 0.02) < 1e-4);
	pt_instance_def_fini(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unequal_rest_segments_verlet),
	    cmocka_unit_test(test_unequal_rest_segments_springbone),
	    cmocka_unit_test(test_straight_strand),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
