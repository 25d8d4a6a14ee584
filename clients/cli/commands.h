/* The `ponytail` subcommands. Each lives in its own file, takes the arguments after the
 * program name (argv[0] is the subcommand's name) and returns the process exit status.
 * To add one: write clients/cli/<name>.c with cmd_<name>(), declare it here, and add a
 * line to the table in main.c. */
#ifndef PONYTAIL_CLI_COMMANDS_H
#define PONYTAIL_CLI_COMMANDS_H

/* Exit statuses shared by every subcommand. */
enum {
	CLI_EXIT_OK = 0,
	CLI_EXIT_FAIL = 1,  /* bad input file, invalid instance, I/O or runtime failure */
	CLI_EXIT_USAGE = 2, /* unknown flag, bad flag value, missing argument */
};

/* ponytail sim INSTANCE.json [...]: run an instance offline, print frames or a summary. */
int cmd_sim(int argc, char **argv);

/* ponytail import-vrm AVATAR.vrm: a VRM avatar's spring bones as an instance definition. */
int cmd_import_vrm(int argc, char **argv);

/* REST (clients/cli/rest_cmds.c): ponytail create FILE.json | list | get ID | patch ID
 * FILE.json | delete ID | reset ID, with --server, --token, --json. */
int cmd_create(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_patch(int argc, char **argv);
int cmd_delete(int argc, char **argv);
int cmd_reset(int argc, char **argv);

/* ponytail stream ID --motion M | --poses FILE.jsonl | --stdin: head poses over WebSocket. */
int cmd_stream(int argc, char **argv);

/* ponytail watch ID... | --room R: frames as JSON lines, a live status line on stderr. */
int cmd_watch(int argc, char **argv);

/* ponytail load --rooms R --publishers P --subscribers S --duration D: the load generator. */
int cmd_load(int argc, char **argv);

/* ponytail vmc (--create FILE | --instance ID --token T): VMC (OSC over UDP) in, head poses
 * out (clients/cli/vmc*.c). */
int cmd_vmc(int argc, char **argv);

/* ponytail replay RECORDING [--verify]: re-simulate a room's recording (clients/cli/replay.c). */
int cmd_replay(int argc, char **argv);

#endif
