/* `ponytail`: dispatches to a subcommand from one table; nothing else lives here. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
    {"sim", cmd_sim, "run an instance offline: one frame per tick, or a --summary (bake tool)"},
    {"import-vrm", cmd_import_vrm, "a VRM avatar's spring bones as an instance definition"},
    {"create", cmd_create, "create an instance on a daemon (prints its id and write token)"},
    {"list", cmd_list, "list a daemon's instances"},
    {"get", cmd_get, "show an instance's definition or latest frame"},
    {"patch", cmd_patch, "merge-patch an instance's parameters"},
    {"delete", cmd_delete, "delete an instance"},
    {"reset", cmd_reset, "put an instance back to its settled rest pose"},
    {"stream", cmd_stream, "publish head poses (a motion, a JSONL file or stdin) over WebSocket"},
    {"watch", cmd_watch, "print or record an instance's or a room's frames as JSON lines"},
    {"load", cmd_load, "load generator: many publishers and subscribers, one report"},
    {"replay", cmd_replay, "re-simulate a room's recording: its frames, or --verify its hashes"},
    {"vmc", cmd_vmc, "bridge a VMC tracker (OSC over UDP) to an instance's head"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: ponytail COMMAND [ARGS...]\n"
	             "       ponytail COMMAND --help\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nexit status: 0 ok, 1 bad input or failure, 2 usage error\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "ponytail: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return CLI_EXIT_USAGE;
}
