/* The processes: section: decoding and checks (see procs_config.h). */
#include "procs_config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/xalloc.h"
#include "proc_match.h"
#include "proc_parse.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define NAME_MAX_BYTES 64
#define UNIT_MAX_BYTES 255 /* systemd's UNIT_NAME_MAX, minus its NUL */

/* One entry as the key table decodes it. */
struct entry {
	char *name, *comm, *cmdline, *pidfile, *unit;
};

static const struct cfg_key entry_keys[] = {
	CFG_STRING("name", struct entry, name, NULL, CFG_F_REQUIRED | CFG_F_NOT_EMPTY),
	CFG_STRING("comm", struct entry, comm, NULL, CFG_F_NOT_EMPTY),
	CFG_STRING("cmdline", struct entry, cmdline, NULL, CFG_F_NOT_EMPTY),
	CFG_STRING("pidfile", struct entry, pidfile, NULL, CFG_F_NOT_EMPTY),
	CFG_STRING("unit", struct entry, unit, NULL, CFG_F_NOT_EMPTY),
};

const char *
procs_match_name(enum procs_match m)
{
	switch (m) {
	case PROCS_COMM:
		return "comm";
	case PROCS_CMDLINE:
		return "cmdline";
	case PROCS_PIDFILE:
		return "pidfile";
	case PROCS_UNIT:
		break;
	}
	return "unit";
}

bool
procs_segment(const char *name, char *buf)
{
	size_t n = strlen(name);
	if (n == 0 || n >= PROCS_SEGMENT_MAX) {
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		char c = name[i];
		c = c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
		buf[i] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '_';
	}
	buf[n] = '\0';
	return true;
}

