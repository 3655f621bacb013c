/*
 * The report's host section: what the host source recorded (docs/metrics.md,
 * "The host") over the run. Memory available (least, most, at the end), the
 * OOM kills during the run, each watched file system's use and free space
 * and the soonest time to full it showed, each interface's link downs and
 * time down. A recording without host metrics (a replay, a fixture board)
 * has no such section: its report is as before. Pure.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "report.h"

enum {
	D_USED_PCT,
	D_AVAIL_MB,
	D_FULL_ETA,
	D_READONLY,
	D_LINK_UP
};

static const char *const patterns[] = {
	[D_USED_PCT] = "filesystem.MOUNT.used_pct",
	[D_AVAIL_MB] = "filesystem.MOUNT.avail_mb",
	[D_FULL_ETA] = "filesystem.MOUNT.full_eta_s",
	[D_READONLY] = "filesystem.MOUNT.readonly",
	[D_LINK_UP] = "network.IF.up",
};

static void
range_add(struct report_range *g, double v)
{
	if (!g->seen || v < g->min) {
		g->min = v;
	}
	if (!g->seen || v > g->max) {
		g->max = v;
	}
	g->last = v;
	g->seen = true;
}

/*
 * The entry named NAME of the *COUNT entries of SIZE bytes at *ITEMS, each
 * starting with its name (char[METRIC_NAME_MAX]); a new one is appended,
 * zeroed, and *ADDED set. NULL past REPORT_HOST_MAX.
 */
static void *
entry_of(void **items, size_t *count, size_t size, const char *name, bool *added)
{
	*added = false;
	for (size_t i = 0; i < *count; i++) {
		char *e = (char *)*items + i * size;
		if (strcmp(e, name) == 0) {
			return e;
		}
	}
	if (*count == REPORT_HOST_MAX) {
		return NULL;
	}
	*items = xrealloc(*items, *count + 1, size);
	char *e = (char *)*items + (*count)++ * size;
	memset(e, 0, size);
	snprintf(e, METRIC_NAME_MAX, "%s", name);
	*added = true;
	return e;
}

static void
link_add(struct report_host_link *l, bool added, double up, int64_t mono_ms)
{
	if (!added) {
		int64_t dt = mono_ms - l->last_mono_ms;
		if (l->last < 1 && dt > 0 && dt <= REPORT_GAP_MS) {
			l->down_s += (double)dt / 1000.0; /* a pause in the recording is no time seen down */
		}
		l->downs += l->last >= 1 && up < 1;
	}
	l->last = up;
	l->last_mono_ms = mono_ms;
}

static void
oom_add(struct report_host *h, double kills)
{
	if (h->oom_seen) {
		/* a counter since boot: a lower value is a new boot, its kills all new */
		h->oom_kills += kills >= h->oom_last ? kills - h->oom_last : kills;
	}
	h->oom_seen = true;
	h->oom_last = kills;
}

void
report_host_add(struct report *r, const struct sample *s)
{
	struct report_host *h = &r->host;
	if (!h->def[0]) {
		for (size_t k = 0; k < sizeof(patterns) / sizeof(patterns[0]); k++) {
			h->def[k] = metric_dict_by_pattern(patterns[k]);
		}
	}
	const struct metric_def *const *defs = metric_dict_classify(r->dict, &s->metrics);
	for (size_t i = 0; i < s->metrics.count; i++) {
		const struct metric *m = &s->metrics.items[i];
		if (!isfinite(m->value) || !defs[i]) {
			continue;
		}
		if (strcmp(m->name, "ram.available_mb") == 0) {
			range_add(&h->available_mb, m->value);
			continue;
		}
		if (strcmp(m->name, "oom.kills_total") == 0) {
			oom_add(h, m->value);
			continue;
		}
		size_t k = 0;
		while (k < sizeof(patterns) / sizeof(patterns[0]) && defs[i] != h->def[k]) {
			k++;
		}
		char seg[METRIC_NAME_MAX];
		if (k == sizeof(patterns) / sizeof(patterns[0]) ||
		    !metric_dict_capture(defs[i], m->name, 0, seg, sizeof(seg))) {
			continue;
		}
		bool added;
		if (k == D_LINK_UP) {
			struct report_host_link *l =
				entry_of((void **)&h->links, &h->link_count, sizeof(*h->links), seg, &added);
			if (l) {
				link_add(l, added, m->value, s->mono_ms);
			}
			continue;
		}
		struct report_host_fs *f = entry_of((void **)&h->fs, &h->fs_count, sizeof(*h->fs), seg, &added);
		if (!f) {
			continue;
		}
		if (added) {
			f->soonest_full_s = NAN;
		}
		if (k == D_USED_PCT) {
			range_add(&f->used_pct, m->value);
		} else if (k == D_AVAIL_MB) {
			range_add(&f->avail_mb, m->value);
		} else if (k == D_FULL_ETA) {
			f->soonest_full_s =
				isnan(f->soonest_full_s) || m->value < f->soonest_full_s ? m->value : f->soonest_full_s;
		} else {
			f->readonly = f->readonly || m->value >= 1;
		}
	}
}

