/* Frame ring: see frame_ring.h. */
#include "frame_ring.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "log.h"
#include "ptp/compact.h"

enum { RING_SETS = 3, MAX_EVENTS = 1 << 20, MAX_KEY_REQUESTS = 1 << 16 };

struct frame_ring_t {
	pthread_mutex_t mu;
	frame_set_t sets[RING_SETS]; /* the ring: frame sets, not sim slots */
	int newest; /* -1 before the first publish */
	void (*notify)(void *);
	void *notify_ctx;
	frame_event_t *ev, *ev_out; /* queued; handed to the WS thread */
	int nev, cap_ev, cap_ev_out;
	/* replies: [0] staged by the sim this tick, [1] published, [2] taken by the WS thread */
	frame_reply_t *rep[3];
	int nrep[3], cap_rep[3];
	uint64_t *keys[2];
	int nkeys, keys_fill;
	/* [max_slots][FRAME_CODINGS][FRAME_RATES]: watched until this tick (atomic, relaxed;
	 * written by the WebSocket thread only) */
	uint64_t *watch;
	uint64_t *watch_any;  /* [max_slots]: the newest of a slot's marks above (the same) */
	uint64_t *snap_watch; /* [max_slots]: REST snapshots wanted until this tick (same) */
	int max_slots;
};

inst_meta_t *meta_new(int strands)
{
	inst_meta_t *m = calloc(1, offsetof(inst_meta_t, shape) + ptp_shape_size(strands));
	if (m) {
		m->refs = 1;
		m->shape.strand_count = (uint16_t)strands;
	}
	return m;
}

inst_meta_t *meta_ref(inst_meta_t *m)
{
	__atomic_add_fetch(&m->refs, 1, __ATOMIC_RELAXED);
	return m;
}

void meta_unref(inst_meta_t *m)
{
	if (m && __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) == 0)
		free(m);
}

frame_ring_t *frame_ring_create(int max_slots)
{
	frame_ring_t *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	r->keys[0] = malloc(MAX_KEY_REQUESTS * sizeof(uint64_t));
	r->keys[1] = malloc(MAX_KEY_REQUESTS * sizeof(uint64_t));
	r->watch = calloc((size_t)(max_slots > 0 ? max_slots : 1) * FRAME_CODINGS * FRAME_RATES,
	                  sizeof *r->watch);
	r->watch_any = calloc((size_t)(max_slots > 0 ? max_slots : 1), sizeof *r->watch_any);
	r->snap_watch = calloc((size_t)(max_slots > 0 ? max_slots : 1), sizeof *r->snap_watch);
	r->max_slots = max_slots;
	if (!r->keys[0] || !r->keys[1] || !r->watch || !r->watch_any || !r->snap_watch) {
		free(r->keys[0]);
		free(r->keys[1]);
		free(r->watch);
		free(r->watch_any);
		free(r->snap_watch);
		free(r);
		return NULL;
	}
	pthread_mutex_init(&r->mu, NULL);
	r->newest = -1;
	return r;
}

const int frame_rate_hz[FRAME_RATES] = {60, 30, 20, 10};

int frame_rate_divisor(int tick_hz, int coding, int rate)
{
	/* index 0 (rate_hz 0 and 60) is every tick at any tick rate: it is also the one
	 * stream of 1.0/1.1 connections, whose records cannot say a step (PROTOCOL.md 6);
	 * round(tick_hz / 60) closed every such connection from a 90 Hz tick on */
	if (rate <= 0 || rate >= FRAME_RATES)
		return 1;
	int hz = frame_rate_hz[rate];
	int d = (tick_hz + hz / 2) / hz; /* round half up: every hz is even */
	/* a record's step is at most 32 (PROTOCOL.md 6), a compact one's 16 (11.2) */
	int max = coding == FRAME_COMPACT ? PTP_RECORD_C_STEP_MAX : 32;
	return d < 1 ? 1 : d > max ? max : d;
}

int frame_rate_stream(int tick_hz, int coding, int rate)
{
	int d = frame_rate_divisor(tick_hz, coding, rate);
	for (int i = 0; i < rate; i++)
		if (frame_rate_divisor(tick_hz, coding, i) == d)
			return i;
	return rate < 0 || rate >= FRAME_RATES ? 0 : rate;
}

int frame_rate_index(int rate_hz)
{
	if (rate_hz == 0)
		return 0;
	for (int i = 0; i < FRAME_RATES; i++)
		if (frame_rate_hz[i] == rate_hz)
			return i;
	return -1;
}

