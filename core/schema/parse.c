/* pt_schema_parse: the top level of the instance definition (strands and colliders are
 * in parse_strand.c and parse_collider.c). */
#include <stdlib.h>
#include <string.h>

#include "schema_internal.h"

static int room_ok(const char *s)
{
	for (; *s; s++) {
		char c = *s;
		int ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		         (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
		if (!ok)
			return 0;
	}
	return 1;
}

static int parse_wind(pt_schema_rd *r, const json_t *o, pt_instance_def *d)
{
	static const char *const keys[] = {"velocity", "turbulence", "drag", "seed", NULL};
	if (pt_schema_check_keys(r, o, keys, NULL) ||
	    pt_schema_get_vec3(r, o, "velocity", &d->wind.velocity) ||
	    pt_schema_get_float(r, o, "turbulence", &d->wind.turbulence) ||
	    pt_schema_get_float(r, o, "drag", &d->wind.drag) ||
	    pt_schema_get_u32(r, o, "seed", &d->wind.seed))
		return -1;
	return 0;
}

static int parse_stretch(pt_schema_rd *r, const json_t *o, pt_instance_def *d)
{
	static const char *const keys[] = {"mode", "stiffness", "max_strain", NULL};
	int mode = (int)d->verlet.stretch;
	if (pt_schema_check_keys(r, o, keys, NULL) ||
	    pt_schema_get_enum(r, o, "mode", pt_schema_stretch_names, &mode) ||
	    pt_schema_get_float(r, o, "stiffness", &d->verlet.stretch_stiffness) ||
	    pt_schema_get_float(r, o, "max_strain", &d->verlet.stretch_max_strain))
		return -1;
	d->verlet.stretch = (pt_stretch_mode)mode;
	return 0;
}

static int parse_verlet(pt_schema_rd *r, const json_t *o, pt_instance_def *d)
{
	static const char *const keys[] = {"damping", "iterations",     "bend_stiffness",
	                                   "stretch", "self_collision", NULL};
	const json_t *stretch;
	if (pt_schema_check_keys(r, o, keys, NULL) ||
	    pt_schema_get_float(r, o, "damping", &d->verlet.damping) ||
	    pt_schema_get_int(r, o, "iterations", -1000000, 1000000, &d->verlet.iterations) ||
	    pt_schema_get_float(r, o, "bend_stiffness", &d->verlet.bend_stiffness) ||
	    pt_schema_get_bool(r, o, "self_collision", &d->verlet.self_collision) ||
	    pt_schema_get_object(r, o, "stretch", &stretch))
		return -1;
	if (stretch) {
		size_t saved = pt_schema_push_key(r, "stretch");
		if (parse_stretch(r, stretch, d))
			return -1;
		pt_schema_pop(r, saved);
	}
	return 0;
}

/* The top-level "springbone" object: solver options plus the joint defaults that every
 * strand starts from. */
static int parse_springbone(pt_schema_rd *r, const json_t *o, pt_instance_def *d,
                            pt_joint_def *base)
{
	static const char *const keys[] = {"form",        "center",        "rate",   "length",
	                                   "stiffness",   "drag_force",    "gravity_power",
	                                   "gravity_dir", "hit_radius",    "limit",
	                                   NULL};
	int form = (int)d->springbone.form, center = d->springbone.center_head ? 1 : 0;
	int rate = (int)d->springbone.rate, length = (int)d->springbone.length;
	if (pt_schema_check_keys(r, o, keys, NULL) ||
	    pt_schema_get_enum(r, o, "form", pt_schema_form_names, &form) ||
	    pt_schema_get_enum(r, o, "center", pt_schema_center_names, &center) ||
	    pt_schema_get_enum(r, o, "rate", pt_schema_rate_names, &rate) ||
	    pt_schema_get_enum(r, o, "length", pt_schema_length_names, &length) ||
	    pt_schema_parse_joint_object(r, o, base))
		return -1;
	d->springbone.form = (pt_springbone_form)form;
	d->springbone.center_head = center;
	d->springbone.rate = (pt_springbone_rate)rate;
	d->springbone.length = (pt_springbone_length)length;
	return 0;
}

static int parse_teleport(pt_schema_rd *r, const json_t *o, pt_instance_def *d)
{
	static const char *const keys[] = {"distance", "angle_deg", "mode", NULL};
	int mode = (int)d->teleport.mode;
	if (pt_schema_check_keys(r, o, keys, NULL) ||
	    pt_schema_get_float(r, o, "distance", &d->teleport.distance) ||
	    pt_schema_get_float(r, o, "angle_deg", &d->teleport.angle_deg) ||
	    pt_schema_get_enum(r, o, "mode", pt_schema_teleport_names, &mode))
		return -1;
	d->teleport.mode = (pt_teleport_mode)mode;
	return 0;
}

/* Reads an optional sub-object with its own parser, keeping the path right. */
#define SUB(key, call)                                                                             \
	do {                                                                                       \
		const json_t *o_;                                                                  \
		if (pt_schema_get_object(&r, obj, key, &o_))                                       \
			goto fail;                                                                 \
		if (o_) {                                                                          \
			size_t saved_ = pt_schema_push_key(&r, key);                               \
			const json_t *o = o_;                                                      \
			if (call)                                                                  \
				goto fail;                                                         \
			pt_schema_pop(&r, saved_);                                                 \
		}                                                                                  \
	} while (0)

static int parse_all(pt_schema_rd *rp, const json_t *obj, const char *const *extra,
                     pt_instance_def *d)
{
	static const char *const keys[] = {
	    "name",   "room",       "solver",  "substeps",  "prewarm_s", "gravity", "wind",
	    "verlet", "springbone", "strands", "colliders", "teleport",  "bones", NULL};
	pt_schema_rd r = *rp;
	pt_joint_def base = pt_joint_def_default();
	int solver = (int)d->solver;
	const json_t *arr;

	if (pt_schema_object(&r, obj) || pt_schema_check_keys(&r, obj, keys, extra) ||
	    pt_schema_get_string(&r, obj, "name", d->name, sizeof d->name) ||
	    pt_schema_get_string(&r, obj, "room", d->room, sizeof d->room) ||
	    pt_schema_get_enum(&r, obj, "solver", pt_schema_solver_names, &solver) ||
	    pt_schema_get_int(&r, obj, "substeps", -1000000, 1000000, &d->substeps) ||
	    pt_schema_get_float(&r, obj, "prewarm_s", &d->prewarm_s) ||
	    pt_schema_get_vec3(&r, obj, "gravity", &d->gravity))
		goto fail;
	d->solver = (pt_solver)solver;
	if (!room_ok(d->room)) {
		pt_schema_push_key(&r, "room");
		pt_schema_fail(&r, "may contain only A-Z a-z 0-9 _ . -");
		goto fail;
	}
	SUB("wind", parse_wind(&r, o, d));
	SUB("verlet", parse_verlet(&r, o, d));
	SUB("springbone", parse_springbone(&r, o, d, &base));
	SUB("teleport", parse_teleport(&r, o, d));

	if ((arr = json_object_get(obj, "bones")) != NULL) {
		size_t saved = pt_schema_push_key(&r, "bones");
		if (pt_schema_parse_bones(&r, arr, d))
			goto fail;
		pt_schema_pop(&r, saved);
	}
	/* Colliders first: strands refer to them by index. */
	if ((arr = json_object_get(obj, "colliders")) != NULL) {
		size_t saved = pt_schema_push_key(&r, "colliders");
		if (pt_schema_parse_colliders(&r, arr, d))
			goto fail;
		pt_schema_pop(&r, saved);
	}
	if ((arr = json_object_get(obj, "strands")) != NULL) {
		size_t saved = pt_schema_push_key(&r, "strands");
		int rc = pt_schema_parse_strands(&r, arr, base, d);
		if (rc)
			return rc; /* -2: out of memory */
		pt_schema_pop(&r, saved);
	} else {
		for (int i = 0; i < d->strand_count && i < d->store.slots; i++)
			pt_strand_set_joints(&d->strands[i], base);
	}
	return 0;
fail:
	return -1;
}

int pt_schema_parse(const json_t *obj, pt_instance_def *out, const char *const *extra_keys,
                    pt_error *err)
{
	pt_error local;
	pt_schema_rd r = {err ? err : &local, "", 0};
	/* Built aside and swapped in, so *out is untouched on any error. A definition is a
	 * few KB; it stays off the (possibly small) thread stack all the same. */
	pt_instance_def *d = malloc(sizeof *d);
	if (!d || !pt_instance_def_init(d)) {
		free(d);
		pt_schema_fail(&r, "out of memory");
		return -2;
	}
	int rc = parse_all(&r, obj, extra_keys, d);
	if (rc == 0) {
		pt_error v = pt_instance_validate(d);
		if (!v.ok) {
			r.err->ok = 0;
			pt_schema_field_from_core(obj, v.field, r.err->field, sizeof r.err->field);
			pt_schema_message_from_core(v.field, v.message, r.err->message,
			                            sizeof r.err->message);
			rc = -1;
		}
	}
	if (rc == 0) {
		pt_instance_def_swap(out, d);
		r.err->ok = 1;
		r.err->field[0] = '\0';
		r.err->message[0] = '\0';
	}
	pt_instance_def_fini(d);
	free(d);
	return rc;
}
