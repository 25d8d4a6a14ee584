/* vrm_springs: a VRM avatar's spring bones as the file has them, for vrm_import()
 * (ponytail/vrm_import.h, which says what the import makes of them).
 *
 * vrm_springs_read() (vrm_springs.c, vrm_springs_v1.c, vrm_springs_v0.c) reads VRM 1.0
 * (VRMC_springBone, VRMC_springBone_extended_collider, the draft VRMC_springBone_limit) or
 * VRM 0.x (extensions.VRM.secondaryAnimation) into chains and colliders exactly as the
 * file has them: nodes, parameters and offsets in the model's own spaces. vrm_import()
 * (vrm_import.c, with vrm_import_chains.c and vrm_import_json.c) turns them into an
 * instance; the diagnostics below collect what it approximates.
 */
#ifndef PONYTAIL_VRM_SPRINGS_H
#define PONYTAIL_VRM_SPRINGS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "ponytail/types.h"
#include "vrm_gltf.h"

/* An instance's hard limits: core's. Beyond them the import truncates and warns. */
enum {
	VRM_MAX_STRANDS = PT_MAX_STRANDS,
	VRM_MAX_POINTS = PT_MAX_POINTS, /* per strand, the root included */
	VRM_MAX_COLLIDERS = PT_MAX_COLLIDERS,
	VRM_NAME_MAX = PT_NAME_MAX, /* bytes of name / anchor_bone including the NUL */
	/* No avatar has thousands of chains or colliders: a file claiming so is refused before
	 * it can make the importer allocate gigabytes. */
	VRM_MAX_READ = 4096
};

/* ---- diagnostics ---- */

/* Kinds of approximation, each reported once with a count and its first example, so an
 * avatar with 40 curved hair chains gets one warning about curvature, not 40. */
typedef enum vrm_tally_id {
	VRM_T_CLAMPED,
	VRM_T_NONHEAD_CHAIN,
	VRM_T_NONHEAD_COLLIDER,
	VRM_T_BRANCH,
	VRM_T_REUSED,
	VRM_T_ORDER,
	VRM_T_SCALE,
	VRM_T_CENTER,
	VRM_T_SPHERICAL,
	VRM_T_TILT,
	VRM_T_SHORT,
	VRM_T_NO_TAIL,
	VRM_T_BAD_COLLIDER,
	VRM_T_ZERO_SEGMENT,
	VRM_T_LIMIT_VERSION,
	VRM_T_COUNT
} vrm_tally_id;

typedef struct vrm_diag {
	json_t *notes;    /* owned array of strings */
	json_t *warnings; /* owned array of strings */
	struct {
		int count;
		char first[160];
	} tallies[VRM_T_COUNT];
} vrm_diag;

int vrm_diag_init(vrm_diag *d);  /* 0, or -1 when out of memory */
void vrm_diag_free(vrm_diag *d); /* NULL-safe */
/* Appends one tally line per kind seen to the warnings ("text (count; first: example)"). */
void vrm_diag_flush(vrm_diag *d);

#if defined(__GNUC__)
#define VRM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define VRM_PRINTF(f, a)
#endif
void vrm_warn(vrm_diag *d, const char *fmt, ...) VRM_PRINTF(2, 3);
void vrm_note(vrm_diag *d, const char *fmt, ...) VRM_PRINTF(2, 3);
void vrm_tally(vrm_diag *d, vrm_tally_id id, const char *fmt, ...) VRM_PRINTF(3, 4);
/* v clamped to [lo, hi]; a change is tallied as VRM_T_CLAMPED naming path.key. */
double vrm_clamp(vrm_diag *d, double v, double lo, double hi, const char *path, const char *key);

/* ---- the spring bones as read ---- */

typedef enum vrm_shape {
	VRM_SPHERE,
	VRM_CAPSULE,
	VRM_PLANE,
	VRM_INSIDE_SPHERE,
	VRM_INSIDE_CAPSULE
} vrm_shape;
extern const char *const vrm_shape_names[]; /* the schema's names, by vrm_shape */

typedef enum vrm_limit { VRM_LIMIT_NONE, VRM_LIMIT_CONE, VRM_LIMIT_HINGE } vrm_limit;

/* The parameters of one segment (VRM: of the joint at its head). Ranges are already
 * clamped to what Ponytail accepts. */
typedef struct vrm_segment {
	double stiffness, drag, gravity_power, hit_radius;
	vrm_vec3 gravity_dir; /* model world as glTF has it (0.x: z flipped from Unity's) */
	vrm_limit limit;
	double limit_angle; /* radians, [0, pi] */
	double limit_q[4];  /* the limit's `rotation` [x, y, z, w] (draft VRMC_springBone_limit) */
} vrm_segment;

typedef struct vrm_chain {
	char source[96];  /* "springs[2]", "boneGroups[0].bones[1]/Branch" */
	const char *name; /* spring name / bone group comment, borrowed from the document */
	int nodes[VRM_MAX_POINTS];
	int count;                       /* joint nodes */
	int virtual_tail;                /* 0.x: one more point 7 cm past the leaf */
	vrm_segment seg[VRM_MAX_POINTS]; /* seg[i]: segment point i -> i + 1 */
	int *colliders;                  /* owned indices into vrm_springs.colliders, no repeats */
	int ncolliders;
	int center; /* node, -1 for none */
} vrm_chain;

typedef struct vrm_collider {
	char source[64]; /* "colliders[3]", "colliderGroups[1].colliders[0]" */
	int node;        /* -1: unusable (no node, no shape), already reported */
	vrm_shape shape;
	vrm_vec3 offset, tail, normal; /* node space; 0.x offsets already in glTF's frame */
	double radius;                 /* unscaled */
} vrm_collider;

typedef struct vrm_springs {
	int v1;            /* 1: VRM 1.0, 0: VRM 0.x */
	int head;          /* the humanoid's head node */
	vrm_chain *chains; /* owned */
	int nchains, chains_cap;
	vrm_collider *colliders; /* owned */
	int ncolliders;
} vrm_springs;

/* Reads the spring bones of doc, whose nodes g holds (vrm_graph_load of the same doc).
 * Every index is checked; a chain longer than VRM_MAX_POINTS is truncated (and warned).
 * Chain names borrow from doc. Free with vrm_springs_free (NULL-safe), also on failure. */
int vrm_springs_read(const json_t *doc, const vrm_graph *g, vrm_springs *s, vrm_diag *d, char *err,
                     size_t errlen);
void vrm_springs_free(vrm_springs *s);

#endif
