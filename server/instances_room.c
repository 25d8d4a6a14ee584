/* The door, continued (instances.h): a room's settings, its wind. A write keeps the
 * door's order under its writer lock: the store (rooms table, durable), the registry (the
 * edges' copy, which GET reads), then CMD_WIND to the sim, which gives the zones to every
 * instance of the room at a tick boundary (sim_wind.c); outside the lock it waits for the
 * tick. If the sim cannot (out of memory), store and registry are rolled back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instances.h"
#include "instances_internal.h"
#include "jutil.h"
#include "log.h"
#include "ponytail/schema.h"

static const char EMPTY[] = "{\"zones\":[]}";

/* A room name as a definition's "room" takes it (core/SCHEMA.md), non-empty. */
static inst_status_t check_room(const char *room, inst_err_t *err)
{
	size_t n = strnlen(room, PT_NAME_MAX);
	int ok = n > 0 && n < PT_NAME_MAX;
	for (size_t i = 0; ok && i < n; i++) {
		char c = room[i];
		ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		     c == '_' || c == '.' || c == '-';
	}
	if (!ok)
		return inst_refuse(err, INST_INVALID, "room",
		            "room: expected 1 to 63 bytes of A-Z a-z 0-9 _ . - (a definition's "
		            "\"room\")");
	return INST_OK;
}

inst_status_t instances_room_authorize(const app_t *app, const char *room, const char *token,
                                       size_t len, inst_err_t *err)
{
	if (check_room(room, err) != INST_OK)
		return err->status;
	const char *admin = app->cfg->admin_token;
	if (registry_auth_room(app->reg, admin, room, token, len) == 1)
		return inst_ok(err);
	if (admin && *admin)
		return inst_refuse(err, INST_FORBIDDEN, NULL, "a room's settings need the --admin-token");
	return inst_refuse(err, INST_FORBIDDEN, NULL,
	            "a room's settings need the token of an instance in room '%s'", room);
}

inst_status_t instances_wind_get(const app_t *app, const char *room, char **doc,
                                 inst_err_t *err)
{
	*doc = NULL;
	if (check_room(room, err) != INST_OK)
		return err->status;
	int oom = 0;
	*doc = registry_room_doc(app->reg, room, &oom);
	if (!*doc && !oom)
		*doc = strdup(EMPTY);
	if (!*doc)
		return inst_refuse(err, INST_NO_MEMORY, NULL, "out of memory");
	return inst_ok(err);
}

/* The new document: body, or the stored one patched by it; parsed into z / n and written
 * canonically into *text. INST_OK or the error. */
static inst_status_t new_doc(const app_t *app, const char *room, const json_t *body, int merge,
                             pt_wind_zone *z, int *n, char **text, inst_err_t *err)
{
	json_t *doc = NULL;
	if (merge) {
		char *old = NULL;
		if (instances_wind_get(app, room, &old, err) != INST_OK)
			return err->status;
		json_t *cur = json_loads(old, 0, NULL);
		free(old);
		doc = cur ? jutil_merge_patch(cur, body) : NULL;
		json_decref(cur);
	} else {
		doc = json_deep_copy(body);
	}
	if (!doc)
		return inst_refuse(err, INST_NO_MEMORY, NULL, "out of memory");
	pt_error e;
	int rc = pt_schema_wind_parse(doc, z, n, &e);
	json_decref(doc);
	if (rc != 0) {
		return inst_refuse(err, INST_INVALID, e.field, "%s%s%.280s", e.field, *e.field ? ": " : "",
		            e.message);
	}
	json_t *canon = pt_schema_wind_dump(z, *n);
	*text = canon ? json_dumps(canon, JSON_COMPACT | PT_SCHEMA_DUMP_FLAGS) : NULL;
	json_decref(canon);
	if (!*text)
		return inst_refuse(err, INST_NO_MEMORY, NULL, "out of memory");
	return INST_OK;
}