bool
report_host_seen(const struct report *r)
{
	const struct report_host *h = &r->host;
	return h->available_mb.seen || h->oom_seen || h->fs_count || h->link_count;
}

static void
range_json(struct json *j, const char *key, const struct report_range *g)
{
	json_key(j, key);
	if (!g->seen) {
		json_null(j);
		return;
	}
	json_object_begin(j);
	json_key(j, "min");
	json_number(j, g->min);
	json_key(j, "max");
	json_number(j, g->max);
	json_key(j, "last");
	json_number(j, g->last);
	json_object_end(j);
}

void
report_host_json(const struct report *r, struct json *j)
{
	const struct report_host *h = &r->host;
	json_object_begin(j);
	range_json(j, "memory_available_mb", &h->available_mb);
	json_key(j, "oom_kills");
	if (h->oom_seen) {
		json_number(j, h->oom_kills);
	} else {
		json_null(j);
	}
	json_key(j, "filesystems");
	json_object_begin(j);
	for (size_t i = 0; i < h->fs_count; i++) {
		const struct report_host_fs *f = &h->fs[i];
		json_key(j, f->mount);
		json_object_begin(j);
		range_json(j, "used_pct", &f->used_pct);
		range_json(j, "avail_mb", &f->avail_mb);
		json_key(j, "soonest_full_s");
		json_number(j, f->soonest_full_s); /* null: never filling */
		json_key(j, "readonly");
		json_bool(j, f->readonly);
		json_object_end(j);
	}
	json_object_end(j);
	json_key(j, "links");
	json_object_begin(j);
	for (size_t i = 0; i < h->link_count; i++) {
		const struct report_host_link *l = &h->links[i];
		json_key(j, l->name);
		json_object_begin(j);
		json_key(j, "downs");
		json_uint(j, l->downs);
		json_key(j, "down_s");
		json_number(j, round(l->down_s * 1000) / 1000);
		json_key(j, "up_at_end");
		json_bool(j, l->last >= 1);
		json_object_end(j);
	}
	json_object_end(j);
	json_object_end(j);
}

/* S seconds as "3 h 20 min", "12 min", "45 s" */
static void
duration_text(double s, char *buf, size_t size)
{
	if (s >= 3600) {
		snprintf(buf, size, "%.0f h %.0f min", floor(s / 3600), floor(fmod(s, 3600) / 60));
	} else if (s >= 60) {
		snprintf(buf, size, "%.0f min", floor(s / 60));
	} else {
		snprintf(buf, size, "%.0f s", s);
	}
}

void
report_host_text(const struct report *r, FILE *out)
{
	const struct report_host *h = &r->host;
	if (!report_host_seen(r)) {
		return;
	}
	fprintf(out, "\nHost\n");
	if (h->available_mb.seen) {
		fprintf(out, "  memory available     least %.0f MiB, most %.0f MiB, at the end %.0f MiB\n",
			h->available_mb.min, h->available_mb.max, h->available_mb.last);
	}
	if (h->oom_seen) {
		fprintf(out, "  OOM kills            %.0f during the run\n", h->oom_kills);
	}
	if (h->fs_count) {
		fprintf(out, "  file system            used %%: least   most    end   free at end  soonest full\n");
	}
	for (size_t i = 0; i < h->fs_count; i++) {
		const struct report_host_fs *f = &h->fs[i];
		char soonest[32] = "-";
		if (!isnan(f->soonest_full_s)) {
			duration_text(f->soonest_full_s, soonest, sizeof(soonest));
		}
		if (!f->used_pct.seen || !f->avail_mb.seen) {
			continue; /* a recording cut to some of its metrics */
		}
		fprintf(out, "    %-26s %6.1f %6.1f %6.1f %9.0f MiB  %s%s\n", f->mount, f->used_pct.min,
			f->used_pct.max, f->used_pct.last, f->avail_mb.last, soonest,
			f->readonly ? "  (read-only)" : "");
	}
	if (h->link_count) {
		fprintf(out, "  network link          downs  time down  at the end\n");
	}
	for (size_t i = 0; i < h->link_count; i++) {
		const struct report_host_link *l = &h->links[i];
		char down[32];
		duration_text(l->down_s, down, sizeof(down));
		fprintf(out, "    %-18s %6llu  %9s  %s\n", l->name, (unsigned long long)l->downs, down,
			l->last >= 1 ? "up" : "down");
	}
}

void
report_host_free(struct report *r)
{
	free(r->host.fs);
	free(r->host.links);
}
