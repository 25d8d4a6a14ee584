/* Recordings (ponytail/record.h): the byte format of core/RECORDING.md, written, read
 * with every length checked, and replayed into a world. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ponytail/record.h"
#include "ponytail/schema.h"

static const char MAGIC[8] = {'P', 'T', 'R', 'E', 'C', 'O', 'R', 'D'};
enum { REC_HEAD = 8, POSE_BYTES = 28, ZONE_BYTES = 60, TOUCH_BYTES = 56, GRAB_BYTES = 32 };
_Static_assert(sizeof(pt_wind_zone) == ZONE_BYTES, "a zone is its 15 four-byte members");
_Static_assert(sizeof(pt_touch) == TOUCH_BYTES, "a touch collider is its 14 four-byte members");
_Static_assert(sizeof(pt_grab) == GRAB_BYTES, "a grab is its 8 four-byte members");

/* ---- writing ---- */

void pt_rec_buf_free(pt_rec_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof *b);
}

/* Room for k more bytes at the end (grown by doubling): where to write them, or NULL
 * (failed set) when out of memory. */
static unsigned char *reserve(pt_rec_buf *b, size_t k)
{
	if (b->failed)
		return NULL;
	if (b->n + k > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->n + k)
			cap *= 2;
		unsigned char *p = realloc(b->p, cap);
		if (!p) {
			b->failed = 1;
			return NULL;
		}
		b->p = p, b->cap = cap;
	}
	unsigned char *at = b->p + b->n;
	b->n += k;
	return at;
}

void pt_rec_buf_put(pt_rec_buf *b, const void *v, size_t k)
{
	unsigned char *at = k ? reserve(b, k) : NULL;
	if (at)
		memcpy(at, v, k);
}

#define put pt_rec_buf_put

static void put_u32(pt_rec_buf *b, uint32_t v) { put(b, &v, 4); }
static void put_u64(pt_rec_buf *b, uint64_t v) { put(b, &v, 8); }

/* Fixed-size records are written in one piece: a record's head and fields at offsets. */
static unsigned char *record_at(pt_rec_buf *b, pt_rec_type t, size_t len)
{
	unsigned char *at = reserve(b, REC_HEAD + len);
	if (at) {
		uint32_t l = (uint32_t)len;
		at[0] = (unsigned char)t, at[1] = at[2] = at[3] = 0;
		memcpy(at + 4, &l, 4);
	}
	return at ? at + REC_HEAD : NULL;
}

static void pose_at(unsigned char *at, pt_pose p)
{
	float f[7] = {p.p.x, p.p.y, p.p.z, p.q.x, p.q.y, p.q.z, p.q.w};
	memcpy(at, f, sizeof f);
}

static void record(pt_rec_buf *b, pt_rec_type t, size_t len)
{
	record_at(b, t, 0);
	if (!b->failed) { /* the payload follows through put: the length is the real one */
		uint32_t l = (uint32_t)len;
		memcpy(b->p + b->n - 4, &l, 4);
	}
}

static void put_pose(pt_rec_buf *b, pt_pose p)
{
	unsigned char *at = reserve(b, POSE_BYTES);
	if (at)
		pose_at(at, p);
}

void pt_rec_put_header(pt_rec_buf *b, const pt_rec_info *info)
{
	size_t room = strnlen(info->room, PT_NAME_MAX - 1);
	put(b, MAGIC, 8);
	put_u32(b, PT_REC_VERSION);
	put_u32(b, (uint32_t)(PT_REC_HEADER_BYTES + room));
	put(b, &info->tick_hz, 8);
	put_u32(b, (uint32_t)info->substeps);
	put_u32(b, (uint32_t)room);
	put_u64(b, info->first_tick);
	put_u64(b, info->last_tick);
	put(b, info->room, room);
}

void pt_rec_put_snapshot(pt_rec_buf *b, uint64_t id, const char *def_json, size_t def_len,
                         const void *state, size_t state_len)
{
	record(b, PT_REC_SNAPSHOT, 8 + 4 + def_len + 4 + state_len);
	put_u64(b, id);
	put_u32(b, (uint32_t)def_len);
	put(b, def_json, def_len);
	put_u32(b, (uint32_t)state_len);
	put(b, state, state_len);
}