frame_snap_t *frame_snap_new(int n)
{
	frame_snap_t *s = calloc(1, sizeof *s + (size_t)(n > 0 ? n : 0) * sizeof s->xyz[0]);
	if (s)
		s->refs = 1;
	return s;
}

void frame_snap_unref(frame_snap_t *s)
{
	if (s && __atomic_sub_fetch(&s->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		free(s->text);
		free(s);
	}
}

const char *frame_snap_text(frame_snap_t *s)
{
	return __atomic_load_n(&s->text, __ATOMIC_ACQUIRE);
}

const char *frame_snap_set_text(frame_snap_t *s, char *text)
{
	char *none = NULL;
	if (__atomic_compare_exchange_n(&s->text, &none, text, 0, __ATOMIC_ACQ_REL,
	                                __ATOMIC_ACQUIRE))
		return text;
	free(text); /* another reader rendered the same tick first: the same bytes */
	return none;
}

static void clear_set(frame_set_t *fs)
{
	for (int i = 0; i < fs->nslots; i++) {
		if (fs->entries[i].meta)
			meta_unref(fs->entries[i].meta);
		frame_snap_unref(fs->entries[i].snap);
	}
	fs->nslots = fs->nlive = fs->nrooms = 0;
	for (int w = 0; w < FRAME_MAX_WORKERS; w++)
		fs->bufs[w].len = 0;
}

void frame_ring_destroy(frame_ring_t *r)
{
	if (!r)
		return;
	for (int i = 0; i < RING_SETS; i++) {
		frame_set_t *fs = &r->sets[i];
		clear_set(fs);
		free(fs->entries);
		free(fs->by_id);
		free(fs->room_slots);
		free(fs->rooms);
		for (int w = 0; w < FRAME_MAX_WORKERS; w++)
			free(fs->bufs[w].data);
	}
	for (int i = 0; i < r->nev; i++) {
		meta_unref(r->ev[i].meta);
		meta_unref(r->ev[i].old);
	}
	free(r->ev);
	free(r->ev_out);
	for (int i = 0; i < 3; i++)
		free(r->rep[i]);
	free(r->keys[0]);
	free(r->keys[1]);
	free(r->watch);
	free(r->watch_any);
	free(r->snap_watch);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

void frame_ring_set_notify(frame_ring_t *r, void (*fn)(void *), void *ctx)
{
	r->notify = fn;
	r->notify_ctx = ctx;
}

static frame_set_t *pick(frame_ring_t *r)
{
	frame_set_t *fs = NULL;
	pthread_mutex_lock(&r->mu);
	for (int i = 0; i < RING_SETS && !fs; i++)
		if (i != r->newest && r->sets[i].readers == 0)
			fs = &r->sets[i];
	pthread_mutex_unlock(&r->mu);
	return fs; /* NULL cannot happen with one reader holding one set at a time */
}

void frame_set_reset_entry(frame_set_t *fs, int slot)
{
	frame_entry_t *e = &fs->entries[slot];
	if (e->meta)
		meta_unref(e->meta);
	frame_snap_unref(e->snap);
	memset(e, 0, sizeof *e);
}

frame_set_t *frame_ring_begin_deferred(frame_ring_t *r, int nslots, int nrooms)
{
	frame_set_t *fs = pick(r);
	if (!fs)
		return NULL;
	for (int i = nslots; i < fs->nslots; i++)
		frame_set_reset_entry(fs, i);
	if (fs->nslots > nslots)
		fs->nslots = nslots; /* entries below hold their references until reset */
	fs->nlive = fs->nrooms = 0;
	for (int w = 0; w < FRAME_MAX_WORKERS; w++)
		fs->bufs[w].len = 0;
	int c1 = fs->cap_slots, c2 = fs->cap_slots, c3 = fs->cap_slots;
	if (srv_grow((void **)&fs->entries, &c1, nslots, sizeof *fs->entries) ||
	    srv_grow((void **)&fs->by_id, &c2, nslots, sizeof *fs->by_id) ||
	    srv_grow((void **)&fs->room_slots, &c3, nslots, sizeof *fs->room_slots) ||
	    srv_grow((void **)&fs->rooms, &fs->cap_rooms, nrooms, sizeof *fs->rooms)) {
		fs->cap_slots = c1 < c2 ? (c1 < c3 ? c1 : c3) : (c2 < c3 ? c2 : c3);
		return NULL;
	}
	fs->cap_slots = c1;
	if (nslots > fs->nslots)
		memset(fs->entries + fs->nslots, 0,
		       (size_t)(nslots - fs->nslots) * sizeof *fs->entries);
	fs->nslots = nslots;
	return fs;
}

frame_set_t *frame_ring_begin(frame_ring_t *r, int nslots, int nrooms)
{
	frame_set_t *fs = pick(r);
	if (!fs)
		return NULL;
	clear_set(fs);
	/* The three arrays indexed by live instances share cap_slots (nlive <= nslots). */
	int c1 = fs->cap_slots, c2 = fs->cap_slots, c3 = fs->cap_slots;
	if (srv_grow((void **)&fs->entries, &c1, nslots, sizeof *fs->entries) ||
	    srv_grow((void **)&fs->by_id, &c2, nslots, sizeof *fs->by_id) ||
	    srv_grow((void **)&fs->room_slots, &c3, nslots, sizeof *fs->room_slots) ||
	    srv_grow((void **)&fs->rooms, &fs->cap_rooms, nrooms, sizeof *fs->rooms)) {
		fs->cap_slots = c1 < c2 ? (c1 < c3 ? c1 : c3) : (c2 < c3 ? c2 : c3);
		return NULL;
	}
	fs->cap_slots = c1;
	if (nslots > 0)
		memset(fs->entries, 0, (size_t)nslots * sizeof *fs->entries);
	fs->nslots = nslots;
	return fs;
}

int frame_ring_publish(frame_ring_t *r, frame_set_t *fs, frame_event_t *events, int nevents)
{
	int rc = 0;
	pthread_mutex_lock(&r->mu);
	r->newest = (int)(fs - r->sets);
	if (r->nrep[0] > 0 &&
	    srv_grow((void **)&r->rep[1], &r->cap_rep[1], r->nrep[1] + r->nrep[0], sizeof *r->rep[1]) == 0) {
		memcpy(r->rep[1] + r->nrep[1], r->rep[0], (size_t)r->nrep[0] * sizeof *r->rep[0]);
		r->nrep[1] += r->nrep[0];
	}
	r->nrep[0] = 0;
	if (nevents > 0) {
		if (r->nev + nevents > MAX_EVENTS ||
		    srv_grow((void **)&r->ev, &r->cap_ev, r->nev + nevents, sizeof *r->ev)) {
			rc = -1;
		} else {
			memcpy(r->ev + r->nev, events, (size_t)nevents * sizeof *events);
			r->nev += nevents;
		}
	}
	pthread_mutex_unlock(&r->mu);
	if (rc) {
		LOG(LOG_ERROR, "event queue full: %d instance events dropped", nevents);
		for (int i = 0; i < nevents; i++) {
			meta_unref(events[i].meta);
			meta_unref(events[i].old);
		}
	}
	if (r->notify)
		r->notify(r->notify_ctx);
	return rc;
}

void frame_ring_reply(frame_ring_t *r, const frame_reply_t *x)
{
	pthread_mutex_lock(&r->mu);
	if (r->nrep[0] + r->nrep[1] < MAX_EVENTS &&
	    srv_grow((void **)&r->rep[0], &r->cap_rep[0], r->nrep[0] + 1, sizeof *r->rep[0]) == 0)
		r->rep[0][r->nrep[0]++] = *x;
	pthread_mutex_unlock(&r->mu);
}

int frame_ring_take_replies(frame_ring_t *r, const frame_reply_t **out)
{
	pthread_mutex_lock(&r->mu);
	frame_reply_t *t = r->rep[2];
	int tc = r->cap_rep[2];
	r->rep[2] = r->rep[1], r->cap_rep[2] = r->cap_rep[1], r->nrep[2] = r->nrep[1];
	r->rep[1] = t, r->cap_rep[1] = tc, r->nrep[1] = 0;
	*out = r->rep[2];
	int n = r->nrep[2];
	pthread_mutex_unlock(&r->mu);
	return n;
}

frame_set_t *frame_ring_acquire(frame_ring_t *r, frame_set_t *held, frame_event_t **events,
                                int *nevents)
{
	pthread_mutex_lock(&r->mu);
	if (held)
		held->readers--;
	frame_set_t *fs = r->newest >= 0 ? &r->sets[r->newest] : NULL;
	if (fs)
		fs->readers++;
	/* Swap the queued events out; the other array was consumed by the previous call. */
	frame_event_t *t = r->ev_out;
	int tc = r->cap_ev_out;
	r->ev_out = r->ev;
	r->cap_ev_out = r->cap_ev;
	*nevents = r->nev;
	r->ev = t;
	r->cap_ev = tc;
	r->nev = 0;
	*events = r->ev_out;
	pthread_mutex_unlock(&r->mu);
	return fs;
}

void frame_ring_release(frame_ring_t *r, frame_set_t *fs)
{
	if (!fs)
		return;
	pthread_mutex_lock(&r->mu);
	fs->readers--;
	pthread_mutex_unlock(&r->mu);
}

void frame_ring_request_key(frame_ring_t *r, uint64_t id, int coding, int stream)
{
	pthread_mutex_lock(&r->mu);
	if (r->nkeys < MAX_KEY_REQUESTS)
		r->keys[r->keys_fill][r->nkeys++] =
		    FRAME_KEY_ID(id) | (uint64_t)(stream & 3) << 62 | (uint64_t)(coding & 1) << 61;
	pthread_mutex_unlock(&r->mu);
}

int frame_ring_take_key_requests(frame_ring_t *r, const uint64_t **ids)
{
	pthread_mutex_lock(&r->mu);
	*ids = r->keys[r->keys_fill];
	int n = r->nkeys;
	r->keys_fill ^= 1;
	r->nkeys = 0;
	pthread_mutex_unlock(&r->mu);
	return n;
}

static size_t watch_at(int slot, int coding, int stream)
{
	return ((size_t)slot * FRAME_CODINGS + (size_t)coding) * FRAME_RATES + (size_t)stream;
}

void frame_ring_watch(frame_ring_t *r, int slot, int coding, int stream, uint64_t until_tick)
{
	if (slot < 0 || slot >= r->max_slots || stream < 0 || stream >= FRAME_RATES || coding < 0 ||
	    coding >= FRAME_CODINGS)
		return;
	__atomic_store_n(&r->watch[watch_at(slot, coding, stream)], until_tick, __ATOMIC_RELAXED);
	/* one writer (this thread): a plain max */
	if (__atomic_load_n(&r->watch_any[slot], __ATOMIC_RELAXED) < until_tick)
		__atomic_store_n(&r->watch_any[slot], until_tick, __ATOMIC_RELAXED);
}

int frame_ring_watched(const frame_ring_t *r, int slot, int coding, int stream, uint64_t tick)
{
	if (slot < 0 || slot >= r->max_slots)
		return coding == FRAME_CLASSIC && stream == 0;
	return __atomic_load_n(&r->watch[watch_at(slot, coding, stream)], __ATOMIC_RELAXED) >= tick;
}

int frame_ring_watched_any(const frame_ring_t *r, int slot, uint64_t tick)
{
	if (slot < 0 || slot >= r->max_slots)
		return 1; /* as frame_ring_watched: beyond the table, classic rate 0 */
	return __atomic_load_n(&r->watch_any[slot], __ATOMIC_RELAXED) >= tick;
}

frame_snap_t *frame_ring_snapshot(frame_ring_t *r, uint64_t id, uint64_t keep_ticks)
{
	frame_snap_t *snap = NULL;
	pthread_mutex_lock(&r->mu);
	/* The newest set is never the one the sim refills (frame_ring_begin skips it), and it
	 * stays the newest while the mutex is held: no reader count needed. */
	const frame_set_t *fs = r->newest >= 0 ? &r->sets[r->newest] : NULL;
	int slot = fs ? frame_set_find(fs, id) : -1;
	if (slot >= 0) {
		snap = fs->entries[slot].snap;
		if (snap)
			__atomic_add_fetch(&snap->refs, 1, __ATOMIC_RELAXED);
		if (slot < r->max_slots)
			__atomic_store_n(&r->snap_watch[slot], fs->tick + keep_ticks, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&r->mu);
	return snap;
}

int frame_ring_snap_wanted(const frame_ring_t *r, int slot, uint64_t tick)
{
	if (slot < 0 || slot >= r->max_slots)
		return 0;
	return __atomic_load_n(&r->snap_watch[slot], __ATOMIC_RELAXED) >= tick;
}

int frame_set_find(const frame_set_t *fs, uint64_t id)
{
	int lo = 0, hi = fs->nlive - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		uint64_t m = fs->entries[fs->by_id[mid]].id;
		if (m == id)
			return fs->by_id[mid];
		if (m < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

int frame_set_find_room_hint(const frame_set_t *fs, const char *room, int *hint)
{
	int h = *hint;
	if (h >= 0 && h < fs->nrooms && strcmp(fs->rooms[h].room, room) == 0)
		return h;
	int r = frame_set_find_room(fs, room);
	if (r >= 0)
		*hint = r;
	return r;
}

int frame_set_find_room(const frame_set_t *fs, const char *room)
{
	int lo = 0, hi = fs->nrooms - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		int c = strcmp(fs->rooms[mid].room, room);
		if (c == 0)
			return mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}
