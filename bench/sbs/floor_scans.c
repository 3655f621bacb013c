/*
 * floor_scans.c - what the floor (the team's ../shared/bench/floor/skeleton_agent.c,
 * linked with this file) must do besides its per-sample files to report what
 * tegrawatch's host and processes sources report: every SBS_FLOOR_FS_MS
 * (10000) /proc/self/mountinfo and statvfs() of each SBS_FLOOR_MOUNTS mount;
 * every SBS_FLOOR_PROC_MS (5000) /proc/PID/stat of every process, then status
 * and fd entries of those whose comm is one of SBS_FLOOR_COMMS (lists
 * ':'-separated, 16 each at most). A thread started before main() does it, so
 * the skeleton itself stays the team's, unchanged, and includes the libraries
 * (this file includes none: one file of the project includes each). Its values
 * are read, not published: the few bytes they would add to the skeleton's
 * document are not what the floor measures.
 *
 * Build: gcc -O2 -Wall -pthread -o skeleton_agent skeleton_agent.c floor_scans.c -lmosquitto -lmicrohttpd
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define LIST_MAX 16

/* whole small file into BUF (open, read, close: what a scan of /proc must do); bytes or -1 */
static ssize_t read_once(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t r = read(fd, buf, size - 1);
    close(fd);
    if (r >= 0) buf[r] = 0;
    return r;
}

/* the first number after KEY in TEXT, or 0 */
static long field(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? strtol(p + strlen(key), NULL, 10) : 0;
}

/* mountinfo, then statvfs() of each mount: available KiB summed */
static long scan_mounts(char **mounts, int nm)
{
    char buf[16384];
    long avail_kib = 0;
    read_once("/proc/self/mountinfo", buf, sizeof buf);
    for (int i = 0; i < nm; i++) {
        struct statvfs v;
        if (statvfs(mounts[i], &v) == 0) avail_kib += (long)(v.f_bavail * v.f_frsize / 1024);
    }
    return avail_kib;
}

/* every /proc/PID/stat, then status and fd entries of those named COMMS: processes, RSS KiB, fds */
static void scan_procs(char **comms, int nc, long out[3])
{
    char path[288], buf[4096]; /* d_name is at most 255 */
    out[0] = out[1] = out[2] = 0;
    DIR *d = opendir("/proc");
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        if (read_once(path, buf, sizeof buf) <= 0) continue;
        char *open_p = strchr(buf, '('), *close_p = strrchr(buf, ')');
        if (!open_p || !close_p) continue;
        *close_p = 0;
        int hit = 0;
        for (int i = 0; i < nc && !hit; i++) hit = strcmp(open_p + 1, comms[i]) == 0;
        if (!hit) continue;
        out[0]++;
        snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
        if (read_once(path, buf, sizeof buf) > 0) out[1] += field(buf, "VmRSS:");
        snprintf(path, sizeof path, "/proc/%s/fd", e->d_name);
        DIR *f = opendir(path);
        if (f) {
            while (readdir(f)) out[2]++;
            closedir(f);
        }
    }
    closedir(d);
    read_once("/proc/uptime", buf, sizeof buf);
}

static char *mounts[LIST_MAX], *comms[LIST_MAX];
static int nm, nc;
static long fs_ms = 10000, proc_ms = 5000;
static volatile long fs_avail_kib, procs[3]; /* the last scans' values */

/* LIST (':'-separated, from the environment, kept) into OUT; the count */
static int split(char *list, char **out)
{
    int n = 0;
    for (char *save = NULL, *t = strtok_r(list, ":", &save); t && n < LIST_MAX; t = strtok_r(NULL, ":", &save)) out[n++] = t;
    return n;
}

static long env_ms(const char *name, long dflt)
{
    const char *v = getenv(name);
    long ms = v ? strtol(v, NULL, 10) : dflt;
    return ms > 0 ? ms : dflt;
}

static void *scans(void *arg)
{
    (void)arg;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long t_ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000, next_fs = t_ms, next_proc = t_ms;
    for (;;) {
        long long due = next_fs < next_proc ? next_fs : next_proc;
        struct timespec at = {.tv_sec = due / 1000, .tv_nsec = (due % 1000) * 1000000};
        clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL);
        if (nm > 0 && due == next_fs) {
            fs_avail_kib = scan_mounts(mounts, nm);
            next_fs += fs_ms;
        }
        if (nc > 0 && due == next_proc) {
            long out[3];
            scan_procs(comms, nc, out);
            memcpy((void *)procs, out, sizeof(out));
            next_proc += proc_ms;
        }
        if (nm == 0) next_fs = next_proc + 1;
        if (nc == 0) next_proc = next_fs + 1;
    }
    return NULL;
}

__attribute__((constructor)) static void start_scans(void)
{
    char *m = getenv("SBS_FLOOR_MOUNTS"), *c = getenv("SBS_FLOOR_COMMS");
    nm = m ? split(strdup(m), mounts) : 0;
    nc = c ? split(strdup(c), comms) : 0;
    fs_ms = env_ms("SBS_FLOOR_FS_MS", fs_ms);
    proc_ms = env_ms("SBS_FLOOR_PROC_MS", proc_ms);
    pthread_t t;
    if ((nm > 0 || nc > 0) && pthread_create(&t, NULL, scans, NULL) == 0) pthread_detach(t);
}