void pt_rec_put_create(pt_rec_buf *b, uint64_t id, pt_pose head, const char *def_json,
                       size_t def_len)
{
	record(b, PT_REC_CREATE, 8 + POSE_BYTES + def_len);
	put_u64(b, id);
	put_pose(b, head);
	put(b, def_json, def_len);
}

void pt_rec_put_update(pt_rec_buf *b, uint64_t id, const char *def_json, size_t def_len)
{
	record(b, PT_REC_UPDATE, 8 + def_len);
	put_u64(b, id);
	put(b, def_json, def_len);
}

void pt_rec_put_id(pt_rec_buf *b, pt_rec_type type, uint64_t id)
{
	unsigned char *at = record_at(b, type, 8);
	if (at)
		memcpy(at, &id, 8);
}

void pt_rec_put_head(pt_rec_buf *b, uint64_t id, pt_pose pose)
{
	unsigned char *at = record_at(b, PT_REC_HEAD, 8 + POSE_BYTES);
	if (at) {
		memcpy(at, &id, 8);
		pose_at(at + 8, pose);
	}
}

void pt_rec_put_motion(pt_rec_buf *b, uint64_t id, pt_pose pose, pt_vec3 v, pt_vec3 w,
                       float age_s)
{
	unsigned char *at = record_at(b, PT_REC_MOTION, 8 + POSE_BYTES + 28);
	if (at) {
		float f[7] = {v.x, v.y, v.z, w.x, w.y, w.z, age_s};
		memcpy(at, &id, 8);
		pose_at(at + 8, pose);
		memcpy(at + 8 + POSE_BYTES, f, sizeof f);
	}
}

void pt_rec_put_bone(pt_rec_buf *b, uint64_t id, pt_bone bone, pt_pose pose)
{
	unsigned char *at = record_at(b, PT_REC_BONE, 8 + 4 + POSE_BYTES);
	if (at) {
		uint32_t bn = (uint32_t)bone;
		memcpy(at, &id, 8);
		memcpy(at + 8, &bn, 4);
		pose_at(at + 12, pose);
	}
}

/* A record of an instance's id, a count n and n elements of `size` bytes (WIND, TOUCH,
 * GRABS): little-endian hosts only, as every record; the elements' structs are their
 * four-byte members in order. */
static void put_id_array(pt_rec_buf *b, pt_rec_type type, uint64_t id, const void *a, int n,
                         size_t size)
{
	unsigned char *at = record_at(b, type, 12 + (size_t)n * size);
	if (at) {
		uint32_t k = (uint32_t)n;
		memcpy(at, &id, 8);
		memcpy(at + 8, &k, 4);
		if (n > 0)
			memcpy(at + 12, a, (size_t)n * size);
	}
}

void pt_rec_put_wind(pt_rec_buf *b, uint64_t id, const pt_wind_zone *zones, int n)
{
	put_id_array(b, PT_REC_WIND, id, zones, n, ZONE_BYTES);
}

void pt_rec_put_hands(pt_rec_buf *b, const pt_touch *t, uint32_t n)
{
	unsigned char *at = record_at(b, PT_REC_HANDS, 4 + (size_t)n * TOUCH_BYTES);
	if (at) {
		memcpy(at, &n, 4);
		if (n > 0)
			memcpy(at + 4, t, (size_t)n * TOUCH_BYTES);
	}
}

void pt_rec_put_touch(pt_rec_buf *b, uint64_t id, const uint16_t *idx, int n)
{
	put_id_array(b, PT_REC_TOUCH, id, idx, n, 2);
}

void pt_rec_put_grabs(pt_rec_buf *b, uint64_t id, const pt_grab *g, int n)
{
	put_id_array(b, PT_REC_GRABS, id, g, n, GRAB_BYTES);
}

