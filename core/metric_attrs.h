/*
 * Labels a metric name cannot carry. A name's placeholder is one
 * [a-z0-9_]+ segment ("filesystem.var_lib_docker.avail_mb"), but a
 * Prometheus series wants the real text behind it (mountpoint="/var/lib/docker",
 * fstype="ext4", device="/dev/mmcblk0p1"), as node_exporter gives it. A
 * source that knows that text says it here, once per scan; the metric
 * dictionary adds it to the series of every name whose label is
 * METRIC_LABEL_ATTRS (core/metric_dict.c), so /metrics and the fleet sinks
 * show it. Without an entry (a replayed recording, another process) the
 * label is the segment itself.
 *
 * Process-wide and behind a mutex: the web server renders /metrics in its
 * own threads. Fixed room (METRIC_ATTRS_ENTRIES), no allocation.
 */
#ifndef TEGRAWATCH_METRIC_ATTRS_H
#define TEGRAWATCH_METRIC_ATTRS_H

#include <stddef.h>

#define METRIC_ATTRS_MAX 3      /* labels of one entry, the placeholder's own first */
#define METRIC_ATTRS_ENTRIES 64 /* entries in the process */
#define METRIC_LABEL_VALUE_MAX 128

/*
 * Says that names whose placeholder labelled LABEL ("mountpoint") reads
 * SEGMENT ("var_lib_docker") carry the N labels NAMES (static text;
 * NAMES[0] is LABEL) with VALUES (copied; cut at METRIC_LABEL_VALUE_MAX).
 * Replaces an earlier entry of the same segment. Returns 0, -EINVAL for
 * N outside 1..METRIC_ATTRS_MAX or NAMES[0] other than LABEL, or -ENOSPC
 * when the room is taken.
 */
int metric_attrs_set(const char *label, const char *segment, size_t n, const char *const *names,
		     const char *const *values);

/** Forgets the entry of LABEL and SEGMENT (a mount gone), or every entry of LABEL when SEGMENT is NULL. */
void metric_attrs_forget(const char *label, const char *segment);

/**
 * Copies the labels said for LABEL and SEGMENT (at most MAX) into NAMES and
 * VALUES; returns how many (0: none said).
 */
size_t metric_attrs_get(const char *label, const char *segment, size_t max, const char **names,
			char (*values)[METRIC_LABEL_VALUE_MAX]);

#endif
