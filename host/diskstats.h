/*
 * Block devices: the pure part. /proc/diskstats lines
 * (Documentation/admin-guide/iostats.rst), which devices are watched, and
 * an eMMC's health as its mmc driver shows it in sysfs (life_time,
 * pre_eol_info: JEDEC eMMC 5.0, EXT_CSD DEVICE_LIFE_TIME_EST_TYP_A/B and
 * PRE_EOL_INFO; Documentation/mmc/mmc-dev-attrs.rst). No I/O.
 */
#ifndef TEGRAWATCH_HOST_DISKSTATS_H
#define TEGRAWATCH_HOST_DISKSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DISK_NAME_MAX 32

struct disk_stat {
	char name[DISK_NAME_MAX]; /* "mmcblk0", "nvme0n1", "dm-0" */
	uint64_t reads, sectors_read, writes, sectors_written, io_ms;
};

/** Parses one /proc/diskstats line (LEN bytes). Returns 0 or -EINVAL. */
int diskstats_parse_line(const char *line, size_t len, struct disk_stat *out);

/**
 * True for a whole disk watched by default: not a partition (sda1,
 * nvme0n1p2, mmcblk0p1, mmcblk0boot0, mmcblk0rpmb), nor a loop, RAM, zram
 * or floppy device (node_exporter's default device exclusion, and the
 * eMMC's hardware partitions).
 */
bool diskstats_default_device(const char *name);

/** The metric segment of device NAME into BUF (DISK_NAME_MAX): lower-case, other characters '_' ("dm-0": "dm_0"). */
void diskstats_segment(const char *name, char *buf);

/**
 * Parses an eMMC life_time text, "0x01 0x02": the life time used of
 * memory types A and B, each a JEDEC band 1..11 (0x01: 0-10 %, ...,
 * 0x0A: 90-100 %, 0x0B: beyond). Writes each band's upper end in percent
 * (10..110), or -1 where the device says 0 (not defined). Returns 0 or
 * -EINVAL.
 */
int emmc_parse_life_time(const char *text, int *a_pct, int *b_pct);

/** Parses pre_eol_info, "0x01": 1 normal, 2 warning, 3 urgent. Returns 0, or -EINVAL (0, other values). */
int emmc_parse_pre_eol(const char *text, int *level);

#endif
