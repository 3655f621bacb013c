/*
 * Board sources as vtables: sysfs, tegrastats replay, live tegrastats.
 */
#include "sources.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/child.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/xalloc.h"
#include "hwmon_sensors.h"
#include "tegrastats.h"

/* A tegrastats stamp (local time) as ms since the epoch. */
static int64_t
tegrastats_stamp_to_ms(const struct tegrastats_stamp *stamp)
{
	struct tm tm = {
		.tm_year = stamp->year - 1900,
		.tm_mon = stamp->month - 1,
		.tm_mday = stamp->day,
		.tm_hour = stamp->hour,
		.tm_min = stamp->minute,
		.tm_sec = stamp->second,
		.tm_isdst = -1,
	};
	time_t t = mktime(&tm);
	return (int64_t)t * 1000;
}

/* ---- sysfs ---- */

struct sysfs_source {
	struct source base;
	struct board *board;
};

static int
sysfs_source_read(struct source *src, struct sample *s)
{
	struct sysfs_source *ss = (struct sysfs_source *)src;
	int ret = board_sample(ss->board, s);
	metric_set_put(&s->metrics, "agent.read_errors_total", (double)board_read_errors(ss->board));
	return ret;
}

static void
sysfs_source_destroy(struct source *src)
{
	board_destroy(((struct sysfs_source *)src)->board);
	free(src);
}

static const struct source_ops sysfs_source_ops = {
	.name = "sysfs",
	.read = sysfs_source_read,
	.destroy = sysfs_source_destroy,
};

int
sysfs_source_create(struct board *board, struct source **out)
{
	struct sysfs_source *ss = xcalloc(1, sizeof(*ss));
	ss->base.ops = &sysfs_source_ops;
	ss->board = board;
	*out = &ss->base;
	return 0;
}

/* ---- generic hwmon (libsensors) ---- */

struct hwmon_source {
	struct source base;
	struct hwmon_sensors *hs;
};

static int
hwmon_source_read(struct source *src, struct sample *s)
{
	struct hwmon_source *hs = (struct hwmon_source *)src;
	return hwmon_sensors_sample(hs->hs, &s->metrics);
}

static void
hwmon_source_destroy(struct source *src)
{
	struct hwmon_source *hs = (struct hwmon_source *)src;
	hwmon_sensors_destroy(hs->hs);
	free(hs);
}

static const struct source_ops hwmon_source_ops = {
	.name = "hwmon",
	.read = hwmon_source_read,
	.destroy = hwmon_source_destroy,
};

int
hwmon_source_create(struct source **out)
{
	struct hwmon_sensors *sensors;
	int r = hwmon_sensors_open(&sensors);
	if (r < 0) {
		return r;
	}
	struct hwmon_source *hs = xcalloc(1, sizeof(*hs));
	hs->base.ops = &hwmon_source_ops;
	hs->hs = sensors;
	*out = &hs->base;
	return 0;
}

/* ---- replay ---- */

struct replay_source {
	struct source base;
	FILE *file;
	char *path;
	double speed;
	char *line;
	size_t line_cap;
	unsigned long lineno;
	/* the next sample, read ahead so its stamp sets the pace */
	bool have_next;
	struct metric_set next;
	struct tegrastats_info next_info;
	int64_t delay_ms;
	int64_t due_ms;      /* monotonic time the pending sample is due */
	int64_t no_stamp_ms; /* synthetic clock for logs without stamps */
	uint64_t parse_errors;
	uint64_t unknown_tokens;
	/* looping: what is added to the log's times, and how far this pass got */
	bool loop;
	struct replay_loop on_loop;
	unsigned pass;
	uint64_t pass_samples;
	int64_t offset_ms;
	int64_t last_ms; /* the time of the last sample read, offset included */
};

