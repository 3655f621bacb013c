/*
 * What the board source tests share (test_board.c, test_board_bad.c,
 * test_board_thor.c): the fixture trees, a board opened on a root with a
 * clock the test moves, one sample taken, and the checks of a sample against
 * the metrics a tree must give. Temporary copies of a tree: helpers.h.
 */
#ifndef TEGRAWATCH_TESTS_BOARD_CHECKS_H
#define TEGRAWATCH_TESTS_BOARD_CHECKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sample.h"
#include "tegra/board.h"

#define BOARDS FIXTURES_DIR "/boards"
#define DEMO_ROOT FIXTURES_DIR "/../../configs/demo/root"

/* the metrics of orin-nano-jp6 over two samples (test_orin_nano_jp6 checks its table holds them all) */
#define NANO6_METRICS 113

/* the board's clock (ms): a test moves it */
extern int64_t fake_ms;

/** The board at ROOT, on the fake clock. */
struct board *open_board(const char *root);

/** One sample into *S (cleared first); board_sample()'s result. */
int take(struct board *b, struct sample *s);

/* one metric a fixture tree must give, and its value */
struct expect {
	const char *name;
	double value;
};

/* the metrics of a CPU core (load: its second-sample load) */
#define CPU(n, mhz, max, min, hw, load)                                                   \
	{"cpu." #n ".online", 1}, {"cpu." #n ".freq_mhz", mhz}, {"cpu." #n ".max_freq_mhz", max}, \
		{"cpu." #n ".min_freq_mhz", min}, {"cpu." #n ".hw_max_freq_mhz", hw},           \
		{"cpu." #n ".load_pct", load}

/* a cooling device's state and maximum */
#define COOL(t, cur, max) {"cooling." t ".state", cur}, {"cooling." t ".max_state", max}

/*
 * Orin's L4T trips on zones cpu and gpu (make-trees.sh orin_thermal): 99 C
 * throttle, 104.5 C critical, the 70 C hot-surface trip; and every cooling
 * device but the cpufreq ones (ORIN_CPUFREQ) and the fan.
 */
#define ORIN_TRIPS(z) {"trip." z ".passive_c", 99}, {"trip." z ".critical_c", 104.5}, {"trip." z ".hot_surface_c", 70}
#define ORIN_ALERTS(gpu_state, alert, surface)                                                                  \
	COOL("devfreq_17000000_gpu", gpu_state, 7), COOL("cpu_throttle_alert", alert, 1),                       \
		COOL("gpu_throttle_alert", alert, 1), COOL("cv0_throttle_alert", 0, 1),                         \
		COOL("cv1_throttle_alert", 0, 1), COOL("cv2_throttle_alert", 0, 1),                             \
		COOL("soc0_throttle_alert", 0, 1), COOL("soc1_throttle_alert", 0, 1),                           \
		COOL("soc2_throttle_alert", 0, 1), COOL("hot_surface_alert", surface, 1)

/*
 * An Orin Nano or NX (make-trees.sh orin_thermal "0 4" and p3767_zones): L4T's trips on cpu and gpu, tj's fan
 * trip, and the cooling devices at their states: the two cpufreq ones, the GPU's devfreq, the cpu and gpu throttle
 * alerts, the hot-surface alert and the fan.
 */
#define P3767_THERMAL(cpufreq, devfreq, alert, surface, fan)                                                    \
	ORIN_TRIPS("cpu"), ORIN_TRIPS("gpu"), {"trip.tj.active_c", 74}, COOL("cpufreq_cpu0", cpufreq, 9),       \
		COOL("cpufreq_cpu4", cpufreq, 9), ORIN_ALERTS(devfreq, alert, surface), COOL("pwm_fan", fan, 3)

/* power.R.mw/.mv/.ma/.crit_ma, and the hwmon alarms */
#define RAIL(r, mw, mv, ma, crit)                                                            \
	{"power." r ".mw", mw}, {"power." r ".mv", mv}, {"power." r ".ma", ma},                  \
		{"power." r ".crit_ma", crit}
#define ALARMS(r) {"power." r ".crit_alarm", 0}, {"power." r ".max_alarm", 0}
/* an INA3221 rail of the hwmon driver: RAIL and its alarms, both clear */
#define HWMON_RAIL(r, mw, mv, ma, crit) RAIL(r, mw, mv, ma, crit), ALARMS(r)
/* soctherm_oc counter K: its events and whether it throttles */
#define OC(k, events, enabled) {"oc." #k ".events", events}, {"oc." #k ".throttle_enabled", enabled}
/* the GPU's clocks (MHz) and load */
#define GPU(mhz, max, min, hw, load)                                                                   \
	{"gpu.freq_mhz", mhz}, {"gpu.max_freq_mhz", max}, {"gpu.min_freq_mhz", min}, {"gpu.hw_max_freq_mhz", hw}, \
		{"gpu.load_pct", load}
/* RAM and swap (MB) */
#define MEMORY(total, used, swap_total, swap_used, swap_cached)                                         \
	{"ram.total_mb", total}, {"ram.used_mb", used}, {"swap.total_mb", swap_total}, {"swap.used_mb", swap_used}, \
		{"swap.cached_mb", swap_cached}

/**
 * SET must hold exactly the metrics of WANT (N entries); with LOADS false the CPU loads are expected absent
 * (first sample).
 */
void check_metrics(const struct metric_set *set, const struct expect *want, size_t n, bool loads);

/** The board's identity is MODEL, SOC, MODULE, L4T and JETPACK, and it is a Jetson. */
void check_identity(const struct board *b, const char *model, const char *soc, const char *module, const char *l4t,
		    const char *jetpack);

/**
 * Opens a copy of TREE, samples, writes STAT2 as the second /proc/stat reading one second later, samples again
 * and checks both samples against WANT (N entries) and MODE; the board and its root are left in *KEEP and
 * *KEEP_ROOT (th_rmtree() it).
 */
void snapshot(const char *tree, const char *stat2, const struct expect *want, size_t n, const char *mode,
	      struct board **keep, char **keep_root);

#endif
