/* Private layout of a world, shared by world.c and the solvers.
 *
 * Hot state is structure-of-arrays across instances: one pool of point positions
 * (x, y, z and previous px, py, pz) in which each instance owns the contiguous range
 * [pt_inst.offset, offset + npoints), strand after strand, root first. Per-instance
 * records are dense, in the same order as their point ranges, split in a hot part
 * (pt_inst: what a tick reads) and a cold part (pt_inst_cold: bookkeeping), two arrays
 * under one dense index; destroying an instance compacts all three. Ids map to dense
 * indices through generation-checked slots.
 */
#ifndef PT_WORLD_INTERNAL_H
#define PT_WORLD_INTERNAL_H

#include "bones.h"
#include "collide.h"
#include "ponytail/touch.h"
#include "ponytail/wind.h"
#include "ponytail/world.h"
#include "vecmath.h"


typedef struct pt_strand_rt {
	pt_vec3 anchor;    /* head-local */
	pt_vec3 direction; /* head-local, unit: the first segment's rest direction */
	float length;      /* the first segment's length (every segment's: the pool's len) */
	float gravity_scale;
	int parent, parent_point; /* a branch: the strand and point it hangs from; -1 */
	int first;         /* index of the root relative to the instance's offset */
	int points;
	pt_collider_mask collider_mask; /* the colliders it sees (verlet: index order) */
	float radius;
	int ncols; /* how many: its list in pt_inst_collider_order(in, s), in order */
} pt_strand_rt;

struct pt_world;
struct pt_inst;

/* An instance's room wind (wind.c, pt_world_set_room_wind): its zones, and the wind of
 * the tick at each of its points (m/s; point p of the instance at v[p]), filled by
 * pt_wind_prepare before the solver steps it. Allocated while the instance has zones,
 * and while a spring-bone instance's own wind blows (pt_wind_sb_own): the spring bones
 * feel their own wind through the same per-point wind (zones or not), the verlet solver
 * adds its own by itself. */
typedef struct pt_wind_rt {
	int n; /* zones, [0, PT_MAX_WIND_ZONES]; 0 only for a spring bone's own wind */
	pt_wind_zone zones[PT_MAX_WIND_ZONES];
	int cap;    /* points v holds */
	pt_vec3 *v; /* per point */
} pt_wind_rt;

void pt_wind_rt_free(pt_wind_rt **rt);
/* A runtime of no zones whose v holds npoints; NULL when out of memory. */
pt_wind_rt *pt_wind_rt_new(int npoints);
/* 1 when a definition makes a spring-bone instance whose own wind blows (velocity not 0). */
int pt_wind_sb_own(const pt_instance_def *def);
/* Makes rt->v hold npoints (rt NULL: nothing to do). 1, or 0 out of memory (unchanged). */
int pt_wind_rt_fit(pt_wind_rt *rt, int npoints);
/* Fills in->room_wind->v for the tick about to run (dt s): every point where it is now,
 * the gusts at the middle of the tick. */
void pt_wind_prepare(const struct pt_world *w, struct pt_inst *in, float dt);
/* solver_springbone.c: its per-step terms are made again at the next step (they hold the
 * room wind's push). */
void pt_sb_terms_stale(struct pt_inst *in);

/* An instance's touch and grabs (touch.c, ponytail/touch.h) for its next step, and the
 * scratch of that step's passes. Allocated by the first pt_world_set_touch or _grabs and
 * kept; emptied by the step that takes them. */
typedef struct pt_touch_rt {
	int n, ngrabs; /* touch colliders, grabs (sorted by strand, then point) */
	pt_touch t[PT_MAX_TOUCH];
	pt_grab g[PT_MAX_GRABS];
	int nlive;                         /* the step's: touches the cull kept */
	unsigned char live[PT_MAX_TOUCH];
	pt_vec3 start[PT_MAX_GRABS];       /* each grabbed point at the substep's start */
	float w_saved[PT_MAX_GRABS];       /* verlet: its inverse mass */
} pt_touch_rt;

void pt_touch_rt_free(pt_touch_rt **rt);
/* After a topology change (pt_world_update_instance): drops grabs of points it lost. */
void pt_touch_refit(struct pt_inst *in);
/* At the step's start (teleport handled): 1 when a touch can reach the instance this step
 * or it has grabs (then it steps alone: pt_touch_pre and _post around every substep,
 * pt_touch_clear after); else empties them and returns 0 (its usual path). in->touch set. */
