/* Instance definition defaults, validation and enum names. */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h> /* snprintf only: core does no I/O */
#include <stdlib.h>
#include <string.h>

#include "ponytail/instance.h"
#include "vecmath.h"

pt_joint_def pt_joint_def_default(void)
{
	/* UniVRM / three-vrm component defaults (the VRM schema says drag 0.5; the runtimes
	 * everybody authors against use 0.4) with UniVRM's 2 cm joint radius. */
	pt_joint_def j;
	memset(&j, 0, sizeof j);
	j.stiffness = 1.0f;
	j.drag_force = 0.4f;
	j.gravity_power = 0.0f;
	j.hit_radius = 0.02f;
	j.gravity_dir = pt_v3(0.0f, -1.0f, 0.0f);
	j.limit = PT_LIMIT_NONE;
	j.limit_angle = 3.14159265f;
	j.limit_axis = pt_v3(1.0f, 0.0f, 0.0f);
	j.mass = 0.0f;
	j.radius = -1.0f;
	return j;
}

void pt_strand_rest_segment(const pt_strand_def *s, int j, float *length, pt_vec3 *dir)
{
	pt_vec3 fallback = v3_norm_or(s->direction, pt_v3(0.0f, -1.0f, 0.0f));
	if (!s->has_rest) {
		*length = s->segment_length;
		*dir = fallback;
		return;
	}
	pt_vec3 a = j == 0 ? s->anchor : s->joints[j - 1].rest;
	pt_vec3 d = v3_sub(s->joints[j].rest, a);
	*length = v3_len(d);
	*dir = v3_norm_or(d, fallback);
}

void pt_strand_set_joints(pt_strand_def *s, pt_joint_def j)
{
	for (int i = 0; i < PT_MAX_POINTS - 1; i++)
		s->joints[i] = j;
}

void pt_strand_def_reset(pt_strand_def *s)
{
	pt_joint_def *joints = s->joints;
	assert(joints);
	memset(s, 0, sizeof *s);
	s->joints = joints;
	s->anchor = pt_v3(0.0f, 0.06f, -0.09f);
	s->direction = pt_v3(0.0f, -1.0f, 0.0f);
	s->points = 12;
	s->segment_length = 0.03f;
	s->collider_n = PT_COLLIDERS_ALL;
	s->mass_root = 1.0f;
	s->mass_tip = 1.0f;
	s->radius = 0.005f;
	s->has_rest = 0;
	s->gravity_scale = 1.0f;
	s->bone = -1;
	s->parent_strand = s->parent_point = -1;
	pt_strand_set_joints(s, pt_joint_def_default());
}

int pt_strand_set_colliders(pt_strand_def *s, const int *idx, int n)
{
	if (n < PT_COLLIDERS_ALL || n > PT_MAX_COLLIDERS || (n > 0 && !idx))
		return 0;
	for (int k = 0; k < n; k++)
		if (idx[k] < 0 || idx[k] >= PT_MAX_COLLIDERS)
			return 0;
	for (int k = 0; k < n; k++)
		s->collider_list[k] = (uint8_t)idx[k];
	s->collider_n = n;
	return 1;
}

pt_collider_mask pt_strand_collider_mask(const pt_strand_def *s, int collider_count)
{
	pt_collider_mask m = pt_mask_none();
	int n = collider_count < 0 ? 0 : collider_count > PT_MAX_COLLIDERS ? PT_MAX_COLLIDERS
	                                                                   : collider_count;
	if (s->collider_n == PT_COLLIDERS_ALL) {
		for (int k = 0; k < n; k++)
			pt_mask_set(&m, k);
	} else {
		for (int k = 0; k < s->collider_n && k < PT_MAX_COLLIDERS; k++)
			if (s->collider_list[k] < n)
				pt_mask_set(&m, s->collider_list[k]);
	}
	return m;
}

