/* pt_schema_dump: pt_instance_def -> JSON, the inverse of pt_schema_parse.
 *
 * Out of memory anywhere makes the whole dump fail: jansson's json_object_set_new()
 * steals the value even when it fails, so building with it and checking one flag at the
 * end is leak-free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "schema_internal.h"

_Static_assert(PT_SCHEMA_DUMP_FLAGS == JSON_REAL_PRECISION(15), "PT_SCHEMA_DUMP_FLAGS");

typedef struct wr {
	int failed;
} wr;

static void put(wr *w, json_t *obj, const char *key, json_t *v)
{
	if (!v || json_object_set_new(obj, key, v))
		w->failed = 1;
}

static void push(wr *w, json_t *arr, json_t *v)
{
	if (!v || json_array_append_new(arr, v))
		w->failed = 1;
}

/* The shortest decimal (at most 17 digits) for which back(decimal) == f: printed with 15
 * significant digits it is exactly that decimal. */
static double shortest(float f, float (*back)(double))
{
	char buf[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, (double)f);
		double d = strtod(buf, NULL);
		if (back(d) == f)
			return d;
	}
	return (double)f;
}

static float to_float(double d)
{
	return (float)d;
}

json_t *pt_schema_real(float f)
{
	return json_real(shortest(f, to_float));
}

static json_t *real(float f)
{
	return pt_schema_real(f);
}

static json_t *degrees(float rad)
{
	char buf[40];
	double deg = pt_schema_rad_to_deg(rad);
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, deg);
		double d = strtod(buf, NULL);
		if (pt_schema_deg_to_rad(d) == rad)
			return json_real(d);
	}
	return json_real(deg);
}

static json_t *vec3(wr *w, pt_vec3 v)
{
	json_t *a = json_array();
	if (!a) {
		w->failed = 1;
		return NULL;
	}
	push(w, a, real(v.x));
	push(w, a, real(v.y));
	push(w, a, real(v.z));
	return a;
}

/* An enum's name; JSON null for a value outside the enum (only an invalid def has one). */
static json_t *name(const char *const *names, int i)
{
	for (int k = 0; names[k]; k++)
		if (k == i)
			return json_string(names[k]);
	return json_null();
}

/* A fixed-size name field; NULL (a failed dump) when it is not UTF-8. */
static json_t *text(const char *s, size_t cap)
{
	return json_stringn(s, strnlen(s, cap));
}

static int clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

static json_t *limit(wr *w, const pt_joint_def *j)
{
	json_t *o = json_object();
	if (!o) {
		w->failed = 1;
		return NULL;
	}
	put(w, o, "type", name(pt_schema_limit_names, (int)j->limit));
	put(w, o, "angle_deg", degrees(j->limit_angle));
	put(w, o, "axis", vec3(w, j->limit_axis));
	return o;
}

static int vec3_eq(pt_vec3 a, pt_vec3 b)
{
	return a.x == b.x && a.y == b.y && a.z == b.z;
}

static int limit_eq(const pt_joint_def *a, const pt_joint_def *b)
{
	return a->limit == b->limit && a->limit_angle == b->limit_angle &&
	       vec3_eq(a->limit_axis, b->limit_axis);
}

enum { JF_STIFFNESS, JF_DRAG, JF_GRAVITY_POWER, JF_HIT_RADIUS, JF_GRAVITY_DIR, JF_LIMIT, JF_COUNT };
static const char *const joint_keys[JF_COUNT] = {"stiffness",  "drag_force",  "gravity_power",
                                                 "hit_radius", "gravity_dir", "limit"};

static int joint_eq(int f, const pt_joint_def *a, const pt_joint_def *b)
{
	switch (f) {
	case JF_STIFFNESS:
		return a->stiffness == b->stiffness;
	case JF_DRAG:
		return a->drag_force == b->drag_force;
	case JF_GRAVITY_POWER:
		return a->gravity_power == b->gravity_power;
	case JF_HIT_RADIUS:
		return a->hit_radius == b->hit_radius;
	case JF_GRAVITY_DIR:
		return vec3_eq(a->gravity_dir, b->gravity_dir);
	default:
		return limit_eq(a, b);
	}
}

