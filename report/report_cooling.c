/*
 * The report's cooling section: per power mode, the thermal resistance the
 * predict stage measured in thermal steady state over this run (the mean of
 * thermal.resistance_now_c_per_w), and, in a recording made by an agent
 * with a state file, the slow average, baseline and rise it had
 * (docs/prediction.md). Pure.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/xalloc.h"
#include "report.h"

static struct report_cooling *
cooling_of(struct report *r, const char *mode)
{
	for (size_t i = 0; i < r->cooling_count; i++) {
		if (strcmp(r->cooling[i].mode, mode) == 0) {
			return &r->cooling[i];
		}
	}
	r->cooling = xrealloc(r->cooling, r->cooling_count + 1, sizeof(*r->cooling));
	struct report_cooling *c = &r->cooling[r->cooling_count++];
	memset(c, 0, sizeof(*c));
	snprintf(c->mode, sizeof(c->mode), "%s", mode);
	return c;
}

void
report_cooling_add(struct report *r, const struct sample *s)
{
	double now, avg, base, rise;
	bool have_now = metric_set_get(&s->metrics, "thermal.resistance_now_c_per_w", &now);
	bool have_avg = metric_set_get(&s->metrics, "thermal.resistance_c_per_w", &avg);
	if (!have_now && !have_avg) {
		return;
	}
	struct report_cooling *c = cooling_of(r, s->power_mode[0] ? s->power_mode : "unknown");
	if (have_now && isfinite(now)) {
		c->sum += now;
		c->samples++;
	}
	if (have_avg) {
		c->have_avg = true;
		c->avg = avg;
	}
	if (metric_set_get(&s->metrics, "thermal.resistance_baseline_c_per_w", &base) &&
	    metric_set_get(&s->metrics, "thermal.resistance_rise_pct", &rise)) {
		c->have_baseline = true;
		c->baseline = base;
		c->rise_pct = rise;
	}
}

void
report_cooling_json(const struct report *r, struct json *j)
{
	json_object_begin(j);
	for (size_t i = 0; i < r->cooling_count; i++) {
		const struct report_cooling *c = &r->cooling[i];
		json_key(j, c->mode);
		json_object_begin(j);
		json_key(j, "resistance_c_per_w");
		if (c->samples) {
			json_number(j, round(c->sum / c->samples * 1000) / 1000);
		} else {
			json_null(j);
		}
		json_key(j, "steady_samples");
		json_uint(j, c->samples);
		if (c->have_avg) {
			json_key(j, "average_c_per_w");
			json_number(j, c->avg);
		}
		if (c->have_baseline) {
			json_key(j, "baseline_c_per_w");
			json_number(j, c->baseline);
			json_key(j, "rise_pct");
			json_number(j, c->rise_pct);
		}
		json_object_end(j);
	}
	json_object_end(j);
}

void
report_cooling_text(const struct report *r, FILE *out)
{
	if (r->cooling_count == 0) {
		return;
	}
	fprintf(out, "\nCooling (thermal resistance, junction above the reference per watt, in steady state)\n");
	for (size_t i = 0; i < r->cooling_count; i++) {
		const struct report_cooling *c = &r->cooling[i];
		fprintf(out, "  %-20s", c->mode);
		if (c->samples) {
			fprintf(out, " %.3f C/W this run (%llu steady samples)", c->sum / c->samples,
				(unsigned long long)c->samples);
		}
		if (c->have_baseline) {
			fprintf(out, "; baseline %.3f, now %.3f (%+.1f %%)", c->baseline, c->avg, c->rise_pct);
		}
		fputc('\n', out);
	}
}
