/* The door, continued (instances.h): grabs (server/README.md "Touch and grabs"). A grab
 * lives on the tick thread only (sim_touch.c): nothing is stored, and a restart ends every
 * grab. The door reads the request, checks the grabber's token (the registry) and hands
 * the rest to the sim, which checks the grant, the room, the point, the limit and the
 * grabber's hand at a tick boundary and answers after that tick. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "instances.h"
#include "instances_internal.h"

static inst_status_t from_sim(cmd_result_t r, const cmd_t *c, uint64_t id, inst_err_t *err)
{
	if (r == CMD_CLOSED)
		return inst_refuse(err, INST_CLOSED, NULL, "the server is shutting down");
	if (r == CMD_NOT_FOUND)
		return inst_refuse(err, INST_NOT_FOUND, "id", "no instance %llu",
		                   (unsigned long long)id);
	if (r != CMD_OK)
		return inst_refuse(err, INST_NO_MEMORY, NULL, "out of memory");
	static const inst_status_t map[] = {
	    [GRAB_OK] = INST_OK,           [GRAB_FORBIDDEN] = INST_FORBIDDEN,
	    [GRAB_INVALID] = INST_INVALID, [GRAB_CONFLICT] = INST_CONFLICT,
	    [GRAB_NOT_FOUND] = INST_NOT_FOUND,
	};
	const cmd_grab_t *g = c->grab;
	if (g->refused == GRAB_OK)
		return inst_ok(err);
	return inst_refuse(err, map[g->refused], g->field[0] ? g->field : NULL, "%s", g->message);
}

int instances_grab_bone(const char *name)
{
	int b = name ? pt_bone_from_name(name) : -1;
	int hand = b == PT_BONE_LEFT_HAND || b == PT_BONE_RIGHT_HAND ||
	           (b >= PT_BONE_LEFT_THUMB_METACARPAL && b < PT_BONE_COUNT);
	return hand ? b : -1;
}

inst_status_t instances_grab_new(app_t *app, const grab_info_t *req, const char *token,
                                 size_t len, uint64_t conn, grab_info_t *out, inst_err_t *err)
{
	if (!registry_info(app->reg, req->instance, NULL))
		return inst_refuse(err, INST_NOT_FOUND, "id", "no instance %llu",
		                   (unsigned long long)req->instance);
	if (req->strand < 0)
		return inst_refuse(err, INST_INVALID, "strand", "strand: expected an integer >= 0");
	if (req->point < 1)
		return inst_refuse(err, INST_INVALID, "point",
		                   "point: expected an integer >= 1 (the root, 0, cannot be grabbed)");
	if (req->bone < 0 || instances_grab_bone(pt_bone_name((pt_bone)req->bone)) < 0)
		return inst_refuse(err, INST_INVALID, "bone",
		                   "bone: expected left_hand, right_hand or a finger bone "
		                   "(left_index_distal, ...)");
	int r = registry_auth_write(app->reg, app->cfg->admin_token, req->by, token, len);
	if (r < 0)
		return inst_refuse(err, INST_INVALID, "by", "by: no instance %llu",
		                   (unsigned long long)req->by);
	if (r == 0)
		return inst_refuse(err, INST_FORBIDDEN, NULL,
		                   "wrong token for instance %llu (a grab takes the grabber's token)",
		                   (unsigned long long)req->by);
	if (__atomic_load_n(&app->draining, __ATOMIC_ACQUIRE))
		return inst_refuse(err, INST_CLOSED, NULL, "the server is shutting down");
	cmd_grab_t g = {.g = *req, .conn = conn};
	cmd_t cmd = {.kind = CMD_GRAB, .id = req->instance, .grab = &g};
	inst_status_t st = from_sim(cmdq_submit(app->q, &cmd), &cmd, req->instance, err);
	if (st == INST_OK)
		*out = g.g;
	return st;
}

/* An integer member of the body in [lo, hi], or refused naming it. */
static int int_member(const json_t *body, const char *key, json_int_t lo, json_int_t hi,
                      json_int_t *v)
{
	const json_t *x = json_object_get(body, key);
	if (!json_is_integer(x) || json_integer_value(x) < lo || json_integer_value(x) > hi)
		return -1;
	*v = json_integer_value(x);
	return 0;
}

inst_status_t instances_grab(app_t *app, uint64_t id, const json_t *body, const char *token,
                             size_t len, grab_info_t *out, inst_err_t *err)
{
	const char *key;
	const json_t *v;
	json_object_foreach((json_t *)(uintptr_t)body, key, v)
	{
		if (strcmp(key, "by") && strcmp(key, "strand") && strcmp(key, "point") &&
		    strcmp(key, "bone"))
			return inst_refuse(err, INST_INVALID, key,
			                   "%.80s: unknown field (by, strand, point, bone)", key);
	}
	if (!registry_info(app->reg, id, NULL))
		return inst_refuse(err, INST_NOT_FOUND, "id", "no instance %llu",
		                   (unsigned long long)id);
	json_int_t by, strand, point;
	if (int_member(body, "by", 1, ((json_int_t)1 << 53) - 1, &by) != 0)
		return inst_refuse(err, INST_INVALID, "by", "by: expected the grabber's instance id");
	if (int_member(body, "strand", 0, PT_MAX_STRANDS - 1, &strand) != 0)
		return inst_refuse(err, INST_INVALID, "strand",
		                   "strand: expected an integer in [0, %d]", PT_MAX_STRANDS - 1);
	if (int_member(body, "point", 1, PT_MAX_POINTS - 1, &point) != 0)
		return inst_refuse(err, INST_INVALID, "point",
		                   "point: expected an integer in [1, %d] (the root, 0, cannot be "
		                   "grabbed)",
		                   PT_MAX_POINTS - 1);
	const json_t *b = json_object_get(body, "bone");
	int bone = json_is_string(b) ? instances_grab_bone(json_string_value(b)) : -1;
	if (bone < 0)
		return inst_refuse(err, INST_INVALID, "bone",
		                   "bone: expected left_hand, right_hand or a finger bone "
		                   "(left_index_distal, ...)");
	grab_info_t req = {.instance = id, .by = (uint64_t)by, .strand = (int)strand,
	                   .point = (int)point, .bone = bone};
	return instances_grab_new(app, &req, token, len, 0, out, err);
}

