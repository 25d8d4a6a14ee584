/* A WebSocket connection's frame batches: which slots and rate streams it is due, pacing
 * and backpressure (conn_pace), and the batch built from the shared per-instance records
 * and written when the socket is writable (ws_internal.h). Service thread only. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "metrics.h"
#include "sim.h"
#include "ws_internal.h"

/* ---- frame batches -------------------------------------------------------------- */

/* Next slot of this tick's iteration: the id subscriptions, then each room's instances
 * (but those the connection also has by id, sent in the ids' phase). Returns 1 with
 * *slot (-1 = an id not in this frame set) and *rate (slot_rate's), or 0 at the end. */
static int next_slot(const ws_t *ws, conn_t *c, int *slot, int *rate)
{
	const frame_set_t *fs = ws->fs;
	for (;;) {
		if (c->cursor_phase == 0) {
			if (c->cursor_pos < c->nids) {
				int at = c->cursor_pos++;
				*slot = frame_set_find(fs, c->ids[at]);
				if (*slot >= 0)
					*rate = conn_slot_rate(ws, c, *slot, at);
				return 1;
			}
			c->cursor_phase = 1, c->cursor_pos = 0;
		}
		int r = c->cursor_phase - 1;
		if (r >= c->nrooms)
			return 0;
		if (c->cursor_pos == 0) /* the room's place in this set, once per room */
			c->cursor_ri = frame_set_find_room_hint(fs, c->rooms[r], &c->room_hint[r]);
		int ri = c->cursor_ri;
		while (ri >= 0 && c->cursor_pos < fs->rooms[ri].count) {
			*slot = fs->room_slots[fs->rooms[ri].first + c->cursor_pos++];
			if (c->nids && conn_find_id(c, fs->entries[*slot].id) >= 0)
				continue;
			*rate = c->room_rate[r]; /* rooms do not overlap: no other room covers it */
			return 1;
		}
		c->cursor_phase++, c->cursor_pos = 0;
	}
}

int conn_has_work(const ws_t *ws, const conn_t *c)
{
	if (c->q_head || c->closing)
		return 1;
	if (c->held || !ws->fs || !c->hello || (c->nids == 0 && c->nrooms == 0))
		return 0;
	return c->cur_tick != ws->fs->tick || !c->cursor_end;
}

void conn_pace(ws_t *ws, conn_t *c)
{
	/* 1.0/1.1 connections have one rate (every tick): a slow one skips ticks instead.
	 * 1.2 ones, of either coding, move between rates (PROTOCOL.md 5, 11.3). */
	if (!ws->fs || !c->hello || c->minor < 2 || (c->nids == 0 && c->nrooms == 0) ||
	    c->paced_tick == ws->fs->tick)
		return;
	uint64_t prev = c->paced_tick;
	c->paced_tick = ws->fs->tick;
	if (!prev)
		return;
	/* Behind: lws holds bytes the kernel did not take, or not even the batch of the tick
	 * before the one seen last is out (lws stopped calling WRITEABLE: the socket is full).
	 * One tick of slack: on a busy machine this thread may see a new tick before the
	 * WRITEABLE callbacks of the previous one, which is not a backed-up socket. */
	int behind = lws_partial_buffered(c->wsi) || c->done_tick + 1 < prev;
	int hz = ws->app->cfg->tick_hz;
	if (behind) {
		c->clean = 0;
		if (++c->misses < WS_MISSES_DOWN)
			return;
		c->misses = 0;
		if (c->down < FRAME_RATES - 1) {
			if (c->down++ == 0)
				metrics_add(&metrics.ws_conns_slowed, 1);
			metrics_add(&metrics.ws_rate_down, 1);
			LOG(LOG_DEBUG, "ws %s (%s): behind; down to %d Hz at most", c->ip, c->name,
			    frame_rate_hz[c->down]);
		}
	} else {
		/* misses count in a row: a tick that kept up forgives them (one late tick on a
		 * busy machine is not a backed-up socket) */
		c->misses = 0;
		if (++c->clean < (hz > 4 ? hz : 4))
			return;
		c->clean = 0;
		if (c->down > 0) {
			if (--c->down == 0)
				metrics_add(&metrics.ws_conns_slowed, (uint64_t)-1);
			metrics_add(&metrics.ws_rate_up, 1);
			LOG(LOG_DEBUG, "ws %s (%s): drained; up to %d Hz at most", c->ip, c->name,
			    frame_rate_hz[c->down]);
		}
	}
}

/* Times the fan-out: from the tick's deadline to the newest batch of that tick written.
 * A tick's figure is final when the first batch of a later tick goes out. */
