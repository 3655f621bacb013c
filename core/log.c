/*
 * Logging to stderr. On a terminal or a file each line reads
 * "tegrawatch: warning: ..."; when stderr is the journal (systemd sets
 * JOURNAL_STREAM to its device and inode) each line starts with its syslog
 * priority instead ("<4>..."), so `journalctl -p warning` filters it.
 * A message that repeats (same call site) more than LOG_BURST times a
 * minute is held back, and the next one that gets through says how many
 * were.
 */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "clock.h"

#define LOG_BURST 10 /* messages per call site and window */
#define LOG_WINDOW_MS 60000
#define LOG_SITES 64 /* call sites tracked; more are never held back */

static enum log_level threshold = LOG_WARN;
static unsigned long warnings;
static int journal = -1; /* unknown yet */
static int64_t (*now_ms)(void) = monotonic_ms;

static struct site {
	const char *fmt; /* the call site: its format string */
	int64_t window_start_ms;
	unsigned count;
	unsigned long held;
} sites[LOG_SITES];

void
log_set_level(enum log_level level)
{
	threshold = level;
}

unsigned long
log_warning_count(void)
{
	return warnings;
}

bool
log_to_journal(void)
{
	if (journal < 0) {
		unsigned long long dev, ino;
		struct stat st;
		const char *js = getenv("JOURNAL_STREAM");
		journal = js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &st) == 0 &&
			  (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
	}
	return journal == 1;
}

void
log_reset_for_tests(int64_t (*clock)(void))
{
	journal = -1;
	memset(sites, 0, sizeof(sites));
	now_ms = clock ? clock : monotonic_ms;
}

/* Whether a message of FMT may go out now; *HELD gets how many were held back before it. */
static bool
admit(const char *fmt, unsigned long *held)
{
	*held = 0;
	struct site *s = NULL;
	for (size_t i = 0; i < LOG_SITES; i++) {
		if (sites[i].fmt == fmt || !sites[i].fmt) {
			s = &sites[i];
			break;
		}
	}
	if (!s) {
		return true;
	}
	int64_t now = now_ms();
	if (!s->fmt || now - s->window_start_ms >= LOG_WINDOW_MS) {
		*held = s->held;
		*s = (struct site){.fmt = fmt, .window_start_ms = now};
	}
	if (++s->count > LOG_BURST) {
		s->held++;
		return false;
	}
	return true;
}

static void
emit(enum log_level level, bool limited, const char *fmt, va_list ap)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};
	static const char prio[] = {'3', '4', '6', '7'};
	if (level <= LOG_WARN) {
		warnings++;
	}
	if (level > threshold) {
		return;
	}
	unsigned long held = 0;
	if (limited && !admit(fmt, &held)) {
		return;
	}
	char buf[1024];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	char note[80] = "";
	if (held) {
		snprintf(note, sizeof(note), " (%lu more like this held back in the last minute)", held);
	}
	if (log_to_journal()) {
		fprintf(stderr, "<%c>%s%s\n", prio[level], buf, note);
	} else {
		fprintf(stderr, "tegrawatch: %s: %s%s\n", names[level], buf, note);
	}
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(level, level != LOG_DEBUG, fmt, ap);
	va_end(ap);
}

void
log_event(enum log_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit(level, false, fmt, ap);
	va_end(ap);
}
