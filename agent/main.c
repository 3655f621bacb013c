/*
 * tegrawatch command line: parse, snapshot, run. Argument handling only;
 * the work is done by the modules it wires together.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "build_config.h"
#include "agent.h"
#include "alerting.h"
#include "commands.h"
#include "json.h"
#include "log.h"
#if HAVE_MQTT
#include "mqtt.h"
#endif
#if HAVE_WEB
#include "web/web.h"
#endif
#include "sample_json.h"
#include "config.h"
#include "diag.h"
#include "sink_jsonl.h"
#include "tegra/board.h"
#include "tegra/sources.h"
#include "tegra/tegrastats.h"
#include "tegra/throttle.h"

#define EX_USAGE 64
#define EX_UNAVAILABLE 69
#define EX_IOERR 74

static const char usage_text[] =
	"Usage: tegrawatch COMMAND [OPTIONS]\n"
	"\n"
	"Commands:\n"
	"  parse [FILE]             read tegrastats lines from FILE or stdin and write one JSON\n"
	"                           object per line: {\"line\",\"ts\",\"metrics\"} or {\"line\",\"error\"}\n"
	"  snapshot [--root DIR] [--json]\n"
	"                           read the board once through sysfs/procfs (two readings, for\n"
	"                           rates and deltas) and print its identity, metrics and throttle state\n"
	"  run [OPTIONS]            run the agent: sample on a timer, evaluate the rules, write JSON Lines\n"
	"      -c, --config FILE    configuration (default /etc/tegrawatch/tegrawatch.yaml when it exists)\n"
	"      --replay FILE        use a recorded tegrastats log as the source\n"
	"      --speed N            replay speed factor (default 1 = real time; 0 = as fast as possible)\n"
	"      --demo               run the built-in demo board (a replay of configs/demo/)\n"
	"      --root DIR           prefix for every path read (sysfs, procfs, /etc, /var/lib)\n"
	"      --interval MS        sampling interval (default 1000)\n"
	"      --count N            stop after N samples\n"
	"      --no-tegrastats      do not start the tegrastats binary next to sysfs\n"
	"      --tegrastats PROGRAM run PROGRAM --interval MS as the live tegrastats source\n"
	"  check [-c FILE]          validate a configuration: exit 0, or print every error and exit 78\n"
	"  replay LOG [-c FILE] [--dry-run] [--root DIR] [--json]\n"
	"                           run a recorded log through the rules as fast as possible and print\n"
	"                           the alert timeline; --dry-run runs no action\n"
	"  help                     show this text\n"
	"  version                  print the version\n"
	"\n"
	"Options for every command: -v (more log output), -q (errors only).\n"
	"Metric names are listed in docs/metrics.md.\n";

static void
usage(FILE *out)
{
	fputs(usage_text, out);
}

/* ---- parse ---- */

static void
write_parse_result(struct json *j, unsigned long lineno, int r, const struct tegrastats_info *info,
		   const struct metric_set *set, const struct parse_error *err)
{
	json_reset(j);
	json_object_begin(j);
	json_key(j, "line");
	json_uint(j, lineno);
	if (r < 0) {
		char msg[PARSE_ERROR_MSG_MAX + 32];
		snprintf(msg, sizeof(msg), "column %d: %s", err->column, err->msg);
		json_key(j, "error");
		json_string(j, msg);
	} else {
		json_key(j, "ts");
		if (info->stamp.present) {
			char ts[32];
			const struct tegrastats_stamp *st = &info->stamp;
			snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d", st->year, st->month, st->day,
				 st->hour, st->minute, st->second);
			json_string(j, ts);
		} else {
			json_null(j);
		}
		json_key(j, "metrics");
		metrics_to_json(j, set);
	}
	json_object_end(j);
	json_raw(j, "\n", 1);
}