static void fanout(ws_t *ws, const frame_set_t *fs)
{
	if (fs->tick != ws->fanout_tick) {
		if (ws->fanout_tick) {
			metrics_set(&metrics.ws_fanout_us_last, (uint64_t)ws->fanout_us);
			metrics_add(&metrics.ws_fanout_us_sum, (uint64_t)ws->fanout_us);
			metrics_add(&metrics.ws_fanout_ticks, 1);
		}
		ws->fanout_tick = fs->tick;
		ws->fanout_us = 0;
	}
	int64_t d = sim_wall_us() - fs->server_time_us;
	if (d > ws->fanout_us)
		ws->fanout_us = d;
}

/* A frame_batch_c (PROTOCOL.md 11.1) of ws->recs into ws->out + LWS_PRE; advances the
 * connection's batch clock. Returns its size, 0 on failure. */
static size_t encode_batch_c(ws_t *ws, conn_t *c, uint64_t tick, int64_t time_us,
                             uint16_t count, size_t rl)
{
	ptp_batch_c_t b = {0, 0, count, ws->recs, rl, (uint8_t)c->minor};
	size_t needed = 0;
	ptp_err_t e = ptp_batch_clock_delta(&c->clock, tick, time_us, &b.tick_gap, &b.time_dev);
	if (e == PTP_OK)
		e = ptp_batch_c_encode(&b, NULL, 0, &needed);
	if (e != PTP_OK && e != PTP_ENOSPACE) {
		LOG(LOG_ERROR, "cannot encode frame_batch_c: %s", ptp_err_name(e));
		return 0;
	}
	if (ws_out_reserve(ws, needed) != 0)
		return 0;
	if (ptp_batch_c_encode(&b, ws->out + LWS_PRE, ws->out_cap - LWS_PRE, &needed) != PTP_OK)
		return 0;
	c->clock.tick = tick;
	c->clock.time_us = time_us;
	return needed;
}

/* Copies one shared record into a connection's batch at out (room for len + the hash):
 * as encoded, or for a connection of 1.4 or later, a key record with the instance's
 * state hash appended (PROTOCOL.md 6, 11.2). The records are encoded once for every
 * minor, so the older minors' bytes stay exactly what they were. Returns the bytes
 * written, 0 when the record could not be sent (logged; cannot happen within the
 * server's point limit). */
static size_t copy_record(const conn_t *c, int coding, const uint8_t *rec, uint32_t len,
                          const frame_entry_t *e, uint8_t *out, size_t cap)
{
	if (c->minor >= PTP_MINOR_HASH) {
		size_t n = 0;
		ptp_err_t err =
		    coding == FRAME_COMPACT
		        ? ptp_record_c_add_hash(rec, len, e->state_hash, out, cap, &n)
		        : ptp_record_add_hash(rec, len, e->state_hash, out, cap, &n);
		if (err == PTP_OK)
			return n;
		if (err != PTP_EINVAL) { /* EINVAL: not a key record, sent as it is */
			LOG(LOG_ERROR, "instance %llu: no state hash in its keyframe (%s)",
			    (unsigned long long)e->id, ptp_err_name(err));
			return 0;
		}
	}
	memcpy(out, rec, len);
	return len;
}