int pt_touch_begin(const struct pt_world *w, struct pt_inst *in);
/* Before a substep (or frame) of h s ending at fraction a1 of the step. */
void pt_touch_pre(struct pt_world *w, struct pt_inst *in, float a1, float h);
/* After it: the touch and grab passes for the substep from fraction a0 to a1. */
void pt_touch_post(struct pt_world *w, struct pt_inst *in, float a0, float a1);
/* The step took them. */
void pt_touch_clear(struct pt_inst *in);
/* solver_verlet.c: all substeps of a verlet instance now, one at a time, the touch passes
 * around each. */
void pt_verlet_step_touched(struct pt_world *w, struct pt_inst *in);

/* A hint to load the line at p (no effect on results). GCC 12's dead-code pass drops
 * __builtin_prefetch in loops like prefetch_points's (the instruction count did not
 * change); a volatile asm stays. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define PT_PREFETCH(p) __asm__ __volatile__("prefetcht0 %0" : : "m"(*(const char *)(p)))
#else
#define PT_PREFETCH(p) __builtin_prefetch(p)
#endif

/* The lines of the n bytes from p, first to last (PT_PREFETCH each). */
static inline void prefetch_span(const void *p, size_t n)
{
	const char *b = p;
	for (size_t o = 0; o < n; o += 64)
		PT_PREFETCH(b + o);
	if (n > 0)
		PT_PREFETCH(b + n - 1);
}

/* The lines of n floats from p. */
static inline void prefetch_floats(const float *p, int n)
{
	prefetch_span(p, n > 0 ? (size_t)n * sizeof *p : 0);
}

/* A solver steps one instance by one substep, `cols` the colliders in world space at its
 * end. The solver owns instance-specific data in inst->solver_data. */
typedef struct pt_solver_ops {
	/* Allocates solver data from def; returns 0 on allocation failure. May be NULL. */
	int (*init)(struct pt_inst *in, const pt_instance_def *def);
	/* Copies parameters that change without a topology change. May be NULL. */
	void (*update_params)(struct pt_inst *in, const pt_instance_def *def);
	void (*destroy)(struct pt_inst *in);
	/* Puts the state at rest for the given head pose. */
	void (*rest)(struct pt_world *w, struct pt_inst *in, const pt_pose *head);
	/* One substep (spring bone; NULL for verlet, which steps in batches: verlet_lanes.h):
	 * the head at in->sub_pose[s] / sub_rot[s], the bones at their scratch s
	 * (pt_bones_substeps). */
	void (*substep)(struct pt_world *w, struct pt_inst *in, int s, const pt_collider_rt *cols,
	                float h, double t);
} pt_solver_ops;

/* One instance's runtime record, hot part: what stepping reads or writes every tick, in
 * the order a tick touches it (header and parameters in five cache lines, then the
 * addresses of its body: strands, colliders and step scratch). Dense, in the same order
 * as the point ranges; compacted on destroy together with its cold part (pt_inst_cold,
 * same dense index); the body moves with the record's pointers. */
typedef struct pt_inst {
	/* header: read for every instance every tick */
	int offset; /* first point in the pool */
	int npoints;
	pt_solver solver;
	const pt_solver_ops *ops;
	void *solver_data;
	int substeps; /* 0 = world step's value */
	int strand_count, collider_count;
	int *self_scratch; /* self-collision hash storage (selfcollide.c), allocated at create */
	pt_bones_rt *bones; /* body-bone poses (bones.h); NULL when nothing is on a bone */
	pt_wind_rt *room_wind; /* NULL when the instance has no room wind */
	pt_touch_rt *touch;    /* NULL until touch or grabs are first set */

	/* head poses and clock */
	pt_pose head_prev;   /* pose at the end of the previous step */
	pt_pose head_target; /* newest pose */
	double time;         /* simulated seconds since creation (drives turbulence) */
	float teleport_distance, teleport_angle; /* m, radians */
	pt_teleport_mode teleport_mode;
	uint32_t teleports;
	/* pt_world_set_head_motion: the sampled pose, its velocities and its age at the
	 * start of the next step; step_dense extrapolates head_target from them */
	int extrapolate;
	pt_pose sampled;
	pt_vec3 sampled_v, sampled_w;
	double sampled_age;

	/* parameters: gravity and wind, verlet per 1/60 s frame (converted per substep when
	 * stepping), spring bone rate */
	pt_vec3 gravity;
	pt_vec3 wind_velocity;
	float wind_turbulence, wind_drag;
	uint32_t wind_seed;
	float damping;
	int iterations;
	float bend;
	pt_stretch_mode stretch;
	float stretch_stiffness, stretch_max_strain;
	pt_springbone_rate sb_rate;
	double sb_frames; /* springbone at frame rate: 1/60 s frames since its last step, [0, 1) */

	/* step scratch, valid during pt_world_step: substep count and length */
	float sub_h;
	int sub_n;

	/* The body: one 64-byte aligned block of this instance's own, starting at strands
	 * (world.c: body_layout, body_alloc, body_install), sized to it and laid out in the
	 * order a tick reads it: strands[strand_count], colliders[collider_count], then the
	 * step scratch, the interpolated head pose and rotation at the end of each substep
	 * (sub_pose and sub_rot, PT_MAX_SUBSTEPS each, of which a tick touches the first
	 * sub_n), then each strand's ordered collider list (collider_count bytes a
	 * strand, pt_inst_collider_order). Kept out of the record so that the records
	 * stay 320 bytes apart and a tick's lines of one instance are adjacent. */
	pt_strand_rt *strands;
	pt_collider_def *colliders;
	pt_pose *sub_pose;
	pt_mat3 *sub_rot;
} pt_inst;

