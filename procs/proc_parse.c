/* Parsers of /proc/PID/stat, /proc/PID/status, pid files and /proc/uptime (see proc_parse.h). */
#include "proc_parse.h"

#include <errno.h>
#include <string.h>

#define STAT_FIELDS 24 /* rss, the last one read, is field 24 */

/* a decimal whole number of at most MAX in [*P, END) (after blanks); false and *P unmoved on anything else */
static bool
read_unsigned(const char **p, const char *end, uint64_t max, uint64_t *out)
{
	const char *s = *p;
	while (s < end && (*s == ' ' || *s == '\t')) {
		s++;
	}
	if (s == end || *s < '0' || *s > '9') {
		return false;
	}
	uint64_t v = 0;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		uint64_t d = (uint64_t)(*s - '0');
		if (v > (max - d) / 10) {
			return false;
		}
		v = v * 10 + d;
	}
	*out = v;
	*p = s;
	return true;
}

/* as read_unsigned(), with an optional '-' (tpgid -1, a negative nice), within int64_t */
static bool
read_signed(const char **p, const char *end, int64_t *out)
{
	const char *s = *p;
	while (s < end && (*s == ' ' || *s == '\t')) {
		s++;
	}
	bool neg = s < end && *s == '-';
	uint64_t v;
	s += neg;
	if (!read_unsigned(&s, end, (uint64_t)INT64_MAX, &v)) {
		return false;
	}
	*out = neg ? -(int64_t)v : (int64_t)v;
	*p = s;
	return true;
}

/* the field must end here: a blank, a newline or the end */
static bool
field_end(const char *p, const char *end)
{
	return p == end || *p == ' ' || *p == '\n';
}

int
proc_parse_stat(const char *text, size_t len, struct proc_stat *out)
{
	const char *end = text + len;
	const char *p = text;
	uint64_t pid;
	if (!read_unsigned(&p, end, PROC_PID_MAX, &pid) || pid == 0 || p + 2 > end || p[0] != ' ' || p[1] != '(') {
		return -EINVAL;
	}
	const char *open = p + 2;
	/* the name may hold ')': the last one ends it (memrchr: the line is ~300 bytes, the name near its start) */
	const char *close = memrchr(open, ')', (size_t)(end - open));
	if (!close || close + 3 > end || close[1] != ' ' || close[2] == ' ' || close[2] == '\n') {
		return -EINVAL;
	}
	struct proc_stat st = {.pid = (int32_t)pid, .state = close[2]};
	size_t n = (size_t)(close - open) < sizeof(st.comm) - 1 ? (size_t)(close - open) : sizeof(st.comm) - 1;
	memcpy(st.comm, open, n);
	st.comm[n] = '\0';
	p = close + 3;
	int64_t v[STAT_FIELDS + 1] = {0}; /* v[k]: field k, from 4 on */
	for (int k = 4; k <= STAT_FIELDS; k++) {
		bool ok;
		if (k == 14 || k == 15 || k == 22 || k == 23) {
			/* the unsigned ones a watcher keeps: ticks and bytes, whole in a uint64_t */
			uint64_t u = 0;
			ok = read_unsigned(&p, end, UINT64_MAX, &u);
			if (k == 14) {
				st.utime_ticks = u;
			} else if (k == 15) {
				st.stime_ticks = u;
			} else if (k == 22) {
				st.start_ticks = u;
			} else {
				st.vsize_bytes = u;
			}
		} else {
			ok = read_signed(&p, end, &v[k]);
		}
		if (!ok || !field_end(p, end)) {
			return -EINVAL;
		}
	}
	if (v[4] < 0 || v[4] > PROC_PID_MAX || v[20] < 0 || v[24] < 0) {
		return -EINVAL;
	}
	st.ppid = (int32_t)v[4];
	st.threads = v[20];
	st.rss_pages = v[24];
	*out = st;
	return 0;
}

/* the value of the "KEY:" line of TEXT (after the colon and its blanks), or NULL */
static const char *
status_value(const char *text, const char *key)
{
	size_t n = strlen(key);
	for (const char *line = text; line && *line;) {
		if (strncmp(line, key, n) == 0 && line[n] == ':') {
			const char *v = line + n + 1;
			while (*v == ' ' || *v == '\t') {
				v++;
			}
			return v;
		}
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	return NULL;
}

/* a "N" (or "N kB" when KB) line's number at V; -1 when V is NULL; false on garbage */
static bool
status_number(const char *v, bool kb, int64_t *out)
{
	if (!v) {
		*out = -1;
		return true;
	}
	const char *end = v + strcspn(v, "\n");
	uint64_t u;
	if (!read_unsigned(&v, end, UINT64_C(1) << 53, &u)) {
		return false;
	}
	while (v < end && (*v == ' ' || *v == '\t')) {
		v++;
	}
	if (kb) {
		if (end - v < 2 || strncmp(v, "kB", 2) != 0) {
			return false;
		}
		v += 2;
	}
	if (v != end) {
		return false;
	}
	*out = (int64_t)u;
	return true;
}

int
proc_parse_status(const char *text, struct proc_status *out)
{
	struct proc_status st;
	const char *name = status_value(text, "Name");
	if (!name) {
		return -EINVAL;
	}
	size_t n = strcspn(name, "\n");
	n = n < sizeof(st.name) - 1 ? n : sizeof(st.name) - 1;
	memcpy(st.name, name, n);
	st.name[n] = '\0';
	if (!status_number(status_value(text, "Threads"), false, &st.threads) ||
	    !status_number(status_value(text, "VmSize"), true, &st.vm_size_kb) ||
	    !status_number(status_value(text, "VmRSS"), true, &st.vm_rss_kb)) {
		return -EINVAL;
	}
	*out = st;
	return 0;
}

int
proc_parse_pid(const char *text, size_t len, int32_t *pid)
{
	const char *end = text + len;
	const char *p = text;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
		p++;
	}
	uint64_t v;
	if (!read_unsigned(&p, end, PROC_PID_MAX, &v) || v == 0) {
		return -EINVAL;
	}
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) {
		p++;
	}
	if (p != end) {
		return -EINVAL;
	}
	*pid = (int32_t)v;
	return 0;
}

int
proc_parse_uptime(const char *text, double *seconds)
{
	const char *end = text + strlen(text);
	const char *p = text;
	uint64_t whole, frac = 0;
	if (!read_unsigned(&p, end, UINT64_C(1) << 40, &whole)) {
		return -EINVAL;
	}
	double scale = 1;
	if (p < end && *p == '.') {
		p++;
		for (; p < end && *p >= '0' && *p <= '9' && scale < 1e9; p++) {
			frac = frac * 10 + (uint64_t)(*p - '0');
			scale *= 10;
		}
		if (scale == 1) {
			return -EINVAL;
		}
	}
	if (p < end && *p != ' ' && *p != '\n') {
		return -EINVAL;
	}
	*seconds = (double)whole + (double)frac / scale;
	return 0;
}

size_t
proc_cmdline_text(char *buf, size_t len)
{
	while (len > 0 && buf[len - 1] == '\0') {
		len--;
	}
	for (size_t i = 0; i < len; i++) {
		if (buf[i] == '\0') {
			buf[i] = ' ';
		}
	}
	buf[len] = '\0';
	return len;
}
