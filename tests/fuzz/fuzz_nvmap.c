/*
 * Fuzz target for nvmap's clients file (procs/nvmap_clients.c) and the
 * list it fills (core/gpu_procs.c). The input, exactly its length and not
 * NUL-terminated (ASan sees any read past it), is the file. Invariants:
 *   refused: the list is as it was (one sentinel entry), the count untouched;
 *   parsed:  pids 1..PROC_PID_MAX, strictly rising (one entry a pid), none
 *            holding GPU_PROC_UNKNOWN (the file always says), at most one
 *            entry a line, and gpu_procs_find() finds each one's bytes.
 * Any violation aborts, which libFuzzer and the replay driver report.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu_procs.h"
#include "procs/nvmap_clients.h"
#include "procs/proc_parse.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 262144) {
		return 0;
	}
	char *exact = malloc(size ? size : 1);
	memcpy(exact, data, size);
	struct gpu_procs l = {0};
	gpu_procs_add(&l, 7, 7); /* a sentinel: a refusal leaves it */
	size_t bad = 12345, lines = 1;
	for (size_t i = 0; i < size; i++) {
		lines += exact[i] == '\n';
	}
	int r = nvmap_clients_parse(exact, size, &l, &bad);
	CHECK(r == 0 || r == -EINVAL);
	if (r < 0) {
		CHECK(l.count == 1 && l.items[0].pid == 7 && l.items[0].bytes == 7 && bad == 12345);
	} else {
		CHECK(l.count < lines && bad < lines);
		for (size_t i = 0; i < l.count; i++) {
			uint64_t b = 0;
			CHECK(l.items[i].pid >= 1 && l.items[i].pid <= PROC_PID_MAX);
			CHECK(i == 0 || l.items[i].pid > l.items[i - 1].pid);
			CHECK(l.items[i].bytes != GPU_PROC_UNKNOWN);
			CHECK(gpu_procs_find(&l, l.items[i].pid, &b) && b == l.items[i].bytes);
		}
	}
	gpu_procs_free(&l);
	free(exact);
	return 0;
}
