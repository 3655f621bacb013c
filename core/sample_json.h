/*
 * The one JSON shape of a sample, shared by the JSON Lines sink, the
 * snapshot command and (later) MQTT and the HTTP API.
 */
#ifndef TEGRAWATCH_SAMPLE_JSON_H
#define TEGRAWATCH_SAMPLE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "json_read.h"
#include "sample.h"

/* "YYYY-MM-DDTHH:MM:SSZ" plus a NUL */
#define RFC3339_LEN 21

/**
 * Writes TIME_MS (unix milliseconds) as RFC 3339 in UTC, whole seconds, into
 * BUF (>= RFC3339_LEN bytes): the one time format of every output (samples,
 * MQTT, the API, alerts, replay's timeline, reports, log lines that name a time).
 */
void rfc3339_utc(int64_t time_ms, char *buf, size_t size);

/** Writes the metrics as a JSON object {name: number, ...} in set order. */
void metrics_to_json(struct json *j, const struct metric_set *set);

/** Writes COUNT causes as [{"reason", "kind", "source", "value", "limit"}, ...]. */
void throttle_causes_to_json(struct json *j, const struct throttle_cause *causes, int count);

/**
 * Writes the top processes: {"cpu_window_s", "by_cpu": [{"pid", "comm",
 * "cpu_pct", "rss_bytes"}, ...], "by_memory": [...]}.
 */
void top_processes_to_json(struct json *j, const struct top_processes *tp);

/** Reads what top_processes_to_json() wrote into *TP (at most TOP_PROCESSES_MAX a list; the rest skipped). */
void top_processes_from_json(struct json_reader *r, struct top_processes *tp);

/** Writes the OOM killer's victims of a tick: {"processes": [{"pid", "comm"}, ...], "more": N}. */
void oom_victims_to_json(struct json *j, const struct oom_victims *v);

/** Reads what oom_victims_to_json() wrote into *V (at most OOM_VICTIMS_MAX listed, the rest counted in more). */
void oom_victims_from_json(struct json_reader *r, struct oom_victims *v);

/** Writes the throttle state: {"active": b, "reasons": {...}, "context": "..."}. */
void throttle_to_json(struct json *j, const struct throttle_state *t);

/** Writes the "power_mode" member: the nvpmodel name, or null when unknown. */
void power_mode_to_json(struct json *j, const struct sample *s);

/**
 * Writes the "clock_step_ms" member when the wall clock stepped just
 * before S (nothing otherwise): readers of a stream or a recording see the
 * step instead of an hour of silence, and can take it out of durations.
 */
void clock_step_to_json(struct json *j, const struct sample *s);

/**
 * Writes {"seq", "ts", "time_ms", ["clock_step_ms",] "power_mode", "metrics", "throttle"[, "processes"]
 * [, "oom_killed"]}: "processes" only on the sample on which an alert fired (top_processes_to_json),
 * "oom_killed" only on one where the kernel log named processes the OOM killer killed (oom_victims_to_json).
 */
void sample_to_json(struct json *j, const struct sample *s);

/**
 * Reads member KEY of a sample_to_json object (time_ms, clock_step_ms,
 * power_mode, metrics, throttle, processes, oom_killed) from R into S, the metrics put into
 * S->metrics: true when KEY is one of them (its value consumed; *HAVE_TIME
 * set by time_ms: whether it was a number), false otherwise (nothing
 * consumed). For recordings and the agent's API.
 */
bool sample_member_from_json(struct json_reader *r, const char *key, struct sample *s, bool *have_time);

#endif
