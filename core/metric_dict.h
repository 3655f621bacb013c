/*
 * The metric dictionary: one table (metric_dict.c) that says, for every
 * canonical name pattern of docs/metrics.md, its unit, kind, Prometheus
 * family, scale, labels and help, its Home Assistant entity, and whether
 * rules may name it. Every output reads it: /metrics (web/prom_format.c),
 * the MQTT state/limits split and Home Assistant discovery (mqtt/), the
 * report's rails, the rule checker's catalogue (thresholds/catalog.c),
 * and any sink that must name metrics as /metrics does (remote write,
 * OTLP: metric_dict_series()). Pure: no I/O.
 *
 * Patterns are written as in docs/metrics.md: lower-case letters, digits,
 * '_' and '.' stand for themselves; "N" is one or more digits; any other
 * upper-case word (SENSOR, RAIL, NAME) is one segment of [a-z0-9_]+.
 * Placeholders become labels in order, the longest text first
 * ("temp.a_c_c" gives sensor "a_c").
 */
#ifndef TEGRAWATCH_METRIC_DICT_H
#define TEGRAWATCH_METRIC_DICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "metric_attrs.h"
#include "metrics.h"

#define METRIC_LABELS_MAX 2
/* a series' labels: the line's, and what metric_attrs adds to a METRIC_LABEL_ATTRS label */
#define METRIC_SERIES_LABELS_MAX (METRIC_LABELS_MAX + METRIC_ATTRS_MAX - 1)
/*
 * A label's value that says: the placeholder's text, unless a source said
 * the real text behind it and more labels (core/metric_attrs.h: a mount
 * point's path, its fstype and device): then those.
 */
#define METRIC_LABEL_ATTRS "\x01attrs"

enum metric_kind {
	METRIC_KIND_GAUGE,   /* a value now */
	METRIC_KIND_COUNTER, /* only grows while the agent runs (from 0 again after a restart): rate() it */
	METRIC_KIND_LIMIT,   /* a gauge that moves only with a setting, the power mode or the hardware */
};

struct metric_label {
	const char *name;
	const char *value; /* NULL: the text of the pattern's next placeholder; METRIC_LABEL_ATTRS: see there */
};

/* How Home Assistant shows a metric (mqtt/mqtt_ha.c); NAME NULL = no entity. */
struct metric_ha {
	const char *name;         /* "%s temperature": %s = the first placeholder's text, see UPPER */
	const char *device_class; /* NULL: none */
	const char *unit;
	int8_t precision; /* suggested_display_precision, in UNIT */
	int8_t exp10;     /* shown = value x 10^EXP10 (mW shown in W: -3) */
	bool upper;       /* the placeholder upper-cased ("VDD_IN power"); else capitalised, upper when <= 4 chars */
	bool binary;      /* a binary_sensor: ON at 1 or more, OFF below (UNIT NULL) */
};

/* One line of the table. */
struct metric_def {
	const char *pattern;
	const char *unit; /* the canonical unit, as docs/metrics.md's unit column writes it */
	enum metric_kind kind;
	const char *family;    /* Prometheus family; NULL: "tegrawatch_" + the name, '.' as '_' (exact names only) */
	double scale;          /* value x SCALE = the family's base unit */
	const char *base_unit; /* UCUM code of the scaled value ("Cel", "Hz", "W", "By", "1"): OTLP's unit */
	struct metric_label labels[METRIC_LABELS_MAX];
	const char *help;
	struct metric_ha ha;
	bool no_rules; /* added after the rules stage ran (webhook.*): a rule can never see it */
};

/** The table, in docs/metrics.md order; *COUNT entries. */
const struct metric_def *metric_dict_table(size_t *count);

/** The first entry whose pattern matches the canonical NAME, or NULL. */
const struct metric_def *metric_dict_find(const char *name);

/**
 * What it means that NAME has no value, in words, where it means something
 * ("will not throttle at this load" for throttle_eta.SENSOR_s: a forecast
 * that is gone is good news); NULL where an absent value says nothing.
 */
const char *metric_dict_absent_words(const char *name);

/** The entry whose pattern is exactly PATTERN ("power.RAIL.mw"), or NULL. */
const struct metric_def *metric_dict_by_pattern(const char *pattern);