/* Reads ahead to the next good data line. Returns true when one was found. */
static bool
replay_advance(struct replay_source *rs)
{
	ssize_t n;
	while ((n = getline(&rs->line, &rs->line_cap, rs->file)) >= 0) {
		rs->lineno++;
		size_t len = (size_t)n;
		while (len > 0 && (rs->line[len - 1] == '\n' || rs->line[len - 1] == '\r')) {
			len--;
		}
		size_t i = 0;
		while (i < len && (rs->line[i] == ' ' || rs->line[i] == '\t')) {
			i++;
		}
		if (i == len || rs->line[i] == '#') {
			continue;
		}
		struct parse_error err = {0};
		metric_set_clear(&rs->next);
		if (tegrastats_parse_record(rs->line, (size_t)n, &rs->next, &rs->next_info, &err) < 0) {
			rs->parse_errors++;
			log_warn("%s:%lu:%d: %s", rs->path, rs->lineno, err.column, err.msg);
			continue;
		}
		rs->unknown_tokens += rs->next_info.unknown_tokens;
		return true;
	}
	return false;
}

/* The end of a looping replay: the log again from its start, a second after the last sample. */
static void
replay_rewind(struct replay_source *rs)
{
	if (rs->pass_samples == 0 || fseek(rs->file, 0, SEEK_SET) != 0) {
		return; /* an empty log, or one that cannot go back (a pipe): it ends */
	}
	rs->lineno = 0;
	rs->have_next = replay_advance(rs);
	if (!rs->have_next) {
		return;
	}
	if (rs->on_loop.wrapped) {
		rs->on_loop.wrapped(rs->on_loop.data, rs->pass + 1, rs->pass_samples);
	}
	rs->pass++;
	rs->pass_samples = 0;
	int64_t first = rs->next_info.stamp.present ? tegrastats_stamp_to_ms(&rs->next_info.stamp) : rs->no_stamp_ms;
	rs->offset_ms = rs->last_ms + 1000 - first;
}

static int
replay_read(struct source *src, struct sample *s)
{
	struct replay_source *rs = (struct replay_source *)src;
	if (!rs->have_next) {
		return -ENODATA;
	}
	metric_set_merge(&s->metrics, &rs->next);
	int64_t log_ms;
	if (rs->next_info.stamp.present) {
		log_ms = tegrastats_stamp_to_ms(&rs->next_info.stamp);
	} else {
		log_ms = rs->no_stamp_ms;
		rs->no_stamp_ms += 1000;
	}
	s->time_ms = log_ms + rs->offset_ms;
	s->mono_ms = s->time_ms; /* durations follow the log's stamps */
	rs->last_ms = s->time_ms;
	rs->pass_samples++;
	struct tegrastats_stamp prev = rs->next_info.stamp;
	rs->have_next = replay_advance(rs);
	if (!rs->have_next && rs->loop) {
		replay_rewind(rs);
	}
	metric_set_put(&s->metrics, "agent.parse_errors_total", (double)rs->parse_errors);
	metric_set_put(&s->metrics, "agent.unknown_tokens_total", (double)rs->unknown_tokens);

	int64_t gap_ms = 1000;
	if (rs->have_next && prev.present && rs->next_info.stamp.present) {
		gap_ms = tegrastats_stamp_to_ms(&rs->next_info.stamp) - tegrastats_stamp_to_ms(&prev);
		if (gap_ms < 0 || gap_ms > 60000) {
			gap_ms = 1000; /* a jump in the recording: keep a steady pace */
		}
	}
	rs->delay_ms = rs->speed > 0 ? (int64_t)((double)gap_ms / rs->speed) : 0;
	rs->due_ms = monotonic_ms() + rs->delay_ms;
	return 0;
}

static int64_t
replay_next_tick_ms(struct source *src)
{
	struct replay_source *rs = (struct replay_source *)src;
	if (!rs->have_next) {
		return 0; /* let the loop see the end at once */
	}
	int64_t left = rs->due_ms - monotonic_ms();
	return left > 0 ? left : 0;
}

static void
replay_destroy(struct source *src)
{
	struct replay_source *rs = (struct replay_source *)src;
	if (rs->file) {
		fclose(rs->file);
	}
	free(rs->line);
	free(rs->path);
	free(rs);
}

