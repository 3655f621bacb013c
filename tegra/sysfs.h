/*
 * Reading sysfs, procfs and /etc below an injected root. The only place
 * that opens board files. Every failing path is counted, logged once and
 * retried with exponential back-off, so one bad sensor never stalls or
 * breaks the rest of a sample.
 */
#ifndef TEGRAWATCH_SYSFS_H
#define TEGRAWATCH_SYSFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sysfs;

/** Largest file sysfs_read_str() accepts; bigger ones are garbage (-EFBIG). */
#define SYSFS_SMALL_MAX 4096

/**
 * Creates a reader for paths below ROOT ("/" or "" for the real system, a
 * fixture directory in tests). Returns 0 and *OUT, or -errno.
 */
int sysfs_create(const char *root, struct sysfs **out);

/** Frees FS; NULL is a no-op. */
void sysfs_destroy(struct sysfs *fs);

/** The root as given ("" for the real system). */
const char *sysfs_root(const struct sysfs *fs);

/**
 * Sets the monotonic clock used for back-off (tests). Default: CLOCK_MONOTONIC.
 */
void sysfs_set_clock(struct sysfs *fs, int64_t (*now_ms)(void *data), void *data);

/**
 * A batch of reads in a row (a sample's): each read from now on starts
 * where the one before ended, NOW_MS for the first, so it takes one clock
 * reading instead of two (the little between two reads counts towards the
 * second, far below a slow read's 100 ms). Until sysfs_chain_end().
 */
void sysfs_chain_begin(struct sysfs *fs, int64_t now_ms);
void sysfs_chain_end(struct sysfs *fs);

/**
 * Reads the small file PATH (absolute, e.g. "/sys/class/thermal/thermal_zone0/temp",
 * resolved below the root) into BUF as a NUL-terminated string with trailing
 * whitespace and NUL bytes removed. Never blocks: FIFOs and other non-regular
 * files that have nothing to read give -EAGAIN. Returns the length, or
 * -ENOENT, -EACCES, -EAGAIN, -EFBIG (more than SYSFS_SMALL_MAX or than SIZE),
 * -ENODATA (empty), -EBUSY (path is backing off after earlier errors), -errno.
 * Errors other than -ENOENT are counted and put PATH on back-off. A regular
 * file whose read answers EAGAIN is read once more at once.
 */
int sysfs_read_str(struct sysfs *fs, const char *path, char *buf, size_t size);

/**
 * Reads PATH as one decimal integer (optional sign, surrounding whitespace).
 * Returns 0 and *OUT, or -errno as sysfs_read_str(), or -EINVAL for
 * garbage (also counted and backed off).
 */
int sysfs_read_i64(struct sysfs *fs, const char *path, int64_t *out);

/** sysfs_read_sensor(): the sensor has no value now (a state, not an error). */
#define SYSFS_GATED 1

/**
 * As sysfs_read_i64() for a sensor whose driver may answer EAGAIN: a
 * thermal zone on a power-gated rail (Thor's GPU zone while the GPU
 * sleeps) or one that is busy for a moment. Every reader asks a regular
 * file once more at once after an EAGAIN; here a second EAGAIN returns
 * SYSFS_GATED without counting, logging or backing the path off (the
 * sensor may answer on the next sample). A FIFO or device with nothing to
 * read stays an error (-EAGAIN, counted): it stands in for a read that
 * would hang.
 */
int sysfs_read_sensor(struct sysfs *fs, const char *path, int64_t *out);

/**
 * Reads a whole text file of up to MAX bytes (procfs, /etc files) into a
 * malloc'd NUL-terminated buffer. Returns the length and *OUT, or -errno
 * (-EFBIG when larger than MAX).
 */
int sysfs_read_file(struct sysfs *fs, const char *path, size_t max, char **out);

/** True when PATH exists below the root (file, dir or symlink target). */
bool sysfs_exists(struct sysfs *fs, const char *path);

/**
 * Calls FN for each entry name of directory PATH (no "." or ".."), in
 * sorted order so results do not depend on readdir order. Stops early and
 * returns FN's value when it is non-zero. Returns 0, or -errno.
 */
int sysfs_list_dir(struct sysfs *fs, const char *path, int (*fn)(const char *name, void *data), void *data);

/**
 * Resolves symlinks in PATH (below the root; links must stay inside it)
 * and writes the resolved path, relative to the root and starting with
 * '/', into BUF. Returns 0, or -errno.
 */
int sysfs_realpath(struct sysfs *fs, const char *path, char *buf, size_t size);

/**
 * Descriptors held open between reads: a file read a second time stays
 * open and is read again with pread() (tegra/sysfs_keep.c).
 */
size_t sysfs_open_files(const struct sysfs *fs);

/** Errors counted since creation (all paths). */
uint64_t sysfs_error_count(const struct sysfs *fs);

/**
 * Tests: resolve paths below a fixture root with the user-space walk used
 * on kernels without openat2() (before 5.6, e.g. JetPack 4) instead of
 * openat2(RESOLVE_IN_ROOT). Both treat the root as "/" for symlinks.
 */
void sysfs_disable_openat2(struct sysfs *fs);

#endif