/* Builds and writes the next frame_batch message of the newest tick, if any. */
static int write_batch(ws_t *ws, conn_t *c)
{
	const frame_set_t *fs = ws->fs;
	if (!fs || c->held || !c->hello || (c->nids == 0 && c->nrooms == 0))
		return 0;
	uint64_t T = fs->tick;
	if (c->compact && T < c->clock.tick)
		return 0; /* older than welcome's tick: a batch's tick_gap cannot go back */
	if (c->cur_tick != T) {
		if (c->done_tick && T > c->done_tick + 1)
			metrics_add(&metrics.ws_frames_skipped, T - c->done_tick - 1);
		c->cur_tick = T;
		c->cursor_phase = c->cursor_pos = c->cursor_end = 0;
	}
	if (c->cursor_end || conn_sent_fit(ws, c) != 0)
		return 0;
	uint32_t t32 = (uint32_t)T;
	size_t rl = 0;
	int count = 0, keys = 0, slot, rate = 0;
	for (;;) {
		int phase = c->cursor_phase, pos = c->cursor_pos, ri = c->cursor_ri;
		if (!next_slot(ws, c, &slot, &rate)) {
			c->cursor_end = 1;
			c->done_tick = T;
			break;
		}
		if (slot < 0)
			continue;
		const frame_entry_t *e = &fs->entries[slot];
		if (!e->id || !conn_fits(c, e->meta))
			continue;
		/* Its rate's stream in the connection's coding (PROTOCOL.md 5, 11.3): due
		 * every d-th tick, deltas d ticks apart. */
		int cd = conn_coding(c), st = conn_rate_stream(ws, c, rate);
		uint32_t d = (uint32_t)frame_rate_divisor(ws->app->cfg->tick_hz, cd, st);
		const frame_rec_t *fr = &e->rec[cd][st];
		frame_ring_watch(ws->app->ring, slot, cd, st, T + WS_WATCH_TICKS);
		if (T % d != 0 || !fr->len || c->last_sent[slot] == t32)
			continue; /* not due, no frame this tick, or already in this tick's batch */
		int synced = c->last_sent[slot] == t32 - d && c->last_stream[slot] == st &&
		             e->born_tick + d <= T;
		const uint8_t *buf = fs->bufs[e->buf].data;
		const uint8_t *rec;
		uint32_t len;
		if (synced || fr->delta_is_key) {
			rec = buf + fr->off, len = fr->len;
			keys += fr->delta_is_key && !synced;
		} else if (fr->key_len) {
			rec = buf + fr->key_off, len = fr->key_len;
			keys++;
		} else {
			/* Missed the stream's previous record and no keyframe encoded yet: ask for
			 * one, skip. */
			frame_ring_request_key(ws->app->ring, e->id, cd, st);
			continue;
		}
		/* room for a 1.4 key record's state hash */
		size_t most = len + (c->minor >= PTP_MINOR_HASH ? PTP_STATE_HASH_SIZE : 0);
		if (count > 0 && (rl + most > WS_BATCH_BYTES || count == 65535)) {
			c->cursor_phase = phase,
			c->cursor_pos = pos, c->cursor_ri = ri; /* continues in the next message */
			break;
		}
		if (rl + most > ws->recs_cap) {
			size_t nc = ws->recs_cap ? ws->recs_cap * 2 : 64 * 1024;
			while (nc < rl + most)
				nc *= 2;
			uint8_t *n = realloc(ws->recs, nc);
			if (!n)
				return -1;
			ws->recs = n;
			ws->recs_cap = nc;
		}
		size_t put = copy_record(c, cd, rec, len, e, ws->recs + rl, ws->recs_cap - rl);
		if (!put)
			continue;
		rl += put;
		count++;
		c->last_sent[slot] = t32;
		c->last_stream[slot] = (uint8_t)st;
	}
	if (!c->cursor_end)
		lws_callback_on_writable(c->wsi);
	if (count == 0)
		return 0;
	size_t n;
	if (c->compact) {
		n = encode_batch_c(ws, c, T, fs->server_time_us, (uint16_t)count, rl);
	} else {
		ptp_msg_t m = {.type = PTP_FRAME_BATCH, .minor = (uint8_t)c->minor};
		m.u.frame_batch =
		    (ptp_frame_batch_t){T, fs->server_time_us, (uint16_t)count, ws->recs, rl, 0};
		n = conn_encode_msg(ws, &m);
	}
	if (!n)
		return -1;
	if (lws_write(c->wsi, ws->out + LWS_PRE, n, LWS_WRITE_BINARY) < (int)n)
		return -1;
	if (c->cursor_end)
		fanout(ws, fs);
	metrics_add(&metrics.ws_batches_sent, 1);
	metrics_add(&metrics.ws_records_sent, (uint64_t)count);
	metrics_add(&metrics.ws_keyframes_sent, (uint64_t)keys);
	metrics_add(&metrics.ws_bytes_sent, n);
	return 0;
}

int conn_write(ws_t *ws, conn_t *c)
{
	msg_t *m = c->q_head;
	if (m) {
		c->q_head = m->next;
		if (!c->q_head)
			c->q_tail = NULL;
		c->q_bytes -= m->len;
		int w = lws_write(c->wsi, m->buf + LWS_PRE, m->len, LWS_WRITE_BINARY);
		metrics_add(&metrics.ws_bytes_sent, m->len);
		size_t len = m->len;
		free(m);
		if (w < (int)len)
			return -1;
		if (conn_has_work(ws, c))
			lws_callback_on_writable(c->wsi);
		return 0;
	}
	if (c->closing) {
		static const char *const why[] = {"service restart", "protocol error", "too large",
		                                  "error"};
		const char *r = c->closing == 1012                                 ? why[0]
		                : c->closing == LWS_CLOSE_STATUS_PROTOCOL_ERR      ? why[1]
		                : c->closing == LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE ? why[2]
		                                                                   : why[3];
		lws_close_reason(c->wsi, (enum lws_close_status)c->closing,
		                 (unsigned char *)(uintptr_t)r, strlen(r));
		return -1;
	}
	return write_batch(ws, c);
}
