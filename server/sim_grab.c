/* Grabs on the tick thread (server/README.md "Touch and grabs"): the table of grabs, each
 * checked every tick and given to core as pt_world_set_grabs of the grabbed instance, and
 * the commands that make, end and list them (sim_touch.c has the hands they follow). Sim
 * thread only. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sim_touch_internal.h"

/* A WebSocket grab or release: its answer goes out with this tick's frame set. */
void simgrab_reply(sim_t *s, const cmd_t *c)
{
	const cmd_grab_t *g = c->grab;
	if (!g->reply)
		return;
	static const uint16_t code[] = {
	    [GRAB_OK] = 0,
	    [GRAB_FORBIDDEN] = PTP_CODE_UNAUTHORIZED,
	    [GRAB_INVALID] = PTP_CODE_LIMIT,
	    [GRAB_CONFLICT] = PTP_CODE_LIMIT,
	    [GRAB_NOT_FOUND] = PTP_CODE_NOT_FOUND,
	};
	frame_reply_t r = {.conn = g->conn, .ref = g->ref,
	                   .about = c->kind == CMD_GRAB ? PTP_GRAB : PTP_RELEASE,
	                   .code = c->result != CMD_OK ? PTP_CODE_LIMIT : code[g->refused],
	                   .instance = c->id, .gid = g->g.gid};
	snprintf(r.text, sizeof r.text, "%s", c->result != CMD_OK ? "out of memory" : g->message);
	frame_ring_reply(s->ring, &r);
}

static void tc_grab_end(sim_touch_t *T, int i, const char *why)
{
	const grab_info_t *g = &T->grabs[i].g;
	LOG(LOG_DEBUG, "grab %llu of instance %llu by %llu ended: %s", (unsigned long long)g->gid,
	    (unsigned long long)g->instance, (unsigned long long)g->by, why);
	memmove(&T->grabs[i], &T->grabs[i + 1], (size_t)(T->ngrabs - i - 1) * sizeof *T->grabs);
	T->ngrabs--;
}

/* Why grab g cannot go on (NULL: it can); its target into *t. */
static const char *tc_grab_check(sim_t *s, const grab_info_t *g, pt_vec3 *t)
{
	int ts = sim_slot_of(s, g->instance), bs = sim_slot_of(s, g->by);
	if (ts < 0)
		return "the grabbed instance is gone";
	if (bs < 0)
		return "the grabber is gone";
	sim_inst_t *in = &s->inst[ts], *by = &s->inst[bs];
	int same = simtouch_same_room(in, by);
	if (!same)
		return "the grabber left the room";
	if (!simtouch_grants(in, in->grab_mode, g->by, same))
		return "the grant was taken away";
	int sc, pts[PT_MAX_STRANDS];
	pt_world_shape(s->world, in->pid, &sc, pts);
	if (g->strand >= sc || g->point >= pts[g->strand])
		return "the point no longer exists";
	int k = simtouch_hand_index(g->bone);
	if (!by->tx || !by->tx->hands || !simtouch_fresh(s, by->tx->hands, k))
		return "the grabber's hand is stale";
	*t = by->tx->hands->now[k].p;
	return NULL;
}

static cmd_result_t tc_grab_new(sim_t *s, sim_touch_t *T, cmd_grab_t *c);

