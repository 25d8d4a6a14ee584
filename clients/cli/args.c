/* Flag parsing with errors that name the flag and its allowed values. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"

int cli_flag(const char *cmd, const char *flag, int argc, char **argv, int *i, const char **value)
{
	const char *arg = argv[*i];
	size_t n = strlen(flag);
	if (strncmp(arg, flag, n) != 0)
		return 0;
	if (arg[n] == '=') {
		*value = arg + n + 1;
		return 1;
	}
	if (arg[n] != '\0')
		return 0;
	if (*i + 1 >= argc) {
		fprintf(stderr, "ponytail %s: %s: missing value\n", cmd, flag);
		return -1;
	}
	*value = argv[++*i];
	return 1;
}

int cli_switch(const char *cmd, const char *flag, const char *arg)
{
	size_t n = strlen(flag);
	if (strncmp(arg, flag, n) != 0 || (arg[n] != '\0' && arg[n] != '='))
		return 0;
	if (arg[n] == '=') {
		fprintf(stderr, "ponytail %s: %s takes no value\n", cmd, flag);
		return -1;
	}
	return 1;
}

int cli_parse_int(const char *cmd, const char *flag, const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
		fprintf(stderr, "ponytail %s: %s: expected an integer in [%ld, %ld], got '%s'\n",
		        cmd, flag, lo, hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_parse_real(const char *cmd, const char *flag, const char *s, double lo, double hi,
                   double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (*s == '\0' || *end != '\0' || !isfinite(v) || v < lo || v > hi) {
		fprintf(stderr, "ponytail %s: %s: expected a number in [%g, %g], got '%s'\n", cmd,
		        flag, lo, hi, s);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_parse_choice(const char *cmd, const char *flag, const char *s, const char *const *names)
{
	for (int i = 0; names[i]; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	fprintf(stderr, "ponytail %s: %s: expected one of", cmd, flag);
	for (int i = 0; names[i]; i++)
		fprintf(stderr, "%s %s", i ? "," : "", names[i]);
	fprintf(stderr, "; got '%s'\n", s);
	return -1;
}

int cli_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return 1;
	return 0;
}

void cli_catch_stop_signals(void (*on_stop)(int))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}
