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

#include "core/buf.h"
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

/*
 * The JetPack 7.2 installer flashed Orin Nano Super developer kits without
 * their Super configuration: only 15W and 7W, the GPU at 624.75 MHz (a
 * Jetson environment report, 2026-09-04; NVIDIA known issue 6279443, fixed
 * in 7.2.1's ISO per the Juxi tutorial: issue 30). A JetPack 6 board flashed
 * with the plain configuration lacks the same modes.
 */
static void
add_super_hint(struct buf *b, const struct power_mode_expectation *e, const struct board_identity *id)
{
	if (!id || !strstr(id->model, "Orin Nano") || !strcasestr(e->name, "SUPER")) {
		return;
	}
	buf_adds(b, ": this Orin Nano may have been flashed without its Super configuration");
	if (strncmp(id->l4t, "39.", 3) == 0) {
		buf_adds(b, " (the JetPack 7.2 installer does that, NVIDIA known issue 6279443: a firmware and "
			    "bootloader update, or JetPack 7.2.1's ISO, fixes it)");
	} else {
		buf_adds(b, " (flash it with a -super board configuration: jetson-orin-nano-devkit-super on the "
			    "developer kit)");
	}
}

void
power_mode_expectation_missing(const struct power_mode_expectation *e, const struct nvpmodel_conf *modes,
			       const struct board_identity *id, char *buf, size_t size)
{
	struct buf b;
	buf_init(&b);
	buf_addf(&b, "the board's nvpmodel.conf has no power mode %s", e->text);
	for (int i = 0; modes && i < modes->mode_count; i++) {
		const struct nvpmodel_mode *m = &modes->modes[i];
		buf_adds(&b, i == 0 ? " (only " : ", ");
		if (m->name[0]) {
			buf_adds(&b, m->name);
		} else {
			buf_addf(&b, "id %d", m->id);
		}
		buf_adds(&b, i + 1 == modes->mode_count ? ")" : "");
	}
	add_super_hint(&b, e, id);
	snprintf(buf, size, "%s", b.buf);
	buf_free(&b);
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