void simgrab_tick(sim_t *s, sim_touch_t *T)
{
	for (int i = 0; i < T->npending; i++) { /* completed with the tick's other commands */
		cmd_t *c = T->pending[i];
		c->result = tc_grab_new(s, T, c->grab);
		simgrab_reply(s, c);
	}
	T->npending = 0;
	for (int i = 0; i < T->ngrabs;) {
		pt_vec3 t;
		const char *why = tc_grab_check(s, &T->grabs[i].g, &t);
		if (why) {
			tc_grab_end(T, i, why);
			continue;
		}
		grab_t *g = &T->grabs[i++];
		g->t0 = g->has_last ? g->t1 : t;
		g->t1 = t;
		g->has_last = 1;
	}
	/* the table is ordered by instance: one run per grabbed instance */
	for (int i = 0; i < T->ngrabs;) {
		int e = i, n = 0;
		pt_grab gs[PT_MAX_GRABS];
		for (; e < T->ngrabs && T->grabs[e].g.instance == T->grabs[i].g.instance; e++)
			if (n < PT_MAX_GRABS) {
				const grab_t *g = &T->grabs[e];
				gs[n++] = (pt_grab){g->g.strand, g->g.point, g->t0, g->t1};
			}
		sim_inst_t *in = &s->inst[sim_slot_of(s, T->grabs[i].g.instance)];
		if (pt_world_set_grabs(s->world, in->pid, gs, n) == 1 && in->rec)
			pt_rec_put_grabs(rec_stage(in->rec), in->id, gs, n);
		i = e;
	}
}

static cmd_result_t tc_refuse(cmd_grab_t *c, int why, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static cmd_result_t tc_refuse(cmd_grab_t *c, int why, const char *field, const char *fmt, ...)
{
	c->refused = why;
	snprintf(c->field, sizeof c->field, "%s", field);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->message, sizeof c->message, fmt, ap);
	va_end(ap);
	return CMD_OK;
}

static const char *tc_MODE_NAMES[] = {"none", "room", "listed"};

static cmd_result_t tc_grab_new(sim_t *s, sim_touch_t *T, cmd_grab_t *c)
{
	grab_info_t *g = &c->g;
	int ts = sim_slot_of(s, g->instance), bs = sim_slot_of(s, g->by);
	unsigned long long id = (unsigned long long)g->instance, by = (unsigned long long)g->by;
	if (ts < 0)
		return tc_refuse(c, GRAB_NOT_FOUND, "id", "no instance %llu", id);
	if (bs < 0)
		return tc_refuse(c, GRAB_INVALID, "by", "by: no instance %llu", by);
	if (ts == bs)
		return tc_refuse(c, GRAB_INVALID, "by", "by: an instance cannot grab itself");
	int k = simtouch_hand_index(g->bone);
	if (k < 0)
		return tc_refuse(c, GRAB_INVALID, "bone", "bone: not a hand or finger bone");
	sim_inst_t *in = &s->inst[ts], *bi = &s->inst[bs];
	int same = simtouch_same_room(in, bi);
	if (!simtouch_grants(in, in->grab_mode, g->by, same))
		return tc_refuse(c, GRAB_FORBIDDEN, "interaction.grab",
		              "interaction.grab: instance %llu (grab: %s) does not let instance %llu "
		              "grab it%s",
		              id, tc_MODE_NAMES[in->grab_mode % 3], by,
		              in->grab_mode == INTERACT_NONE ? ""
		              : !same                        ? " (not in its room)"
		                                             : " (not in its allow list)");
	int sc, pts[PT_MAX_STRANDS];
	pt_world_shape(s->world, in->pid, &sc, pts);
	if (g->strand < 0 || g->strand >= sc)
		return tc_refuse(c, GRAB_INVALID, "strand",
		              "strand: %d does not exist (instance %llu has strands 0..%d)", g->strand,
		              id, sc - 1);
	if (g->point < 1 || g->point >= pts[g->strand])
		return tc_refuse(c, GRAB_INVALID, "point",
		              "point: %d does not exist or is the root (strand %d has points 1..%d to "
		              "grab)",
		              g->point, g->strand, pts[g->strand] - 1);
	int n = 0, at = T->ngrabs;
	for (int i = 0; i < T->ngrabs; i++) {
		const grab_info_t *o = &T->grabs[i].g;
		if (o->instance != g->instance)
			continue;
		if (o->strand == g->strand && o->point == g->point)
			return tc_refuse(c, GRAB_CONFLICT, "point",
			              "point: point %d of strand %d is already grabbed (grab %llu)",
			              g->point, g->strand, (unsigned long long)o->gid);
		n++;
		at = i + 1;
	}
	if (n >= PT_MAX_GRABS)
		return tc_refuse(c, GRAB_CONFLICT, "grabs",
		              "grabs: instance %llu has %d grabs, the most one takes (limits.grabs)", id,
		              n);
	if (!bi->tx || !bi->tx->hands || !simtouch_fresh(s, bi->tx->hands, k))
		return tc_refuse(c, GRAB_CONFLICT, "bone",
		              "bone: instance %llu has sent no %s pose in the last %.2f s", by,
		              pt_bone_name((pt_bone)g->bone),
		              (double)simtouch_hold(s) / s->cfg.tick_hz);
	if (n == 0) /* first grab of this instance: after the smaller instance ids */
		for (at = 0; at < T->ngrabs && T->grabs[at].g.instance < g->instance; at++)
			;
	if (srv_grow((void **)&T->grabs, &T->cap_grabs, T->ngrabs + 1, sizeof *T->grabs) != 0)
		return CMD_NO_MEMORY;
	memmove(&T->grabs[at + 1], &T->grabs[at], (size_t)(T->ngrabs - at) * sizeof *T->grabs);
	g->gid = ++T->next_gid;
	T->grabs[at] = (grab_t){.g = *g, .conn = c->conn};
	T->ngrabs++;
	c->refused = GRAB_OK;
	return CMD_OK;
}

