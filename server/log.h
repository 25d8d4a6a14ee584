/* ponytaild logging: one line per event on stderr.
 *
 *   LOG(LOG_WARN, "tick %llu overran by %.2f ms", tick, ms);
 *
 * prints "2025-01-31T12:00:00.123Z WARN  sim: tick 812 overran by 3.10 ms". The level is
 * compared before the arguments are evaluated, so a disabled LOG(LOG_DEBUG, ...) costs one
 * load and one compare. Write tokens and other secrets are never passed to LOG.
 *
 * Threading: any thread. Each line is formatted into a local buffer and written with one
 * write(2), so lines from different threads never interleave.
 */
#ifndef SERVER_LOG_H
#define SERVER_LOG_H

#include <stdint.h>

enum { LOG_DEBUG = 0, LOG_INFO = 1, LOG_WARN = 2, LOG_ERROR = 3, LOG_OFF = 4 };

/* Lowest level printed; set once at start-up (before threads start) by log_set_level. */
extern int log_min_level;

#define LOG(level, ...)                                                                            \
	do {                                                                                       \
		if ((level) >= log_min_level)                                                      \
			log_emit((level), __FILE__, __VA_ARGS__);                                  \
	} while (0)

/* Formats and writes one line; `file` is __FILE__ and becomes the module tag ("sim").
 * Use the LOG macro, which checks the level first. */
void log_emit(int level, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void log_set_level(int level);

/* For events that can repeat at any rate a client likes (a refused connection each): at
 * most one line a second per limiter, carrying the count of those held back.
 *
 *   static log_limit_t lim;
 *   uint64_t held;
 *   if (log_limit(&lim, &held))
 *       LOG(LOG_WARN, "refused %s (and %llu more since the last report)", ip, held);
 *
 * A zero-initialised log_limit_t is ready. Any thread. */
typedef struct log_limit_t {
	int64_t last_ns; /* CLOCK_MONOTONIC of the last line written, 0 = none yet */
	uint64_t held;   /* events since then */
} log_limit_t;

/* 1 when the caller should write its line now; *held then receives how many events were
 * held back since the previous line. 0 when the event is only counted. */
int log_limit(log_limit_t *l, uint64_t *held);

/* "debug" .. "error" <-> level; -1 / "?" when unknown. */
int log_level_from_name(const char *name);
const char *log_level_name(int level);

#endif
