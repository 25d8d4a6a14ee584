/* Strands and their spring-bone joints. A joint field is a scalar for every joint, or
 * (per strand) an array with one entry per joint, points - 1 of them. */
#include <stddef.h>
#include <string.h>

#include "schema_internal.h"

int pt_schema_parse_limit(pt_schema_rd *r, const json_t *v, pt_joint_def *j)
{
	static const char *const keys[] = {"type", "angle_deg", "axis", NULL};
	int type = (int)j->limit;
	const json_t *angle = json_object_get(v, "angle_deg");
	if (pt_schema_object(r, v) || pt_schema_check_keys(r, v, keys, NULL) ||
	    pt_schema_get_enum(r, v, "type", pt_schema_limit_names, &type) ||
	    pt_schema_get_vec3(r, v, "axis", &j->limit_axis))
		return -1;
	j->limit = (pt_limit_type)type;
	if (angle) {
		/* Checked here, in degrees: core checks radians and would say "[0, 3.14159]". */
		double deg;
		size_t saved = pt_schema_push_key(r, "angle_deg");
		if (pt_schema_num(r, angle, &deg))
			return -1;
		if (!(deg >= 0.0 && deg <= 180.0))
			return pt_schema_fail(r, "must be in [0, 180] degrees, got %g", deg);
		pt_schema_pop(r, saved);
		j->limit_angle = pt_schema_deg_to_rad(deg);
	}
	return 0;
}

int pt_schema_parse_joint_object(pt_schema_rd *r, const json_t *o, pt_joint_def *j)
{
	const json_t *limit = json_object_get(o, "limit");
	if (pt_schema_get_float(r, o, "stiffness", &j->stiffness) ||
	    pt_schema_get_float(r, o, "drag_force", &j->drag_force) ||
	    pt_schema_get_float(r, o, "gravity_power", &j->gravity_power) ||
	    pt_schema_get_float(r, o, "hit_radius", &j->hit_radius) ||
	    pt_schema_get_vec3(r, o, "gravity_dir", &j->gravity_dir))
		return -1;
	if (limit) {
		size_t saved = pt_schema_push_key(r, "limit");
		if (pt_schema_parse_limit(r, limit, j))
			return -1;
		pt_schema_pop(r, saved);
	}
	return 0;
}

enum joint_field {
	JF_STIFFNESS,
	JF_DRAG,
	JF_GRAVITY_POWER,
	JF_HIT_RADIUS,
	JF_GRAVITY_DIR,
	JF_LIMIT
};

static const char *const joint_keys[] = {
    "stiffness", "drag_force", "gravity_power", "hit_radius", "gravity_dir", "limit", NULL};

/* Reads one joint's value of field f from v into j. */
static int joint_value(pt_schema_rd *r, enum joint_field f, const json_t *v, pt_joint_def *j)
{
	switch (f) {
	case JF_STIFFNESS:
		return pt_schema_float(r, v, &j->stiffness);
	case JF_DRAG:
		return pt_schema_float(r, v, &j->drag_force);
	case JF_GRAVITY_POWER:
		return pt_schema_float(r, v, &j->gravity_power);
	case JF_HIT_RADIUS:
		return pt_schema_float(r, v, &j->hit_radius);
	case JF_GRAVITY_DIR:
		return pt_schema_vec3(r, v, &j->gravity_dir);
	case JF_LIMIT:
		return pt_schema_parse_limit(r, v, j);
	}
	return -1;
}

/* Is v the per-joint array form of field f (rather than its single-value form)? */
static int is_per_joint(enum joint_field f, const json_t *v)
{
	if (!json_is_array(v))
		return 0;
	if (f == JF_GRAVITY_DIR) /* a vec3 is an array too: per joint means an array of arrays */
		return json_array_size(v) == 0 || json_is_array(json_array_get(v, 0));
	return 1;
}

static const char *field_kind(enum joint_field f)
{
	return f == JF_GRAVITY_DIR ? "a [x, y, z]" : f == JF_LIMIT ? "a limit object" : "a number";
}

