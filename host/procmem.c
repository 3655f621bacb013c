/*
 * Memory and system text of the kernel (see procmem.h). Formats:
 *   /proc/loadavg  "0.20 0.18 0.12 1/80 11206": three load averages,
 *                  runnable/existing kernel scheduling entities, the last
 *                  PID (proc.rst, "/proc/loadavg")
 *   /proc/uptime   "350735.47 234388.90": seconds since boot, idle seconds
 *   /proc/vmstat   "oom_kill 3" (one "name value" a line; oom_kill since 4.13)
 *   /proc/pressure "some avg10=0.00 avg60=0.00 avg300=0.00 total=0" and a
 *                  "full" line alike (Documentation/accounting/psi.rst)
 *   zram mm_stat   "orig_data_size compr_data_size mem_used_total mem_limit
 *                  mem_used_max same_pages pages_compacted huge_pages ..."
 *                  in bytes (Documentation/admin-guide/blockdev/zram.rst)
 */
#include "procmem.h"

#include <errno.h>
#include <string.h>

#include "host_text.h"

/* "some avg10=1.23 avg60=.. avg300=.. total=456": true and the two values when whole */
static bool
psi_line(const char *text, const char *key, double *avg10, uint64_t *total)
{
	const char *p = host_find_line(text, key);
	if (!p) {
		return false;
	}
	p += strlen(key);
	static const char *const fields[] = {"avg10=", "avg60=", "avg300="};
	for (size_t i = 0; i < 3; i++) {
		double v;
		host_skip_blanks(&p);
		if (strncmp(p, fields[i], strlen(fields[i])) != 0) {
			return false;
		}
		p += strlen(fields[i]);
		if (!host_read_decimal(&p, &v) || v > 100) {
			return false;
		}
		if (i == 0) {
			*avg10 = v;
		}
	}
	host_skip_blanks(&p);
	if (strncmp(p, "total=", 6) != 0) {
		return false;
	}
	p += 6;
	if (!host_read_u64(&p, total)) {
		return false;
	}
	return *p == '\n' || *p == '\0' || *p == ' ';
}

int
procmem_parse_psi(const char *text, struct procmem_psi *out)
{
	memset(out, 0, sizeof(*out));
	out->some = psi_line(text, "some", &out->some_avg10, &out->some_total_us);
	out->full = psi_line(text, "full", &out->full_avg10, &out->full_total_us);
	return out->some ? 0 : -EINVAL;
}

int
procmem_parse_vmstat_oom(const char *text, uint64_t *kills)
{
	const char *p = host_find_line(text, "oom_kill");
	if (!p) {
		return -ENOENT;
	}
	p += strlen("oom_kill");
	if (!host_read_u64(&p, kills) || (*p != '\n' && *p != '\0')) {
		return -ENOENT;
	}
	return 0;
}

int
procmem_parse_loadavg(const char *text, struct procmem_loadavg *out)
{
	const char *p = text;
	if (!host_read_decimal(&p, &out->avg1) || !host_read_decimal(&p, &out->avg5) ||
	    !host_read_decimal(&p, &out->avg15) || !host_read_u64(&p, &out->running) || *p++ != '/' ||
	    !host_read_u64(&p, &out->tasks)) {
		return -EINVAL;
	}
	return *p == ' ' || *p == '\n' || *p == '\0' ? 0 : -EINVAL;
}

int
procmem_parse_uptime(const char *text, double *seconds)
{
	const char *p = text;
	if (!host_read_decimal(&p, seconds)) {
		return -EINVAL;
	}
	return *p == ' ' || *p == '\n' || *p == '\0' ? 0 : -EINVAL;
}

int
procmem_parse_zram(const char *text, struct procmem_zram *out)
{
	const char *p = text;
	if (!host_read_u64(&p, &out->orig_data_size) || !host_read_u64(&p, &out->compr_data_size) ||
	    !host_read_u64(&p, &out->mem_used_total)) {
		return -EINVAL;
	}
	return *p == ' ' || *p == '\t' || *p == '\n' || *p == '\0' ? 0 : -EINVAL;
}
