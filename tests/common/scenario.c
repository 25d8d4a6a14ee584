#include "scenario.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collide.h"
#include "vecmath.h"

void scenario_head_and_neck(pt_instance_def *d)
{
	d->collider_count = 2;
	memset(d->colliders, 0, sizeof d->colliders[0] * 2);
	d->colliders[0].shape = PT_SHAPE_SPHERE;
	d->colliders[0].attach = PT_ATTACH_HEAD;
	d->colliders[0].radius = 0.1f;
	d->colliders[0].radius_b = -1.0f;
	d->colliders[1].shape = PT_SHAPE_CAPSULE;
	d->colliders[1].attach = PT_ATTACH_HEAD;
	d->colliders[1].a = pt_v3(0, -0.08f, 0);
	d->colliders[1].b = pt_v3(0, -0.2f, 0);
	d->colliders[1].radius = 0.05f;
	d->colliders[1].radius_b = -1.0f;
}

void scenario_twin_tails(pt_instance_def *d)
{
	tdef_init(d);
	tdef_strands(d, 2);
	for (int s = 0; s < 2; s++)
		d->strands[s].anchor = pt_v3(s == 0 ? -0.05f : 0.05f, 0.04f, -0.11f);
	scenario_head_and_neck(d);
}

double scenario_measure(const pt_world *w, pt_id id, const pt_instance_def *def, pt_pose head,
			double dt, pt_vec3 *prev_tips, scenario_stats *st)
{
	pt_vec3 pts[PT_MAX_JOINTS];
	int n = pt_world_read_points(w, id, pts, PT_MAX_JOINTS);
	pt_mat3 R = m3_from_quat(head.q);
	pt_collider_rt cols[PT_MAX_COLLIDERS];
	pt_colliders_to_world(def->colliders, def->collider_count, &head, &R, cols);
	double tip_max = 0;
	int base = 0;
	for (int s = 0; s < def->strand_count; s++) {
		const pt_strand_def *sd = &def->strands[s];
		pt_collider_mask sees = pt_strand_collider_mask(sd, def->collider_count);
		for (int j = 0; j < sd->points; j++) {
			pt_vec3 p = pts[base + j];
			if (!v3_finite(p)) {
				st->nan_count++;
				continue;
			}
			if (j > 0) {
				double len = v3_len(v3_sub(p, pts[base + j - 1]));
				double e = fabs(len - sd->segment_length) / sd->segment_length;
				if (e > st->max_segment_error)
					st->max_segment_error = e;
				for (int c = 0; c < def->collider_count; c++) {
					if (!pt_mask_test(&sees, c))
						continue;
					pt_vec3 dir;
					double dist = pt_collider_distance(&cols[c], p, &dir) - sd->radius;
					if (-dist > st->max_penetration_m)
						st->max_penetration_m = -dist;
				}
			}
		}
		pt_vec3 tip = pts[base + sd->points - 1];
		if (prev_tips && dt > 0) {
			double v = v3_len(v3_sub(tip, prev_tips[s])) / dt;
			if (v > tip_max)
				tip_max = v;
		}
		if (prev_tips)
			prev_tips[s] = tip;
		base += sd->points;
	}
	(void)n;
	if (tip_max > st->max_tip_speed)
		st->max_tip_speed = tip_max;
	return tip_max;
}

scenario_stats scenario_run(pt_world *w, pt_id id, const pt_instance_def *def,
			    const pt_motion *motion, double seconds, double tick_hz, int substeps,
			    double still_from, double *settle_s)
{
	scenario_stats st;
	memset(&st, 0, sizeof st);
	pt_vec3 tips[PT_MAX_STRANDS];
	scenario_measure(w, id, def, pt_motion_pose(motion, 0), 0.0, tips, &st);
	int ticks = (int)lround(seconds * tick_hz);
	double last_fast = still_from;
	for (int k = 1; k <= ticks; k++) {
		double t = k / tick_hz;
		pt_pose head = pt_motion_pose(motion, t);
		pt_world_set_head(w, id, head);
		pt_world_step(w, (float)(1.0 / tick_hz), substeps);
		double v = scenario_measure(w, id, def, head, 1.0 / tick_hz, tips, &st);
		if (t > still_from && v >= 0.01)
			last_fast = t;
	}
	if (settle_s)
		*settle_s = last_fast < seconds - 0.5 ? last_fast - still_from : -1.0;
	return st;
}