static int parse_strand_springbone(pt_schema_rd *r, const json_t *o, pt_strand_def *s)
{
	int joints = s->points - 1;
	if (pt_schema_check_keys(r, o, joint_keys, NULL))
		return -1;
	for (int f = 0; joint_keys[f]; f++) {
		const json_t *v = json_object_get(o, joint_keys[f]);
		if (!v)
			continue;
		size_t saved = pt_schema_push_key(r, joint_keys[f]);
		if (!is_per_joint((enum joint_field)f, v)) {
			for (int i = 0; i < joints; i++)
				if (joint_value(r, (enum joint_field)f, v, &s->joints[i]))
					return -1;
		} else if (json_array_size(v) != (size_t)joints) {
			return pt_schema_fail(r,
			                      "expected %s or an array of points - 1 = %d of them, "
			                      "got %zu",
			                      field_kind((enum joint_field)f), joints,
			                      json_array_size(v));
		} else {
			for (int i = 0; i < joints; i++) {
				size_t si = pt_schema_push_index(r, (size_t)i);
				if (joint_value(r, (enum joint_field)f,
				                json_array_get(v, (size_t)i), &s->joints[i]))
					return -1;
				pt_schema_pop(r, si);
			}
		}
		pt_schema_pop(r, saved);
	}
	return 0;
}

/* The strand's colliders in the order given; each index once. */
static int parse_collider_list(pt_schema_rd *r, const json_t *v, int collider_count,
                               pt_strand_def *s)
{
	pt_collider_mask m = pt_mask_none();
	int idx[PT_MAX_COLLIDERS];
	if (!json_is_array(v))
		return pt_schema_fail(r, "expected an array of collider indices");
	for (size_t i = 0; i < json_array_size(v); i++) {
		long long x;
		size_t saved = pt_schema_push_index(r, i);
		if (!json_is_integer(json_array_get(v, i)))
			return pt_schema_fail(r, "expected a collider index (integer)");
		if (collider_count == 0)
			return pt_schema_fail(r, "no colliders are defined");
		if (pt_schema_int(r, json_array_get(v, i), 0, collider_count - 1, &x))
			return -1;
		if (pt_mask_test(&m, (int)x)) {
			size_t first = 0;
			while (json_integer_value(json_array_get(v, first)) != x)
				first++;
			return pt_schema_fail(r, "collider %lld listed twice (first at [%zu])", x,
			                      first);
		}
		pt_schema_pop(r, saved);
		pt_mask_set(&m, (int)x);
		idx[i] = (int)x;
	}
	/* distinct indices below collider_count <= PT_MAX_COLLIDERS: at most that many */
	if (!pt_strand_set_colliders(s, idx, (int)json_array_size(v)))
		return pt_schema_fail(r, "at most %d colliders", PT_MAX_COLLIDERS);
	return 0;
}

/* A per-point array: one number for each point after the root (points - 1 of them),
 * written into joints[j] at `offset` (a float member). */
static int parse_point_floats(pt_schema_rd *r, const json_t *v, pt_strand_def *s, size_t offset)
{
	size_t n = (size_t)(s->points - 1);
	if (json_array_size(v) != n)
		return pt_schema_fail(r, "expected one number per point after the root, points - 1 = "
		                         "%zu of them, got %zu",
		                      n, json_array_size(v));
	for (size_t j = 0; j < n; j++) {
		size_t saved = pt_schema_push_index(r, j);
		if (pt_schema_float(r, json_array_get(v, j), (float *)((char *)&s->joints[j] + offset)))
			return -1;
		pt_schema_pop(r, saved);
	}
	return 0;
}

static int parse_mass(pt_schema_rd *r, const json_t *o, pt_strand_def *s)
{
	static const char *const keys[] = {"root", "tip", NULL};
	if (json_is_array(o))
		return parse_point_floats(r, o, s, offsetof(pt_joint_def, mass));
	if (!json_is_object(o))
		return pt_schema_fail(r, "expected {\"root\": m, \"tip\": m} or one mass per point "
		                         "after the root");
	return pt_schema_check_keys(r, o, keys, NULL) ||
	               pt_schema_get_float(r, o, "root", &s->mass_root) ||
	               pt_schema_get_float(r, o, "tip", &s->mass_tip)
	           ? -1
	           : 0;
}

