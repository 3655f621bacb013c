/*
 * The info families (metric_dict.h): one line each, so that a family or a
 * label added here reaches /metrics, remote write and OTLP alike.
 */
#include "metric_dict.h"

#include <stddef.h>

#include "board_info.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static const struct metric_info_def info_table[] = {
	{"tegrawatch_board_info",
	 "Board identity (value 1): model, SoC, module, L4T and JetPack.",
	 false,
	 5,
	 {{"model", METRIC_INFO_MODEL},
	  {"soc", METRIC_INFO_SOC},
	  {"module", METRIC_INFO_MODULE},
	  {"l4t", METRIC_INFO_L4T},
	  {"jetpack", METRIC_INFO_JETPACK}}},
	{"tegrawatch_build_info", "The agent's version (value 1).", false, 1, {{"version", METRIC_INFO_VERSION}}},
	{"tegrawatch_power_mode_info",
	 "The nvpmodel power mode by name (value 1).",
	 true,
	 1,
	 {{"mode", METRIC_INFO_POWER_MODE}}},
};

const struct metric_info_def *
metric_dict_info(size_t *count)
{
	*count = N_OF(info_table);
	return info_table;
}

const char *
metric_info_fact(const struct metric_info_facts *facts, enum metric_info_fact fact)
{
	/* where the board's facts lie in struct board_identity */
	static const size_t board_at[] = {
		[METRIC_INFO_MODEL] = offsetof(struct board_identity, model),
		[METRIC_INFO_SOC] = offsetof(struct board_identity, soc),
		[METRIC_INFO_MODULE] = offsetof(struct board_identity, module),
		[METRIC_INFO_L4T] = offsetof(struct board_identity, l4t),
		[METRIC_INFO_JETPACK] = offsetof(struct board_identity, jetpack),
	};
	const char *s = fact == METRIC_INFO_VERSION                     ? facts->version
			: fact == METRIC_INFO_POWER_MODE                ? facts->power_mode
			: (size_t)fact < N_OF(board_at) && facts->board ? (const char *)facts->board + board_at[fact]
									: NULL;
	return s ? s : "";
}

bool
metric_info_present(const struct metric_info_def *def, const struct metric_info_facts *facts)
{
	return !def->per_sample || (def->label_count > 0 && metric_info_fact(facts, def->labels[0].fact)[0]);
}
