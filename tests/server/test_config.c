/* server/config.c: one option table for flags, environment, config file and --help;
 * every bad value names its flag (and the file line) and the allowed range. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../server/config.c"
#include "../../server/log.c"

static char err[512];

static int load(config_t *c, int argc, const char **argv)
{
	err[0] = '\0';
	return config_load(c, argc, (char **)(uintptr_t)argv, stdout, err, sizeof err);
}

static void expect_error(const char *contains, int argc, const char **argv)
{
	config_t c;
	assert_int_equal(load(&c, argc, argv), CONFIG_ERROR);
	if (!strstr(err, contains))
		fail_msg("error '%s' lacks '%s'", err, contains);
}

/* A temporary config file with `text`; returns its path (static buffer). */
static const char *write_file(const char *text)
{
	static char path[64];
	snprintf(path, sizeof path, "/tmp/pt_config_test_XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return path;
}

static void defaults(void **state)
{
	(void)state;
	config_t c;
	const char *argv[] = {"ponytaild"};
	assert_int_equal(load(&c, 1, argv), CONFIG_OK);
	assert_string_equal(c.bind, "127.0.0.1");
	assert_string_equal(c.data, "./var");
	assert_int_equal(c.tick_hz, 60);
	assert_int_equal(c.substeps, 4);
	assert_int_equal(c.workers, 0);
	assert_int_equal(c.pin_workers, 1);
	assert_int_equal(c.realtime, 0);
	assert_string_equal(c.admin_token, "");
	assert_int_equal(c.log_level, LOG_INFO);
}

static void flags_both_forms(void **state)
{
	(void)state;
	config_t c;
	const char *argv[] = {"ponytaild",      "--tick-hz",   "30",
	                      "--substeps=8",   "--log-level", "debug",
	                      "--bind=0.0.0.0", "--http-port", "0"};
	assert_int_equal(load(&c, 9, argv), CONFIG_OK);
	assert_int_equal(c.tick_hz, 30);
	assert_int_equal(c.substeps, 8);
	assert_int_equal(c.log_level, LOG_DEBUG);
	assert_string_equal(c.bind, "0.0.0.0");
	assert_int_equal(c.http_port, 0);
}

static void bad_values_name_flag_and_range(void **state)
{
	(void)state;
	expect_error("--tick-hz: expected an integer in [1, 1000], got '0'", 3,
	             (const char *[]){"p", "--tick-hz", "0"});
	expect_error("--tick-hz: expected an integer in [1, 1000], got '60x'", 2,
	             (const char *[]){"p", "--tick-hz=60x"});
	expect_error("--substeps: expected an integer in [1, 16], got '17'", 3,
	             (const char *[]){"p", "--substeps", "17"});
	expect_error("--http-port: expected an integer in [0, 65535], got '70000'", 3,
	             (const char *[]){"p", "--http-port", "70000"});
	expect_error("--workers: expected an integer in [0, 64], got '-1'", 3,
	             (const char *[]){"p", "--workers", "-1"});
	expect_error("--pin-workers: expected an integer in [0, 1], got '2'", 3,
	             (const char *[]){"p", "--pin-workers", "2"});
	expect_error("--realtime: expected an integer in [0, 99], got '100'", 3,
	             (const char *[]){"p", "--realtime", "100"});
	expect_error("--log-level: expected one of debug, info, warn, error; got 'loud'", 3,
	             (const char *[]){"p", "--log-level", "loud"});
	expect_error("--bind: expected an IPv4 address", 3,
	             (const char *[]){"p", "--bind", "localhost"});
	expect_error("--admin-token: expected 16 to 128 bytes, got 5", 3,
	             (const char *[]){"p", "--admin-token", "short"});
	expect_error("--max-instances: expected an integer in [1, 1000000]", 3,
	             (const char *[]){"p", "--max-instances", "0"});
	expect_error("--tick-hz: missing value", 2, (const char *[]){"p", "--tick-hz"});
	expect_error("unknown flag '--tickhz'", 3, (const char *[]){"p", "--tickhz", "5"});
	expect_error("unexpected argument 'run'", 2, (const char *[]){"p", "run"});
}

static void environment_between_file_and_flags(void **state)
{
	(void)state;
	config_t c;
	const char *path = write_file("tick-hz 30\nsubsteps 2\nworkers 3\n");
	setenv("PONYTAIL_SUBSTEPS", "6", 1);
	setenv("PONYTAIL_WORKERS", "5", 1);
	const char *argv[] = {"p", "--config", path, "--workers", "7"};
	assert_int_equal(load(&c, 5, argv), CONFIG_OK);
	assert_int_equal(c.tick_hz, 30); /* file */
	assert_int_equal(c.substeps, 6); /* environment beats the file */
	assert_int_equal(c.workers, 7);  /* flag beats the environment */
	setenv("PONYTAIL_SUBSTEPS", "99", 1);
	expect_error("PONYTAIL_SUBSTEPS: expected an integer in [1, 16], got '99'", 1,
	             (const char *[]){"p"});
	unsetenv("PONYTAIL_SUBSTEPS");
	unsetenv("PONYTAIL_WORKERS");
	setenv("PONYTAIL_CONFIG", path, 1);
	assert_int_equal(load(&c, 1, (const char *[]){"p"}), CONFIG_OK);
	assert_int_equal(c.tick_hz, 30);
	unsetenv("PONYTAIL_CONFIG");
	unlink(path);
}

/* The TLS pair: off by default; from a file, the environment and flags in that order. The
 * files themselves are checked at start-up (server/tls.c; tests/client/tls.test.sh). */
static void tls_options(void **state)
{
	(void)state;
	config_t c;
	assert_int_equal(load(&c, 1, (const char *[]){"p"}), CONFIG_OK);
	assert_string_equal(c.tls_cert, "");
	assert_string_equal(c.tls_key, "");
	const char *path = write_file("tls-cert /etc/pt/file.pem\ntls-key /etc/pt/file.key\n");
	setenv("PONYTAIL_TLS_KEY", "/env/k.pem", 1);
	const char *argv[] = {"p", "--config", path, "--tls-cert=/flag/c.pem"};
	assert_int_equal(load(&c, 4, argv), CONFIG_OK);
	assert_string_equal(c.tls_cert, "/flag/c.pem");
	assert_string_equal(c.tls_key, "/env/k.pem");
	unsetenv("PONYTAIL_TLS_KEY");
	unlink(path);
	expect_error("--tls-key: expected printable ASCII without spaces", 3,
	             (const char *[]){"p", "--tls-key", "a b"});
}

static void config_file_bad_line_names_its_number(void **state)
{
	(void)state;
	char want[256];
	const char *path = write_file("# a comment\n\n  tick-hz   120  \nsubstep 4\n");
	snprintf(want, sizeof want, "config %s:4: unknown option 'substep'", path);
	expect_error(want, 3, (const char *[]){"p", "--config", path});
	unlink(path);

	path = write_file("bind 127.0.0.1\ndata /tmp/x\nmax-body 12\n");
	snprintf(want, sizeof want,
	         "config %s:3: max-body: expected an integer in [1024, 67108864], got '12'", path);
	expect_error(want, 3, (const char *[]){"p", "--config", path});
	unlink(path);

	path = write_file("tick-hz\n");
	snprintf(want, sizeof want, "config %s:1: tick-hz: missing value", path);
	expect_error(want, 3, (const char *[]){"p", "--config", path});
	unlink(path);

	path = write_file("config /etc/other\n");
	snprintf(want, sizeof want, "config %s:1: 'config' cannot be set from a file", path);
	expect_error(want, 3, (const char *[]){"p", "--config", path});
	unlink(path);

	expect_error("config /nonexistent/ponytail.conf: cannot open", 3,
	             (const char *[]){"p", "--config", "/nonexistent/ponytail.conf"});
}

static void help_lists_every_option(void **state)
{
	(void)state;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	config_t c;
	assert_int_equal(config_load(&c, 2, (char *[]){"p", "--help", NULL}, f, err, sizeof err),
	                 CONFIG_EXIT);
	fclose(f);
	for (size_t i = 0; i < N_OPTIONS; i++) {
		char flag[80];
		snprintf(flag, sizeof flag, "--%s ", options[i].name);
		if (!strstr(buf, flag) || !strstr(buf, options[i].env))
			fail_msg("--help lacks %s / %s", flag, options[i].env);
	}
	assert_non_null(strstr(buf, "[1, 1000]")); /* ranges are shown */
	free(buf);
}

static void secrets_are_not_logged(void **state)
{
	(void)state;
	config_t c;
	const char *argv[] = {"p", "--admin-token", "s3cr3t-s3cr3t-s3cr3t"};
	assert_int_equal(load(&c, 3, argv), CONFIG_OK);
	assert_string_equal(c.admin_token, "s3cr3t-s3cr3t-s3cr3t");
	/* Capture stderr (the log) around config_log. */
	char path[] = "/tmp/pt_config_log_XXXXXX";
	int fd = mkstemp(path);
	int saved = dup(2);
	dup2(fd, 2);
	config_log(&c);
	dup2(saved, 2);
	close(saved);
	char text[2048] = "";
	lseek(fd, 0, SEEK_SET);
	ssize_t n = read(fd, text, sizeof text - 1);
	close(fd);
	unlink(path);
	assert_true(n > 0);
	text[n] = '\0';
	assert_null(strstr(text, "s3cr3t"));
	assert_non_null(strstr(text, "admin-token=(set)"));
	assert_non_null(strstr(text, "tick-hz=60"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(defaults),
	    cmocka_unit_test(flags_both_forms),
	    cmocka_unit_test(bad_values_name_flag_and_range),
	    cmocka_unit_test(environment_between_file_and_flags),
	    cmocka_unit_test(tls_options),
	    cmocka_unit_test(config_file_bad_line_names_its_number),
	    cmocka_unit_test(help_lists_every_option),
	    cmocka_unit_test(secrets_are_not_logged),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
