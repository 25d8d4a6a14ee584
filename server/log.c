/* Logging: see log.h. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int log_min_level = LOG_INFO;

static const char *const names[] = {"debug", "info", "warn", "error", "off"};
static const char *const tags[] = {"DEBUG", "INFO ", "WARN ", "ERROR", "OFF  "};

void log_set_level(int level)
{
	log_min_level = level;
}

int log_level_from_name(const char *name)
{
	for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

const char *log_level_name(int level)
{
	return level >= 0 && level <= LOG_OFF ? names[level] : "?";
}

void log_emit(int level, const char *file, const char *fmt, ...)
{
	char line[1024];
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);

	/* Module tag: the file's stem, so "server/sim.c" says "sim". */
	const char *base = strrchr(file, '/');
	base = base ? base + 1 : file;
	int stem = (int)strcspn(base, ".");

	int n = snprintf(
	    line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %.*s: ", tm.tm_year + 1900,
	    tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ts.tv_nsec / 1000000,
	    tags[level < 0 || level > LOG_OFF ? 0 : level], stem, base);
	if (n < 0)
		return;
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	va_end(ap);
	size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
	if (len > sizeof line - 2)
		len =
		    sizeof line - 2; /* truncated: keep the newline so the next line starts clean */
	/* One event, one line: a message that itself contains newlines is flattened. */
	for (size_t i = (size_t)n; i < len; i++)
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[len++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, len);
	(void)w;
}

int log_limit(log_limit_t *l, uint64_t *held)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec + 1; /* never 0 */
	int64_t last = __atomic_load_n(&l->last_ns, __ATOMIC_RELAXED);
	if ((last == 0 || now - last >= 1000000000) &&
	    __atomic_compare_exchange_n(&l->last_ns, &last, now, 0, __ATOMIC_ACQ_REL,
	                                __ATOMIC_RELAXED)) {
		*held = __atomic_exchange_n(&l->held, 0, __ATOMIC_ACQ_REL);
		return 1;
	}
	__atomic_add_fetch(&l->held, 1, __ATOMIC_RELAXED);
	return 0;
}
