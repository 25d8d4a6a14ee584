/* Ponytail core: the instance definition (what a client asks for) and its defaults.
 *
 * Box2D style: pt_instance_def_init() (the defaults), set the fields you care about, then
 * pt_instance_validate() and pt_world_create_instance(); pt_instance_def_fini() at the
 * end. The JSON form of this struct (core/SCHEMA.md) is read and written by core/schema
 * (ponytail/schema.h); field names below are the JSON names.
 *
 * Ownership. A definition is about 12 KB of plain fields (its colliders included) plus
 * two heap blocks it owns: its strands (`strands` points at them, room for the strands
 * it has, not for PT_MAX_STRANDS) and their per-joint data (strands[i].joints points
 * into it, PT_MAX_POINTS - 1 joints per strand, so a strand's `points` may change
 * freely). Hence:
 *   - init before use, fini after (fini of a zeroed definition is a no-op);
 *   - never copy a definition or a strand with `=` or memcpy, nor move one (return it by
 *     value, realloc an array of them): pt_instance_def_copy() (deep),
 *     pt_instance_def_swap(), pt_strand_def_copy(); a shallow copy is caught by
 *     pt_instance_validate() (an error) and by _copy / _fini (an assert);
 *   - change strand_count only through pt_instance_def_set_strand_count() or
 *     pt_instance_def_add_strand(), which allocate (and can fail: out of memory) and
 *     may move the strands: a pointer to a strand is valid until the next such call.
 * No global state: any thread may call these on its own definitions, and several may
 * read one const pt_instance_def * at once; nothing keeps a pointer to a definition
 * after the call returns.
 */
#ifndef PONYTAIL_INSTANCE_H
#define PONYTAIL_INSTANCE_H

#include <stddef.h>

#include "ponytail/types.h"

typedef enum pt_solver {
	PT_SOLVER_VERLET = 0,     /* position-based particle chain (core/src/solver_verlet.c) */
	PT_SOLVER_SPRINGBONE = 1, /* VRMC_springBone 1.0 joints (core/src/springbone.h) */
} pt_solver;

typedef enum pt_springbone_form {
	PT_SPRINGBONE_VRM = 0,  /* the VRMC_springBone 1.0 update */
	PT_SPRINGBONE_PULL = 1, /* the spring-bone lesson's variant */
} pt_springbone_form;

typedef enum pt_shape {
	PT_SHAPE_SPHERE = 0,         /* center, radius */
	PT_SHAPE_ELLIPSOID = 1,      /* center, radii (axis-aligned in the attach frame) */
	PT_SHAPE_CAPSULE = 2,        /* a, b, radius at a, radius_b at b (tapered when they differ) */
	PT_SHAPE_PLANE = 3,          /* point, normal: the half-space behind the normal is solid */
	PT_SHAPE_INSIDE_SPHERE = 4,  /* center, radius: points are kept inside */
	PT_SHAPE_INSIDE_CAPSULE = 5, /* a, b, radius: points are kept inside */
	PT_SHAPE_COUNT
} pt_shape;

typedef enum pt_attach {
	PT_ATTACH_HEAD = 0,  /* coordinates are head-local and move with the head */
	PT_ATTACH_WORLD = 1, /* coordinates are world and never move */
	PT_ATTACH_BONE = 2,  /* coordinates are local to the body bone `bone` (pt_bone): they
	                      * move with its pose (pt_world_set_bone_pose), or, until one
	                      * arrives, with the head at the bone's rest offset (def->bones) */
} pt_attach;

/* The VRM humanoid bones other than the head, in VRM 1.0's order; JSON names are the
 * VRM names in snake_case ("upper_chest", "left_upper_arm"). The values are also the
 * bone ids of the wire protocol (proto/PROTOCOL.md, head_pose since 1.2): never reorder. */
