/*
 * Pure parsers for /proc/stat, /proc/meminfo and CPU range lists. The
 * text comes from tegra/sysfs.c; nothing here touches a file.
 */
#include "procfs.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "core/text.h"

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Parses the digits at *P into *OUT and advances *P. False on no digit or overflow. */
static bool
parse_u64(const char **p, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	if (!text_is_digit(*s)) {
		return false;
	}
	for (; text_is_digit(*s); s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10) {
			return false;
		}
		v = v * 10 + d;
	}
	*p = s;
	*out = v;
	return true;
}

static const char *
next_line(const char *p)
{
	const char *nl = strchr(p, '\n');
	return nl ? nl + 1 : p + strlen(p);
}

/* "cpuN f1 f2 ..." with at least user, nice, system, idle. */
static int
parse_cpu_line(const char *p, struct proc_stat *st)
{
	uint64_t n;
	uint64_t f[8] = {0};
	if (!parse_u64(&p, &n)) {
		return -EINVAL;
	}
	int count = 0;
	while (count < 8) {
		while (is_blank(*p)) {
			p++;
		}
		if (*p == '\n' || *p == '\0') {
			break;
		}
		if (!parse_u64(&p, &f[count])) {
			return -EINVAL;
		}
		count++;
	}
	if (count < 4) {
		return -EINVAL;
	}
	if (n >= PROCFS_CPU_MAX) {
		return 0; /* beyond what we track */
	}
	/* user nice system idle iowait irq softirq steal; guest is inside user */
	uint64_t busy = 0, total;
	static const int busy_fields[] = {0, 1, 2, 5, 6, 7};
	for (size_t i = 0; i < sizeof(busy_fields) / sizeof(busy_fields[0]); i++) {
		if (__builtin_add_overflow(busy, f[busy_fields[i]], &busy)) {
			return -EINVAL; /* no kernel counts that far: garbage */
		}
	}
	if (__builtin_add_overflow(busy, f[3], &total) || __builtin_add_overflow(total, f[4], &total)) {
		return -EINVAL;
	}
	struct cpu_times *c = &st->cpu[n];
	c->busy = busy;
	c->total = total;
	c->present = true;
	if (n + 1 > st->cpu_count) {
		st->cpu_count = (unsigned)n + 1;
	}
	return 0;
}

int
procfs_parse_stat(const char *text, struct proc_stat *out)
{
	if (!text || !out) {
		return -EINVAL;
	}
	struct proc_stat st;
	memset(&st, 0, sizeof(st));
	for (const char *p = text; *p; p = next_line(p)) {
		/* "cpu " is the aggregate line; only "cpuN" lines are per core */
		if (strncmp(p, "cpu", 3) != 0 || !text_is_digit(p[3])) {
			continue;
		}
		int err = parse_cpu_line(p + 3, &st);
		if (err < 0) {
			return err;
		}
	}
	/* cpu0 is always there: lines past PROCFS_CPU_MAX alone are not a stat */
	if (st.cpu_count == 0) {
		return -EINVAL;
	}
	*out = st;
	return 0;
}

bool
procfs_cpu_load(const struct cpu_times *prev, const struct cpu_times *cur, double *pct)
{
	if (!prev->present || !cur->present) {
		return false;
	}
	/* counters only grow; anything else is a hot-plug reset */
	if (cur->total <= prev->total || cur->busy < prev->busy) {
		return false;
	}
	uint64_t dt = cur->total - prev->total;
	uint64_t db = cur->busy - prev->busy;
	double v = 100.0 * (double)db / (double)dt;
	if (v > 100.0) {
		v = 100.0;
	}
	*pct = v;
	return true;
}

struct meminfo_key {
	const char *name;
	size_t len;
	size_t offset;
};

