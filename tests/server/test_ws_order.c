/* The fan-out's order (server/ws_order.c): when a frame set arrives, the connections whose
 * batches answer the oldest head poses are made writable first, in waves of 2, 8, then 32,
 * one service cycle apart, the connections without a new pose after all of them; equal
 * ages keep accept order; no wave is larger than 32; a connection closed while held is never touched again; a new
 * frame set releases what the last one still held and orders afresh; with no pose in the
 * set nothing is held. libwebsockets is replaced by a recorder of the connections made
 * writable, the frame set by a table of (id, pose arrival) and rooms. Nothing is timed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "../../server/ws_order.c"

/* ---- stand-ins for libwebsockets, ws_batch.c and frame_ring.c ---------------------- */

enum { MAXC = 300 };
static struct lws *made[MAXC * 4]; /* lws_callback_on_writable calls, in order */
static int nmade;
static int has_batch[MAXC]; /* by conn index: a batch to write this tick */

int lws_callback_on_writable(struct lws *wsi)
{
	made[nmade++] = wsi;
	return 1;
}

static conn_t conns[MAXC];
static int index_of(const conn_t *c) { return (int)(c - conns); }
/* a connection's wsi is only compared: the address of its index in has_batch */
static struct lws *wsi_of(int i) { return (struct lws *)(void *)&has_batch[i]; }

int conn_has_work(const ws_t *ws, const conn_t *c)
{
	(void)ws;
	return !c->held && has_batch[index_of(c)];
}

static frame_entry_t entries[MAXC];
static frame_room_t rooms[4];
static frame_set_t fs;

int frame_set_find(const frame_set_t *s, uint64_t id)
{
	for (int i = 0; i < s->nslots; i++)
		if (s->entries[i].id == id)
			return i;
	return -1;
}

int frame_set_find_room(const frame_set_t *s, const char *room)
{
	for (int i = 0; i < s->nrooms; i++)
		if (strcmp(s->rooms[i].room, room) == 0)
			return i;
	return -1;
}

/* frame_ring.c's (its own test: test_sim_rates.c, room_hint_lookup) */
int frame_set_find_room_hint(const frame_set_t *s, const char *room, int *hint)
{
	int r = frame_set_find_room(s, room);
	if (r >= 0)
		*hint = r;
	return r;
}

/* ---- fixture --------------------------------------------------------------------- */

static ws_t ws;
static uint64_t ids[MAXC];
static char room_names[MAXC][PTP_MAX_NAME + 1];
static int room_hints[MAXC];

/* n connections in accept order 0..n-1 (ws->conns lists them so), conn i watching
 * instance i + 1 whose pose arrived at arrival[i] (0 = none this tick). */
static void setup_conns(int n, const int64_t *arrival)
{
	ws_order_free(&ws);
	memset(&ws, 0, sizeof ws);
	memset(conns, 0, sizeof conns);
	memset(entries, 0, sizeof entries);
	memset(&fs, 0, sizeof fs);
	fs.entries = entries;
	fs.nslots = n;
	fs.rooms = rooms;
	fs.tick = 1;
	for (int i = 0; i < n; i++) {
		entries[i].id = (uint64_t)i + 1;
		entries[i].pose_arrival_ns = arrival ? arrival[i] : 0;
		ids[i] = (uint64_t)i + 1;
		conns[i].wsi = wsi_of(i);
		conns[i].ids = &ids[i];
		conns[i].nids = 1;
		conns[i].hello = 1;
		conns[i].next = i + 1 < n ? &conns[i + 1] : NULL;
		has_batch[i] = 1;
	}
	ws.conns = n ? &conns[0] : NULL;
	ws.nconns = n;
	ws.fs = &fs;
	nmade = 0;
}

static int made_index(int k) { return (int)((int *)(void *)made[k] - has_batch); }

/* One frame set: the order, then service cycles until nothing is held; wave[w] gets the
 * number of connections made writable in cycle w. Returns the number of cycles. */
static int fan_out(int *wave, int maxw)
{
	nmade = 0;
	ws_order_tick(&ws);
	int w = 0, before = 0;
	wave[w++] = nmade;
	while (ws.order_pos < ws.norder && w < maxw) {
		before = nmade;
		ws_order_next(&ws);
		wave[w++] = nmade - before;
	}
	return w;
}

static void oldest_first_in_waves(void **state)
{
	(void)state;
	enum { N = 200 };
	int64_t arrival[N];
	for (int i = 0; i < N; i++) /* conn 199's pose is the oldest, conn 0's the newest */
		arrival[i] = 1000000 + (int64_t)(N - i) * 83000;
	setup_conns(N, arrival);
	int wave[16];
	int w = fan_out(wave, 16);
	/* cycle 0: the first wave; cycle 1: nothing (the first wave is written in it);
	 * then 8, 32 and 32 a cycle (the largest wave), the last 30 */
	int want[] = {2, 0, 8, 32, 32, 32, 32, 32, 30};
	assert_int_equal(w, 9);
	for (int i = 0; i < w; i++)
		assert_int_equal(wave[i], want[i]);
	assert_int_equal(nmade, N);
	for (int k = 0; k < N; k++)
		assert_int_equal(made_index(k), N - 1 - k); /* oldest pose first */
	for (int i = 0; i < N; i++)
		assert_int_equal(conns[i].held, 0);
}

