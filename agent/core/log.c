/* Logging to stderr with a level prefix. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>

static enum log_level threshold = LOG_WARN;
static unsigned long warnings;

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

void
log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};
	if (level <= LOG_WARN) {
		warnings++;
	}
	if (level > threshold) {
		return;
	}
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "tegrawatch: %s: %s\n", names[level], buf);
}
