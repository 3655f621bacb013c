/*
 * The CSV of a report: rows go to an unnamed temporary file as they come;
 * the header (known only at the end, when every name has been seen) is
 * written first, the rows copied after it, and PATH replaced whole
 * (core/atomic_file.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/atomic_file.h"
#include "core/json.h"
#include "core/sample_json.h"
#include "core/xalloc.h"
#include "report_out.h"
#include "report_stats.h"

struct csv_writer {
	char *path;
	FILE *rows;
	struct stats columns; /* name -> column, by first appearance (only the index is used) */
	double *row;          /* this sample's value per column, NAN when absent */
	size_t row_cap;
	struct json num; /* formats numbers as the JSON has them */
};

int
csv_create(const char *path, struct csv_writer **out)
{
	FILE *rows = tmpfile();
	if (!rows) {
		return -errno;
	}
	struct csv_writer *w = xcalloc(1, sizeof(*w));
	w->path = xstrdup(path);
	w->rows = rows;
	stats_init(&w->columns);
	json_init(&w->num);
	*out = w;
	return 0;
}

void
csv_destroy(struct csv_writer *w)
{
	if (!w) {
		return;
	}
	if (w->rows) {
		fclose(w->rows);
	}
	stats_free(&w->columns);
	json_free(&w->num);
	free(w->row);
	free(w->path);
	free(w);
}

static size_t
column_of(struct csv_writer *w, const char *name)
{
	const struct stat_metric *m = stats_find(&w->columns, name);
	if (!m) {
		/* a stats entry per column: its index is the column (one value, so no storage) */
		stats_add(&w->columns, name, 0, 0);
		m = stats_find(&w->columns, name);
	}
	return (size_t)(m - w->columns.items);
}

static void
put_number(struct csv_writer *w, double v)
{
	/* most values are whole (MHz, mW, MB, %): digits by hand, as json_number() would print them */
	if (v == (double)(int64_t)v && fabs(v) < 1e15) {
		char tmp[24], *p = tmp + sizeof(tmp);
		int64_t n = (int64_t)v;
		uint64_t u = n < 0 ? (uint64_t)(-n) : (uint64_t)n;
		do {
			*--p = (char)('0' + u % 10);
			u /= 10;
		} while (u);
		if (n < 0) {
			*--p = '-';
		}
		fwrite(p, 1, (size_t)(tmp + sizeof(tmp) - p), w->rows);
		return;
	}
	json_reset(&w->num);
	json_number(&w->num, v);
	fwrite(w->num.out.buf, 1, w->num.out.len, w->rows);
}

int
csv_add(struct csv_writer *w, const struct sample *s)
{
	for (size_t i = 0; i < w->row_cap; i++) {
		w->row[i] = NAN;
	}
	for (size_t i = 0; i < s->metrics.count; i++) {
		const struct metric *m = &s->metrics.items[i];
		if (!report_metric_wanted(m->name)) {
			continue;
		}
		size_t c = column_of(w, m->name);
		if (c >= w->row_cap) {
			size_t cap = w->row_cap ? w->row_cap * 2 : 128;
			while (cap <= c) {
				cap *= 2;
			}
			w->row = xrealloc(w->row, cap, sizeof(*w->row));
			for (size_t k = w->row_cap; k < cap; k++) {
				w->row[k] = NAN;
			}
			w->row_cap = cap;
		}
		w->row[c] = m->value;
	}
	char ts[RFC3339_LEN + 8];
	rfc3339_utc(s->time_ms, ts, sizeof(ts));
	/* power mode names are nvpmodel names (no commas or quotes), written as they are */
	fprintf(w->rows, "%s,%lld,%s", ts, (long long)s->time_ms, s->power_mode);
	for (size_t c = 0; c < w->columns.count; c++) {
		fputc(',', w->rows);
		if (!isnan(w->row[c])) {
			put_number(w, w->row[c]);
		}
	}
	fputc('\n', w->rows);
	return ferror(w->rows) ? -EIO : 0;
}

static int
copy_rows(struct csv_writer *w, FILE *out)
{
	size_t columns = w->columns.count + 3;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	rewind(w->rows);
	while ((n = getline(&line, &cap, w->rows)) > 0) {
		size_t cells = 1;
		for (ssize_t i = 0; i < n; i++) {
			cells += line[i] == ',';
		}
		fwrite(line, 1, (size_t)n - 1, out);
		for (; cells < columns; cells++) {
			fputc(',', out); /* the columns that appeared after this row */
		}
		fputc('\n', out);
	}
	free(line);
	return ferror(w->rows) ? -EIO : 0;
}

int
csv_finish(struct csv_writer *w)
{
	struct atomic_file *af;
	int r = atomic_file_create(w->path, 0666, &af); /* the mode fopen() gave it */
	if (r < 0) {
		return r;
	}
	FILE *out = atomic_file_stream(af);
	fputs("time,time_ms,power_mode", out);
	for (size_t c = 0; c < w->columns.count; c++) {
		fprintf(out, ",%s", w->columns.items[c].name);
	}
	fputc('\n', out);
	r = copy_rows(w, out);
	if (r < 0) {
		atomic_file_abort(af);
		return r;
	}
	return atomic_file_commit(af);
}
