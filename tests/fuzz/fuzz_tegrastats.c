/*
 * Fuzz target for tegrastats_parse_line(). Invariants checked on every input:
 *   success: at least one token understood, every metric name canonical
 *            (metric_name_valid), found by its name, every value finite, the
 *            stamp in range;
 *   failure: -EINVAL, the set empty, 1 <= column <= size + 1, a message.
 * Any violation aborts, which libFuzzer and the replay driver report.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tegra/tegrastats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct metric_set set;

static void
check_stamp(const struct tegrastats_stamp *st)
{
	if (!st->present) {
		return;
	}
	if (st->month < 1 || st->month > 12 || st->day < 1 || st->day > 31 || st->hour < 0 ||
	    st->hour > 23 || st->minute < 0 || st->minute > 59 || st->second < 0 ||
	    st->second > 60 || st->year < 1900 || st->year > 9999) {
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tegrastats_info info;
	struct parse_error err;
	memset(&err, 0, sizeof(err));
	metric_set_clear(&set);
	int r = tegrastats_parse_line((const char *)data, size, &set, &info, &err);
	if (r == 0) {
		/* a NUL byte is an error for its line, never a silently shorter sample */
		if (info.tokens == 0 || set.count > METRIC_SET_MAX || memchr(data, 0, size)) {
			abort();
		}
		for (size_t i = 0; i < set.count; i++) {
			if (!metric_name_valid(set.items[i].name) || !isfinite(set.items[i].value)) {
				abort();
			}
			/* the index finds every item (the set replays names across inputs) */
			if (metric_set_find(&set, set.items[i].name) != &set.items[i]) {
				abort();
			}
		}
		check_stamp(&info.stamp);
		return 0;
	}
	if (r != -EINVAL || set.count != 0 || err.column < 1 || (size_t)err.column > size + 1 ||
	    err.msg[0] == '\0' || memchr(err.msg, '\0', sizeof(err.msg)) == NULL) {
		abort();
	}
	return 0;
}
