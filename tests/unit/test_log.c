/* Logging: priority prefixes for the journal, repeated messages held back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/log.h"

static int64_t fake_now_ms;

static int64_t
fake_clock(void)
{
	return fake_now_ms;
}

/* Runs FN with stderr sent to a temporary file; returns what it wrote (malloc'ed). */
static char *
capture(void (*fn)(void), bool as_journal)
{
	char path[] = "/tmp/tw-log-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	fflush(stderr);
	int saved = dup(2);
	dup2(fd, 2);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	char js[64];
	snprintf(js, sizeof(js), "%llu:%llu", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
	if (as_journal) {
		setenv("JOURNAL_STREAM", js, 1);
	} else {
		setenv("JOURNAL_STREAM", "1:2", 1); /* someone else's stream: not ours */
	}
	log_reset_for_tests(fake_clock);
	fn();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	unsetenv("JOURNAL_STREAM");
	log_reset_for_tests(NULL);
	char *buf = calloc(1, 65536);
	assert_non_null(buf);
	assert_true(pread(fd, buf, 65535, 0) >= 0);
	close(fd);
	unlink(path);
	return buf;
}

static void
one_of_each(void)
{
	log_set_level(LOG_DEBUG);
	log_error("e %d", 1);
	log_warn("w %d", 2);
	log_info("i %d", 3);
	log_debug("d %d", 4);
	log_set_level(LOG_WARN);
}

static void
test_journal_priorities(void **state)
{
	(void)state;
	char *out = capture(one_of_each, true);
	assert_string_equal(out, "<3>e 1\n<4>w 2\n<6>i 3\n<7>d 4\n");
	free(out);
	out = capture(one_of_each, false);
	assert_string_equal(out, "tegrawatch: error: e 1\ntegrawatch: warning: w 2\ntegrawatch: info: i 3\n"
				 "tegrawatch: debug: d 4\n");
	free(out);
}

static void
repeat(void)
{
	fake_now_ms = 1000;
	for (int i = 0; i < 25; i++) {
		log_warn("same site %d", i);
	}
	log_warn("another site");     /* its own budget */
	log_event(LOG_WARN, "event"); /* never held back */
	fake_now_ms += 61000;         /* a new minute: the next one says what was held */
	log_warn("same site %d", 99);
}

static void
test_repeats_held_back(void **state)
{
	(void)state;
	unsigned long before = log_warning_count();
	char *out = capture(repeat, true);
	assert_non_null(strstr(out, "<4>same site 9\n"));
	assert_null(strstr(out, "same site 10\n"));
	assert_null(strstr(out, "same site 24\n"));
	assert_non_null(strstr(out, "<4>another site\n"));
	assert_non_null(strstr(out, "<4>event\n"));
	assert_non_null(strstr(out, "<4>same site 99 (15 more like this held back in the last minute)\n"));
	int lines = 0;
	for (const char *p = out; *p; p++) {
		lines += *p == '\n';
	}
	assert_int_equal(lines, 13);
	/* every warning is counted, shown or not */
	assert_int_equal(log_warning_count() - before, 28);
	free(out);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_journal_priorities),
		cmocka_unit_test(test_repeats_held_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
