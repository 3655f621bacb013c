/*
 * What the board tests share (test_board.c, test_board_thor.c): copies of
 * the fixture trees in tests/fixtures/boards (see the README there) that a
 * test may rewrite, a fake clock, and checks of a sample against the
 * metrics a tree must give. Included once per test binary.
 */
#ifndef TEGRAWATCH_TEST_BOARD_FIXTURE_H
#define TEGRAWATCH_TEST_BOARD_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
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

#include "core/sample.h"
#include "tegra/board.h"

#define BOARDS FIXTURES_DIR "/boards"
#define DEMO_ROOT FIXTURES_DIR "/../../configs/demo/root"

struct expect {
	const char *name;
	double value;
};

/* ---- temp copies of a tree -------------------------------------------------- */

static const char *copy_src;
static const char *copy_dst;

static inline int
copy_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)ftw;
	char dst[4096];
	snprintf(dst, sizeof(dst), "%s%s", copy_dst, path + strlen(copy_src));
	if (type == FTW_D) {
		return mkdir(dst, 0755) < 0 && errno != EEXIST ? -1 : 0;
	}
	if (type == FTW_SL) {
		char target[4096];
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		if (n < 0) {
			return -1;
		}
		target[n] = '\0';
		return symlink(target, dst);
	}
	if (type != FTW_F) {
		return -1;
	}
	int in = open(path, O_RDONLY);
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC, st->st_mode & 0777);
	char buf[8192];
	ssize_t n;
	int ret = in < 0 || out < 0 ? -1 : 0;
	while (ret == 0 && (n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			ret = -1;
		}
	}
	if (in >= 0) {
		close(in);
	}
	if (out >= 0) {
		close(out);
	}
	return ret;
}

/* Copies the tree at SRC into a new temp dir and returns its path (malloc'd). */
static inline char *
temp_copy(const char *src)
{
	char *dir = strdup("/tmp/test_board.XXXXXX");
	assert_non_null(dir);
	assert_non_null(mkdtemp(dir));
	copy_src = src;
	copy_dst = dir;
	assert_int_equal(nftw(src, copy_entry, 16, FTW_PHYS), 0);
	return dir;
}

static inline int
remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static inline void
remove_copy(char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(dir);
}

static inline void
write_file(const char *root, const char *rel, const char *text)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s%s", root, rel);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static inline void
root_path(char *buf, size_t size, const char *root, const char *rel)
{
	snprintf(buf, size, "%s%s", root, rel);
}

/* ---- clock and checks -------------------------------------------------------- */

static int64_t fake_ms = 1000000;

static inline int64_t
fake_now(void *data)
{
	(void)data;
	return fake_ms;
}

static inline struct board *
open_board(const char *root)
{
	struct board *b = NULL;
	assert_int_equal(board_open(root, &b), 0);
	assert_non_null(b);
	board_set_clock(b, fake_now, NULL);
	return b;
}

/* One sample into *S (cleared first); returns board_sample()'s result. */
static inline int
take(struct board *b, struct sample *s)
{
	sample_clear(s);
	return board_sample(b, s);
}

static inline bool
is_cpu_load(const char *name)
{
	size_t len = strlen(name);
	return strncmp(name, "cpu.", 4) == 0 && len > 9 && strcmp(name + len - 9, ".load_pct") == 0;
}

/*
 * SET must hold exactly the metrics of WANT (N entries); with LOADS false
 * the CPU loads are expected absent (first sample).
 */
static inline void
check_metrics(const struct metric_set *set, const struct expect *want, size_t n, bool loads)
{
	size_t expected = 0;
	for (size_t i = 0; i < n; i++) {
		double got;
		bool present = metric_set_get(set, want[i].name, &got);
		if (!loads && is_cpu_load(want[i].name)) {
			if (present) {
				fail_msg("%s present on the first sample", want[i].name);
			}
			continue;
		}
		expected++;
		if (!present) {
			fail_msg("%s missing", want[i].name);
		}
		if (fabs(got - want[i].value) > 1e-9 * (1 + fabs(want[i].value))) {
			fail_msg("%s = %.10g, want %.10g", want[i].name, got, want[i].value);
		}
	}
	if (set->count != expected) {
		for (size_t i = 0; i < set->count; i++) {
			bool listed = false;
			for (size_t k = 0; k < n && !listed; k++) {
				listed = strcmp(set->items[i].name, want[k].name) == 0;
			}
			if (!listed) {
				print_error("unexpected metric %s = %g\n", set->items[i].name,
					    set->items[i].value);
			}
		}
		fail_msg("%zu metrics, want %zu", set->count, expected);
	}
}

static inline void
check_identity(const struct board *b, const char *model, const char *soc, const char *module,
	       const char *l4t, const char *jetpack)
{
	const struct board_identity *id = board_identity(b);
	assert_string_equal(id->model, model);
	assert_string_equal(id->soc, soc);
	assert_string_equal(id->module, module);
	assert_string_equal(id->l4t, l4t);
	assert_string_equal(id->jetpack, jetpack);
	assert_true(board_is_jetson(b));
}

/*
 * Opens a copy of TREE, samples, writes STAT2 as the second /proc/stat
 * reading one second later, samples again and checks both samples.
 */
static inline void
snapshot(const char *tree, const char *stat2, const struct expect *want, size_t n,
	 const char *mode, struct board **keep, char **keep_root)
{
	static struct sample s;
	char *root = temp_copy(tree);
	struct board *b = open_board(root);

	assert_int_equal(take(b, &s), 0);
	check_metrics(&s.metrics, want, n, false);
	assert_string_equal(s.power_mode, mode);

	write_file(root, "/proc/stat", stat2);
	fake_ms += 1000;
	assert_int_equal(take(b, &s), 0);
	check_metrics(&s.metrics, want, n, true);
	assert_string_equal(s.power_mode, mode);
	assert_int_equal(board_read_errors(b), 0);
	*keep = b;
	*keep_root = root;
}

#define CPU(n, mhz, max, min, hw, load)                                                   \
	{"cpu." #n ".online", 1}, {"cpu." #n ".freq_mhz", mhz}, {"cpu." #n ".max_freq_mhz", max}, \
		{"cpu." #n ".min_freq_mhz", min}, {"cpu." #n ".hw_max_freq_mhz", hw},           \
		{"cpu." #n ".load_pct", load}

/* power.R.mw/.mv/.ma/.crit_ma, and the hwmon alarms */
#define RAIL(r, mw, mv, ma, crit)                                                            \
	{"power." r ".mw", mw}, {"power." r ".mv", mv}, {"power." r ".ma", ma},                  \
		{"power." r ".crit_ma", crit}
#define ALARMS(r) {"power." r ".crit_alarm", 0}, {"power." r ".max_alarm", 0}

#endif
