/* What the tegrastats parser tests share (see tegrastats_lines.h). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tegrastats_lines.h"

struct metric_set set;
struct metric_set full_set;

void
read_data_lines(const char *name, struct data_lines *out)
{
	char path[1024];
	int n = snprintf(path, sizeof(path), "%s/tegrastats/%s", FIXTURES_DIR, name);
	assert_true(n > 0 && (size_t)n < sizeof(path));
	FILE *f = fopen(path, "r");
	if (!f) {
		fail_msg("cannot open %s", path);
	}
	char buf[LINE_BYTES];
	out->count = 0;
	while (fgets(buf, sizeof(buf), f)) {
		size_t len = strlen(buf);
		assert_true(len < sizeof(buf) - 1); /* no line longer than the buffer */
		while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) {
			buf[--len] = '\0';
		}
		if (len == 0 || buf[0] == '#') {
			continue;
		}
		assert_true(out->count < MAX_FILE_LINES);
		memcpy(out->text[out->count++], buf, len + 1);
	}
	fclose(f);
}

int
parse(const char *line, struct tegrastats_info *info, struct parse_error *err)
{
	metric_set_clear(&set);
	return tegrastats_parse_line(line, strlen(line), &set, info, err);
}

int
parse_ok(const char *line, struct tegrastats_info *info)
{
	struct parse_error err = { 0 };
	int r = parse(line, info, &err);
	if (r != 0) {
		fail_msg("parse failed at column %d: %s\nline: %s", err.column, err.msg, line);
	}
	return r;
}

void
expect_metric(const char *name, double want)
{
	double got;
	if (!metric_set_get(&set, name, &got)) {
		fail_msg("metric %s missing", name);
	}
	if (!(fabs(got - want) <= 1e-9 * fmax(1.0, fabs(want)))) {
		fail_msg("metric %s = %.17g, expected %.17g", name, got, want);
	}
}

void
expect_absent(const char *name)
{
	if (metric_set_find(&set, name)) {
		fail_msg("metric %s should not be emitted", name);
	}
}

void
expect_exactly(const struct kv *kv, size_t count, const char *line)
{
	size_t n = 0;
	for (; kv[n].name; n++) {
		for (size_t k = 0; k < n; k++) {
			if (strcmp(kv[k].name, kv[n].name) == 0) {
				fail_msg("table lists %s twice", kv[n].name);
			}
		}
		expect_metric(kv[n].name, kv[n].value);
	}
	if (n != count) {
		fail_msg("table has %zu entries, hand count says %zu: %s", n, count, line);
	}
	if (set.count != count) {
		for (size_t i = 0; i < set.count; i++) {
			print_message("  got %s = %g\n", set.items[i].name, set.items[i].value);
		}
		fail_msg("%zu metrics, expected %zu: %s", set.count, count, line);
	}
}
