/* Private to ws.c (libwebsockets glue, message dispatch), ws_conn.c (subscriptions,
 * control queue) and ws_batch.c (frame batches, pacing). Service thread only. */
#ifndef SERVER_WS_INTERNAL_H
#define SERVER_WS_INTERNAL_H

#include <libwebsockets.h>
#include <pthread.h>

#include "frame_ring.h"
#include "instances.h"
#include "ptp/compact.h"
#include "ptp/proto.h"
#include "ws.h"

enum {
	WS_MAX_AUTH = 64,           /* instances one connection may publish poses for */
	WS_BATCH_BYTES = 256 << 10, /* records per frame_batch message before splitting */
	WS_QUEUE_BYTES = 8 << 20,   /* control messages waiting per connection */
	WS_HELLO_TIMEOUT_S = 10,
	WS_WATCH_TICKS = 30, /* a wanted instance stays encoded this long without new demand */
	WS_MISSES_DOWN = 3,  /* ticks found behind in a row before a move down a rate */
};

/* One queued control message, encoded, with LWS_PRE bytes of headroom before data. */
typedef struct msg_t {
	struct msg_t *next;
	size_t len;
	uint8_t buf[]; /* LWS_PRE + len */
} msg_t;

typedef struct auth_t {
	uint64_t id;
	inst_rate_t rate; /* this connection's pose rate bucket for the instance */
} auth_t;

/* Per connection; allocated (zeroed) by lws as the protocol's per-session data. Fields
 * in the order of use: what every tick's passes over all connections read (on_wake's
 * pace, ws_order.c's keys, conn_has_work; a few cache lines) first, the receive buffer,
 * the authorizations and the names (~5 KB) last: spread over the record, the passes'
 * reads cost a cache miss each, per connection, per tick. */
typedef struct conn_t {
	struct lws *wsi;
	struct conn_t *prev, *next;
	int hello;   /* hello received */
	int minor;   /* negotiated */
	int compact; /* hello asked for compact frames (minor >= 2): frame_batch_c */
	int closing; /* close code after the queue drains (closing error sent last) */
	int dead;    /* queue no longer accepts messages */
	/* fan-out order (ws_order.c): held back until its wave; the arrival of the oldest
	 * pose its batch of this tick reflects (0 = none); its place in ws->conns */
	int held;
	int order_rank;
	int64_t order_key;
	/* control queue */
	msg_t *q_head, *q_tail;
	size_t q_bytes;
	/* subscriptions, each with the rate index it asked for (frame_ring.h: 0 = 60 Hz) */
	uint64_t *ids; /* sorted */
	uint8_t *id_rate; /* [cap_ids], with ids */
	int nids, cap_ids;
	int nrooms, cap_rooms;
	char (*rooms)[PTP_MAX_NAME + 1];
	uint8_t *room_rate; /* [cap_rooms], with rooms */
	int *room_hint;     /* [cap_rooms], with rooms: frame_set_find_room_hint's */
	/* backpressure: `down` rate steps below what was asked for (0..FRAME_RATES-1);
	 * misses: ticks found behind in a row; clean: ticks keeping up since the last move */
	int down, misses, clean;
	uint64_t paced_tick; /* newest tick conn_pace looked at */
	/* frames: last_sent[slot] = low 32 bits of the tick of the last record sent for that
	 * sim slot (frame_ring.h explains why a slot index is stable) */
	uint64_t cur_tick;            /* tick being sent (several messages when large) */
	uint64_t done_tick;           /* last tick whose batch went out completely */
	int cursor_phase, cursor_pos; /* where the batch of cur_tick continues */
	int cursor_ri;                /* the room of cursor_phase in that frame set, or -1 */
	int cursor_end;
	uint32_t *last_sent;
	uint8_t *last_stream; /* [cap_sent]: the rate stream of that record */
	int cap_sent;
	ptp_batch_clock_t clock; /* compact: the tick and time of the last frame_batch_c */
	/* authorizations */
	int nauth;
	int64_t last_rate_error_ns;
	auth_t auth[WS_MAX_AUTH];
	/* receive */
	size_t rx_len;
	int rx_oversize, rx_text;
	uint8_t rx[PTP_MAX_CLIENT_MESSAGE];
	char ip[64];
	char name[PTP_MAX_NAME + 1];
	uint64_t serial; /* this connection, unique in the daemon's run (the sim's grabs and
	                  * hands name the connection they came by: instances_conn_gone) */
	int handed;      /* it sent a hand bone or made a grab: its close ends them */
} conn_t;

