/*
 * tegra/sysfs.c against a fixture tree the test builds in a temp dir:
 * missing, unreadable, empty, garbage and huge files, FIFOs that must not
 * block, back-off with an injected clock, log-once. Files kept open,
 * directory listings and symlinks: test_sysfs_open.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/log.h"
#include "fake_eagain.h"
#include "helpers.h"
#include "sysfs_tree.h"
#include "tegra/sysfs.h"

static void
test_root_names(void **state)
{
	(void)state;
	struct sysfs *fs = NULL;
	assert_int_equal(sysfs_create("/", &fs), 0);
	assert_string_equal(sysfs_root(fs), "");
	/* the real system works through the same calls */
	char *text = NULL;
	int n = sysfs_read_file(fs, "/proc/self/status", 256 * 1024, &text);
	assert_true(n > 0);
	assert_non_null(strstr(text, "Name:"));
	free(text);
	/* real sysfs: st_size says 4096, the content is a few bytes */
	if (sysfs_exists(fs, "/sys/devices/system/cpu/online")) {
		char buf[64];
		assert_true(sysfs_read_str(fs, "/sys/devices/system/cpu/online", buf, sizeof(buf)) > 0);
		assert_int_equal(buf[0], '0');
	}
	sysfs_destroy(fs);

	assert_int_equal(sysfs_create("", &fs), 0);
	assert_string_equal(sysfs_root(fs), "");
	sysfs_destroy(fs);

	char given[300];
	snprintf(given, sizeof(given), "%s/", root);
	assert_int_equal(sysfs_create(given, &fs), 0);
	assert_string_equal(sysfs_root(fs), root);
	sysfs_destroy(fs);

	assert_int_equal(sysfs_create("/nonexistent-tegrawatch-root", &fs), -ENOENT);
	sysfs_destroy(NULL);
}