inst_status_t instances_wind_set(app_t *app, const char *room, const json_t *body, int merge,
                                 const char *route_room, char **doc, inst_err_t *err)
{
	*doc = NULL;
	if (check_room(room, err) != INST_OK)
		return err->status;
	if (route_room && strcmp(route_room, room) != 0)
		return inst_refuse(err, INST_INVALID, "room",
		            "room: '%s' differs from '%s', the room this request was routed by", room,
		            route_room);
	pt_wind_zone z[PT_MAX_WIND_ZONES];
	int n = 0;
	char *text = NULL, *old = NULL;
	pthread_mutex_lock(&inst_writer);
	inst_status_t st = new_doc(app, room, body, merge, z, &n, &text, err);
	if (st != INST_OK) {
		pthread_mutex_unlock(&inst_writer);
		return st;
	}
	if (__atomic_load_n(&app->draining, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&inst_writer);
		free(text);
		return inst_refuse(err, INST_CLOSED, NULL, "the server is shutting down");
	}
	int oom = 0;
	old = registry_room_doc(app->reg, room, &oom);
	if (oom) {
		pthread_mutex_unlock(&inst_writer);
		free(text);
		return inst_refuse(err, INST_NO_MEMORY, NULL, "out of memory");
	}
	/* no zones: no row (a room without wind is the default) */
	const char *keep = n > 0 ? text : NULL;
	if ((old ? keep && strcmp(old, keep) == 0 : !keep)) { /* nothing changes */
		pthread_mutex_unlock(&inst_writer);
		free(old);
		*doc = text;
		return inst_ok(err);
	}
	if (store_room_put(app->store, room, keep, (int64_t)time(NULL)) != 0 ||
	    registry_room_put(app->reg, room, keep) != 0) {
		store_room_put(app->store, room, old, (int64_t)time(NULL));
		pthread_mutex_unlock(&inst_writer);
		free(old), free(text);
		return inst_refuse(err, INST_STORE, NULL, "the store could not save the room's wind");
	}
	cmd_t cmd = {.kind = CMD_WIND, .zones = z, .nzones = n};
	snprintf(cmd.room, sizeof cmd.room, "%s", room);
	cmdq_push(app->q, &cmd);
	pthread_mutex_unlock(&inst_writer);
	cmd_result_t r = cmdq_wait(app->q, &cmd);
	if (r == CMD_NO_MEMORY) {
		pthread_mutex_lock(&inst_writer);
		store_room_put(app->store, room, old, (int64_t)time(NULL));
		registry_room_put(app->reg, room, old);
		pthread_mutex_unlock(&inst_writer);
	}
	free(old);
	if (r != CMD_OK) {
		free(text);
		return inst_refuse(err, r == CMD_CLOSED ? INST_CLOSED : INST_NO_MEMORY, NULL, "%s",
		            r == CMD_CLOSED ? "the server is shutting down" : "out of memory");
	}
	*doc = text;
	return inst_ok(err);
}

/* store_room_load callback: one room's wind into the registry and the sim. */
static int load_room(void *ctx, const char *room, const char *wind)
{
	app_t *app = ctx;
	pt_wind_zone z[PT_MAX_WIND_ZONES];
	int n = 0;
	pt_error e = {0};
	json_t *j = json_loads(wind, 0, NULL);
	int rc = j ? pt_schema_wind_parse(j, z, &n, &e) : -1;
	json_decref(j);
	if (rc != 0) {
		LOG(LOG_ERROR, "stored wind of room '%s' no longer loads (%s: %s): skipped, row kept",
		    room, e.field, e.message);
		return 0;
	}
	if (registry_room_put(app->reg, room, wind) != 0 || sim_preload_wind(app->sim, room, z, n)) {
		LOG(LOG_ERROR, "out of memory loading the wind of room '%s'", room);
		return -1;
	}
	return 0;
}

int instances_load_rooms(app_t *app)
{
	return store_room_load(app->store, load_room, app);
}
