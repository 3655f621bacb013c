/* The OOM killer's kill line in the kernel log (see oom_log.h). */
#include "oom_log.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define KILLED "Killed process "

/* the last occurrence of NEEDLE in HAY[0..LEN), or NULL */
static const char *
find_last(const char *hay, size_t len, const char *needle)
{
	size_t n = strlen(needle);
	for (size_t i = len >= n ? len - n + 1 : 0; i-- > 0;) {
		if (memcmp(hay + i, needle, n) == 0) {
			return hay + i;
		}
	}
	return NULL;
}

/* where the kill line's "Killed process " starts: at the start or after "REASON: "; NULL when nowhere */
static const char *
find_killed(const char *msg, size_t len)
{
	size_t n = strlen(KILLED);
	for (size_t i = 0; i + n <= len; i++) {
		if (memcmp(msg + i, KILLED, n) == 0 && (i == 0 || (i >= 2 && msg[i - 2] == ':' && msg[i - 1] == ' '))) {
			return msg + i;
		}
	}
	return NULL;
}

/*
 * The ')' that closes the name opened at P (END: the message's end): the
 * name may hold ')' and blanks itself, so the last ") total-vm:" (every
 * capture), the last "), UID " (a distribution's), a ')' ending the
 * message, else the first ')' a blank or ',' follows.
 */
static const char *
name_end(const char *p, const char *end)
{
	const char *c = find_last(p, (size_t)(end - p), ") total-vm:");
	if (!c) {
		c = find_last(p, (size_t)(end - p), "), UID ");
	}
	if (!c && end > p && end[-1] == ')') {
		c = end - 1;
	}
	for (const char *q = p; !c && q < end; q++) {
		if (*q == ')' && (q + 1 == end || q[1] == ' ' || q[1] == ',')) {
			c = q;
		}
	}
	return c;
}

static int
hex_value(char c)
{
	if (c >= '0' && c <= '9') {
		return c - '0';
	}
	char lower = (char)(c | 0x20);
	return lower >= 'a' && lower <= 'f' ? lower - 'a' + 10 : -1;
}

/* the name in [P, END) into OUT (room for SIZE): /dev/kmsg's \xNN decoded, control characters as '?', cut to fit */
static void
decode_name(const char *p, const char *end, char *out, size_t size)
{
	size_t n = 0;
	while (p < end && n + 1 < size) {
		unsigned char c = (unsigned char)*p++;
		int hi, lo;
		if (c == '\\' && end - p >= 3 && p[0] == 'x' && (hi = hex_value(p[1])) >= 0 &&
		    (lo = hex_value(p[2])) >= 0) {
			c = (unsigned char)(hi * 16 + lo);
			p += 3;
		}
		out[n++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	out[n] = '\0';
}

int
oom_log_parse_message(const char *msg, size_t len, struct oom_victim *out)
{
	while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == '\r' || msg[len - 1] == ' ')) {
		len--;
	}
	const char *end = msg + len;
	const char *p = find_killed(msg, len);
	if (!p) {
		return -ENOENT;
	}
	p += strlen(KILLED);
	int64_t pid = 0;
	const char *digits = p;
	while (p < end && *p >= '0' && *p <= '9' && p - digits < 10) {
		pid = pid * 10 + (*p++ - '0');
	}
	if (p == digits || pid <= 0 || pid > INT32_MAX || end - p < 2 || p[0] != ' ' || p[1] != '(') {
		return -ENOENT;
	}
	p += 2;
	const char *close = name_end(p, end);
	if (!close) {
		return -ENOENT;
	}
	out->pid = (int32_t)pid;
	decode_name(p, close, out->comm, sizeof(out->comm));
	return 0;
}

int
oom_log_parse_record(const char *rec, size_t len, struct oom_victim *out)
{
	const char *end = rec + len;
	const char *nl = memchr(rec, '\n', len);
	const char *head_end = memchr(rec, ';', (size_t)((nl ? nl : end) - rec));
	if (!head_end) {
		return -EINVAL;
	}
	/* PRI,SEQ,USEC,FLAGS[,...]: three numbers, then whatever a later kernel adds */
	const char *p = rec;
	uint64_t pri = 0;
	for (int field = 0; field < 3; field++) {
		const char *digits = p;
		uint64_t v = 0;
		while (p < head_end && *p >= '0' && *p <= '9' && p - digits < 19) {
			v = v * 10 + (uint64_t)(*p++ - '0');
		}
		if (p == digits || p == head_end || *p != ',') {
			return -EINVAL;
		}
		p++;
		pri = field == 0 ? v : pri;
	}
	if (pri >> 3 != 0) {
		return -ENOENT; /* user space's (its facility is never the kernel's 0) */
	}
	const char *msg = head_end + 1;
	return oom_log_parse_message(msg, (size_t)((nl ? nl : end) - msg), out);
}
