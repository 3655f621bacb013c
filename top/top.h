/*
 * `tegrawatch top`: the board at a glance. What one screen shows
 * (struct top_data: a sample, the board's identity, the active alerts,
 * where they came from) and the pure screen model that turns it into
 * lines of text (top_render()), shared by the full-screen terminal view
 * (term.h) and `top --once`. top_data_from_snapshot() reads the agent's
 * /api/v1/snapshot (docs/http.md) with core/json_read.h.
 * Pure: no I/O here (top_http.h and term.h do it).
 */
#ifndef TEGRAWATCH_TOP_H
#define TEGRAWATCH_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/board_info.h"
#include "core/sample.h"

#define TOP_ALERTS_MAX 32
#define TOP_TEXT_MAX 160

/* One active alert, as the snapshot lists it. */
struct top_alert {
	char rule[64];
	char metric[METRIC_NAME_MAX];
	char status[16];   /* "firing", "pending" */
	char severity[16]; /* "warning", "critical" */
	char since[24];    /* starts_at, else at: RFC 3339 */
	double value, threshold;
	char summary[TOP_TEXT_MAX];
};

struct top_data {
	struct sample *sample; /* owned; its metrics, throttle state and power mode */
	struct board_identity id;
	bool have_sample;          /* false before the first sample (or before the agent's first) */
	char ts[24];               /* the sample's time, RFC 3339 ("" unknown) */
	char source[96];           /* "agent 127.0.0.1:9474", "board /" */
	char notice[TOP_TEXT_MAX]; /* shown under the title while set: "agent ... stopped: reading the board" */
	struct top_alert alerts[TOP_ALERTS_MAX];
	int alert_count;    /* listed */
	int alerts_omitted; /* more than TOP_ALERTS_MAX */
	bool alerts_known;  /* false when reading the board itself: no rules run */
};

struct top_data *top_data_create(void);
void top_data_destroy(struct top_data *d);

/**
 * Replaces D's sample, identity and alerts with those of an
 * /api/v1/snapshot answer BODY (NUL-terminated). Returns 0, or -EINVAL
 * (D's sample and alerts then keep what they had).
 */
int top_data_from_snapshot(struct top_data *d, const char *body);

/* The views, in the order of their keys (1, 2, ...). */
enum top_view {
	TOP_VIEW_OVERVIEW,
	TOP_VIEW_THERMAL,
	TOP_VIEW_POWER,
	TOP_VIEW_ALERTS,
	TOP_VIEWS /* how many */
};

const char *top_view_name(enum top_view v);

/* How a line is drawn; without colours only TOP_STYLE_TITLE and _HEAD show (reverse, bold). */
enum top_style {
	TOP_STYLE_NORMAL,
	TOP_STYLE_TITLE, /* the top line */
	TOP_STYLE_HEAD,  /* a section's heading */
	TOP_STYLE_OK,
	TOP_STYLE_WARN,
	TOP_STYLE_CRIT,
	TOP_STYLE_DIM,
};

#define TOP_SPANS_MAX 24

/* A part of a line drawn in another style than the line's. */
struct top_span {
	int col, len;
	enum top_style style;
};

struct top_line {
	char *text; /* ASCII, at most the screen's width; never NULL */
	enum top_style style;
	struct top_span spans[TOP_SPANS_MAX];
	int span_count;
};

/* A screen: exactly HEIGHT lines of at most WIDTH characters (the last one the keys). */
struct top_screen {
	int width, height;
	struct top_line *lines;
};

/** A blank WIDTH x HEIGHT screen (each at least 1). */
struct top_screen *top_screen_create(int width, int height);
void top_screen_destroy(struct top_screen *s);

/** Empties every line of S. */
void top_screen_clear(struct top_screen *s);

/**
 * Appends TEXT to line ROW of S in STYLE (TOP_STYLE_NORMAL: the line's
 * own), cut at the screen's width. Returns the characters appended.
 */
int top_screen_add(struct top_screen *s, int row, enum top_style style, const char *text);

/** Copies SRC's lines into S from row ROW and column COL on, cut at S's edges; spans follow. */
void top_screen_blit(struct top_screen *s, int row, int col, const struct top_screen *src);

/** Fills S (its size unchanged) with view V of D. Pure. */
void top_render(struct top_screen *s, const struct top_data *d, enum top_view v);

/** The screen as plain text: each line without trailing spaces, trailing blank lines left out. Caller frees. */
char *top_screen_text(const struct top_screen *s);

#endif