static int
cmd_parse(int argc, char **argv)
{
	FILE *in = stdin;
	const char *name = "<stdin>";
	if (argc > 2) {
		fprintf(stderr, "tegrawatch parse: too many arguments\n");
		return EX_USAGE;
	}
	if (argc == 2 && strcmp(argv[1], "-") != 0) {
		name = argv[1];
		in = fopen(name, "re");
		if (!in) {
			fprintf(stderr, "tegrawatch parse: %s: %s\n", name, strerror(errno));
			return EX_IOERR;
		}
	}
	struct metric_set *set = calloc(1, sizeof(*set));
	if (!set) {
		abort();
	}
	struct json j;
	json_init(&j);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned long lineno = 0, parsed = 0, errors = 0, unknown = 0;
	int ret = 0;
	while ((n = getline(&line, &cap, in)) >= 0) {
		lineno++;
		size_t len = (size_t)n;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) {
			len--;
		}
		size_t i = 0;
		while (i < len && (line[i] == ' ' || line[i] == '\t')) {
			i++;
		}
		if (i == len || line[i] == '#') {
			continue; /* blank lines and comments of recorded logs */
		}
		struct tegrastats_info info = {0};
		struct parse_error err = {0};
		metric_set_clear(set);
		int r = tegrastats_parse_line(line, len, set, &info, &err);
		if (r < 0) {
			errors++;
			log_info("%s:%lu:%d: %s", name, lineno, err.column, err.msg);
		} else {
			parsed++;
			unknown += info.unknown_tokens;
		}
		write_parse_result(&j, lineno, r, &info, set, &err);
		if (fwrite(j.buf, 1, j.len, stdout) != j.len) {
			ret = EX_IOERR;
			break;
		}
	}
	if (ferror(in)) {
		fprintf(stderr, "tegrawatch parse: %s: read error\n", name);
		ret = EX_IOERR;
	}
	if (fflush(stdout) != 0) {
		ret = EX_IOERR;
	}
	log_info("%s: %lu lines parsed, %lu errors, %lu unknown tokens skipped", name, parsed, errors,
		 unknown);
	free(line);
	json_free(&j);
	free(set);
	if (in != stdin) {
		fclose(in);
	}
	return ret;
}

/* ---- snapshot ---- */

