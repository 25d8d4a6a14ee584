/* The edges' view of the instances: public id -> stored definition, name, room and token
 * hash; and of the rooms' settings (room -> room wind document). Only instances.c (the door) reads and writes it: it writes through to the store
 * and keeps both in step with the sim; REST and the WebSocket thread read it through
 * instances_get/list/authorize/pose. It never holds simulation state: that lives only in
 * the sim thread.
 *
 * Threading: any thread. Lookups take a read lock; changes take the write lock. The
 * door serialises its writers with its own lock, taken before this one (instances.c).
 */
#ifndef SERVER_REGISTRY_H
#define SERVER_REGISTRY_H

#include <stddef.h>
#include <stdint.h>

#include "ponytail/types.h"
#include "token.h"

typedef struct registry_t registry_t;

typedef struct reg_info_t {
	uint64_t id;
	char name[PT_NAME_MAX];
	char room[PT_NAME_MAX];
	int driven; /* the definition has a "driver": head poses from clients are refused */
	int64_t created_at, updated_at; /* unix seconds */
} reg_info_t;

registry_t *registry_create(void);
void registry_destroy(registry_t *r); /* NULL ok */

/* Inserts or replaces `info->id` with a copy of doc and hash (hash NULL on replace keeps
 * the old one). Returns 0, or -1 when out of memory (nothing changed). */
int registry_put(registry_t *r, const reg_info_t *info, const char *doc,
                 const uint8_t hash[TOKEN_HASH_LEN]);

/* Returns 1 if removed, 0 if unknown. */
int registry_remove(registry_t *r, uint64_t id);

/* A malloc'ed copy of the stored definition (caller frees) and its info, or NULL when the
 * id is unknown (or out of memory: *oom = 1). info and oom may be NULL. */
char *registry_doc(registry_t *r, uint64_t id, reg_info_t *info, int *oom);

/* Info only. Returns 1 found, 0 unknown. */
int registry_info(registry_t *r, uint64_t id, reg_info_t *info);

/* Checks a presented token against the instance's hash in constant time.
 * Returns 1 match, 0 mismatch, -1 unknown id. */
int registry_auth(registry_t *r, uint64_t id, const char *token, size_t len);

/* The write check of REST and WebSocket alike: the instance's own token, or `admin`
 * (the --admin-token; "" when none is configured). Same returns as registry_auth. */
int registry_auth_write(registry_t *r, const char *admin, uint64_t id, const char *token,
                        size_t len);

/* The write check of a room's settings (the room wind): with an `admin` token configured,
 * that token only; without one, the token of any instance of the room. Returns 1 match,
 * 0 mismatch (also: no instance in the room). */
int registry_auth_room(registry_t *r, const char *admin, const char *room, const char *token,
                       size_t len);

/* A room's settings document (the room wind's canonical JSON, the store's rooms table):
 * put replaces it (doc NULL removes it), 0 or -1 out of memory (unchanged); get returns a
 * malloc'ed copy, or NULL when the room has none (*oom = 1 when out of memory; oom may be
 * NULL). */
int registry_room_put(registry_t *r, const char *room, const char *doc);
char *registry_room_doc(registry_t *r, const char *room, int *oom);

int registry_count(registry_t *r);

/* Copies the info of every instance (of `room`, or all when room is NULL), in id order,
 * into a malloc'ed array (*out, caller frees). Returns the count or -1 on no memory. */
int registry_list(registry_t *r, const char *room, reg_info_t **out);

#endif
