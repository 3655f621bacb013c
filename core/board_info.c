/* The board identity as JSON, for every output that shows it. */
#include "board_info.h"

void
board_identity_to_json(struct json *j, const struct board_identity *id, bool null_unknown)
{
	const char *const values[] = {id->model, id->soc, id->module, id->l4t, id->jetpack};
	static const char *const keys[] = {"model", "soc", "module", "l4t", "jetpack"};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_key(j, keys[i]);
		if (null_unknown && !values[i][0]) {
			json_null(j);
		} else {
			json_string(j, values[i]);
		}
	}
}
