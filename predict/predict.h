/*
 * predict/: knowing before it throttles. One pipeline stage (after the
 * throttle stage) that adds, from each sample's metrics and the ones
 * before it:
 *   - the power-mode guard: nvpmodel.unexpected, jetson_clocks.active and
 *     jetson_clocks.unexpected against agent.expected_power_mode;
 *   - per thermal zone with a passive (else hot) trip: headroom.ZONE_c, and
 *     from a first-order fit of the recent curve steady_temp.ZONE_c,
 *     throttle_eta.ZONE_s and throttle_eta_error.ZONE_s (docs/prediction.md);
 *   - cooling health: fan.N.dead, and thermal resistance per power mode
 *     (cooling.resistance_c_per_w), kept across restarts in a state file.
 * Includes core/ only; agent/ wires it.
 */
#ifndef TEGRAWATCH_PREDICT_H
#define TEGRAWATCH_PREDICT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/board_info.h"
#include "core/pipeline.h"

#define PREDICT_MODE_TEXT_MAX 128

/* agent.expected_power_mode: "MAXN_SUPER", "2", "MAXN_SUPER, jetson_clocks on", "jetson_clocks on" */
struct power_mode_expectation {
	bool mode_set;                    /* a mode is expected */
	int id;                           /* its nvpmodel id, -1 when only its name is known */
	char name[NVPMODEL_NAME_MAX];     /* its name, "" when only its id is known */
	int jetson_clocks;                /* -1 no expectation, 0 off, 1 on */
	char text[PREDICT_MODE_TEXT_MAX]; /* "MAXN_SUPER (id 2), jetson_clocks on": {{expected_power_mode}} */
};

/**
 * Parses TEXT (agent.expected_power_mode) into *OUT: a mode name or id and
 * optionally "jetson_clocks on|off", separated by commas or blanks. "" sets
 * nothing. Returns 0, or -EINVAL with a sentence in ERR. Pure.
 */
int power_mode_expectation_parse(const char *text, struct power_mode_expectation *out, char *err, size_t err_size);

/**
 * Completes *E from the board's power modes (may be NULL): the id of a mode
 * given by name, the name of one given by id, and E->text. Returns 0, or
 * -ENOENT when MODES lists no such mode (E->text is still set).
 */
int power_mode_expectation_resolve(struct power_mode_expectation *e, const struct nvpmodel_conf *modes);

/**
 * What to log when MODES lacks the mode *E asks for (resolve said -ENOENT):
 * a sentence in BUF that says so, names the modes the board has and, for an
 * Orin Nano asked for a Super mode, why it may lack it (ID: the board's
 * identity, may be NULL). Pure.
 */
void power_mode_expectation_missing(const struct power_mode_expectation *e, const struct nvpmodel_conf *modes,
				    const struct board_identity *id, char *buf, size_t size);

struct predict_options {
	struct power_mode_expectation expect; /* nothing set = no guard */
	const char *state_path;               /* cooling statistics kept across restarts; NULL or "" = not kept */
};

/** The predict stage for OPTS (copied). Cannot fail. */
struct stage *predict_stage_create(const struct predict_options *opts);

#endif
