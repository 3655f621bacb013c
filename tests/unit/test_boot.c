/*
 * Reboots: the boot id as the kernel writes it (/proc/sys/kernel/random/boot_id,
 * a UUID and a newline: random(4)), boot.state read, written and judged, and
 * the source against a fixture /proc and a state file in a temporary directory.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "core/sample.h"
#include "host/boot_source.h"
#include "host/boot_state.h"
#include "tests/unit/helpers.h"

#define ID_A "e7724f94-ea06-45b8-a32b-89dad677c469"
#define ID_B "0b4bc5a3-6a3d-4f0e-9a8b-2a1d0c9e7f11"

static void
test_boot_id(void **state)
{
	(void)state;
	char id[BOOT_ID_LEN + 1] = "unchanged";
	assert_int_equal(boot_id_parse(ID_A "\n", id), 0);
	assert_string_equal(id, ID_A);
	assert_int_equal(boot_id_parse(ID_B, id), 0);
	assert_string_equal(id, ID_B);
	const char *bad[] = {"", "\n", "e7724f94-ea06-45b8-a32b-89dad677c46", "E7724F94-EA06-45B8-A32B-89DAD677C469",
			     "e7724f94ea06-45b8-a32b-89dad677c4690", "e7724f94-ea06-45b8-a32b-89dad677c469\n\n",
			     "e7724f94-ea06-45b8-a32b-89dad677c469 ", "g7724f94-ea06-45b8-a32b-89dad677c469"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (boot_id_parse(bad[i], id) != -EINVAL) {
			fail_msg("'%s' taken for a boot id", bad[i]);
		}
	}
	assert_string_equal(id, ID_B); /* untouched by the failures */
}

static void
test_state_round_trip(void **state)
{
	(void)state;
	struct boot_state st = {.boot_id = ID_A, .last_seen_ms = 1764345600123, .uptime_ms = 86400000, .stopped = true};
	char text[BOOT_STATE_MAX];
	int n = boot_state_format(&st, text, sizeof(text));
	assert_true(n > 0);
	assert_string_equal(text, "# tegrawatch boot state 1\nboot_id " ID_A
				  "\nlast_seen_ms 1764345600123\nuptime_ms 86400000\nstopped 1\n");
	struct boot_state back;
	int line = 0;
	char why[160];
	assert_int_equal(boot_state_parse(text, &back, &line, why, sizeof(why)), 0);
	assert_string_equal(back.boot_id, ID_A);
	assert_int_equal(back.last_seen_ms, 1764345600123);
	assert_int_equal(back.uptime_ms, 86400000);
	assert_true(back.stopped);
	assert_int_equal(boot_state_format(&st, text, 40), -ENOSPC);
	/* comments and empty lines pass; uptime and stopped may be left out */
	assert_int_equal(boot_state_parse("# tegrawatch boot state 1\n# a note\n\nboot_id " ID_B "\nlast_seen_ms 5", &back,
					  &line, why, sizeof(why)),
			 0);
	assert_int_equal(back.uptime_ms, -1);
	assert_false(back.stopped);
}

/* A state file that is not one: refused with the line and the reason, never taken for a boot. */
static void
test_state_garbage(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		int line;
		const char *why;
	} cases[] = {
		{"", 1, "boot_id missing"},
		{"boot_id " ID_A "\n", 1, "not a tegrawatch boot state file"},
		{"# tegrawatch boot state 2\nboot_id " ID_A "\nlast_seen_ms 1\n", 1, "not a tegrawatch boot state file"},
		{"# tegrawatch boot state 1\nboot_id 12345\nlast_seen_ms 1\n", 2, "boot_id: not a boot id"},
		{"# tegrawatch boot state 1\nboot_id \xff\xfe" ID_A "\n", 2, "boot_id: not a boot id"},
		{"# tegrawatch boot state 1\nboot_id " ID_A "\nlast_seen_ms -5\n", 3, "last_seen_ms: not a whole number"},
		{"# tegrawatch boot state 1\nboot_id " ID_A "\nlast_seen_ms 99999999999999999\n", 3, "last_seen_ms"},
		{"# tegrawatch boot state 1\nboot_id " ID_A "\n", 2, "last_seen_ms missing"},
		{"# tegrawatch boot state 1\nboot_id " ID_A "\nboot_id " ID_B "\n", 3, "boot_id given twice"},
		{"# tegrawatch boot state 1\nboot_id " ID_A "\nstopped 2\nlast_seen_ms 1\n", 3, "stopped: not 0 or 1"},
		{"# tegrawatch boot state 1\nboot_id " ID_A "\nwhatever 1\n", 3, "not a line of this file"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct boot_state st = {.boot_id = "kept"};
		int line = 0;
		char why[160] = "";
		if (boot_state_parse(cases[i].text, &st, &line, why, sizeof(why)) != -EINVAL || line != cases[i].line ||
		    !strstr(why, cases[i].why)) {
			fail_msg("case %zu: line %d, '%s'; wanted line %d, '%s'", i, line, why, cases[i].line,
				 cases[i].why);
		}
		assert_string_equal(st.boot_id, "kept");
	}
}

