/*
 * tegrawatch snapshot [--root DIR] [--json]: the board read once through
 * sysfs/procfs (two readings, for rates and deltas): identity, power mode,
 * throttle state and every metric.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/clock.h"
#include "core/exit_codes.h"
#include "core/json.h"
#include "core/sample_json.h"
#include "core/xalloc.h"
#include "cli.h"
#include "commands.h"
#include "setup.h"
#include "tegra/board.h"
#include "tegra/sources.h"
#include "tegra/throttle.h"

static void
board_to_json(struct json *j, const struct board *b)
{
	const struct board_identity *id = board_identity(b);
	json_object_begin(j);
	board_identity_to_json(j, id, false);
	json_key(j, "is_jetson");
	json_bool(j, board_is_jetson(b));
	json_object_end(j);
}

static const char *
or_unknown(const char *s)
{
	return s[0] ? s : "unknown";
}

static void
print_snapshot_text(const struct board *b, const struct sample *s, const struct throttle_detector *det)
{
	const struct board_identity *id = board_identity(b);
	double mode_id;
	printf("board:       %s%s\n", or_unknown(id->model), board_is_jetson(b) ? "" : " (not a Jetson)");
	printf("soc:         %s", or_unknown(id->soc));
	if (id->module[0]) {
		printf(" (module %s)", id->module);
	}
	printf("\nl4t:         %s", or_unknown(id->l4t));
	if (id->jetpack[0]) {
		printf(" (JetPack %s)", id->jetpack);
	}
	printf("\npower mode:  %s", or_unknown(s->power_mode));
	if (metric_set_get(&s->metrics, "nvpmodel.id", &mode_id)) {
		printf(" (id %.0f)", mode_id);
	}
	printf("\nthrottled:   %s\n", s->throttle.active ? "yes" : "no");
	for (int r = 0; r < THROTTLE_REASON_COUNT; r++) {
		if (s->throttle.reason[r]) {
			printf("  %-11s %s\n", throttle_reason_name((enum throttle_reason)r), s->throttle.why[r]);
		}
	}
	if (s->throttle.context[0]) {
		printf("context:     %s\n", s->throttle.context);
	}
	char line[256];
	if (throttle_detector_history(det, line, sizeof(line)) > 0) {
		printf("before:      %s\n", line);
	}
	if (board_gpu_clock(b, line, sizeof(line))) {
		printf("gpu clock:   %s\n", line);
	}
	printf("metrics:\n");
	for (size_t i = 0; i < s->metrics.count; i++) {
		printf("  %-36s %.15g\n", s->metrics.items[i].name, s->metrics.items[i].value);
	}
}

int
cmd_snapshot(int argc, char **argv)
{
	const char *root = "";
	bool as_json = false;
	int c;
	while ((c = cli_getopt("snapshot", argc, argv)) != -1) {
		switch (c) {
		case OPT_ROOT:
			root = optarg;
			break;
		case OPT_JSON:
			as_json = true;
			break;
		case OPT_HELP:
			cli_usage(stdout, "snapshot");
			return 0;
		default:
			return EX_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "tegrawatch snapshot: unexpected argument '%s'\n", argv[optind]);
		return EX_USAGE;
	}
	struct board *b;
	int r = board_open(root, &b);
	if (r < 0) {
		fprintf(stderr, "tegrawatch snapshot: cannot read the board below '%s': %s\n", root[0] ? root : "/",
			strerror(-r));
		return EX_UNAVAILABLE;
	}
	setup_say_not_jetson(b, root); /* the words of `run` */
	struct sample *s = xcalloc(1, sizeof(*s));
	struct throttle_detector *det = throttle_detector_create();
	/* two readings: CPU load and OC counter deltas need a previous one */
	sample_clear(s);
	board_sample(b, s);
	throttle_detector_update(det, s);
	clock_sleep_ms(250);
	sample_clear(s);
	s->seq = 1;
	s->time_ms = clock_wall_ms() / 1000 * 1000; /* whole seconds */
	r = board_sample(b, s);
	if (!root[0] || strcmp(root, "/") == 0) {
		/* generic hwmon chips: libsensors reads the real /sys only */
		struct source *hw;
		if (hwmon_source_create(&hw) == 0) {
			hw->ops->read(hw, s);
			source_destroy(hw);
		}
	}
	throttle_detector_update(det, s);
	metric_set_put(&s->metrics, "agent.read_errors_total", (double)board_read_errors(b));

	if (as_json) {
		struct json j;
		json_init(&j);
		json_object_begin(&j);
		json_key(&j, "board");
		board_to_json(&j, b);
		json_key(&j, "power_mode");
		if (s->power_mode[0]) {
			json_string(&j, s->power_mode);
		} else {
			json_null(&j);
		}
		json_key(&j, "metrics");
		metrics_to_json(&j, &s->metrics);
		json_key(&j, "throttle");
		throttle_to_json(&j, &s->throttle);
		json_object_end(&j);
		puts(j.out.buf);
		json_free(&j);
	} else {
		print_snapshot_text(b, s, det);
	}
	throttle_detector_destroy(det);
	free(s);
	board_destroy(b);
	return fflush(stdout) == 0 ? 0 : EX_IOERR;
}
