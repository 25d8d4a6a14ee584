/* Persistence: instance definitions and token hashes in SQLite (WAL).
 *
 * One table per kind, in <data>/ponytail.db: instances(id INTEGER PRIMARY KEY
 * AUTOINCREMENT, doc TEXT, token_hash BLOB, created_at, updated_at), meta, avatars and
 * rooms (below). The id column IS the public instance
 * id used by REST and the wire protocol: AUTOINCREMENT never hands out an id twice, even
 * after deletes and restarts, so a stale id held by a client can never name a newer
 * instance. (Core's pt_id is internal to the sim thread and is not persisted.)
 *
 * Ids name their node (scale-out, docker/README.md): with --node-id N the ids are
 * N * 10^12 + 1, N * 10^12 + 2, ... so the decimal id's digits above the last twelve are the
 * node (no digits: node 0, a lone daemon, whose ids are 1, 2, ...). A proxy can route a
 * request for an instance by the id alone, with a regular expression on the path. The
 * largest node id keeps every id below 2^53, exact in a JavaScript number.
 *
 * Durability: journal_mode=WAL with synchronous=FULL, so every committed write has been
 * fsync'ed when the call returns: a created or patched instance survives kill -9 and a
 * power cut once the REST call that made it has answered.
 *
 * Threading: every function may be called from any thread; one mutex serialises them (a
 * single connection; writes are one fsync each, reads happen only at start-up).
 */
#ifndef SERVER_STORE_H
#define SERVER_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "token.h"

typedef struct store_t store_t;

#define STORE_NODE_SPAN 1000000000000ULL /* ids per node: 10^12 */
enum { STORE_NODE_MAX = 9000 };          /* 9001 * 10^12 < 2^53 */

/* Opens (creating the directory and the schema) <dir>/ponytail.db as node `node`
 * (0..STORE_NODE_MAX): new ids come from that node's range. A store that already holds,
 * or has handed out, ids of another node's range is refused (a data directory moved to
 * the wrong node would serve ids the proxy routes elsewhere). First, before anything is
 * written, PRAGMA quick_check: a store that is corrupt or not a database is refused and
 * left byte for byte as it was. NULL with a message in err on any failure. Close with store_close (NULL ok), which checkpoints the WAL. */
store_t *store_open(const char *dir, int node, char *err, size_t errlen);
void store_close(store_t *s);

/* Inserts a new instance; *id receives its new public id. Returns 0 or -1 (logged). */
int store_insert(store_t *s, const char *doc, const uint8_t hash[TOKEN_HASH_LEN], int64_t now,
                 uint64_t *id);

/* Replaces the definition of `id`. Returns 0, or -1 on error or when id is unknown. */
int store_update(store_t *s, uint64_t id, const char *doc, int64_t now);

/* Deletes `id`. Returns 0 (also when it was already gone) or -1. */
int store_delete(store_t *s, uint64_t id);

/* Calls fn for every stored instance in id order (doc borrowed for the call). Stops and
 * returns -1 when fn returns non-zero or on a read error; 0 otherwise. */
typedef int (*store_row_fn)(void *ctx, uint64_t id, const char *doc,
                            const uint8_t hash[TOKEN_HASH_LEN], int64_t created_at,
                            int64_t updated_at);
int store_load(store_t *s, store_row_fn fn, void *ctx);

/* meta(key, value) as unsigned integers: main.c keeps the tick floor there. get returns 1
 * and sets *v when the key exists, 0 when it does not, -1 on error; set returns 0 or -1
 * (durable when it returns, like every write). */
/* Avatars: an instance's avatar file (a .vrm, as uploaded), in table avatars(id REFERENCES
 * instances ON DELETE CASCADE, glb BLOB, updated_at): deleting the instance deletes it.
 * put: 0 stored (replacing the old one, durable), 1 no such instance (the foreign key),
 * -1 error. get: 1 found (*glb malloc'ed, caller frees), 0 none, -1 error. size: the
 * bytes, -1 none, -2 error. */
int store_avatar_put(store_t *s, uint64_t id, const uint8_t *glb, size_t len, int64_t now);
int store_avatar_get(store_t *s, uint64_t id, uint8_t **glb, size_t *len);
int64_t store_avatar_size(store_t *s, uint64_t id);

/* Rooms: a room's settings in table rooms(room TEXT PRIMARY KEY, wind TEXT, updated_at):
 * its room wind's canonical JSON. put replaces it (wind NULL deletes the row), 0 or -1,
 * durable when it returns; load calls fn for every row in room order (strings borrowed for
 * the call) and returns 0, or -1 when fn returns non-zero or on a read error. */
int store_room_put(store_t *s, const char *room, const char *wind, int64_t now);
typedef int (*store_room_fn)(void *ctx, const char *room, const char *wind);
int store_room_load(store_t *s, store_room_fn fn, void *ctx);

int store_meta_get_u64(store_t *s, const char *key, uint64_t *v);
int store_meta_set_u64(store_t *s, const char *key, uint64_t v);

#endif