static void
board_to_json(struct json *j, const struct board *b)
{
	const struct board_identity *id = board_identity(b);
	json_object_begin(j);
	json_key(j, "model");
	json_string(j, id->model);
	json_key(j, "soc");
	json_string(j, id->soc);
	json_key(j, "module");
	json_string(j, id->module);
	json_key(j, "l4t");
	json_string(j, id->l4t);
	json_key(j, "jetpack");
	json_string(j, id->jetpack);
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
print_snapshot_text(const struct board *b, const struct sample *s)
{
	const struct board_identity *id = board_identity(b);
	double mode_id;
	printf("board:       %s\n", or_unknown(id->model));
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
	printf("metrics:\n");
	for (size_t i = 0; i < s->metrics.count; i++) {
		printf("  %-36s %.15g\n", s->metrics.items[i].name, s->metrics.items[i].value);
	}
}

static int
cmd_snapshot(int argc, char **argv)
{
	static const struct option opts[] = {
		{"root", required_argument, NULL, 'r'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *root = "";
	bool as_json = false;
	int c;
	while ((c = getopt_long(argc, argv, "r:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			root = optarg;
			break;
		case 'j':
			as_json = true;
			break;
		case 'h':
			usage(stdout);
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
		fprintf(stderr, "tegrawatch snapshot: cannot read the board below '%s': %s\n",
			root[0] ? root : "/", strerror(-r));
		return EX_UNAVAILABLE;
	}
	struct sample *s = calloc(1, sizeof(*s));
	if (!s) {
		abort();
	}
	struct throttle_detector *det = throttle_detector_create();
	/* two readings: CPU load and OC counter deltas need a previous one */
	sample_clear(s);
	board_sample(b, s);
	throttle_detector_update(det, s);
	struct timespec gap = {.tv_sec = 0, .tv_nsec = 250 * 1000 * 1000};
	nanosleep(&gap, NULL);
	sample_clear(s);
	s->seq = 1;
	s->time_ms = (int64_t)time(NULL) * 1000;
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
		puts(j.buf);
		json_free(&j);
	} else {
		print_snapshot_text(b, s);
	}
	throttle_detector_destroy(det);
	free(s);
	board_destroy(b);
	return fflush(stdout) == 0 ? 0 : EX_IOERR;
}

/* ---- configuration ---- */

/* -v/-q on the command line win over agent.log_level */
static bool log_level_given;

int
load_config_or_default(const char *path, bool required, struct config **out)
{
	if (!path && access(CONFIG_DEFAULT_PATH, F_OK) == 0) {
		path = CONFIG_DEFAULT_PATH;
	}
	(void)required;
	struct diag_list diags;
	diag_list_init(&diags);
	/* no file: the defaults, still with the environment overrides */
	int r = path ? config_load(path, out, &diags) : config_load_environment(out, &diags);
	diag_list_print(&diags, stderr);
	size_t reported = diags.count;
	diag_list_free(&diags);
	if (r < 0) {
		if (r != -EINVAL && reported == 0) {
			fprintf(stderr, "tegrawatch: %s: %s\n", path ? path : "environment", strerror(-r));
		}
		return EX_CONFIG;
	}
	return 0;
}

static int
reload_config(void *data)
{
	return alerting_reload(data);
}

/* ---- run ---- */

#if HAVE_MQTT
/* One decorator for the agent: the alerting stage's counters, then MQTT's. */
struct run_decorators {
	struct alerting *al;
	struct sink *mqtt;
};

static void
decorate_all(struct sample *s, void *data)
{
	struct run_decorators *d = data;
	alerting_decorate(s, d->al);
	if (d->mqtt) {
		mqtt_sink_decorate(s, d->mqtt);
	}
}
#endif

static bool
is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The demo board ships in configs/demo (source tree) or the data dir (installed). */
static const char *
demo_dir(void)
{
	static const char *const candidates[] = {TEGRAWATCH_DEMO_DIR_INSTALLED, TEGRAWATCH_DEMO_DIR_SOURCE};
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		if (is_dir(candidates[i])) {
			return candidates[i];
		}
	}
	return NULL;
}

static int
cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{"replay", required_argument, NULL, 'R'},
		{"speed", required_argument, NULL, 's'},
		{"demo", no_argument, NULL, 'd'},
		{"root", required_argument, NULL, 'r'},
		{"interval", required_argument, NULL, 'i'},
		{"count", required_argument, NULL, 'n'},
		{"no-tegrastats", no_argument, NULL, 'T'},
		{"tegrastats", required_argument, NULL, 't'},
		{"config", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *replay = NULL, *root = NULL, *config_path = NULL;
	bool demo = false, interval_given = false;
	char demo_log[4096], demo_root[4096];
	double speed = 1.0;
	bool use_tegrastats = true;
	const char *tegrastats_program = NULL;
	struct agent_options aopts = {.interval_ms = 1000};
	int c;
	char *end;
	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'R':
			replay = optarg;
			break;
		case 's':
			speed = strtod(optarg, &end);
			if (*end || speed < 0 || speed > 1e6) {
				fprintf(stderr, "tegrawatch run: --speed wants a number >= 0, not '%s'\n", optarg);
				return EX_USAGE;
			}
			break;
		case 'd': {
			const char *dir = demo_dir();
			if (!dir) {
				fprintf(stderr, "tegrawatch run: the demo board is not installed (no %s or %s)\n",
					TEGRAWATCH_DEMO_DIR_INSTALLED, TEGRAWATCH_DEMO_DIR_SOURCE);
				return EX_UNAVAILABLE;
			}
			snprintf(demo_log, sizeof(demo_log), "%s/tegrastats.log", dir);
			snprintf(demo_root, sizeof(demo_root), "%s/root", dir);
			replay = demo_log;
			root = demo_root;
			demo = true;
			break;
		}
		case 'r':
			root = optarg;
			break;
		case 'i':
			interval_given = true;
			aopts.interval_ms = (int)strtol(optarg, &end, 10);
			if (*end || aopts.interval_ms < 10 || aopts.interval_ms > 3600000) {
				fprintf(stderr, "tegrawatch run: --interval wants milliseconds (10..3600000)\n");
				return EX_USAGE;
			}
			break;
		case 'n':
			aopts.max_samples = strtoull(optarg, &end, 10);
			if (*end) {
				fprintf(stderr, "tegrawatch run: --count wants a number\n");
				return EX_USAGE;
			}
			break;
		case 'T':
			use_tegrastats = false;
			break;
		case 't':
			tegrastats_program = optarg;
			break;
		case 'c':
			config_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return EX_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "tegrawatch run: unexpected argument '%s'\n", argv[optind]);
		return EX_USAGE;
	}

	/* the demo brings its own configuration, with the shipped rules */
	char demo_config[4096];
	if (demo && !config_path) {
		snprintf(demo_config, sizeof(demo_config), "%s/tegrawatch.yaml", demo_dir());
		config_path = demo_config;
	}
	struct config *cfg;
	int r = load_config_or_default(config_path, config_path != NULL, &cfg);
	if (r != 0) {
		return r;
	}
	if (!interval_given) {
		aopts.interval_ms = (int)cfg->interval_ms;
	}
	if (!log_level_given) {
		log_set_level((enum log_level)cfg->log_level);
	}
	if (!root && cfg->root[0]) {
		root = cfg->root;
	}
	if (cfg->tegrastats == TEGRASTATS_OFF) {
		use_tegrastats = false;
	}
	if (!tegrastats_program && cfg->tegrastats == TEGRASTATS_ON) {
		tegrastats_program = cfg->tegrastats_program;
	}

	struct board *b = NULL;
	r = board_open(root ? root : "", &b);
	if (r < 0) {
		b = NULL;
	}
	if (!replay && (!b || !board_is_jetson(b))) {
		fprintf(stderr,
			"tegrawatch: no Jetson board found under %s (no Tegra SoC, nv_tegra_release, GPU devfreq\n"
			"or Tegra thermal zones). To watch a recording use 'tegrawatch run --replay FILE';\n"
			"to try the built-in demo board use 'tegrawatch run --demo'.\n",
			root ? root : "/");
		board_destroy(b);
		config_destroy(cfg);
		return EX_UNAVAILABLE;
	}

	struct agent *agent = agent_create(&aopts);
	struct source *src;
	if (b && (board_is_jetson(b) || root)) {
		if (sysfs_source_create(b, &src) == 0) {
			agent_add_source(agent, src);
		}
	}
	if (!replay && (!root || !root[0] || strcmp(root, "/") == 0)) {
		/* generic hwmon chips (NVMe, fan controllers): libsensors reads the real /sys only */
		r = hwmon_source_create(&src);
		if (r == 0) {
			agent_add_source(agent, src);
		} else {
			log_info("generic hwmon sensors not read: %s", strerror(-r));
		}
	}
	if (replay) {
		r = replay_source_create(replay, speed, &src);
		if (r < 0) {
			fprintf(stderr, "tegrawatch run: %s: %s\n", replay, strerror(-r));
			agent_destroy(agent);
			board_destroy(b);
			config_destroy(cfg);
			return EX_IOERR;
		}
		agent_add_source(agent, src);
	} else if (use_tegrastats && (tegrastats_program || !root)) {
		/* next to a fixture root only when asked for: the host's binary would not match it */
		r = tegrastats_source_create(tegrastats_program ? tegrastats_program : "tegrastats",
					     aopts.interval_ms, &src);
		if (r == 0) {
			agent_add_source(agent, src);
		} else {
			log_info("tegrastats not started (%s): reading sysfs only", strerror(-r));
		}
	}
	/* alerting first: the rules see a sample before it is published */
	struct alerting *al = alerting_create(cfg, true);
	agent_add_sink(agent, alerting_sink(al));
	agent_set_reload(agent, reload_config, al);
	agent_set_decorate(agent, alerting_decorate, al);
	agent_add_sink(agent, jsonl_sink_create(stdout));
#if HAVE_MQTT
	/* ---- MQTT (issue 4): sink, alert events, agent.mqtt_* counters ---- */
	static struct run_decorators decorators;
	decorators.al = al;
	if (cfg->mqtt.host[0]) {
		struct nvpmodel_conf modes;
		struct mqtt_info info = {
			.modes = mqtt_read_power_modes(root ? root : "", &modes) == 0 ? &modes : NULL,
			.agent_version = TEGRAWATCH_VERSION,
			.interval_ms = aopts.interval_ms,
		};
		if (b) {
			info.identity = *board_identity(b);
		}
		struct sink *mqtt;
		r = mqtt_sink_create(&cfg->mqtt, &info, &mqtt);
		if (r < 0) {
			agent_destroy(agent);
			alerting_destroy(al);
			board_destroy(b);
			return EX_CONFIG;
		}
		agent_add_sink(agent, mqtt);
		alerting_on(al, mqtt_sink_on_alert, mqtt);
		alerting_foreach_active(al, mqtt_sink_seed_alert, mqtt);
		decorators.mqtt = mqtt;
		agent_set_decorate(agent, decorate_all, &decorators);
	}
#else
	if (cfg->mqtt.host[0]) {
		log_warn("mqtt: this build has no MQTT support (built without libmosquitto): mqtt.host is ignored");
	}
#endif
#if HAVE_WEB
	/* ---- web (issue 5): dashboard, JSON API, /metrics; listen "" = off ---- */
	struct web_server *web = NULL;
	if (cfg->web.listen[0]) {
		const struct board_identity *id = b ? board_identity(b) : NULL;
		struct web_info winfo = {
			.model = id ? id->model : "",
			.soc = id ? id->soc : "",
			.module = id ? id->module : "",
			.l4t = id ? id->l4t : "",
			.jetpack = id ? id->jetpack : "",
			.version = TEGRAWATCH_VERSION,
			.interval_ms = aopts.interval_ms,
		};
		r = web_server_start(&cfg->web, &winfo, &web);
		if (r == -EINVAL) {
			agent_destroy(agent);
			alerting_destroy(al);
			board_destroy(b);
			return EX_CONFIG;
		}
		if (r < 0) {
			/* sampling and alerting go on without the dashboard (a busy port, say) */
			web = NULL;
		} else {
			agent_add_sink(agent, web_server_sink(web));
			alerting_on(al, web_server_on_alert, web);
			alerting_foreach_active(al, web_server_seed_alert, web);
		}
	}
#endif
	r = agent_run(agent);
	agent_destroy(agent);
#if HAVE_WEB
	web_server_destroy(web); /* after the agent: the sink is the server's */
#endif
	alerting_destroy(al);
	board_destroy(b);
	if (r < 0) {
		fprintf(stderr, "tegrawatch run: %s\n", strerror(-r));
		return 1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EX_USAGE;
	}
	const char *cmd = argv[1];
	/* global verbosity flags may come right after the command */
	int level = LOG_WARN;
	int shift = 1;
	while (shift + 1 < argc && (strcmp(argv[shift + 1], "-v") == 0 || strcmp(argv[shift + 1], "-q") == 0)) {
		level = argv[shift + 1][1] == 'v' ? LOG_INFO + (level >= LOG_INFO) : LOG_ERROR;
		log_level_given = true;
		argv[shift + 1] = argv[shift];
		shift++;
	}
	log_set_level((enum log_level)level);
	argc -= shift;
	argv += shift;
	if (strcmp(cmd, "parse") == 0) {
		return cmd_parse(argc, argv);
	}
	if (strcmp(cmd, "snapshot") == 0) {
		return cmd_snapshot(argc, argv);
	}
	if (strcmp(cmd, "run") == 0) {
		return cmd_run(argc, argv);
	}
	if (strcmp(cmd, "check") == 0) {
		return cmd_check(argc, argv);
	}
	if (strcmp(cmd, "replay") == 0) {
		return cmd_replay(argc, argv);
	}
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
		printf("tegrawatch %s\n", TEGRAWATCH_VERSION);
		return 0;
	}
	fprintf(stderr, "tegrawatch: unknown command '%s'\n\n", cmd);
	usage(stderr);
	return EX_USAGE;
}