/* the characters of a unit name (systemd.unit(5)): letters, digits, ":-_.\" and one '@' */
static bool
unit_name_ok(const char *u)
{
	size_t n = strlen(u);
	return n > 0 && n <= UNIT_MAX_BYTES && u[0] != '.' &&
	       strspn(u, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:-_.\\@") == n;
}

/* Checks the one way E says to find its processes; fills W. Reports at NODE (the entry). */
static int
check_match(struct cfg_decoder *dec, const struct cfg_node *node, const struct entry *e, size_t index,
	    struct procs_watch *w)
{
	const char *given[] = {e->comm, e->cmdline, e->pidfile, e->unit};
	int ways = 0, which = 0;
	for (int k = 0; k < 4; k++) {
		if (given[k]) {
			ways++;
			which = k;
		}
	}
	if (ways != 1) {
		cfg_report(dec, node, "processes[%zu] '%s': give exactly one of comm, cmdline, pidfile or unit (%s)",
			   index, e->name, ways ? "more than one given" : "none given");
		return -EINVAL;
	}
	const char *v = given[which];
	const struct cfg_node *at = cfg_map_get(node, procs_match_name((enum procs_match)which));
	char shown[CFG_SHOW_MAX], err[160];
	cfg_show(v, shown, sizeof(shown));
	w->match = (enum procs_match)which;
	switch (w->match) {
	case PROCS_COMM:
		if (strlen(v) > PROC_COMM_VISIBLE) {
			cfg_report(
				dec, at,
				"processes[%zu].comm: '%s' is %zu characters, but the kernel keeps the first %d of a "
				"process's name ('%.*s', as ps -o comm shows it): write those, or match the command "
				"line with cmdline:",
				index, shown, strlen(v), PROC_COMM_VISIBLE, PROC_COMM_VISIBLE, v);
			return -EINVAL;
		}
		break;
	case PROCS_CMDLINE:
		if (proc_regex_check(v, err, sizeof(err)) < 0) {
			cfg_report(dec, at, "processes[%zu].cmdline: '%s' is no regular expression: %s", index, shown,
				   err);
			return -EINVAL;
		}
		break;
	case PROCS_PIDFILE:
		if (v[0] != '/') {
			cfg_report(dec, at, "processes[%zu].pidfile: '%s' is no absolute path (\"/run/NAME.pid\")",
				   index, shown);
			return -EINVAL;
		}
		break;
	case PROCS_UNIT:
		if (!unit_name_ok(v)) {
			cfg_report(dec, at,
				   "processes[%zu].unit: '%s' is no systemd unit name (\"mosquitto.service\", "
				   "\"nvargus-daemon\")",
				   index, shown);
			return -EINVAL;
		}
		break;
	}
	size_t n = strlen(v);
	bool typed = w->match != PROCS_UNIT || strchr(v, '.');
	w->value = xmalloc(n + sizeof(".service"));
	snprintf(w->value, n + sizeof(".service"), "%s%s", v, typed ? "" : ".service");
	return 0;
}

/* The names of the entries before, right or wrong: a name taken twice is a mistake either way. */
struct seen {
	char segment[PROCS_MAX][PROCS_SEGMENT_MAX];
	const char *name[PROCS_MAX]; /* borrowed from the tree */
	size_t count;
};

/* Checks the name of E against the entries before it; fills W's name and segment. */
static int
check_name(struct cfg_decoder *dec, const struct cfg_node *node, const struct entry *e, size_t index, struct seen *seen,
	   struct procs_watch *w)
{
	const struct cfg_node *at = cfg_map_get(node, "name");
	char shown[CFG_SHOW_MAX];
	cfg_show(e->name, shown, sizeof(shown));
	bool control = false;
	for (const char *c = e->name; *c; c++) {
		control = control || (unsigned char)*c < 0x20 || *c == 0x7f;
	}
	if (control || strlen(e->name) > NAME_MAX_BYTES || !procs_segment(e->name, w->segment)) {
		cfg_report(dec, at, "processes[%zu].name: '%s' must be 1 to %d characters without control characters",
			   index, shown, PROCS_SEGMENT_MAX - 1);
		return -EINVAL;
	}
	for (size_t i = 0; i < seen->count; i++) {
		if (strcmp(seen->segment[i], w->segment) == 0) {
			char other[CFG_SHOW_MAX];
			cfg_show(seen->name[i], other, sizeof(other));
			cfg_report(dec, at,
				   "processes[%zu].name: '%s' and '%s' (processes[%zu]) both make the metrics "
				   "process.%s.*: give each entry a name of its own",
				   index, shown, other, i, w->segment);
			return -EINVAL;
		}
	}
	memcpy(seen->segment[seen->count], w->segment, PROCS_SEGMENT_MAX);
	seen->name[seen->count++] = at->value;
	w->name = xstrdup(e->name);
	return 0;
}

static void
watch_free(struct procs_watch *w)
{
	free(w->name);
	free(w->value);
	free(w->where);
}

int
procs_config_decode(struct cfg_decoder *dec, const struct cfg_node *node, struct procs_config *cfg)
{
	procs_config_free(cfg);
	if (cfg_node_is_null(node)) {
		return 0; /* "processes:" with nothing under it: none watched */
	}
	if (node->type != CFG_SEQ) {
		char got[CFG_SHOW_MAX + 8];
		cfg_describe(node, got, sizeof(got));
		cfg_report(dec, node, "processes: expected a list of {name, comm | cmdline | pidfile | unit}, got %s",
			   got);
		return -EINVAL;
	}
	size_t before = dec->diags->count;
	if (node->count > PROCS_MAX) {
		cfg_report(dec, node->items[PROCS_MAX], "processes: at most %d entries (this is entry %d)", PROCS_MAX,
			   PROCS_MAX + 1);
	}
	cfg->items = xcalloc(node->count ? node->count : 1, sizeof(*cfg->items));
	struct seen *seen = xcalloc(1, sizeof(*seen));
	for (size_t i = 0; i < node->count && i < PROCS_MAX; i++) {
		const struct cfg_node *item = node->items[i];
		char context[32];
		snprintf(context, sizeof(context), "processes[%zu]", i);
		struct cfg_decoder sub = {dec->diags, context, dec->user};
		struct entry e = {0};
		cfg_apply_defaults(entry_keys, N_OF(entry_keys), &e);
		struct procs_watch w = {0};
		if (cfg_decode_map(&sub, item, entry_keys, N_OF(entry_keys), &e, NULL) == 0 &&
		    check_name(dec, item, &e, i, seen, &w) == 0 && check_match(dec, item, &e, i, &w) == 0) {
			char where[512];
			snprintf(where, sizeof(where), "%s:%d:%d", item->file ? item->file : "", item->line,
				 item->column);
			w.where = xstrdup(where);
			cfg->items[cfg->count++] = w;
		} else {
			watch_free(&w);
		}
		cfg_free_strings(entry_keys, N_OF(entry_keys), &e);
	}
	free(seen);
	return dec->diags->count == before ? 0 : -EINVAL;
}

void
procs_config_free(struct procs_config *cfg)
{
	for (size_t i = 0; i < cfg->count; i++) {
		watch_free(&cfg->items[i]);
	}
	free(cfg->items);
	*cfg = (struct procs_config){0};
}

bool
procs_config_equal(const struct procs_config *a, const struct procs_config *b)
{
	if (a->count != b->count) {
		return false;
	}
	for (size_t i = 0; i < a->count; i++) {
		const struct procs_watch *x = &a->items[i], *y = &b->items[i];
		if (x->match != y->match || strcmp(x->name, y->name) != 0 || strcmp(x->value, y->value) != 0) {
			return false;
		}
	}
	return true;
}