static json_t *joint_value(wr *w, int f, const pt_joint_def *j)
{
	switch (f) {
	case JF_STIFFNESS:
		return real(j->stiffness);
	case JF_DRAG:
		return real(j->drag_force);
	case JF_GRAVITY_POWER:
		return real(j->gravity_power);
	case JF_HIT_RADIUS:
		return real(j->hit_radius);
	case JF_GRAVITY_DIR:
		return vec3(w, j->gravity_dir);
	default:
		return limit(w, j);
	}
}

/* The top-level joint defaults (every field) into o. */
static void joint_fields(wr *w, json_t *o, const pt_joint_def *j)
{
	for (int f = 0; f < JF_COUNT; f++)
		put(w, o, joint_keys[f], joint_value(w, f, j));
}

/* A strand's "springbone": per field, nothing when every joint equals the base, a single
 * value when all joints agree, else one value per joint. NULL when empty. */
static json_t *strand_springbone(wr *w, const pt_strand_def *s, const pt_joint_def *base)
{
	int n = s->joints ? clampi(s->points - 1, 0, PT_MAX_POINTS - 1) : 0;
	json_t *o = json_object();
	if (!o) {
		w->failed = 1;
		return NULL;
	}
	for (int f = 0; f < JF_COUNT; f++) {
		int all_base = 1, uniform = 1;
		for (int i = 0; i < n; i++) {
			all_base &= joint_eq(f, &s->joints[i], base);
			uniform &= joint_eq(f, &s->joints[i], &s->joints[0]);
		}
		if (all_base)
			continue;
		if (uniform) {
			put(w, o, joint_keys[f], joint_value(w, f, &s->joints[0]));
			continue;
		}
		json_t *a = json_array();
		for (int i = 0; a && i < n; i++)
			push(w, a, joint_value(w, f, &s->joints[i]));
		put(w, o, joint_keys[f], a);
	}
	if (json_object_size(o) == 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *strand(wr *w, const pt_strand_def *s, const pt_joint_def *base, int colliders)
{
	json_t *o = json_object(), *mass = json_object(), *sb;
	/* joints that exist: an invalid def may claim more points, or lack storage */
	int nj = s->joints ? clampi(s->points - 1, 0, PT_MAX_POINTS - 1) : 0;
	if (!o || !mass) {
		json_decref(o);
		json_decref(mass);
		w->failed = 1;
		return NULL;
	}
	if (s->has_rest) {
		json_t *rest = json_array();
		push(w, rest, vec3(w, s->anchor));
		for (int j = 0; rest && j < nj; j++)
			push(w, rest, vec3(w, s->joints[j].rest));
		put(w, o, "rest", rest);
	} else {
		put(w, o, "anchor", vec3(w, s->anchor));
		put(w, o, "direction", vec3(w, s->direction));
		put(w, o, "points", json_integer(s->points));
		put(w, o, "segment_length", real(s->segment_length));
	}
	if (s->gravity_scale != 1.0f)
		put(w, o, "gravity_scale", real(s->gravity_scale));
	/* a list that is every collider in index order says what the default says */
	int nl = clampi(s->collider_n, -1, PT_MAX_COLLIDERS);
	int sees_all = nl == PT_COLLIDERS_ALL || nl == colliders;
	for (int i = 0; sees_all && nl >= 0 && i < nl; i++)
		sees_all = s->collider_list[i] == i;
	if (!sees_all) {
		json_t *a = json_array();
		for (int i = 0; a && i < nl; i++)
			push(w, a, json_integer(s->collider_list[i]));
		put(w, o, "colliders", a);
	}
	if (s->bone >= 0)
		put(w, o, "bone", json_string(pt_bone_name(s->bone)));
	if (s->parent_strand >= 0) {
		json_t *p = json_object();
		put(w, p, "strand", json_integer(s->parent_strand));
		put(w, p, "point", json_integer(s->parent_point));
		put(w, o, "parent", p);
	}
	if (s->anchor_bone[0])
		put(w, o, "anchor_bone", text(s->anchor_bone, sizeof s->anchor_bone));
	int named = s->root_joint[0] != 0;
	for (int j = 0; j < nj; j++)
		named |= s->joints[j].name[0] != 0;
	if (named) { /* one per point, the root bone first */
		json_t *a = json_array();
		push(w, a, text(s->root_joint, sizeof s->root_joint));
		for (int j = 0; a && j < nj; j++)
			push(w, a, text(s->joints[j].name, sizeof s->joints[j].name));
		put(w, o, "joints", a);
	}
	int per_mass = 0, per_radius = 0;
	for (int j = 0; j < nj; j++)
		per_mass |= s->joints[j].mass != 0.0f, per_radius |= !(s->joints[j].radius < 0.0f);
	put(w, mass, "root", real(s->mass_root));
	put(w, mass, "tip", real(s->mass_tip));
	if (per_mass) {
		/* one mass per point after the root; a point without its own takes the root-tip
		 * interpolation the solver would use */
		json_t *a = json_array();
		for (int j = 1; a && j <= nj; j++) {
			float t = s->points > 2 ? (float)(j - 1) / (float)(s->points - 2) : 0.0f;
			float m = s->joints[j - 1].mass;
			push(w, a, real(m > 0.0f ? m : s->mass_root + (s->mass_tip - s->mass_root) * t));
		}
		json_decref(mass);
		put(w, o, "mass", a);
	} else {
		put(w, o, "mass", mass);
	}
	if (per_radius) {
		json_t *a = json_array();
		for (int j = 0; a && j < nj; j++)
			push(w, a, real(s->joints[j].radius < 0.0f ? s->radius : s->joints[j].radius));
		put(w, o, "radius", a);
	} else {
		put(w, o, "radius", real(s->radius));
	}
	if ((sb = strand_springbone(w, s, base)) != NULL)
		put(w, o, "springbone", sb);
	return o;
}

static json_t *collider(wr *w, const pt_collider_def *c)
{
	json_t *o = json_object();
	if (!o) {
		w->failed = 1;
		return NULL;
	}
	put(w, o, "shape", name(pt_schema_shape_names, (int)c->shape));
	put(w, o, "attach",
	    c->attach == PT_ATTACH_BONE ? json_string(pt_bone_name(c->bone))
	                                : name(pt_schema_attach_names, (int)c->attach));
	switch (c->shape) {
	case PT_SHAPE_SPHERE:
	case PT_SHAPE_INSIDE_SPHERE:
		put(w, o, "center", vec3(w, c->center));
		put(w, o, "radius", real(c->radius));
		break;
	case PT_SHAPE_ELLIPSOID:
		put(w, o, "center", vec3(w, c->center));
		put(w, o, "radii", vec3(w, c->radii));
		break;
	case PT_SHAPE_CAPSULE:
	case PT_SHAPE_INSIDE_CAPSULE:
		put(w, o, "a", vec3(w, c->a));
		put(w, o, "b", vec3(w, c->b));
		put(w, o, "radius", real(c->radius));
		if (c->shape == PT_SHAPE_CAPSULE && c->radius_b >= 0.0f)
			put(w, o, "radius_b", real(c->radius_b));
		break;
	case PT_SHAPE_PLANE:
	default:
		put(w, o, "point", vec3(w, c->center));
		put(w, o, "normal", vec3(w, c->normal));
		break;
	}
	return o;
}

static json_t *bones(wr *w, const pt_instance_def *d)
{
	json_t *o = json_object();
	if (!o) {
		w->failed = 1;
		return NULL;
	}
	for (int i = 0; i < d->bone_count && i < PT_MAX_BONES; i++) {
		const pt_bone_def *b = &d->bones[i];
		json_t *e = json_object(), *q = json_array();
		const char *n = pt_bone_name(b->bone);
		if (!e || !q || !n) {
			json_decref(e), json_decref(q);
			w->failed = 1;
			continue;
		}
		put(w, e, "position", vec3(w, b->position));
		const float qs[4] = {b->rotation.x, b->rotation.y, b->rotation.z, b->rotation.w};
		for (int k = 0; k < 4; k++)
			push(w, q, real(qs[k]));
		put(w, e, "rotation", q);
		put(w, o, n, e);
	}
	return o;
}

static void top(wr *w, json_t *o, const pt_instance_def *d)
{
	json_t *wind = json_object(), *verlet = json_object(), *stretch = json_object();
	json_t *sb = json_object(), *strands = json_array(), *colliders = json_array();
	json_t *tele = json_object();
	/* strands with storage only: an invalid def may claim more */
	int ns = clampi(d->strand_count, 0, d->strands ? d->store.slots : 0);
	int nc = clampi(d->collider_count, 0, PT_MAX_COLLIDERS);
	pt_joint_def dflt = pt_joint_def_default();
	const pt_joint_def *base =
	    ns > 0 && d->strands[0].joints ? &d->strands[0].joints[0] : &dflt;

	put(w, o, "name", text(d->name, sizeof d->name));
	put(w, o, "room", text(d->room, sizeof d->room));
	put(w, o, "solver", name(pt_schema_solver_names, (int)d->solver));
	put(w, o, "substeps", json_integer(d->substeps));
	put(w, o, "prewarm_s", real(d->prewarm_s));
	put(w, o, "gravity", vec3(w, d->gravity));
	if (wind) {
		put(w, wind, "velocity", vec3(w, d->wind.velocity));
		put(w, wind, "turbulence", real(d->wind.turbulence));
		put(w, wind, "drag", real(d->wind.drag));
		put(w, wind, "seed", json_integer(d->wind.seed));
	}
	put(w, o, "wind", wind);
	if (verlet && stretch) {
		put(w, verlet, "damping", real(d->verlet.damping));
		put(w, verlet, "iterations", json_integer(d->verlet.iterations));
		put(w, verlet, "bend_stiffness", real(d->verlet.bend_stiffness));
		put(w, stretch, "mode", name(pt_schema_stretch_names, (int)d->verlet.stretch));
		put(w, stretch, "stiffness", real(d->verlet.stretch_stiffness));
		put(w, stretch, "max_strain", real(d->verlet.stretch_max_strain));
		put(w, verlet, "stretch", stretch);
		stretch = NULL;
		put(w, verlet, "self_collision", json_boolean(d->verlet.self_collision));
	}
	json_decref(stretch);
	put(w, o, "verlet", verlet);
	if (sb) {
		put(w, sb, "form", name(pt_schema_form_names, (int)d->springbone.form));
		put(w, sb, "center",
		    name(pt_schema_center_names, d->springbone.center_head ? 1 : 0));
		put(w, sb, "rate", name(pt_schema_rate_names, (int)d->springbone.rate));
		put(w, sb, "length", name(pt_schema_length_names, (int)d->springbone.length));
		joint_fields(w, sb, base);
	}
	put(w, o, "springbone", sb);
	for (int i = 0; strands && i < ns; i++)
		push(w, strands, strand(w, &d->strands[i], base, nc));
	put(w, o, "strands", strands);
	for (int i = 0; colliders && i < nc; i++)
		push(w, colliders, collider(w, &d->colliders[i]));
	put(w, o, "colliders", colliders);
	if (d->bone_count > 0) /* written only when there are some: older documents stay */
		put(w, o, "bones", bones(w, d));
	if (tele) {
		put(w, tele, "distance", real(d->teleport.distance));
		put(w, tele, "angle_deg", real(d->teleport.angle_deg));
		put(w, tele, "mode", name(pt_schema_teleport_names, (int)d->teleport.mode));
	}
	put(w, o, "teleport", tele);
}

json_t *pt_schema_dump(const pt_instance_def *def)
{
	wr w = {0};
	json_t *o = json_object();
	if (!o)
		return NULL;
	top(&w, o, def);
	if (w.failed) {
		json_decref(o);
		return NULL;
	}
	return o;
}