void pt_strand_def_copy(pt_strand_def *dst, const pt_strand_def *src)
{
	pt_joint_def *joints = dst->joints;
	assert(joints && src->joints);
	if (dst == src)
		return;
	*dst = *src;
	dst->joints = joints;
	/* memmove: a strand that was assigned with `=` shares its source's joints */
	memmove(joints, src->joints, sizeof(pt_joint_def) * (PT_MAX_POINTS - 1));
}

/* ---- the definition's storage ------------------------------------------------------
 * Two blocks of store.slots entries: the strands (`strands`) and their joints, slots x
 * (PT_MAX_POINTS - 1); strands[i].joints points at joint slot i. Slots only grow (at
 * most PT_MAX_STRANDS, doubling), so shrinking strand_count never allocates and a
 * strand's points never resize anything. */

enum { JOINTS_PER_STRAND = PT_MAX_POINTS - 1 };

/* Initialised (owner is itself) or zeroed (never initialised, or finished). */
static int owned_or_zero(const pt_instance_def *d)
{
	return d->store.self == d ||
	       (d->store.self == NULL && d->store.joints == NULL && d->strands == NULL);
}

static void point_strands(pt_instance_def *d)
{
	for (int i = 0; i < d->store.slots; i++)
		d->strands[i].joints = d->store.joints + (size_t)i * JOINTS_PER_STRAND;
}

/* Makes both blocks of *st (belonging to definition d) hold n slots; 0 when out of
 * memory, *st then still consistent with its old slot count (a block that did grow
 * keeps its larger size: harmless). */
static int grow_store(pt_instance_def *d, int n)
{
	if (n <= d->store.slots)
		return 1;
	int cap = d->store.slots < 4 ? 4 : d->store.slots * 2;
	cap = cap < n ? n : cap > PT_MAX_STRANDS ? PT_MAX_STRANDS : cap;
	pt_strand_def *s = realloc(d->strands, sizeof(pt_strand_def) * (size_t)cap);
	if (!s)
		return 0;
	d->strands = s;
	pt_joint_def *j =
	    realloc(d->store.joints, sizeof(pt_joint_def) * JOINTS_PER_STRAND * (size_t)cap);
	if (!j) {
		point_strands(d); /* the strands moved: their joints are where they were */
		return 0;
	}
	memset(s + d->store.slots, 0, sizeof(pt_strand_def) * (size_t)(cap - d->store.slots));
	d->store.joints = j;
	d->store.slots = cap;
	point_strands(d);
	return 1;
}

int pt_instance_def_set_strand_count(pt_instance_def *d, int n)
{
	assert(d && d->store.self == d);
	if (n < 0 || n > PT_MAX_STRANDS || !grow_store(d, n))
		return 0;
	/* strand_count may hold anything a caller wrote; strands past it are not kept */
	int old = d->strand_count < 0 ? 0 : d->strand_count > n ? n : d->strand_count;
	for (int i = old; i < n; i++)
		pt_strand_def_reset(&d->strands[i]);
	d->strand_count = n;
	return 1;
}

pt_strand_def *pt_instance_def_add_strand(pt_instance_def *d)
{
	assert(d && d->store.self == d);
	int n = d->strand_count;
	if (n < 0 || n >= PT_MAX_STRANDS || !pt_instance_def_set_strand_count(d, n + 1))
		return NULL;
	return &d->strands[n];
}

int pt_instance_def_init(pt_instance_def *d)
{
	memset(d, 0, sizeof *d);
	d->store.self = d;
	d->solver = PT_SOLVER_VERLET;
	d->substeps = 0;
	d->prewarm_s = 1.0f;
	d->gravity = pt_v3(0.0f, -9.81f, 0.0f);
	d->wind.drag = 2.0f;
	d->wind.seed = 1;
	d->verlet.damping = 0.96f;
	d->verlet.iterations = 3;
	d->verlet.bend_stiffness = 0.0f;
	d->verlet.stretch = PT_STRETCH_EXACT;
	d->verlet.stretch_stiffness = 0.2f;
	d->verlet.stretch_max_strain = 0.05f;
	d->springbone.form = PT_SPRINGBONE_VRM;
	d->collider_count = 0;
	d->teleport.distance = 0.5f;
	d->teleport.angle_deg = 60.0f;
	d->teleport.mode = PT_TELEPORT_KEEP;
	if (!pt_instance_def_set_strand_count(d, 1)) {
		memset(d, 0, sizeof *d);
		return 0;
	}
	return 1;
}

