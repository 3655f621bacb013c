/*
 * Alert events: what a rules stage tells every listener on the agent's
 * fan-out (MQTT, the web server, the replay timeline, the log and exec
 * actions, webhooks). The stage that makes them (thresholds/) and those
 * that show them or act on them share only this.
 */
#ifndef TEGRAWATCH_ALERT_H
#define TEGRAWATCH_ALERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "sample.h"

enum severity {
	SEVERITY_NONE = 0,
	SEVERITY_WARNING = 1,
	SEVERITY_CRITICAL = 2,
};
#define SEVERITY_COUNT 3

/** "warning", "critical" ("none" for SEVERITY_NONE). */
const char *severity_name(enum severity s);

enum alert_transition {
	TRANSITION_PENDING,     /* inactive -> pending */
	TRANSITION_CANCELLED,   /* pending -> inactive: the condition went away before `for` */
	TRANSITION_FIRING,      /* -> firing (warning or critical) */
	TRANSITION_ESCALATED,   /* firing warning -> firing critical */
	TRANSITION_DEESCALATED, /* firing critical -> firing warning */
	TRANSITION_REPEAT,      /* still firing, `repeat` elapsed */
	TRANSITION_RESOLVED,    /* firing -> inactive */
};

/** "pending", "cancelled", "firing", "escalated", "deescalated", "repeat", "resolved". */
const char *alert_transition_name(enum alert_transition t);

struct alert_label {
	char *key;
	char *value;
};

#define ALERT_TEXT_MAX 512
#define ALERT_FINGERPRINT_LEN 16

/* The rule that made an event: defined by thresholds/, opaque to everyone else. */
struct rule;

struct alert_event {
	const char *rule_name;
	const struct alert_label *labels; /* the rule's labels */
	size_t label_count;
	const struct rule *rule; /* for the engine only */
	/*
	 * The actions the event goes to (names of configured actions): its
	 * rule's for the severity, else notify:'s; none while pending or
	 * cancelled. Each action's listener on the fan-out picks its own.
	 */
	char *const *actions;
	size_t action_count;
	const char *metric; /* the metric instance (a glob expands per metric) */
	enum alert_transition transition;
	enum severity severity; /* severity after the transition; for resolved/cancelled the last one */
	enum severity previous; /* severity before (SEVERITY_NONE when it was not firing) */
	bool absent;            /* an absent_for alert: the metric stopped arriving */
	/*
	 * Restored from the state file at start: already active, so a sink
	 * lists it without announcing a transition.
	 */
	bool restored;
	double value;                                /* NAN when absent */
	double threshold;                            /* the threshold crossed (or cleared); NAN for absent/changes */
	int64_t at_ms;                               /* sample time of the transition */
	int64_t starts_at_ms;                        /* when the alert started firing (0 while pending) */
	int64_t ends_at_ms;                          /* resolved: at_ms; otherwise 0 */
	char fingerprint[ALERT_FINGERPRINT_LEN + 1]; /* stable: hex hash of board, rule name and metric */
	char summary[ALERT_TEXT_MAX];                /* rendered template */
	char description[ALERT_TEXT_MAX];            /* rendered template, "" when none */
	char throttle[ALERT_TEXT_MAX];               /* throttle reasons when the metric is throttle.*, else "" */
	/* the same reasons as data: which zone, counter, rail or clock, its value and limit */
	struct throttle_cause throttle_causes[THROTTLE_CAUSES_MAX];
	int throttle_cause_count;
	/* what was running when it fired (alert_event_takes_processes); counts 0 when not taken */
	struct top_processes processes;
	const char *power_mode; /* the sample's power mode ("" unknown) */
	const char *board;      /* the board's name (agent.board_name) */
	const char *device_id;  /* the board's stable id (the MQTT device id) */
};

typedef void (*alert_callback)(const struct alert_event *ev, void *data);

/**
 * Writes the one JSON shape of an alert event, shared by the MQTT alerts
 * topic, the HTTP API, the event stream and `replay --json`:
 * {"rule", "metric", "transition", "status" ("firing"|"resolved"|
 * "pending"), "severity", "previous_severity", "value", "threshold",
 * "absent", "fingerprint", "at", "at_ms", "starts_at", "starts_at_ms",
 * "ends_at", "ends_at_ms" (RFC 3339 in UTC and epoch milliseconds, or
 * null), "summary", "description", "labels": {...}, "throttle", "throttle_causes": [...],
 * "power_mode", "board": {"name", "device_id"}}, and "processes" (core/sample_json.h's
 * top_processes_to_json) when the event carries what was running.
 */
void alert_event_to_json(struct json *j, const struct alert_event *ev);

/**
 * True when EV should carry what was running: it says the alert fires
 * (firing, escalated, de-escalated, repeat), and it is not an alert
 * restored from the state file (that moment is gone).
 */
bool alert_event_takes_processes(const struct alert_event *ev);

/**
 * One line of TP's list by CPU (MEMORY false: "trtexec[4242] 187%,
 * python3[17] 12%") or by resident memory ("trtexec[4242] 2.1 GiB, ...")
 * into BUF, control characters of the names as '?'; "" when the list is
 * empty. For the log line, webhook annotations and the report's text.
 */
void top_processes_text(const struct top_processes *tp, bool memory, char *buf, size_t size);

#endif
