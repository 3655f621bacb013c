/* The composition root: configuration + command line -> sources, stages, sinks. */
#include "setup.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/diag.h"
#include "core/exit_codes.h"
#include "core/gpu_procs.h"
#include "core/log.h"
#include "alerting.h"
#include "demo.h"
#include "core/device_id.h"
#include "fleet_setup.h"
#include "config_memory.h"
#include "host/boot_source.h"
#include "host/host_source.h"
#include "host/probe_source.h"
#include "procs/procs_source.h"
#include "predict/predict.h"
#include "work/work.h"
#include "service/service.h"
#include "build_config.h"
#include "report/sink_jsonl.h"
#include "nvml/nvml.h"
#include "report/record.h"
#include "tegra/board.h"
#include "tegra/sources.h"
#if HAVE_MQTT
#include "mqtt/mqtt.h"
#endif
#if HAVE_WEB
#include "web/web.h"
#endif

/* -v/-q on the command line win over agent.log_level */
static bool log_level_given;

void
setup_log_level(enum log_level level, bool from_command_line)
{
	log_set_level(level);
	log_level_given = from_command_line;
}

static bool
is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The installed directory, else the source tree's, else NULL. */
static const char *
installed_or_source(const char *installed, const char *source)
{
	return is_dir(installed) ? installed : is_dir(source) ? source : NULL;
}

const char *
setup_rules_dir(void)
{
	return installed_or_source(TEGRAWATCH_RULES_DIR_INSTALLED, TEGRAWATCH_RULES_DIR_SOURCE);
}

int
setup_load_config(const char *path, struct config **out)
{
	if (!path && access(CONFIG_DEFAULT_PATH, F_OK) == 0) {
		path = CONFIG_DEFAULT_PATH;
	}
	struct diag_list diags;
	diag_list_init(&diags);
	/* no file: the defaults, still with the environment overrides, and the shipped rules as on a board */
	const char *rules = path ? NULL : setup_rules_dir();
	int r = path    ? config_load(path, out, &diags)
		: rules ? config_load_rules_dir(rules, out, &diags)
			: config_load_environment(out, &diags);
	diag_list_print(&diags, stderr);
	size_t reported = diags.count;
	diag_list_free(&diags);
	if (r < 0) {
		if (r != -EINVAL && reported == 0) {
			log_error("%s: %s", path ? path : "environment", strerror(-r));
		}
		return EX_CONFIG;
	}
	if (!log_level_given) {
		log_set_level((enum log_level)(*out)->log_level);
	}
	if (!path) {
		/* without this, a replay of a throttling board says "0 alert events" and nobody knows why */
		size_t n = (*out)->rules.count;
		log_warn("no configuration (none named with -c FILE, none at %s): %zu rule%s %s%s%s",
			 CONFIG_DEFAULT_PATH, n, n == 1 ? "" : "s",
			 rules ? "loaded from the shipped " : "loaded (no shipped rules found)", rules ? rules : "",
			 rules ? "/*.yaml" : "");
	}
	return 0;
}

void
setup_say_not_jetson(const struct board *b, const char *root)
{
	if (!board_is_jetson(b) && board_has_metrics(b)) {
		log_warn("not a Jetson (no Tegra SoC, nv_tegra_release, GPU devfreq or Tegra thermal zones under %s): "
			 "reading what this host has (thermal zones, hwmon, CPU, memory, NVIDIA GPUs through NVML)",
			 root && root[0] ? root : "/");
	}
}

const char *
setup_demo_dir(void)
{
	return installed_or_source(TEGRAWATCH_DEMO_DIR_INSTALLED, TEGRAWATCH_DEMO_DIR_SOURCE);
}

static bool
is_real_root(const char *root)
{
	return !root || !root[0] || strcmp(root, "/") == 0;
}

/*
 * The NVML source, where it adds something (sources.nvml: auto): a GPU the
 * board's files say too little about, that is an NVIDIA display controller
 * on PCI (a discrete card; Thor's GPU on NVIDIA's unified driver) or a
 * devfreq GPU without a load file (Thor). Elsewhere (Orin, Xavier, Nano:
 * nvgpu's NVML answers NOT_SUPPORTED for nearly everything) the library
 * and its 10-12 MB of heap are never loaded. `on` loads it anyway, `off`
 * never. GPU_FEED (a processes: section's) gets each poll's GPU memory
 * per process.
 */