/* "rest": head-local rest positions of every point, point 0 the anchor. */
static int parse_rest(pt_schema_rd *r, const json_t *o, const json_t *v, pt_strand_def *s)
{
	static const char *const excluded[] = {"anchor", "direction", "points", "segment_length",
	                                       NULL};
	for (int k = 0; excluded[k]; k++)
		if (json_object_get(o, excluded[k])) {
			size_t saved = pt_schema_push_key(r, excluded[k]);
			(void)saved;
			return pt_schema_fail(r, "not allowed with \"rest\" (the rest positions give "
			                         "the anchor, points and every segment)");
		}
	size_t saved = pt_schema_push_key(r, "rest");
	size_t n = json_array_size(v);
	if (!json_is_array(v))
		return pt_schema_fail(r, "expected an array of [x, y, z] rest positions, the anchor "
		                         "first");
	if (n < 2 || n > PT_MAX_POINTS)
		return pt_schema_fail(r, "must hold 2 to %d points (the anchor first), got %zu",
		                      PT_MAX_POINTS, n);
	for (size_t j = 0; j < n; j++) {
		size_t si = pt_schema_push_index(r, j);
		if (pt_schema_vec3(r, json_array_get(v, j), j == 0 ? &s->anchor : &s->joints[j - 1].rest))
			return -1;
		pt_schema_pop(r, si);
	}
	pt_schema_pop(r, saved);
	s->points = (int)n;
	s->has_rest = 1;
	/* direction and segment_length describe the first segment, for readers that want
	 * a straight summary; the solvers use the rest shape */
	pt_strand_rest_segment(s, 0, &s->segment_length, &s->direction);
	return 0;
}

/* "joints": the bone name of every point, point 0 (the chain's root bone) first; "" for a
 * point without a bone. Read after the point count is known. */
static int parse_joint_names(pt_schema_rd *r, const json_t *v, pt_strand_def *s)
{
	size_t n = json_array_size(v);
	if (!json_is_array(v))
		return pt_schema_fail(r, "expected an array of bone names, one per point (the root "
		                         "bone first)");
	if (n != (size_t)s->points)
		return pt_schema_fail(r, "expected one bone name per point, points = %d of them, got "
		                         "%zu",
		                      s->points, n);
	for (size_t j = 0; j < n; j++) {
		size_t si = pt_schema_push_index(r, j);
		char *out = j == 0 ? s->root_joint : s->joints[j - 1].name;
		if (pt_schema_string(r, json_array_get(v, j), out, PT_NAME_MAX))
			return -1;
		pt_schema_pop(r, si);
	}
	return 0;
}

/* "bone": "head" or a body bone's name; "parent": {"strand": i, "point": k} (a branch).
 * Ranges against the other strands are core's (pt_instance_validate). */
static int parse_hang(pt_schema_rd *r, const json_t *o, pt_strand_def *s)
{
	const json_t *v = json_object_get(o, "bone");
	if (v) {
		const char *n = json_is_string(v) ? json_string_value(v) : NULL;
		int bone = pt_bone_from_name(n);
		if (n && strcmp(n, "head") == 0) {
			s->bone = -1;
		} else if (bone >= 0) {
			s->bone = bone;
		} else {
			pt_schema_push_key(r, "bone");
			return pt_schema_fail(r, "expected head or a VRM bone: hips spine chest "
			                         "upper_chest neck jaw {left,right}_{eye shoulder "
			                         "upper_arm lower_arm hand upper_leg lower_leg foot "
			                         "toes ...} (core/SCHEMA.md)");
		}
	}
	const json_t *p;
	if (pt_schema_get_object(r, o, "parent", &p))
		return -1;
	if (p) {
		static const char *const keys[] = {"strand", "point", NULL};
		size_t saved = pt_schema_push_key(r, "parent");
		if (pt_schema_check_keys(r, p, keys, NULL))
			return -1;
		if (!json_object_get(p, "strand") || !json_object_get(p, "point"))
			return pt_schema_fail(r, "expected {\"strand\": index, \"point\": index}");
		if (pt_schema_get_int(r, p, "strand", 0, PT_MAX_STRANDS - 1, &s->parent_strand) ||
		    pt_schema_get_int(r, p, "point", 0, PT_MAX_POINTS - 1, &s->parent_point))
			return -1;
		pt_schema_pop(r, saved);
	}
	return 0;
}

