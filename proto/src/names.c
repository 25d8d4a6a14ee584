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

/* PROTOCOL.md 5, head_pose: the bone ids (VRM 1.0 humanoid order, head left out). */
static const char *const bone_names[PTP_BONE_COUNT] = {
    "hips", "spine", "chest", "upper_chest", "neck", "left_eye", "right_eye", "jaw",
    "left_upper_leg", "left_lower_leg", "left_foot", "left_toes", "right_upper_leg",
    "right_lower_leg", "right_foot", "right_toes", "left_shoulder", "left_upper_arm",
    "left_lower_arm", "left_hand", "right_shoulder", "right_upper_arm", "right_lower_arm",
    "right_hand", "left_thumb_metacarpal", "left_thumb_proximal", "left_thumb_distal",
    "left_index_proximal", "left_index_intermediate", "left_index_distal",
    "left_middle_proximal", "left_middle_intermediate", "left_middle_distal",
    "left_ring_proximal", "left_ring_intermediate", "left_ring_distal",
    "left_little_proximal", "left_little_intermediate", "left_little_distal",
    "right_thumb_metacarpal", "right_thumb_proximal", "right_thumb_distal",
    "right_index_proximal", "right_index_intermediate", "right_index_distal",
    "right_middle_proximal", "right_middle_intermediate", "right_middle_distal",
    "right_ring_proximal", "right_ring_intermediate", "right_ring_distal",
    "right_little_proximal", "right_little_intermediate", "right_little_distal"};

const char *ptp_bone_name(int id)
{
	return id >= 0 && id < PTP_BONE_COUNT ? bone_names[id] : NULL;
}

int ptp_bone_from_name(const char *name)
{
	for (int i = 0; name && i < PTP_BONE_COUNT; i++)
		if (strcmp(bone_names[i], name) == 0)
			return i;
	return -1;
}
