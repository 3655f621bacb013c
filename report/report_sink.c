/* The report as a pipeline sink: every finished sample and alert event goes into the report (and the CSV). */
#include <stdlib.h>

#include "core/xalloc.h"
#include "report_out.h"

struct report_sink {
	struct sink base;
	struct report *report;
	struct csv_writer *csv;
	int *csv_err;
};

static int
report_sink_write(struct sink *sink, const struct sample *s)
{
	struct report_sink *rs = (struct report_sink *)sink;
	report_add_sample(rs->report, s);
	if (rs->csv && *rs->csv_err == 0) {
		*rs->csv_err = csv_add(rs->csv, s);
	}
	return 0;
}

static void
report_sink_notify(struct sink *sink, const struct alert_event *ev)
{
	report_add_alert(((struct report_sink *)sink)->report, ev);
}

static void
report_sink_destroy(struct sink *sink)
{
	free(sink); /* the report and the CSV belong to the command */
}

static const struct sink_ops report_sink_ops = {
	.name = "report",
	.write = report_sink_write,
	.notify = report_sink_notify,
	.destroy = report_sink_destroy,
};

struct sink *
report_sink_create(struct report *r, struct csv_writer *w, int *csv_err)
{
	struct report_sink *rs = xcalloc(1, sizeof(*rs));
	rs->base.ops = &report_sink_ops;
	rs->report = r;
	rs->csv = w;
	rs->csv_err = csv_err;
	return &rs->base;
}