typedef enum pt_bone {
	PT_BONE_HIPS, PT_BONE_SPINE, PT_BONE_CHEST, PT_BONE_UPPER_CHEST, PT_BONE_NECK,
	PT_BONE_LEFT_EYE, PT_BONE_RIGHT_EYE, PT_BONE_JAW,
	PT_BONE_LEFT_UPPER_LEG, PT_BONE_LEFT_LOWER_LEG, PT_BONE_LEFT_FOOT, PT_BONE_LEFT_TOES,
	PT_BONE_RIGHT_UPPER_LEG, PT_BONE_RIGHT_LOWER_LEG, PT_BONE_RIGHT_FOOT, PT_BONE_RIGHT_TOES,
	PT_BONE_LEFT_SHOULDER, PT_BONE_LEFT_UPPER_ARM, PT_BONE_LEFT_LOWER_ARM, PT_BONE_LEFT_HAND,
	PT_BONE_RIGHT_SHOULDER, PT_BONE_RIGHT_UPPER_ARM, PT_BONE_RIGHT_LOWER_ARM,
	PT_BONE_RIGHT_HAND,
	PT_BONE_LEFT_THUMB_METACARPAL, PT_BONE_LEFT_THUMB_PROXIMAL, PT_BONE_LEFT_THUMB_DISTAL,
	PT_BONE_LEFT_INDEX_PROXIMAL, PT_BONE_LEFT_INDEX_INTERMEDIATE, PT_BONE_LEFT_INDEX_DISTAL,
	PT_BONE_LEFT_MIDDLE_PROXIMAL, PT_BONE_LEFT_MIDDLE_INTERMEDIATE,
	PT_BONE_LEFT_MIDDLE_DISTAL, PT_BONE_LEFT_RING_PROXIMAL, PT_BONE_LEFT_RING_INTERMEDIATE,
	PT_BONE_LEFT_RING_DISTAL, PT_BONE_LEFT_LITTLE_PROXIMAL,
	PT_BONE_LEFT_LITTLE_INTERMEDIATE, PT_BONE_LEFT_LITTLE_DISTAL,
	PT_BONE_RIGHT_THUMB_METACARPAL, PT_BONE_RIGHT_THUMB_PROXIMAL, PT_BONE_RIGHT_THUMB_DISTAL,
	PT_BONE_RIGHT_INDEX_PROXIMAL, PT_BONE_RIGHT_INDEX_INTERMEDIATE,
	PT_BONE_RIGHT_INDEX_DISTAL, PT_BONE_RIGHT_MIDDLE_PROXIMAL,
	PT_BONE_RIGHT_MIDDLE_INTERMEDIATE, PT_BONE_RIGHT_MIDDLE_DISTAL,
	PT_BONE_RIGHT_RING_PROXIMAL, PT_BONE_RIGHT_RING_INTERMEDIATE, PT_BONE_RIGHT_RING_DISTAL,
	PT_BONE_RIGHT_LITTLE_PROXIMAL, PT_BONE_RIGHT_LITTLE_INTERMEDIATE,
	PT_BONE_RIGHT_LITTLE_DISTAL,
	PT_BONE_COUNT /* 54 */
} pt_bone;
_Static_assert((int)PT_MAX_BONES == (int)PT_BONE_COUNT, "one rest pose per humanoid body bone");

/* The values "attach" takes, for error messages (fits pt_error.message). */
#define PT_ATTACH_ALLOWED                                                                         \
	"head, world or a VRM bone: hips spine chest upper_chest neck jaw "                     \
	"{left,right}_{eye shoulder upper_arm lower_arm hand upper_leg lower_leg foot toes "   \
	"thumb_metacarpal thumb_proximal thumb_distal} "                                        \
	"{left,right}_{index,middle,ring,little}_{proximal,intermediate,distal}"

/* A body bone's rest pose relative to the head (head-local position, m, and rotation):
 * at rest its world pose is head * rest. A bone whose pose never arrives keeps it. */
