/* SQLite store: see store.h. */
#include "store.h"

#include <errno.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

struct store_t {
	sqlite3 *db;
	uint64_t id_end; /* first id beyond this node's range */
	pthread_mutex_t mu;
	sqlite3_stmt *ins, *upd, *del;
};

static const char *const schema =
    "PRAGMA journal_mode=WAL;"
    "PRAGMA synchronous=FULL;"
    "PRAGMA foreign_keys=ON;"
    "CREATE TABLE IF NOT EXISTS instances ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  doc TEXT NOT NULL,"
    "  token_hash BLOB NOT NULL,"
    "  created_at INTEGER NOT NULL,"
    "  updated_at INTEGER NOT NULL);"
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    /* an instance's avatar file (.vrm), gone with its instance */
    "CREATE TABLE IF NOT EXISTS avatars ("
    "  id INTEGER PRIMARY KEY REFERENCES instances(id) ON DELETE CASCADE,"
    "  glb BLOB NOT NULL,"
    "  updated_at INTEGER NOT NULL);"
    /* a room's settings: its room wind (server/README.md "Room wind"), no instance needed */
    "CREATE TABLE IF NOT EXISTS rooms ("
    "  room TEXT PRIMARY KEY,"
    "  wind TEXT NOT NULL,"
    "  updated_at INTEGER NOT NULL);"
    "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', '1');";

/* mkdir -p for the data directory. */
static int make_dirs(const char *dir)
{
	char path[1024];
	size_t n = strlen(dir);
	if (n == 0 || n >= sizeof path)
		return -1;
	memcpy(path, dir, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		char c = path[i];
		path[i] = '\0';
		if (mkdir(path, 0755) != 0 && errno != EEXIST)
			return -1;
		path[i] = c;
	}
	return 0;
}

/* One integer from a query, or -1 when it yields NULL or no row. */
static sqlite3_int64 query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	sqlite3_int64 v = -1;
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* Checks that every id the store holds or has handed out is node's, then makes the next
 * AUTOINCREMENT id the first of node's range. Returns 0, or -1 with err. */
static int claim_node_range(store_t *s, const char *path, int node, char *err, size_t errlen)
{
	uint64_t lo = (uint64_t)node * STORE_NODE_SPAN;
	s->id_end = lo + STORE_NODE_SPAN;
	sqlite3_int64 seq =
	    query_int(s->db, "SELECT seq FROM sqlite_sequence WHERE name = 'instances'");
	sqlite3_int64 hi = query_int(s->db, "SELECT MAX(id) FROM instances");
	sqlite3_int64 low = query_int(s->db, "SELECT MIN(id) FROM instances");
	if (seq > hi)
		hi = seq;
	if ((hi >= 0 && (uint64_t)hi >= s->id_end) || (low >= 0 && (uint64_t)low <= lo)) {
		sqlite3_int64 bad = (low >= 0 && (uint64_t)low <= lo) ? low : hi;
		snprintf(err, errlen,
		         "%s: holds instance id %lld, of node %llu's range, but this daemon is "
		         "--node-id %d (each node needs its own data directory)",
		         path, (long long)bad,
		         (unsigned long long)((uint64_t)bad / STORE_NODE_SPAN), node);
		return -1;
	}
	if (node == 0 || (seq >= 0 && (uint64_t)seq >= lo))
		return 0;
	char sql[200];
	snprintf(sql, sizeof sql,
	         "DELETE FROM sqlite_sequence WHERE name = 'instances';"
	         "INSERT INTO sqlite_sequence(name, seq) VALUES ('instances', %llu);",
	         (unsigned long long)lo);
	char *msg = NULL;
	if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		snprintf(err, errlen, "%s: cannot claim node %d's ids: %s", path, node,
		         msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

/* PRAGMA quick_check before anything is written: a store that is corrupt or is not a
 * database stops start-up, and the file is left exactly as it was (no schema statements,
 * no checkpoint on close) for the operator to inspect or restore. Returns 0, or -1 with
 * the reason in err. */
static int check_store(sqlite3 *db, const char *path, char *err, size_t errlen)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, "PRAGMA quick_check(5)", -1, &st, NULL);
	char what[300] = "";
	size_t n = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *row = (const char *)sqlite3_column_text(st, 0);
		if (row && strcmp(row, "ok") == 0 && n == 0) {
			sqlite3_finalize(st);
			return 0;
		}
		int k = snprintf(what + n, sizeof what - n, "%s%s", n ? "; " : "", row ? row : "?");
		n = k < 0 ? n : n + (size_t)k < sizeof what ? n + (size_t)k : sizeof what - 1;
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_OK && rc != SQLITE_DONE && n == 0)
		snprintf(what, sizeof what, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	for (char *c = what; *c; c++)
		if (*c == '\n')
			*c = ' ';
	snprintf(err, errlen,
	         "%s is unreadable or corrupt (PRAGMA quick_check: %s); start-up stopped, "
	         "the file left untouched: restore a backup, or move it aside to start empty",
	         path, what[0] ? what : "no answer");
	return -1;
}

