/* An instance's simulated state as bytes: the snapshot a recording starts from
 * (pt_world_state_save / pt_world_state_load) and the state hash every frame carries
 * (pt_world_state_hash). core/README.md "State, snapshot and hash" documents the layout;
 * this file is its one home, so the two can not drift apart.
 *
 * The snapshot holds what a step reads and writes besides the definition: the head's
 * poses, clock and extrapolation, every point's position and previous position, every
 * body bone's poses, and the spring bone's own (its head poses, teleport count and the
 * three-vrm tails). Loaded into an instance made from the same definition, the next steps
 * are bit for bit those of the instance it was saved from. The hash covers the snapshot
 * and, after it, the parameters the definition set (the instance's gravity, wind,
 * damping, iterations and the rest, its colliders, each point's rest length, direction,
 * inverse mass and radius, each spring-bone joint's terms): equal hashes, equal next tick.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* header-only: XXH3 compiled into core, no library linked */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "springbone_lanes.h"
#include "world_internal.h"

enum { STATE_MAGIC = 0x31535450u /* "PTS1", little-endian */, STATE_VERSION = 1 };

/* A cursor over the snapshot: counts when p is NULL (sizing), writes or reads otherwise,
 * hashes when `hashing`: the bytes in blocks of STATE_BLOCK, each block after the first
 * starting with the previous block's XXH3-64 (little-endian u64), the hash that of the
 * last block (one-shot XXH3 on a block: the streaming API's cost per call was most of
 * the hash's, the fields being many and small). */
enum { STATE_BLOCK = 4096 };
typedef struct cur {
	unsigned char *p;
	const unsigned char *in;
	size_t n, cap;
	int hashing;
	size_t fill;
	int bad; /* a read past the end */
	unsigned char blk[STATE_BLOCK];
} cur;

static void put_slow(cur *c, const unsigned char *b, size_t k)
{
	while (k > 0) {
		size_t m = STATE_BLOCK - c->fill < k ? STATE_BLOCK - c->fill : k;
		memcpy(c->blk + c->fill, b, m);
		c->fill += m, b += m, k -= m;
		if (c->fill == STATE_BLOCK) {
			uint64_t h = XXH3_64bits(c->blk, STATE_BLOCK);
			memcpy(c->blk, &h, 8);
			c->fill = 8;
		}
	}
}

static inline void put(cur *c, const void *v, size_t k)
{
	if (c->hashing) {
		if (k < STATE_BLOCK - c->fill) { /* most fields: a copy of a known size */
			memcpy(c->blk + c->fill, v, k);
			c->fill += k;
		} else {
			put_slow(c, v, k);
		}
		return;
	}
	if (c->p && c->n + k <= c->cap)
		memcpy(c->p + c->n, v, k);
	c->n += k;
}

static void get(cur *c, void *v, size_t k)
{
	if (c->n + k > c->cap) {
		c->bad = 1;
		memset(v, 0, k);
		return;
	}
	memcpy(v, c->in + c->n, k);
	c->n += k;
}

/* The instance's dynamic state, in the documented order; `load` reads it instead. */
static void walk_state(cur *c, const pt_world *w, pt_inst *in, int load)
{
	void (*io)(cur *, void *, size_t) = load ? get : (void (*)(cur *, void *, size_t))put;
#define IO(x) io(c, (void *)&(x), sizeof(x))
	int nodes = in->bones ? in->bones->nodes : 0;
	pt_sb_data *d = in->solver == PT_SOLVER_SPRINGBONE ? in->solver_data : NULL;
	int ntails = d && d->threevrm ? d->njoints : 0;
	uint32_t head[6] = {STATE_MAGIC, STATE_VERSION, (uint32_t)in->solver,
	                    (uint32_t)in->npoints, (uint32_t)nodes, (uint32_t)ntails};
	if (load) {
		uint32_t got[6];
		get(c, got, sizeof got);
		if (memcmp(got, head, sizeof head) != 0) {
			c->bad = 1;
			return;
		}
	} else {
		put(c, head, sizeof head);
	}
	IO(in->head_prev), IO(in->head_target), IO(in->time), IO(in->teleports);
	IO(in->extrapolate), IO(in->sampled), IO(in->sampled_v), IO(in->sampled_w);
	IO(in->sampled_age), IO(in->sb_frames);
	float *arrays[] = {w->x, w->y, w->z, w->px, w->py, w->pz};
	for (size_t a = 0; a < sizeof arrays / sizeof *arrays; a++)
		io(c, arrays[a] + in->offset, (size_t)in->npoints * sizeof(float));
	for (int k = 0; k < nodes; k++) {
		pt_bone_node *nd = &in->bones->node[k];
		IO(nd->posed), IO(nd->prev), IO(nd->target);
	}
	if (d) {
		IO(d->teleports), IO(d->pose_x), IO(d->pose_px), IO(d->tails_stale);
		if (ntails) {
			io(c, d->tail, (size_t)ntails * sizeof *d->tail);
			io(c, d->ptail, (size_t)ntails * sizeof *d->ptail);
		}
	}
#undef IO
}

/* pt_pose, pt_vec3, pt_collider_def and pt_sb_param are 4-byte members throughout: their
 * bytes are their values (no padding to hash). */
