/* What the board source tests share (see board_checks.h). */
#include "board_checks.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "helpers.h"

int64_t fake_ms = 1000000;

static int64_t
fake_now(void *data)
{
	(void)data;
	return fake_ms;
}

struct board *
open_board(const char *root)
{
	struct board *b = NULL;
	assert_int_equal(board_open(root, &b), 0);
	assert_non_null(b);
	board_set_clock(b, fake_now, NULL);
	return b;
}

int
take(struct board *b, struct sample *s)
{
	sample_clear(s);
	return board_sample(b, s);
}


static bool
is_cpu_load(const char *name)
{
	size_t len = strlen(name);
	return strncmp(name, "cpu.", 4) == 0 && len > 9 && strcmp(name + len - 9, ".load_pct") == 0;
}

/*
 * SET must hold exactly the metrics of WANT (N entries); with LOADS false
 * the CPU loads are expected absent (first sample).
 */
void
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

void
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
void
snapshot(const char *tree, const char *stat2, const struct expect *want, size_t n,
	 const char *mode, struct board **keep, char **keep_root)
{
	static struct sample s;
	char *root = th_copytree(tree, "board");
	struct board *b = open_board(root);

	assert_int_equal(take(b, &s), 0);
	check_metrics(&s.metrics, want, n, false);
	assert_string_equal(s.power_mode, mode);

	th_write_at(root, "/proc/stat", stat2);
	fake_ms += 1000;
	assert_int_equal(take(b, &s), 0);
	check_metrics(&s.metrics, want, n, true);
	assert_string_equal(s.power_mode, mode);
	assert_int_equal(board_read_errors(b), 0);
	*keep = b;
	*keep_root = root;
}
