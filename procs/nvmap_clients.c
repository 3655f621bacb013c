/* nvmap's clients file (nvmap_clients.h): pure, bounded by the length given, no NUL needed. */
#include "nvmap_clients.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "proc_parse.h"

/* One word of a line: [start, end). */
struct word {
	const char *start, *end;
};

/* What a line holds: its first word, the two last ones, how many. */
struct line_words {
	struct word first, before_last, last;
	size_t count;
};

static bool
blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static void
split(const char *p, const char *end, struct line_words *w)
{
	*w = (struct line_words){0};
	while (p < end) {
		while (p < end && blank(*p)) {
			p++;
		}
		if (p == end) {
			break;
		}
		struct word now = {p, p};
		while (now.end < end && !blank(*now.end)) {
			now.end++;
		}
		if (w->count++ == 0) {
			w->first = now;
		}
		w->before_last = w->last;
		w->last = now;
		p = now.end;
	}
}

static bool
is(struct word w, const char *text)
{
	size_t n = strlen(text);
	return (size_t)(w.end - w.start) == n && memcmp(w.start, text, n) == 0;
}

/* "118372K": decimal digits and a unit, K, M or G; bytes below GPU_PROC_UNKNOWN into *BYTES */
static bool
parse_size(struct word w, uint64_t *bytes)
{
	static const char units[] = "KMG"; /* KiB, MiB, GiB */
	const char *unit = w.end - w.start >= 2 ? memchr(units, w.end[-1], 3) : NULL;
	if (!unit) {
		return false;
	}
	int shift = 10 * (int)(unit - units + 1);
	uint64_t v = 0;
	for (const char *p = w.start; p < w.end - 1; p++) {
		if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10) {
			return false;
		}
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (v >= (GPU_PROC_UNKNOWN >> shift)) {
		return false;
	}
	*bytes = v << shift;
	return true;
}

/* A client's line (CLIENT PROCESS... PID SIZE) into OUT; pid 0 is the kernel's: no process. False: not one. */
static bool
client(const struct line_words *w, struct gpu_procs *out)
{
	uint64_t bytes;
	int32_t pid;
	if (w->count < 3 || !parse_size(w->last, &bytes)) {
		return false;
	}
	if (is(w->before_last, "0")) {
		return true;
	}
	if (proc_parse_pid(w->before_last.start, (size_t)(w->before_last.end - w->before_last.start), &pid) < 0) {
		return false;
	}
	gpu_procs_add(out, pid, bytes);
	return true;
}

int
nvmap_clients_parse(const char *text, size_t len, struct gpu_procs *out, size_t *bad)
{
	const char *end = text + len;
	const char *nl = memchr(text, '\n', len);
	struct line_words w;
	split(text, nl ? nl : end, &w);
	if (w.count < 2 || !is(w.first, "CLIENT") || !is(w.last, "SIZE")) {
		return -EINVAL;
	}
	gpu_procs_clear(out);
	*bad = 0;
	while (nl) {
		const char *p = nl + 1;
		nl = memchr(p, '\n', (size_t)(end - p));
		split(p, nl ? nl : end, &w);
		uint64_t sum;
		bool total = w.count == 2 && is(w.first, "total") && parse_size(w.last, &sum);
		if (w.count > 0 && !total && !client(&w, out)) {
			(*bad)++;
		}
	}
	gpu_procs_merge(out, GPU_PROCS_SUM);
	return 0;
}
