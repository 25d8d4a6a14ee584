/* vrm_import(), private: the conversion's state and what its three files share.
 * vrm_import.c runs vrm_import() (ponytail/vrm_import.h); vrm_import_chains.c measures
 * every chain in head-local coordinates and chooses what fits an instance;
 * vrm_import_json.c writes the instance definition and the report. */
#ifndef PONYTAIL_VRM_IMPORT_INTERNAL_H
#define PONYTAIL_VRM_IMPORT_INTERNAL_H

#include <stddef.h>

#include <jansson.h>

#include "ponytail/instance.h"
#include "ponytail/vrm_import.h"
#include "vrm_gltf.h"
#include "vrm_springs.h"

/* A chain measured in head-local coordinates, and its fate. */
typedef struct strand {
	vrm_vec3 pts[VRM_MAX_POINTS]; /* rest points, virtual tail included */
	int points;
	double len[VRM_MAX_POINTS]; /* len[i]: point i -> i + 1 */
	double mean, shortest, longest;
	double bend_deg;   /* largest angle between a segment and dir */
	double tip_offset; /* metres between the real tip and the straight strand's */
	vrm_vec3 dir;      /* along the first segment of non-zero length */
	int on_head;       /* the first joint is the head or below it */
	int bone;          /* not on the head: the humanoid body bone it hangs under, or -1 */
	int bone_node;     /* that bone's node */
	int parent, parent_point; /* a branch: the chain and point whose bone it hangs
	                           * under (vrm_cv_check_branching), or -1 */
	const char *drop;  /* why it is not in the instance; NULL if it is */
	int out;           /* index in the instance's strands, -1 if not there */
} strand;

typedef struct collider_use {
	int by_head, by_other; /* used by a kept strand on / off the head */
	int keep;
	int out; /* index in the instance's colliders, -1 if not there */
} collider_use;

typedef struct cv {
	json_t *doc;
	vrm_graph g;
	vrm_springs s;
	vrm_diag d;
	vrm_rot frame;                /* head frame: rest rotation (0.x: turned 180° about Y) */
	vrm_vec3 origin;              /* head rest world position */
	strand *st;                   /* one per chain */
	collider_use *use;            /* one per collider */
	unsigned char *moving;        /* per node: a joint some chain rotates */
	signed char *bone_of_node;    /* per node: vrm_humanoid.h */
	int bone_node[PT_BONE_COUNT]; /* a body bone some written collider is on: its node */
	unsigned char bone_used[PT_BONE_COUNT];
	int max_strands;        /* strands the instance may have, [1, VRM_MAX_STRANDS] */
	char drop_strands[48];  /* "over the 256-strand limit" for max_strands */
} cv;

/* ---- small helpers (inline, for both the measuring and the writing) ---- */

/* A rest world point in head-local coordinates. */
static inline vrm_vec3 to_head(const cv *c, vrm_vec3 world)
{
	return vrm_rot_apply_inv(&c->frame, vrm_sub(world, c->origin));
}

/* A world direction along the head-local axes. */
static inline vrm_vec3 to_head_dir(const cv *c, vrm_vec3 d)
{
	return vrm_rot_apply_inv(&c->frame, d);
}

/* A node's rest world position. */
static inline vrm_vec3 node_pos(const cv *c, int node)
{
	return vrm_mat4_translation(&c->g.nodes[node].world);
}

/* A node's name (never NULL: vrm_graph names unnamed nodes). */
static inline const char *node_name(const cv *c, int node)
{
	return c->g.nodes[node].name;
}

/* ---- vrm_import_chains.c ---- */

/* Tallies VRM_T_SCALE when the node's world transform has an axis scale other than 1. */
void vrm_cv_check_scale(cv *c, int node);
/* The head frame: c->origin and c->frame from the head bone's rest transform (VRM 0.x
 * turned 180° about Y), with a note or warning when it is turned or mirrored. */
void vrm_cv_set_frame(cv *c);
/* Cuts chains at a joint an earlier chain already rotates; marks c->moving. */
void vrm_cv_cut_shared(cv *c);
/* Measures chain ci in head-local coordinates into c->st[ci] (points, segment lengths,
 * bend, tip offset), or sets its drop reason. */
void vrm_cv_measure(cv *c, int ci);
/* What chain ci hangs from: a joint another chain rotates (a branch: parent and point),
 * else, off the head, its nearest humanoid body bone (bone), else the head (tallied as
 * VRM_T_NONHEAD_CHAIN). */
void vrm_cv_check_branching(cv *c, int ci);
/* After vrm_cv_choose_strands: numbers the kept strands so that a branch comes after the
 * chain it hangs from (file order otherwise); a branch whose parent was not kept hangs
 * from its bone instead, tallied as VRM_T_BRANCH. */
void vrm_cv_order_branches(cv *c);
/* Numbers the strands the instance keeps (head chains first, up to VRM_MAX_STRANDS)
 * into c->st[].out; returns how many. */
int vrm_cv_choose_strands(cv *c);
/* Marks the colliders the kept strands use (head chains' first, up to
 * VRM_MAX_COLLIDERS) and numbers them into c->use[].out. */
void vrm_cv_choose_colliders(cv *c);

/* ---- vrm_import_json.c ---- */

/* The instance definition of the chosen strands and colliders (a new reference). */
json_t *vrm_cv_build_instance(cv *c);
/* The import report (a new reference; vrm_import adds "notes" and "warnings"); bytes is
 * the file's length. */
json_t *vrm_cv_build_report(cv *c, size_t bytes);

#endif