static int parse_strand(pt_schema_rd *r, const json_t *o, const pt_instance_def *d,
                        pt_strand_def *s)
{
	static const char *const keys[] = {"anchor",     "direction",   "points",     "segment_length",
	                                   "rest",       "colliders",   "anchor_bone", "mass",
	                                   "radius",     "gravity_scale", "springbone", "joints",
	                                   "bone",       "parent",      NULL};
	const json_t *sub;
	if (pt_schema_object(r, o) || pt_schema_check_keys(r, o, keys, NULL))
		return -1;
	if ((sub = json_object_get(o, "rest")) != NULL) {
		if (parse_rest(r, o, sub, s))
			return -1;
	} else if (pt_schema_get_vec3(r, o, "anchor", &s->anchor) ||
	           pt_schema_get_vec3(r, o, "direction", &s->direction) ||
	           /* checked here: the joint arrays below are sized by it */
	           pt_schema_get_int(r, o, "points", 2, PT_MAX_POINTS, &s->points) ||
	           pt_schema_get_float(r, o, "segment_length", &s->segment_length)) {
		return -1;
	}
	if (parse_hang(r, o, s))
		return -1;
	if (pt_schema_get_string(r, o, "anchor_bone", s->anchor_bone, sizeof s->anchor_bone) ||
	    pt_schema_get_float(r, o, "gravity_scale", &s->gravity_scale))
		return -1;
	if ((sub = json_object_get(o, "joints")) != NULL) {
		size_t saved = pt_schema_push_key(r, "joints");
		if (parse_joint_names(r, sub, s))
			return -1;
		pt_schema_pop(r, saved);
	}
	if ((sub = json_object_get(o, "radius")) != NULL) {
		size_t saved = pt_schema_push_key(r, "radius");
		if (json_is_array(sub) ? parse_point_floats(r, sub, s, offsetof(pt_joint_def, radius))
		                       : pt_schema_float(r, sub, &s->radius))
			return -1;
		pt_schema_pop(r, saved);
	}
	if ((sub = json_object_get(o, "colliders")) != NULL) {
		size_t saved = pt_schema_push_key(r, "colliders");
		if (parse_collider_list(r, sub, d->collider_count, s))
			return -1;
		pt_schema_pop(r, saved);
	}
	if ((sub = json_object_get(o, "mass")) != NULL) {
		size_t saved = pt_schema_push_key(r, "mass");
		if (parse_mass(r, sub, s))
			return -1;
		pt_schema_pop(r, saved);
	}
	if (pt_schema_get_object(r, o, "springbone", &sub))
		return -1;
	if (sub) {
		size_t saved = pt_schema_push_key(r, "springbone");
		if (parse_strand_springbone(r, sub, s))
			return -1;
		pt_schema_pop(r, saved);
	}
	return 0;
}

int pt_schema_parse_strands(pt_schema_rd *r, const json_t *arr, pt_joint_def base,
                            pt_instance_def *def)
{
	size_t n = json_array_size(arr);
	if (!json_is_array(arr))
		return pt_schema_fail(r, "expected an array of strand objects");
	if (n < 1 || n > PT_MAX_STRANDS)
		return pt_schema_fail(r,
		                      "must hold 1 to %d strands (at most %d per instance), "
		                      "got %zu",
		                      PT_MAX_STRANDS, PT_MAX_STRANDS, n);
	/* 0 first: every listed strand then starts from the defaults */
	if (!pt_instance_def_set_strand_count(def, 0) ||
	    !pt_instance_def_set_strand_count(def, (int)n)) {
		pt_schema_fail(r, "out of memory");
		return -2;
	}
	for (size_t i = 0; i < n; i++) {
		pt_strand_def *s = &def->strands[i];
		size_t saved = pt_schema_push_index(r, i);
		pt_strand_set_joints(s, base);
		if (parse_strand(r, json_array_get(arr, i), def, s))
			return -1;
		pt_schema_pop(r, saved);
	}
	return 0;
}