struct ws_t {
	app_t *app;
	struct lws_context *ctx;
	pthread_t th;
	int started;
	int stop;     /* atomic: main asks the thread to finish */
	int draining; /* service thread: closing everyone */
	int64_t drain_deadline_ns;
	conn_t *conns;
	int nconns;
	uint64_t serials; /* conn_t.serial of the newest connection */
	frame_set_t *fs; /* newest frame set, held */
	uint8_t *out;    /* LWS_PRE + one message */
	size_t out_cap;
	uint8_t *recs; /* records of the batch being built */
	size_t recs_cap;
	struct {
		char ip[64];
		int n;
	} * per_ip; /* open connections per address */
	int nper_ip, cap_per_ip;
	uint64_t subs;        /* subscriptions over all connections (metrics gauge) */
	uint64_t fanout_tick; /* tick whose fan-out is being timed */
	int64_t fanout_us;    /* its deadline -> newest batch written, so far */
	/* fan-out order (ws_order.c): order[0, norder) held connections, the first nkeyed
	 * sorted by oldest pose; order[0, order_pos) released; wave = the next wave's size */
	conn_t **order;
	int norder, cap_order, nkeyed, order_pos, wave, order_fresh;
	uint64_t order_tick; /* frame set tick the order was made for */
};

/* ws_conn.c: the control queue and subscriptions (the helpers ws_batch.c shares) */
int ws_out_reserve(ws_t *ws, size_t needed); /* ws->out holds LWS_PRE + needed, or -1 */
size_t conn_encode_msg(ws_t *ws, const ptp_msg_t *m); /* into ws->out; 0 on failure */
int conn_find_id(const conn_t *c, uint64_t id);       /* index in c->ids, or -1 */

/* ws_grab.c: grab and release (1.5); the sim's answers, taken with each frame set */
void ws_on_grab(ws_t *ws, conn_t *c, const ptp_grab_t *m);
void ws_on_release(ws_t *ws, conn_t *c, const ptp_release_t *m);
void ws_grab_replies(ws_t *ws);
int conn_sent_fit(ws_t *ws, conn_t *c); /* last_sent covers the frame set's slots */
int conn_coding(const conn_t *c);       /* FRAME_COMPACT or classic */
int conn_rate_stream(const ws_t *ws, const conn_t *c, int rate);
int conn_slot_rate(const ws_t *ws, const conn_t *c, int slot, int at);
void conn_queue_msg(ws_t *ws, conn_t *c, const ptp_msg_t *m);
void conn_queue_error(ws_t *ws, conn_t *c, ptp_code_t code, int about, uint64_t id, const char *fmt,
                      ...) __attribute__((format(printf, 6, 7)));
int conn_write(ws_t *ws, conn_t *c); /* WRITEABLE: returns -1 to close */
void conn_free(ws_t *ws, conn_t *c);
int conn_covers(const conn_t *c, uint64_t id, const char *room);
/* Whether the connection's minor carries the instance's shape: every shape from 1.3 on,
 * up to PTP_MAX_STRANDS_1_2 strands before (PROTOCOL.md 5). One it does not is not sent. */
int conn_fits(const conn_t *c, const inst_meta_t *m);
void conn_subscribe(ws_t *ws, conn_t *c, const ptp_ids_t *s, int about);
void conn_unsubscribe(ws_t *ws, conn_t *c, const ptp_ids_t *s);
void conn_keyframes(ws_t *ws, conn_t *c, const ptp_ids_t *s);
void conn_event(ws_t *ws, const frame_event_t *ev);
int conn_has_work(const ws_t *ws, const conn_t *c);
/* Once per new frame set: backpressure, for 1.2 connections of either coding. A connection
 * with the batches of the last two ticks not out (or with bytes lws holds back) is behind;
 * WS_MISSES_DOWN such looks in a row move it down a rate, tick_hz looks in a row without
 * one (a second, at least 4) move it back up (PROTOCOL.md 5). */
void conn_pace(ws_t *ws, conn_t *c);

/* ws_order.c: the fan-out sends the batches answering the oldest poses first. */
void ws_order_tick(ws_t *ws);               /* a new frame set: hold, sort, first wave */
void ws_order_next(ws_t *ws);               /* after each lws_service cycle: next wave */
void ws_order_forget(ws_t *ws, conn_t *c);  /* the connection closes */
void ws_order_free(ws_t *ws);

/* ws.c: takes the newest frame set and hands its events to the connections. */
void ws_refresh(ws_t *ws);

#endif
