/*
 * The thermal resistance per power mode across restarts: one text file
 * next to the alert state (agent.state_file's directory, thermal.state),
 * written whole (core/atomic_file.h). Parsing is pure;
 * a bad line is reported with its number and skipped.
 *
 *   tegrawatch-thermal 1
 *   MODE <TAB> average <TAB> steady ms <TAB> baseline sum <TAB> baseline ms <TAB> frozen 0/1 <TAB> baseline
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/atomic_file.h"
#include "core/log.h"
#include "core/readfile.h"
#include "predict_priv.h"

#define HEADER "tegrawatch-thermal 1"
#define STATE_MAX (64 * 1024)

static bool
number(const char *field, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(field, &end);
	if (errno || end == field || *end || !(v == v) || v < 0 || v > 1e15) {
		return false;
	}
	*out = v;
	return true;
}

/* One line into *M; false when it is not one. */
static bool
parse_line(char *line, struct mode_resistance *m)
{
	char *f[8];
	int n = 0;
	for (char *p = line; n < 8;) {
		f[n++] = p;
		char *tab = strchr(p, '\t');
		if (!tab) {
			break;
		}
		*tab = '\0';
		p = tab + 1;
	}
	double frozen;
	memset(m, 0, sizeof(*m));
	if (n != 7 || !f[0][0] || strlen(f[0]) >= sizeof(m->mode) || !number(f[1], &m->avg) ||
	    !number(f[2], &m->steady_ms) || !number(f[3], &m->baseline_sum) || !number(f[4], &m->baseline_ms) ||
	    !number(f[5], &frozen) || (frozen != 0 && frozen != 1) || !number(f[6], &m->baseline)) {
		return false;
	}
	snprintf(m->mode, sizeof(m->mode), "%s", f[0]);
	m->baseline_frozen = frozen == 1;
	return !m->baseline_frozen || m->baseline > 0;
}

int
cooling_state_parse(char *text, struct cooling *c, const char *path)
{
	int bad = 0, line_no = 0;
	bool header = false;
	for (char *line = text; line && *line;) {
		char *next = strchr(line, '\n');
		if (next) {
			*next++ = '\0';
		}
		line_no++;
		if (line[0] == '#' || line[0] == '\0') {
			line = next;
			continue;
		}
		if (!header) {
			if (strcmp(line, HEADER) != 0) {
				log_warn("%s:%d: not a thermal state file (expected '%s'): its baselines start again",
					 path, line_no, HEADER);
				return -EINVAL;
			}
			header = true;
			line = next;
			continue;
		}
		struct mode_resistance m;
		if (c->mode_count < COOLING_MODES_MAX && parse_line(line, &m)) {
			c->modes[c->mode_count++] = m;
		} else {
			log_warn("%s:%d: bad line skipped", path, line_no);
			bad++;
		}
		line = next;
	}
	return bad;
}

int
cooling_state_load(struct cooling *c, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	int r = readfile_all(path, STATE_MAX, &text, &len, NULL);
	if (r == -ENOENT) {
		return 0;
	}
	if (r < 0) {
		log_warn("cannot read %s: %s (the thermal baselines start again)", path, strerror(-r));
		return r;
	}
	r = cooling_state_parse(text, c, path);
	free(text);
	return r < 0 ? r : 0;
}

int
cooling_state_save(const struct cooling *c, const char *path)
{
	struct atomic_file *af;
	int r = atomic_file_create(path, 0666, &af); /* the mode fopen() gave it */
	if (r < 0) {
		return r;
	}
	FILE *f = atomic_file_stream(af);
	fprintf(f, "# thermal resistance per power mode (docs/prediction.md); delete it to measure new baselines\n%s\n",
		HEADER);
	for (int i = 0; i < c->mode_count; i++) {
		const struct mode_resistance *m = &c->modes[i];
		fprintf(f, "%s\t%.17g\t%.17g\t%.17g\t%.17g\t%d\t%.17g\n", m->mode, m->avg, m->steady_ms,
			m->baseline_sum, m->baseline_ms, m->baseline_frozen ? 1 : 0, m->baseline);
	}
	return atomic_file_commit(af);
}