void pt_instance_def_fini(pt_instance_def *d)
{
	if (!d)
		return;
	/* a shallow copy's self is the original: freeing here would free the original's */
	assert(owned_or_zero(d));
	free(d->store.joints);
	free(d->strands);
	memset(d, 0, sizeof *d);
}

int pt_instance_def_copy(pt_instance_def *dst, const pt_instance_def *src)
{
	assert(dst && src && owned_or_zero(dst) && src->store.self == src);
	if (dst == src)
		return 1;
	int n = src->strand_count < 0                 ? 0
	        : src->strand_count > src->store.slots ? src->store.slots
	                                               : src->strand_count;
	/* reserve first: on failure dst is untouched (but for spare capacity) */
	if (dst->store.self == NULL)
		dst->store.self = dst;
	if (!grow_store(dst, n))
		return 0;
	pt_strand_def *strands = dst->strands;
	struct pt_instance_def_store keep = dst->store;
	memcpy(dst, src, sizeof *dst);
	dst->strands = strands;
	dst->store = keep;
	for (int i = 0; i < n; i++) {
		dst->strands[i] = src->strands[i];
		dst->strands[i].joints = keep.joints + (size_t)i * JOINTS_PER_STRAND;
		memcpy(dst->strands[i].joints, src->strands[i].joints,
		       sizeof(pt_joint_def) * JOINTS_PER_STRAND);
	}
	return 1;
}

void pt_instance_def_swap(pt_instance_def *a, pt_instance_def *b)
{
	assert(a && b && a->store.self == a && b->store.self == b);
	/* byte by byte: no second definition on the stack; the strand and joint blocks are
	 * on the heap and go with their store, so the strands' pointers stay right */
	unsigned char *x = (unsigned char *)a, *y = (unsigned char *)b;
	for (size_t i = 0; i < sizeof *a; i++) {
		unsigned char t = x[i];
		x[i] = y[i];
		y[i] = t;
	}
	a->store.self = a;
	b->store.self = b;
}

static const char *const solver_names[] = {"verlet", "springbone"};
static const char *const shape_names[] = {"sphere",        "ellipsoid",     "capsule",
					  "plane",         "inside_sphere", "inside_capsule"};

static int name_index(const char *const *names, int n, const char *name)
{
	if (!name)
		return -1;
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return i;
	return -1;
}

int pt_solver_from_name(const char *name) { return name_index(solver_names, 2, name); }
const char *pt_solver_name(pt_solver s) { return (unsigned)s < 2 ? solver_names[s] : NULL; }
int pt_shape_from_name(const char *name) { return name_index(shape_names, PT_SHAPE_COUNT, name); }
const char *pt_shape_name(pt_shape s)
{
	return (unsigned)s < PT_SHAPE_COUNT ? shape_names[s] : NULL;
}

/* ---- validation ------------------------------------------------------------------ */

typedef struct vctx {
	pt_error *e;
	char prefix[64]; /* "strands[3]." etc. */
} vctx;

/* Records the first error only; returns 0 so callers can `return fail(...)`. */
static int fail(vctx *c, const char *field, const char *fmt, ...)
{
	if (!c->e->ok)
		return 0;
	c->e->ok = 0;
	/* Truncation is acceptable for over-long names; the return values say by how much. */
	int n1 = snprintf(c->e->field, sizeof c->e->field, "%s%s", c->prefix, field);
	va_list ap;
	va_start(ap, fmt);
	char msg[288]; /* with the longest prefix, fits pt_error.message */
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	int n2 = snprintf(c->e->message, sizeof c->e->message, "%s%s: %s", c->prefix, field, msg);
	(void)n1, (void)n2;
	return 0;
}

