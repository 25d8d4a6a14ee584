/* Private to clients/lib: the context and connection structs and the seams between
 * ctx.c (lws context, protocol callback, timers), conn.c (public connection API, send
 * queue), rx.c (received messages, decoders), seqtab.c (publish times for latency). */
#ifndef PTC_INTERNAL_H
#define PTC_INTERNAL_H

#include <libwebsockets.h>

#include "ponytail_client.h"
#include "ptp/strand.h"

enum {
	PTC_MAX_AUTH = 64,         /* authorizations per connection (the server's limit) */
	PTC_QUEUE_MAX_MSGS = 1024, /* queued control messages per connection */
	PTC_RX_MAX = PTP_HEADER_SIZE + PTP_MAX_PAYLOAD,
	/* a head_pose: the header, 73 bytes of payload with both velocities, + 1 + 54 x 29
	 * of bones (1.2, every body bone): 1,650 */
	PTC_POSE_MSG_CAP = PTP_HEADER_SIZE + 73 + 1 + PTP_MAX_POSE_BONES * PTP_BONE_SIZE,
	PTC_SEQ_RING = 512,          /* publish times kept per instance (~8 s at 60 Hz) */
	PTC_DEFAULT_MAX_SUBS = 1024, /* before the first welcome tells the real limit */
};

/* One encoded message waiting to be written, LWS_PRE bytes of headroom before data. */
typedef struct ptc_msg_t {
	struct ptc_msg_t *next;
	uint64_t pose_id; /* a head_pose for this instance (replaceable), else 0 */
	size_t len, cap;
	uint8_t buf[]; /* LWS_PRE + cap */
} ptc_msg_t;

/* What a connection knows of one instance it receives. */
typedef struct ptc_inst_t {
	uint64_t id;
	ptp_shape_t shape;
	ptp_decoder_t *dec; /* NULL when decoding is off */
	float *xyz;         /* 3 * n points */
	size_t n;
	uint32_t last_seq; /* last_seq of the previous record (latency counts new ones) */
	int have_seq;
	char name[PTP_MAX_NAME + 1], room[PTP_MAX_NAME + 1];
} ptc_inst_t;

typedef struct ptc_auth_t {
	uint64_t id;
	char token[PTP_MAX_TOKEN + 1];
	uint32_t next_seq;
} ptc_auth_t;

struct ptc_conn_t {
	ptc_ctx_t *ctx;
	ptc_conn_t *prev, *next; /* ctx->conns */
	ptc_conn_params_t p;     /* strings below are our copies */
	char url[512], host[256], path[256], name[PTP_MAX_NAME + 1];
	int port;
	int tls; /* a wss:// URL */

	struct lws *wsi; /* the current attempt, NULL between attempts */
	int in_connect;  /* inside lws_client_connect_via_info */
	int ws_open;     /* the WebSocket handshake completed (writes possible) */
	ptc_state_t state;
	int user_closed; /* ptc_close called: free when lws lets go */
	int give_up;     /* the server said something that retrying will not fix */
	int attempts;    /* failed attempts since the last welcome (back-off) */
	char last_error[320];
	char tls_error[160]; /* why the server's certificate failed verification, this attempt */
	char close_reason[320]; /* why the server ended this session, if it said */
	lws_sorted_usec_list_t sul_retry, sul_ping;

	ptc_server_t server;
	int have_server;

	/* remembered requests, re-sent after every welcome */
	ptc_auth_t auth[PTC_MAX_AUTH];
	int nauth;
	uint64_t *sub_ids; /* sorted */
	int nsub_ids, cap_sub_ids;
	char (*rooms)[PTP_MAX_NAME + 1];
	int nrooms, cap_rooms;

	/* instances received, sorted by id */
	ptc_inst_t **inst;
	int ninst, cap_inst;

	/* send queue */
	ptc_msg_t *q_head, *q_tail;
	int q_len;

	/* receive reassembly */
	uint8_t *rx;
	size_t rx_len, rx_cap;
	int rx_bad; /* this message is text or too big: dropped when complete */

	/* clock offset: server_us ~ local_us + offset_us, from the pong of smallest rtt */
	int64_t offset_us, offset_rtt_us, offset_at_us;
	int have_offset;
	uint64_t last_tick; /* tick of the previous batch this session (0: none) */

	ptc_stats_t st;
};

/* Publish times for one instance: ring indexed by seq. */
typedef struct ptc_seqring_t {
	uint64_t id;
	uint32_t seq[PTC_SEQ_RING];
	int64_t t_us[PTC_SEQ_RING];
} ptc_seqring_t;

struct ptc_ctx_t {
	struct lws_context *lws;
	int insecure; /* ptc_tls_t.insecure: wss:// without verification */
	ptc_conn_t *conns;
	int destroying;
	unsigned activity; /* bumped by every callback and timer (ptc_service returns) */
	lws_sorted_usec_list_t sul_wake;
	ptc_seqring_t **seqs; /* sorted by id */
	int nseqs, cap_seqs;
	struct lws_protocols protocols[2];
	ptp_msg_t rx_msg; /* the message being handled (service thread) */
};

/* ctx.c */
void ptc_conn_set_state(ptc_conn_t *c, ptc_state_t s, const char *why); /* + on_state */
void ptc_conn_start(ptc_conn_t *c); /* schedule an attempt now */
/* The attempt or session ended (wsi: the lws connection it was, or NULL): clean up, then
 * retry, give up, or -- closed by the user -- free it from a timer. */
void ptc_conn_lost(ptc_conn_t *c, struct lws *wsi, const char *why);
/* Frees c from a timer on the next service: never under a callback that still uses it. */
void ptc_conn_free_later(ptc_conn_t *c);
void ptc_conn_ping_schedule(ptc_conn_t *c);
void ptc_conn_free(ptc_conn_t *c); /* unlink and free everything */

/* conn.c */
int ptc_conn_queue(ptc_conn_t *c, const ptp_msg_t *m); /* encode + append + writable */
void ptc_conn_queue_clear(ptc_conn_t *c);
int ptc_conn_write_one(ptc_conn_t *c);     /* WRITEABLE: 0, or -1 to close */
void ptc_conn_resend_state(ptc_conn_t *c); /* after welcome */

/* rx.c */
void ptc_rx_message(ptc_conn_t *c, const uint8_t *buf, size_t len);
void ptc_rx_forget(ptc_conn_t *c); /* drop instances and decoders (new session) */

/* seqtab.c */
void ptc_seq_put(ptc_ctx_t *ctx, uint64_t id, uint32_t seq, int64_t t_us);
int64_t ptc_seq_time(const ptc_ctx_t *ctx, uint64_t id, uint32_t seq); /* -1: unknown */
void ptc_seq_free(ptc_ctx_t *ctx);

#endif