typedef struct pt_bone_def {
	pt_bone bone;
	pt_vec3 position; /* head-local, m, each |.| <= 10 */
	pt_quat rotation; /* head-local, |q|^2 in [0.25, 4] (normalised on creation) */
} pt_bone_def;

/* pt_strand_def.collider_n: the strand sees every collider, in index order. */
enum { PT_COLLIDERS_ALL = -1 };

/* When the spring-bone forms step (both are authored per 1/60 s frame). */
typedef enum pt_springbone_rate {
	PT_SPRINGBONE_RATE_FRAME = 0,   /* exactly every 1/60 s of simulated time, whatever the
	                                 * tick rate and substeps; head poses interpolated at
	                                 * those instants (tick_hz 30: two steps a tick; 120: a
	                                 * step every other tick, the roots following the head
	                                 * in between). The authored look at any setting */
	PT_SPRINGBONE_RATE_SUBSTEP = 1, /* every substep, the per-frame terms converted to it */
} pt_springbone_rate;

/* The length a spring-bone joint's tail is kept at (form vrm). */
typedef enum pt_springbone_length {
	PT_SPRINGBONE_LENGTH_REST = 0,    /* the bone's rest length (VRMC_springBone) */
	PT_SPRINGBONE_LENGTH_THREEVRM = 1, /* as @pixiv/three-vrm 3.x measures it: from the
	                                    * joint now to its child bone where the previous
	                                    * step left it; the tail keeps that length while
	                                    * the bones keep their rest lengths */
} pt_springbone_length;

typedef enum pt_teleport_mode {
	PT_TELEPORT_KEEP = 0,  /* carry every point rigidly with the head: shape kept, no whip */
	PT_TELEPORT_RESET = 1, /* put every strand back to its rest pose */
} pt_teleport_mode;

typedef enum pt_stretch_mode {
	PT_STRETCH_EXACT = 0,     /* exact segment lengths (follow-the-leader + velocity fix) */
	PT_STRETCH_NONLINEAR = 1, /* soft at small strain, stiff at large (see stretch_*) */
} pt_stretch_mode;

typedef enum pt_limit_type {
	PT_LIMIT_NONE = 0,
	PT_LIMIT_CONE = 1,  /* segment stays within angle of its rest direction */
	PT_LIMIT_HINGE = 2, /* segment stays in the plane normal to axis, within angle */
} pt_limit_type;

typedef struct pt_collider_def {
	pt_shape shape;
	pt_attach attach;
	pt_bone bone;   /* PT_ATTACH_BONE: the bone; needs an entry in def->bones */
	pt_vec3 center; /* sphere/ellipsoid/inside_sphere centre; plane: a point on it. m */
	pt_vec3 radii;  /* ellipsoid semi-axes, m, each in [0.001, 10] */
	pt_vec3 a, b;   /* capsule / inside_capsule segment ends, m */
	pt_vec3 normal; /* plane normal (normalised on creation) */
	float radius;   /* sphere/capsule radius (capsule: at a), m, [0, 10] */
	float radius_b; /* capsule radius at b, m; < 0 means "same as radius" */
} pt_collider_def;

/* Per-joint parameters. Joint j drives segment j (point j -> point j+1); the per-point
 * values below (rest, mass, radius) are those of its tail, point j+1. */
