/* Command-line flag helpers shared by the subcommands: "--flag value" and "--flag=value",
 * numbers checked against a range, and errors that name the flag. Every error is printed
 * to stderr as "ponytail CMD: --flag: ..." and reported as -1; the caller exits with
 * CLI_EXIT_USAGE. */
#ifndef PONYTAIL_CLI_ARGS_H
#define PONYTAIL_CLI_ARGS_H

/* Does argv[*i] name `flag`? 0: no. 1: yes, *value is its value (borrowed from argv) and
 * *i is advanced past a separate value argument. -1: yes but the value is missing
 * (printed). */
int cli_flag(const char *cmd, const char *flag, int argc, char **argv, int *i, const char **value);

/* Is argv[*i] exactly the value-less `flag`? A "--flag=..." is an error (-1, printed). */
int cli_switch(const char *cmd, const char *flag, const char *arg);

/* Whole string as an integer / finite real in [lo, hi]: 0, or -1 (printed). */
int cli_parse_int(const char *cmd, const char *flag, const char *s, long lo, long hi, long *out);
int cli_parse_real(const char *cmd, const char *flag, const char *s, double lo, double hi,
                   double *out);

/* Index of s in the NULL-ended `names`, or -1 with "expected one of ..." printed. */
int cli_parse_choice(const char *cmd, const char *flag, const char *s, const char *const *names);

/* 1 when any argument is --help or -h (the subcommand then prints its usage and exits 0,
 * whatever else is on the line). */
int cli_wants_help(int argc, char **argv);

/* SIGINT and SIGTERM call `on_stop` (which should only set a flag); SIGPIPE is ignored,
 * so a closed socket or pipe is an error return, not a death. */
void cli_catch_stop_signals(void (*on_stop)(int));

#endif
