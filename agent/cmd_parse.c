/*
 * tegrawatch parse [FILE]: tegrastats lines in, one JSON object per line
 * out ({"line","ts","metrics"} or {"line","error"}).
 */
#include <errno.h>
#include <getopt.h> /* optind */
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "core/exit_codes.h"
#include "core/json.h"
#include "core/log.h"
#include "core/sample_json.h"
#include "core/xalloc.h"
#include "cli.h"
#include "commands.h"
#include "tegra/tegrastats.h"

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

int
cmd_parse(int argc, char **argv)
{
	FILE *in = stdin;
	const char *name = "<stdin>";
	int c;
	while ((c = cli_getopt("parse", argc, argv)) != -1) {
		if (c != OPT_HELP) {
			return EX_USAGE;
		}
		cli_usage(stdout, "parse");
		return 0;
	}
	if (argc - optind > 1) {
		fprintf(stderr, "tegrawatch parse: too many arguments\n");
		return EX_USAGE;
	}
	if (optind < argc && strcmp(argv[optind], "-") != 0) {
		name = argv[optind];
		in = fopen(name, "re");
		if (!in) {
			int e = errno;
			fprintf(stderr, "tegrawatch parse: %s: %s\n", name, strerror(e));
			return e == ENOENT || e == EACCES ? EX_NOINPUT : EX_IOERR;
		}
	}
	struct metric_set *set = xcalloc(1, sizeof(*set));
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
		int r = tegrastats_parse_record(line, (size_t)n, set, &info, &err);
		if (r < 0) {
			errors++;
			log_info("%s:%lu:%d: %s", name, lineno, err.column, err.msg);
		} else {
			parsed++;
			unknown += info.unknown_tokens;
		}
		write_parse_result(&j, lineno, r, &info, set, &err);
		if (fwrite(j.out.buf, 1, j.out.len, stdout) != j.out.len) {
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
	log_info("%s: %lu lines parsed, %lu errors, %lu unknown tokens skipped", name, parsed, errors, unknown);
	free(line);
	json_free(&j);
	free(set);
	if (in != stdin) {
		fclose(in);
	}
	return ret;
}
