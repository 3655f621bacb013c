/*
 * The power-mode guard: the mode the board should run in
 * (agent.expected_power_mode) against the one it runs in. A board left in
 * a low mode, or one where nvpmodel.service failed at boot, runs the same
 * model several times slower without anything failing; this makes it an
 * alert from the first sample on.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "predict.h"
#include "predict_priv.h"

static bool
all_digits(const char *s, size_t n)
{
	if (n == 0 || n > 6) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9') {
			return false;
		}
	}
	return true;
}

static bool
is_sep(char c)
{
	return c == ',' || c == ' ' || c == '\t';
}

int
power_mode_expectation_parse(const char *text, struct power_mode_expectation *out, char *err, size_t err_size)
{
	struct power_mode_expectation e = {.id = -1, .jetson_clocks = -1};
	const char *p = text ? text : "";
	bool want_switch = false; /* the word after "jetson_clocks" */
	while (*p) {
		while (is_sep(*p)) {
			p++;
		}
		if (!*p) {
			break;
		}
		const char *w = p;
		while (*p && !is_sep(*p)) {
			p++;
		}
		size_t n = (size_t)(p - w);
		if (want_switch) {
			if (n == 2 && strncasecmp(w, "on", 2) == 0) {
				e.jetson_clocks = 1;
			} else if (n == 3 && strncasecmp(w, "off", 3) == 0) {
				e.jetson_clocks = 0;
			} else {
				snprintf(err, err_size, "expected 'on' or 'off' after jetson_clocks, got '%.*s'",
					 (int)n, w);
				return -EINVAL;
			}
			want_switch = false;
			continue;
		}
		if (n == 13 && strncasecmp(w, "jetson_clocks", 13) == 0) {
			if (e.jetson_clocks >= 0) {
				snprintf(err, err_size, "jetson_clocks is named twice");
				return -EINVAL;
			}
			want_switch = true;
			continue;
		}
		if (e.mode_set) {
			snprintf(err, err_size,
				 "expected one power mode (a name or an id) and optionally 'jetson_clocks on|off', got "
				 "'%.*s' after the mode",
				 (int)n, w);
			return -EINVAL;
		}
		if (n >= sizeof(e.name)) {
			snprintf(err, err_size, "power mode name longer than %zu characters", sizeof(e.name) - 1);
			return -EINVAL;
		}
		e.mode_set = true;
		if (all_digits(w, n)) {
			int id = 0;
			for (size_t i = 0; i < n; i++) {
				id = id * 10 + (w[i] - '0');
			}
			e.id = id;
		} else {
			memcpy(e.name, w, n);
			e.name[n] = '\0';
		}
	}
	if (want_switch) {
		snprintf(err, err_size, "expected 'on' or 'off' after jetson_clocks");
		return -EINVAL;
	}
	power_mode_expectation_resolve(&e, NULL);
	*out = e;
	return 0;
}

int
power_mode_expectation_resolve(struct power_mode_expectation *e, const struct nvpmodel_conf *modes)
{
	int r = 0;
	if (e->mode_set && modes) {
		const struct nvpmodel_mode *m = NULL;
		for (int i = 0; i < modes->mode_count && !m; i++) {
			const struct nvpmodel_mode *c = &modes->modes[i];
			if (e->name[0] ? strcasecmp(c->name, e->name) == 0 : c->id == e->id) {
				m = c;
			}
		}
		if (m) {
			e->id = m->id;
			snprintf(e->name, sizeof(e->name), "%s", m->name);
		} else {
			r = -ENOENT;
		}
	}
	char mode[96] = "";
	if (e->mode_set && e->name[0] && e->id >= 0) {
		snprintf(mode, sizeof(mode), "%s (id %d)", e->name, e->id);
	} else if (e->mode_set && e->name[0]) {
		snprintf(mode, sizeof(mode), "%s", e->name);
	} else if (e->mode_set) {
		snprintf(mode, sizeof(mode), "id %d", e->id);
	}
	const char *jc = e->jetson_clocks < 0 ? "" : e->jetson_clocks ? "jetson_clocks on" : "jetson_clocks off";
	snprintf(e->text, sizeof(e->text), "%s%s%s", mode, mode[0] && jc[0] ? ", " : "", jc);
	return r;
}

void
mode_guard_check(const struct power_mode_expectation *e, struct sample *s)
{
	if (e->mode_set) {
		double id;
		int mismatch = -1;
		if (e->id >= 0 && metric_set_get(&s->metrics, "nvpmodel.id", &id)) {
			mismatch = (int)id != e->id;
		} else if (e->id < 0 && s->power_mode[0]) {
			mismatch = strcasecmp(s->power_mode, e->name) != 0;
		}
		if (mismatch >= 0) {
			metric_set_put(&s->metrics, "nvpmodel.unexpected", mismatch);
		}
	}
	if (e->jetson_clocks >= 0) {
		int on = sample_jetson_clocks(&s->metrics, NULL, NULL);
		if (on >= 0) {
			metric_set_put(&s->metrics, "jetson_clocks.active", on);
			metric_set_put(&s->metrics, "jetson_clocks.unexpected", on != e->jetson_clocks);
		}
	}
}
