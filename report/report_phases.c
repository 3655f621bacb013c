/* Phases of a run from a small CSV: start,end,name. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/xalloc.h"
#include "report.h"

static char *
trim(char *s)
{
	while (*s == ' ' || *s == '\t') {
		s++;
	}
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) {
		s[--n] = '\0';
	}
	return s;
}

/* A time as the recording has it: true with *MS (absolute) or *SEC (relative, *RELATIVE set). */
static bool
parse_time(const char *s, int64_t *ms, double *sec, bool *relative)
{
	struct tm tm = {.tm_isdst = -1};
	int n = 0;
	char *end;
	double v = strtod(s, &end);
	if (end != s && *end == '\0') {
		*sec = v;
		*relative = true;
		return v >= 0;
	}
	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
		   &tm.tm_sec, &n) == 6 ||
	    sscanf(s, "%2d-%2d-%4d %2d:%2d:%2d%n", &tm.tm_mon, &tm.tm_mday, &tm.tm_year, &tm.tm_hour, &tm.tm_min,
		   &tm.tm_sec, &n) == 6) {
		bool utc = s[n] == 'Z';
		if (s[n + utc] != '\0' || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31) {
			return false;
		}
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
		time_t t = utc ? timegm(&tm) : mktime(&tm);
		*ms = (int64_t)t * 1000;
		*relative = false;
		return true;
	}
	return false;
}

int
report_phases_parse(const char *text, struct report_phase_def **out, size_t *count, char *err, size_t err_size)
{
	char *copy = xstrdup(text), *save = NULL;
	struct report_phase_def *defs = NULL;
	size_t n = 0;
	unsigned lineno = 0;
	bool seen = false; /* a data line before this one */
	int ret = 0;
	for (char *line = copy; line && ret == 0; line = save) {
		save = strchr(line, '\n');
		if (save) {
			*save++ = '\0';
		}
		lineno++;
		char *l = trim(line);
		if (!*l || *l == '#') {
			continue;
		}
		char *c1 = strchr(l, ','), *c2 = c1 ? strchr(c1 + 1, ',') : NULL;
		if (!c2) {
			snprintf(err, err_size, "%u: want start,end,name", lineno);
			ret = -EINVAL;
			break;
		}
		*c1 = *c2 = '\0';
		char *start = trim(l), *end = trim(c1 + 1), *name = trim(c2 + 1);
		struct report_phase_def d = {0};
		bool rel_start, rel_end;
		bool ok_start = parse_time(start, &d.start_ms, &d.start_s, &rel_start);
		bool ok_end = parse_time(end, &d.end_ms, &d.end_s, &rel_end);
		if (!ok_start && !ok_end && !seen) {
			seen = true;
			continue; /* a header line */
		}
		seen = true;
		if (!ok_start || !ok_end || rel_start != rel_end) {
			snprintf(err, err_size,
				 "%u: '%s' and '%s' must both be times (YYYY-MM-DDTHH:MM:SS) or both seconds", lineno,
				 start, end);
			ret = -EINVAL;
			break;
		}
		d.relative = rel_start;
		if (d.relative ? d.end_s <= d.start_s : d.end_ms <= d.start_ms) {
			snprintf(err, err_size, "%u: the end must come after the start", lineno);
			ret = -EINVAL;
			break;
		}
		if (!*name || strlen(name) >= sizeof(d.name)) {
			snprintf(err, err_size, "%u: a phase needs a name (up to %zu characters)", lineno,
				 sizeof(d.name) - 1);
			ret = -EINVAL;
			break;
		}
		snprintf(d.name, sizeof(d.name), "%s", name);
		defs = xrealloc(defs, n + 1, sizeof(*defs));
		defs[n++] = d;
	}
	free(copy);
	if (ret < 0) {
		free(defs);
		return ret;
	}
	*out = defs;
	*count = n;
	return 0;
}