typedef struct pt_joint_def {
	float stiffness;     /* vrm: m/s push toward rest per unit; pull: fraction per frame. [0, 100] */
	float drag_force;    /* fraction of velocity removed per 1/60 s frame, [0, 1] */
	float gravity_power; /* vrm: m/s push along gravity_dir, [0, 100] */
	float hit_radius;    /* radius of the tail sphere for collisions, m, [0, 1] */
	pt_vec3 gravity_dir; /* unit direction (normalised on creation), world space */
	pt_limit_type limit;
	float limit_angle;  /* radians, [0, pi] */
	pt_vec3 limit_axis; /* hinge axis in head-local coordinates (normalised on creation) */
	/* both solvers */
	pt_vec3 rest; /* head-local rest position of point j+1, m (used when the strand's
	               * has_rest is set; then |rest_j+1 - rest_j| in [0.001, 1]) */
	/* verlet */
	float mass;   /* relative mass of point j+1, [0.001, 100]; 0 = from mass_root/mass_tip */
	float radius; /* particle radius of point j+1, m, [0, 0.1]; < 0 = the strand's radius */
	/* informational: the name of point j+1's bone in the client's skeleton (an imported
	 * VRM's joint node), UTF-8, <= PT_NAME_MAX - 1 bytes; "" = no bone (a VRM 0.x virtual
	 * tail) or not given. Point 0's is the strand's root_joint. Never used by a solver */
	char name[PT_NAME_MAX];
} pt_joint_def;

/* A strand's rest shape is either straight (anchor, direction, points, segment_length)
 * or given point by point (has_rest: anchor is point 0, joints[j].rest point j+1; each
 * segment keeps its own length and rest direction, as VRM chains do; direction and
 * segment_length are then ignored). */
typedef struct pt_strand_def {
	pt_vec3 anchor;       /* root position, head-local, m */
	pt_vec3 direction;    /* rest direction, head-local (normalised on creation) */
	int points;           /* particles including the root, [2, PT_MAX_POINTS] */
	float segment_length; /* m, [0.001, 1] */
	int has_rest;         /* 1: joints[j].rest give the rest shape */
	float gravity_scale;  /* this strand's gravity = the instance's x this, [-10, 10];
	                       * negative droops bangs forward/up. Default 1 */
	/* The colliders this strand sees (JSON "colliders"), in the order the spring-bone
	 * solver pushes its tails out of them: collider_list[0 .. collider_n), distinct
	 * indices into colliders. collider_n = PT_COLLIDERS_ALL (the default): every
	 * collider, in index order. Verlet goes by index order whatever the list's order.
	 * Set through pt_strand_set_colliders. */
	int collider_n;
	uint8_t collider_list[PT_MAX_COLLIDERS];
	/* What the strand hangs from and moves with (JSON "bone" and "parent"; both
	 * springbone only). Its coordinates (anchor, rest) stay head-local: the avatar's rest
	 * pose, the head at the origin unrotated.
	 *   bone >= 0 (a pt_bone; needs an entry in def->bones): the root moves rigidly with
	 *     that body bone, frame = bone pose x bone rest^-1 (so at rest it is the head's);
	 *     a bone with no pose follows the rules of pt_world_set_bone_pose;
	 *   parent_strand >= 0 (a branch; < this strand's index): the root hangs from point
	 *     parent_point of that strand and turns with that point's bone, stepped after it
	 *     in the same substep;
	 *   neither (-1, the default): the head. */
	int bone;
	int parent_strand, parent_point;
	char anchor_bone[PT_NAME_MAX]; /* informational: the node this chain hangs from ("" = head) */
	char root_joint[PT_NAME_MAX];  /* informational: point 0's bone, the chain's root bone (the
	                                * first one it rotates; its parent is anchor_bone or the
	                                * head); "" = not given. The JSON "joints"[0] */
	/* verlet */
	float mass_root;      /* relative mass of point 1, [0.001, 100]; masses interpolate linearly */
	float mass_tip;       /* relative mass of the tip, [0.001, 100] */
	float radius;         /* particle radius for colliders and self-collision, m, [0, 0.1] */
	/* springbone and per-point values: one entry per joint, joints 0 .. points-2 used of
	 * PT_MAX_POINTS - 1 there. Points into the owning definition's joint block: read
	 * and write the entries, never the pointer. */
	pt_joint_def *joints;
} pt_strand_def;