ptp_shape_t scenario_shape(const pt_instance_def *d)
{
	ptp_shape_t s;
	memset(&s, 0, sizeof s);
	s.strand_count = (uint16_t)d->strand_count;
	for (int i = 0; i < d->strand_count; i++) {
		const pt_strand_def *st = &d->strands[i];
		s.strands[i].points = (uint8_t)st->points;
		s.strands[i].segment_length = st->segment_length;
		s.strands[i].anchor[0] = st->anchor.x;
		s.strands[i].anchor[1] = st->anchor.y;
		s.strands[i].anchor[2] = st->anchor.z;
		s.strands[i].direction[0] = st->direction.x;
		s.strands[i].direction[1] = st->direction.y;
		s.strands[i].direction[2] = st->direction.z;
	}
	return s;
}

pt_collider_def *scenario_add_collider(pt_instance_def *d, pt_shape shape, pt_attach attach)
{
	pt_collider_def *c = &d->colliders[d->collider_count++];
	memset(c, 0, sizeof *c);
	c->shape = shape, c->attach = attach, c->radius_b = -1.0f;
	return c;
}

static void add_strand(pt_instance_def *d, pt_vec3 anchor, pt_vec3 dir, int points, float len)
{
	pt_strand_def *s = pt_instance_def_add_strand(d);
	if (!s)
		abort();
	s->anchor = anchor, s->direction = dir, s->points = points, s->segment_length = len;
}

const char *const scenario_style_name[SCENARIO_STYLES] = {"bangs", "long hair", "on a plane",
                                                         "ellipsoid"};

void scenario_resting_style(pt_instance_def *d, int k)
{
	tdef_init(d);
	d->prewarm_s = 0;
	tdef_strands(d, 0);
	d->collider_count = 0;
	pt_collider_def *c;
	switch (k) {
	case SCENARIO_STYLE_BANGS: /* three 6 x 2 cm strands lying on the forehead (the case) */
		add_strand(d, pt_v3(-0.03f, 0.09f, 0.06f), pt_v3(0, -0.2f, 1), 6, 0.02f);
		add_strand(d, pt_v3(0.03f, 0.09f, 0.06f), pt_v3(0, -0.2f, 1), 6, 0.02f);
		add_strand(d, pt_v3(0, 0.095f, 0.06f), pt_v3(0, -0.2f, 1), 6, 0.02f);
		c = scenario_add_collider(d, PT_SHAPE_SPHERE, PT_ATTACH_HEAD);
		c->radius = 0.1f;
		break;
	case SCENARIO_STYLE_LONG: /* 20 x 3 cm strands over the head sphere, a shoulder and the neck */
		add_strand(d, pt_v3(0.06f, 0.06f, -0.06f), pt_v3(0.35f, -1, 0.05f), 20, 0.03f);
		add_strand(d, pt_v3(-0.02f, 0.095f, -0.03f), pt_v3(-0.2f, 0.2f, -1), 20, 0.03f);
		c = scenario_add_collider(d, PT_SHAPE_SPHERE, PT_ATTACH_HEAD);
		c->radius = 0.1f;
		c = scenario_add_collider(d, PT_SHAPE_CAPSULE, PT_ATTACH_HEAD);
		c->a = pt_v3(0.05f, -0.25f, 0), c->b = pt_v3(0.25f, -0.27f, 0), c->radius = 0.06f;
		c = scenario_add_collider(d, PT_SHAPE_CAPSULE, PT_ATTACH_HEAD);
		c->a = pt_v3(0, -0.08f, 0), c->b = pt_v3(0, -0.2f, 0), c->radius = 0.05f;
		break;
	case SCENARIO_STYLE_PLANE: /* a 12 x 3 cm strand lying on a world floor 2 cm under its root */
		add_strand(d, pt_v3(0, -0.48f, 0), pt_v3(1, -0.05f, 0), 12, 0.03f);
		c = scenario_add_collider(d, PT_SHAPE_PLANE, PT_ATTACH_WORLD);
		c->center = pt_v3(0, 1.0f, 0), c->normal = pt_v3(0, 1, 0);
		break;
	default: /* hair over the top of an ellipsoid head (the per-instance path) */
		add_strand(d, pt_v3(0, 0.115f, 0), pt_v3(0, 0.1f, -1), 12, 0.03f);
		add_strand(d, pt_v3(0, 0.115f, 0), pt_v3(0.7f, 0.1f, -0.7f), 12, 0.03f);
		c = scenario_add_collider(d, PT_SHAPE_ELLIPSOID, PT_ATTACH_HEAD);
		c->radii = pt_v3(0.08f, 0.11f, 0.1f);
		break;
	}
}
