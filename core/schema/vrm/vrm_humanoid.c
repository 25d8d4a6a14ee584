/* VRM humanoid bone names -> core's body bones (vrm_humanoid.h). */
#include "vrm_humanoid.h"

#include <ctype.h>
#include <string.h>

#include "ponytail/instance.h"

int vrm_humanoid_bone(const char *vrm_name, int v1)
{
	char snake[64];
	size_t n = 0;
	if (!vrm_name)
		return -1;
	/* VRM 0.x thumbs: Proximal, Intermediate, Distal are 1.0's Metacarpal, Proximal,
	 * Distal */
	static const char *const v0_thumbs[][2] = {
	    {"leftThumbProximal", "leftThumbMetacarpal"},
	    {"leftThumbIntermediate", "leftThumbProximal"},
	    {"rightThumbProximal", "rightThumbMetacarpal"},
	    {"rightThumbIntermediate", "rightThumbProximal"},
	};
	for (size_t i = 0; !v1 && i < sizeof v0_thumbs / sizeof v0_thumbs[0]; i++)
		if (strcmp(vrm_name, v0_thumbs[i][0]) == 0) {
			vrm_name = v0_thumbs[i][1];
			break;
		}
	for (const char *p = vrm_name; *p; p++) {
		unsigned char ch = (unsigned char)*p;
		if (n + 2 >= sizeof snake || !isalpha(ch))
			return -1;
		if (isupper(ch) && n > 0)
			snake[n++] = '_';
		snake[n++] = (char)tolower(ch);
	}
	snake[n] = '\0';
	return pt_bone_from_name(snake);
}

static void map(int node, int bone, int count, signed char *bone_of_node)
{
	if (node >= 0 && node < count && bone_of_node[node] == VRM_BONE_NONE)
		bone_of_node[node] = (signed char)bone;
}

void vrm_humanoid_read(const json_t *doc, int v1, int head, int count, signed char *bone_of_node)
{
	const json_t *exts = json_object_get(doc, "extensions");
	for (int i = 0; i < count; i++)
		bone_of_node[i] = VRM_BONE_NONE;
	if (head >= 0 && head < count)
		bone_of_node[head] = VRM_BONE_HEAD;
	if (v1) {
		const char *name;
		const json_t *b;
		const json_t *hb = json_object_get(
		    json_object_get(json_object_get(exts, "VRMC_vrm"), "humanoid"), "humanBones");
		if (!json_is_object(hb))
			return;
		json_object_foreach((json_t *)(uintptr_t)hb, name, b)
		{
			const json_t *nd = json_object_get(b, "node");
			int bone = vrm_humanoid_bone(name, 1);
			if (bone >= 0 && json_is_integer(nd) && json_integer_value(nd) < count)
				map((int)json_integer_value(nd), bone, count, bone_of_node);
		}
		return;
	}
	const json_t *hb =
	    json_object_get(json_object_get(json_object_get(exts, "VRM"), "humanoid"), "humanBones");
	for (size_t i = 0; json_is_array(hb) && i < json_array_size(hb); i++) {
		const json_t *b = json_array_get(hb, i), *nd = json_object_get(b, "node");
		int bone = vrm_humanoid_bone(json_string_value(json_object_get(b, "bone")), 0);
		if (bone >= 0 && json_is_integer(nd) && json_integer_value(nd) < count)
			map((int)json_integer_value(nd), bone, count, bone_of_node);
	}
}

int vrm_humanoid_owner(const vrm_graph *g, const signed char *bone_of_node, int node, int *at)
{
	/* vrm_graph_load refused cycles: the walk ends at a root */
	for (int n = node; n >= 0 && n < g->count; n = g->nodes[n].parent)
		if (bone_of_node[n] != VRM_BONE_NONE) {
			*at = n;
			return bone_of_node[n];
		}
	*at = -1;
	return VRM_BONE_NONE;
}
