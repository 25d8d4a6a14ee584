/* vrm_springs, private: the reader state and the helpers shared by vrm_springs.c (the
 * diagnostics, the head bone, vrm_springs_read) and the two readers it calls,
 * vrm_springs_v1.c (VRM 1.0) and vrm_springs_v0.c (VRM 0.x). */
#ifndef PONYTAIL_VRM_SPRINGS_INTERNAL_H
#define PONYTAIL_VRM_SPRINGS_INTERNAL_H

#include <stddef.h>

#include <jansson.h>

#include "vrm_springs.h"

typedef struct group {
	int *members; /* owned collider indices */
	int count;
} group;

typedef struct rd {
	const json_t *doc;
	const vrm_graph *g;
	vrm_springs *s;
	vrm_diag *d;
	group *groups; /* collider groups, needed only while reading */
	int ngroups;
	char *err;
	size_t errlen;
} rd;

/* Clamps sp's parameters to the ranges core validates (instance.h), tallying each change
 * under path; v1 picks the stiffness key's spelling in the message. */
void vrm_rd_clamp_params(rd *c, vrm_segment *sp, const char *path, int v1);
/* Appends a zeroed chain (center -1, name "") to c->s; NULL with c->err set when out of
 * memory or past VRM_MAX_READ chains. */
vrm_chain *vrm_rd_new_chain(rd *c);
/* obj.colliderGroups: indices of collider groups, whose colliders are added to ch, each
 * once. 0, or -1 with c->err set. */
int vrm_rd_chain_add_groups(rd *c, vrm_chain *ch, const json_t *obj, const char *path);
/* -1 with c->err set when the array arr (at path) has more than VRM_MAX_READ entries. */
int vrm_rd_check_count(rd *c, const json_t *arr, const char *path);

/* The spring bones of a VRM 1.0 file (vrm_springs_v1.c: extensions.VRMC_springBone and
 * its extended-collider and limit extensions) into c->s. 0, or -1 with c->err set. */
int vrm_read_v1(rd *c);
/* The spring bones of a VRM 0.x file (vrm_springs_v0.c:
 * extensions.VRM.secondaryAnimation) into c->s. 0, or -1 with c->err set. */
int vrm_read_v0(rd *c);

#endif