/* Strand s's colliders in the order the spring-bone solver takes them (its ncols first
 * bytes; the default "all" is 0, 1, ... collider_count - 1), in the body after sub_rot. */
static inline uint8_t *pt_inst_collider_order(const pt_inst *in, int s)
{
	return (uint8_t *)(in->sub_rot + PT_MAX_SUBSTEPS) + (size_t)s * (size_t)in->collider_count;
}

/* The cold part: bookkeeping read at create, update, reset and destroy, never by a tick. */
typedef struct pt_inst_cold {
	uint32_t slot; /* slot index owning this instance */
	float prewarm_s;
	uint64_t params_hash; /* of the parameters its definition set (state.c) */
} pt_inst_cold;

struct pt_world {
	pt_world_def def;
	pt_kernel kernel;
	int scalar_fma; /* the scalar kernel may use the CPU's FMA instruction */

	/* slots: id.index - 1 -> dense index, or -1 when free */
	int slot_cap;
	uint32_t *slot_gen;
	int *slot_dense;
	int *free_slots;
	int free_count;

	int count, cap, cold_cap;
	pt_inst *inst;      /* hot, dense */
	pt_inst_cold *cold; /* cold, dense: cold[i] belongs to inst[i] */

	int pool_count, pool_cap;
	float *x, *y, *z, *px, *py, *pz;
	float *w; /* inverse mass; 0 for roots */
	/* rest shape, per point i > 0 of a strand: length and head-local unit direction of
	 * the segment from point i - 1 to i (at a root: those of its first segment), and
	 * the particle radius */
	float *len, *ux, *uy, *uz, *rad;
};

/* The pool's per-point arrays, for growing and compacting them together. */
#define PT_POOL_ARRAYS(w)                                                                          	{&(w)->x, &(w)->y, &(w)->z, &(w)->px, &(w)->py, &(w)->pz, &(w)->w, &(w)->len, &(w)->ux,      	 &(w)->uy, &(w)->uz, &(w)->rad}

extern const pt_solver_ops pt_verlet_ops;
extern const pt_solver_ops pt_springbone_ops;

/* state.c: the hash of in's parameters, kept in its cold record; after every change of
 * its definition (create, update). */
void pt_state_params_refresh(pt_world *w, pt_inst *in);

/* The live instance id names, or NULL (a stale id). */
pt_inst *pt_world_lookup(const pt_world *w, pt_id id);

/* Steps dense instances [begin, end) by dt (world_step.c; prewarm steps one at a time). */
void pt_world_step_dense(pt_world *w, float dt, int substeps, int begin, int end);
/* The sampled pose carried t seconds along its velocities (pt_world_set_head_motion). */
pt_pose pt_inst_extrapolated(const pt_inst *in, double t);

/* Rest pose of every strand at `head` (the rest shape of the pool's len and u), previous
 * positions equal to current ones. */
void pt_inst_place_rest(pt_world *w, pt_inst *in, const pt_pose *head);

int pt_cpu_has_avx2(void); /* AVX2 and FMA */
int pt_cpu_has_fma(void);  /* scalar FMA */

#endif