void pt_rec_put_step(pt_rec_buf *b, uint64_t tick, uint32_t n, const uint64_t *ids,
                     const uint64_t *hashes)
{
	unsigned char *at = record_at(b, PT_REC_STEP, 8 + 4 + (size_t)n * 16);
	if (!at)
		return;
	memcpy(at, &tick, 8);
	memcpy(at + 8, &n, 4);
	for (uint32_t k = 0; k < n; k++) {
		memcpy(at + 12 + 16 * (size_t)k, &ids[k], 8);
		memcpy(at + 20 + 16 * (size_t)k, &hashes[k], 8);
	}
}

/* ---- reading ---- */

static uint32_t get_u32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}
static uint64_t get_u64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}
static pt_pose get_pose(const unsigned char *p)
{
	float f[7];
	memcpy(f, p, sizeof f);
	return (pt_pose){{f[0], f[1], f[2]}, {f[3], f[4], f[5], f[6]}};
}
static pt_vec3 get_vec(const unsigned char *p)
{
	float f[3];
	memcpy(f, p, sizeof f);
	return pt_v3(f[0], f[1], f[2]);
}

int pt_rec_open(pt_rec_reader *r, const void *buf, size_t n, pt_rec_info *info, char *msg,
                size_t msg_cap)
{
	const unsigned char *p = buf;
	memset(r, 0, sizeof *r);
	memset(info, 0, sizeof *info);
	if (n < 12 || memcmp(p, MAGIC, 8) != 0) {
		snprintf(msg, msg_cap, "offset 0: not a Ponytail recording (no PTRECORD magic)");
		return -1;
	}
	info->version = get_u32(p + 8);
	if (info->version != PT_REC_VERSION) {
		snprintf(msg, msg_cap, "offset 8: version %u; this reader reads version %d",
		         info->version, PT_REC_VERSION);
		return -1;
	}
	if (n < PT_REC_HEADER_BYTES) {
		snprintf(msg, msg_cap, "offset %zu: truncated header (%d bytes needed)", n,
		         PT_REC_HEADER_BYTES);
		return -1;
	}
	uint32_t hdr = get_u32(p + 12), room = get_u32(p + 28);
	memcpy(&info->tick_hz, p + 16, 8);
	info->substeps = (int)get_u32(p + 24);
	info->first_tick = get_u64(p + 32);
	info->last_tick = get_u64(p + 40);
	if (room >= PT_NAME_MAX || hdr != PT_REC_HEADER_BYTES + room) {
		snprintf(msg, msg_cap, "offset 12: header of %u bytes with a room of %u bytes", hdr,
		         room);
		return -1;
	}
	if (n < hdr) {
		snprintf(msg, msg_cap, "offset %zu: truncated header (%u bytes needed)", n, hdr);
		return -1;
	}
	if (!(info->tick_hz >= 1.0 && info->tick_hz <= 1000.0) || info->substeps < 1 ||
	    info->substeps > PT_MAX_SUBSTEPS) {
		snprintf(msg, msg_cap, "offset 16: tick rate %g Hz or substeps %d out of range",
		         info->tick_hz, info->substeps);
		return -1;
	}
	memcpy(info->room, p + PT_REC_HEADER_BYTES, room);
	r->p = p, r->n = n, r->at = hdr;
	return 0;
}

/* The smallest payload of each type (its fixed part); -1: the payload is exactly that. */
static const struct {
	size_t min;
	int exact;
} SIZES[PT_REC_TYPES] = {
    [PT_REC_SNAPSHOT] = {16, 0}, [PT_REC_CREATE] = {8 + POSE_BYTES, 0},
    [PT_REC_UPDATE] = {8, 0},    [PT_REC_DELETE] = {8, 1},
    [PT_REC_RESET] = {8, 1},     [PT_REC_HEAD] = {8 + POSE_BYTES, 1},
    [PT_REC_MOTION] = {8 + POSE_BYTES + 28, 1}, [PT_REC_BONE] = {12 + POSE_BYTES, 1},
    [PT_REC_STEP] = {12, 0},     [PT_REC_WIND] = {12, 0},
    [PT_REC_HANDS] = {4, 0},     [PT_REC_TOUCH] = {12, 0},
    [PT_REC_GRABS] = {12, 0},
};

