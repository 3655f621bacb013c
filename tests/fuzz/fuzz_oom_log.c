/*
 * Fuzz target for the OOM killer's kill line in the kernel log
 * (host/oom_log.c). The input, exactly its length and not NUL-terminated
 * (ASan sees any read past it), is one /dev/kmsg record, and then the
 * same bytes as a message alone. Invariants:
 *   refused: 0, -ENOENT or -EINVAL (a message alone: 0 or -ENOENT), the
 *            victim untouched;
 *   a kill:  a pid 1..INT32_MAX, a NUL-terminated name within TOP_COMM_MAX
 *            without control characters, no longer than the input; a record
 *            is a kill only if its message alone is the same kill.
 * Any violation aborts, which libFuzzer and the replay driver report.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "host/oom_log.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_victim(const struct oom_victim *v, size_t size)
{
	size_t len = strnlen(v->comm, sizeof(v->comm));
	CHECK(v->pid >= 1);
	CHECK(len < sizeof(v->comm) && len <= size);
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)v->comm[i];
		CHECK(c >= 0x20 && c != 0x7f);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *exact = size <= 65536 ? malloc(size ? size : 1) : NULL; /* a record is at most 8 KiB: more says nothing new */
	if (!exact) {
		return 0;
	}
	memcpy(exact, data, size);
	const struct oom_victim untouched = {.pid = -7, .comm = "untouched"};
	struct oom_victim rec = untouched, msg = untouched;
	int r = oom_log_parse_record(exact, size, &rec);
	CHECK(r == 0 || r == -ENOENT || r == -EINVAL);
	if (r == 0) {
		check_victim(&rec, size);
		/* the same kill when the record's message is parsed alone */
		const char *semi = memchr(exact, ';', size);
		CHECK(semi != NULL);
		const char *end = memchr(semi, '\n', size - (size_t)(semi - exact));
		struct oom_victim again = untouched;
		CHECK(oom_log_parse_message(semi + 1, (size_t)((end ? end : exact + size) - semi - 1), &again) == 0);
		CHECK(again.pid == rec.pid && strcmp(again.comm, rec.comm) == 0);
	} else {
		CHECK(memcmp(&rec, &untouched, sizeof(rec)) == 0);
	}
	r = oom_log_parse_message(exact, size, &msg);
	CHECK(r == 0 || r == -ENOENT);
	if (r == 0) {
		check_victim(&msg, size);
	} else {
		CHECK(memcmp(&msg, &untouched, sizeof(msg)) == 0);
	}
	free(exact);
	return 0;
}
