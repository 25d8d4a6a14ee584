/* The tick thread's room winds (server/README.md "Room wind"): each room's zones, given to
 * every instance of the room when they change (CMD_WIND, at a tick boundary), to an
 * instance created in the room or moved into it, and taken from one that leaves it. Every
 * such call into core is recorded (a WIND record) in the instance's room's recording.
 * Sim thread only (and the main thread before it starts: sim_preload_wind). */
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

struct sim_wind_t {
	char room[PT_NAME_MAX];
	int n;
	pt_wind_zone zones[PT_MAX_WIND_ZONES];
};

static sim_wind_t *wind_find(const sim_t *s, const char *room)
{
	for (int i = 0; i < s->nwinds; i++)
		if (strcmp(s->winds[i].room, room) == 0)
			return &s->winds[i];
	return NULL;
}

/* The room's entry set to n zones (n = 0 removes it). 0, or -1 out of memory. */
static int wind_table_set(sim_t *s, const char *room, const pt_wind_zone *z, int n)
{
	sim_wind_t *e = wind_find(s, room);
	if (!e && n == 0)
		return 0;
	if (!e) {
		if (s->nwinds == s->cap_winds) {
			int nc = s->cap_winds ? 2 * s->cap_winds : 8;
			sim_wind_t *nw = realloc(s->winds, (size_t)nc * sizeof *nw);
			if (!nw)
				return -1;
			s->winds = nw, s->cap_winds = nc;
		}
		e = &s->winds[s->nwinds++];
		memset(e, 0, sizeof *e);
		memcpy(e->room, room, strnlen(room, PT_NAME_MAX - 1));
	}
	if (n == 0) {
		*e = s->winds[--s->nwinds];
		return 0;
	}
	memcpy(e->zones, z, (size_t)n * sizeof *z);
	e->n = n;
	return 0;
}

/* Gives the instance n zones in core and records the call. 1, or -1 out of memory. */
static int wind_give(sim_t *s, sim_inst_t *in, const pt_wind_zone *z, int n)
{
	int r = pt_world_set_room_wind(s->world, in->pid, z, n);
	if (r == 1 && in->rec)
		pt_rec_put_wind(rec_stage(in->rec), in->id, z, n);
	return r == 1 ? 1 : -1;
}

void simwind_join(sim_t *s, sim_inst_t *in, const char *room, int moved)
{
	const sim_wind_t *e = wind_find(s, room);
	/* a moved instance brings its old room's wind along: take it off (not recorded when
	 * there was none: the new room's SNAPSHOT has none either) */
	int had = moved ? pt_world_get_room_wind(s->world, in->pid, NULL, 0) > 0 : 0;
	if (!e && !had)
		return;
	/* Out of memory: the instance steps without the room's wind; logged by the caller's
	 * next change at the latest. Never a failed create or move. */
	(void)wind_give(s, in, e ? e->zones : NULL, e ? e->n : 0);
}

int simwind_zones(const sim_t *s, const char *room, pt_wind_zone *out)
{
	const sim_wind_t *e = wind_find(s, room);
	if (!e)
		return 0;
	memcpy(out, e->zones, (size_t)e->n * sizeof *out);
	return e->n;
}

cmd_result_t simwind_set(sim_t *s, const char *room, const pt_wind_zone *z, int n)
{
	pt_wind_zone old[PT_MAX_WIND_ZONES];
	int nold = simwind_zones(s, room, old);
	if (wind_table_set(s, room, z, n) != 0)
		return CMD_NO_MEMORY;
	for (int i = 0; i < s->nindex; i++) {
		sim_inst_t *in = &s->inst[s->index[i].slot];
		if (strcmp(in->meta->room, room) != 0)
			continue;
		if (wind_give(s, in, z, n) != 1) {
			/* nothing half-applied: the ones given the new zones get the old back
			 * (which allocates nothing: they hold a wind now, or get none) */
			for (int k = 0; k < i; k++) {
				sim_inst_t *o = &s->inst[s->index[k].slot];
				if (strcmp(o->meta->room, room) == 0)
					(void)wind_give(s, o, old, nold);
			}
			(void)wind_table_set(s, room, old, nold);
			return CMD_NO_MEMORY;
		}
	}
	return CMD_OK;
}

int sim_preload_wind(sim_t *s, const char *room, const pt_wind_zone *z, int n)
{
	return wind_table_set(s, room, z, n);
}
