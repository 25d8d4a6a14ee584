/* Registry: a sorted array of entries (public ids only grow, so inserts append and a
 * lookup is a binary search). See registry.h. */
#include "registry.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry_t {
	reg_info_t info;
	char *doc;
	uint8_t hash[TOKEN_HASH_LEN];
} entry_t;

typedef struct room_t {
	char room[PT_NAME_MAX];
	char *doc;
} room_t;

struct registry_t {
	pthread_rwlock_t lock;
	entry_t *e;
	int n, cap;
	room_t *rooms; /* rooms with settings, unordered (a few) */
	int nrooms, cap_rooms;
};

registry_t *registry_create(void)
{
	registry_t *r = calloc(1, sizeof *r);
	if (!r)
		return NULL;
	pthread_rwlock_init(&r->lock, NULL);
	return r;
}

void registry_destroy(registry_t *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->n; i++)
		free(r->e[i].doc);
	free(r->e);
	for (int i = 0; i < r->nrooms; i++)
		free(r->rooms[i].doc);
	free(r->rooms);
	pthread_rwlock_destroy(&r->lock);
	free(r);
}

/* Index of id, or -(insertion point) - 1. Caller holds the lock. */
static int find(const registry_t *r, uint64_t id)
{
	int lo = 0, hi = r->n - 1;
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		if (r->e[mid].info.id == id)
			return mid;
		if (r->e[mid].info.id < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -lo - 1;
}

int registry_put(registry_t *r, const reg_info_t *info, const char *doc,
                 const uint8_t hash[TOKEN_HASH_LEN])
{
	char *copy = strdup(doc);
	if (!copy)
		return -1;
	pthread_rwlock_wrlock(&r->lock);
	int i = find(r, info->id);
	if (i >= 0) {
		free(r->e[i].doc);
		r->e[i].doc = copy;
		r->e[i].info = *info;
		if (hash)
			memcpy(r->e[i].hash, hash, TOKEN_HASH_LEN);
		pthread_rwlock_unlock(&r->lock);
		return 0;
	}
	if (r->n == r->cap) {
		int nc = r->cap ? r->cap * 2 : 64;
		entry_t *ne = realloc(r->e, (size_t)nc * sizeof *ne);
		if (!ne) {
			pthread_rwlock_unlock(&r->lock);
			free(copy);
			return -1;
		}
		r->e = ne;
		r->cap = nc;
	}
	i = -i - 1;
	memmove(&r->e[i + 1], &r->e[i], (size_t)(r->n - i) * sizeof *r->e);
	r->e[i].info = *info;
	r->e[i].doc = copy;
	if (hash)
		memcpy(r->e[i].hash, hash, TOKEN_HASH_LEN);
	else
		memset(r->e[i].hash, 0, TOKEN_HASH_LEN);
	r->n++;
	pthread_rwlock_unlock(&r->lock);
	return 0;
}

int registry_remove(registry_t *r, uint64_t id)
{
	pthread_rwlock_wrlock(&r->lock);
	int i = find(r, id);
	if (i >= 0) {
		free(r->e[i].doc);
		memmove(&r->e[i], &r->e[i + 1], (size_t)(r->n - i - 1) * sizeof *r->e);
		r->n--;
	}
	pthread_rwlock_unlock(&r->lock);
	return i >= 0;
}

char *registry_doc(registry_t *r, uint64_t id, reg_info_t *info, int *oom)
{
	char *doc = NULL;
	if (oom)
		*oom = 0;
	pthread_rwlock_rdlock(&r->lock);
	int i = find(r, id);
	if (i >= 0) {
		doc = strdup(r->e[i].doc);
		if (!doc && oom)
			*oom = 1;
		if (info)
			*info = r->e[i].info;
	}
	pthread_rwlock_unlock(&r->lock);
	return doc;
}

int registry_info(registry_t *r, uint64_t id, reg_info_t *info)
{
	pthread_rwlock_rdlock(&r->lock);
	int i = find(r, id);
	if (i >= 0 && info)
		*info = r->e[i].info;
	pthread_rwlock_unlock(&r->lock);
	return i >= 0;
}

int registry_auth(registry_t *r, uint64_t id, const char *token, size_t len)
{
	uint8_t h[TOKEN_HASH_LEN];
	token_hash(token, len, h); /* outside the lock: hashing is the slow part */
	pthread_rwlock_rdlock(&r->lock);
	int i = find(r, id);
	int rc = i < 0 ? -1 : token_hash_equal(h, r->e[i].hash);
	pthread_rwlock_unlock(&r->lock);
	return rc;
}

int registry_auth_write(registry_t *r, const char *admin, uint64_t id, const char *token,
                        size_t len)
{
	if (admin && *admin) {
		uint8_t a[TOKEN_HASH_LEN], b[TOKEN_HASH_LEN];
		token_hash(admin, strlen(admin), a);
		token_hash(token, len, b);
		if (token_hash_equal(a, b))
			return registry_info(r, id, NULL) ? 1 : -1;
	}
	return registry_auth(r, id, token, len);
}

int registry_auth_room(registry_t *r, const char *admin, const char *room, const char *token,
                       size_t len)
{
	uint8_t h[TOKEN_HASH_LEN];
	token_hash(token, len, h);
	if (admin && *admin) {
		uint8_t a[TOKEN_HASH_LEN];
		token_hash(admin, strlen(admin), a);
		return token_hash_equal(a, h);
	}
	int ok = 0;
	pthread_rwlock_rdlock(&r->lock);
	for (int i = 0; i < r->n; i++) /* every one compared: no early exit on a match */
		ok |= strcmp(r->e[i].info.room, room) == 0 && token_hash_equal(h, r->e[i].hash);
	pthread_rwlock_unlock(&r->lock);
	return ok;
}

static int room_find(const registry_t *r, const char *room)
{
	for (int i = 0; i < r->nrooms; i++)
		if (strcmp(r->rooms[i].room, room) == 0)
			return i;
	return -1;
}

int registry_room_put(registry_t *r, const char *room, const char *doc)
{
	char *copy = doc ? strdup(doc) : NULL;
	if (doc && !copy)
		return -1;
	pthread_rwlock_wrlock(&r->lock);
	int i = room_find(r, room);
	if (i < 0 && copy) {
		if (r->nrooms == r->cap_rooms) {
			int nc = r->cap_rooms ? 2 * r->cap_rooms : 8;
			room_t *nr = realloc(r->rooms, (size_t)nc * sizeof *nr);
			if (!nr) {
				pthread_rwlock_unlock(&r->lock);
				free(copy);
				return -1;
			}
			r->rooms = nr, r->cap_rooms = nc;
		}
		i = r->nrooms++;
		snprintf(r->rooms[i].room, sizeof r->rooms[i].room, "%s", room);
		r->rooms[i].doc = NULL;
	}
	if (i >= 0) {
		free(r->rooms[i].doc);
		r->rooms[i].doc = copy;
		if (!copy)
			r->rooms[i] = r->rooms[--r->nrooms];
	}
	pthread_rwlock_unlock(&r->lock);
	return 0;
}

char *registry_room_doc(registry_t *r, const char *room, int *oom)
{
	pthread_rwlock_rdlock(&r->lock);
	int i = room_find(r, room);
	char *doc = i >= 0 ? strdup(r->rooms[i].doc) : NULL;
	if (i >= 0 && !doc && oom)
		*oom = 1;
	pthread_rwlock_unlock(&r->lock);
	return doc;
}

int registry_count(registry_t *r)
{
	pthread_rwlock_rdlock(&r->lock);
	int n = r->n;
	pthread_rwlock_unlock(&r->lock);
	return n;
}

int registry_list(registry_t *r, const char *room, reg_info_t **out)
{
	pthread_rwlock_rdlock(&r->lock);
	reg_info_t *a = malloc(((size_t)r->n + 1) * sizeof *a);
	int n = 0;
	if (a)
		for (int i = 0; i < r->n; i++)
			if (!room || strcmp(room, r->e[i].info.room) == 0)
				a[n++] = r->e[i].info;
	pthread_rwlock_unlock(&r->lock);
	*out = a;
	return a ? n : -1;
}