static int
add_nvml(struct agent *agent, const struct board *b, const struct config *cfg, int interval_ms,
	 struct gpu_procs_feed *gpu_feed)
{
	unsigned pci = 0;
	bool igpu_without_load = false;
	if (b) {
		board_nvidia_gpus(b, &pci, &igpu_without_load);
	}
	if (cfg->nvml == TEGRASTATS_OFF || (cfg->nvml == TEGRASTATS_AUTO && pci == 0 && !igpu_without_load)) {
		return 0;
	}
	struct nvml_options no = {.interval_ms = interval_ms, .gpu_feed = gpu_feed};
	struct source *src;
	char why[256] = "";
	int r = nvml_source_create(&no, &src, why, sizeof(why));
	if (r < 0) {
		if (cfg->nvml == TEGRASTATS_ON) {
			log_warn("nvml: sources.nvml is on, but NVML cannot be loaded (%s)",
				 why[0] ? why : strerror(-r));
		} else {
			log_info("nvml: %s, but NVML cannot be loaded (%s): no NVIDIA GPU metrics",
				 pci ? "an NVIDIA GPU is on PCI" : "the GPU has no load file",
				 why[0] ? why : strerror(-r));
		}
		return 0;
	}
	agent_add_source(agent, src);
	return 1;
}

/*
 * A configured listener (web.listen, work.listen) that cannot be had: the
 * agent does not start, so that a second agent on the host (the service
 * and a hand-run one, two demos) says so instead of running half. A port
 * another program holds may be free later: EX_TEMPFAIL, which the
 * service's unit restarts; an address this host cannot give is the
 * configuration's mistake.
 */
static int
listen_failed(const char *section, const char *listen, int err)
{
	if (err == -EADDRINUSE) {
		log_error("%s: cannot listen on %s: %s: another program listens there (another tegrawatch? the "
			  "service: systemctl status tegrawatch); give this one another port (%s.listen, or "
			  "TEGRAWATCH_%s_LISTEN=HOST:PORT) or none (\"\")",
			  section, listen, strerror(-err), section, strcmp(section, "web") == 0 ? "WEB" : "WORK");
		return EX_TEMPFAIL;
	}
	log_error("%s: cannot listen on %s: %s (%s.listen: an address of this host, a port above 1023 unless "
		  "run as root, or \"\" for none)",
		  section, listen, strerror(-err), section);
	return err == -EADDRNOTAVAIL || err == -EACCES || err == -EPERM || err == -EINVAL ? EX_CONFIG : EX_OSERR;
}

/*
 * Next to the host source: the probes (host.probes) and the boot watch,
 * which keeps boot.state next to the alert state (none when that is off,
 * and in a dry run). Neither makes a sample by itself.
 */
static void
add_host_extras(struct agent *agent, const struct config *cfg, const struct setup_options *o)
{
	struct source *src;
	if (cfg->host.probes.count) {
		int r = probe_source_create(&cfg->host.probes, &src);
		if (r == 0) {
			agent_add_source(agent, src);
		} else {
			log_warn("host.probes: not probed: %s", strerror(-r));
		}
	}
	if (o->dry_run || !cfg->state_file[0]) {
		return;
	}
	char path[4096];
	const char *slash = strrchr(cfg->state_file, '/');
	int n = slash ? snprintf(path, sizeof(path), "%.*s/boot.state", (int)(slash - cfg->state_file), cfg->state_file)
		      : snprintf(path, sizeof(path), "boot.state");
	struct boot_source_options bo = {.state_path = path};
	if (n > 0 && (size_t)n < sizeof(path) && boot_source_create(&bo, &src) == 0) {
		agent_add_source(agent, src);
	}
}

/*
 * Sources: sysfs (a Jetson, a fixture root, or what any Linux host has),
 * hwmon (the real root), NVML, a replay or a live tegrastats. Sets
 * *SOURCES to how many were added.
 */