typedef struct pt_instance_def {
	char name[PT_NAME_MAX]; /* free text, UTF-8 */
	char room[PT_NAME_MAX]; /* room for subscriptions, [A-Za-z0-9_.-]* */
	pt_solver solver;
	int substeps;    /* substeps per tick, [0, 16]; 0 = the world step's value. Usually 4 */
	float prewarm_s; /* seconds simulated with the head still at creation, [0, 10] */
	pt_vec3 gravity; /* m/s^2, |g| <= 100. Default (0, -9.81, 0) */
	struct {
		pt_vec3 velocity; /* m/s, |v| <= 100 */
		float turbulence; /* gust amplitude as a fraction of |velocity|, [0, 2] */
		float drag;       /* 1/s: air drag, acceleration = drag * (wind - point velocity), [0, 100] */
		uint32_t seed;    /* turbulence phase seed */
	} wind;
	struct {
		float damping;     /* velocity kept per 1/60 s frame, [0, 1]. Usually 0.96 */
		int iterations;    /* distance-constraint passes per substep, [1, 32] */
		float bend_stiffness; /* fraction of the bend toward rest removed per 1/60 s, [0, 1] */
		pt_stretch_mode stretch;
		float stretch_stiffness; /* nonlinear: correction fraction at zero strain, (0, 1] */
		float stretch_max_strain; /* nonlinear: strain at which it becomes rigid, [0.001, 1] */
		int self_collision;       /* 0/1: strands push each other apart (spatial hash) */
	} verlet;
	struct {
		pt_springbone_form form;
		int center_head; /* 1: inertia in the head's space ("center" = head); 0: world */
		pt_springbone_rate rate; /* default PT_SPRINGBONE_RATE_FRAME */
		pt_springbone_length length; /* default PT_SPRINGBONE_LENGTH_REST */
	} springbone;
	pt_strand_def *strands; /* strand_count entries (owned storage: store.slots of them) */
	int strand_count; /* [1, PT_MAX_STRANDS]; the points of all strands <= PT_MAX_JOINTS */
	pt_collider_def colliders[PT_MAX_COLLIDERS];
	int collider_count; /* [0, PT_MAX_COLLIDERS] */
	/* rest poses of the body bones colliders attach to (JSON "bones": {name: {...}}),
	 * at most one entry per bone; entries no collider uses are kept and harmless */
	pt_bone_def bones[PT_MAX_BONES];
	int bone_count; /* [0, PT_MAX_BONES] */
	struct {
		float distance;  /* m per tick that counts as a teleport, (0, 1000] */
		float angle_deg; /* head rotation per tick that counts as a teleport, (0, 180] */
		pt_teleport_mode mode;
	} teleport;
	/* Owned storage, private to the pt_instance_def_* functions (read-only elsewhere). */
	struct pt_instance_def_store {
		pt_joint_def *joints; /* slots x (PT_MAX_POINTS - 1); strands[i].joints = +i */
		int slots;            /* strands with storage (`strands` has slots entries),
		                       * >= strand_count */
		const struct pt_instance_def *self; /* this definition; another in a shallow copy */
	} store;
} pt_instance_def;

/* Fills *def (whatever it held: not freed) with the documented defaults: verlet,
 * substeps 0 (world's), prewarm 1 s, gravity -9.81 Y, no wind (drag 2/s), damping 0.96,
 * 3 iterations, exact stretch, no bending, no self-collision, springbone vrm (stiffness
 * 1, drag 0.4, gravity_power 0, dir -Y, hit_radius 0.02), one strand of 12 points x
 * 0.03 m at (0, 0.06, -0.09) hanging -Y, no colliders, teleport 0.5 m / 60 deg / keep.
 * Returns 1; 0 when out of memory (then *def is zeroed: fini is a no-op on it). The
 * caller owns *def and must pt_instance_def_fini() it. */
int pt_instance_def_init(pt_instance_def *def);