/* clang-format off */
#define MEMINFO_KEY(name, field) {name, sizeof(name) - 1, offsetof(struct meminfo, field)}
static const struct meminfo_key meminfo_keys[] = {
	MEMINFO_KEY("MemTotal", mem_total_kb),
	MEMINFO_KEY("MemAvailable", mem_available_kb),
	MEMINFO_KEY("MemFree", mem_free_kb),
	MEMINFO_KEY("Buffers", buffers_kb),
	MEMINFO_KEY("Cached", cached_kb),
	MEMINFO_KEY("SwapTotal", swap_total_kb),
	MEMINFO_KEY("SwapFree", swap_free_kb),
	MEMINFO_KEY("SwapCached", swap_cached_kb),
};
/* clang-format on */
#define MEMINFO_KEYS (sizeof(meminfo_keys) / sizeof(meminfo_keys[0]))

int
procfs_parse_meminfo(const char *text, struct meminfo *out)
{
	if (!text || !out) {
		return -EINVAL;
	}
	struct meminfo mi = {
		.mem_total_kb = -1,
		.mem_available_kb = -1,
		.mem_free_kb = -1,
		.buffers_kb = -1,
		.cached_kb = -1,
		.swap_total_kb = -1,
		.swap_free_kb = -1,
		.swap_cached_kb = -1,
	};
	/* the keys are in the first 16 of about 55 lines: stop once each was seen */
	unsigned seen = 0;
	for (const char *p = text; *p && seen != (1u << MEMINFO_KEYS) - 1; p = next_line(p)) {
		const char *colon = p;
		while (*colon && *colon != ':' && *colon != '\n') {
			colon++;
		}
		if (*colon != ':') {
			continue;
		}
		size_t klen = (size_t)(colon - p);
		const struct meminfo_key *key = NULL;
		for (size_t i = 0; i < MEMINFO_KEYS; i++) {
			if (meminfo_keys[i].len == klen && memcmp(meminfo_keys[i].name, p, klen) == 0) {
				key = &meminfo_keys[i];
				seen |= 1u << i;
				break;
			}
		}
		if (!key) {
			continue;
		}
		const char *v = colon + 1;
		while (is_blank(*v)) {
			v++;
		}
		uint64_t kb;
		if (!parse_u64(&v, &kb) || kb > INT64_MAX) {
			return -EINVAL;
		}
		while (is_blank(*v)) {
			v++;
		}
		/* every line we read is in kB; anything else is not meminfo */
		if (strncmp(v, "kB", 2) == 0) {
			v += 2;
		}
		while (is_blank(*v) || *v == '\r') {
			v++;
		}
		if (*v != '\n' && *v != '\0') {
			return -EINVAL;
		}
		*(int64_t *)((char *)&mi + key->offset) = (int64_t)kb;
	}
	if (mi.mem_total_kb < 0) {
		return -EINVAL;
	}
	*out = mi;
	return 0;
}

static bool
is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

int
procfs_parse_cpulist(const char *text, uint64_t *mask)
{
	if (!text || !mask) {
		return -EINVAL;
	}
	const char *p = text;
	const char *end = text + strlen(text);
	while (p < end && is_space(*p)) {
		p++;
	}
	while (end > p && is_space(end[-1])) {
		end--;
	}
	uint64_t m = 0;
	/* "" is a valid empty list (e.g. "offline" with every CPU online) */
	while (p < end) {
		uint64_t lo;
		uint64_t hi;
		if (!parse_u64(&p, &lo)) {
			return -EINVAL;
		}
		hi = lo;
		if (p < end && *p == '-') {
			p++;
			if (!parse_u64(&p, &hi) || hi < lo) {
				return -EINVAL;
			}
		}
		/* CPUs past 63 are valid but do not fit the mask */
		for (uint64_t n = lo; n <= hi && n < 64; n++) {
			m |= UINT64_C(1) << n;
		}
		if (p == end) {
			break;
		}
		if (*p != ',' || p + 1 == end) {
			return -EINVAL;
		}
		p++;
	}
	*mask = m;
	return 0;
}
