/* Instance documents: see instdoc.h. */
#include "instdoc.h"

#include <stdlib.h>
#include <string.h>

#include "jutil.h"
#include "ponytail/schema.h"

int instdoc_parse(const json_t *doc, pt_instance_def *def, driver_t *drv, interact_t *ia,
                  pt_error *err)
{
	static const char *const extra[] = {"driver", "interaction", NULL};
	interact_t own;
	int rc = pt_schema_parse(doc, def, extra, err);
	if (rc != 0)
		return rc;
	if (driver_parse(doc, drv, err) != 0)
		return -1;
	return interact_parse(doc, ia ? ia : &own, err) != 0 ? -1 : 0;
}

char *instdoc_canonical(const pt_instance_def *def, const driver_t *drv, const interact_t *ia)
{
	json_t *j = pt_schema_dump(def);
	if (!j)
		return NULL;
	if (drv->enabled) {
		json_t *d = driver_dump(drv);
		if (!d || json_object_set_new(j, "driver", d) != 0) {
			json_decref(j);
			return NULL;
		}
	}
	interact_t dflt = interact_default();
	json_t *x = interact_dump(ia ? ia : &dflt);
	if (!x || json_object_set_new(j, "interaction", x) != 0) {
		json_decref(j);
		return NULL;
	}
	char *s = json_dumps(j, JSON_COMPACT | PT_SCHEMA_DUMP_FLAGS);
	json_decref(j);
	return s;
}

int instdoc_patch(const char *stored, const json_t *patch, pt_instance_def *def, driver_t *drv,
                  interact_t *ia, char **canonical, pt_error *err)
{
	json_t *target = json_loads(stored, 0, NULL);
	if (!target)
		return -2;
	json_t *merged = jutil_merge_patch(target, patch);
	json_decref(target);
	if (!merged)
		return -2;
	interact_t own;
	if (!ia)
		ia = &own;
	int rc = instdoc_parse(merged, def, drv, ia, err);
	json_decref(merged);
	if (rc != 0)
		return rc;
	*canonical = instdoc_canonical(def, drv, ia);
	return *canonical ? 0 : -2;
}

/* [x, y, z] of floats as jutil writes them. */
static json_t *xyz(pt_vec3 v)
{
	return json_pack("[o,o,o]", jutil_float(v.x), jutil_float(v.y), jutil_float(v.z));
}

json_t *instdoc_bones(const json_t *doc)
{
	pt_instance_def *def = malloc(sizeof *def);
	driver_t drv;
	pt_error e;
	json_t *out = json_array();
	if (!def || !pt_instance_def_init(def) || !out || instdoc_parse(doc, def, &drv, NULL, &e) != 0) {
		pt_instance_def_fini(def);
		free(def);
		json_decref(out);
		return NULL;
	}
	for (int i = 0; out && i < def->strand_count; i++) {
		const pt_strand_def *s = &def->strands[i];
		json_t *rest = json_array(), *names = json_array();
		pt_vec3 p = s->anchor;
		int named = s->root_joint[0] != 0;
		if (rest)
			json_array_append_new(rest, xyz(p));
		if (names)
			json_array_append_new(names, json_string(s->root_joint));
		for (int j = 0; rest && names && j < s->points - 1; j++) {
			float len;
			pt_vec3 u;
			/* the rest point as core builds it: segment after segment */
			pt_strand_rest_segment(s, j, &len, &u);
			p = s->has_rest ? s->joints[j].rest
			                : pt_v3(p.x + u.x * len, p.y + u.y * len, p.z + u.z * len);
			json_array_append_new(rest, xyz(p));
			json_array_append_new(names, json_string(s->joints[j].name));
			named |= s->joints[j].name[0] != 0;
		}
		if (!named) {
			json_decref(names);
			names = json_null();
		}
		json_t *o = json_pack("{s:s,s:o*,s:o*}", "anchor_bone", s->anchor_bone, "joints",
		                      names, "rest", rest);
		if (!o || !names || !rest || json_array_append_new(out, o) != 0) {
			json_decref(out);
			out = NULL;
		}
	}
	pt_instance_def_fini(def);
	free(def);
	return out;
}
