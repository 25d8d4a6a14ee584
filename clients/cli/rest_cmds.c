/* `ponytail create | list | get | patch | delete | reset`: the REST API of server/README.md from
 * the command line. Human-readable output by default, the server's JSON with --json; on
 * failure the server's error message and exit status 1. */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "args.h"
#include "commands.h"
#include "remote.h"

enum { NEEDS_ID = 1, NEEDS_FILE = 2, HAS_ROOM = 4, HAS_FRAME = 8, WRITES = 16 };

typedef struct rest_cmd_t {
	const char *name, *args, *what;
	int flags;
} rest_cmd_t;

static const rest_cmd_t cmds[] = {
    {"create", "FILE.json",
     "creates an instance from a definition (core/SCHEMA.md); prints\n"
     "its id and its write token (shown once)",
     NEEDS_FILE},
    {"list", "[--room R]", "lists the instances (of one room)", HAS_ROOM},
    {"get", "ID [--frame]",
     "shows an instance's definition, or with --frame its latest frame\n"
     "(server/README.md's frame JSON)",
     NEEDS_ID | HAS_FRAME | HAS_ROOM},
    {"patch", "ID FILE.json",
     "merge-patches an instance's parameters (applied at a tick\n"
     "boundary); needs --token",
     NEEDS_ID | NEEDS_FILE | WRITES | HAS_ROOM},
    {"delete", "ID", "deletes an instance; needs --token", NEEDS_ID | WRITES | HAS_ROOM},
    {"reset", "ID", "puts an instance back to its settled rest pose; needs --token",
     NEEDS_ID | WRITES | HAS_ROOM},
};

static void usage(const rest_cmd_t *c, FILE *out)
{
	fprintf(
	    out,
	    "usage: ponytail %s %s [--server URL] [--token T] [--json] [--timeout S]\n\n"
	    "%c%s.\n\n%s--json           print the server's JSON answer instead of a summary\n"
	    "%s%s\nExit status: 0 ok, 1 the server refused or cannot be reached (its message on\n"
	    "stderr), 2 bad arguments.\n",
	    c->name, c->args, toupper((unsigned char)c->what[0]), c->what + 1, remote_flags_help,
	    !(c->flags & HAS_ROOM) ? ""
	    : c->flags & NEEDS_ID
	        ? "--room R         the instance's room: routes the call through a proxy that\n"
	          "                 hashes rooms (docker/'s front nginx); not needed direct\n"
	        : "--room R         only the instances of room R (also routes, as above)\n",
	    c->flags & HAS_FRAME ? "--frame          the latest frame instead of the definition\n"
	                         : "");
}

/* Checks locally that a body is one JSON object, so that a typo is reported with its line
 * before anything is sent. */
static char *read_body(const char *cmd, const char *path, char *room, size_t room_cap)
{
	char *text = remote_read_file(cmd, path, NULL);
	if (!text)
		return NULL;
	json_error_t e;
	json_t *j = json_loads(text, JSON_REJECT_DUPLICATES, &e);
	if (!j || !json_is_object(j)) {
		if (!j)
			fprintf(stderr, "ponytail %s: %s: line %d, column %d: %s\n", cmd, path,
			        e.line, e.column, e.text);
		else
			fprintf(stderr, "ponytail %s: %s: expected a JSON object\n", cmd, path);
		json_decref(j);
		free(text);
		return NULL;
	}
	snprintf(room, room_cap, "%s",
	         json_string_value(json_object_get(j, "room"))
	             ? json_string_value(json_object_get(j, "room"))
	             : "");
	json_decref(j);
	return text;
}