static int exists(const char *path, const char *suffix)
{
	char p[1200];
	struct stat st;
	snprintf(p, sizeof p, "%s%s", path, suffix);
	return stat(p, &st) == 0;
}

/* Opens s->db on path and checks it before anything is written. On failure the
 * connection is closed without a checkpoint, and the -wal and -shm files that opening
 * created (empty of data: nothing was written) are removed again, so the directory is
 * as it was. Returns 0, or -1 with err set. */
static int open_checked(store_t *s, const char *path, char *err, size_t errlen)
{
	int had_wal = exists(path, "-wal"), had_shm = exists(path, "-shm");
	if (sqlite3_open_v2(path, &s->db,
	                    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
	                    NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path, s->db ? sqlite3_errmsg(s->db) : "cannot open");
	} else {
		sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, (int *)NULL);
		sqlite3_busy_timeout(s->db, 5000);
		if (check_store(s->db, path, err, errlen) == 0) {
			sqlite3_db_config(s->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, (int *)NULL);
			return 0;
		}
	}
	sqlite3_close(s->db);
	s->db = NULL;
	char p[1200];
	if (!had_wal && snprintf(p, sizeof p, "%s-wal", path) > 0)
		unlink(p);
	if (!had_shm && snprintf(p, sizeof p, "%s-shm", path) > 0)
		unlink(p);
	return -1;
}

store_t *store_open(const char *dir, int node, char *err, size_t errlen)
{
	char path[1100];
	if (make_dirs(dir) != 0) {
		snprintf(err, errlen, "--data %s: cannot create directory: %s", dir,
		         strerror(errno));
		return NULL;
	}
	snprintf(path, sizeof path, "%s/ponytail.db", dir);
	store_t *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&s->mu, NULL);
	char *msg = NULL;
	if (open_checked(s, path, err, errlen) != 0) {
		store_close(s);
		return NULL;
	}
	if (sqlite3_exec(s->db, schema, NULL, NULL, &msg) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db,
	                       "INSERT INTO instances(doc, token_hash, created_at, updated_at) "
	                       "VALUES (?, ?, ?, ?)",
	                       -1, &s->ins, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "UPDATE instances SET doc = ?, updated_at = ? WHERE id = ?",
	                       -1, &s->upd, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(s->db, "DELETE FROM instances WHERE id = ?", -1, &s->del, NULL) !=
	        SQLITE_OK) {
		snprintf(err, errlen, "%s: %s", path,
		         msg     ? msg
		         : s->db ? sqlite3_errmsg(s->db)
		                 : "cannot open");
		sqlite3_free(msg);
		store_close(s);
		return NULL;
	}
	if (claim_node_range(s, path, node, err, errlen) != 0) {
		store_close(s);
		return NULL;
	}
	LOG(LOG_INFO, "opened %s (WAL, synchronous=FULL), node %d: ids from %llu", path, node,
	    (unsigned long long)((uint64_t)node * STORE_NODE_SPAN + 1));
	return s;
}

void store_close(store_t *s)
{
	if (!s)
		return;
	sqlite3_finalize(s->ins);
	sqlite3_finalize(s->upd);
	sqlite3_finalize(s->del);
	if (s->db) {
		/* Fold the WAL back into the database so the directory is one file at rest. */
		sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, NULL, NULL);
		if (sqlite3_close(s->db) != SQLITE_OK)
			LOG(LOG_WARN, "close: %s", sqlite3_errmsg(s->db));
	}
	pthread_mutex_destroy(&s->mu);
	free(s);
}

/* Runs a prepared write; returns 0 or -1 (logged). The statement is reset either way. */
static int run(store_t *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);
	if (rc != SQLITE_DONE)
		LOG(LOG_ERROR, "%s: %s", what, sqlite3_errmsg(s->db));
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

