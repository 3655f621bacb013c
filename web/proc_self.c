/* The process's own figures from /proc (see proc_self.h). */
#include "proc_self.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* CPU seconds, memory and start time from /proc/self/stat. */
static void
read_stat(int64_t boot_time_s, struct prom_process *p)
{
	char buf[1024];
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = -1;
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0) {
		return;
	}
	buf[n] = '\0';
	/* the command name may hold spaces and parentheses: fields start after the last ')' */
	const char *p_end = strrchr(buf, ')');
	if (!p_end) {
		return;
	}
	/* fields after "pid (comm)": state is field 3 */
	unsigned long long f[25] = {0};
	const char *s = p_end + 1;
	for (int i = 3; i <= 24 && *s; i++) {
		while (*s == ' ') {
			s++;
		}
		char *end;
		f[i] = strtoull(s, &end, 10);
		s = end;
		while (*s && *s != ' ') {
			s++;
		}
	}
	double tick = (double)sysconf(_SC_CLK_TCK);
	double page = (double)sysconf(_SC_PAGESIZE);
	p->cpu_seconds = (double)(f[14] + f[15]) / tick;
	p->virtual_bytes = (double)f[23];
	p->resident_bytes = (double)f[24] * page;
	if (boot_time_s > 0) {
		p->start_time_seconds = (double)boot_time_s + (double)f[22] / tick;
	}
}

void
proc_self_read(int64_t boot_time_s, struct prom_process *p)
{
	p->resident_bytes = p->virtual_bytes = p->cpu_seconds = -1;
	p->start_time_seconds = p->open_fds = p->max_fds = -1;
	read_stat(boot_time_s, p);
	DIR *d = opendir("/proc/self/fd");
	if (d) {
		double count = 0;
		struct dirent *e;
		while ((e = readdir(d)) != NULL) {
			if (e->d_name[0] != '.') {
				count++;
			}
		}
		closedir(d);
		p->open_fds = count - 1; /* the directory's own descriptor */
	}
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
		p->max_fds = (double)rl.rlim_cur;
	}
}

int64_t
proc_boot_time_s(void)
{
	FILE *f = fopen("/proc/stat", "re");
	if (!f) {
		return 0;
	}
	char line[256];
	int64_t bt = 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "btime ", 6) == 0) {
			bt = strtoll(line + 6, NULL, 10);
			break;
		}
	}
	fclose(f);
	return bt;
}