static const char *jstr(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

static void print_time(const char *label, const json_t *v)
{
	time_t t = (time_t)json_integer_value(v);
	struct tm tm;
	char buf[64] = "?";
	if (json_is_integer(v) && gmtime_r(&t, &tm))
		strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
	printf("%-10s %s\n", label, buf);
}

static void print_instance(const json_t *j)
{
	const json_t *def = json_object_get(j, "definition");
	printf("%-10s %lld\n%-10s %s\n%-10s %s\n%-10s %s\n", "id",
	       (long long)json_integer_value(json_object_get(j, "id")), "name", jstr(j, "name"),
	       "room", jstr(j, "room"), "driven",
	       json_is_true(json_object_get(j, "driven")) ? "yes" : "no");
	print_time("created", json_object_get(j, "created_at"));
	print_time("updated", json_object_get(j, "updated_at"));
	if (!json_is_object(def))
		return;
	printf("%-10s %s", "solver", jstr(def, "solver"));
	json_int_t sub = json_integer_value(json_object_get(def, "substeps"));
	if (sub > 0)
		printf(", %lld substeps", (long long)sub);
	const json_t *strands = json_object_get(def, "strands");
	printf("\n%-10s %zu (", "strands", json_array_size(strands));
	for (size_t i = 0; i < json_array_size(strands); i++)
		printf("%s%lld", i ? " + " : "",
		       (long long)json_integer_value(
		           json_object_get(json_array_get(strands, i), "points")));
	printf(" points)\n%-10s %zu\n", "colliders",
	       json_array_size(json_object_get(def, "colliders")));
}

static void print_frame(const json_t *j)
{
	const json_t *head = json_object_get(j, "head"), *strands = json_object_get(j, "strands");
	const json_t *p = json_object_get(head, "p");
	printf("%-10s %lld (t = %.3f s)\n%-10s %lld\n%-10s [%.4f, %.4f, %.4f]\n", "tick",
	       (long long)json_integer_value(json_object_get(j, "tick")),
	       json_number_value(json_object_get(j, "t")), "last_seq",
	       (long long)json_integer_value(json_object_get(j, "last_seq")), "head p",
	       json_number_value(json_array_get(p, 0)), json_number_value(json_array_get(p, 1)),
	       json_number_value(json_array_get(p, 2)));
	for (size_t s = 0; s < json_array_size(strands); s++) {
		const json_t *pts = json_array_get(strands, s);
		const json_t *tip = json_array_get(pts, json_array_size(pts) - 1);
		printf("strand %-3zu %zu points, tip [%.4f, %.4f, %.4f]\n", s, json_array_size(pts),
		       json_number_value(json_array_get(tip, 0)),
		       json_number_value(json_array_get(tip, 1)),
		       json_number_value(json_array_get(tip, 2)));
	}
}

static void print_list(const json_t *j)
{
	const json_t *arr = json_object_get(j, "instances");
	int wn = 4, wr = 4;
	for (size_t i = 0; i < json_array_size(arr); i++) {
		int n = (int)strlen(jstr(json_array_get(arr, i), "name"));
		int r = (int)strlen(jstr(json_array_get(arr, i), "room"));
		wn = n > wn ? n : wn;
		wr = r > wr ? r : wr;
	}
	if (json_array_size(arr))
		printf("%-20s  %-*s  %-*s  %s\n", "ID", wn, "NAME", wr, "ROOM", "DRIVEN");
	for (size_t i = 0; i < json_array_size(arr); i++) {
		const json_t *o = json_array_get(arr, i);
		printf("%-20lld  %-*s  %-*s  %s\n",
		       (long long)json_integer_value(json_object_get(o, "id")), wn, jstr(o, "name"),
		       wr, jstr(o, "room"),
		       json_is_true(json_object_get(o, "driven")) ? "yes" : "no");
	}
	size_t n = json_array_size(arr);
	printf("%zu instance%s\n", n, n == 1 ? "" : "s");
}

static int run(const rest_cmd_t *c, int argc, char **argv)
{
	remote_t r;
	remote_init(&r, c->name);
	const char *pos[2] = {NULL, NULL}, *room = NULL;
	int npos = 0, frame = 0, want = !!(c->flags & NEEDS_ID) + !!(c->flags & NEEDS_FILE);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int k;
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(c, stdout);
			return CLI_EXIT_OK;
		}
		if ((k = remote_flag(&r, argc, argv, &i, 1)) != 0) {
			if (k < 0)
				return CLI_EXIT_USAGE;
			continue;
		}
		if ((c->flags & HAS_ROOM) &&
		    (k = cli_flag(c->name, "--room", argc, argv, &i, &room))) {
			if (k < 0)
				return CLI_EXIT_USAGE;
			if (remote_check_room(c->name, "--room", room) != 0)
				return CLI_EXIT_USAGE;
			r.room = room;
			continue;
		}
		if ((c->flags & HAS_FRAME) && (k = cli_switch(c->name, "--frame", a)) != 0) {
			if (k < 0)
				return CLI_EXIT_USAGE;
			frame = 1;
			continue;
		}
		if (a[0] == '-' && a[1] != '\0') {
			fprintf(stderr, "ponytail %s: unknown flag '%s' (see ponytail %s --help)\n",
			        c->name, a, c->name);
			return CLI_EXIT_USAGE;
		}
		if (npos >= want) {
			fprintf(stderr, "ponytail %s: unexpected argument '%s'\n", c->name, a);
			return CLI_EXIT_USAGE;
		}
		pos[npos++] = a;
	}
	if (npos < want) {
		fprintf(stderr, "ponytail %s: missing %s (usage: ponytail %s %s)\n", c->name,
		        (c->flags & NEEDS_ID) && npos == 0 ? "instance ID" : "FILE.json", c->name,
		        c->args);
		return CLI_EXIT_USAGE;
	}
	unsigned long long id = 0;
	if ((c->flags & NEEDS_ID) && remote_parse_id(c->name, pos[0], &id) != 0)
		return CLI_EXIT_USAGE;
	if ((c->flags & WRITES) && !r.token) {
		fprintf(stderr,
		        "ponytail %s: needs the instance's write token: --token T (or "
		        "$PONYTAIL_TOKEN)\n",
		        c->name);
		return CLI_EXIT_USAGE;
	}
	char *body = NULL, body_room[256] = "";
	if (c->flags & NEEDS_FILE) {
		body = read_body(c->name, pos[npos - 1], body_room, sizeof body_room);
		if (!body)
			return CLI_EXIT_FAIL;
		if (!(c->flags & NEEDS_ID) && body_room[0])
			r.room = body_room; /* create: routed to the node of its room (a patch is
			                       routed by the room the instance is in: --room) */
	}

	char path[256], esc[200];
	const char *method = "GET", *ctype = "application/json";
	if (strcmp(c->name, "create") == 0) {
		method = "POST";
		snprintf(path, sizeof path, "/v1/instances");
	} else if (strcmp(c->name, "list") == 0) {
		remote_url_escape(room ? room : "", esc, sizeof esc);
		snprintf(path, sizeof path, "/v1/instances%s%s", room ? "?room=" : "", esc);
	} else if (strcmp(c->name, "get") == 0) {
		snprintf(path, sizeof path, "/v1/instances/%llu%s", id, frame ? "/frame" : "");
	} else if (strcmp(c->name, "patch") == 0) {
		method = "PATCH";
		ctype = "application/merge-patch+json";
		snprintf(path, sizeof path, "/v1/instances/%llu", id);
	} else if (strcmp(c->name, "delete") == 0) {
		method = "DELETE";
		snprintf(path, sizeof path, "/v1/instances/%llu", id);
	} else {
		method = "POST";
		snprintf(path, sizeof path, "/v1/instances/%llu/reset", id);
	}
	http_resp_t h;
	int rc = remote_call(&r, method, path, body, ctype, r.token != NULL, &h);
	free(body);
	if (rc != 0)
		return CLI_EXIT_FAIL;
	if (h.status < 200 || h.status > 299) {
		remote_print_error(&r, &h);
		http_free(&h);
		return CLI_EXIT_FAIL;
	}
	json_t *j = h.len ? json_loads(h.body, 0, NULL) : NULL;
	if (h.len && !j) {
		fprintf(stderr, "ponytail %s: the server's answer is not JSON: %.200s\n", c->name,
		        h.body);
		http_free(&h);
		return CLI_EXIT_FAIL;
	}
	if (r.json) {
		if (h.len)
			printf("%s\n", h.body);
	} else if (strcmp(c->name, "create") == 0) {
		printf(
		    "created instance %lld \"%s\" in room \"%s\"\ntoken: %s\n(the token is shown "
		    "once: keep it to patch, reset, delete or stream to this instance)\n",
		    (long long)json_integer_value(json_object_get(j, "id")), jstr(j, "name"),
		    jstr(j, "room"), jstr(j, "token"));
	} else if (strcmp(c->name, "list") == 0) {
		print_list(j);
	} else if (strcmp(c->name, "get") == 0) {
		if (frame)
			print_frame(j);
		else
			print_instance(j);
	} else if (strcmp(c->name, "patch") == 0) {
		printf("patched instance %llu\n", id);
	} else {
		printf("%s instance %llu\n", strcmp(c->name, "delete") == 0 ? "deleted" : "reset",
		       id);
	}
	json_decref(j);
	http_free(&h);
	remote_global_cleanup();
	return CLI_EXIT_OK;
}

int cmd_create(int argc, char **argv)
{
	return run(&cmds[0], argc, argv);
}
int cmd_list(int argc, char **argv)
{
	return run(&cmds[1], argc, argv);
}
int cmd_get(int argc, char **argv)
{
	return run(&cmds[2], argc, argv);
}
int cmd_patch(int argc, char **argv)
{
	return run(&cmds[3], argc, argv);
}
int cmd_delete(int argc, char **argv)
{
	return run(&cmds[4], argc, argv);
}
int cmd_reset(int argc, char **argv)
{
	return run(&cmds[5], argc, argv);
}
