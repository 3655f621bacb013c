/* The board identity as JSON, for every output that shows it. */
#include "board_info.h"

#include <string.h>

#include "json_read.h"

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

static void
board_member(struct json_reader *r, const char *key, void *data)
{
	struct board_identity *id = data;
	struct {
		const char *key;
		char *field;
		size_t size;
	} fields[] = {
		{"model", id->model, sizeof(id->model)},       {"soc", id->soc, sizeof(id->soc)},
		{"module", id->module, sizeof(id->module)},    {"l4t", id->l4t, sizeof(id->l4t)},
		{"jetpack", id->jetpack, sizeof(id->jetpack)},
	};
	json_skip_ws(r);
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (strcmp(key, fields[i].key) == 0 && *r->p == '"') {
			json_read_string(r, fields[i].field, fields[i].size, NULL);
			return;
		}
	}
	json_skip_value(r);
}

void
board_identity_from_json(struct json_reader *r, struct board_identity *id)
{
	memset(id, 0, sizeof(*id));
	json_each_member(r, board_member, id);
}
