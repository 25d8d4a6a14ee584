/* Per-room rings of recorded segments (record.h). */
#include "record.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* A segment's bytes live in fixed chunks taken from and given back to the recorder's
 * free list: appending never copies what a segment holds (a growing buffer's realloc did,
 * megabytes on the tick thread), and the memory of dropped segments is used again rather
 * than returned to malloc in pieces that leave the process's resident size climbing. */
enum { CHUNK_BYTES = 64 << 10, FREE_CHUNKS_MAX = 1024 }; /* at most 64 MiB kept idle */
typedef struct seg_chunk_t {
	struct seg_chunk_t *next;
	size_t n;
	unsigned char b[CHUNK_BYTES];
} seg_chunk_t;

typedef struct seg_t {
	uint64_t first_tick; /* its snapshots are the state after this tick */
	seg_chunk_t *head, *tail;
	size_t n;            /* bytes */
	struct seg_t *next;  /* newer */
} seg_t;

struct rec_room_t {
	char name[PT_NAME_MAX];
	int members; /* instances in it (sim thread) */
	/* sim thread: this tick's records and hashes */
	pt_rec_buf stage;
	uint64_t *ids, *hashes;
	uint32_t nh, cap_h;
	int want_snapshot;
	/* under the recorder's mutex */
	seg_t *oldest, *newest;
	size_t bytes;
	uint64_t last_tick;
	int readable; /* members > 0, for readers */
	rec_room_t *next;
};

struct rec_t {
	int seconds, tick_hz, substeps;
	size_t max_bytes;
	uint64_t seg_ticks;
	pthread_mutex_t mu;
	rec_room_t *rooms;
	rec_disk_t *disk;
	seg_chunk_t *free_chunks; /* under mu */
	int nfree;
};

rec_t *rec_create(int seconds, size_t max_bytes_per_room, int tick_hz, int substeps,
                  rec_disk_t *disk)
{
	rec_t *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->seconds = seconds, r->max_bytes = max_bytes_per_room;
	r->tick_hz = tick_hz, r->substeps = substeps;
	r->seg_ticks = (uint64_t)REC_SEGMENT_S * (uint64_t)tick_hz;
	r->disk = disk;
	pthread_mutex_init(&r->mu, NULL);
	return r;
}

/* Under the mutex (or at destroy): the segments from s on, their chunks to the free list. */
static void free_segs(rec_t *r, seg_t *s)
{
	while (s) {
		seg_t *n = s->next;
		for (seg_chunk_t *c = s->head, *cn; c; c = cn) {
			cn = c->next;
			if (r->nfree < FREE_CHUNKS_MAX) {
				c->next = r->free_chunks, r->free_chunks = c, r->nfree++;
			} else {
				free(c);
			}
		}
		free(s);
		s = n;
	}
}

/* Under the mutex: appends k bytes to segment s. 0, or -1 out of memory. */
static int seg_put(rec_t *r, seg_t *s, const unsigned char *v, size_t k)
{
	while (k > 0) {
		seg_chunk_t *c = s->tail;
		if (!c || c->n == CHUNK_BYTES) {
			c = r->free_chunks;
			if (c)
				r->free_chunks = c->next, r->nfree--;
			else if (!(c = malloc(sizeof *c)))
				return -1;
			c->next = NULL, c->n = 0;
			if (s->tail)
				s->tail->next = c;
			else
				s->head = c;
			s->tail = c;
		}
		size_t m = CHUNK_BYTES - c->n < k ? CHUNK_BYTES - c->n : k;
		memcpy(c->b + c->n, v, m);
		c->n += m, s->n += m, v += m, k -= m;
	}
	return 0;
}

void rec_destroy(rec_t *r)
{
	if (!r)
		return;
	for (rec_room_t *rm = r->rooms, *n; rm; rm = n) {
		n = rm->next;
		free_segs(r, rm->oldest);
		pt_rec_buf_free(&rm->stage);
		free(rm->ids), free(rm->hashes), free(rm);
	}
	for (seg_chunk_t *c = r->free_chunks, *cn; c; c = cn) {
		cn = c->next;
		free(c);
	}
	pthread_mutex_destroy(&r->mu);
	free(r);
}

rec_room_t *rec_room_join(rec_t *r, const char *room)
{
	if (!r || r->seconds <= 0)
		return NULL;
	rec_room_t *rm = r->rooms;
	while (rm && strcmp(rm->name, room) != 0)
		rm = rm->next;
	if (!rm) {
		rm = calloc(1, sizeof *rm);
		if (!rm) {
			LOG(LOG_ERROR, "record: out of memory: room '%s' is not recorded", room);
			return NULL;
		}
		snprintf(rm->name, sizeof rm->name, "%s", room);
		pthread_mutex_lock(&r->mu);
		rm->next = r->rooms;
		r->rooms = rm;
		pthread_mutex_unlock(&r->mu);
	}
	rm->members++;
	return rm;
}

void rec_room_leave(rec_t *r, rec_room_t *rm)
{
	if (rm && rm->members > 0)
		rm->members--;
	(void)r;
}

pt_rec_buf *rec_stage(rec_room_t *rm) { return rm ? &rm->stage : NULL; }