static int
add_sources(struct agent *agent, struct board *b, const struct config *cfg, const struct setup_options *o,
	    const char *root, int interval_ms, struct work_ledger *work, struct demo_status *demo, bool *board_owned,
	    struct proc_table *procs, int *sources)
{
	struct source *src;
	int r;
	bool jetson = b && board_is_jetson(b);
	struct gpu_procs_feed *gpu_feed = NULL; /* NVML's GPU memory per process, for the processes source */
	*sources = 0;
	if (!o->replay) {
		/* never a sample by itself: it adds the application's counts to the board's; not counted here */
		r = work_source_create(cfg->work.listen, work, &src);
		if (r < 0) {
			return listen_failed("work", cfg->work.listen, r);
		}
		agent_add_source(agent, src);
	}
	if (b && (jetson || board_has_metrics(b))) {
		sysfs_source_create(b, &src); /* owns the board from now on */
		agent_add_source(agent, src);
		*board_owned = true;
		(*sources)++;
	}
	if (!o->replay && is_real_root(root)) {
		/* generic hwmon chips (NVMe, fan controllers): libsensors reads the real /sys only */
		r = hwmon_source_create(&src);
		if (r == 0) {
			agent_add_source(agent, src);
			(*sources)++;
		} else {
			log_info("generic hwmon sensors not read: %s", strerror(-r));
		}
		/* memory, pressure, file systems, disks: the real host's only; never a sample by itself */
		if (cfg->host.enabled) {
			struct host_source_options ho = {.cfg = &cfg->host};
			if (host_source_create(&ho, &src) == 0) {
				agent_add_source(agent, src);
				if (*board_owned) {
					/* its memory shares come from the board's one reading of /proc/meminfo */
					board_set_memory_shares(b, true);
				}
			}
			add_host_extras(agent, cfg, o);
		}
		/* the processes: section's, at its own pace; nothing read without it. Never a sample by itself */
		if (cfg->procs.count > 0) {
			gpu_feed = gpu_procs_feed_create();
			struct procs_source_options po = {.cfg = &cfg->procs,
							  .interval_ms = cfg->processes_interval_ms,
							  .table = procs,
							  .gpu_feed = gpu_feed};
			if (procs_source_create(&po, &src) == 0) {
				agent_add_source(agent, src);
			}
		}
	}
	if (o->replay && o->source) {
		agent_add_source(agent, o->source);
		(*sources)++;
		return 0;
	}
	if (o->replay) {
		/* a run --record file replays too, as fast as it can be read (its samples carry their own times) */
		/* the demo plays its recording again at its end, unless as fast as possible (it would never end) */
		struct replay_loop loop = {demo_status_wrapped, demo};
		bool again = o->demo && o->speed > 0;
		r = record_file_detect(o->replay) == 1
			    ? record_source_create(o->replay, &src)
			    : replay_source_create(o->replay, o->speed, again ? &loop : NULL, &src);
		if (r < 0) {
			log_error("%s: %s", o->replay, strerror(-r));
			return r == -ENOENT || r == -EACCES || r == -EISDIR ? EX_NOINPUT : EX_IOERR;
		}
		agent_add_source(agent, src);
		(*sources)++;
		return 0;
	}
	*sources += add_nvml(agent, b, cfg, interval_ms, gpu_feed);
	gpu_procs_feed_unref(gpu_feed); /* the two sources hold their own references */
	bool tegrastats = !o->no_tegrastats && cfg->tegrastats != TEGRASTATS_OFF;
	const char *program = o->tegrastats;
	if (!program && cfg->tegrastats == TEGRASTATS_ON) {
		program = cfg->tegrastats_program;
	}
	/* next to a fixture root only when asked for (the host's binary would not match it); on a Jetson only */
	if (tegrastats && (program || (!root && jetson))) {
		r = tegrastats_source_create(program ? program : "tegrastats", interval_ms, &src);
		if (r == 0) {
			agent_add_source(agent, src);
			(*sources)++;
		} else {
			log_info("tegrastats not started (%s): reading sysfs only", strerror(-r));
		}
	}
	return 0;
}

#if HAVE_WEB
#define DEMO_PORTS 20 /* the demo tries this many ports from web.listen's on */

/*
 * The web server on web.listen; for the demo, on the next free port when
 * that one is taken (a second demo, or the service), said out loud.
 */
