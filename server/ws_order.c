/* The fan-out's order: the frames that answer the oldest inputs go out first.
 *
 * A tick's batches are written one socket after another on this thread (~10 us each on
 * loopback: the send runs the receiver's TCP path too), in libwebsockets' poll order,
 * which is the order the sockets were accepted. A head pose's latency is its wait for the
 * tick (up to a whole tick: 0-16.7 ms at 60 Hz, set by when it arrived) plus its batch's
 * place in that queue (0-2 ms for 200 connections): in accept order the two add up for
 * the connections whose poses happened to arrive just after a tick's cut, and the p99 of
 * the whole room was one tick + 2 ms. Sending the batches of the oldest applied poses
 * first makes the sum nearly flat: the longest wait goes out first, and a batch placed
 * later answers a pose that waited less.
 *
 * libwebsockets services writable sockets in its own order, so the order is made with
 * service cycles: when a new frame set arrives, every connection with a batch to write is
 * held (conn_has_work and write_batch see nothing to do), sorted by the arrival of the
 * oldest pose its batch reflects (frame_entry_t.pose_arrival_ns; rooms carry their
 * oldest), and released in waves, one per lws_service cycle: 2 connections, then 8, then
 * 32 a cycle (200 publishers take 8 cycles), and the connections without a new pose in
 * the cycle after the last of those. A cycle is one poll: ~15 us for 200 sockets. Waves
 * stay small because poses are read (and stamped with their arrival) only between
 * cycles: a 128-socket wave kept reads waiting ~1.3 ms. With no pose in the frame set nothing is held and the
 * fan-out is as before. A connection with control messages queued writes those at once;
 * one still held when the next frame set arrives is released then. Service thread only.
 */
#include <stdlib.h>

#include "ws_internal.h"

enum {
	ORDER_FIRST_WAVE = 2,
	ORDER_GROWTH = 4,
	ORDER_MAX_WAVE = 32,
	ORDER_SCAN = 16, /* subscriptions looked at per connection for its oldest pose */
};

/* The arrival of the oldest pose applied this tick among what the connection watches
 * (its first ORDER_SCAN ids and rooms), 0 = none. */
static int64_t oldest_pose(const ws_t *ws, conn_t *c)
{
	const frame_set_t *fs = ws->fs;
	int64_t oldest = 0;
	for (int i = 0; i < c->nids && i < ORDER_SCAN; i++) {
		int slot = frame_set_find(fs, c->ids[i]);
		int64_t a = slot >= 0 ? fs->entries[slot].pose_arrival_ns : 0;
		if (a && (!oldest || a < oldest))
			oldest = a;
	}
	for (int r = 0; r < c->nrooms && r < ORDER_SCAN; r++) {
		int ri = frame_set_find_room_hint(fs, c->rooms[r], &c->room_hint[r]);
		int64_t a = ri >= 0 ? fs->rooms[ri].pose_arrival_ns : 0;
		if (a && (!oldest || a < oldest))
			oldest = a;
	}
	return oldest;
}

static int by_key(const void *pa, const void *pb)
{
	const conn_t *a = *(conn_t *const *)pa, *b = *(conn_t *const *)pb;
	if (a->order_key != b->order_key)
		return a->order_key < b->order_key ? -1 : 1;
	return (a->order_rank > b->order_rank) - (a->order_rank < b->order_rank);
}

static void release(ws_t *ws, int n)
{
	for (int end = ws->order_pos + n; ws->order_pos < end; ws->order_pos++) {
		conn_t *c = ws->order[ws->order_pos];
		if (!c)
			continue; /* closed while held */
		c->held = 0;
		if (conn_has_work(ws, c))
			lws_callback_on_writable(c->wsi);
	}
}

void ws_order_tick(ws_t *ws)
{
	if (!ws->fs || ws->fs->tick == ws->order_tick)
		return;
	ws->order_tick = ws->fs->tick;
	/* the last tick's fan-out, if it is still held, goes out now in the new order */
	for (int i = ws->order_pos; i < ws->norder; i++)
		if (ws->order[i])
			ws->order[i]->held = 0;
	ws->norder = ws->order_pos = ws->nkeyed = 0;
	if (ws->nconns > ws->cap_order) {
		conn_t **n = realloc(ws->order, (size_t)ws->nconns * sizeof *n);
		if (!n)
			return; /* out of memory: accept order, as without this */
		ws->order = n;
		ws->cap_order = ws->nconns;
	}
	int rank = 0, nk = 0;
	for (conn_t *c = ws->conns; c; c = c->next) {
		c->order_rank = rank++;
		if (c->dead || !conn_has_work(ws, c) || !(c->order_key = oldest_pose(ws, c)))
			continue;
		ws->order[nk++] = c;
	}
	if (nk == 0)
		return;
	qsort(ws->order, (size_t)nk, sizeof *ws->order, by_key);
	int n = nk;
	for (conn_t *c = ws->conns; c && n < ws->cap_order; c = c->next)
		if (!c->dead && !c->order_key && conn_has_work(ws, c))
			ws->order[n++] = c;
	for (int i = 0; i < n; i++)
		ws->order[i]->held = 1;
	ws->norder = n;
	ws->nkeyed = nk;
	ws->wave = ORDER_FIRST_WAVE;
	ws->order_fresh = 0;
	ws_order_next(ws);
	ws->order_fresh = 1; /* the first wave is written in the coming cycle */
}

void ws_order_next(ws_t *ws)
{
	if (ws->order_pos >= ws->norder)
		return;
	if (ws->order_fresh) {
		ws->order_fresh = 0;
		return;
	}
	if (ws->order_pos >= ws->nkeyed) {
		release(ws, ws->norder - ws->order_pos);
		return;
	}
	int n = ws->nkeyed - ws->order_pos;
	release(ws, n < ws->wave ? n : ws->wave);
	ws->wave = ws->wave * ORDER_GROWTH < ORDER_MAX_WAVE ? ws->wave * ORDER_GROWTH : ORDER_MAX_WAVE;
}

void ws_order_forget(ws_t *ws, conn_t *c)
{
	for (int i = ws->order_pos; i < ws->norder; i++)
		if (ws->order[i] == c)
			ws->order[i] = NULL;
	c->held = 0;
}

void ws_order_free(ws_t *ws)
{
	free(ws->order);
	ws->order = NULL;
	ws->norder = ws->cap_order = ws->order_pos = ws->nkeyed = 0;
}
