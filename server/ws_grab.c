/* grab and release over WebSocket (protocol 1.5, PROTOCOL.md 5; server/README.md "Touch
 * and grabs"): checked as far as this connection can (its minor, the grabber authorized
 * here), handed to the door without waiting, and answered when the sim's reply comes with
 * the frame set of the tick that applied it (ws_grab_replies). Service thread only. */
#include <stdio.h>
#include <string.h>

#include "instances.h"
#include "ws_internal.h"

static int authorized(const conn_t *c, uint64_t id)
{
	for (int i = 0; i < c->nauth; i++)
		if (c->auth[i].id == id)
			return 1;
	return 0;
}

/* An error answering ref (a 1.5 error carries it), kept open. */
static void refuse(ws_t *ws, conn_t *c, ptp_code_t code, int about, uint64_t id, uint32_t ref,
                   const char *text)
{
	ptp_msg_t m = {.type = PTP_ERROR};
	m.u.error.code = (uint16_t)code;
	m.u.error.about_type = (uint8_t)about;
	m.u.error.instance_id = id;
	m.u.error.ref = ref;
	size_t n = strnlen(text, PTP_MAX_TEXT);
	m.u.error.text = (ptp_str_t){text, n};
	conn_queue_msg(ws, c, &m);
}

/* 1: the connection negotiated 1.5 (else answered unknown_type, as a 1.4 server would). */
static int speaks_grab(ws_t *ws, conn_t *c, int type)
{
	if (c->minor >= PTP_MINOR_GRAB)
		return 1;
	conn_queue_error(ws, c, PTP_CODE_UNKNOWN_TYPE, type, 0, "unknown message type 0x%02x",
	                 type);
	return 0;
}

void ws_on_grab(ws_t *ws, conn_t *c, const ptp_grab_t *m)
{
	if (!speaks_grab(ws, c, PTP_GRAB))
		return;
	if (!authorized(c, m->by)) {
		char t[128];
		snprintf(t, sizeof t, "by: authorize instance %llu on this connection first",
		         (unsigned long long)m->by);
		refuse(ws, c, PTP_CODE_UNAUTHORIZED, PTP_GRAB, m->instance_id, m->ref, t);
		return;
	}
	grab_info_t req = {.instance = m->instance_id, .by = m->by, .strand = m->strand,
	                   .point = m->point, .bone = m->bone};
	inst_err_t e;
	c->handed = 1; /* its grabs end when it closes */
	if (instances_grab_post(ws->app, &req, c->serial, m->ref, &e) != INST_OK)
		refuse(ws, c, inst_ptp_code(e.status), PTP_GRAB, m->instance_id, m->ref, e.message);
}

void ws_on_release(ws_t *ws, conn_t *c, const ptp_release_t *m)
{
	if (!speaks_grab(ws, c, PTP_RELEASE))
		return;
	uint64_t may[WS_MAX_AUTH];
	for (int i = 0; i < c->nauth; i++)
		may[i] = c->auth[i].id;
	inst_err_t e;
	if (instances_release_post(ws->app, m->instance_id, m->grab_id, c->serial, m->ref, may,
	                           c->nauth, &e) != INST_OK)
		refuse(ws, c, inst_ptp_code(e.status), PTP_RELEASE, m->instance_id, m->ref, e.message);
}

void ws_grab_replies(ws_t *ws)
{
	const frame_reply_t *r;
	int n = frame_ring_take_replies(ws->app->ring, &r);
	for (int i = 0; i < n; i++) {
		conn_t *c = ws->conns;
		while (c && c->serial != r[i].conn)
			c = c->next;
		if (!c || c->dead)
			continue; /* closed meanwhile: its grabs end with it */
		if (r[i].code) {
			refuse(ws, c, (ptp_code_t)r[i].code, r[i].about, r[i].instance, r[i].ref,
			       r[i].text);
			continue;
		}
		ptp_msg_t m = {.type = PTP_GRAB_RESULT};
		m.u.grab_result.ref = r[i].ref;
		m.u.grab_result.instance_id = r[i].instance;
		m.u.grab_result.grab_id = r[i].gid;
		conn_queue_msg(ws, c, &m);
	}
}
