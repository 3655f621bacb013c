/* predict/: the power-mode guard (expectation, resolution, per sample), the thermal fit, cooling health. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "predict/predict.h"
#include "predict/predict_priv.h"

static const struct nvpmodel_conf modes = {
	.mode_count = 4,
	.default_id = 1,
	.modes = {{.id = 0, .name = "15W"}, {.id = 1, .name = "25W"}, {.id = 2, .name = "MAXN_SUPER"}, {.id = 3, .name = "7W"}},
};

static struct power_mode_expectation
parsed(const char *text)
{
	struct power_mode_expectation e;
	char err[160] = "";
	assert_int_equal(power_mode_expectation_parse(text, &e, err, sizeof(err)), 0);
	return e;
}

static void
refused(const char *text, const char *why)
{
	struct power_mode_expectation e = {.id = 42};
	char err[160] = "";
	assert_int_equal(power_mode_expectation_parse(text, &e, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, why));
	assert_int_equal(e.id, 42); /* untouched */
}

static void
test_expectation_forms(void **state)
{
	(void)state;
	struct power_mode_expectation e = parsed("");
	assert_false(e.mode_set);
	assert_int_equal(e.jetson_clocks, -1);
	assert_string_equal(e.text, "");

	e = parsed("MAXN_SUPER");
	assert_true(e.mode_set);
	assert_int_equal(e.id, -1);
	assert_string_equal(e.name, "MAXN_SUPER");
	assert_string_equal(e.text, "MAXN_SUPER");

	e = parsed("2");
	assert_int_equal(e.id, 2);
	assert_string_equal(e.name, "");
	assert_string_equal(e.text, "id 2");

	e = parsed("maxn_super, jetson_clocks ON");
	assert_string_equal(e.name, "maxn_super");
	assert_int_equal(e.jetson_clocks, 1);
	assert_string_equal(e.text, "maxn_super, jetson_clocks on");

	e = parsed("  jetson_clocks off ");
	assert_false(e.mode_set);
	assert_int_equal(e.jetson_clocks, 0);
	assert_string_equal(e.text, "jetson_clocks off");

	refused("jetson_clocks", "after jetson_clocks");
	refused("MAXN jetson_clocks maybe", "got 'maybe'");
	refused("MAXN 15W", "got '15W' after the mode");
	refused("jetson_clocks on, jetson_clocks off", "named twice");
}

static void
test_expectation_resolved(void **state)
{
	(void)state;
	struct power_mode_expectation e = parsed("maxn_super, jetson_clocks on");
	assert_int_equal(power_mode_expectation_resolve(&e, &modes), 0);
	assert_int_equal(e.id, 2);
	assert_string_equal(e.name, "MAXN_SUPER"); /* the board's spelling */
	assert_string_equal(e.text, "MAXN_SUPER (id 2), jetson_clocks on");

	e = parsed("0");
	assert_int_equal(power_mode_expectation_resolve(&e, &modes), 0);
	assert_string_equal(e.text, "15W (id 0)");

	e = parsed("MAXN");
	assert_int_equal(power_mode_expectation_resolve(&e, &modes), -ENOENT);
	assert_string_equal(e.text, "MAXN");
	assert_int_equal(e.id, -1);
}

static void
put(struct sample *s, const char *name, double v)
{
	assert_int_equal(metric_set_put(&s->metrics, name, v), 0);
}

static double
get(const struct sample *s, const char *name)
{
	double v;
	return metric_set_get(&s->metrics, name, &v) ? v : NAN;
}

static void
board_clocks(struct sample *s, double cpu_min, double gpu_min)
{
	for (int n = 0; n < 2; n++) {
		char name[64];
		snprintf(name, sizeof(name), "cpu.%d.online", n);
		put(s, name, 1);
		snprintf(name, sizeof(name), "cpu.%d.min_freq_mhz", n);
		put(s, name, cpu_min);
		snprintf(name, sizeof(name), "cpu.%d.max_freq_mhz", n);
		put(s, name, 1728);
	}
	put(s, "gpu.min_freq_mhz", gpu_min);
	put(s, "gpu.max_freq_mhz", 1020);
}

static void
test_guard_per_sample(void **state)
{
	(void)state;
	static struct sample s;
	struct power_mode_expectation by_id = parsed("MAXN_SUPER, jetson_clocks on");
	power_mode_expectation_resolve(&by_id, &modes);

	/* nothing known about the mode: nothing said */
	sample_clear(&s);
	mode_guard_check(&by_id, &s);
	assert_true(isnan(get(&s, "nvpmodel.unexpected")));
	assert_true(isnan(get(&s, "jetson_clocks.active")));

	sample_clear(&s);
	put(&s, "nvpmodel.id", 0);
	board_clocks(&s, 729, 306);
	mode_guard_check(&by_id, &s);
	assert_true(get(&s, "nvpmodel.unexpected") == 1);
	assert_true(get(&s, "jetson_clocks.active") == 0);
	assert_true(get(&s, "jetson_clocks.unexpected") == 1);

	sample_clear(&s);
	put(&s, "nvpmodel.id", 2);
	board_clocks(&s, 1728, 1020);
	mode_guard_check(&by_id, &s);
	assert_true(get(&s, "nvpmodel.unexpected") == 0);
	assert_true(get(&s, "jetson_clocks.active") == 1);
	assert_true(get(&s, "jetson_clocks.unexpected") == 0);

	/* a GPU floor below its ceiling: not jetson_clocks */
	sample_clear(&s);
	board_clocks(&s, 1728, 306);
	mode_guard_check(&by_id, &s);
	assert_true(get(&s, "jetson_clocks.active") == 0);

	/* a name the board's table lacks is compared by name */
	struct power_mode_expectation by_name = parsed("MAXN");
	power_mode_expectation_resolve(&by_name, &modes);
	sample_clear(&s);
	snprintf(s.power_mode, sizeof(s.power_mode), "maxn");
	mode_guard_check(&by_name, &s);
	assert_true(get(&s, "nvpmodel.unexpected") == 0);
	snprintf(s.power_mode, sizeof(s.power_mode), "15W");
	metric_set_clear(&s.metrics);
	mode_guard_check(&by_name, &s);
	assert_true(get(&s, "nvpmodel.unexpected") == 1);
	assert_true(isnan(get(&s, "jetson_clocks.unexpected"))); /* not asked for */
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expectation_forms),
		cmocka_unit_test(test_expectation_resolved),
		cmocka_unit_test(test_guard_per_sample),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