int pt_rec_next(pt_rec_reader *r, pt_rec_event *ev, char *msg, size_t msg_cap)
{
	memset(ev, 0, sizeof *ev);
	if (r->at == r->n)
		return 0;
	size_t at = r->at, left = r->n - at;
	ev->offset = at;
	if (left < REC_HEAD) {
		snprintf(msg, msg_cap, "offset %zu: truncated record header (%zu of 8 bytes)", at, left);
		return -1;
	}
	const unsigned char *h = r->p + at;
	unsigned type = h[0];
	size_t len = get_u32(h + 4);
	if (type == 0 || type >= PT_REC_TYPES || h[1] || h[2] || h[3]) {
		snprintf(msg, msg_cap, "offset %zu: unknown record type %u", at, type);
		return -1;
	}
	if (len > left - REC_HEAD) {
		snprintf(msg, msg_cap, "offset %zu: truncated record (%zu payload bytes, %zu left)", at,
		         len, left - REC_HEAD);
		return -1;
	}
	if (len < SIZES[type].min || (SIZES[type].exact && len != SIZES[type].min)) {
		snprintf(msg, msg_cap, "offset %zu: record of type %u with a payload of %zu bytes", at,
		         type, len);
		return -1;
	}
	const unsigned char *p = h + REC_HEAD;
	ev->type = (pt_rec_type)type;
	if (type != PT_REC_STEP && type != PT_REC_HANDS)
		ev->id = get_u64(p);
	switch (ev->type) {
	case PT_REC_SNAPSHOT: {
		size_t dl = get_u32(p + 8);
		if (dl > len - 16 || get_u32(p + 12 + dl) != len - 16 - dl) {
			snprintf(msg, msg_cap, "offset %zu: snapshot lengths do not add up", at);
			return -1;
		}
		ev->def_json = (const char *)p + 12, ev->def_len = dl;
		ev->state = p + 16 + dl, ev->state_len = len - 16 - dl;
		break;
	}
	case PT_REC_CREATE:
		ev->pose = get_pose(p + 8);
		ev->def_json = (const char *)p + 8 + POSE_BYTES, ev->def_len = len - 8 - POSE_BYTES;
		break;
	case PT_REC_UPDATE:
		ev->def_json = (const char *)p + 8, ev->def_len = len - 8;
		break;
	case PT_REC_HEAD:
		ev->pose = get_pose(p + 8);
		break;
	case PT_REC_MOTION:
		ev->pose = get_pose(p + 8);
		ev->v = get_vec(p + 8 + POSE_BYTES);
		ev->w = get_vec(p + 20 + POSE_BYTES);
		memcpy(&ev->age_s, p + 32 + POSE_BYTES, 4);
		break;
	case PT_REC_BONE: {
		uint32_t b = get_u32(p + 8);
		if (b >= PT_BONE_COUNT) {
			snprintf(msg, msg_cap, "offset %zu: bone %u out of range", at, b);
			return -1;
		}
		ev->bone = (pt_bone)b;
		ev->pose = get_pose(p + 12);
		break;
	}
	case PT_REC_STEP:
		ev->tick = get_u64(p);
		ev->n = get_u32(p + 8);
		if ((size_t)ev->n * 16 != len - 12) {
			snprintf(msg, msg_cap, "offset %zu: step of %u instances in %zu bytes", at, ev->n,
			         len);
			return -1;
		}
		ev->entries = p + 12;
		break;
	case PT_REC_WIND: {
		uint32_t k = get_u32(p + 8);
		if (k > PT_MAX_WIND_ZONES || (size_t)k * ZONE_BYTES != len - 12) {
			snprintf(msg, msg_cap, "offset %zu: wind of %u zones in %zu bytes (at most %d)", at,
			         k, len, (int)PT_MAX_WIND_ZONES);
			return -1;
		}
		ev->nzones = (int)k;
		memcpy(ev->zones, p + 12, (size_t)k * ZONE_BYTES);
		pt_error e = pt_wind_zones_validate(ev->zones, ev->nzones);
		if (!e.ok) {
			snprintf(msg, msg_cap, "offset %zu: %s", at, e.message);
			return -1;
		}
		break;
	}
	case PT_REC_HANDS: {
		uint32_t k = get_u32(p);
		if (k > PT_REC_MAX_HANDS || (size_t)k * TOUCH_BYTES != len - 4) {
			snprintf(msg, msg_cap, "offset %zu: hands of %u colliders in %zu bytes (at most %d)",
			         at, k, len, (int)PT_REC_MAX_HANDS);
			return -1;
		}
		ev->n = k;
		ev->entries = p + 4;
		for (uint32_t i = 0; i < k; i++) {
			pt_touch t;
			memcpy(&t, p + 4 + (size_t)i * TOUCH_BYTES, TOUCH_BYTES);
			pt_error e = pt_touch_validate(&t, 1);
			if (!e.ok) {
				snprintf(msg, msg_cap, "offset %zu: hands[%u]: %s", at, i, e.message);
				return -1;
			}
		}
		break;
	}
	case PT_REC_TOUCH: {
		uint32_t k = get_u32(p + 8);
		if (k > PT_MAX_TOUCH || (size_t)k * 2 != len - 12) {
			snprintf(msg, msg_cap, "offset %zu: touch of %u colliders in %zu bytes (at most %d)",
			         at, k, len, (int)PT_MAX_TOUCH);
			return -1;
		}
		ev->n = k;
		memcpy(ev->touch, p + 12, (size_t)k * 2);
		break;
	}
	case PT_REC_GRABS: {
		uint32_t k = get_u32(p + 8);
		if (k > PT_MAX_GRABS || (size_t)k * GRAB_BYTES != len - 12) {
			snprintf(msg, msg_cap, "offset %zu: %u grabs in %zu bytes (at most %d)", at, k, len,
			         (int)PT_MAX_GRABS);
			return -1;
		}
		ev->n = k;
		memcpy(ev->grabs, p + 12, (size_t)k * GRAB_BYTES);
		break;
	}
	default:
		break;
	}
	r->at = at + REC_HEAD + len;
	return 1;
}