static const struct source_ops replay_source_ops = {
	.name = "replay",
	.read = replay_read,
	.next_tick_ms = replay_next_tick_ms,
	.destroy = replay_destroy,
};

int
replay_source_create(const char *path, double speed, const struct replay_loop *loop, struct source **out)
{
	if (speed < 0) {
		return -EINVAL;
	}
	FILE *f = fopen(path, "re");
	if (!f) {
		return -errno;
	}
	struct replay_source *rs = xcalloc(1, sizeof(*rs));
	rs->base.ops = &replay_source_ops;
	rs->file = f;
	rs->path = xstrdup(path);
	rs->speed = speed;
	rs->no_stamp_ms = clock_wall_ms() / 1000 * 1000;
	if (loop) {
		rs->loop = true;
		rs->on_loop = *loop;
	}
	rs->have_next = replay_advance(rs);
	rs->due_ms = monotonic_ms();
	*out = &rs->base;
	return 0;
}

/* ---- live tegrastats ---- */

#define LIVE_BUF 8192
#define LIVE_BACKOFF_MAX_MS 60000
#define LIVE_STOP_GRACE_MS 500 /* then SIGKILL: a stop or a restart waits no longer */

struct live_source {
	struct source base;
	char *program;
	int interval_ms;
	pid_t pid;
	int fd;
	char buf[LIVE_BUF];
	size_t len;
	bool discarding; /* inside an over-long line */
	bool fresh;
	/*
	 * Two sets of ~44 KiB, allocated once: a line is parsed into SCRATCH
	 * and, when it parses, the two are swapped, so LATEST is always a
	 * whole line and nothing is allocated or copied per line.
	 */
	struct metric_set *latest;
	struct metric_set *scratch;
	int64_t respawn_at_ms;
	int64_t backoff_ms;
	uint64_t parse_errors;
	uint64_t unknown_tokens;
	uint64_t restarts;
};

static int
live_spawn(struct live_source *ls)
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		return -errno;
	}
	char interval[16];
	snprintf(interval, sizeof(interval), "%d", ls->interval_ms);
	char *argv[] = {ls->program, "--interval", interval, NULL};
	/* a restart happens inside the loop, where SIGTERM is blocked: child_spawn() unblocks it */
	/* without TEGRAWATCH_*: TEGRAWATCH_MQTT_PASSWORD is a secret */
	char **env = child_environ();
	struct child_spec spec = {.argv = argv, .envp = env, .stdout_fd = pipefd[1], .search_path = true};
	pid_t pid;
	int r = child_spawn(&spec, &pid);
	free(env);
	close(pipefd[1]);
	if (r < 0) {
		close(pipefd[0]);
		return r;
	}
	fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
	ls->pid = pid;
	ls->fd = pipefd[0];
	ls->len = 0;
	ls->discarding = false;
	return 0;
}

static void
live_reap(struct live_source *ls)
{
	if (ls->fd >= 0) {
		close(ls->fd);
		ls->fd = -1;
	}
	if (ls->pid > 0) {
		child_stop(ls->pid, LIVE_STOP_GRACE_MS);
		ls->pid = -1;
	}
}

static void
live_schedule_respawn(struct live_source *ls)
{
	live_reap(ls);
	ls->restarts++;
	ls->backoff_ms = ls->backoff_ms ? ls->backoff_ms * 2 : 1000;
	if (ls->backoff_ms > LIVE_BACKOFF_MAX_MS) {
		ls->backoff_ms = LIVE_BACKOFF_MAX_MS;
	}
	ls->respawn_at_ms = monotonic_ms() + ls->backoff_ms;
	log_warn("tegrastats ended; restarting it in %lld ms", (long long)ls->backoff_ms);
}

