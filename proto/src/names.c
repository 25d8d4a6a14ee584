/* Names of message types and errors: the vocabulary of PROTOCOL.md and the vectors. */
#include <string.h>

#include "ptp/proto.h"

static const char *const err_names[PTP_ERR_COUNT] = {
    "ok",       "truncated", "bad_magic", "version",    "unknown_type", "too_big", "length",
    "trailing", "count",     "limit",     "non_finite", "range",        "utf8",    "flags",
    "shape",    "no_key",    "no_space",  "invalid",    "no_memory",
};

const char *ptp_err_name(ptp_err_t e)
{
	if ((int)e < 0 || e >= PTP_ERR_COUNT)
		return "unknown";
	return err_names[e];
}

static const struct {
	int type;
	const char *name;
} types[] = {
#define PTP_X_NAME(NAME, code, name) {code, #name},
    PTP_MESSAGES(PTP_X_NAME)
#undef PTP_X_NAME
};

const char *ptp_type_name(int type)
{
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (types[i].type == type)
			return types[i].name;
	return NULL;
}

int ptp_type_from_name(const char *name)
{
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (strcmp(types[i].name, name) == 0)
			return types[i].type;
	return -1;
}
