/*
 * Logging: the only code that writes diagnostics to stderr. Messages get
 * a level prefix; the threshold is set once at start-up.
 */
#ifndef TEGRAWATCH_LOG_H
#define TEGRAWATCH_LOG_H

enum log_level {
	LOG_ERROR,
	LOG_WARN,
	LOG_INFO,
	LOG_DEBUG,
};

/** Messages above LEVEL are dropped. Default: LOG_WARN. */
void log_set_level(enum log_level level);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** Number of messages written at LOG_ERROR or LOG_WARN so far. */
unsigned long log_warning_count(void);

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