inst_status_t instances_grabs(app_t *app, uint64_t id, grab_info_t **list, int *n,
                              inst_err_t *err)
{
	*list = NULL;
	*n = 0;
	cmd_grab_t g = {0};
	cmd_t cmd = {.kind = CMD_GRABS, .id = id, .grab = &g};
	inst_status_t st = from_sim(cmdq_submit(app->q, &cmd), &cmd, id, err);
	if (st == INST_OK)
		*list = g.list, *n = g.n;
	else
		free(g.list);
	return st;
}

inst_status_t instances_release(app_t *app, uint64_t id, uint64_t gid, const char *token,
                                size_t len, inst_err_t *err)
{
	grab_info_t *list;
	int n;
	inst_status_t st = instances_grabs(app, id, &list, &n, err);
	if (st != INST_OK)
		return st;
	const grab_info_t *g = NULL;
	for (int i = 0; i < n && !g; i++)
		if (list[i].gid == gid)
			g = &list[i];
	uint64_t by = g ? g->by : 0;
	free(list);
	if (!by)
		return inst_refuse(err, INST_NOT_FOUND, "grab", "no grab %llu of instance %llu",
		                   (unsigned long long)gid, (unsigned long long)id);
	/* the grabbed instance's token, the grabber's, or the admin token */
	if (registry_auth_write(app->reg, app->cfg->admin_token, id, token, len) != 1 &&
	    registry_auth_write(app->reg, app->cfg->admin_token, by, token, len) != 1)
		return inst_refuse(err, INST_FORBIDDEN, NULL,
		                   "wrong token: a grab is ended by the grabbed instance's token or "
		                   "the grabber's (%llu)",
		                   (unsigned long long)by);
	cmd_grab_t rq = {.g = {.gid = gid}};
	cmd_t cmd = {.kind = CMD_UNGRAB, .id = id, .grab = &rq};
	return from_sim(cmdq_submit(app->q, &cmd), &cmd, id, err);
}

/* A detached CMD_GRAB/CMD_UNGRAB whose answer the sim sends back through the frame ring. */
static inst_status_t post(app_t *app, cmd_kind_t kind, uint64_t id, const cmd_grab_t *g,
                          inst_err_t *err)
{
	if (__atomic_load_n(&app->draining, __ATOMIC_ACQUIRE))
		return inst_refuse(err, INST_CLOSED, NULL, "the server is shutting down");
	cmd_t *cmd = calloc(1, sizeof *cmd);
	cmd_grab_t *cg = malloc(sizeof *cg);
	if (!cmd || !cg) {
		free(cmd);
		free(cg);
		return inst_refuse(err, INST_NO_MEMORY, NULL, "out of memory");
	}
	*cg = *g;
	cg->reply = 1;
	cmd->kind = kind;
	cmd->id = id;
	cmd->grab = cg;
	cmdq_post_detached(app->q, cmd);
	return inst_ok(err);
}

inst_status_t instances_grab_post(app_t *app, const grab_info_t *req, uint64_t conn,
                                  uint32_t ref, inst_err_t *err)
{
	if (!registry_info(app->reg, req->instance, NULL))
		return inst_refuse(err, INST_NOT_FOUND, "id", "no instance %llu",
		                   (unsigned long long)req->instance);
	if (instances_grab_bone(pt_bone_name((pt_bone)req->bone)) < 0 || req->point < 1 ||
	    req->strand < 0)
		return inst_refuse(err, INST_INVALID, "bone", "bone: not a hand or finger bone");
	cmd_grab_t g = {.g = *req, .conn = conn, .ref = ref};
	return post(app, CMD_GRAB, req->instance, &g, err);
}

inst_status_t instances_release_post(app_t *app, uint64_t id, uint64_t gid, uint64_t conn,
                                     uint32_t ref, const uint64_t *may, int nmay,
                                     inst_err_t *err)
{
	cmd_grab_t g = {.g = {.gid = gid}, .conn = conn, .ref = ref};
	g.nmay = nmay < 64 ? nmay : 64;
	for (int i = 0; i < g.nmay; i++)
		g.may[i] = may[i];
	return post(app, CMD_UNGRAB, id, &g, err);
}

void instances_conn_gone(app_t *app, uint64_t conn)
{
	cmd_t *cmd = calloc(1, sizeof *cmd);
	cmd_grab_t *g = calloc(1, sizeof *g);
	if (!cmd || !g) {
		free(cmd);
		free(g);
		return; /* the hands still go stale and end their grabs within the hold time */
	}
	g->conn = conn;
	cmd->kind = CMD_CONN_GONE;
	cmd->grab = g;
	cmdq_post_detached(app->q, cmd);
}