/**
 * Writes the text of placeholder K (from 0) of NAME under DEF's pattern
 * into BUF ("power.vdd_in.mw", K 0: "vdd_in"). False when NAME does not
 * match or has no such placeholder, or BUF is too small.
 */
bool metric_dict_capture(const struct metric_def *def, const char *name, size_t k, char *buf, size_t size);

/* What a sink needs to write one metric as /metrics writes it. */
struct metric_series {
	const struct metric_def *def; /* NULL: a name the table does not know */
	char family[METRIC_NAME_MAX + 16];
	enum metric_kind kind;
	const char *base_unit; /* "" when unknown */
	const char *help;
	double scale; /* value x SCALE = what the family carries */
	size_t label_count;
	const char *label_names[METRIC_SERIES_LABELS_MAX];
	char label_values[METRIC_SERIES_LABELS_MAX][METRIC_LABEL_VALUE_MAX];
};

/**
 * The series of the canonical metric NAME: family, labels, scale, kind,
 * unit, help. Names the table does not know keep a family of their own:
 * "tegrawatch_agent_X" for agent.X (a counter when X ends in _total),
 * else "tegrawatch_" + NAME with every character outside [a-z0-9_] as
 * '_', a gauge, unscaled. Returns false (a sink leaves the metric out)
 * for an empty name and for a family /metrics writes itself
 * (the info families below, tegrawatch_alerts...).
 */
bool metric_dict_series(const char *name, struct metric_series *out);

/** As metric_dict_series() when the entry is known already (DEF from metric_dict_classify(), may be NULL). */
bool metric_dict_describe(const struct metric_def *def, const char *name, struct metric_series *out);

/*
 * The entries of a metric set's items, kept for its layout (the names at
 * each index, metric_set.layout): a sample with the same names as the one
 * before costs one compare. A set whose names changed, or that was never
 * cleared, is looked up again. One per consumer and thread; starts zeroed.
 */
struct metric_dict_cache {
	uint64_t layout;
	size_t count;
	size_t misses; /* how many times names were looked up again (tests, benchmarks) */
	const struct metric_def *defs[METRIC_SET_MAX];
};

/** The entry of each item of SET (NULL: unknown name), index for index; valid until C is used again. */
const struct metric_def *const *metric_dict_classify(struct metric_dict_cache *c, const struct metric_set *set);

/*
 * The info families (metric_dict_info.c): value 1, what they say is in
 * their labels (tegrawatch_board_info{model,soc,module,l4t,jetpack}).
 * /metrics (web/prom_format.c) and remote write (fleet/rw_encode.c) write
 * each as a series; OTLP (fleet/otlp_encode.c) the per-sample ones, as its
 * resource says the fixed ones in OpenTelemetry's words. A label's value
 * is a fact about the board, the agent or the sample.
 */
enum metric_info_fact {
	METRIC_INFO_MODEL, /* the board's (core/board_info.h) */
	METRIC_INFO_SOC,
	METRIC_INFO_MODULE,
	METRIC_INFO_L4T,
	METRIC_INFO_JETPACK,
	METRIC_INFO_VERSION,    /* the agent's */
	METRIC_INFO_POWER_MODE, /* the sample's */
};

struct board_identity;

/* The facts at hand; NULL and "" are unknown. */
struct metric_info_facts {
	const struct board_identity *board;
	const char *version;
	const char *power_mode;
};

#define METRIC_INFO_LABELS_MAX 5

struct metric_info_label {
	const char *name;
	enum metric_info_fact fact;
};

struct metric_info_def {
	const char *family;
	const char *help;
	/* its facts come with each sample, and a sample without them has none of it; else fixed from the start */
	bool per_sample;
	size_t label_count;
	struct metric_info_label labels[METRIC_INFO_LABELS_MAX];
};

/** The info families, in the order /metrics writes them; *COUNT entries. */
const struct metric_info_def *metric_dict_info(size_t *count);

/** The text of FACT in FACTS: "" when unknown. */
const char *metric_info_fact(const struct metric_info_facts *facts, enum metric_info_fact fact);

/**
 * Whether DEF has a series for FACTS: a fixed family always (its unknown
 * facts as ""), a per-sample one when its first fact is known (no power
 * mode, no tegrawatch_power_mode_info).
 */
bool metric_info_present(const struct metric_info_def *def, const struct metric_info_facts *facts);

#endif
