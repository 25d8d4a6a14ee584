/* The sim's output side: each instance's frame record encoded once per tick (in parallel
 * over the worker pool, each worker on a disjoint slot range writing its own buffer), then
 * the frame set is published with the tick's events. See frame_ring.h for the layout. */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "metrics.h"
#include "ptp/compact.h"
#include "sim_internal.h"

typedef struct order_key_t {
	const char *room;
	uint64_t id;
	int slot;
} order_key_t;

static int order_cmp(const void *a, const void *b)
{
	const order_key_t *x = a, *y = b;
	int c = strcmp(x->room, y->room);
	if (c)
		return c;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Rebuilds room_order and the room directory after creates, deletes and room changes. */
int sim_rebuild_order(sim_t *s)
{
	order_key_t *k = malloc(((size_t)s->nindex + 1) * sizeof *k);
	if (!k)
		return -1;
	for (int i = 0; i < s->nindex; i++) {
		int slot = s->index[i].slot;
		k[i] = (order_key_t){s->inst[slot].meta->room, s->index[i].id, slot};
	}
	qsort(k, (size_t)s->nindex, sizeof *k, order_cmp);
	int nrooms = 0;
	for (int i = 0; i < s->nindex; i++)
		if (i == 0 || strcmp(k[i].room, k[i - 1].room) != 0)
			nrooms++;
	if (nrooms > s->cap_rooms) {
		frame_room_t *nr = realloc(s->rooms, (size_t)nrooms * sizeof *nr);
		if (!nr) {
			free(k);
			return -1;
		}
		s->rooms = nr;
		s->cap_rooms = nrooms;
	}
	s->nrooms = 0;
	for (int i = 0; i < s->nindex; i++) {
		s->room_order[i] = k[i].slot;
		if (i == 0 || strcmp(k[i].room, k[i - 1].room) != 0)
			s->rooms[s->nrooms++] = (frame_room_t){.room = NULL, .first = i, .count = 0};
		s->rooms[s->nrooms - 1].count++;
	}
	free(k);
	s->order_dirty = 0;
	return 0;
}

/* Appends one record of enc (of `coding`) to b; *off and *len locate it. Returns 0 or -1. */
static int append_record(frame_buf_t *b, const ptp_encoder_t *enc, int coding, int key, uint64_t id,
                         uint32_t seq, uint32_t *off, uint32_t *len)
{
	for (;;) {
		size_t needed = 0;
		uint8_t *at = b->data ? b->data + b->len : NULL;
		ptp_err_t e =
		    coding == FRAME_COMPACT
		        ? ptp_encoder_record_c(enc, key, id, at, b->cap - b->len, &needed)
		        : ptp_encoder_record(enc, key, id, seq, at, b->cap - b->len, &needed);
		if (e == PTP_OK) {
			*off = (uint32_t)b->len;
			*len = (uint32_t)needed;
			b->len += needed;
			return 0;
		}
		if (e != PTP_ENOSPACE)
			return -1;
		size_t nc = b->cap ? b->cap * 2 : 64 * 1024;
		while (nc < b->len + needed)
			nc *= 2;
		uint8_t *nd = realloc(b->data, nc);
		if (!nd)
			return -1;
		b->data = nd;
		b->cap = nc;
	}
}

/* A REST reader's copy of the instance after this tick (frame_ring.h). */
static frame_snap_t *make_snap(const sim_t *s, const sim_inst_t *in, const pt_vec3 *pts, int n,
                               const pt_pose *head, uint64_t state_hash)
{
	frame_snap_t *snap = frame_snap_new(n);
	if (!snap)
		return NULL; /* the read falls back to waiting for a tick */
	snap->id = in->id;
	snap->tick = s->tick;
	snap->last_seq = in->last_seq;
	snap->state_hash = state_hash;
	snap->head = *head;
	snap->strand_count = in->meta->shape.strand_count;
	for (int i = 0; i < snap->strand_count; i++)
		snap->points[i] = in->meta->shape.strands[i].points;
	snap->n = n;
	memcpy(snap->xyz, pts, (size_t)n * sizeof *pts);
	return snap;
}

/* A slower stream's records say how far back their deltas refer (only 1.2 connections
 * get them): classic records in flags bits 1..5 = step - 1 (PROTOCOL.md 6), compact ones
 * in bits 2..5 (11.2); set on the encoder's bytes. */
static void set_step(int coding, uint8_t *rec, uint32_t len, int step)
{
	if (step <= 1)
		return;
	if (coding == FRAME_COMPACT)
		ptp_record_c_set_step(rec, len, (unsigned)step); /* divisors fit (frame_ring.c) */
	else
		rec[8] |= (uint8_t)((step - 1) << 1);
}

/* Stream r of `coding` of the instance before this tick's encoding: its encoder, made on
 * first use (it starts with a keyframe) and told to start again from a keyframe after a
 * gap; NULL when it could not be made. */
static ptp_encoder_t *stream_begin(sim_t *s, sim_inst_t *in, int coding, int r)
{
	unsigned bit = SIM_STREAM_BIT(coding, r);
	ptp_encoder_t **enc = &in->enc[coding][r];
	if (!*enc) {
		*enc = sim_make_encoder(s, in->meta, coding, r); /* starts with a keyframe */
		in->enc_gap &= ~bit;
	}
	if (in->enc_gap & bit) {
		/* The encoder missed due ticks, so its deltas would refer to frames nobody has. */
		ptp_encoder_force_key(*enc);
		in->enc_gap &= ~bit;
	}
	return *enc;
}

/* Stream r of `coding` after its encoder's tick (err: the tick's verdict): its record
 * (and, when asked for, a keyframe record) appended to b. Returns 0, or -1 when it could
 * not be encoded (logged once). */
static int stream_end(sim_t *s, sim_scratch_t *sc, frame_buf_t *b, sim_inst_t *in,
                      frame_rec_t *fr, int coding, int r, ptp_err_t err)
{
	unsigned bit = SIM_STREAM_BIT(coding, r);
	ptp_encoder_t *enc = in->enc[coding][r];
	if (err != PTP_OK ||
	    append_record(b, enc, coding, 0, in->id, in->last_seq, &fr->off, &fr->len)) {
		fr->len = 0; /* no frame this tick; subscribers see the instance skip it */
		/* the decoders' history no longer matches the encoder's: a key next */
		in->enc_gap |= bit;
		if (!in->encode_failed)
			LOG(LOG_ERROR, "instance %llu: %s frame not encoded (%s)",
			    (unsigned long long)in->id,
			    coding == FRAME_COMPACT ? "compact" : "classic",
			    ptp_err_name(err != PTP_OK ? err : PTP_ENOMEM));
		in->encode_failed = 1;
		return -1;
	}
	int step = s->div[coding][r];
	/* the record's key flag, from the encoder rather than parsed back from the bytes */
	fr->delta_is_key = (uint8_t)ptp_encoder_record_is_key(enc, 0);
	set_step(coding, b->data + fr->off, fr->len, step);
	sc->bytes += fr->len;
	if ((in->key_wanted & bit) && !fr->delta_is_key &&
	    append_record(b, enc, coding, 1, in->id, in->last_seq, &fr->key_off, &fr->key_len) ==
	        0) {
		set_step(coding, b->data + fr->key_off, fr->key_len, step);
		sc->bytes += fr->key_len;
		sc->keys++;
	}
	in->key_wanted &= ~bit;
	return 0;
}

/* Whether any stream of the slot may be wanted this tick: a keyframe asked for on a due
 * stream, or anyone watching the slot at all (the slot's newest watch mark). No: nothing
 * of it is encoded (gather_one) or loaded ahead (prefetch_slot). */
static int maybe_wanted(const sim_t *s, const sim_inst_t *in, int slot)
{
	return (in->key_wanted & s->due) || frame_ring_watched_any(s->ring, slot, s->tick);
}

/* An instance whose points are read, waiting for its streams to be encoded: encode_part
 * gathers up to PTP_TICK_MANY_MAX of them (points in the scratch's xyz[i]) and encodes
 * them together, each stream's encoders ticked in one ptp_encoder_tick_many. */
typedef struct pending_t {
	int slot;
	unsigned want; /* its streams to encode this tick */
	int n;         /* its points */
	float hp[3], hq[4];
} pending_t;

/* The slot's share before encoding: which of its streams are due and wanted (the gap
 * rule for the rest), its REST snapshot, and its points into xyz. Returns 1 when it has
 * streams to encode (*p filled), else 0. */
static int gather_one(sim_t *s, sim_scratch_t *sc, int slot, float *xyz, pending_t *p)
{
	sim_inst_t *in = &s->inst[slot];
	frame_entry_t *e = &s->fs->entries[slot];
	/* Which streams (codings x rates) are due this tick and wanted (frame_ring.h): one
	 * look at the slot's newest watch mark when nobody watches it at all. */
	unsigned due = s->due, want = 0;
	if (maybe_wanted(s, in, slot))
		for (unsigned m = due; m; m &= m - 1) {
			int bit = __builtin_ctz(m), c = bit / FRAME_RATES, r = bit % FRAME_RATES;
			if ((in->key_wanted & (1u << bit)) ||
			    frame_ring_watched(s->ring, slot, c, r, s->tick))
				want |= 1u << bit;
		}
	/* The gap rule: a due stream not encoded now restarts from a keyframe (a stream with
	 * no encoder yet starts with one anyway). */
	in->enc_gap |= due & ~want;
	int want_snap = frame_ring_snap_wanted(s->ring, slot, s->tick);
	if (!want && !want_snap)
		return 0;
	int n = pt_world_read_points(s->world, in->pid, sc->pts, SERVER_MAX_POINTS);
	pt_pose head;
	pt_world_get_head(s->world, in->pid, &head);
	if (n > 0 && !sim_points_finite(sc->pts, n)) {
		in->nonfinite = 1; /* reset after publishing (sim_guard.c); this tick: no record */
		in->enc_gap |= want;
		return 0;
	}
	if (want_snap && n > 0)
		e->snap = make_snap(s, in, sc->pts, n, &head, e->state_hash);
	if (!want)
		return 0;
	if (n > 0)
		memcpy(xyz, sc->pts, (size_t)n * sizeof(pt_vec3));
	*p = (pending_t){slot, want, n, {head.p.x, head.p.y, head.p.z},
	                 {head.q.x, head.q.y, head.q.z, head.q.w}};
	return 1;
}

/* Encodes the np pending instances' streams, stream by stream: the encoders of one
 * stream ticked together (their strands side by side in the closed loop), then each
 * one's records appended. */
static void encode_pending(sim_t *s, sim_scratch_t *sc, frame_buf_t *b, const pending_t *p,
                           int np)
{
	unsigned all = 0;
	int failed[PTP_TICK_MANY_MAX] = {0};
	for (int i = 0; i < np; i++)
		all |= p[i].want;
	for (unsigned m = all; m; m &= m - 1) {
		int bit = __builtin_ctz(m), c = bit / FRAME_RATES, r = bit % FRAME_RATES, k = 0;
		ptp_tick_in_t tin[PTP_TICK_MANY_MAX];
		ptp_err_t err[PTP_TICK_MANY_MAX];
		int who[PTP_TICK_MANY_MAX];
		for (int i = 0; i < np; i++) {
			sim_inst_t *in = &s->inst[p[i].slot];
			if (!(p[i].want & (1u << bit)))
				continue;
			ptp_encoder_t *enc = stream_begin(s, in, c, r);
			if (!enc || p[i].n <= 0) {
				failed[i] |= stream_end(s, sc, b, in, &s->fs->entries[p[i].slot].rec[c][r],
				                        c, r, PTP_EINVAL);
				continue;
			}
			tin[k] = (ptp_tick_in_t){enc,  c == FRAME_COMPACT, in->last_seq, p[i].hp,
			                         p[i].hq, sc->xyz[i], (size_t)p[i].n};
			who[k++] = i;
		}
		ptp_encoder_tick_many(tin, k, err);
		for (int j = 0; j < k; j++) {
			int i = who[j];
			failed[i] |= stream_end(s, sc, b, &s->inst[p[i].slot],
			                        &s->fs->entries[p[i].slot].rec[c][r], c, r, err[j]);
		}
	}
	for (int i = 0; i < np; i++)
		if (!failed[i])
			s->inst[p[i].slot].encode_failed = 0;
}

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define SIM_PREFETCH(p) __asm__ __volatile__("prefetcht0 %0" : : "m"(*(const char *)(p)))
#else
#define SIM_PREFETCH(p) __builtin_prefetch(p)
#endif

/* Ahead of the slots a worker encodes, in three stages one slot apart, each reading what
 * the stage before loaded: (0) the slot's sim record and frame entry, (1) its encoders'
 * and core's records, (2) the encoders' buffers and the points. Thousands of instances
 * do not stay in cache between ticks, and without this every one began with a chain of
 * misses (perf, 2,750 instances all watched: 40 % of ptp_encoder_tick's own samples on
 * its first load). Slots nobody watches this tick are not loaded beyond stage 0, and
 * only the encoders of the streams due this tick are. */
static void prefetch_range(const void *p, size_t bytes)
{
	const char *b = p;
	for (size_t o = 0; o < bytes; o += 64)
		SIM_PREFETCH(b + o);
	SIM_PREFETCH(b + bytes - 1);
}

static void prefetch_slot(const sim_t *s, int slot, int stage)
{
	if (slot >= s->nslots)
		return;
	const sim_inst_t *in = &s->inst[slot];
	if (stage == 0) {
		prefetch_range(in, sizeof *in);
		prefetch_range(&s->fs->entries[slot], sizeof s->fs->entries[slot]);
		return;
	}
	if (!in->id || !maybe_wanted(s, in, slot))
		return;
	for (unsigned m = s->due; m; m &= m - 1) {
		int bit = __builtin_ctz(m);
		ptp_encoder_prefetch(in->enc[bit / FRAME_RATES][bit % FRAME_RATES], stage - 1);
	}
	pt_world_prefetch(s->world, in->pid, stage - 1);
}

/* Worker w of n: its blocks of slots (sim_internal.h says why blocks), the watched ones
 * encoded PTP_TICK_MANY_MAX at a time. */
static void encode_part(void *ctx, int w, int n)
{
	sim_t *s = ctx;
	sim_scratch_t *sc = &s->scratch[w];
	pending_t pend[PTP_TICK_MANY_MAX];
	int np = 0;
	(void)n;
	SIM_FOR_SLOTS(s, slot)
	{
		prefetch_slot(s, slot + 3, 0);
		prefetch_slot(s, slot + 2, 1);
		prefetch_slot(s, slot + 1, 2);
		/* the entry as the set held it three ticks ago: released, then this tick's; its
		 * reference to the same meta is kept instead of dropped and taken again (two
		 * atomic operations on a line of its own, per instance and tick) */
		frame_entry_t *e = &s->fs->entries[slot];
		sim_inst_t *in = &s->inst[slot];
		inst_meta_t *kept = in->id && e->meta == in->meta ? e->meta : NULL;
		if (kept)
			e->meta = NULL;
		frame_set_reset_entry(s->fs, slot);
		e->buf = (uint8_t)w;
		if (!in->id)
			continue;
		e->id = in->id;
		e->meta = kept ? kept : meta_ref(in->meta);
		e->born_tick = in->born_tick;
		e->last_seq = in->last_seq;
		e->pose_arrival_ns = in->applied_arrival_ns;
		/* every instance's, watched or not: REST frames and 1.4 keyframes carry it, and
		 * a recording holds it for its replay to check (server/README.md: its cost) */
		e->state_hash = in->state_hash = pt_world_state_hash(s->world, in->pid);
		if (gather_one(s, sc, slot, sc->xyz[np], &pend[np]) && ++np == PTP_TICK_MANY_MAX) {
			encode_pending(s, sc, &s->fs->bufs[w], pend, np);
			np = 0;
		}
	}
	if (np)
		encode_pending(s, sc, &s->fs->bufs[w], pend, np);
}

void sim_publish(sim_t *s, int64_t deadline_ns)
{
	if (s->order_dirty && sim_rebuild_order(s) != 0) {
		LOG(LOG_ERROR, "out of memory: tick %llu not published",
		    (unsigned long long)s->tick);
		return;
	}
	frame_set_t *fs = frame_ring_begin_deferred(s->ring, s->nslots, s->nrooms);
	if (!fs) {
		LOG(LOG_ERROR, "out of memory: tick %llu not published",
		    (unsigned long long)s->tick);
		return; /* events stay queued for the next tick */
	}
	s->fs = fs;
	fs->tick = s->tick;
	/* the streams due this tick (tick % divisor == 0), each rate's own stream only */
	s->due = 0;
	for (int c = 0; c < FRAME_CODINGS; c++)
		for (int r = 0; r < FRAME_RATES; r++)
			if ((s->own & SIM_STREAM_BIT(c, r)) &&
			    s->tick % (uint64_t)s->div[c][r] == 0)
				s->due |= SIM_STREAM_BIT(c, r);
	fs->server_time_us = deadline_ns / 1000 + s->wall_offset_us;
	int workers = s->nindex >= 64 ? pool_size(s->pool) : 1;
	s->next_work = 0;
	pool_run(s->pool, workers, encode_part, s);
	uint64_t bytes = 0, keys = 0;
	for (int w = 0; w < workers; w++) {
		bytes += s->scratch[w].bytes;
		keys += s->scratch[w].keys;
		s->scratch[w].bytes = s->scratch[w].keys = 0;
	}
	metrics_add(&metrics.frame_bytes_encoded, bytes);
	metrics_add(&metrics.keyframes_encoded, keys);

	fs->nlive = s->nindex;
	for (int i = 0; i < s->nindex; i++) {
		fs->by_id[i] = s->index[i].slot;
		fs->room_slots[i] = s->room_order[i];
	}
	fs->nrooms = s->nrooms;
	for (int r = 0; r < s->nrooms; r++) {
		fs->rooms[r] = s->rooms[r];
		fs->rooms[r].room = fs->entries[fs->room_slots[s->rooms[r].first]].meta->room;
		int64_t oldest = 0; /* the room's oldest pose applied this tick (ws_order.c) */
		for (int i = 0; i < s->rooms[r].count; i++) {
			int64_t a = fs->entries[fs->room_slots[s->rooms[r].first + i]].pose_arrival_ns;
			if (a && (!oldest || a < oldest))
				oldest = a;
		}
		fs->rooms[r].pose_arrival_ns = oldest;
	}
	frame_ring_publish(s->ring, fs, s->ev, s->nev);
	s->nev = 0;
	s->fs = NULL;
}
