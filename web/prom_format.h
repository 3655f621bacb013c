/*
 * Prometheus text exposition (format 0.0.4) of a sample: canonical dotted
 * metric names mapped to conventional families in base units
 * (temp.cpu_c -> tegrawatch_temperature_celsius{sensor="cpu"},
 * power.vdd_in.mw -> tegrawatch_power_watts{rail="vdd_in"}, loads as
 * ratios 0..1, clocks in hertz, memory in bytes), as the metric dictionary
 * says (core/metric_dict.h). Pure: no I/O, no clock.
 */
#ifndef TEGRAWATCH_PROM_FORMAT_H
#define TEGRAWATCH_PROM_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/buf.h"
#include "core/metric_dict.h"
#include "core/sample.h"

enum prom_type {
	PROM_GAUGE,
	PROM_COUNTER,
};

/**
 * Appends the exposition of sample S to OUT: every metric of the sample,
 * the info families of the dictionary (INFO: the board and the version;
 * the power mode is the sample's) and tegrawatch_sample_timestamp_seconds.
 * Families are sorted by name, each with
 * one # HELP and one # TYPE line and its series together (labels in
 * natural order: cpu="2" before cpu="10"). A second metric landing on the
 * same family and labels is dropped. DICT keeps the names' entries from
 * one sample to the next (one per thread).
 */
void prom_format_sample(struct buf *out, const struct sample *s, const struct metric_info_facts *info,
			struct metric_dict_cache *dict);

/* The process's own figures, read by the caller from /proc/self. Negative = unknown. */
struct prom_process {
	double resident_bytes;
	double virtual_bytes;
	double cpu_seconds;
	double start_time_seconds; /* since the epoch */
	double open_fds;
	double max_fds;
};

/**
 * Appends process_resident_memory_bytes, process_virtual_memory_bytes,
 * process_cpu_seconds_total, process_start_time_seconds, process_open_fds
 * and process_max_fds (the known ones), named as Prometheus client
 * libraries name them.
 */
void prom_format_process(struct buf *out, const struct prom_process *p);

/* One pending or firing alert, for the ALERTS-style family. */
struct prom_alert {
	const char *alertname; /* the rule's name */
	bool pending;          /* pending (waiting for its `for`), else firing */
	const char *severity;
	const char *metric; /* the metric instance */
};

/** Appends the HELP and TYPE lines of tegrawatch_alerts (once, before its series). */
void prom_format_alerts_head(struct buf *out);

/** Appends tegrawatch_alerts{alertname,alertstate,severity,metric} 1 for A. */
void prom_format_alert(struct buf *out, const struct prom_alert *a);

/** Appends V as Prometheus writes numbers: NaN, +Inf, -Inf or %.15g. */
void prom_format_value(struct buf *out, double v);

/** Appends S escaped for a label value (\\, \", \n). */
void prom_escape_label(struct buf *out, const char *s);

#endif
