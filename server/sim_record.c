/* The tick thread's side of the recordings (record.h): every call it makes into core for
 * an instance is written, as it is made, into the stage of the instance's room; at the
 * tick's end, each instance's state hash, then the snapshots of rooms that begin a new
 * segment. Sim thread only. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "ponytail/schema.h"
#include "sim_internal.h"

/* The definition's JSON form, kept for the instance's records (a recording replays what
 * the document parses to: pt_schema_dump round-trips). 0, or -1 out of memory. */
static int keep_def(sim_inst_t *in, const pt_instance_def *def)
{
	json_t *doc = pt_schema_dump(def);
	char *text = doc ? json_dumps(doc, JSON_COMPACT | PT_SCHEMA_DUMP_FLAGS) : NULL;
	json_decref(doc);
	if (!text)
		return -1;
	free(in->rec_def);
	in->rec_def = text;
	in->rec_def_len = strlen(text);
	return 0;
}

static void unrecorded(sim_t *s, sim_inst_t *in)
{
	LOG(LOG_ERROR, "record: out of memory: instance %llu is not recorded",
	    (unsigned long long)in->id);
	rec_room_leave(s->rec, in->rec);
	in->rec = NULL;
}

void simrec_create(sim_t *s, sim_inst_t *in, const pt_instance_def *def, pt_pose head)
{
	in->rec = rec_room_join(s->rec, def->room);
	if (!in->rec)
		return;
	if (keep_def(in, def) != 0) {
		unrecorded(s, in);
		return;
	}
	pt_rec_put_create(rec_stage(in->rec), in->id, head, in->rec_def, in->rec_def_len);
}

static void snapshot(sim_t *s, sim_inst_t *in)
{
	size_t n = pt_world_state_save(s->world, in->pid, NULL, 0);
	unsigned char *state = malloc(n);
	if (!state) {
		rec_stage(in->rec)->failed = 1;
		return;
	}
	pt_world_state_save(s->world, in->pid, state, n);
	pt_rec_put_snapshot(rec_stage(in->rec), in->id, in->rec_def, in->rec_def_len, state, n);
	free(state);
	simtouch_snapshot(in); /* made anew without touch: its next TOUCH is recorded again */
	/* a SNAPSHOT makes the instance anew, without the room wind it has: give it again */
	pt_wind_zone z[PT_MAX_WIND_ZONES];
	int nz = pt_world_get_room_wind(s->world, in->pid, z, PT_MAX_WIND_ZONES);
	if (nz > 0)
		pt_rec_put_wind(rec_stage(in->rec), in->id, z, nz);
}

void simrec_update(sim_t *s, sim_inst_t *in, const pt_instance_def *def, const char *old_room)
{
	if (!s->rec)
		return;
	int moved = strcmp(def->room, old_room) != 0;
	if (in->rec && moved) {
		pt_rec_put_id(rec_stage(in->rec), PT_REC_DELETE, in->id);
		rec_room_leave(s->rec, in->rec);
		in->rec = NULL;
	}
	if (!in->rec && !(in->rec = rec_room_join(s->rec, def->room)))
		return;
	if (keep_def(in, def) != 0) {
		unrecorded(s, in);
		return;
	}
	if (moved) /* the room's recording gets the instance as it is now */
		snapshot(s, in);
	else
		pt_rec_put_update(rec_stage(in->rec), in->id, in->rec_def, in->rec_def_len);
}

void simrec_delete(sim_t *s, sim_inst_t *in)
{
	if (in->rec) {
		pt_rec_put_id(rec_stage(in->rec), PT_REC_DELETE, in->id);
		rec_room_leave(s->rec, in->rec);
		in->rec = NULL;
	}
	free(in->rec_def);
	in->rec_def = NULL;
}

void simrec_end_tick(sim_t *s)
{
	if (!s->rec)
		return;
	for (int i = 0; i < s->nindex; i++) {
		sim_inst_t *in = &s->inst[s->index[i].slot];
		if (in->rec)
			rec_hash(in->rec, in->id, in->state_hash); /* the encode pass's */
	}
	if (!rec_end_tick(s->rec, s->tick))
		return;
	for (int i = 0; i < s->nindex; i++) {
		sim_inst_t *in = &s->inst[s->index[i].slot];
		if (rec_wants_snapshot(in->rec))
			snapshot(s, in);
	}
	rec_snapshots_done(s->rec);
}
