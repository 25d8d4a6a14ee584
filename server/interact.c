/* Touch and grab grants: see interact.h. */
#include "interact.h"
#include "jutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const ia_MODES[] = {"none", "room", "listed"};

interact_t interact_default(void)
{
	interact_t ia;
	memset(&ia, 0, sizeof ia);
	ia.touch = INTERACT_ROOM;
	ia.grab = INTERACT_NONE;
	return ia;
}

static int ia_mode(const json_t *v, uint8_t *out)
{
	if (!json_is_string(v))
		return -1;
	for (int i = 0; i < 3; i++)
		if (strcmp(json_string_value(v), ia_MODES[i]) == 0) {
			*out = (uint8_t)i;
			return 0;
		}
	return -1;
}

static int ia_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int interact_parse(const json_t *doc, interact_t *out, pt_error *err)
{
	*out = interact_default();
	err->ok = 1;
	err->field[0] = err->message[0] = '\0';
	const json_t *d = json_object_get(doc, "interaction");
	if (!d || json_is_null(d))
		return 0;
	if (!json_is_object(d))
		return jutil_reject(err, "interaction", "expected an object or null");
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)(uintptr_t)d, key, v)
	{
		if (strcmp(key, "touch") && strcmp(key, "grab") && strcmp(key, "allow")) {
			char f[96];
			snprintf(f, sizeof f, "interaction.%.80s", key);
			return jutil_reject(err, f, "unknown field (touch, grab, allow)");
		}
	}
	const json_t *t = json_object_get(d, "touch"), *g = json_object_get(d, "grab");
	if (t && ia_mode(t, &out->touch) != 0)
		return jutil_reject(err, "interaction.touch", "must be one of none, room, listed");
	if (g && ia_mode(g, &out->grab) != 0)
		return jutil_reject(err, "interaction.grab", "must be one of none, room, listed");
	const json_t *a = json_object_get(d, "allow");
	if (!a)
		return 0;
	if (!json_is_array(a))
		return jutil_reject(err, "interaction.allow", "expected an array of instance ids");
	if (json_array_size(a) > INTERACT_MAX_ALLOW) {
		char m[96];
		snprintf(m, sizeof m, "at most %d instance ids (limits.allow), got %zu",
		         INTERACT_MAX_ALLOW, json_array_size(a));
		return jutil_reject(err, "interaction.allow", m);
	}
	for (size_t i = 0; i < json_array_size(a); i++) {
		const json_t *x = json_array_get(a, i);
		char f[64];
		snprintf(f, sizeof f, "interaction.allow[%zu]", i);
		if (!json_is_integer(x) || json_integer_value(x) < 1 ||
		    json_integer_value(x) >= (json_int_t)1 << 53)
			return jutil_reject(err, f, "expected an instance id (an integer in [1, 2^53))");
		uint64_t id = (uint64_t)json_integer_value(x);
		for (int k = 0; k < out->nallow; k++)
			if (out->allow[k] == id)
				return jutil_reject(err, f, "listed twice");
		out->allow[out->nallow++] = id;
	}
	qsort(out->allow, (size_t)out->nallow, sizeof *out->allow, ia_cmp_u64);
	return 0;
}

json_t *interact_dump(const interact_t *ia)
{
	json_t *allow = json_array();
	for (int i = 0; allow && i < ia->nallow; i++)
		if (json_array_append_new(allow, json_integer((json_int_t)ia->allow[i])) != 0) {
			json_decref(allow);
			allow = NULL;
		}
	if (!allow)
		return NULL;
	return json_pack("{s:s,s:s,s:o}", "touch", ia_MODES[ia->touch % 3], "grab",
	                 ia_MODES[ia->grab % 3], "allow", allow);
}

int interact_grants(const interact_t *ia, int mode, uint64_t who, int same_room)
{
	if (!same_room || mode == INTERACT_NONE)
		return 0;
	if (mode == INTERACT_ROOM)
		return 1;
	int lo = 0, hi = ia->nallow;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (ia->allow[mid] < who)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ia->nallow && ia->allow[lo] == who;
}