/* One line as read, with its newline; without one, it was cut off (tegrastats ended mid-line). */
static void
live_line(struct live_source *ls, const char *line, size_t len)
{
	struct tegrastats_info info;
	struct parse_error err = {0};
	metric_set_clear(ls->scratch);
	if (tegrastats_parse_record(line, len, ls->scratch, &info, &err) < 0) {
		ls->parse_errors++;
		log_warn("tegrastats:%d: %s", err.column, err.msg);
		return;
	}
	struct metric_set *parsed = ls->scratch;
	ls->scratch = ls->latest;
	ls->latest = parsed;
	ls->unknown_tokens += info.unknown_tokens;
	ls->fresh = true;
	ls->backoff_ms = 0;
}

static int
live_dispatch(struct source *src)
{
	struct live_source *ls = (struct live_source *)src;
	for (;;) {
		ssize_t n = read(ls->fd, ls->buf + ls->len, sizeof(ls->buf) - ls->len);
		if (n < 0) {
			if (errno == EINTR) {
				continue;
			}
			if (errno == EAGAIN) {
				return 0;
			}
			live_schedule_respawn(ls);
			return -errno;
		}
		if (n == 0) {
			if (ls->len > 0 && !ls->discarding) {
				live_line(ls, ls->buf, ls->len); /* the last line, cut off: one error */
			}
			live_schedule_respawn(ls);
			return 0;
		}
		ls->len += (size_t)n;
		size_t start = 0;
		for (size_t i = 0; i < ls->len; i++) {
			if (ls->buf[i] != '\n') {
				continue;
			}
			if (!ls->discarding) {
				live_line(ls, ls->buf + start, i - start + 1);
			}
			ls->discarding = false;
			start = i + 1;
		}
		memmove(ls->buf, ls->buf + start, ls->len - start);
		ls->len -= start;
		if (ls->len == sizeof(ls->buf)) {
			/* a line longer than any real one: drop it, count it once (not once per buffer of it) */
			if (!ls->discarding) {
				ls->parse_errors++;
				log_warn("tegrastats: a line longer than %d bytes: dropped", LIVE_BUF);
			}
			ls->discarding = true;
			ls->len = 0;
		}
	}
}

static int
live_get_fd(struct source *src)
{
	return ((struct live_source *)src)->fd;
}

static int
live_read(struct source *src, struct sample *s)
{
	struct live_source *ls = (struct live_source *)src;
	if (ls->fd < 0 && monotonic_ms() >= ls->respawn_at_ms) {
		int r = live_spawn(ls);
		if (r < 0) {
			log_warn("cannot start %s: %s", ls->program, strerror(-r));
			live_schedule_respawn(ls);
		}
	}
	metric_set_put(&s->metrics, "agent.parse_errors_total", (double)ls->parse_errors);
	metric_set_put(&s->metrics, "agent.unknown_tokens_total", (double)ls->unknown_tokens);
	if (!ls->fresh) {
		return -EAGAIN;
	}
	metric_set_merge(&s->metrics, ls->latest);
	ls->fresh = false;
	return 0;
}

static void
live_destroy(struct source *src)
{
	struct live_source *ls = (struct live_source *)src;
	live_reap(ls);
	free(ls->program);
	free(ls->latest);
	free(ls->scratch);
	free(ls);
}

static const struct source_ops live_source_ops = {
	.name = "tegrastats",
	.read = live_read,
	.get_fd = live_get_fd,
	.dispatch = live_dispatch,
	.destroy = live_destroy,
};

int
tegrastats_source_create(const char *program, int interval_ms, struct source **out)
{
	if (interval_ms <= 0) {
		return -EINVAL;
	}
	struct live_source *ls = xcalloc(1, sizeof(*ls));
	ls->base.ops = &live_source_ops;
	ls->program = xstrdup(program);
	ls->interval_ms = interval_ms;
	ls->pid = -1;
	ls->fd = -1;
	/* zeroed, as metric_set_clear() needs before a set's first use */
	ls->latest = xcalloc(1, sizeof(*ls->latest));
	ls->scratch = xcalloc(1, sizeof(*ls->scratch));
	int r = live_spawn(ls);
	if (r < 0) {
		live_destroy(&ls->base);
		return r;
	}
	*out = &ls->base;
	return 0;
}