static int
add_web(struct agent *agent, const struct config *cfg, const struct agent_info *info, struct work_ledger *work,
	struct demo_status *demo)
{
	struct web_config wc = cfg->web; /* a copy: only its listen address may change */
	char listen[sizeof("[0000:0000:0000:0000:0000:0000:0000:0000]:65535") + 16];
	const char *colon = strrchr(cfg->web.listen, ':');
	char *end;
	long first = colon ? strtol(colon + 1, &end, 10) : 0;
	int r;
	for (int i = 0;; i++) {
		/* POST /api/v1/work adds to the ledger from the server's thread; the server keeps a reference */
		struct web_work_hook hook = {work_post_json, work ? work_ledger_ref(work) : NULL, work_ledger_release};
		struct sink *web;
		r = web_server_start(&wc, info, work ? &hook : NULL, &web);
		if (r == 0) {
			agent_add_sink(agent, web);
			if (i > 0) {
				log_warn("web: %s is taken (another agent?): this demo's dashboard is on http://%s/",
					 cfg->web.listen, wc.listen);
			}
			if (demo) {
				demo_status_set_dashboard(demo, wc.listen);
			}
			return 0;
		}
		if (r != -EADDRINUSE || !demo || i + 1 >= DEMO_PORTS || first <= 0 || first + i + 1 > 65535) {
			break;
		}
		snprintf(listen, sizeof(listen), "%.*s:%ld", (int)(colon - cfg->web.listen), cfg->web.listen,
			 first + i + 1);
		wc.listen = listen;
	}
	if (r == -EINVAL || r == -EIO || r == -ENOMEM || r == -ELIBACC) {
		/* logged by the server */
		return r == -EINVAL ? EX_CONFIG : r == -ELIBACC ? EX_UNAVAILABLE : EX_OSERR;
	}
	return listen_failed("web", wc.listen, r);
}
#endif

/* Whether `run` writes every sample on stdout: --json/--no-json, else agent.json_lines. */
static bool
json_lines_on(const struct config *cfg, const struct setup_options *o)
{
	int json = o->json_lines != JSON_LINES_AUTO ? o->json_lines : cfg->json_lines;
	return json == JSON_LINES_ON || (json == JSON_LINES_AUTO && jsonl_wanted_on(STDOUT_FILENO));
}

/* Sinks of `run`: JSON Lines on stdout, the fleet sinks, MQTT and the web server as configured. */
static int
add_outputs(struct agent *agent, const struct config *cfg, const struct setup_options *o, const struct agent_info *info,
	    struct work_ledger *work, struct demo_status *demo)
{
	int interval_ms = (int)info->interval_ms;
	/* the loader checked the budget at agent.interval; --interval may change it */
	struct memory_budget budget;
	config_memory_budget(cfg, interval_ms, &budget);
	memory_budget_log(&budget);
	if (budget.limit && budget.total > budget.limit) {
		log_error(
			"memory budget %.1f MiB exceeds agent.memory_max %.1f MiB at --interval %d ms (see tegrawatch "
			"check)",
			(double)budget.total / (1024.0 * 1024.0), (double)budget.limit / (1024.0 * 1024.0),
			interval_ms);
		return EX_CONFIG;
	}
	agent_add_sink(agent, memory_budget_sink_create(&budget));
	if (json_lines_on(cfg, o)) {
		/* as fast as possible, the reader sets the pace: no sample is dropped for it */
		agent_add_sink(agent, jsonl_sink_create(STDOUT_FILENO, o->replay && o->speed == 0));
	}
	int fr = fleet_sinks_add(agent, cfg, info);
	if (fr != 0) {
		return fr;
	}
#if HAVE_MQTT
	if (cfg->mqtt.host[0]) {
		struct sink *mqtt;
		int r = mqtt_sink_create(&cfg->mqtt, info, &mqtt);
		if (r < 0) {
			return r == -ELIBACC ? EX_UNAVAILABLE : EX_CONFIG;
		}
		agent_add_sink(agent, mqtt);
	}
#else
	if (cfg->mqtt.host[0]) {
		log_warn("mqtt: this build has no MQTT support (built without libmosquitto): mqtt.host is ignored");
	}
#endif
#if HAVE_WEB
	/* listen "" = off */
	if (cfg->web.listen[0]) {
		return add_web(agent, cfg, info, work, demo);
	}
#else
	if (cfg->web.listen[0] && cfg->path[0]) {
		log_info("web: this build has no HTTP server (built without libmicrohttpd)");
	}
#endif
	return 0;
}