static int check_range(vctx *c, const char *field, float v, float lo, float hi)
{
	if (!isfinite(v))
		return fail(c, field, "must be a finite number in [%g, %g]", lo, hi);
	if (v < lo || v > hi)
		return fail(c, field, "%g is out of range [%g, %g]", v, lo, hi);
	return 1;
}

static int check_open_low(vctx *c, const char *field, float v, float lo, float hi)
{
	if (!isfinite(v) || v <= lo || v > hi)
		return fail(c, field, "must be a finite number in (%g, %g]", lo, hi);
	return 1;
}

static int check_int(vctx *c, const char *field, int v, int lo, int hi)
{
	if (v < lo || v > hi)
		return fail(c, field, "%d is out of range [%d, %d]", v, lo, hi);
	return 1;
}

/* A list's length: "strands: 257 is out of range [1, 256]: at most 256 per instance". */
static int check_count(vctx *c, const char *field, int v, int lo, int hi)
{
	if (v < lo || v > hi)
		return fail(c, field, "%d is out of range [%d, %d]: at most %d per instance", v, lo,
		            hi, hi);
	return 1;
}

static int check_vec(vctx *c, const char *field, pt_vec3 v, float max_len, int nonzero)
{
	if (!v3_finite(v))
		return fail(c, field, "components must be finite numbers");
	float l = v3_len(v);
	if (!(l <= max_len))
		return fail(c, field, "length %g exceeds %g", l, max_len);
	if (nonzero && !(l > 1e-6f))
		return fail(c, field, "must be a non-zero vector");
	return 1;
}

static int check_string(vctx *c, const char *field, const char *s, int room_charset)
{
	if (!memchr(s, 0, PT_NAME_MAX))
		return fail(c, field, "longer than %d bytes", PT_NAME_MAX - 1);
	if (room_charset)
		for (const char *p = s; *p; p++) {
			char ch = *p;
			int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
				 (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.';
			if (!ok)
				return fail(c, field, "may contain only A-Z a-z 0-9 _ - .");
		}
	return 1;
}

/* 1 when s is well-formed UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF). */
static int utf8_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		unsigned c = *p++, n, cp, min;
		if (c < 0x80)
			continue;
		if ((c & 0xE0) == 0xC0)
			n = 1, cp = c & 0x1F, min = 0x80;
		else if ((c & 0xF0) == 0xE0)
			n = 2, cp = c & 0x0F, min = 0x800;
		else if ((c & 0xF8) == 0xF0)
			n = 3, cp = c & 0x07, min = 0x10000;
		else
			return 0;
		for (unsigned k = 0; k < n; k++, p++) {
			if ((*p & 0xC0) != 0x80)
				return 0;
			cp = cp << 6 | (*p & 0x3F);
		}
		if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return 0;
	}
	return 1;
}

/* A joint's bone name: NUL-terminated within PT_NAME_MAX and UTF-8. */
static int check_joint_name(vctx *c, int point, const char *s)
{
	char f[32];
	snprintf(f, sizeof f, "joints[%d]", point);
	if (!memchr(s, 0, PT_NAME_MAX))
		return fail(c, f, "longer than %d bytes", PT_NAME_MAX - 1);
	if (!utf8_ok(s))
		return fail(c, f, "is not valid UTF-8");
	return 1;
}

static void set_prefix(vctx *c, const char *list, int i)
{
	int n = snprintf(c->prefix, sizeof c->prefix, "%s[%d].", list, i);
	(void)n;
}