cmd_result_t simtouch_cmd(sim_t *s, cmd_t *c)
{
	sim_touch_t *T = simtouch_state(s);
	cmd_grab_t *g = c->grab;
	if (!T)
		return CMD_NO_MEMORY;
	switch (c->kind) {
	case CMD_GRAB: /* after this tick's poses, so a hand sent with it counts */
		if (srv_grow((void **)&T->pending, &T->cap_pending, T->npending + 1, sizeof *T->pending))
			return CMD_NO_MEMORY;
		g->g.instance = c->id;
		T->pending[T->npending++] = c;
		return CMD_OK;
	case CMD_UNGRAB: {
		int i = 0;
		while (i < T->ngrabs && !(T->grabs[i].g.gid == g->g.gid && T->grabs[i].g.instance == c->id))
			i++;
		int may = !g->reply || i == T->ngrabs;
		for (int k = 0; k < g->nmay && !may; k++)
			may = g->may[k] == c->id || g->may[k] == T->grabs[i].g.by;
		if (i == T->ngrabs)
			tc_refuse(g, GRAB_NOT_FOUND, "grab", "grab: no grab %llu of instance %llu",
			          (unsigned long long)g->g.gid, (unsigned long long)c->id);
		else if (!may)
			tc_refuse(g, GRAB_FORBIDDEN, "",
			          "release: authorize instance %llu or its grabber %llu on this "
			          "connection first",
			          (unsigned long long)c->id, (unsigned long long)T->grabs[i].g.by);
		else {
			g->g = T->grabs[i].g;
			tc_grab_end(T, i, "released");
			g->refused = GRAB_OK;
		}
		simgrab_reply(s, c);
		return CMD_OK;
	}
	case CMD_GRABS:
		g->n = 0;
		g->list = NULL;
		for (int i = 0; i < T->ngrabs; i++)
			if (T->grabs[i].g.instance == c->id) {
				if (!g->list && !(g->list = malloc(PT_MAX_GRABS * sizeof *g->list)))
					return CMD_NO_MEMORY;
				if (g->n < PT_MAX_GRABS)
					g->list[g->n++] = T->grabs[i].g;
			}
		return sim_slot_of(s, c->id) >= 0 || g->n > 0 ? CMD_OK : CMD_NOT_FOUND;
	case CMD_CONN_GONE:
		for (int i = 0; i < T->ngrabs;)
			if (T->grabs[i].conn == g->conn)
				tc_grab_end(T, i, "its WebSocket connection closed");
			else
				i++;
		for (int i = 0; i < T->ntouchers; i++) {
			hands_t *h = s->inst[T->touchers[i]].tx->hands;
			for (int k = 0; k < HAND_BONES; k++)
				if (h->conn[k] == g->conn)
					h->tick[k] = 0;
		}
		return CMD_OK;
	default:
		return CMD_NOT_FOUND;
	}
}