static void held_until_their_wave(void **state)
{
	(void)state;
	int64_t arrival[12];
	for (int i = 0; i < 12; i++)
		arrival[i] = 5000 - i;
	setup_conns(12, arrival);
	ws_order_tick(&ws);
	/* the two oldest (11, 10) are writable; the other ten have no work to show */
	assert_int_equal(nmade, 2);
	assert_int_equal(made_index(0), 11);
	assert_int_equal(made_index(1), 10);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(conns[i].held, 1);
		assert_int_equal(conn_has_work(&ws, &conns[i]), 0);
	}
	assert_int_equal(conns[11].held, 0);
}

static void no_pose_no_waves(void **state)
{
	(void)state;
	setup_conns(50, NULL);
	ws_order_tick(&ws);
	assert_int_equal(nmade, 0); /* on_wake makes them all writable, as before */
	assert_int_equal(ws.norder, 0);
	for (int i = 0; i < 50; i++)
		assert_int_equal(conns[i].held, 0);
}

static void without_pose_after_all_with(void **state)
{
	(void)state;
	/* even conns have a pose (older with i), odd ones only watch */
	int64_t arrival[20];
	for (int i = 0; i < 20; i++)
		arrival[i] = i % 2 ? 0 : 9000 - i;
	setup_conns(20, arrival);
	int wave[16];
	int w = fan_out(wave, 16);
	int want[] = {2, 0, 8, 10}; /* 10 with poses (2 + 8), then the 10 without, at once */
	assert_int_equal(w, 4);
	for (int i = 0; i < w; i++)
		assert_int_equal(wave[i], want[i]);
	for (int k = 0; k < 10; k++)
		assert_int_equal(made_index(k), 18 - 2 * k);
	for (int k = 10; k < 20; k++)
		assert_int_equal(made_index(k), 2 * (k - 10) + 1); /* accept order */
}

static void equal_ages_keep_accept_order(void **state)
{
	(void)state;
	int64_t arrival[40];
	for (int i = 0; i < 40; i++)
		arrival[i] = 777;
	setup_conns(40, arrival);
	int wave[16];
	fan_out(wave, 16);
	assert_int_equal(nmade, 40);
	for (int k = 0; k < 40; k++)
		assert_int_equal(made_index(k), k);
}

static void closed_while_held(void **state)
{
	(void)state;
	int64_t arrival[12];
	for (int i = 0; i < 12; i++)
		arrival[i] = 100 + i; /* conn 0 oldest */
	setup_conns(12, arrival);
	ws_order_tick(&ws);
	ws_order_forget(&ws, &conns[5]); /* closes in its wave's cycle-to-be */
	has_batch[5] = 0;
	int before = nmade;
	while (ws.order_pos < ws.norder)
		ws_order_next(&ws);
	assert_int_equal(nmade - before, 9); /* 2..11 but not 5 */
	for (int k = 0; k < nmade; k++)
		assert_int_not_equal(made_index(k), 5);
}

static void next_tick_releases_and_reorders(void **state)
{
	(void)state;
	int64_t arrival[30];
	for (int i = 0; i < 30; i++)
		arrival[i] = 100 + i; /* conn 0 oldest */
	setup_conns(30, arrival);
	ws_order_tick(&ws); /* 0, 1 writable; 2..29 held */
	assert_int_equal(conns[29].held, 1);
	/* the next frame set arrives before the waves are out: now conn 29 is oldest */
	fs.tick = 2;
	for (int i = 0; i < 30; i++)
		entries[i].pose_arrival_ns = 1000 - i;
	nmade = 0;
	ws_order_tick(&ws);
	assert_int_equal(nmade, 2);
	assert_int_equal(made_index(0), 29);
	assert_int_equal(made_index(1), 28);
	/* the same set again (another wake in the same tick) changes nothing */
	ws_order_tick(&ws);
	assert_int_equal(nmade, 2);
	assert_int_equal(conns[0].held, 1);
}

static void rooms_carry_their_oldest(void **state)
{
	(void)state;
	/* conns 0..3 watch a room each instead of an id; room r's oldest pose is 50 - r */
	int64_t arrival[4] = {0, 0, 0, 0};
	setup_conns(4, arrival);
	for (int r = 0; r < 4; r++) {
		snprintf(room_names[r], sizeof room_names[r], "room%d", r);
		rooms[r] = (frame_room_t){.room = room_names[r], .first = 0, .count = 0,
		                          .pose_arrival_ns = 50 - r};
		conns[r].nids = 0;
		conns[r].rooms = &room_names[r];
		room_hints[r] = -1;
		conns[r].room_hint = &room_hints[r];
		conns[r].nrooms = 1;
	}
	fs.nrooms = 4;
	int wave[8];
	fan_out(wave, 8);
	assert_int_equal(nmade, 4);
	for (int k = 0; k < 4; k++)
		assert_int_equal(made_index(k), 3 - k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(oldest_first_in_waves),
	    cmocka_unit_test(held_until_their_wave),
	    cmocka_unit_test(no_pose_no_waves),
	    cmocka_unit_test(without_pose_after_all_with),
	    cmocka_unit_test(equal_ages_keep_accept_order),
	    cmocka_unit_test(closed_while_held),
	    cmocka_unit_test(next_tick_releases_and_reorders),
	    cmocka_unit_test(rooms_carry_their_oldest),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);
	ws_order_free(&ws);
	return r;
}
