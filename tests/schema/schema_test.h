/* Helpers shared by the schema tests: parse from text, and compare definitions in every
 * field that has a meaning (unused joints and shape-irrelevant collider fields aside). */
#ifndef PT_SCHEMA_TEST_H
#define PT_SCHEMA_TEST_H

#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "ponytail/instance.h"
#include "ponytail/schema.h"
#include "testdef.h"

/* Text -> definition through the public API; 0 or -1 with *e set. */
static inline int parse_text(const char *text, pt_instance_def *out, const char *const *extra,
                             pt_error *e)
{
	json_t *j = pt_schema_read_buffer(text, strlen(text), e);
	if (!j)
		return -1;
	int rc = pt_schema_parse(j, out, extra, e);
	json_decref(j);
	return rc;
}

static inline int v3_same(pt_vec3 a, pt_vec3 b)
{
	return a.x == b.x && a.y == b.y && a.z == b.z;
}

/* Writes the first differing field into diff (e.g. "strands[1].joints[3].stiffness") and
 * returns 0, or returns 1 when a and b mean the same instance. */
static inline int defs_equal(const pt_instance_def *a, const pt_instance_def *b, char *diff,
                             size_t cap)
{
#define DIFF(cond, ...)                                                                            \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			snprintf(diff, cap, __VA_ARGS__);                                          \
			return 0;                                                                  \
		}                                                                                  \
	} while (0)
	DIFF(strcmp(a->name, b->name) == 0, "name");
	DIFF(strcmp(a->room, b->room) == 0, "room");
	DIFF(a->solver == b->solver, "solver");
	DIFF(a->substeps == b->substeps, "substeps");
	DIFF(a->prewarm_s == b->prewarm_s, "prewarm_s");
	DIFF(v3_same(a->gravity, b->gravity), "gravity");
	DIFF(v3_same(a->wind.velocity, b->wind.velocity), "wind.velocity");
	DIFF(a->wind.turbulence == b->wind.turbulence, "wind.turbulence");
	DIFF(a->wind.drag == b->wind.drag, "wind.drag");
	DIFF(a->wind.seed == b->wind.seed, "wind.seed");
	DIFF(a->verlet.damping == b->verlet.damping, "verlet.damping");
	DIFF(a->verlet.iterations == b->verlet.iterations, "verlet.iterations");
	DIFF(a->verlet.bend_stiffness == b->verlet.bend_stiffness, "verlet.bend_stiffness");
	DIFF(a->verlet.stretch == b->verlet.stretch, "verlet.stretch");
	DIFF(a->verlet.stretch_stiffness == b->verlet.stretch_stiffness,
	     "verlet.stretch_stiffness");
	DIFF(a->verlet.stretch_max_strain == b->verlet.stretch_max_strain,
	     "verlet.stretch_max_strain");
	DIFF(a->verlet.self_collision == b->verlet.self_collision, "verlet.self_collision");
	DIFF(a->springbone.form == b->springbone.form, "springbone.form");
	DIFF(a->springbone.center_head == b->springbone.center_head, "springbone.center_head");
	DIFF(a->teleport.distance == b->teleport.distance, "teleport.distance");
	DIFF(a->teleport.angle_deg == b->teleport.angle_deg, "teleport.angle_deg");
	DIFF(a->teleport.mode == b->teleport.mode, "teleport.mode");
	DIFF(a->collider_count == b->collider_count, "collider_count");
	DIFF(a->strand_count == b->strand_count, "strand_count");
	for (int i = 0; i < a->strand_count; i++) {
		const pt_strand_def *s = &a->strands[i], *t = &b->strands[i];
		DIFF(v3_same(s->anchor, t->anchor), "strands[%d].anchor", i);
		DIFF(v3_same(s->direction, t->direction), "strands[%d].direction", i);
		DIFF(s->points == t->points, "strands[%d].points", i);
		DIFF(s->segment_length == t->segment_length, "strands[%d].segment_length", i);
		/* the same colliders in the same order ("all" and the full list in index
		 * order say the same) */
		int ns = s->collider_n == PT_COLLIDERS_ALL ? a->collider_count : s->collider_n;
		int nt = t->collider_n == PT_COLLIDERS_ALL ? b->collider_count : t->collider_n;
		DIFF(ns == nt, "strands[%d].colliders", i);
		for (int k = 0; k < ns && k < nt; k++)
			DIFF((s->collider_n == PT_COLLIDERS_ALL ? k : s->collider_list[k]) ==
			         (t->collider_n == PT_COLLIDERS_ALL ? k : t->collider_list[k]),
			     "strands[%d].colliders[%d]", i, k);
		DIFF(strcmp(s->anchor_bone, t->anchor_bone) == 0, "strands[%d].anchor_bone", i);
		DIFF(strcmp(s->root_joint, t->root_joint) == 0, "strands[%d].root_joint", i);
		DIFF(s->mass_root == t->mass_root, "strands[%d].mass_root", i);
		DIFF(s->mass_tip == t->mass_tip, "strands[%d].mass_tip", i);
		DIFF(s->radius == t->radius, "strands[%d].radius", i);
		for (int j = 0; j < s->points - 1; j++) {
			const pt_joint_def *p = &s->joints[j], *q = &t->joints[j];
			DIFF(p->stiffness == q->stiffness, "strands[%d].joints[%d].stiffness", i,
			     j);
			DIFF(p->drag_force == q->drag_force, "strands[%d].joints[%d].drag_force", i,
			     j);
			DIFF(p->gravity_power == q->gravity_power,
			     "strands[%d].joints[%d].gravity_power", i, j);
			DIFF(p->hit_radius == q->hit_radius, "strands[%d].joints[%d].hit_radius", i,
			     j);
			DIFF(v3_same(p->gravity_dir, q->gravity_dir),
			     "strands[%d].joints[%d].gravity_dir", i, j);
			DIFF(p->limit == q->limit, "strands[%d].joints[%d].limit", i, j);
			DIFF(p->limit_angle == q->limit_angle, "strands[%d].joints[%d].limit_angle",
			     i, j);
			DIFF(v3_same(p->limit_axis, q->limit_axis),
			     "strands[%d].joints[%d].limit_axis", i, j);
			DIFF(strcmp(p->name, q->name) == 0, "strands[%d].joints[%d].name", i, j);
		}
	}
	DIFF(a->bone_count == b->bone_count, "bones");
	for (int i = 0; i < a->bone_count; i++) {
		const pt_bone_def *x = &a->bones[i], *y = &b->bones[i];
		DIFF(x->bone == y->bone, "bones[%d]", i);
		DIFF(v3_same(x->position, y->position), "bones[%d].position", i);
		DIFF(x->rotation.x == y->rotation.x && x->rotation.y == y->rotation.y &&
		         x->rotation.z == y->rotation.z && x->rotation.w == y->rotation.w,
		     "bones[%d].rotation", i);
	}
	for (int i = 0; i < a->collider_count; i++) {
		const pt_collider_def *c = &a->colliders[i], *d = &b->colliders[i];
		DIFF(c->shape == d->shape, "colliders[%d].shape", i);
		DIFF(c->attach == d->attach, "colliders[%d].attach", i);
		DIFF(c->attach != PT_ATTACH_BONE || c->bone == d->bone, "colliders[%d].attach", i);
		switch (c->shape) {
		case PT_SHAPE_SPHERE:
		case PT_SHAPE_INSIDE_SPHERE:
			DIFF(v3_same(c->center, d->center), "colliders[%d].center", i);
			DIFF(c->radius == d->radius, "colliders[%d].radius", i);
			break;
		case PT_SHAPE_ELLIPSOID:
			DIFF(v3_same(c->center, d->center), "colliders[%d].center", i);
			DIFF(v3_same(c->radii, d->radii), "colliders[%d].radii", i);
			break;
		case PT_SHAPE_CAPSULE:
			DIFF((c->radius_b < 0 && d->radius_b < 0) || c->radius_b == d->radius_b,
			     "colliders[%d].radius_b", i);
			/* fall through */
		case PT_SHAPE_INSIDE_CAPSULE:
			DIFF(v3_same(c->a, d->a), "colliders[%d].a", i);
			DIFF(v3_same(c->b, d->b), "colliders[%d].b", i);
			DIFF(c->radius == d->radius, "colliders[%d].radius", i);
			break;
		default:
			DIFF(v3_same(c->center, d->center), "colliders[%d].point", i);
			DIFF(v3_same(c->normal, d->normal), "colliders[%d].normal", i);
			break;
		}
	}
#undef DIFF
	return 1;
}

#endif
