/*
 * `tegrawatch report RECORDING`: what happened on the board during a run.
 * The recording (a tegrastats log or a `run --record` file) plays through
 * the pipeline as fast as it can (the throttle stage and, with -c, the
 * rules in dry-run mode), into a report sink (report/).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/atomic_file.h"
#include "core/exit_codes.h"
#include "core/xalloc.h"
#include "core/diag.h"
#include "report/criteria.h"
#include "report/record.h"
#include "report/report_out.h"
#include "report/report_series.h"
#include "cli.h"
#include "commands.h"
#include "setup.h"

struct report_args {
	const char *root, *config, *phases, *json, *csv, *html, *criteria;
	bool compare;
};

static int
open_config(const char *path, struct config **cfg)
{
	if (path) {
		return setup_load_config(path, cfg);
	}
	*cfg = config_default(); /* no rules: the alert timeline needs -c */
	static bool told;        /* --compare opens it twice */
	const char *rules = setup_rules_dir();
	if (told) {
		return 0;
	}
	told = true;
	fprintf(stderr,
		"tegrawatch report: no alert timeline: no rules were named (-c FILE runs a configuration's%s%s%s)\n",
		rules ? "; the shipped rules are " : "", rules ? rules : "", rules ? "/*.yaml" : "");
	return 0;
}

/* Plays PATH through the pipeline into R (initialised by the caller). Returns 0 or an exit status. */
static int
run_one(const char *path, const struct report_args *a, struct report *r, struct csv_writer *csv, int *csv_err)
{
	int kind = record_file_detect(path);
	if (kind < 0) {
		fprintf(stderr, "tegrawatch report: %s: %s\n", path, strerror(-kind));
		return kind == -ENOENT || kind == -EACCES || kind == -EISDIR ? EX_NOINPUT : EX_IOERR;
	}
	struct config *cfg;
	int status = open_config(a->config, &cfg);
	if (status != 0) {
		return status;
	}
	struct board_identity board;
	struct setup_options so = {.replay = path, .speed = 0, .root = a->root, .dry_run = true, .board = &board};
	if (kind == 1) {
		int e = record_source_create(path, &so.source);
		if (e < 0) {
			config_destroy(cfg);
			fprintf(stderr, "tegrawatch report: %s: %s\n", path, strerror(-e));
			return EX_IOERR;
		}
		struct board_identity id;
		if (record_source_board(so.source, &id)) {
			report_set_board(r, &id);
		}
	}
	so.extra = report_sink_create(r, csv, csv_err);
	struct agent *agent;
	status = setup_agent(cfg, &so, &agent);
	if (status != 0) {
		return status;
	}
	if (board.model[0] || board.soc[0] || board.l4t[0]) {
		report_set_board(r, &board); /* the board read below the root wins over the recording's */
	}
	int e = agent_run(agent);
	agent_destroy(agent);
	if (e < 0) {
		fprintf(stderr, "tegrawatch report: %s: %s\n", path, strerror(-e));
		return EX_SOFTWARE;
	}
	report_finish(r);
	if (r->all.samples == 0) {
		fprintf(stderr, "tegrawatch report: %s: no samples\n", path);
		return EX_NOINPUT; /* nothing in it could be read */
	}
	return 0;
}

/* The JSON with its newline, or the HTML page around it. 0 or -errno. */
static int
render(FILE *f, const char *text, size_t len, bool html)
{
	if (html) {
		return report_write_html(text, len, f);
	}
	return fwrite(text, 1, len, f) == len && fputc('\n', f) != EOF ? 0 : -EIO;
}

/* Writes TEXT to PATH ('-' = stdout), whole or not at all (core/atomic_file.h). */
static int
write_out(const char *path, const char *text, size_t len, bool html)
{
	if (strcmp(path, "-") == 0) {
		int r = render(stdout, text, len, html);
		return fflush(stdout) == 0 && r == 0 ? 0 : EX_IOERR;
	}
	struct atomic_file *af;
	int r = atomic_file_create(path, 0666, &af); /* the mode fopen() gave it */
	if (r == 0) {
		r = render(atomic_file_stream(af), text, len, html);
		if (r < 0) {
			atomic_file_abort(af);
		} else {
			r = atomic_file_commit(af);
		}
	}
	if (r < 0) {
		fprintf(stderr, "tegrawatch report: %s: %s\n", path, strerror(-r));
		return EX_IOERR;
	}
	return 0;
}

static int
read_phases(const char *path, struct report_phase_def **defs, size_t *count)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		fprintf(stderr, "tegrawatch report: %s: %s\n", path, strerror(errno));
		return EX_NOINPUT;
	}
	char text[65536];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	char err[256];
	if (report_phases_parse(text, defs, count, err, sizeof(err)) < 0) {
		fprintf(stderr, "tegrawatch report: %s:%s\n", path, err);
		return EX_USAGE; /* the phases are part of what the command line asks */
	}
	return 0;
}

/* The page's data: {"kind": "report", "report": {...}, "series": {...}} */
static void
page_data(struct json *j, const struct report *r)
{
	json_object_begin(j);
	json_key(j, "kind");
	json_string(j, "report");
	json_key(j, "report");
	report_to_json(r, j);
	json_key(j, "series");
	series_to_json(r->series, j);
	json_object_end(j);
}