_Static_assert(sizeof(pt_pose) == 7 * 4, "pt_pose has padding");
_Static_assert(sizeof(pt_collider_def) == 20 * 4, "pt_collider_def has padding");
_Static_assert(sizeof(pt_sb_param) == 7 * 4, "pt_sb_param has padding");

/* A collider with the members its shape and attachment ignore zeroed (radius_b -1 when
 * it is not a capsule's own): two definitions that collide alike hash alike, whatever a
 * document left in the ignored members (the JSON form does not carry them: SCHEMA.md). */
static pt_collider_def meaningful(const pt_collider_def *c)
{
	pt_collider_def m;
	memset(&m, 0, sizeof m);
	m.shape = c->shape, m.attach = c->attach;
	m.bone = c->attach == PT_ATTACH_BONE ? c->bone : (pt_bone)0;
	m.radius_b = -1.0f;
	switch (c->shape) {
	case PT_SHAPE_SPHERE:
	case PT_SHAPE_INSIDE_SPHERE:
		m.center = c->center, m.radius = c->radius;
		break;
	case PT_SHAPE_ELLIPSOID:
		m.center = c->center, m.radii = c->radii;
		break;
	case PT_SHAPE_CAPSULE:
	case PT_SHAPE_INSIDE_CAPSULE:
		m.a = c->a, m.b = c->b, m.radius = c->radius;
		if (c->shape == PT_SHAPE_CAPSULE && c->radius_b >= 0.0f)
			m.radius_b = c->radius_b;
		break;
	default: /* plane */
		m.center = c->center, m.normal = c->normal;
		break;
	}
	return m;
}

/* The parameters the definition set: hashed when it changes (pt_state_params_refresh),
 * that hash first in the state hash's bytes. */
static void walk_params(cur *c, const pt_world *w, const pt_inst *in)
{
	int32_t ints[] = {in->substeps, in->strand_count, in->collider_count,
	                  (int32_t)in->teleport_mode, in->iterations, (int32_t)in->stretch,
	                  (int32_t)in->sb_rate};
	put(c, ints, sizeof ints);
	float f[] = {in->teleport_distance, in->teleport_angle, in->wind_turbulence,
	             in->wind_drag, in->damping, in->bend, in->stretch_stiffness,
	             in->stretch_max_strain};
	put(c, f, sizeof f);
	put(c, &in->gravity, sizeof in->gravity);
	put(c, &in->wind_velocity, sizeof in->wind_velocity);
	put(c, &in->wind_seed, sizeof in->wind_seed);
	for (int k = 0; k < in->collider_count; k++) {
		pt_collider_def m = meaningful(&in->colliders[k]);
		put(c, &m, sizeof m);
	}
	const float *rest[] = {w->w, w->len, w->ux, w->uy, w->uz, w->rad};
	for (size_t a = 0; a < sizeof rest / sizeof *rest; a++)
		put(c, rest[a] + in->offset, (size_t)in->npoints * sizeof(float));
	const pt_sb_data *d = in->solver == PT_SOLVER_SPRINGBONE ? in->solver_data : NULL;
	if (d)
		put(c, d->par, (size_t)d->njoints * sizeof *d->par);
	/* the room wind, when there is one (an instance without hashes as before) */
	if (in->room_wind)
		put(c, in->room_wind->zones, (size_t)in->room_wind->n * sizeof(pt_wind_zone));
}

size_t pt_world_state_save(const pt_world *w, pt_id id, void *buf, size_t cap)
{
	pt_inst *in = pt_world_lookup(w, id);
	if (!in)
		return 0;
	cur c;
	memset(&c, 0, offsetof(cur, blk));
	c.p = buf, c.cap = buf ? cap : 0;
	walk_state(&c, w, in, 0);
	return c.n;
}

int pt_world_state_load(pt_world *w, pt_id id, const void *buf, size_t n)
{
	pt_inst *in = pt_world_lookup(w, id);
	if (!in)
		return 0;
	/* read into a scratch copy first: a snapshot that does not fit changes nothing */
	size_t need = pt_world_state_save(w, id, NULL, 0);
	if (n != need)
		return -1;
	unsigned char *keep = malloc(need);
	if (!keep)
		return -2;
	pt_world_state_save(w, id, keep, need);
	cur c;
	memset(&c, 0, offsetof(cur, blk));
	c.in = buf, c.cap = n;
	walk_state(&c, w, in, 1);
	if (c.bad || c.n != n) {
		cur back;
		memset(&back, 0, offsetof(cur, blk));
		back.in = keep, back.cap = need;
		walk_state(&back, w, in, 1);
		free(keep);
		return -1;
	}
	free(keep);
	return 1;
}

/* Sets in's params_hash (world_internal.h) after its definition changed. */
void pt_state_params_refresh(pt_world *w, pt_inst *in)
{
	cur c;
	memset(&c, 0, offsetof(cur, blk));
	c.hashing = 1;
	walk_params(&c, w, in);
	w->cold[in - w->inst].params_hash = XXH3_64bits(c.blk, c.fill);
}

uint64_t pt_world_state_hash(const pt_world *w, pt_id id)
{
	pt_inst *in = pt_world_lookup(w, id);
	if (!in)
		return 0;
	cur c;
	memset(&c, 0, offsetof(cur, blk));
	c.hashing = 1;
	put(&c, &w->cold[in - w->inst].params_hash, 8);
	walk_state(&c, w, in, 0);
	return XXH3_64bits(c.blk, c.fill);
}
