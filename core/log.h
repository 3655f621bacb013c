/*
 * Logging: the only code that writes diagnostics to stderr. Messages get
 * a level prefix ("tegrawatch: warning: "), or their syslog priority
 * ("<4>") when stderr is the journal; the threshold is set once at
 * start-up. A call site that repeats more than 10 times a minute is held
 * back, and its next message says how many were.
 */
#ifndef TEGRAWATCH_LOG_H
#define TEGRAWATCH_LOG_H

#include <stdbool.h>
#include <stdint.h>

enum log_level {
	LOG_ERROR,
	LOG_WARN,
	LOG_INFO,
	LOG_DEBUG,
};

/** Messages above LEVEL are dropped. Default: LOG_WARN. */
void log_set_level(enum log_level level);

void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/**
 * As log_msg() but never held back: for messages that are the product
 * itself (the `log` alert action), not diagnostics.
 */
void log_event(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** True when stderr is the journal (JOURNAL_STREAM names it). */
bool log_to_journal(void);

/** Forgets the journal check and the held-back counts, and sets the clock (NULL: monotonic) (tests). */
void log_reset_for_tests(int64_t (*clock)(void));

/** Number of messages at LOG_ERROR or LOG_WARN so far (held back or not). */
unsigned long log_warning_count(void);

#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