/* Once at start, as a user other than root: what the board has that the agent cannot read, and why. */
static void
say_unreadable(const struct board *b, const struct config *cfg, const struct setup_options *o)
{
	char what[512];
	size_t n = board_unreadable(b, what, sizeof(what));
	if (n > 0) {
		log_warn("running as uid %u, not root: %s %s left out (docs/service.md says how to grant %s)",
			 (unsigned)geteuid(), what, n == 1 ? "is" : "are", n == 1 ? "it" : "them");
	}
	if (!o->no_tegrastats && cfg->tegrastats != TEGRASTATS_OFF && !o->root) {
		log_info("tegrastats runs as uid %u, not root: it leaves out EMC_FREQ (JetPack 6), APE, MTS, IRAM "
			 "and the engine loads",
			 (unsigned)geteuid());
	}
}

/*
 * mqtt.device_id, else one made from the board's serial or machine-id,
 * else the board name: once, for every output. A replay without a root
 * reads neither (as it reads no board): the recording may be another's.
 */
static void
resolve_device_id(const struct config *cfg, const struct setup_options *o, const struct board *b, const char *root,
		  char *out, size_t size)
{
	if (cfg->mqtt.device_id[0]) {
		snprintf(out, size, "%s", cfg->mqtt.device_id);
		return;
	}
	const char *from = NULL;
	const char *id_root = root ? root : o->replay ? NULL : "";
	device_id_default(id_root, b ? board_identity(b) : NULL, cfg->board_name, out, size, &from);
	log_info("device id %s (from the %s)", out, from);
}

/* What OPTS handed over, when no agent takes it. */
static void
discard(struct config *cfg, const struct setup_options *o, struct board *b)
{
	board_destroy(b);
	config_destroy(cfg);
	sink_destroy(o->extra);
	source_destroy(o->source);
}

/*
 * What the predict stage needs: agent.expected_power_mode resolved against
 * the board's modes, and where the thermal statistics live: thermal.state
 * next to the alert state file (none when that is off, and in a dry run).
 */
static int
predict_options_for(const struct config *cfg, const struct board *b, bool dry_run, char *state, size_t size,
		    struct predict_options *out)
{
	*out = (struct predict_options){0};
	const char *slash = strrchr(cfg->state_file, '/');
	int n = slash ? snprintf(state, size, "%.*s/thermal.state", (int)(slash - cfg->state_file), cfg->state_file)
		      : snprintf(state, size, "thermal.state");
	if (!dry_run && cfg->state_file[0] && n > 0 && (size_t)n < size) {
		out->state_path = state;
	}
	char err[160];
	if (power_mode_expectation_parse(cfg->expected_power_mode, &out->expect, err, sizeof(err)) < 0) {
		log_error("agent.expected_power_mode: %s", err); /* the loader refused it already */
		return EX_CONFIG;
	}
	const struct nvpmodel_conf *modes = b ? board_power_modes(b) : NULL;
	if (power_mode_expectation_resolve(&out->expect, modes) < 0) {
		/* still watched: a later nvpmodel.conf may have it, and the alert says which one was asked for */
		char why[512];
		power_mode_expectation_missing(&out->expect, modes, b ? board_identity(b) : NULL, why, sizeof(why));
		log_warn("agent.expected_power_mode: %s", why);
	}
	return 0;
}