/* Frees what def owns and zeroes it. NULL and zeroed definitions are fine; asserts that
 * def is not a shallow copy of another. */
void pt_instance_def_fini(pt_instance_def *def);

/* Makes *dst (an initialised definition, or a zeroed one: `pt_instance_def d = {0}`) a
 * deep copy of *src (initialised). Returns 1; 0 when out of memory, *dst then unchanged
 * (and still to be finished). dst == src is a no-op. */
int pt_instance_def_copy(pt_instance_def *dst, const pt_instance_def *src);

/* Exchanges two initialised definitions (storage included); cannot fail. */
void pt_instance_def_swap(pt_instance_def *a, pt_instance_def *b);

/* Sets strand_count to n in [1, PT_MAX_STRANDS] (or 0: no strands yet), giving strands
 * that are new (index >= the old count) the strand defaults. Strands below both counts
 * keep their values. Returns 1; 0 when out of memory or n is out of range, *def then
 * unchanged. */
int pt_instance_def_set_strand_count(pt_instance_def *def, int n);

/* Appends a strand with the defaults: the new strand (owned by def), or NULL when def
 * already has PT_MAX_STRANDS or when out of memory. */
pt_strand_def *pt_instance_def_add_strand(pt_instance_def *def);

/* Gives *s the strand defaults (used for every new strand), its joints included;
 * s->joints (the storage) is kept. */
void pt_strand_def_reset(pt_strand_def *s);

/* Copies every field of src and its PT_MAX_POINTS - 1 joints into dst, keeping
 * dst->joints (the storage). Both strands must have storage (belong to a definition). */
void pt_strand_def_copy(pt_strand_def *dst, const pt_strand_def *src);

/* Sets the colliders strand s sees, in order: idx[0 .. n) (idx may be NULL when n is 0),
 * or every collider in index order when n is PT_COLLIDERS_ALL. Returns 1; 0, s then
 * unchanged, when n is outside [PT_COLLIDERS_ALL, PT_MAX_COLLIDERS] or an index outside
 * [0, PT_MAX_COLLIDERS). Indices past the instance's collider count and duplicates are
 * pt_instance_validate's to refuse. */
int pt_strand_set_colliders(pt_strand_def *s, const int *idx, int n);

/* The colliders of `collider_count` that strand s sees, as a set (order dropped). */
pt_collider_mask pt_strand_collider_mask(const pt_strand_def *s, int collider_count);

/* The defaults for one spring-bone joint. */
pt_joint_def pt_joint_def_default(void);

/* Sets every joint of strand s to j. */
void pt_strand_set_joints(pt_strand_def *s, pt_joint_def j);

/* Segment j of strand s at rest (head-local): its length and unit direction, from the
 * rest shape when the strand has one, else segment_length and direction. */
void pt_strand_rest_segment(const pt_strand_def *s, int j, float *length, pt_vec3 *dir);

/* Result of validation: ok, or the first offending field as a JSON-path-like name
 * ("strands[1].points", "colliders[0].radius") and a message with the allowed range. */
typedef struct pt_error {
	int ok;
	char field[96];
	char message[384];
} pt_error;

/* Checks every field against its range; rejects NaN/inf and a definition whose strands'
 * joint storage is not its own (a shallow copy). Never asserts.
 * Returns e.ok = 1 when the definition can be created. */
pt_error pt_instance_validate(const pt_instance_def *def);

/* Solver name <-> enum ("verlet", "springbone"); -1 / NULL when unknown. */
int pt_solver_from_name(const char *name);
const char *pt_solver_name(pt_solver s);
int pt_shape_from_name(const char *name);
const char *pt_shape_name(pt_shape s);
/* Body bone name <-> enum ("chest", "left_upper_arm"); -1 / NULL when unknown ("head"
 * is not a body bone: it is PT_ATTACH_HEAD). */
int pt_bone_from_name(const char *name);
const char *pt_bone_name(pt_bone b);

#endif