static void
test_read_values(void **state)
{
	(void)state;
	make_dirs("/sys/class/thermal/thermal_zone0");
	write_text("/sys/class/thermal/thermal_zone0/temp", "43500\n");
	write_text("/sys/class/thermal/thermal_zone0/type", "cpu-thermal\n");
	write_bytes("/sys/model", "NVIDIA Jetson AGX Orin Developer Kit\0", 37);
	write_text("/sys/neg", "-256\n");
	write_text("/sys/padded", "  +7 \n");
	write_text("/sys/max", "9223372036854775807\n");

	struct fake_clock clock = {.now_ms = 1000};
	struct sysfs *fs = open_fixture(&clock);
	char buf[64];
	assert_int_equal(sysfs_read_str(fs, "/sys/class/thermal/thermal_zone0/type", buf, sizeof(buf)), 11);
	assert_string_equal(buf, "cpu-thermal");
	assert_int_equal(sysfs_read_str(fs, "/sys/model", buf, sizeof(buf)), 36);
	assert_string_equal(buf, "NVIDIA Jetson AGX Orin Developer Kit");

	int64_t v = 0;
	assert_int_equal(sysfs_read_i64(fs, "/sys/class/thermal/thermal_zone0/temp", &v), 0);
	assert_int_equal(v, 43500);
	assert_int_equal(sysfs_read_i64(fs, "/sys/neg", &v), 0);
	assert_int_equal(v, -256);
	assert_int_equal(sysfs_read_i64(fs, "/sys/padded", &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(sysfs_read_i64(fs, "/sys/max", &v), 0);
	assert_true(v == INT64_MAX);

	/* too small a buffer for the content */
	char small[6];
	assert_int_equal(sysfs_read_str(fs, "/sys/class/thermal/thermal_zone0/temp", small, sizeof(small)), 5);
	assert_string_equal(small, "43500");
	assert_int_equal(sysfs_read_str(fs, "/sys/class/thermal/thermal_zone0/type", small, sizeof(small)), -EFBIG);

	/* paths must be absolute and must not climb */
	assert_int_equal(sysfs_read_str(fs, "sys/neg", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sysfs_read_str(fs, "/sys/../sys/neg", buf, sizeof(buf)), -EINVAL);
	assert_int_equal(sysfs_read_i64(fs, "/sys/class/..", &v), -EINVAL);
	/* "..." and "..x" are ordinary names */
	assert_int_equal(sysfs_read_str(fs, "/sys/...", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(sysfs_error_count(fs), 1); /* only the -EFBIG above */
	sysfs_destroy(fs);
}

static void
test_missing_is_not_an_error(void **state)
{
	(void)state;
	struct fake_clock clock = {.now_ms = 0};
	struct sysfs *fs = open_fixture(&clock);
	unsigned long warnings = log_warning_count();
	char buf[16];
	int64_t v;
	assert_int_equal(sysfs_read_str(fs, "/sys/class/hwmon/hwmon9/name", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(sysfs_read_i64(fs, "/sys/class/hwmon/hwmon9/temp1_input", &v), -ENOENT);
	/* no back-off either: asked again at once, still -ENOENT */
	assert_int_equal(sysfs_read_str(fs, "/sys/class/hwmon/hwmon9/name", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(sysfs_error_count(fs), 0);
	assert_int_equal(log_warning_count(), warnings);
	sysfs_destroy(fs);
}

static void
test_bad_files(void **state)
{
	(void)state;
	make_dirs("/bad/isdir");
	write_text("/bad/empty", "");
	write_text("/bad/blank", " \n\n");
	write_text("/bad/garbage", "12abc\n");
	write_text("/bad/words", "on\n");
	write_text("/bad/two", "12 34\n");
	write_text("/bad/sign", "-\n");
	write_text("/bad/overflow", "99999999999999999999\n");
	write_bytes("/bad/nul", "12\0" "34\n", 6);

	struct fake_clock clock = {.now_ms = 5000};
	struct sysfs *fs = open_fixture(&clock);
	unsigned long warnings = log_warning_count();
	char buf[64];
	int64_t v = 99;
	/* a directory where a file is expected: a read error even for root */
	assert_int_equal(sysfs_read_str(fs, "/bad/isdir", buf, sizeof(buf)), -EISDIR);
	assert_int_equal(sysfs_read_str(fs, "/bad/empty", buf, sizeof(buf)), -ENODATA);
	assert_int_equal(sysfs_read_str(fs, "/bad/blank", buf, sizeof(buf)), -ENODATA);
	assert_int_equal(sysfs_read_i64(fs, "/bad/garbage", &v), -EINVAL);
	assert_int_equal(sysfs_read_i64(fs, "/bad/words", &v), -EINVAL);
	assert_int_equal(sysfs_read_i64(fs, "/bad/two", &v), -EINVAL);
	assert_int_equal(sysfs_read_i64(fs, "/bad/sign", &v), -EINVAL);
	assert_int_equal(sysfs_read_i64(fs, "/bad/overflow", &v), -ERANGE);
	assert_int_equal(sysfs_read_i64(fs, "/bad/nul", &v), -EINVAL);
	assert_int_equal(v, 99); /* out-parameter untouched on failure */
	assert_int_equal(sysfs_error_count(fs), 9);
	assert_int_equal(log_warning_count(), warnings + 9);

	if (geteuid() != 0) {
		write_text("/bad/secret", "1\n");
		char path[512];
		fixture_path(path, sizeof(path), "/bad/secret");
		assert_int_equal(chmod(path, 0), 0);
		assert_int_equal(sysfs_read_str(fs, "/bad/secret", buf, sizeof(buf)), -EACCES);
		assert_int_equal(sysfs_error_count(fs), 10);
	}
	sysfs_destroy(fs);
}

static void
test_socket_is_refused(void **state)
{
	(void)state;
	/* a UNIX socket cannot be opened: another read error that root gets */
	make_dirs("/sock");
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	fixture_path(addr.sun_path, sizeof(addr.sun_path), "/sock/s");
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
	struct sysfs *fs = open_fixture(NULL);
	char buf[16];
	assert_int_equal(sysfs_read_str(fs, "/sock/s", buf, sizeof(buf)), -ENXIO);
	assert_int_equal(sysfs_error_count(fs), 1);
	sysfs_destroy(fs);
	close(fd);
}

static void
test_sizes(void **state)
{
	(void)state;
	size_t mib = 1024 * 1024;
	char *big = malloc(mib);
	assert_non_null(big);
	memset(big, '7', mib);
	make_dirs("/size");
	write_bytes("/size/mib", big, mib);
	write_bytes("/size/4096", big, 4096);
	write_bytes("/size/4097", big, 4097);
	write_bytes("/size/4097i", big, 4097);
	write_bytes("/size/4097f", big, 4097);

	struct fake_clock clock = {.now_ms = 0};
	struct sysfs *fs = open_fixture(&clock);
	char buf[SYSFS_SMALL_MAX + 1];
	assert_int_equal(sysfs_read_str(fs, "/size/mib", buf, sizeof(buf)), -EFBIG);
	assert_int_equal(sysfs_read_str(fs, "/size/4096", buf, sizeof(buf)), 4096);
	assert_int_equal(sysfs_read_str(fs, "/size/4097", buf, sizeof(buf)), -EFBIG);
	int64_t v;
	assert_int_equal(sysfs_read_i64(fs, "/size/4097i", &v), -EFBIG);
	assert_int_equal(sysfs_error_count(fs), 3);

	char *text = NULL;
	assert_int_equal(sysfs_read_file(fs, "/size/4097f", 4097, &text), 4097);
	assert_int_equal(text[4097], '\0');
	assert_int_equal(text[4096], '7');
	free(text);
	text = NULL;
	/* /size/mib failed above: still backing off until the clock moves */
	assert_int_equal(sysfs_read_file(fs, "/size/mib", 2 * mib, &text), -EBUSY);
	clock.now_ms += 1000;
	assert_int_equal(sysfs_read_file(fs, "/size/mib", 2 * mib, &text), (int)mib);
	assert_int_equal(memcmp(text, big, mib), 0);
	free(text);
	text = NULL;
	assert_int_equal(sysfs_read_file(fs, "/size/4096", 4095, &text), -EFBIG);
	assert_null(text);
	assert_int_equal(sysfs_error_count(fs), 4);

	/* an empty /etc file is a valid, empty text */
	write_text("/size/empty", "");
	assert_int_equal(sysfs_read_file(fs, "/size/empty", 100, &text), 0);
	assert_string_equal(text, "");
	free(text);
	free(big);
	sysfs_destroy(fs);
}

static void
test_fifo_never_blocks(void **state)
{
	(void)state;
	make_dirs("/fifo");
	char path[512];
	fixture_path(path, sizeof(path), "/fifo/temp");
	assert_int_equal(mkfifo(path, 0644), 0);
	fixture_path(path, sizeof(path), "/fifo/held");
	assert_int_equal(mkfifo(path, 0644), 0);

	struct fake_clock clock = {.now_ms = 0};
	struct sysfs *fs = open_fixture(&clock);
	char buf[32];
	int64_t v;

	/* no writer at all: stands in for the Orin Nano CV zones */
	int64_t t0 = real_ms();
	assert_int_equal(sysfs_read_i64(fs, "/fifo/temp", &v), -EAGAIN);
	assert_true(real_ms() - t0 < 100);

	/* a writer that never writes */
	int wfd = open(path, O_RDWR | O_NONBLOCK);
	assert_true(wfd >= 0);
	t0 = real_ms();
	assert_int_equal(sysfs_read_str(fs, "/fifo/held", buf, sizeof(buf)), -EAGAIN);
	assert_true(real_ms() - t0 < 100);
	assert_int_equal(sysfs_error_count(fs), 2);

	/* once data is there and the back-off is over, it is read */
	assert_int_equal(write(wfd, "42\n", 3), 3);
	assert_int_equal(sysfs_read_i64(fs, "/fifo/held", &v), -EBUSY);
	clock.now_ms += 1000;
	assert_int_equal(sysfs_read_i64(fs, "/fifo/held", &v), 0);
	assert_int_equal(v, 42);
	close(wfd);
	sysfs_destroy(fs);
}

/*
 * A driver that answers EAGAIN (fake_eagain.h): asked once more at once by
 * every reader; a second EAGAIN is a state for sysfs_read_sensor() (a
 * power-gated sensor: SYSFS_GATED, nothing counted or backed off) and an
 * error for the plain readers. A FIFO with nothing to read stays an error.
 */
static void
test_eagain_driver(void **state)
{
	(void)state;
	make_dirs("/gate");
	write_text("/gate/temp", "41500\n");
	struct fake_clock clock = {.now_ms = 0};
	struct sysfs *fs = open_fixture(&clock);
	int64_t v = 0;

	/* once, under load: the retry reads it */
	fake_eagain("/gate/temp", 1);
	assert_int_equal(sysfs_read_sensor(fs, "/gate/temp", &v), 0);
	assert_int_equal(v, 41500);
	assert_int_equal(fake_eagain_calls, 1);
	fake_eagain("/gate/temp", 1);
	assert_int_equal(sysfs_read_i64(fs, "/gate/temp", &v), 0); /* kept open now: pread again */
	assert_int_equal(fake_eagain_calls, 1);
	assert_int_equal(sysfs_error_count(fs), 0);

	/* rail-gated: asked twice a read, never counted, never backed off */
	fake_eagain("/gate/temp", -1);
	for (int i = 0; i < 3; i++) {
		v = -1;
		assert_int_equal(sysfs_read_sensor(fs, "/gate/temp", &v), SYSFS_GATED);
		assert_int_equal(v, -1);
	}
	assert_int_equal(fake_eagain_calls, 6);
	assert_int_equal(sysfs_error_count(fs), 0);
	/* the GPU wakes: the next read has its value, at once */
	fake_eagain(NULL, 0);
	assert_int_equal(sysfs_read_sensor(fs, "/gate/temp", &v), 0);
	assert_int_equal(v, 41500);

	/* for any other file it is an error, counted after the second try */
	fake_eagain("/gate/temp", -1);
	assert_int_equal(sysfs_read_i64(fs, "/gate/temp", &v), -EAGAIN);
	assert_int_equal(fake_eagain_calls, 2);
	assert_int_equal(sysfs_error_count(fs), 1);
	fake_eagain(NULL, 0);

	/* a FIFO that would block is not "gated": an error, as before */
	char path[512];
	fixture_path(path, sizeof(path), "/gate/fifo");
	assert_int_equal(mkfifo(path, 0644), 0);
	assert_int_equal(sysfs_read_sensor(fs, "/gate/fifo", &v), -EAGAIN);
	assert_int_equal(sysfs_error_count(fs), 2);
	sysfs_destroy(fs);
}

static void
test_backoff_doubles(void **state)
{
	(void)state;
	make_dirs("/backoff/zone");
	struct fake_clock clock = {.now_ms = 10000};
	struct sysfs *fs = open_fixture(&clock);
	unsigned long warnings = log_warning_count();
	char buf[16];
	const char *p = "/backoff/zone";

	assert_int_equal(sysfs_read_str(fs, p, buf, sizeof(buf)), -EISDIR);
	assert_int_equal(log_warning_count(), warnings + 1);
	/* backing off: the file is not touched, nothing counted or logged */
	assert_int_equal(sysfs_read_str(fs, p, buf, sizeof(buf)), -EBUSY);
	clock.now_ms = 10999;
	assert_int_equal(sysfs_read_str(fs, p, buf, sizeof(buf)), -EBUSY);
	assert_int_equal(sysfs_error_count(fs), 1);

	/* 1 s, 2 s, 4 s, ... */
	int64_t delay = 1000;
	int64_t fail_at = 10000;
	for (int i = 0; i < 12; i++) {
		clock.now_ms = fail_at + delay - 1;
		assert_int_equal(sysfs_read_str(fs, p, buf, sizeof(buf)), -EBUSY);
		clock.now_ms = fail_at + delay;
		assert_int_equal(sysfs_read_str(fs, p, buf, sizeof(buf)), -EISDIR);
		fail_at = clock.now_ms;
		delay = delay * 2 > 300000 ? 300000 : delay * 2;
	}
	/* capped at 300 s: 1,2,4,...,256 s then 300 s */
	assert_int_equal(delay, 300000);
	clock.now_ms = fail_at + 299999;
	assert_int_equal(sysfs_read_str(fs, p, buf, sizeof(buf)), -EBUSY);
	clock.now_ms = fail_at + 300000;
	assert_int_equal(sysfs_read_str(fs, p, buf, sizeof(buf)), -EISDIR);
	assert_int_equal(sysfs_error_count(fs), 14);
	/* logged once for all of those */
	assert_int_equal(log_warning_count(), warnings + 1);
	sysfs_destroy(fs);
}

static void
test_success_clears_backoff(void **state)
{
	(void)state;
	make_dirs("/flap/value");
	struct fake_clock clock = {.now_ms = 0};
	struct sysfs *fs = open_fixture(&clock);
	unsigned long warnings = log_warning_count();
	char buf[16];
	char path[512];
	fixture_path(path, sizeof(path), "/flap/value");

	assert_int_equal(sysfs_read_str(fs, "/flap/value", buf, sizeof(buf)), -EISDIR);
	clock.now_ms = 1000;
	assert_int_equal(sysfs_read_str(fs, "/flap/value", buf, sizeof(buf)), -EISDIR);
	/* now 2 s; the sensor recovers */
	assert_int_equal(rmdir(path), 0);
	write_text("/flap/value", "5\n");
	clock.now_ms = 3000;
	assert_int_equal(sysfs_read_str(fs, "/flap/value", buf, sizeof(buf)), 1);
	assert_int_equal(sysfs_read_str(fs, "/flap/value", buf, sizeof(buf)), 1);
	/* failing again starts over at 1 s, and is not logged a second time */
	assert_int_equal(unlink(path), 0);
	make_dirs("/flap/value");
	assert_int_equal(sysfs_read_str(fs, "/flap/value", buf, sizeof(buf)), -EISDIR);
	clock.now_ms = 3999;
	assert_int_equal(sysfs_read_str(fs, "/flap/value", buf, sizeof(buf)), -EBUSY);
	clock.now_ms = 4000;
	assert_int_equal(sysfs_read_str(fs, "/flap/value", buf, sizeof(buf)), -EISDIR);
	assert_int_equal(sysfs_error_count(fs), 4);
	assert_int_equal(log_warning_count(), warnings + 1);
	sysfs_destroy(fs);
}

static void
test_slow_read(void **state)
{
	(void)state;
	write_text("/slow", "1234\n");
	/* every clock reading is 150 ms after the previous one */
	struct fake_clock clock = {.now_ms = 0, .step_ms = 150};
	struct sysfs *fs = open_fixture(&clock);
	unsigned long warnings = log_warning_count();
	int64_t v = 0;
	/* one slow read may be the agent waiting for a CPU: nothing happens */
	assert_int_equal(sysfs_read_i64(fs, "/slow", &v), 0);
	assert_int_equal(v, 1234);
	assert_int_equal(sysfs_error_count(fs), 0);
	/* a second in a row backs off; the data still counts */
	v = 0;
	assert_int_equal(sysfs_read_i64(fs, "/slow", &v), 0);
	assert_int_equal(v, 1234);
	assert_int_equal(sysfs_error_count(fs), 1);
	assert_int_equal(log_warning_count(), warnings + 1);
	assert_int_equal(sysfs_read_i64(fs, "/slow", &v), -EBUSY);

	/* 100 ms is still fine, and a fast read forgets a slow one */
	clock.step_ms = 100;
	clock.now_ms += 10000;
	assert_int_equal(sysfs_read_i64(fs, "/slow", &v), 0);
	assert_int_equal(sysfs_read_i64(fs, "/slow", &v), 0);
	assert_int_equal(sysfs_error_count(fs), 1);
	clock.step_ms = 150;
	assert_int_equal(sysfs_read_i64(fs, "/slow", &v), 0);
	clock.step_ms = 100;
	assert_int_equal(sysfs_read_i64(fs, "/slow", &v), 0);
	clock.step_ms = 150;
	assert_int_equal(sysfs_read_i64(fs, "/slow", &v), 0);
	assert_int_equal(sysfs_error_count(fs), 1);
	sysfs_destroy(fs);
}

/* A batch of reads in a row takes one clock reading a read, two alone; a slow read still shows. */
static void
test_chained_reads(void **state)
{
	(void)state;
	write_text("/chain", "7\n");
	struct fake_clock clock = {.now_ms = 1000, .step_ms = 1}; /* readings counted in ms */
	struct sysfs *fs = open_fixture(&clock);
	int64_t v = 0, t0 = clock.now_ms;
	for (int i = 0; i < 5; i++) {
		assert_int_equal(sysfs_read_i64(fs, "/chain", &v), 0);
	}
	assert_int_equal(clock.now_ms - t0, 10);
	sysfs_chain_begin(fs, clock.now_ms);
	t0 = clock.now_ms;
	for (int i = 0; i < 5; i++) {
		assert_int_equal(sysfs_read_i64(fs, "/chain", &v), 0);
	}
	assert_int_equal(clock.now_ms - t0, 5);
	assert_int_equal(v, 7);
	/* every reading 150 ms after the one before: the second and third reads are slow, and back off */
	clock.step_ms = 150;
	sysfs_chain_begin(fs, clock.now_ms);
	assert_int_equal(sysfs_read_i64(fs, "/chain", &v), 0); /* from the batch's start to its reading: 0 ms */
	assert_int_equal(sysfs_read_i64(fs, "/chain", &v), 0);
	assert_int_equal(sysfs_error_count(fs), 0);
	assert_int_equal(sysfs_read_i64(fs, "/chain", &v), 0);
	assert_int_equal(sysfs_error_count(fs), 1);
	assert_int_equal(sysfs_read_i64(fs, "/chain", &v), -EBUSY);
	sysfs_chain_end(fs);
	/* alone again: two readings */
	clock.step_ms = 1;
	clock.now_ms += 600000;
	t0 = clock.now_ms;
	assert_int_equal(sysfs_read_i64(fs, "/chain", &v), 0);
	assert_int_equal(clock.now_ms - t0, 2);
	sysfs_destroy(fs);
}

static void
test_table_is_bounded(void **state)
{
	(void)state;
	char rel[64];
	for (int i = 0; i < 300; i++) {
		snprintf(rel, sizeof(rel), "/many/d%d", i);
		make_dirs(rel);
	}
	struct fake_clock clock = {.now_ms = 0};
	struct sysfs *fs = open_fixture(&clock);
	unsigned long warnings = log_warning_count();
	char buf[16];
	for (int i = 0; i < 300; i++) {
		snprintf(rel, sizeof(rel), "/many/d%d", i);
		assert_int_equal(sysfs_read_str(fs, rel, buf, sizeof(buf)), -EISDIR);
		clock.now_ms++;
	}
	assert_int_equal(sysfs_error_count(fs), 300);
	assert_int_equal(log_warning_count(), warnings + 300);
	/*
	 * 256 slots: d0..d43 were reused for d256..d299, so they are read (and
	 * logged) again, each taking the then oldest slot (d44, then d45).
	 */
	assert_int_equal(sysfs_read_str(fs, "/many/d0", buf, sizeof(buf)), -EISDIR);
	assert_int_equal(sysfs_read_str(fs, "/many/d43", buf, sizeof(buf)), -EISDIR);
	assert_int_equal(sysfs_read_str(fs, "/many/d299", buf, sizeof(buf)), -EBUSY);
	assert_int_equal(sysfs_read_str(fs, "/many/d46", buf, sizeof(buf)), -EBUSY);
	assert_int_equal(sysfs_read_str(fs, "/many/d0", buf, sizeof(buf)), -EBUSY);
	assert_int_equal(sysfs_read_str(fs, "/many/d44", buf, sizeof(buf)), -EISDIR);
	assert_int_equal(sysfs_error_count(fs), 303);
	assert_int_equal(log_warning_count(), warnings + 303);
	sysfs_destroy(fs);
}

int
main(void)
{
	/* warnings are still counted below the threshold; keep the log quiet */
	log_set_level(LOG_ERROR);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_root_names),
		cmocka_unit_test(test_read_values),
		cmocka_unit_test(test_missing_is_not_an_error),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_socket_is_refused),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_fifo_never_blocks),
		cmocka_unit_test(test_backoff_doubles),
		cmocka_unit_test(test_success_clears_backoff),
		cmocka_unit_test(test_slow_read),
		cmocka_unit_test(test_chained_reads),
		cmocka_unit_test(test_table_is_bounded),
		cmocka_unit_test(test_eagain_driver),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
