/*
 * What the sysfs layer tests share: a tree they build in a temporary
 * directory (the group's), files, links and directories in it, and the
 * layer opened on it with a clock the test drives.
 */
#ifndef TEGRAWATCH_TESTS_SYSFS_TREE_H
#define TEGRAWATCH_TESTS_SYSFS_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "tegra/sysfs.h"

/* the tree's root (group_setup) */
extern char root[256];

struct fake_clock {
	int64_t now_ms;
	int64_t step_ms; /* added after every reading: a slow driver */
};

/** The monotonic clock in ms. */
int64_t real_ms(void);

/** ROOT followed by REL into BUF. */
void fixture_path(char *buf, size_t size, const char *rel);

/** The directory REL and those above it. */
void make_dirs(const char *rel);

void write_bytes(const char *rel, const void *data, size_t len);
void write_text(const char *rel, const char *text);

/** A symbolic link REL to TARGET. */
void make_link(const char *target, const char *rel);

/** cmocka group setup and teardown: the tree's directory, made and removed. */
int group_setup(void **state);
int group_teardown(void **state);

/** The layer on the tree, on CLOCK when not NULL. */
struct sysfs *open_fixture(struct fake_clock *clock);

#endif
