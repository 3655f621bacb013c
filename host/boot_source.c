/* The boot source (boot_source.h): the I/O around boot_state.c. */
#include "boot_source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "boot_state.h"
#include "core/atomic_file.h"
#include "core/cfg_decode.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/readfile.h"
#include "core/sample_json.h"
#include "core/xalloc.h"

#define SAVE_EVERY_MS (5 * 60 * 1000) /* how close "last seen" is to an end without warning; ~300 small writes a day */
#define PATH_MAX_BYTES 4096

struct boot_source {
	struct source base;
	char path[PATH_MAX_BYTES];
	struct boot_state now; /* this boot, as saved */
	enum boot_change change;
	struct boot_state prev; /* the boot before, when change is not BOOT_SAME */
	bool started;           /* the first sample is out: this boot is on file */
	bool save_failed_said;
	int64_t saved_mono_ms;
};

static void
save(struct boot_source *b, bool stopped)
{
	b->now.last_seen_ms = clock_wall_ms();
	b->now.uptime_ms = clock_boot_ms();
	b->now.stopped = stopped;
	char text[BOOT_STATE_MAX];
	int n = boot_state_format(&b->now, text, sizeof(text));
	int r = n < 0 ? n : atomic_write_file(b->path, text, (size_t)n, 0600);
	if (r < 0 && !b->save_failed_said) {
		log_warn("reboots: cannot save %s: %s (the next start cannot tell a reboot)", b->path, strerror(-r));
		b->save_failed_said = true;
	} else if (r == 0) {
		b->save_failed_said = false;
	}
}

static int
boot_read(struct source *src, struct sample *sample)
{
	struct boot_source *b = (struct boot_source *)src;
	if (!b->started) {
		b->started = true;
		b->saved_mono_ms = monotonic_ms();
		save(b, false);
		if (b->change != BOOT_SAME) {
			/* on this one sample only: the rule fires once, and resolves when it is gone */
			metric_set_putf(&sample->metrics, (double)b->prev.last_seen_ms / 1000.0,
					"reboot.%s.last_seen_timestamp_s",
					b->change == BOOT_UNEXPECTED ? "unexpected" : "orderly");
		}
	} else if (monotonic_ms() - b->saved_mono_ms >= SAVE_EVERY_MS) {
		b->saved_mono_ms = monotonic_ms();
		save(b, false);
	}
	return 0;
}

static void
boot_destroy(struct source *src)
{
	struct boot_source *b = (struct boot_source *)src;
	if (b->started) {
		save(b, true); /* a stop: a reboot after it is an orderly one */
	}
	free(b);
}

static const struct source_ops boot_ops = {
	.name = "boot",
	.read = boot_read,
	.destroy = boot_destroy,
};

/* The event, in the log, once: what the state file says of the boot before this one. */
static void
tell(const struct boot_source *b)
{
	char seen[40], up[40] = "an unknown time";
	rfc3339_utc(b->prev.last_seen_ms, seen, sizeof(seen));
	if (b->prev.uptime_ms >= 0) {
		cfg_format_duration(b->prev.uptime_ms / 1000 * 1000, up, sizeof(up));
	}
	if (b->change == BOOT_UNEXPECTED) {
		log_warn(
			"reboots: the board rebooted without the agent stopping first (power loss, brown-out, watchdog, "
			"kernel panic or reset): the previous boot %s was last seen at %s, up %s; this boot is %s",
			b->prev.boot_id, seen, up, b->now.boot_id);
	} else {
		log_info("reboots: the board rebooted after the agent stopped at %s (an orderly shutdown, or the "
			 "agent stopped before it), the previous boot %s up %s; this boot is %s",
			 seen, b->prev.boot_id, up, b->now.boot_id);
	}
}

/* What boot.state says: the boot before this one, or nothing (first start, a file that is not one). */
static void
load(struct boot_source *b)
{
	char *text = NULL;
	size_t len = 0;
	int r = readfile_all(b->path, BOOT_STATE_MAX, &text, &len, NULL);
	if (r == -ENOENT) {
		log_info("reboots: this boot (%s) is recorded in %s: a reboot is told at the next start",
			 b->now.boot_id, b->path);
		return;
	}
	int line = 1;
	char why[160] = "";
	if (r < 0) {
		snprintf(why, sizeof(why), "%s", strerror(-r));
	} else if (boot_state_parse(text, &b->prev, &line, why, sizeof(why)) == 0) {
		b->change = boot_state_judge(&b->prev, b->now.boot_id);
		if (b->change == BOOT_SAME) {
			log_debug("reboots: the agent restarted on the boot it saw (%s)", b->now.boot_id);
		} else {
			tell(b);
		}
		free(text);
		return;
	}
	free(text);
	log_warn("%s:%d: %s: the boot before this one is not known, so no reboot is told at this start; the file "
		 "is written again",
		 b->path, line, why);
}

int
boot_source_create(const struct boot_source_options *o, struct source **out)
{
	char path[PATH_MAX_BYTES], *text = NULL;
	size_t len = 0;
	char id[BOOT_ID_LEN + 1];
	snprintf(path, sizeof(path), "%s/sys/kernel/random/boot_id", o->proc ? o->proc : "/proc");
	int r = readfile_all(path, 64, &text, &len, NULL);
	if (r == 0 && boot_id_parse(text, id) < 0) {
		r = -EINVAL;
	}
	free(text);
	if (r < 0) {
		log_info("reboots: not watched: %s: %s", path, strerror(-r));
		return r;
	}
	struct boot_source *b = xcalloc(1, sizeof(*b));
	b->base.ops = &boot_ops;
	snprintf(b->path, sizeof(b->path), "%s", o->state_path);
	memcpy(b->now.boot_id, id, sizeof(id));
	b->change = BOOT_SAME;
	load(b);
	*out = &b->base;
	return 0;
}
