/* Alert events: names and the JSON shape. */
#include "alert.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sample_json.h"

const char *
severity_name(enum severity s)
{
	switch (s) {
	case SEVERITY_WARNING:
		return "warning";
	case SEVERITY_CRITICAL:
		return "critical";
	case SEVERITY_NONE:
		break;
	}
	return "none";
}

const char *
alert_transition_name(enum alert_transition t)
{
	switch (t) {
	case TRANSITION_PENDING:
		return "pending";
	case TRANSITION_CANCELLED:
		return "cancelled";
	case TRANSITION_FIRING:
		return "firing";
	case TRANSITION_ESCALATED:
		return "escalated";
	case TRANSITION_DEESCALATED:
		return "deescalated";
	case TRANSITION_REPEAT:
		return "repeat";
	case TRANSITION_RESOLVED:
		return "resolved";
	}
	return "unknown";
}

/* "KEY": RFC 3339 in UTC and "KEY_ms": epoch milliseconds, both null when unset */
static void
time_pair(struct json *j, const char *key, int64_t ms)
{
	char name[32];
	json_key(j, key);
	if (ms <= 0) {
		json_null(j);
	} else {
		char ts[RFC3339_LEN];
		rfc3339_utc(ms, ts, sizeof(ts));
		json_string(j, ts);
	}
	snprintf(name, sizeof(name), "%s_ms", key);
	json_key(j, name);
	if (ms <= 0) {
		json_null(j);
	} else {
		json_int(j, ms);
	}
}

static const char *
status_of(enum alert_transition t)
{
	switch (t) {
	case TRANSITION_PENDING:
		return "pending";
	case TRANSITION_CANCELLED:
	case TRANSITION_RESOLVED:
		return "resolved";
	default:
		return "firing";
	}
}

void
alert_event_to_json(struct json *j, const struct alert_event *ev)
{
	json_object_begin(j);
	json_key(j, "rule");
	json_string(j, ev->rule_name);
	json_key(j, "metric");
	json_string(j, ev->metric);
	json_key(j, "transition");
	json_string(j, alert_transition_name(ev->transition));
	json_key(j, "status");
	json_string(j, status_of(ev->transition));
	json_key(j, "severity");
	json_string(j, severity_name(ev->severity));
	json_key(j, "previous_severity");
	json_string(j, severity_name(ev->previous));
	json_key(j, "value");
	json_number(j, ev->value);
	json_key(j, "threshold");
	json_number(j, ev->threshold);
	json_key(j, "absent");
	json_bool(j, ev->absent);
	json_key(j, "fingerprint");
	json_string(j, ev->fingerprint);
	time_pair(j, "at", ev->at_ms);
	time_pair(j, "starts_at", ev->starts_at_ms);
	time_pair(j, "ends_at", ev->ends_at_ms);
	json_key(j, "summary");
	json_string(j, ev->summary);
	json_key(j, "description");
	json_string(j, ev->description);
	json_key(j, "labels");
	json_object_begin(j);
	for (size_t i = 0; i < ev->label_count; i++) {
		json_key(j, ev->labels[i].key);
		json_string(j, ev->labels[i].value);
	}
	json_object_end(j);
	json_key(j, "throttle");
	json_string(j, ev->throttle);
	json_key(j, "throttle_causes");
	throttle_causes_to_json(j, ev->throttle_causes, ev->throttle_cause_count);
	if (ev->processes.cpu_count > 0 || ev->processes.memory_count > 0) {
		json_key(j, "processes");
		top_processes_to_json(j, &ev->processes);
	}
	json_key(j, "power_mode");
	json_string(j, ev->power_mode ? ev->power_mode : "");
	json_key(j, "board");
	json_object_begin(j);
	json_key(j, "name");
	json_string(j, ev->board ? ev->board : "");
	json_key(j, "device_id");
	json_string(j, ev->device_id ? ev->device_id : "");
	json_object_end(j);
	json_object_end(j);
}

bool
alert_event_takes_processes(const struct alert_event *ev)
{
	return !ev->restored && strcmp(status_of(ev->transition), "firing") == 0;
}

/* RSS_BYTES as people read it: "812 MiB", "2.1 GiB" */
static void
bytes_text(double rss_bytes, char *buf, size_t size)
{
	if (!isfinite(rss_bytes) || rss_bytes < 0) {
		snprintf(buf, size, "?");
	} else if (rss_bytes >= 1024.0 * 1024 * 1024) {
		snprintf(buf, size, "%.1f GiB", rss_bytes / (1024.0 * 1024 * 1024));
	} else {
		snprintf(buf, size, "%.0f MiB", rss_bytes / (1024.0 * 1024));
	}
}

void
top_processes_text(const struct top_processes *tp, bool memory, char *buf, size_t size)
{
	const struct top_process *list = memory ? tp->by_memory : tp->by_cpu;
	int count = memory ? tp->memory_count : tp->cpu_count;
	size_t at = 0;
	if (size == 0) {
		return;
	}
	buf[0] = '\0';
	for (int i = 0; i < count && at < size; i++) {
		char comm[TOP_COMM_MAX], what[32];
		snprintf(comm, sizeof(comm), "%s", list[i].comm);
		for (char *c = comm; *c; c++) {
			if ((unsigned char)*c < 0x20 || *c == 0x7f) {
				*c = '?';
			}
		}
		if (memory) {
			bytes_text(list[i].rss_bytes, what, sizeof(what));
		} else if (isfinite(list[i].cpu_pct)) {
			snprintf(what, sizeof(what), "%.0f%%", list[i].cpu_pct);
		} else {
			snprintf(what, sizeof(what), "?%%");
		}
		int n = snprintf(buf + at, size - at, "%s%s[%d] %s", i ? ", " : "", comm, (int)list[i].pid, what);
		if (n < 0 || (size_t)n >= size - at) {
			buf[at] = '\0'; /* cut after the last whole entry */
			break;
		}
		at += (size_t)n;
	}
}