int
setup_agent(struct config *cfg, const struct setup_options *o, struct agent **out)
{
	const char *root = o->root;
	if (!root && cfg->root[0]) {
		root = cfg->root;
	}
	int interval_ms = o->interval_ms > 0 ? o->interval_ms : (int)cfg->interval_ms;
	struct board *b = NULL;
	/* a replay reads the board only below an explicit root (trip points, identity) */
	if ((!o->replay || root) && board_open(root ? root : "", &b) < 0) {
		b = NULL;
	}
	if (!o->replay && b) {
		setup_say_not_jetson(b, root);
	}
	if (o->board) {
		*o->board = b ? *board_identity(b) : (struct board_identity){0};
	}
	char device_id[DEVICE_ID_MAX];
	resolve_device_id(cfg, o, b, root, device_id, sizeof(device_id));
	/* who this agent is, once, for every output that says so (the recording, the sinks) */
	struct agent_info info = {
		.modes = b ? board_power_modes(b) : NULL,
		.board_name = cfg->board_name,
		.device_id = device_id,
		.version = TEGRAWATCH_VERSION,
		.interval_ms = interval_ms,
	};
	if (b) {
		/* the identity of the board this run reads: none for a replay without a root */
		info.identity = *board_identity(b);
	}
	struct predict_options popts;
	char thermal_state[4096];
	if (predict_options_for(cfg, b, o->dry_run, thermal_state, sizeof(thermal_state), &popts) != 0) {
		discard(cfg, o, b);
		return EX_CONFIG;
	}
	struct sink *record = NULL;
	if (o->record) {
		int r = record_sink_create(o->record, o->record_max_bytes, &info, &record);
		if (r < 0) {
			log_error("--record %s: %s", o->record, strerror(-r));
			discard(cfg, o, b);
			return EX_IOERR;
		}
	}
	if (!o->replay && b && geteuid() != 0) {
		say_unreadable(b, cfg, o);
	}
	char trips[192];
	if (b) {
		/* once: which trips count as a throttle (docs/throttling.md, "Which trips throttle") */
		board_trip_bindings(b, trips, sizeof(trips));
		log_info("%s", trips);
	}
	char gpu_clock[128];
	if (b && board_gpu_clock(b, gpu_clock, sizeof(gpu_clock))) {
		log_info("GPU clock from %s", gpu_clock);
	}
	struct agent_options aopts = {.interval_ms = interval_ms, .max_samples = o->max_samples};
	struct agent *agent = agent_create(&aopts);
	if (o->extra) {
		agent_add_sink(agent, o->extra);
	}
	if (record) {
		agent_add_sink(agent, record);
	}
	struct demo_status *demo = NULL;
	if (o->demo && o->outputs) {
		/* stdout is for the person watching, unless it carries the samples */
		bool json = json_lines_on(cfg, o);
		agent_add_sink(agent, demo_status_create(json ? stderr : stdout, !json, cfg->mqtt.host, cfg->mqtt.port,
							 cfg->mqtt.prefix, &demo));
	}
	bool board_owned = false;
	int sources = 0;
	struct work_ledger *work = work_ledger_create();
	/* every process of this host, read only when a watch or a firing alert asks (procs/proc_table.h) */
	struct proc_table *procs = !o->replay && is_real_root(root) ? proc_table_create(NULL) : NULL;
	int r = add_sources(agent, b, cfg, o, root, interval_ms, work, demo, &board_owned, procs, &sources);
	if (r == 0 && sources == 0) {
		/* the reason the service stays down: one line at err, so `journalctl -p warning` shows it */
		log_error(
			"nothing to read under %s: no Jetson board found (no Tegra SoC, nv_tegra_release, GPU devfreq "
			"or Tegra thermal zones), and no thermal zone, CPU, memory, hwmon chip or NVIDIA GPU either: to "
			"watch a recording use 'tegrawatch run --replay FILE', to try the built-in demo board "
			"'tegrawatch run --demo'",
			root ? root : "/");
		r = EX_UNAVAILABLE;
	}
	if (r == 0 && o->outputs) {
		r = add_outputs(agent, cfg, o, &info, o->replay ? NULL : work, demo);
	}
	work_ledger_unref(work); /* the source and the web server hold their own references */
	if (!board_owned) {
		board_destroy(b); /* the outputs copied what they show of it */
	}
	if (r != 0) {
		proc_table_unref(procs);
		agent_destroy(agent);
		config_destroy(cfg);
		return r;
	}
	struct stage *service = service_stage_create();
	if (service) {
		agent_add_stage(agent, service); /* first: it announces a reload before the others reload */
	}
	agent_add_stage(agent, throttle_stage_create(!o->replay));
	agent_add_stage(agent, counters_stage_create());
	agent_add_stage(agent, predict_stage_create(&popts));
	agent_add_stage(agent, work_stage_create());
	/* what ran, on every alert that fires */
	r = alerting_add(agent, cfg, device_id, popts.expect.text, !o->dry_run, procs);
	proc_table_unref(procs);
	if (r < 0) {
		log_error("too many pipeline stages: no room for the rules and their actions");
		agent_destroy(agent); /* the configuration went with the stages */
		return EX_SOFTWARE;
	}
	*out = agent;
	return 0;
}
