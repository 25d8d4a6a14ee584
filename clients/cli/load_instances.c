/* `ponytail load`: the instances of a run -- created over REST (and deleted after), or
 * found in existing rooms (--reuse). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "load.h"

static int grow_instances(load_t *L, long n)
{
	L->ids = realloc(L->ids, (size_t)n * sizeof *L->ids);
	L->tokens = realloc(L->tokens, (size_t)n * sizeof *L->tokens);
	L->inst_room = realloc(L->inst_room, (size_t)n * sizeof *L->inst_room);
	if (!L->ids || !L->tokens || !L->inst_room) {
		fprintf(stderr, "ponytail load: out of memory\n");
		return -1;
	}
	return 0;
}

/* A REST write that waits out the daemon's --write-rate (429) for a bounded time. */
static int call_retry(const remote_t *r, const char *method, const char *path, const char *body,
                      http_resp_t *h)
{
	for (int attempt = 0;; attempt++) {
		if (remote_call(r, method, path, body, "application/json", 1, h) != 0)
			return -1;
		if (h->status != 429 || attempt >= 100 || load_stop > 1)
			return 0;
		http_free(h);
		nanosleep(&(struct timespec){0, 50000000}, NULL);
	}
}

int load_create_instances(load_t *L)
{
	json_t *tmpl;
	if (L->instance_path) {
		json_error_t e;
		char *text = remote_read_file("load", L->instance_path, NULL);
		if (!text)
			return -1;
		tmpl = json_loads(text, JSON_REJECT_DUPLICATES, &e);
		free(text);
		if (!json_is_object(tmpl)) {
			fprintf(stderr, "ponytail load: %s: %s\n", L->instance_path,
			        tmpl ? "expected a JSON object" : e.text);
			json_decref(tmpl);
			return -1;
		}
	} else {
		tmpl = json_object();
	}
	L->ninst = L->rooms * L->per_room;
	if (grow_instances(L, L->ninst) != 0) {
		json_decref(tmpl);
		return -1;
	}
	int rc = 0;
	for (long i = 0; i < L->ninst && rc == 0 && !load_stop; i++) {
		char name[128], room[128];
		long r = i / L->per_room;
		snprintf(room, sizeof room, "%s-%ld", L->prefix, r);
		snprintf(name, sizeof name, "%s-%ld-%ld", L->prefix, r, i % L->per_room);
		json_object_set_new(tmpl, "name", json_string(name));
		json_object_set_new(tmpl, "room", json_string(room));
		char *body = json_dumps(tmpl, JSON_COMPACT);
		http_resp_t h;
		remote_t rr = L->r;
		rr.room = room; /* a room-hashing proxy sends it to the node of its room */
		if (!body || call_retry(&rr, "POST", "/v1/instances", body, &h) != 0) {
			free(body);
			rc = -1;
			break;
		}
		free(body);
		json_t *j = h.status == 201 ? json_loads(h.body, 0, NULL) : NULL;
		const char *tok = json_string_value(json_object_get(j, "token"));
		json_int_t id = json_integer_value(json_object_get(j, "id"));
		if (!j || !tok || id <= 0 || strlen(tok) > 128) {
			if (h.status != 201)
				remote_print_error(&L->r, &h);
			else
				fprintf(stderr, "ponytail load: the server's answer to a create "
				                "lacks id/token\n");
			rc = -1;
		} else {
			L->ids[i] = (uint64_t)id;
			snprintf(L->tokens[i], sizeof L->tokens[i], "%s", tok);
			L->inst_room[i] = (int)r;
			L->created = i + 1;
		}
		json_decref(j);
		http_free(&h);
	}
	json_decref(tmpl);
	return load_stop ? -1 : rc;
}

int load_list_instances(load_t *L)
{
	L->ninst = 0;
	for (long r = 0; r < L->rooms; r++) {
		char path[200], room[128];
		snprintf(room, sizeof room, "%s-%ld", L->prefix, r);
		snprintf(path, sizeof path, "/v1/instances?room=%s", room);
		remote_t rr = L->r;
		rr.room = room;
		http_resp_t h;
		if (remote_call(&rr, "GET", path, NULL, NULL, 0, &h) != 0)
			return -1;
		json_t *j = h.status == 200 ? json_loads(h.body, 0, NULL) : NULL;
		const json_t *arr = json_object_get(j, "instances");
		size_t n = json_array_size(arr);
		if (h.status != 200)
			remote_print_error(&L->r, &h);
		else if (n == 0)
			fprintf(stderr, "ponytail load: --reuse: room %s-%ld has no instances\n",
			        L->prefix, r);
		int ok = h.status == 200 && n > 0 && grow_instances(L, L->ninst + (long)n) == 0;
		for (size_t i = 0; ok && i < n; i++) {
			L->ids[L->ninst] = (uint64_t)json_integer_value(
			    json_object_get(json_array_get(arr, i), "id"));
			snprintf(L->tokens[L->ninst], sizeof L->tokens[0], "%s",
			         L->r.token ? L->r.token : "");
			L->inst_room[L->ninst++] = (int)r;
		}
		json_decref(j);
		http_free(&h);
		if (!ok)
			return -1;
	}
	if (L->publishers > L->ninst ||
	    (L->publishers && (L->ninst + L->publishers - 1) / L->publishers > 64)) {
		fprintf(
		    stderr,
		    "ponytail load: --publishers %ld does not fit %ld instances (1 to 64 each)\n",
		    L->publishers, L->ninst);
		return -1;
	}
	return 0;
}

void load_delete_instances(load_t *L)
{
	long failed = 0;
	for (long i = 0; i < L->created; i++) {
		char path[64];
		snprintf(path, sizeof path, "/v1/instances/%llu", (unsigned long long)L->ids[i]);
		char room[128];
		snprintf(room, sizeof room, "%s-%d", L->prefix, L->inst_room[i]);
		remote_t r = L->r;
		r.token = L->tokens[i];
		r.room = room;
		http_resp_t h;
		if (call_retry(&r, "DELETE", path, NULL, &h) != 0 ||
		    (h.status != 204 && h.status != 404))
			failed++;
		http_free(&h);
	}
	if (failed)
		fprintf(stderr, "ponytail load: %ld of %ld instances could not be deleted\n",
		        failed, L->created);
}
