/* The report for a terminal: what happened, in a screenful. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/sample_json.h"
#include "criteria.h"
#include "report_out.h"

/* The metrics worth a line when present, in this order. */
static const char *const key_metrics[] = {
	"gpu.load_pct", "gpu.freq_mhz", "cpu.load_pct", "emc.load_pct", "ram.used_mb", "swap.used_mb", "fan.0.rpm",
};

static void
clock_text(int64_t ms, char *buf, size_t size)
{
	char iso[32];
	rfc3339_utc(ms, iso, sizeof(iso));
	snprintf(buf, size, "%s", strchr(iso, 'T') ? strchr(iso, 'T') + 1 : iso);
}

static void
print_temps(const struct report *r, FILE *out)
{
	const struct stats *st = &r->all.stats;
	bool header = false;
	for (size_t i = 0; i < st->count; i++) {
		const struct stat_metric *m = &st->items[i];
		size_t len = strlen(m->name);
		if (strncmp(m->name, "temp.", 5) != 0 || len < 8 || strcmp(m->name + len - 2, "_c") != 0) {
			continue;
		}
		if (!header) {
			fprintf(out, "\nTemperatures (C)       mean     p95     max   at        trip passive\n");
			header = true;
		}
		char sensor[METRIC_NAME_MAX], trip[METRIC_NAME_MAX + 24], at[32];
		snprintf(sensor, sizeof(sensor), "%.*s", (int)(len - 7), m->name + 5);
		snprintf(trip, sizeof(trip), "trip.%s.passive_c", sensor);
		const struct stat_metric *t = stats_find(st, trip);
		clock_text(m->max_at_ms, at, sizeof(at));
		fprintf(out, "  %-18s %7.1f %7.1f %7.1f   %s", sensor, m->mean, m->p95, m->max, at);
		if (t) {
			fprintf(out, "  %5.1f (%+.1f)", t->min, m->max - t->min);
		}
		fputc('\n', out);
	}
}

static void
print_throttle(const struct report *r, FILE *out)
{
	const struct report_span *a = &r->all;
	size_t episodes = r->episode_count + r->episodes_dropped;
	if (episodes == 0) {
		fprintf(out, "\nThrottling: none\n");
		return;
	}
	fprintf(out, "\nThrottling: %.0f s (%.1f %% of the run), %zu episode%s\n", a->throttle_seconds,
		a->seconds > 0 ? a->throttle_seconds / a->seconds * 100 : 0, episodes, episodes == 1 ? "" : "s");
	for (size_t i = 0; i < r->episode_count && i < 10; i++) {
		const struct report_episode *e = &r->episodes[i];
		char from[32], to[32];
		clock_text(e->start_ms, from, sizeof(from));
		clock_text(e->end_ms, to, sizeof(to));
		fprintf(out, "  %s - %s %6.0f s ", from, to, (double)(e->end_ms - e->start_ms) / 1000);
		if (e->predicted_s >= 0) {
			fprintf(out, " (predicted %.0f s ahead)", e->predicted_s);
		}
		for (int k = 0; k < THROTTLE_REASON_COUNT; k++) {
			if (e->reason[k]) {
				fprintf(out, " %s: %s", throttle_reason_name((enum throttle_reason)k), e->why[k]);
			}
		}
		fputc('\n', out);
	}
	if (r->episode_count > 10) {
		fprintf(out, "  ... %zu more (all in --json)\n", episodes - 10);
	}
}

void
report_print_text(const struct report *r, const char *source, FILE *out)
{
	const struct report_span *a = &r->all;
	char from[32], to[32];
	rfc3339_utc(a->first_ms, from, sizeof(from));
	rfc3339_utc(a->last_ms, to, sizeof(to));
	fprintf(out, "tegrawatch report: %s\n", source);
	fprintf(out, "  %llu samples, %s .. %s (%.0f s, every %.3g s)\n", (unsigned long long)a->samples, from, to,
		a->seconds, report_interval_s(r));
	if (r->board_known) {
		fprintf(out, "  board: %s (L4T %s, JetPack %s)\n", r->board.model[0] ? r->board.model : r->board.soc,
			r->board.l4t[0] ? r->board.l4t : "?", r->board.jetpack[0] ? r->board.jetpack : "?");
	}
	fprintf(out, "  power modes:");
	for (size_t i = 0; i < r->mode_count; i++) {
		fprintf(out, " %s %.0f s", r->modes[i].name, r->modes[i].seconds);
	}
	fputc('\n', out);
	print_throttle(r, out);
	print_temps(r, out);
	report_cooling_text(r, out);
	report_work_text(r, out);
	report_host_text(r, out);
	if (a->rails > 0) {
		fprintf(out, "\nEnergy\n");
		for (size_t i = 0; i < a->rails; i++) {
			fprintf(out, "  %-18s %10.1f J  (%.2f W on average)\n", a->energy[i].rail, a->energy[i].joules,
				a->seconds > 0 ? a->energy[i].joules / a->seconds : 0);
		}
	}
	fprintf(out, "\nMetric                    mean     p95     max\n");
	for (size_t i = 0; i < sizeof(key_metrics) / sizeof(key_metrics[0]); i++) {
		const struct stat_metric *m = stats_find(&a->stats, key_metrics[i]);
		if (m) {
			fprintf(out, "  %-20s %7.1f %7.1f %7.1f\n", m->name, m->mean, m->p95, m->max);
		}
	}
	/* NVML GPUs: load, temperature, power */
	for (size_t i = 0; i < a->stats.count; i++) {
		const struct stat_metric *m = &a->stats.items[i];
		unsigned n;
		int at = 0;
		char what[16];
		if (sscanf(m->name, "gpu.%u.%15[a-z_]%n", &n, what, &at) == 2 && m->name[at] == '\0' &&
		    (strcmp(what, "load_pct") == 0 || strcmp(what, "temp_c") == 0 || strcmp(what, "power_mw") == 0)) {
			fprintf(out, "  %-20s %7.1f %7.1f %7.1f\n", m->name, m->mean, m->p95, m->max);
		}
	}
	if (r->alert_count > 0) {
		fprintf(out, "\nAlerts: %zu events\n", r->alert_count);
		for (size_t i = 0; i < r->alert_count && i < 12; i++) {
			const struct report_alert *al = &r->alerts[i];
			char at[32];
			clock_text(al->at_ms, at, sizeof(at));
			fprintf(out, "  %s  %-22s %-9s %-10s %s\n", at, al->rule, severity_name(al->severity),
				alert_transition_name(al->transition), al->metric);
			char cpu[256], mem[256];
			top_processes_text(&al->processes, false, cpu, sizeof(cpu));
			top_processes_text(&al->processes, true, mem, sizeof(mem));
			if (cpu[0] || mem[0]) {
				fprintf(out, "            while: CPU %s; memory %s\n", cpu[0] ? cpu : "none",
					mem[0] ? mem : "none");
			}
		}
	}
	fprintf(out, "\nRecommendations%s\n", r->rec_count ? "" : ": none (nothing in the recording calls for one)");
	for (size_t i = 0; i < r->rec_count; i++) {
		fprintf(out, "  - [%s] %s\n", r->recs[i].id, r->recs[i].text);
	}
	if (r->criteria) {
		criteria_text(r->criteria, r->criteria_results, out);
	}
	fprintf(out, "\nEvery metric, with std, p50 and p99: --json FILE; a page with charts: --html FILE.\n");
}