void rec_hash(rec_room_t *rm, uint64_t id, uint64_t hash)
{
	if (!rm)
		return;
	if (rm->nh == rm->cap_h) {
		uint32_t nc = rm->cap_h ? 2 * rm->cap_h : 16;
		uint64_t *ni = realloc(rm->ids, nc * sizeof *ni);
		if (ni)
			rm->ids = ni;
		uint64_t *nh = ni ? realloc(rm->hashes, nc * sizeof *nh) : NULL;
		if (!nh) {
			rm->stage.failed = 1; /* the segment ends at this tick (below) */
			return;
		}
		rm->hashes = nh, rm->cap_h = nc;
	}
	rm->ids[rm->nh] = id, rm->hashes[rm->nh] = hash;
	rm->nh++;
}

/* Under the mutex: the room's segments past what it keeps. */
static void trim(rec_t *r, rec_room_t *rm, uint64_t tick)
{
	uint64_t keep = (uint64_t)r->seconds * (uint64_t)r->tick_hz;
	while (rm->oldest && rm->oldest->next &&
	       (rm->oldest->next->first_tick + keep <= tick || rm->bytes > r->max_bytes)) {
		seg_t *o = rm->oldest;
		rm->oldest = o->next;
		rm->bytes -= o->n;
		o->next = NULL;
		free_segs(r, o);
	}
}

int rec_end_tick(rec_t *r, uint64_t tick)
{
	if (!r || r->seconds <= 0)
		return 0;
	int due = 0;
	pthread_mutex_lock(&r->mu);
	for (rec_room_t **pp = &r->rooms, *rm; (rm = *pp);) {
		if (rm->members == 0 && rm->stage.n == 0) { /* empty: its recording goes too */
			*pp = rm->next;
			free_segs(r, rm->oldest);
			pt_rec_buf_free(&rm->stage);
			free(rm->ids), free(rm->hashes), free(rm);
			continue;
		}
		pp = &rm->next;
		pt_rec_put_step(&rm->stage, tick, rm->nh, rm->ids, rm->hashes);
		rm->nh = 0;
		if (!rm->newest) { /* a new room: it began with this tick's creates */
			rm->oldest = rm->newest = calloc(1, sizeof *rm->newest);
			if (rm->newest)
				rm->newest->first_tick = tick - 1;
			else
				rm->stage.failed = 1;
		}
		seg_t *s = rm->newest;
		int failed = rm->stage.failed || !s;
		if (!failed) {
			size_t before = s->n;
			failed = seg_put(r, s, rm->stage.p, rm->stage.n) != 0;
			rm->bytes += s->n - before;
			if (!failed)
				rec_disk_put(r->disk, rm->name, s->first_tick, before == 0, rm->stage.p,
				             rm->stage.n);
		}
		if (failed) {
			/* out of memory: the room starts over at the next snapshot */
			LOG(LOG_ERROR, "record: out of memory: room '%s' starts a new recording", rm->name);
			free_segs(r, rm->oldest);
			rm->oldest = rm->newest = NULL, rm->bytes = 0;
		}
		rm->stage.n = 0, rm->stage.failed = 0;
		rm->last_tick = tick;
		rm->readable = rm->members > 0 && rm->oldest != NULL;
		s = rm->newest;
		if (rm->members > 0 &&
		    (!s || tick >= s->first_tick + r->seg_ticks || s->n > r->max_bytes / 4)) {
			seg_t *ns = calloc(1, sizeof *ns);
			if (ns) {
				ns->first_tick = tick;
				if (rm->newest)
					rm->newest->next = ns;
				else
					rm->oldest = ns;
				rm->newest = ns;
				rm->want_snapshot = 1;
				due = 1;
			}
		}
		trim(r, rm, tick);
	}
	pthread_mutex_unlock(&r->mu);
	return due;
}

int rec_wants_snapshot(const rec_room_t *rm) { return rm && rm->want_snapshot; }

void rec_snapshots_done(rec_t *r)
{
	for (rec_room_t *rm = r ? r->rooms : NULL; rm; rm = rm->next)
		rm->want_snapshot = 0;
}

int rec_read(rec_t *r, const char *room, double last_s, unsigned char **out, size_t *n)
{
	*out = NULL, *n = 0;
	if (!r || r->seconds <= 0)
		return -1;
	pthread_mutex_lock(&r->mu);
	rec_room_t *rm = r->rooms;
	while (rm && strcmp(rm->name, room) != 0)
		rm = rm->next;
	if (!rm || !rm->readable || !rm->oldest) {
		pthread_mutex_unlock(&r->mu);
		return -1;
	}
	double back = last_s * r->tick_hz;
	uint64_t from = (double)rm->last_tick > back ? rm->last_tick - (uint64_t)back : 0;
	seg_t *start = rm->oldest;
	for (seg_t *s = rm->oldest; s; s = s->next)
		if (s->first_tick <= from)
			start = s;
	pt_rec_info info = {.tick_hz = r->tick_hz, .substeps = r->substeps,
	                    .first_tick = start->first_tick, .last_tick = rm->last_tick};
	snprintf(info.room, sizeof info.room, "%s", rm->name);
	/* one allocation of the whole answer: the copy under the mutex never reallocates */
	size_t total = PT_REC_HEADER_BYTES + strlen(info.room);
	for (seg_t *s = start; s; s = s->next)
		total += s->n;
	pt_rec_buf b = {.p = malloc(total), .cap = total};
	b.failed = !b.p;
	pt_rec_put_header(&b, &info);
	for (seg_t *s = start; s; s = s->next)
		for (seg_chunk_t *c = s->head; c; c = c->next)
			pt_rec_buf_put(&b, c->b, c->n);
	pthread_mutex_unlock(&r->mu);
	*out = b.p, *n = b.n;
	return b.failed ? -2 : 0;
}
