/* jansson helpers: see jutil.h. */
#include "jutil.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The recursion is the RFC's pseudo-code; its depth is bounded by the patch's own nesting,
 * which jansson's parser caps at 2048 levels. */
json_t *jutil_merge_patch(const json_t *target, const json_t *patch)
{
	if (!json_is_object(patch))
		return json_deep_copy(patch);
	json_t *out = json_is_object(target) ? json_deep_copy(target) : json_object();
	if (!out)
		return NULL;
	const char *key;
	json_t *value;
	/* json_object_foreach takes a non-const object; the patch is only read. */
	json_object_foreach((json_t *)(uintptr_t)patch, key, value)
	{
		if (json_is_null(value)) {
			json_object_del(out, key);
			continue;
		}
		json_t *merged = jutil_merge_patch(json_object_get(out, key), value);
		if (!merged || json_object_set_new(out, key, merged) != 0) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

json_t *jutil_float(float f)
{
	char buf[32];
	for (int prec = 6; prec <= 9; prec++) {
		snprintf(buf, sizeof buf, "%.*g", prec, (double)f);
		if (strtof(buf, NULL) == f)
			break;
	}
	return json_real(strtod(buf, NULL));
}

int jutil_reject(pt_error *err, const char *field, const char *msg)
{
	err->ok = 0;
	snprintf(err->field, sizeof err->field, "%s", field);
	snprintf(err->message, sizeof err->message, "%s", msg);
	return -1;
}