void pt_rec_step_entry(const pt_rec_event *ev, uint32_t k, uint64_t *id, uint64_t *hash)
{
	*id = get_u64(ev->entries + 16 * (size_t)k);
	*hash = get_u64(ev->entries + 16 * (size_t)k + 8);
}

/* ---- replay ---- */

typedef struct rid {
	uint64_t id;
	pt_id pid;
	uint16_t *touch; /* its TOUCH: indices into each tick's hands (malloc'ed), ntouch */
	int ntouch;
} rid;

struct pt_replay {
	pt_world *w;
	float dt;
	int substeps;
	rid *ids; /* sorted by id */
	int n, cap;
	pt_touch *hands; /* this tick's HANDS (none when no record came since the last STEP) */
	uint32_t nhands, cap_hands;
};

pt_replay *pt_replay_create(const pt_rec_info *info, pt_kernel kernel)
{
	pt_replay *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	/* the daemon's world (server/sim.c): prewarm at its tick and substeps */
	pt_world_def wd = pt_world_def_default();
	wd.prewarm_tick_hz = (float)info->tick_hz;
	wd.prewarm_substeps = info->substeps;
	wd.kernel = kernel;
	r->w = pt_world_create(&wd);
	r->dt = 1.0f / (float)info->tick_hz;
	r->substeps = info->substeps;
	if (!r->w) {
		free(r);
		return NULL;
	}
	return r;
}

void pt_replay_destroy(pt_replay *r)
{
	if (!r)
		return;
	pt_world_destroy(r->w);
	for (int i = 0; i < r->n; i++)
		free(r->ids[i].touch);
	free(r->ids);
	free(r->hands);
	free(r);
}

pt_world *pt_replay_world(const pt_replay *r) { return r->w; }
int pt_replay_count(const pt_replay *r) { return r->n; }
uint64_t pt_replay_id_at(const pt_replay *r, int i) { return r->ids[i].id; }

