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

/* "debug" .. "error" <-> level; -1 / "?" when unknown. */
int log_level_from_name(const char *name);
const char *log_level_name(int level);

#endif