int store_insert(store_t *s, const char *doc, const uint8_t hash[TOKEN_HASH_LEN], int64_t now,
                 uint64_t *id)
{
	pthread_mutex_lock(&s->mu);
	sqlite3_bind_text(s->ins, 1, doc, -1, SQLITE_STATIC);
	sqlite3_bind_blob(s->ins, 2, hash, TOKEN_HASH_LEN, SQLITE_STATIC);
	sqlite3_bind_int64(s->ins, 3, now);
	sqlite3_bind_int64(s->ins, 4, now);
	int rc = run(s, s->ins, "insert");
	if (rc == 0)
		*id = (uint64_t)sqlite3_last_insert_rowid(s->db);
	if (rc == 0 && *id >= s->id_end) { /* 10^12 creates on one node: refuse, keep the range */
		LOG(LOG_ERROR, "insert: id %llu is beyond this node's range",
		    (unsigned long long)*id);
		sqlite3_bind_int64(s->del, 1, (sqlite3_int64)*id);
		run(s, s->del, "delete");
		rc = -1;
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

int store_update(store_t *s, uint64_t id, const char *doc, int64_t now)
{
	pthread_mutex_lock(&s->mu);
	sqlite3_bind_text(s->upd, 1, doc, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s->upd, 2, now);
	sqlite3_bind_int64(s->upd, 3, (sqlite3_int64)id);
	int rc = run(s, s->upd, "update");
	if (rc == 0 && sqlite3_changes(s->db) != 1)
		rc = -1;
	pthread_mutex_unlock(&s->mu);
	return rc;
}

int store_delete(store_t *s, uint64_t id)
{
	pthread_mutex_lock(&s->mu);
	sqlite3_bind_int64(s->del, 1, (sqlite3_int64)id);
	int rc = run(s, s->del, "delete");
	pthread_mutex_unlock(&s->mu);
	return rc;
}

int store_load(store_t *s, store_row_fn fn, void *ctx)
{
	sqlite3_stmt *st = NULL;
	int rc = 0;
	pthread_mutex_lock(&s->mu);
	if (sqlite3_prepare_v2(s->db,
	                       "SELECT id, doc, token_hash, created_at, updated_at FROM instances "
	                       "ORDER BY id",
	                       -1, &st, NULL) != SQLITE_OK) {
		LOG(LOG_ERROR, "load: %s", sqlite3_errmsg(s->db));
		pthread_mutex_unlock(&s->mu);
		return -1;
	}
	int step;
	while ((step = sqlite3_step(st)) == SQLITE_ROW) {
		const void *hash = sqlite3_column_blob(st, 2);
		const unsigned char *doc = sqlite3_column_text(st, 1);
		uint64_t id = (uint64_t)sqlite3_column_int64(st, 0);
		if (!doc || !hash || sqlite3_column_bytes(st, 2) != TOKEN_HASH_LEN) {
			LOG(LOG_ERROR, "load: instance %llu has a damaged row; skipped",
			    (unsigned long long)id);
			continue;
		}
		if (fn(ctx, id, (const char *)doc, hash, sqlite3_column_int64(st, 3),
		       sqlite3_column_int64(st, 4)) != 0) {
			rc = -1;
			break;
		}
	}
	if (rc == 0 && step != SQLITE_DONE) {
		LOG(LOG_ERROR, "load: %s", sqlite3_errmsg(s->db));
		rc = -1;
	}
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return rc;
}

int store_meta_get_u64(store_t *s, const char *key, uint64_t *v)
{
	sqlite3_stmt *st = NULL;
	pthread_mutex_lock(&s->mu);
	int rc = sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	int r = -1;
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			const char *t = (const char *)sqlite3_column_text(st, 0);
			*v = t ? strtoull(t, NULL, 10) : 0;
			r = 1;
		} else if (rc == SQLITE_DONE) {
			r = 0;
		}
	}
	if (r < 0)
		LOG(LOG_ERROR, "meta %s: %s", key, sqlite3_errmsg(s->db));
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int store_meta_set_u64(store_t *s, const char *key, uint64_t v)
{
	sqlite3_stmt *st = NULL;
	char text[24];
	snprintf(text, sizeof text, "%llu", (unsigned long long)v);
	pthread_mutex_lock(&s->mu);
	int rc = sqlite3_prepare_v2(s->db, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", -1,
	                            &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, text, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_DONE)
		LOG(LOG_ERROR, "meta %s: %s", key, sqlite3_errmsg(s->db));
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return rc == SQLITE_DONE ? 0 : -1;
}

/* ---- avatars ---------------------------------------------------------------------- */

int store_avatar_put(store_t *s, uint64_t id, const uint8_t *glb, size_t len, int64_t now)
{
	sqlite3_stmt *st = NULL;
	pthread_mutex_lock(&s->mu);
	int rc = sqlite3_prepare_v2(
	    s->db, "INSERT OR REPLACE INTO avatars(id, glb, updated_at) VALUES (?, ?, ?)", -1, &st,
	    NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_blob64(st, 2, glb, (sqlite3_uint64)len, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 3, now);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	int r = rc == SQLITE_DONE ? 0 : (rc & 0xff) == SQLITE_CONSTRAINT ? 1 : -1;
	if (r < 0)
		LOG(LOG_ERROR, "avatar %llu: %s", (unsigned long long)id, sqlite3_errmsg(s->db));
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int store_avatar_get(store_t *s, uint64_t id, uint8_t **glb, size_t *len)
{
	sqlite3_stmt *st = NULL;
	int r = -1;
	*glb = NULL;
	*len = 0;
	pthread_mutex_lock(&s->mu);
	int rc = sqlite3_prepare_v2(s->db, "SELECT glb FROM avatars WHERE id = ?", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_DONE) {
			r = 0;
		} else if (rc == SQLITE_ROW) {
			const void *b = sqlite3_column_blob(st, 0);
			int n = sqlite3_column_bytes(st, 0);
			*glb = malloc(n > 0 ? (size_t)n : 1);
			if (*glb) {
				if (n > 0)
					memcpy(*glb, b, (size_t)n);
				*len = (size_t)n;
				r = 1;
			}
		}
	}
	if (r < 0)
		LOG(LOG_ERROR, "avatar %llu: %s", (unsigned long long)id, sqlite3_errmsg(s->db));
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int64_t store_avatar_size(store_t *s, uint64_t id)
{
	sqlite3_stmt *st = NULL;
	int64_t r = -2;
	pthread_mutex_lock(&s->mu);
	int rc = sqlite3_prepare_v2(s->db, "SELECT length(glb) FROM avatars WHERE id = ?", -1, &st,
	                            NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, (sqlite3_int64)id);
	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		r = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : rc == SQLITE_DONE ? -1 : -2;
	}
	if (r == -2)
		LOG(LOG_ERROR, "avatar %llu: %s", (unsigned long long)id, sqlite3_errmsg(s->db));
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return r;
}

/* ---- rooms ------------------------------------------------------------------------- */

int store_room_put(store_t *s, const char *room, const char *wind, int64_t now)
{
	sqlite3_stmt *st = NULL;
	pthread_mutex_lock(&s->mu);
	int rc = sqlite3_prepare_v2(
	    s->db,
	    wind ? "INSERT OR REPLACE INTO rooms(room, wind, updated_at) VALUES (?, ?, ?)"
	         : "DELETE FROM rooms WHERE room = ?",
	    -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, room, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK && wind)
		rc = sqlite3_bind_text(st, 2, wind, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK && wind)
		rc = sqlite3_bind_int64(st, 3, now);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	int r = rc == SQLITE_DONE ? 0 : -1;
	if (r < 0)
		LOG(LOG_ERROR, "room %s: %s", room, sqlite3_errmsg(s->db));
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return r;
}

int store_room_load(store_t *s, store_room_fn fn, void *ctx)
{
	sqlite3_stmt *st = NULL;
	pthread_mutex_lock(&s->mu);
	int rc = sqlite3_prepare_v2(s->db, "SELECT room, wind FROM rooms ORDER BY room", -1, &st,
	                            NULL);
	int r = rc == SQLITE_OK ? 0 : -1;
	while (r == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *room = (const char *)sqlite3_column_text(st, 0);
		const char *wind = (const char *)sqlite3_column_text(st, 1);
		if (room && wind && fn(ctx, room, wind) != 0)
			r = -1;
	}
	if (r == 0 && rc != SQLITE_DONE)
		r = -1;
	if (r < 0 && rc != SQLITE_ROW)
		LOG(LOG_ERROR, "rooms: %s", sqlite3_errmsg(s->db));
	sqlite3_finalize(st);
	pthread_mutex_unlock(&s->mu);
	return r;
}