static int validate_joint(vctx *c, const pt_joint_def *j, int idx, pt_springbone_form form)
{
	char f[48];
	float stiff_max = form == PT_SPRINGBONE_PULL ? 1.0f : 100.0f;
#define JF(name) (snprintf(f, sizeof f, "springbone." name "[%d]", idx) > 0 ? f : name)
#define LF(name) (snprintf(f, sizeof f, "springbone.limit[%d]." name, idx) > 0 ? f : name)
	if (!check_range(c, JF("stiffness"), j->stiffness, 0.0f, stiff_max) ||
	    !check_range(c, JF("drag_force"), j->drag_force, 0.0f, 1.0f) ||
	    !check_range(c, JF("gravity_power"), j->gravity_power, 0.0f, 100.0f) ||
	    !check_range(c, JF("hit_radius"), j->hit_radius, 0.0f, 1.0f) ||
	    !check_vec(c, JF("gravity_dir"), j->gravity_dir, 1e6f, 1))
		return 0;
	if ((unsigned)j->limit > PT_LIMIT_HINGE)
		return fail(c, LF("type"), "must be none, cone or hinge");
	if (j->limit != PT_LIMIT_NONE) {
		if (!check_range(c, LF("angle_deg"), j->limit_angle * 57.29578f, 0.0f, 180.0f))
			return 0;
		if (j->limit == PT_LIMIT_HINGE && !check_vec(c, LF("axis"), j->limit_axis, 1e6f, 1))
			return 0;
	}
#undef JF
#undef LF
	return 1;
}

static int validate_strand(vctx *c, const pt_instance_def *d, const pt_strand_def *s)
{
	/* with a rest shape, direction and segment_length are not used: rest[] is checked */
	if (!check_vec(c, s->has_rest ? "rest[0]" : "anchor", s->anchor, 10.0f, 0) ||
	    (!s->has_rest && !check_vec(c, "direction", s->direction, 1e6f, 1)) ||
	    !check_int(c, "points", s->points, 2, PT_MAX_POINTS) ||
	    (!s->has_rest && !check_range(c, "segment_length", s->segment_length, 0.001f, 1.0f)) ||
	    !check_string(c, "anchor_bone", s->anchor_bone, 0) ||
	    !check_joint_name(c, 0, s->root_joint) ||
	    !check_range(c, "mass.root", s->mass_root, 0.001f, 100.0f) ||
	    !check_range(c, "mass.tip", s->mass_tip, 0.001f, 100.0f) ||
	    !check_range(c, "radius", s->radius, 0.0f, 0.1f))
		return 0;
	if (!check_range(c, "gravity_scale", s->gravity_scale, -10.0f, 10.0f) ||
	    !check_int(c, "rest", s->has_rest, 0, 1))
		return 0;
	char f[48];
	for (int j = 0; j < s->points - 1; j++) {
		const pt_joint_def *jd = &s->joints[j];
		if (!check_joint_name(c, j + 1, jd->name))
			return 0;
		if (jd->mass != 0.0f) {
			snprintf(f, sizeof f, "mass[%d]", j);
			if (!check_range(c, f, jd->mass, 0.001f, 100.0f))
				return 0;
		}
		if (!(jd->radius < 0.0f)) {
			snprintf(f, sizeof f, "radius[%d]", j);
			if (!check_range(c, f, jd->radius, 0.0f, 0.1f))
				return 0;
		}
		if (s->has_rest) {
			/* rest[0] is the anchor: joint j's tail is rest[j + 1] */
			snprintf(f, sizeof f, "rest[%d]", j + 1);
			if (!check_vec(c, f, jd->rest, 10.0f, 0))
				return 0;
			float len;
			pt_vec3 dir;
			pt_strand_rest_segment(s, j, &len, &dir);
			if (!(len >= 0.001f && len <= 1.0f))
				return fail(c, f,
					    "is %g m from the point before it: segments must be in "
					    "[0.001, 1] m",
					    (double)len);
		}
	}
	/* The default selects "all"; a list names existing colliders, each once. */
	if (s->collider_n != PT_COLLIDERS_ALL &&
	    !check_count(c, "colliders", s->collider_n, 0, PT_MAX_COLLIDERS))
		return 0;
	pt_collider_mask seen = pt_mask_none();
	for (int k = 0; k < s->collider_n; k++) {
		int x = s->collider_list[k];
		if (x < d->collider_count && !pt_mask_test(&seen, x)) {
			pt_mask_set(&seen, x);
			continue;
		}
		snprintf(f, sizeof f, "colliders[%d]", k);
		if (x >= d->collider_count)
			return fail(c, f, "%d names no collider: the instance has %d", x,
			            d->collider_count);
		int first = 0;
		while (s->collider_list[first] != x)
			first++;
		return fail(c, f, "collider %d listed twice (first at [%d])", x, first);
	}
	/* Joint fields are checked whatever the solver, so a stored verlet definition can
	 * always be switched to springbone by a later patch. */
	for (int j = 0; j < s->points - 1; j++)
		if (!validate_joint(c, &s->joints[j], j, d->springbone.form))
			return 0;
	return 1;
}

