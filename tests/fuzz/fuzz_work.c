/*
 * Fuzz target for work/'s two wire formats (work/ledger.c): the body of
 * POST /api/v1/work, read with core/json_read.h, and a StatsD line. The
 * whole input is given to both. Invariants checked on every input:
 *   POST:   0, -EINVAL or -ENOSPC; a refusal says why (no "(null)") and
 *           leaves the ledger as it was; a report adds its count (above 0,
 *           at most 1e9) to one normalised name ([a-z0-9_], 1-24
 *           characters), and that name and count written back as JSON are
 *           taken again, the same;
 *   StatsD: a line taken names a span inside it and a finite count; a
 *           refused one says why.
 * Any violation aborts, which libFuzzer and the replay driver report.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "work/work.h"
#include "work/work_priv.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct state {
	size_t count;
	char names[WORK_NAMES_MAX][WORK_NAME_MAX];
	double units[WORK_NAMES_MAX];
	uint64_t reports;
};

static void
snapshot(struct work_ledger *l, struct state *s)
{
	s->count = work_ledger_snapshot(l, s->names, s->units, &s->reports);
}

static bool
name_ok(const char *name)
{
	size_t n = strlen(name);
	return n >= 1 && n < WORK_NAME_MAX && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

/* The one name whose units grew from BEFORE to AFTER, and by how much. */
static size_t
grown(const struct state *before, const struct state *after, double *by)
{
	size_t which = after->count;
	for (size_t i = 0; i < after->count; i++) {
		double was = i < before->count ? before->units[i] : 0;
		if (after->units[i] != was) {
			CHECK(which == after->count);
			which = i;
			*by = after->units[i] - was;
		}
	}
	CHECK(which < after->count);
	return which;
}

static void
check_post(const char *body, size_t len)
{
	struct work_ledger *l = work_ledger_create();
	struct state before, after;
	snapshot(l, &before);
	char err[160] = "";
	int r = work_post_json(l, body, len, err, sizeof(err));
	snapshot(l, &after);
	CHECK(r == 0 || r == -EINVAL || r == -ENOSPC);
	if (r < 0) {
		/* a reason printed from NULL says "(null)", which only an echo of the input may */
		CHECK(err[0] && (!strstr(err, "(null)") || memmem(body, len, "(null)", 6)));
		CHECK(after.count == before.count && after.reports == before.reports);
		work_ledger_unref(l);
		return;
	}
	CHECK(after.reports == before.reports + 1);
	double by = 0;
	size_t i = grown(&before, &after, &by);
	CHECK(name_ok(after.names[i]));
	CHECK(by > 0 && by <= 1e9);
	/* written back as JSON, the same report */
	char again[128];
	int n = snprintf(again, sizeof(again), "{\"name\": \"%s\", \"count\": %.17g}", after.names[i], by);
	CHECK(n > 0 && (size_t)n < sizeof(again));
	struct work_ledger *l2 = work_ledger_create();
	CHECK(work_post_json(l2, again, (size_t)n, err, sizeof(err)) == 0);
	struct state empty = {0}, one;
	snapshot(l2, &one);
	double by2 = 0;
	size_t j = grown(&empty, &one, &by2);
	CHECK(strcmp(one.names[j], after.names[i]) == 0 && by2 == by);
	work_ledger_unref(l2);
	work_ledger_unref(l);
}

static void
check_statsd(const char *line, size_t len)
{
	const char *name = NULL;
	size_t name_len = 0;
	double count = 0;
	char err[128] = "";
	if (work_parse_statsd(line, len, &name, &name_len, &count, err, sizeof(err)) == 0) {
		CHECK(name >= line && name + name_len <= line + len);
		CHECK(isfinite(count));
	} else {
		CHECK(err[0]);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy: the replay driver and ASan see any read past LEN */
	char *text = malloc(size ? size : 1);
	CHECK(text);
	memcpy(text, data, size);
	check_post(text, size);
	check_statsd(text, size);
	free(text);
	return 0;
}
