/* The door, continued (instances.h): an instance's avatar file and the import of one.
 *
 * The daemon keeps one avatar (.vrm, as uploaded) per instance so that every visitor of a
 * room can draw everyone's avatar with the server's hair on it. It lives in the store's
 * avatars table (never in memory beyond a request), is replaced by a new upload and is
 * deleted with its instance (a foreign key with ON DELETE CASCADE, which also makes an
 * upload that races a delete fail as "no instance" instead of leaving an orphan).
 *
 * An upload is accepted only when the importer accepts it (vrm_import,
 * ponytail/vrm_import.h: the schema library's, the code of `ponytail import-vrm` too): a
 * GLB whose chunks are in bounds, and so is everything read of it (the node graph, the
 * nodes' meshes and skins, their accessors and buffer views: what a viewer loads;
 * core/schema/vrm/vrm_gltf.h), VRM 1.0 or 0.x, with at least one spring-bone chain that
 * fits an instance. So what a viewer downloads is a file the avatar page can import too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "instances.h"
#include "instances_internal.h"
#include "log.h"
#include "ponytail/vrm_import.h"
#include "shared_limits.h"

static inst_status_t no_instance(inst_err_t *err, uint64_t id)
{
	char msg[64];
	snprintf(msg, sizeof msg, "no instance %llu", (unsigned long long)id);
	return inst_refuse(err, INST_NOT_FOUND, "id", "%s", msg);
}

inst_status_t instances_import_vrm(const app_t *app, const uint8_t *glb, size_t len,
                                   json_t **definition, json_t **report, inst_err_t *err)
{
	*definition = *report = NULL;
	if (len > (size_t)app->cfg->max_avatar) {
		char msg[96];
		snprintf(msg, sizeof msg, "body: %zu bytes; avatars are at most %d (--max-avatar)",
		         len, app->cfg->max_avatar);
		return inst_refuse(err, INST_INVALID, "body", "%s", msg);
	}
	char why[300], msg[384];
	vrm_report rep = {0};
	/* chains past what a frame carries are dropped with a warning, head chains first */
	json_t *def = vrm_import_max(glb, len, SERVER_MAX_STRANDS, &rep, why, sizeof why);
	if (!def) {
		snprintf(msg, sizeof msg, "body: not an avatar Ponytail can import: %s", why);
		return inst_refuse(err, INST_INVALID, "body", "%s", msg);
	}
	*definition = def;
	*report = rep.json; /* the report's reference moves to the caller */
	rep.json = NULL;
	return inst_ok(err);
}

inst_status_t instances_avatar_put(app_t *app, uint64_t id, const uint8_t *glb, size_t len,
                                   inst_err_t *err)
{
	if (!registry_info(app->reg, id, NULL))
		return no_instance(err, id);
	json_t *def, *rep;
	inst_status_t st = instances_import_vrm(app, glb, len, &def, &rep, err);
	json_decref(def);
	json_decref(rep);
	if (st != INST_OK)
		return st;
	if (__atomic_load_n(&app->draining, __ATOMIC_ACQUIRE))
		return inst_refuse(err, INST_CLOSED, NULL, "the server is shutting down");
	int rc = store_avatar_put(app->store, id, glb, len, (int64_t)time(NULL));
	if (rc == 1)
		return no_instance(err, id); /* deleted meanwhile */
	if (rc != 0)
		return inst_refuse(err, INST_STORE, NULL, "the store could not save the avatar");
	LOG(LOG_INFO, "instance %llu: avatar of %zu bytes stored", (unsigned long long)id, len);
	return inst_ok(err);
}

inst_status_t instances_avatar_get(const app_t *app, uint64_t id, uint8_t **glb, size_t *len,
                                   inst_err_t *err)
{
	*glb = NULL;
	*len = 0;
	if (!registry_info(app->reg, id, NULL))
		return no_instance(err, id);
	int rc = store_avatar_get(app->store, id, glb, len);
	if (rc < 0)
		return inst_refuse(err, INST_STORE, NULL, "the store could not read the avatar");
	if (rc == 0) {
		char msg[96];
		snprintf(msg, sizeof msg, "instance %llu has no avatar", (unsigned long long)id);
		return inst_refuse(err, INST_NOT_FOUND, NULL, "%s", msg);
	}
	return inst_ok(err);
}

int64_t instances_avatar_size(const app_t *app, uint64_t id)
{
	int64_t n = store_avatar_size(app->store, id);
	return n < 0 ? -1 : n;
}