/* Whether a bone has a rest pose in def->bones. */
static int has_bone_rest(const pt_instance_def *d, int bone)
{
	for (int i = 0; i < d->bone_count && i < PT_MAX_BONES; i++)
		if ((int)d->bones[i].bone == bone)
			return 1;
	return 0;
}

/* Strand i's "bone" and "parent" (instance.h): springbone only, a bone with a rest pose,
 * a parent before it whose point exists, not both. */
static int validate_strand_hang(vctx *c, const pt_instance_def *d, int i)
{
	const pt_strand_def *s = &d->strands[i];
	int branch = s->parent_strand != -1 || s->parent_point != -1;
	if (s->bone != -1) {
		if (s->bone < 0 || s->bone >= PT_BONE_COUNT)
			return fail(c, "bone", "must be head or a VRM bone: " PT_ATTACH_ALLOWED);
		if (!has_bone_rest(d, s->bone))
			return fail(c, "bone",
			            "bone \"%s\" has no rest pose: add \"bones\": {\"%s\": "
			            "{\"position\": [x, y, z], \"rotation\": [x, y, z, w]}} "
			            "(head-local)",
			            pt_bone_name(s->bone), pt_bone_name(s->bone));
		if (branch)
			return fail(c, "bone", "a branch (\"parent\") moves with its parent's "
			                       "point: give bone or parent, not both");
	}
	if (branch) {
		if (s->parent_strand < 0 || s->parent_strand >= i)
			return fail(c, "parent.strand",
			            "is %d: must be the index of an earlier strand, [0, %d]",
			            s->parent_strand, i - 1);
		int n = d->strands[s->parent_strand].points;
		if (s->parent_point < 0 || s->parent_point >= n)
			return fail(c, "parent.point",
			            "is %d: strand %d has points [0, %d]", s->parent_point,
			            s->parent_strand, n - 1);
	}
	if ((s->bone != -1 || branch) && d->solver != PT_SOLVER_SPRINGBONE)
		return fail(c, s->bone != -1 ? "bone" : "parent",
		            "needs solver springbone (verlet strands hang from the head)");
	return 1;
}

