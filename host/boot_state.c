/* boot.state: parsing, formatting, judging (boot_state.h). */
#include "boot_state.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define HEADER "# tegrawatch boot state 1"
#define EXACT_MAX 9007199254740992LL /* 2^53: every value a double keeps exactly */

int
boot_id_parse(const char *text, char out[BOOT_ID_LEN + 1])
{
	for (int i = 0; i < BOOT_ID_LEN; i++) {
		char c = text[i];
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;
		if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
			return -EINVAL;
		}
	}
	const char *end = text + BOOT_ID_LEN;
	if (!(end[0] == '\0' || (end[0] == '\n' && end[1] == '\0'))) {
		return -EINVAL;
	}
	memcpy(out, text, BOOT_ID_LEN);
	out[BOOT_ID_LEN] = '\0';
	return 0;
}

/* A whole decimal number 0..2^53 of LEN bytes at P. */
static bool
whole(const char *p, size_t len, int64_t *out)
{
	if (len == 0 || len > 16) {
		return false;
	}
	int64_t v = 0;
	for (size_t i = 0; i < len; i++) {
		if (p[i] < '0' || p[i] > '9') {
			return false;
		}
		v = v * 10 + (p[i] - '0');
	}
	if (v > EXACT_MAX) {
		return false;
	}
	*out = v;
	return true;
}

enum {
	K_BOOT_ID,
	K_LAST_SEEN,
	K_UPTIME,
	K_STOPPED,
	K_COUNT
};
static const char *const keys[K_COUNT] = {"boot_id", "last_seen_ms", "uptime_ms", "stopped"};

/* One "key value" line of LEN bytes into ST; false with WHY. */
static bool
parse_line(const char *line, size_t len, struct boot_state *st, unsigned *seen, char *why, size_t why_size)
{
	const char *sp = memchr(line, ' ', len);
	size_t klen = sp ? (size_t)(sp - line) : len;
	const char *v = sp ? sp + 1 : line + len;
	size_t vlen = (size_t)(line + len - v);
	int k = 0;
	while (k < K_COUNT && !(strlen(keys[k]) == klen && memcmp(keys[k], line, klen) == 0)) {
		k++;
	}
	if (k == K_COUNT) {
		snprintf(why, why_size, "not a line of this file (boot_id, last_seen_ms, uptime_ms, stopped)");
		return false;
	}
	if (*seen & (1u << k)) {
		snprintf(why, why_size, "%s given twice", keys[k]);
		return false;
	}
	*seen |= 1u << k;
	char id[BOOT_ID_LEN + 2];
	int64_t n = 0;
	bool ok;
	switch (k) {
	case K_BOOT_ID:
		ok = vlen == BOOT_ID_LEN;
		if (ok) {
			memcpy(id, v, vlen);
			id[vlen] = '\0';
			ok = boot_id_parse(id, st->boot_id) == 0;
		}
		break;
	case K_STOPPED:
		ok = whole(v, vlen, &n) && n <= 1;
		st->stopped = n == 1;
		break;
	default:
		ok = whole(v, vlen, &n);
		*(k == K_LAST_SEEN ? &st->last_seen_ms : &st->uptime_ms) = n;
		break;
	}
	if (!ok) {
		snprintf(why, why_size, "%s: %s", keys[k],
			 k == K_BOOT_ID   ? "not a boot id (8-4-4-4-12 lower-case hex digits)"
			 : k == K_STOPPED ? "not 0 or 1"
					  : "not a whole number of milliseconds");
	}
	return ok;
}

int
boot_state_parse(const char *text, struct boot_state *out, int *bad_line, char *why, size_t why_size)
{
	struct boot_state st = {.uptime_ms = -1};
	unsigned seen = 0;
	int line_no = 0;
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		line_no++;
		bool ok = true;
		if (line_no == 1) {
			ok = len == strlen(HEADER) && memcmp(line, HEADER, len) == 0;
			if (!ok) {
				snprintf(why, why_size, "not a tegrawatch boot state file (its first line is '%s')",
					 HEADER);
			}
		} else if (len > 0 && line[0] != '#') {
			ok = parse_line(line, len, &st, &seen, why, why_size);
		}
		if (!ok) {
			*bad_line = line_no;
			return -EINVAL;
		}
		line = nl ? nl + 1 : line + len;
	}
	unsigned need = 1u << K_BOOT_ID | 1u << K_LAST_SEEN;
	if ((seen & need) != need) {
		*bad_line = line_no > 0 ? line_no : 1;
		snprintf(why, why_size, "%s missing", seen & 1u << K_BOOT_ID ? "last_seen_ms" : "boot_id");
		return -EINVAL;
	}
	*out = st;
	return 0;
}

int
boot_state_format(const struct boot_state *st, char *buf, size_t size)
{
	int n = snprintf(buf, size, HEADER "\nboot_id %s\nlast_seen_ms %" PRId64 "\n", st->boot_id,
			 st->last_seen_ms > 0 ? st->last_seen_ms : 0);
	if (n >= 0 && (size_t)n < size && st->uptime_ms >= 0) {
		n += snprintf(buf + n, size - (size_t)n, "uptime_ms %" PRId64 "\n", st->uptime_ms);
	}
	if (n >= 0 && (size_t)n < size) {
		n += snprintf(buf + n, size - (size_t)n, "stopped %d\n", st->stopped ? 1 : 0);
	}
	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}

enum boot_change
boot_state_judge(const struct boot_state *prev, const char *now_id)
{
	if (strcmp(prev->boot_id, now_id) == 0) {
		return BOOT_SAME;
	}
	return prev->stopped ? BOOT_ORDERLY : BOOT_UNEXPECTED;
}
