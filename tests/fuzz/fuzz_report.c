/*
 * Fuzz target for what `tegrawatch report` reads besides the sample JSON
 * itself (core/sample_json.c, fuzzed through fuzz_top): a recording's line
 * (report/record_read.c, record_parse_line) and the phases file
 * (report/report_phases.c). The first byte picks one (even: a recording
 * line, odd: a phases file), the rest is its text. Invariants:
 *   a line:   1 (a sample, which has its time), 0 (the header) or -EINVAL
 *             with the column of the mistake, 1 to the line's length + 1;
 *             every metric put has a NUL-terminated name;
 *   phases:   0 with COUNT phases, each named (NUL-terminated, not empty),
 *             its end after its start, times finite; or -EINVAL, nothing
 *             handed out, and ERR "LINE: what" with LINE from 1.
 * Any violation aborts, which libFuzzer and the replay driver report.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/board_info.h"
#include "core/sample.h"
#include "report/record.h"
#include "report/report.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
fuzz_line(const char *text, size_t len)
{
	static struct sample s; /* a whole metric set: off the stack */
	sample_clear(&s);
	struct board_identity id = {0};
	bool known = false;
	int column = -7;
	int r = record_parse_line(text, &s, &id, &known, &column);
	CHECK(r == 1 || r == 0 || r == -EINVAL);
	if (r == -EINVAL) {
		CHECK(column >= 1 && (size_t)column <= len + 1);
		return;
	}
	CHECK(column == -7);
	for (size_t i = 0; i < s.metrics.count; i++) {
		const struct metric *m = &s.metrics.items[i];
		CHECK(m->name[0] && memchr(m->name, '\0', sizeof(m->name)) != NULL && strlen(m->name) == m->len);
	}
	CHECK(memchr(id.model, '\0', sizeof(id.model)) != NULL);
}

static void
fuzz_phases(const char *text)
{
	struct report_phase_def *defs = (struct report_phase_def *)&defs; /* anything but NULL: it must stay */
	struct report_phase_def *untouched = defs;
	size_t count = 12345;
	char err[256] = "";
	int r = report_phases_parse(text, &defs, &count, err, sizeof(err));
	CHECK(r == 0 || r == -EINVAL);
	if (r < 0) {
		CHECK(defs == untouched && count == 12345);
		CHECK(err[0] >= '1' && err[0] <= '9' && strstr(err, ": ") != NULL);
		return;
	}
	for (size_t i = 0; i < count; i++) {
		const struct report_phase_def *d = &defs[i];
		CHECK(d->name[0] && memchr(d->name, '\0', sizeof(d->name)) != NULL);
		if (d->relative) {
			CHECK(isfinite(d->start_s) && isfinite(d->end_s) && d->start_s < d->end_s);
		} else {
			CHECK(d->start_ms < d->end_ms);
		}
	}
	free(defs);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len;
	char *text = fuzz_text_after_selector(data, size, &len);
	if (!text) {
		return 0;
	}
	if (data[0] % 2 == 0) {
		fuzz_line(text, len);
	} else {
		fuzz_phases(text);
	}
	free(text);
	return 0;
}