static void
test_judge(void **state)
{
	(void)state;
	struct boot_state prev = {.boot_id = ID_A, .last_seen_ms = 1, .stopped = false};
	assert_int_equal(boot_state_judge(&prev, ID_A), BOOT_SAME);
	assert_int_equal(boot_state_judge(&prev, ID_B), BOOT_UNEXPECTED);
	prev.stopped = true;
	assert_int_equal(boot_state_judge(&prev, ID_B), BOOT_ORDERLY);
	assert_int_equal(boot_state_judge(&prev, ID_A), BOOT_SAME); /* a restart after a stop */
}

/* Runs the source once over a fixture /proc with boot id NOW and the state file holding STATE_TEXT (NULL: none). */
static void
run_once(const char *dir, const char *now, const char *state_text, struct sample *s, char *after, size_t size)
{
	char proc[512], path[512], state_path[512];
	th_join(proc, sizeof(proc), dir, "proc");
	th_join(path, sizeof(path), dir, "proc/sys/kernel/random/boot_id");
	th_write_text(path, now);
	th_join(state_path, sizeof(state_path), dir, "boot.state");
	if (state_text) {
		th_write_text(state_path, state_text);
	} else {
		remove(state_path);
	}
	struct boot_source_options o = {.state_path = state_path, .proc = proc};
	struct source *src = NULL;
	assert_int_equal(boot_source_create(&o, &src), 0);
	sample_clear(s);
	assert_int_equal(src->ops->read(src, s), 0);
	source_destroy(src);
	char *text = th_read_file(state_path, NULL);
	snprintf(after, size, "%s", text);
	free(text);
}

static void
test_source(void **state)
{
	(void)state;
	char *dir = th_tmpdir("boot");
	char p[512];
	const char *parts[] = {"proc", "proc/sys", "proc/sys/kernel", "proc/sys/kernel/random"};
	for (size_t i = 0; i < 4; i++) {
		assert_int_equal(mkdir(th_join(p, sizeof(p), dir, parts[i]), 0755), 0);
	}
	struct sample *s = calloc(1, sizeof(*s));
	char after[BOOT_STATE_MAX];
	const char *prev_unexpected = "# tegrawatch boot state 1\nboot_id " ID_B "\nlast_seen_ms 1764345600000\nstopped 0\n";
	const char *prev_orderly = "# tegrawatch boot state 1\nboot_id " ID_B "\nlast_seen_ms 1764345600000\nstopped 1\n";
	const char *same = "# tegrawatch boot state 1\nboot_id " ID_A "\nlast_seen_ms 1764345600000\nstopped 0\n";

	run_once(dir, ID_A "\n", prev_unexpected, s, after, sizeof(after));
	assert_int_equal(s->metrics.count, 1);
	assert_string_equal(s->metrics.items[0].name, "reboot.unexpected.last_seen_timestamp_s");
	assert_float_equal(s->metrics.items[0].value, 1764345600.0, 1e-6);
	assert_non_null(strstr(after, "boot_id " ID_A "\n")); /* this boot, on file */
	assert_non_null(strstr(after, "stopped 1\n"));        /* and stopped cleanly */

	run_once(dir, ID_A "\n", prev_orderly, s, after, sizeof(after));
	assert_int_equal(s->metrics.count, 1);
	assert_string_equal(s->metrics.items[0].name, "reboot.orderly.last_seen_timestamp_s");
	assert_float_equal(s->metrics.items[0].value, 1764345600.0, 1e-6);

	run_once(dir, ID_A "\n", same, s, after, sizeof(after));
	assert_int_equal(s->metrics.count, 0); /* the same boot: nothing */

	run_once(dir, ID_A "\n", NULL, s, after, sizeof(after));
	assert_int_equal(s->metrics.count, 0); /* the first start: nothing to compare */
	assert_non_null(strstr(after, "boot_id " ID_A "\n"));

	/* a garbage boot id on file: said, nothing told, the file written again */
	run_once(dir, ID_A "\n", "# tegrawatch boot state 1\nboot_id not-a-uuid\nlast_seen_ms 1\n", s, after, sizeof(after));
	assert_int_equal(s->metrics.count, 0);
	assert_non_null(strstr(after, "boot_id " ID_A "\n"));

	/* a kernel without a readable boot id: no source */
	char state_path[512], proc[512];
	th_join(p, sizeof(p), dir, "proc/sys/kernel/random/boot_id");
	th_write_text(p, "garbage\n");
	struct boot_source_options o = {.state_path = th_join(state_path, sizeof(state_path), dir, "boot.state"),
					.proc = th_join(proc, sizeof(proc), dir, "proc")};
	struct source *src = NULL;
	assert_int_equal(boot_source_create(&o, &src), -EINVAL);
	assert_null(src);
	free(s);
	th_rmtree(dir);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_boot_id), cmocka_unit_test(test_state_round_trip),
		cmocka_unit_test(test_state_garbage), cmocka_unit_test(test_judge),
		cmocka_unit_test(test_source),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
