/*
 * Reading recordings: the two line shapes a recording has (record.h),
 * read with core/json_read.h (what it knows; every other member is
 * skipped, so later versions may add members), and the source that
 * replays one.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json_read.h"
#include "core/log.h"
#include "core/sample_json.h"
#include "core/xalloc.h"
#include "record.h"

struct line_state {
	struct sample *s;
	struct board_identity *id;
	bool *id_known;
	bool header, have_time;
};

static void
line_member(struct json_reader *c, const char *key, void *data)
{
	struct line_state *ls = data;
	if (strcmp(key, "tegrawatch_recording") == 0) {
		ls->header = true;
		json_skip_value(c);
	} else if (strcmp(key, "board") == 0 && json_peek(c) == '{') {
		board_identity_from_json(c, ls->id);
		*ls->id_known = ls->id->model[0] || ls->id->soc[0] || ls->id->l4t[0];
	} else if (!sample_member_from_json(c, key, ls->s, &ls->have_time)) {
		json_skip_value(c);
	}
}

int
record_parse_line(const char *line, struct sample *s, struct board_identity *id, bool *id_known, int *column)
{
	struct json_reader c;
	json_reader_init(&c, line);
	struct line_state ls = {.s = s, .id = id, .id_known = id_known};
	bool ok = json_each_member(&c, line_member, &ls) && !c.failed;
	if (ok) {
		json_skip_ws(&c);
		ok = *c.p == '\0';
	}
	if (ok && !ls.header && !ls.have_time) {
		ok = false; /* a sample without its time cannot be placed */
	}
	if (!ok) {
		*column = (int)(c.p - c.start) + 1;
		return -EINVAL;
	}
	return ls.header ? 0 : 1;
}

/* ---- the source ---- */

struct record_source {
	struct source base;
	FILE *file;
	char *path;
	char *line;
	size_t cap;
	unsigned long lineno;
	uint64_t parse_errors;
	struct board_identity id;
	bool id_known;
	/* a line is read into SCRATCH: a bad one leaves nothing half put in the sample */
	struct sample *scratch;
	int64_t stepped_ms; /* the wall clock steps the recording marked so far: durations leave them out */
};

static bool
data_line(char *line)
{
	size_t i = strspn(line, " \t\r\n");
	return line[i] != '\0' && line[i] != '#';
}

static int
record_read(struct source *src, struct sample *s)
{
	struct record_source *rs = (struct record_source *)src;
	ssize_t n;
	while ((n = getline(&rs->line, &rs->cap, rs->file)) >= 0) {
		rs->lineno++;
		if (!data_line(rs->line)) {
			continue;
		}
		struct board_identity id;
		bool known = false;
		int column = 0;
		struct sample *t = rs->scratch;
		metric_set_clear(&t->metrics);
		t->power_mode[0] = '\0';
		memset(&t->throttle, 0, sizeof(t->throttle));
		t->processes.cpu_count = t->processes.memory_count = 0;
		t->oom_killed.count = t->oom_killed.more = 0;
		t->clock_step_ms = 0;
		int r = record_parse_line(rs->line, t, &id, &known, &column);
		if (r == 1) {
			metric_set_merge(&s->metrics, &t->metrics);
			s->time_ms = t->time_ms;
			rs->stepped_ms += t->clock_step_ms;
			s->mono_ms = t->time_ms - rs->stepped_ms;
			memcpy(s->power_mode, t->power_mode, sizeof(s->power_mode));
			s->throttle = t->throttle;
			if (t->processes.cpu_count > 0 || t->processes.memory_count > 0) {
				s->processes =
					t->processes; /* what ran as an alert fired: its replay carries it again */
			}
			if (t->oom_killed.count > 0 || t->oom_killed.more > 0) {
				s->oom_killed =
					t->oom_killed; /* the OOM killer's victims: the oom-kill alert names them again */
			}
			metric_set_put(&s->metrics, "agent.parse_errors_total", (double)rs->parse_errors);
			return 0;
		}
		if (r < 0) {
			rs->parse_errors++;
			log_warn("%s:%lu:%d: not a recording line", rs->path, rs->lineno, column);
		}
	}
	return -ENODATA;
}

static void
record_source_destroy(struct source *src)
{
	struct record_source *rs = (struct record_source *)src;
	if (rs->file) {
		fclose(rs->file);
	}
	free(rs->line);
	free(rs->path);
	free(rs->scratch);
	free(rs);
}

static int64_t
record_next_tick_ms(struct source *src)
{
	(void)src;
	return 0; /* as fast as possible: a report has no clock to keep */
}

static const struct source_ops record_source_ops = {
	.name = "recording",
	.read = record_read,
	.next_tick_ms = record_next_tick_ms,
	.destroy = record_source_destroy,
};

/* The first data line, or false at the end. */
static bool
first_data_line(FILE *f, char **line, size_t *cap)
{
	while (getline(line, cap, f) >= 0) {
		if (data_line(*line)) {
			return true;
		}
	}
	return false;
}

int
record_file_detect(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		return -errno;
	}
	char *line = NULL;
	size_t cap = 0;
	int r = first_data_line(f, &line, &cap) && line[strspn(line, " \t")] == '{';
	free(line);
	fclose(f);
	return r;
}

int
record_source_create(const char *path, struct source **out)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		return -errno;
	}
	struct record_source *rs = xcalloc(1, sizeof(*rs));
	rs->base.ops = &record_source_ops;
	rs->file = f;
	rs->path = xstrdup(path);
	rs->scratch = xcalloc(1, sizeof(*rs->scratch)); /* zeroed, as a metric set's first use needs */
	/* the board from the header, then back to the start for the samples */
	struct sample *tmp = xcalloc(1, sizeof(*tmp));
	int column;
	if (first_data_line(f, &rs->line, &rs->cap) &&
	    record_parse_line(rs->line, tmp, &rs->id, &rs->id_known, &column) != 0) {
		rs->id_known = false;
	}
	free(tmp);
	rewind(f);
	*out = &rs->base;
	return 0;
}

bool
record_source_board(const struct source *src, struct board_identity *out)
{
	const struct record_source *rs = (const struct record_source *)src;
	if (rs->id_known) {
		*out = rs->id;
	}
	return rs->id_known;
}