static int find(const pt_replay *r, uint64_t id)
{
	int lo = 0, hi = r->n;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (r->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->n && r->ids[lo].id == id ? lo : -(lo + 1);
}

pt_id pt_replay_find(const pt_replay *r, uint64_t id)
{
	int k = find(r, id);
	return k >= 0 ? r->ids[k].pid : (pt_id){0, 0};
}

/* The definition of a record: its JSON read and checked as the daemon's documents are. */
static int parse_def(const pt_rec_event *ev, pt_instance_def *def, char *msg, size_t cap)
{
	pt_error e;
	json_t *doc = pt_schema_read_buffer(ev->def_json, ev->def_len, &e);
	int rc = doc ? pt_schema_parse(doc, def, NULL, &e) : -1;
	json_decref(doc);
	if (rc != 0)
		snprintf(msg, cap, "offset %zu: the definition of instance %llu: %s%s%s", ev->offset,
		         (unsigned long long)ev->id, e.field, e.field[0] ? ": " : "", e.message);
	return rc;
}

static int add(pt_replay *r, uint64_t id, pt_id pid)
{
	int k = find(r, id);
	if (k >= 0) { /* made anew: without the touch it had */
		pt_world_destroy_instance(r->w, r->ids[k].pid);
		free(r->ids[k].touch);
		r->ids[k] = (rid){id, pid, NULL, 0};
		return 0;
	}
	k = -k - 1;
	if (r->n == r->cap) {
		int nc = r->cap ? 2 * r->cap : 16;
		rid *ni = realloc(r->ids, (size_t)nc * sizeof *ni);
		if (!ni)
			return -1;
		r->ids = ni, r->cap = nc;
	}
	memmove(&r->ids[k + 1], &r->ids[k], (size_t)(r->n - k) * sizeof *r->ids);
	r->ids[k] = (rid){id, pid, NULL, 0};
	r->n++;
	return 0;
}

static int make(pt_replay *r, const pt_rec_event *ev, char *msg, size_t cap)
{
	pt_instance_def def;
	if (!pt_instance_def_init(&def)) {
		snprintf(msg, cap, "out of memory");
		return -1;
	}
	int rc = parse_def(ev, &def, msg, cap);
	pt_pose head = ev->type == PT_REC_CREATE ? ev->pose : (pt_pose){{0, 0, 0}, {0, 0, 0, 1}};
	pt_id pid = rc == 0 ? pt_world_create_instance(r->w, &def, head) : (pt_id){0, 0};
	pt_instance_def_fini(&def);
	if (rc != 0)
		return -1;
	if (pt_id_is_null(pid) || add(r, ev->id, pid) != 0) {
		snprintf(msg, cap, "out of memory");
		return -1;
	}
	if (ev->type == PT_REC_SNAPSHOT &&
	    pt_world_state_load(r->w, pid, ev->state, ev->state_len) != 1) {
		snprintf(msg, cap, "offset %zu: the state of instance %llu does not fit its definition",
		         ev->offset, (unsigned long long)ev->id);
		return -1;
	}
	return 0;
}

/* HANDS: the tick's table, kept until its STEP. */
static int hands(pt_replay *r, const pt_rec_event *ev, char *msg, size_t cap)
{
	if (ev->n > r->cap_hands) {
		pt_touch *h = realloc(r->hands, ev->n * sizeof *h);
		if (!h) {
			snprintf(msg, cap, "out of memory");
			return -1;
		}
		r->hands = h, r->cap_hands = ev->n;
	}
	if (ev->n > 0)
		memcpy(r->hands, ev->entries, ev->n * sizeof *r->hands);
	r->nhands = ev->n;
	return 0;
}

/* STEP: every instance's touch from the tick's hands, then one step of the world. */
static int step(pt_replay *r, const pt_rec_event *ev, char *msg, size_t cap)
{
	for (int i = 0; i < r->n; i++) {
		const rid *x = &r->ids[i];
		pt_touch t[PT_MAX_TOUCH];
		for (int k = 0; k < x->ntouch; k++) {
			if (x->touch[k] >= r->nhands) {
				snprintf(msg, cap,
				         "offset %zu: instance %llu touches hand %u of the %u this tick has",
				         ev->offset, (unsigned long long)x->id, x->touch[k], r->nhands);
				return -1;
			}
			t[k] = r->hands[x->touch[k]];
		}
		if (x->ntouch > 0)
			pt_world_set_touch(r->w, x->pid, t, x->ntouch);
	}
	pt_world_step(r->w, r->dt, r->substeps);
	r->nhands = 0;
	return 0;
}

int pt_replay_apply(pt_replay *r, const pt_rec_event *ev, char *msg, size_t cap)
{
	if (ev->type == PT_REC_SNAPSHOT || ev->type == PT_REC_CREATE)
		return make(r, ev, msg, cap);
	if (ev->type == PT_REC_STEP)
		return step(r, ev, msg, cap);
	if (ev->type == PT_REC_HANDS)
		return hands(r, ev, msg, cap);
	int k = find(r, ev->id);
	if (k < 0) {
		snprintf(msg, cap, "offset %zu: no instance %llu in the recording at this point",
		         ev->offset, (unsigned long long)ev->id);
		return -1;
	}
	pt_id pid = r->ids[k].pid;
	switch (ev->type) {
	case PT_REC_UPDATE: {
		pt_instance_def def;
		if (!pt_instance_def_init(&def)) {
			snprintf(msg, cap, "out of memory");
			return -1;
		}
		int rc = parse_def(ev, &def, msg, cap);
		if (rc == 0 && pt_world_update_instance(r->w, pid, &def) != 1) {
			snprintf(msg, cap, "out of memory");
			rc = -1;
		}
		pt_instance_def_fini(&def);
		return rc;
	}
	case PT_REC_TOUCH: {
		uint16_t *t = NULL;
		if (ev->n > 0 && !(t = malloc(ev->n * sizeof *t))) {
			snprintf(msg, cap, "out of memory");
			return -1;
		}
		if (ev->n > 0)
			memcpy(t, ev->touch, ev->n * sizeof *t);
		free(r->ids[k].touch);
		r->ids[k].touch = t;
		r->ids[k].ntouch = (int)ev->n;
		return 0;
	}
	case PT_REC_GRABS:
		if (pt_world_set_grabs(r->w, pid, ev->grabs, (int)ev->n) != 1) {
			snprintf(msg, cap, "offset %zu: grabs of instance %llu do not fit its shape",
			         ev->offset, (unsigned long long)ev->id);
			return -1;
		}
		return 0;
	case PT_REC_DELETE:
		pt_world_destroy_instance(r->w, pid);
		free(r->ids[k].touch);
		memmove(&r->ids[k], &r->ids[k + 1], (size_t)(r->n - k - 1) * sizeof *r->ids);
		r->n--;
		return 0;
	case PT_REC_RESET:
		pt_world_reset_instance(r->w, pid);
		return 0;
	case PT_REC_HEAD:
		pt_world_set_head(r->w, pid, ev->pose);
		return 0;
	case PT_REC_MOTION:
		pt_world_set_head_motion(r->w, pid, ev->pose, ev->v, ev->w, ev->age_s);
		return 0;
	case PT_REC_BONE:
		pt_world_set_bone_pose(r->w, pid, ev->bone, ev->pose);
		return 0;
	case PT_REC_WIND:
		if (pt_world_set_room_wind(r->w, pid, ev->zones, ev->nzones) != 1) {
			snprintf(msg, cap, "out of memory");
			return -1;
		}
		return 0;
	default:
		return 0;
	}
}

int pt_replay_mismatch(const pt_replay *r, const pt_rec_event *step)
{
	for (uint32_t k = 0; k < step->n; k++) {
		uint64_t id, hash;
		pt_rec_step_entry(step, k, &id, &hash);
		pt_id pid = pt_replay_find(r, id);
		if (pt_id_is_null(pid) || pt_world_state_hash(r->w, pid) != hash)
			return (int)k;
	}
	return step->n == (uint32_t)r->n ? -1 : (int)step->n;
}
