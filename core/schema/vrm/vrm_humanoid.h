/* vrm_humanoid: which glTF node is which VRM humanoid bone, for colliders on body bones.
 *
 * VRM 1.0: extensions.VRMC_vrm.humanoid.humanBones {"chest": {"node": 5}, ...}; VRM 0.x:
 * extensions.VRM.humanoid.humanBones [{"bone": "chest", "node": 5}, ...]. Names become
 * core's pt_bone (snake_case of VRM 1.0's; 0.x's thumbs move one down: ThumbProximal is
 * 1.0's ThumbMetacarpal, ThumbIntermediate its ThumbProximal). Entries that are not
 * body bones, name no node in range or repeat a node are skipped: the head was already
 * required by vrm_springs_read, and a collider on an unmapped node falls back to its
 * nearest mapped ancestor.
 */
#ifndef PONYTAIL_VRM_HUMANOID_H
#define PONYTAIL_VRM_HUMANOID_H

#include <jansson.h>

#include "vrm_gltf.h"

enum { VRM_BONE_NONE = -1, VRM_BONE_HEAD = -2 };

/* bone_of_node[count]: a pt_bone, VRM_BONE_HEAD for `head`, else VRM_BONE_NONE. */
void vrm_humanoid_read(const json_t *doc, int v1, int head, int count, signed char *bone_of_node);

/* The pt_bone name for a VRM 1.0 (v1) or 0.x humanoid bone name; -1 if not a body bone. */
int vrm_humanoid_bone(const char *vrm_name, int v1);

/* The humanoid bone a collider on `node` moves with: node itself or its nearest ancestor
 * that is mapped (a pt_bone or VRM_BONE_HEAD); VRM_BONE_NONE when none is. *at gets that
 * bone's node (-1 for none). */
int vrm_humanoid_owner(const vrm_graph *g, const signed char *bone_of_node, int node, int *at);

#endif
