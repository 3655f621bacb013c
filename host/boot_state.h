/*
 * The boot the agent last saw, kept across its restarts in boot.state next
 * to the alert state (agent.state_file's directory), and what a start on
 * another boot means (docs/metrics.md#reboots). Pure: parsing, formatting
 * and judging text, no I/O.
 *
 *   # tegrawatch boot state 1
 *   boot_id e7724f94-ea06-45b8-a32b-89dad677c469
 *   last_seen_ms 1764345600123    the wall clock at the last save in that boot
 *   uptime_ms 86400000            that boot's uptime then
 *   stopped 0                     1: the agent stopped cleanly after it
 */
#ifndef TEGRAWATCH_BOOT_STATE_H
#define TEGRAWATCH_BOOT_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BOOT_ID_LEN 36 /* a UUID as the kernel writes it: 8-4-4-4-12 lower-case hex digits */
#define BOOT_STATE_MAX 512

struct boot_state {
	char boot_id[BOOT_ID_LEN + 1];
	int64_t last_seen_ms; /* wall clock, ms since the epoch */
	int64_t uptime_ms;    /* -1: not known */
	bool stopped;
};

enum boot_change {
	BOOT_SAME,    /* the agent restarted on the boot it saw */
	BOOT_ORDERLY, /* another boot, and the agent stopped cleanly before it (reboot, shutdown, or stopped by hand) */
	BOOT_UNEXPECTED, /* another boot, and the agent never stopped: power loss, brown-out, watchdog, panic, reset */
};

/** The boot id in TEXT (/proc/sys/kernel/random/boot_id: the UUID and a newline) into OUT. 0 or -EINVAL. */
int boot_id_parse(const char *text, char out[BOOT_ID_LEN + 1]);

/**
 * Parses the state file's TEXT into *OUT. Returns 0, or -EINVAL with
 * *BAD_LINE (1-based) and WHY saying what is wrong there (*OUT untouched).
 */
int boot_state_parse(const char *text, struct boot_state *out, int *bad_line, char *why, size_t why_size);

/** Writes ST as the file's text into BUF. Returns its length, or -ENOSPC. */
int boot_state_format(const struct boot_state *st, char *buf, size_t size);

/** What it means that the agent starts on boot NOW_ID after PREV. */
enum boot_change boot_state_judge(const struct boot_state *prev, const char *now_id);

#endif