static int
report_single(const char *path, const struct report_args *a)
{
	struct report_phase_def *defs = NULL;
	size_t ndefs = 0;
	int status = a->phases ? read_phases(a->phases, &defs, &ndefs) : 0;
	if (status != 0) {
		return status;
	}
	struct criteria crit = {0};
	if (a->criteria) {
		struct diag_list diags;
		diag_list_init(&diags);
		if (criteria_load(a->criteria, &crit, &diags) < 0) {
			for (size_t i = 0; i < diags.count; i++) {
				char buf[512];
				diag_format(&diags.items[i], buf, sizeof(buf));
				fprintf(stderr, "%s\n", buf);
			}
			diag_list_free(&diags);
			free(defs);
			return EX_USAGE; /* like --phases: part of what the command line asks */
		}
		diag_list_free(&diags);
	}
	struct report r;
	report_init(&r, defs, ndefs, a->html != NULL);
	free(defs);
	struct csv_writer *csv = NULL;
	int csv_err = 0;
	if (a->csv && (csv_err = csv_create(a->csv, &csv)) < 0) {
		fprintf(stderr, "tegrawatch report: %s: %s\n", a->csv, strerror(-csv_err));
		report_free(&r);
		return EX_IOERR;
	}
	status = run_one(path, a, &r, csv, &csv_err);
	if (status == 0 && csv && (csv_err < 0 || (csv_err = csv_finish(csv)) < 0)) {
		fprintf(stderr, "tegrawatch report: %s: %s\n", a->csv, strerror(-csv_err));
		status = EX_IOERR;
	}
	struct criterion_result *results = crit.count ? xcalloc(crit.count, sizeof(*results)) : NULL;
	bool passed = true;
	if (status == 0 && crit.count) {
		passed = criteria_evaluate(&crit, &r, results);
		r.criteria = &crit;
		r.criteria_results = results;
	}
	struct json j;
	json_init(&j);
	if (status == 0 && a->json) {
		report_to_json(&r, &j);
		status = write_out(a->json, j.out.buf, j.out.len, false);
	}
	if (status == 0 && a->html) {
		json_reset(&j);
		page_data(&j, &r);
		status = write_out(a->html, j.out.buf, j.out.len, true);
	}
	if (status == 0 && !a->json && !a->csv && !a->html) {
		report_print_text(&r, path, stdout);
	}
	if (status == 0 && crit.count && (a->json || a->csv || a->html)) {
		criteria_text(&crit, results, stderr); /* the verdict is said whatever the outputs */
	}
	json_free(&j);
	csv_destroy(csv);
	report_free(&r);
	free(results);
	criteria_free(&crit);
	return status == 0 && !passed ? 1 : status;
}

static int
report_compare(const char *pa, const char *pb, const struct report_args *a)
{
	struct report ra, rb;
	report_init(&ra, NULL, 0, a->html != NULL);
	report_init(&rb, NULL, 0, a->html != NULL);
	int status = run_one(pa, a, &ra, NULL, NULL);
	if (status == 0) {
		status = run_one(pb, a, &rb, NULL, NULL);
	}
	struct json j;
	json_init(&j);
	if (status == 0 && a->json) {
		report_compare_json(&ra, &rb, pa, pb, &j);
		status = write_out(a->json, j.out.buf, j.out.len, false);
	}
	if (status == 0 && a->html) {
		json_reset(&j);
		json_object_begin(&j);
		json_key(&j, "kind");
		json_string(&j, "compare");
		json_key(&j, "compare");
		report_compare_json(&ra, &rb, pa, pb, &j);
		json_key(&j, "a");
		page_data(&j, &ra);
		json_key(&j, "b");
		page_data(&j, &rb);
		json_object_end(&j);
		status = write_out(a->html, j.out.buf, j.out.len, true);
	}
	if (status == 0 && !a->json && !a->html) {
		char verdict[1024];
		report_compare_verdict(&ra, &rb, verdict, sizeof(verdict));
		printf("A: %s\nB: %s\n%s\n", pa, pb, verdict);
	}
	json_free(&j);
	report_free(&ra);
	report_free(&rb);
	return status;
}

int
cmd_report(int argc, char **argv)
{
	struct report_args a = {0};
	int c;
	while ((c = cli_getopt("report", argc, argv)) != -1) {
		switch (c) {
		case OPT_ROOT:
			a.root = optarg;
			break;
		case OPT_CONFIG:
			a.config = optarg;
			break;
		case OPT_PHASES:
			a.phases = optarg;
			break;
		case OPT_JSON:
			a.json = optarg;
			break;
		case OPT_CSV:
			a.csv = optarg;
			break;
		case OPT_HTML:
			a.html = optarg;
			break;
		case OPT_COMPARE:
			a.compare = true;
			break;
		case OPT_CRITERIA:
			a.criteria = optarg;
			break;
		case OPT_HELP:
			cli_usage(stdout, "report");
			return 0;
		default:
			return EX_USAGE;
		}
	}
	int want = a.compare ? 2 : 1;
	if (argc - optind != want) {
		fprintf(stderr, "tegrawatch report: give %s\n",
			a.compare ? "two recordings: --compare A B" : "one recording");
		return EX_USAGE;
	}
	if (a.compare && (a.csv || a.phases || a.criteria)) {
		fprintf(stderr,
			"tegrawatch report: --csv, --phases and --criteria are for one recording, not --compare\n");
		return EX_USAGE;
	}
	return a.compare ? report_compare(argv[optind], argv[optind + 1], &a) : report_single(argv[optind], &a);
}