static int validate_collider(vctx *c, const pt_instance_def *d, const pt_collider_def *k)
{
	if ((unsigned)k->shape >= PT_SHAPE_COUNT)
		return fail(c, "shape",
			    "must be sphere, ellipsoid, capsule, plane, inside_sphere or inside_capsule");
	if ((unsigned)k->attach > PT_ATTACH_BONE ||
	    (k->attach == PT_ATTACH_BONE && (unsigned)k->bone >= PT_BONE_COUNT))
		return fail(c, "attach", "must be " PT_ATTACH_ALLOWED);
	if (k->attach == PT_ATTACH_BONE) {
		int found = 0;
		for (int i = 0; i < d->bone_count && i < PT_MAX_BONES; i++)
			found |= d->bones[i].bone == k->bone;
		if (!found)
			return fail(c, "attach",
			            "bone \"%s\" has no rest pose: add \"bones\": {\"%s\": "
			            "{\"position\": [x, y, z], \"rotation\": [x, y, z, w]}} "
			            "(head-local)",
			            pt_bone_name(k->bone), pt_bone_name(k->bone));
	}
	switch (k->shape) {
	case PT_SHAPE_SPHERE:
	case PT_SHAPE_INSIDE_SPHERE:
		return check_vec(c, "center", k->center, 1000.0f, 0) &&
		       (k->shape == PT_SHAPE_SPHERE ? check_range(c, "radius", k->radius, 0.0f, 10.0f)
						    : check_range(c, "radius", k->radius, 0.001f, 100.0f));
	case PT_SHAPE_ELLIPSOID:
		return check_vec(c, "center", k->center, 1000.0f, 0) &&
		       check_range(c, "radii[0]", k->radii.x, 0.001f, 10.0f) &&
		       check_range(c, "radii[1]", k->radii.y, 0.001f, 10.0f) &&
		       check_range(c, "radii[2]", k->radii.z, 0.001f, 10.0f);
	case PT_SHAPE_CAPSULE:
	case PT_SHAPE_INSIDE_CAPSULE:
		if (!check_vec(c, "a", k->a, 1000.0f, 0) || !check_vec(c, "b", k->b, 1000.0f, 0))
			return 0;
		if (k->shape == PT_SHAPE_INSIDE_CAPSULE)
			return check_range(c, "radius", k->radius, 0.001f, 100.0f);
		if (!check_range(c, "radius", k->radius, 0.0f, 10.0f))
			return 0;
		if (!isfinite(k->radius_b) || k->radius_b > 10.0f)
			return fail(c, "radius_b", "must be a finite number in [0, 10]");
		return 1;
	case PT_SHAPE_PLANE:
		return check_vec(c, "point", k->center, 1000.0f, 0) &&
		       check_vec(c, "normal", k->normal, 1e6f, 1);
	default:
		return 0;
	}
}

/* bones[i]: a known bone, listed once, finite head-local position within 10 m and a
 * rotation near unit length (fields named as JSON writes them: "bones.chest.position"). */
static int validate_bone(vctx *c, const pt_instance_def *d, int i)
{
	const pt_bone_def *b = &d->bones[i];
	const char *name = pt_bone_name(b->bone);
	if (!name)
		return fail(c, "bones", "entry %d: not a VRM humanoid body bone", i);
	char f[64];
	int n = snprintf(f, sizeof f, "bones.%s", name);
	(void)n;
	for (int j = 0; j < i; j++)
		if (d->bones[j].bone == b->bone)
			return fail(c, f, "listed twice");
	n = snprintf(f, sizeof f, "bones.%s.position", name);
	if (!check_vec(c, f, b->position, 10.0f, 0))
		return 0;
	pt_quat q = b->rotation;
	float l2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
	n = snprintf(f, sizeof f, "bones.%s.rotation", name);
	if (!(l2 >= 0.25f && l2 <= 4.0f)) /* also NaN */
		return fail(c, f, "expected [x, y, z, w], a quaternion of length near 1");
	return 1;
}

