/* Ponytail core: a world of many independent instances.
 *
 * Threading: a world is owned by one thread at a time; no function here locks.
 * pt_world_step_range() may be called concurrently on disjoint ranges (see below).
 * Allocation happens only in create/destroy/update; pt_world_step() never allocates,
 * does no I/O and takes no locks.
 */
#ifndef PONYTAIL_WORLD_H
#define PONYTAIL_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "ponytail/instance.h"
#include "ponytail/types.h"
#include "ponytail/wind.h"

typedef struct pt_world pt_world;

/* Opaque instance id: slot index + generation. A stale id (destroyed instance, slot
 * reused) is detected by every call taking one. The value 0 is never a valid id. */
typedef struct pt_id {
	uint32_t index;      /* slot + 1 (so a zeroed id is invalid) */
	uint32_t generation; /* bumped on every destroy of the slot */
} pt_id;

static inline int pt_id_is_null(pt_id id) { return id.index == 0; }

/* 64-bit form for the wire and for tables: generation << 32 | index. */
static inline uint64_t pt_id_to_u64(pt_id id) { return ((uint64_t)id.generation << 32) | id.index; }
static inline pt_id pt_id_from_u64(uint64_t v)
{
	pt_id id = {(uint32_t)(v & 0xffffffffu), (uint32_t)(v >> 32)};
	return id;
}

typedef enum pt_kernel {
	PT_KERNEL_AUTO = 0,   /* AVX2 when the CPU has it and the build includes it */
	PT_KERNEL_SCALAR = 1, /* plain C, bit-identical results to AVX2 */
	PT_KERNEL_AVX2 = 2,   /* falls back to scalar when unavailable */
} pt_kernel;

typedef struct pt_world_def {
	int initial_capacity; /* instances to reserve; grows on demand. Default 16 */
	float prewarm_tick_hz; /* rate used for prewarm. Default 60 */
	int prewarm_substeps;  /* substeps used for prewarm when the instance says 0. Default 4 */
	pt_kernel kernel;      /* default PT_KERNEL_AUTO */
} pt_world_def;

pt_world_def pt_world_def_default(void);

/* New world, or NULL on allocation failure. Free with pt_world_destroy (NULL ok). */
pt_world *pt_world_create(const pt_world_def *def);
void pt_world_destroy(pt_world *w);

/* Which kernel steps the world (after AUTO is resolved). */
pt_kernel pt_world_kernel(const pt_world *w);

/* Creates an instance with its head at `head` and every strand at rest, then prewarms
 * (def->prewarm_s seconds with the head still). `def` must have passed
 * pt_instance_validate() — an invalid def is a programmer error (assert).
 * Returns a null id on allocation failure. */
pt_id pt_world_create_instance(pt_world *w, const pt_instance_def *def, pt_pose head);

/* Returns 1 if destroyed, 0 if the id was stale. */
int pt_world_destroy_instance(pt_world *w, pt_id id);

/* 1 when id names a live instance. */
int pt_world_valid(const pt_world *w, pt_id id);

/* Number of live instances. */
int pt_world_count(const pt_world *w);

/* Replaces an instance's definition. A change of topology (solver, strands, points,
 * segment lengths, anchors, directions) re-creates its state at rest (and prewarms);
 * any other change keeps the motion as it is. Returns 1 on success, 0 for a stale id,
 * -1 on allocation failure (the instance is then unchanged). `def` must be valid. */
int pt_world_update_instance(pt_world *w, pt_id id, const pt_instance_def *def);

/* Sets the newest head pose; the next step interpolates toward it from the pose used
 * at the previous step (lerp + slerp per substep). q is normalised here; a pose with
 * non-finite values or a zero quaternion is ignored and 0 is returned. */
int pt_world_set_head(pt_world *w, pt_id id, pt_pose head);

/* The longest a head pose with velocities is extrapolated; later it is held. */
#define PT_EXTRAPOLATE_MAX_S 0.05f

/* Sets the newest head pose with its motion, as an IMU or a tracker measures it: linear
 * velocity v (m/s, world) and angular velocity w (rad/s, world axes, as the protocol's
 * head_pose). age_s is how old the pose is at the start of the next step (the time from
 * its sampling to then; negative when it was sampled during that step), in [-1, 10].
 * Until another pose is set, every step moves the head toward the pose extrapolated to
 * the end of the step, p + v t and exp(w t / 2) q with t = seconds since the pose was
 * sampled, at most PT_EXTRAPOLATE_MAX_S, then held there. So a 30 Hz camera pose with a
 * gyro's w turns the head smoothly between poses. Returns 0 (and ignores the call) for a
 * stale id, a pose pt_world_set_head would refuse, |v| > 100, |w| > 100 or a bad age.
 * pt_world_set_head() ends the extrapolation. */
int pt_world_set_head_motion(pt_world *w, pt_id id, pt_pose head, pt_vec3 v, pt_vec3 wvel,
                             float age_s);

