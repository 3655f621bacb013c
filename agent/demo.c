/* The demo's words on stdout: where to look, a short status now and then. See demo.h. */
#include "demo.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/metrics.h"
#include "core/sample_json.h"
#include "core/xalloc.h"

struct demo_status {
	struct sink base;
	FILE *out;
	bool status_lines;
	char dashboard[96]; /* "http://127.0.0.1:9474/", "" without a web server */
	char mqtt[200];     /* the subscriber's command, "" without MQTT */
	bool told;          /* where to look was said */
	int64_t next_ms;    /* mono_ms of the next status line */
};

static void
say_where(struct demo_status *d)
{
	if (d->dashboard[0]) {
		fprintf(d->out, "demo: dashboard  %s\n", d->dashboard);
	}
	if (d->mqtt[0]) {
		fprintf(d->out, "demo: MQTT       %s\n", d->mqtt);
	}
	if (d->status_lines) {
		fprintf(d->out, "demo: one line a minute of the recording here; every sample as JSON with "
				"`tegrawatch run --demo --json`, more log with -v. Ctrl-C stops.\n");
	}
	fflush(d->out);
}

/* " Tj 85.2 C" when the sample has NAME, with FMT for its value */
static void
part(char *buf, size_t size, const struct sample *s, const char *name, const char *fmt, double scale)
{
	double v;
	size_t len = strlen(buf);
	if (len + 1 < size && metric_set_get(&s->metrics, name, &v)) {
		snprintf(buf + len, size - len, fmt, v * scale);
	}
}

static int
demo_write(struct sink *sink, const struct sample *s)
{
	struct demo_status *d = (struct demo_status *)sink;
	if (!d->told) {
		say_where(d);
		d->told = true;
		d->next_ms = s->mono_ms;
	}
	if (!d->status_lines || s->mono_ms < d->next_ms) {
		return 0;
	}
	d->next_ms = s->mono_ms + DEMO_STATUS_EVERY_MS;
	char ts[RFC3339_LEN], line[256] = "";
	rfc3339_utc(s->time_ms, ts, sizeof(ts));
	part(line, sizeof(line), s, "temp.tj_c", "  Tj %.1f C", 1);
	part(line, sizeof(line), s, "gpu.load_pct", "  GPU %.0f %%", 1);
	part(line, sizeof(line), s, "gpu.freq_mhz", " at %.0f MHz", 1);
	part(line, sizeof(line), s, "power.vdd_in.mw", "  input %.1f W", 0.001);
	double firing = 0;
	metric_set_get(&s->metrics, "agent.alerts_firing", &firing);
	fprintf(d->out, "demo %s%s  %s  alerts firing: %.0f%s%s\n", ts, line,
		s->throttle.active ? "THROTTLING" : "not throttling", firing, d->dashboard[0] ? "  " : "",
		d->dashboard);
	fflush(d->out);
	return 0;
}

void
demo_status_wrapped(void *data, unsigned pass, uint64_t samples)
{
	struct demo_status *d = data;
	fprintf(d->out,
		"demo: the recording ended (%" PRIu64 " samples, pass %u); it plays again from the start, its times "
		"going on from where it ended. Ctrl-C stops.\n",
		samples, pass);
	fflush(d->out);
}

void
demo_status_set_dashboard(struct demo_status *d, const char *listen)
{
	snprintf(d->dashboard, sizeof(d->dashboard), "http://%s/", listen);
}

static void
demo_destroy(struct sink *sink)
{
	free(sink);
}

static const struct sink_ops demo_ops = {
	.name = "demo",
	.write = demo_write,
	.destroy = demo_destroy,
};

struct sink *
demo_status_create(FILE *out, bool status_lines, const char *mqtt_host, int mqtt_port, const char *mqtt_prefix,
		   struct demo_status **self)
{
	struct demo_status *d = xcalloc(1, sizeof(*d));
	d->base.ops = &demo_ops;
	d->out = out;
	d->status_lines = status_lines;
	if (mqtt_host && mqtt_host[0]) {
		snprintf(d->mqtt, sizeof(d->mqtt), "mosquitto_sub -h %.64s -p %d -t '%.64s/#' -v", mqtt_host, mqtt_port,
			 mqtt_prefix);
	}
	*self = d;
	return &d->base;
}
