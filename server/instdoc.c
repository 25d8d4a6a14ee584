/* Instance documents: see instdoc.h. */
#include "instdoc.h"

#include <string.h>

#include "jutil.h"
#include "ponytail/schema.h"

int instdoc_parse(const json_t *doc, pt_instance_def *def, driver_t *drv, pt_error *err)
{
	static const char *const extra[] = {"driver", NULL};
	int rc = pt_schema_parse(doc, def, extra, err);
	if (rc != 0)
		return rc;
	return driver_parse(doc, drv, err) != 0 ? -1 : 0;
}

char *instdoc_canonical(const pt_instance_def *def, const driver_t *drv)
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
	char *s = json_dumps(j, JSON_COMPACT | PT_SCHEMA_DUMP_FLAGS);
	json_decref(j);
	return s;
}

int instdoc_patch(const char *stored, const json_t *patch, pt_instance_def *def, driver_t *drv,
                  char **canonical, pt_error *err)
{
	json_t *target = json_loads(stored, 0, NULL);
	if (!target)
		return -2;
	json_t *merged = jutil_merge_patch(target, patch);
	json_decref(target);
	if (!merged)
		return -2;
	int rc = instdoc_parse(merged, def, drv, err);
	json_decref(merged);
	if (rc != 0)
		return rc;
	*canonical = instdoc_canonical(def, drv);
	return *canonical ? 0 : -2;
}