/* Sets the newest world pose of a body bone (the frame of the colliders and strands on
 * it, and of the unposed bones under it); the next step interpolates toward it like the
 * head's, and it holds until the next. A bone that never got a pose follows its nearest
 * posed ancestor rigidly by the rest poses of def->bones (the head counts as posed for
 * the eyes and jaw); with none (only a head pose: the hips and everything not under the
 * head) it keeps its rest rotation and follows the head's translation. q is normalised
 * here. Returns 1 when accepted (also for a bone not in the instance's "bones", or when
 * nothing is on a bone: nothing moves), 0 for a stale id, a bone out of range or a pose
 * pt_world_set_head would refuse. */
int pt_world_set_bone_pose(pt_world *w, pt_id id, pt_bone bone, pt_pose pose);

/* The newest world pose of a body bone of the instance's "bones" (given, or by the rule
 * above), when a collider or strand is on a body bone. Returns 0 for a stale id or when
 * the instance has no such bone table or bone. */
int pt_world_get_bone_pose(const pt_world *w, pt_id id, pt_bone bone, pt_pose *out);

/* Current head pose (the newest target). Returns 0 for a stale id. */
int pt_world_get_head(const pt_world *w, pt_id id, pt_pose *out);

/* Sets the instance's room wind: n zones (ponytail/wind.h; n = 0 removes it), which must
 * pass pt_wind_zones_validate (else 0 is returned and nothing changes). From the next step
 * on they blow on every point, added to the instance's own wind; they stay through
 * updates of its definition and resets. Returns 1; 0 for a stale id or invalid zones; -1
 * on allocation failure (unchanged). */
int pt_world_set_room_wind(pt_world *w, pt_id id, const pt_wind_zone *zones, int n);

/* The instance's room wind zones into out (at most cap): their count (0 when none), or -1
 * for a stale id. */
int pt_world_get_room_wind(const pt_world *w, pt_id id, pt_wind_zone *out, int cap);

/* Puts every strand back to its rest pose and prewarms, head unchanged. */
int pt_world_reset_instance(pt_world *w, pt_id id);

/* Advances every instance by dt seconds (usually 1/60) split into `substeps`
 * (usually 4; an instance whose def says substeps > 0 uses its own). dt in (0, 1]. */
void pt_world_step(pt_world *w, float dt, int substeps);

/* Instances are stored densely; index range [begin, end) of pt_world_count() can be
 * stepped by different threads at once (each instance is independent). */
void pt_world_step_range(pt_world *w, float dt, int substeps, int begin, int end);

/* Id of the i-th live instance in storage order (0 <= i < count), for iteration. */
pt_id pt_world_id_at(const pt_world *w, int i);

/* Shape of an instance: strand count and points per strand (array of PT_MAX_STRANDS).
 * Returns the total number of points, or -1 for a stale id. */
int pt_world_shape(const pt_world *w, pt_id id, int *strand_count, int *points_per_strand);

/* Copies world positions of every point, strand by strand, root first, into `out`
 * (capacity `cap` points). Returns the total number of points n (copying nothing when
 * n > cap, so the caller can size its buffer), or -1 for a stale id. */
int pt_world_read_points(const pt_world *w, pt_id id, pt_vec3 *out, int cap);

/* A hint for a loop that is about to read instances one after another
 * (pt_world_read_points, pt_world_get_head): starts loading what those read into the
 * cache, without waiting for it. stage 0: the instance's record; stage 1: its points,
 * found through the record, so give stage 0 time first (one instance earlier in the
 * loop). With ~5 KB per record and thousands of instances, each read otherwise begins
 * with a cache miss. Changes nothing; a stale id does nothing. */
void pt_world_prefetch(const pt_world *w, pt_id id, int stage);

/* Bytes this instance holds in the world: its records, its body (strands, colliders,
 * step scratch), its solver's data, its body-bone table and its points in the pool (the
 * self-collision hash, when on, is not counted). Sized to what the instance has, not to
 * the PT_MAX_* caps. 0 for a stale id. */
size_t pt_world_instance_bytes(const pt_world *w, pt_id id);

/* Ticks that were handled as teleports since creation (for tests and metrics). */
uint32_t pt_world_teleports(const pt_world *w, pt_id id);

/* FNV-1a over the bit patterns of every position of every instance (or of one
 * instance): equal hashes mean bit-identical state. */
uint64_t pt_world_hash(const pt_world *w);
uint64_t pt_world_instance_hash(const pt_world *w, pt_id id);

/* An instance's simulated state: what a step reads and writes besides its definition
 * (core/README.md "State, snapshot and hash" gives the layout). pt_world_state_save
 * writes it into buf (capacity cap; buf NULL: nothing written) and returns its size in
 * bytes whatever cap is (0 for a stale id). pt_world_state_load puts a snapshot saved
 * from an instance of the same definition into the instance `id`: from then on it steps
 * bit for bit as the one saved did. Returns 1; 0 for a stale id; -1 when the bytes are
 * not such a snapshot (size, version, solver or shape differ: the instance is then
 * unchanged); -2 on allocation failure. */
size_t pt_world_state_save(const pt_world *w, pt_id id, void *buf, size_t cap);
int pt_world_state_load(pt_world *w, pt_id id, const void *buf, size_t n);

/* XXH3-64 over the snapshot's bytes, then the parameters its definition set (the
 * README's list): equal hashes mean the same state and the same next tick. 0 for a
 * stale id. */
uint64_t pt_world_state_hash(const pt_world *w, pt_id id);

#endif