pt_error pt_instance_validate(const pt_instance_def *d)
{
	pt_error e;
	memset(&e, 0, sizeof e);
	e.ok = 1;
	vctx c = {&e, ""};
	if (!d)
		return fail(&c, "", "no definition"), e;
	if (!check_string(&c, "name", d->name, 0) || !check_string(&c, "room", d->room, 1))
		return e;
	if ((unsigned)d->solver > PT_SOLVER_SPRINGBONE)
		return fail(&c, "solver", "must be verlet or springbone"), e;
	if (!check_int(&c, "substeps", d->substeps, 0, PT_MAX_SUBSTEPS) ||
	    !check_range(&c, "prewarm_s", d->prewarm_s, 0.0f, 10.0f) ||
	    !check_vec(&c, "gravity", d->gravity, 100.0f, 0) ||
	    !check_vec(&c, "wind.velocity", d->wind.velocity, 100.0f, 0) ||
	    !check_range(&c, "wind.turbulence", d->wind.turbulence, 0.0f, 2.0f) ||
	    !check_range(&c, "wind.drag", d->wind.drag, 0.0f, 100.0f) ||
	    !check_range(&c, "verlet.damping", d->verlet.damping, 0.0f, 1.0f) ||
	    !check_int(&c, "verlet.iterations", d->verlet.iterations, 1, 32) ||
	    !check_range(&c, "verlet.bend_stiffness", d->verlet.bend_stiffness, 0.0f, 1.0f))
		return e;
	if ((unsigned)d->verlet.stretch > PT_STRETCH_NONLINEAR)
		return fail(&c, "verlet.stretch.mode", "must be exact or nonlinear"), e;
	if (!check_open_low(&c, "verlet.stretch.stiffness", d->verlet.stretch_stiffness, 0.0f, 1.0f) ||
	    !check_range(&c, "verlet.stretch.max_strain", d->verlet.stretch_max_strain, 0.001f, 1.0f) ||
	    !check_int(&c, "verlet.self_collision", d->verlet.self_collision, 0, 1))
		return e;
	if ((unsigned)d->springbone.form > PT_SPRINGBONE_PULL)
		return fail(&c, "springbone.form", "must be vrm or pull"), e;
	if ((unsigned)d->springbone.rate > PT_SPRINGBONE_RATE_SUBSTEP)
		return fail(&c, "springbone.rate", "must be frame or substep"), e;
	if ((unsigned)d->springbone.length > PT_SPRINGBONE_LENGTH_THREEVRM)
		return fail(&c, "springbone.length", "must be rest or three-vrm"), e;
	if (d->springbone.length == PT_SPRINGBONE_LENGTH_THREEVRM &&
	    d->springbone.form != PT_SPRINGBONE_VRM)
		return fail(&c, "springbone.length", "three-vrm needs form vrm"), e;
	if (!check_int(&c, "springbone.center", d->springbone.center_head, 0, 1) ||
	    !check_count(&c, "strands", d->strand_count, 1, PT_MAX_STRANDS) ||
	    !check_count(&c, "colliders", d->collider_count, 0, PT_MAX_COLLIDERS))
		return e;
	if (!check_count(&c, "bones", d->bone_count, 0, PT_MAX_BONES))
		return e;
	for (int i = 0; i < d->bone_count; i++)
		if (!validate_bone(&c, d, i))
			return e;
	for (int i = 0; i < d->collider_count; i++) {
		set_prefix(&c, "colliders", i);
		if (!validate_collider(&c, d, &d->colliders[i]))
			return e;
	}
	/* before any joint is read: a shallow copy's joints may be freed memory */
	if (d->store.self != d)
		return fail(&c, "", "not initialised, or a shallow copy (pt_instance_def_copy)"),
		       e;
	for (int i = 0; i < d->strand_count; i++) {
		set_prefix(&c, "strands", i);
		if (i >= d->store.slots ||
		    d->strands[i].joints != d->store.joints + (size_t)i * JOINTS_PER_STRAND)
			return fail(&c, "joints", "not this definition's storage (strand_count or "
			                          "a strand assigned directly?)"),
			       e;
		if (!validate_strand(&c, d, &d->strands[i]) || !validate_strand_hang(&c, d, i))
			return e;
	}
	c.prefix[0] = 0;
	int total = 0;
	for (int i = 0; i < d->strand_count; i++)
		total += d->strands[i].points;
	if (total > PT_MAX_JOINTS)
		return fail(&c, "strands",
		            "%d points in all (roots included): at most %d per instance", total,
		            PT_MAX_JOINTS),
		       e;
	if (!check_open_low(&c, "teleport.distance", d->teleport.distance, 0.0f, 1000.0f) ||
	    !check_open_low(&c, "teleport.angle_deg", d->teleport.angle_deg, 0.0f, 180.0f))
		return e;
	if ((unsigned)d->teleport.mode > PT_TELEPORT_RESET)
		return fail(&c, "teleport.mode", "must be keep or reset"), e;
	return e;
}
