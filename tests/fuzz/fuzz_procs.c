/*
 * Fuzz target for the process parsers (procs/proc_parse.c) and the top
 * processes a recorded sample carries (core/sample_json.c). The first
 * byte chooses one, the rest is its input. The length-taking parsers get
 * a buffer of exactly that length, not NUL-terminated, so ASan sees any
 * read past it. Invariants checked on every input:
 *   stat:    success gives a pid of 1..PROC_PID_MAX, a ppid within it, a
 *            NUL-terminated name, a state that is no blank, threads and
 *            rss >= 0;
 *   status:  a NUL-terminated name; threads and Vm sizes -1 or 0..2^53;
 *   pid:     success gives 1..PROC_PID_MAX;
 *   uptime:  finite and >= 0;
 *   cmdline: no NUL before the new end, and the end within the input;
 *   processes JSON: at most TOP_PROCESSES_MAX a list, names NUL-terminated.
 * Any violation aborts, which libFuzzer and the replay driver report.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_read.h"
#include "core/sample_json.h"
#include "procs/proc_parse.h"
#include "fuzz_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool
size_ok(int64_t v)
{
	return v == -1 || (v >= 0 && v <= (int64_t)(UINT64_C(1) << 53));
}

static void
fuzz_top(const char *text)
{
	struct json_reader r;
	struct top_processes tp;
	json_reader_init(&r, text);
	top_processes_from_json(&r, &tp);
	CHECK(tp.cpu_count >= 0 && tp.cpu_count <= TOP_PROCESSES_MAX);
	CHECK(tp.memory_count >= 0 && tp.memory_count <= TOP_PROCESSES_MAX);
	CHECK(isfinite(tp.cpu_window_s) && tp.cpu_window_s >= 0);
	for (int i = 0; i < tp.cpu_count; i++) {
		CHECK(memchr(tp.by_cpu[i].comm, '\0', sizeof(tp.by_cpu[i].comm)) != NULL);
	}
	for (int i = 0; i < tp.memory_count; i++) {
		CHECK(memchr(tp.by_memory[i].comm, '\0', sizeof(tp.by_memory[i].comm)) != NULL);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 65536) {
		return 0;
	}
	uint8_t which = data[0];
	size_t len = size - 1;
	char *exact = malloc(len ? len : 1); /* exactly the input: no NUL after it */
	memcpy(exact, data + 1, len);
	char *text = malloc(len + 1); /* the same as C text, for the parsers that take one */
	memcpy(text, data + 1, len);
	text[len] = '\0';
	struct proc_stat st;
	struct proc_status ps;
	int32_t pid;
	double up;
	switch (which % 6) {
	case 0:
		if (proc_parse_stat(exact, len, &st) == 0) {
			CHECK(st.pid >= 1 && st.pid <= PROC_PID_MAX && st.ppid >= 0 && st.ppid <= PROC_PID_MAX);
			CHECK(memchr(st.comm, '\0', sizeof(st.comm)) != NULL);
			CHECK(st.state != ' ' && st.state != '\n' && st.threads >= 0 && st.rss_pages >= 0);
		}
		break;
	case 1:
		if (proc_parse_status(text, &ps) == 0) {
			CHECK(memchr(ps.name, '\0', sizeof(ps.name)) != NULL);
			CHECK(size_ok(ps.threads) && size_ok(ps.vm_size_kb) && size_ok(ps.vm_rss_kb));
		}
		break;
	case 2:
		if (proc_parse_pid(exact, len, &pid) == 0) {
			CHECK(pid >= 1 && pid <= PROC_PID_MAX);
		}
		break;
	case 3:
		if (proc_parse_uptime(text, &up) == 0) {
			CHECK(isfinite(up) && up >= 0);
		}
		break;
	case 4: {
		size_t n = proc_cmdline_text(text, len);
		CHECK(n <= len && text[n] == '\0' && memchr(text, '\0', n) == NULL);
		break;
	}
	default:
		fuzz_top(text);
		break;
	}
	free(exact);
	free(text);
	return 0;
}
