/* Inside predict/: the parts of the stage (predict.h), each pure on a sample's metrics. */
#ifndef TEGRAWATCH_PREDICT_PRIV_H
#define TEGRAWATCH_PREDICT_PRIV_H

#include "core/sample.h"
#include "predict.h"

/** Puts nvpmodel.unexpected and jetson_clocks.active/.unexpected into S as E asks. */
void mode_guard_check(const struct power_mode_expectation *e, struct sample *s);

#endif
