/*
 * Decoding a cfg_tree into C structs through declarative key tables: one
 * table per map (name, kind, where the value goes, its default as text,
 * its range). Defaults live in the tables only: they are parsed by the
 * same code as the file. Every mistake becomes a located diagnostic and
 * decoding goes on, so one run reports them all. Pure: no I/O.
 */
#ifndef TEGRAWATCH_CFG_DECODE_H
#define TEGRAWATCH_CFG_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cfg_tree.h"
#include "diag.h"

/* Room for a value quoted in a message: long values are cut with "...". */
#define CFG_SHOW_MAX 48

enum cfg_kind {
	CFG_K_STRING,   /* char *, malloc'ed; the old value is freed */
	CFG_K_DURATION, /* int64_t milliseconds */
	CFG_K_NUMBER,   /* double */
	CFG_K_CHOICE,   /* int (or an enum of int size): values[i] of the matching choices[i] */
	CFG_K_CUSTOM,   /* decode() does the work; the table only names the key */
	CFG_K_INT,      /* int: a whole number in [min, max] */
	CFG_K_RENAMED,  /* an old name of the key renamed_to: still read, with a warning */
};

/* Flags of a key. */
#define CFG_F_REQUIRED 0x1u  /* missing key is an error */
#define CFG_F_NOT_EMPTY 0x2u /* CFG_K_STRING: "" is refused */
#define CFG_F_ZERO_OK 0x4u   /* CFG_K_DURATION: 0 is allowed below min_ms (0 = off) */
#define CFG_F_RELOADED 0x8u  /* a SIGHUP reload applies it (see config_restart_changes) */
/*
 * CFG_K_STRING: a file holding a secret. "credential:NAME" means the
 * systemd credential NAME: $CREDENTIALS_DIRECTORY/NAME (LoadCredential= in
 * the unit), so a root-only 0600 file works under DynamicUser=.
 */
#define CFG_F_SECRET_FILE 0x10u
#define CFG_CREDENTIAL_PREFIX "credential:"

struct cfg_decoder;

struct cfg_key {
	const char *name;
	enum cfg_kind kind;
	size_t offset;   /* where the value goes in the decoded object */
	const char *def; /* default, written as in the file; NULL = none */
	unsigned flags;
	int64_t min_ms, max_ms;     /* CFG_K_DURATION range (max 0 = no limit) */
	double min, max;            /* CFG_K_NUMBER range (min == max = no limit) */
	const char *const *choices; /* CFG_K_CHOICE: NULL-terminated names */
	const int *values;          /* CFG_K_CHOICE: the value of each name */
	/* CFG_K_CUSTOM: decodes NODE into OBJ; reports through dec. Returns 0 or -EINVAL. */
	int (*decode)(struct cfg_decoder *dec, const struct cfg_node *node, void *obj);
	/* CFG_K_RENAMED: the key's name now (in the same table) */
	const char *renamed_to;
	/* CFG_K_CUSTOM, optional: the value in A equals the one in B (reload comparisons) */
	bool (*equal)(const void *a, const void *b);
	/* CFG_K_CUSTOM, optional: frees what decode() allocated in OBJ (cfg_free_strings) */
	void (*release)(void *obj);
};

/* One-line table entries: the member FIELD of TYPE receives the value. */
#define CFG_STRING(name_, type_, field_, def_, flags_)                                                                 \
	{                                                                                                              \
		.name = (name_), .kind = CFG_K_STRING, .offset = offsetof(type_, field_), .def = (def_),               \
		.flags = (flags_)                                                                                      \
	}
#define CFG_DURATION(name_, type_, field_, def_, flags_, min_ms_, max_ms_)                                             \
	{                                                                                                              \
		.name = (name_), .kind = CFG_K_DURATION, .offset = offsetof(type_, field_), .def = (def_),             \
		.flags = (flags_), .min_ms = (min_ms_), .max_ms = (max_ms_)                                            \
	}
#define CFG_CHOICE(name_, type_, field_, def_, flags_, choices_, values_)                                              \
	{                                                                                                              \
		.name = (name_), .kind = CFG_K_CHOICE, .offset = offsetof(type_, field_), .def = (def_),               \
		.flags = (flags_), .choices = (choices_), .values = (values_)                                          \
	}
#define CFG_INT(name_, type_, field_, def_, flags_, min_, max_)                                                        \
	{                                                                                                              \
		.name = (name_), .kind = CFG_K_INT, .offset = offsetof(type_, field_), .def = (def_),                  \
		.flags = (flags_), .min = (min_), .max = (max_)                                                        \
	}
/*
 * A key renamed in a later release: files (and TEGRAWATCH_ variables) that
 * use OLD keep working, with a warning naming NEW (docs/upgrading.md).
 */
#define CFG_RENAMED(old_, new_)                                                                                        \
	{                                                                                                              \
		.name = (old_), .kind = CFG_K_RENAMED, .renamed_to = (new_)                                            \
	}
/* Booleans are choices: true/false, yes/no, on/off into an int member. */
extern const char *const cfg_bool_names[];
extern const int cfg_bool_values[];
#define CFG_BOOL(name_, type_, field_, def_) CFG_CHOICE(name_, type_, field_, def_, 0, cfg_bool_names, cfg_bool_values)
#define CFG_CUSTOM(name_, decode_)                                                                                     \
	{                                                                                                              \
		.name = (name_), .kind = CFG_K_CUSTOM, .decode = (decode_)                                             \
	}

/* Where messages go, and what the map being decoded is called in them. */
struct cfg_decoder {
	struct diag_list *diags;
	const char *context; /* "agent", "rule 'soc-hot'" ...: for "unknown key 'x' in CONTEXT" */
	void *user;          /* for custom decoders */
};

/**
 * Decodes MAP (a CFG_MAP; anything else is reported) with the NKEYS keys
 * of TABLE into OBJ: defaults first, then every key present. Unknown keys
 * are reported with a "did you mean" when one is close. *PRESENT (may be
 * NULL) gets bit i set for each TABLE[i] found in MAP (at most 64 keys).
 * Returns 0, or -EINVAL when anything was reported.
 */
int cfg_decode_map(struct cfg_decoder *dec, const struct cfg_node *map, const struct cfg_key *table, size_t nkeys,
		   void *obj, uint64_t *present);

/** Writes every default of TABLE into OBJ (CFG_K_CUSTOM keys are left alone). */
void cfg_apply_defaults(const struct cfg_key *table, size_t nkeys, void *obj);

/** The entry KEY stands for in TABLE: itself, or the key a CFG_K_RENAMED entry names (NULL if absent). */
const struct cfg_key *cfg_key_target(const struct cfg_key *table, size_t nkeys, const struct cfg_key *key);

/**
 * Decodes TEXT (as if written unquoted in a file; "" allowed for strings)
 * for KEY into OBJ. Problems are reported at FILE:LINE:COL without a key
 * name prefix. Used for environment overrides. Returns 0 or -EINVAL.
 */
int cfg_decode_text(struct cfg_decoder *dec, const struct cfg_key *key, const char *text, const char *file, int line,
		    int column, void *obj);

/**
 * Frees the CFG_K_STRING members of OBJ described by TABLE, and what the
 * CFG_K_CUSTOM keys with a release() hold.
 */
void cfg_free_strings(const struct cfg_key *table, size_t nkeys, void *obj);

/**
 * Parses a duration: "0", or whole numbers with units from largest to
 * smallest, each at most once ("1d", "1h30m", "2m5s", "250ms"). Returns 0
 * and *RET_MS, or -EINVAL with a message (without the value's location)
 * in ERR.
 */
int cfg_parse_duration(const char *text, int64_t *ret_ms, char *err, size_t err_size);

/** Formats MS as the shortest duration text ("1h30m", "250ms", "0"). */
void cfg_format_duration(int64_t ms, char *buf, size_t size);

/**
 * Parses a plain decimal number: [+-]digits[.digits][e[+-]digits] (also
 * ".5"); no hex, inf, nan or '_'. Returns true and *RET when TEXT is one.
 */
bool cfg_parse_number(const char *text, double *ret);

/** True for a scalar that YAML reads as null: empty, "~", "null" (unquoted). */
bool cfg_node_is_null(const struct cfg_node *node);

/** Describes NODE for "got ..." in messages: "'ten'", "a map", "a list", "nothing". */
void cfg_describe(const struct cfg_node *node, char *buf, size_t size);

/** Copies TEXT for a message: control bytes become '?', long text is cut with "...". */
void cfg_show(const char *text, char *buf, size_t size);

/** Damerau-Levenshtein distance (optimal string alignment), ASCII case ignored. */
size_t cfg_edit_distance(const char *a, const char *b);

/**
 * The candidate closest to WORD: distance <= 2 and smaller than WORD's
 * length, or (failing that) a candidate WORD is a prefix of (3 characters
 * at least). NULL when none.
 */
const char *cfg_suggest(const char *word, const char *const *candidates, size_t n);

/**
 * Reports an unknown KEY node: "unknown key 'x' in CONTEXT (did you mean
 * 'y'?)", or with the list of the known keys when none is close.
 */
void cfg_report_unknown_key(struct cfg_decoder *dec, const struct cfg_node *key, const char *const *known, size_t n);

/** Adds a message located at NODE (its file, line and column). */
void cfg_report(struct cfg_decoder *dec, const struct cfg_node *node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * Decodes a string or a list of strings into a NULL-terminated array of
 * malloc'ed strings (an empty list gives a one-slot array holding NULL,
 * never NULL). WHAT names one item in messages ("an action name").
 * Returns 0 and *RET and *RET_COUNT, or -EINVAL after reporting.
 */
int cfg_decode_string_list(struct cfg_decoder *dec, const struct cfg_node *node, const char *key, const char *what,
			   char ***ret, size_t *ret_count);

/** Frees an array made by cfg_decode_string_list(); NULL is a no-op. */
void cfg_free_string_list(char **list);

/** malloc'ed copy of S; aborts when out of memory, like diag_add(). */
char *cfg_strdup(const char *s);

/*
 * A configuration section owned by the module that uses it (web/, the
 * MQTT sink, ...): its key table, and the checks that span keys or look at
 * the file system. The loader decodes every section and runs every
 * validate(), so `tegrawatch check` refuses what `run` would refuse.
 */
struct cfg_place;

struct cfg_section {
	const char *name; /* the top-level key, "web" */
	const struct cfg_key *keys;
	size_t key_count;
	/*
	 * Optional: checks OBJ (decoded, environment applied). Reports each
	 * mistake with cfg_report_key(). Returns 0 or -EINVAL.
	 */
	int (*validate)(const void *obj, const struct cfg_place *place, struct diag_list *diags);
};

/* Where a section's settings came from, for messages after decoding. */
struct cfg_place {
	const char *section;        /* "web" */
	const struct cfg_node *map; /* the section in the file, NULL when absent */
	const char *file;           /* the main file ("" when none) */
	bool environment;           /* TEGRAWATCH_SECTION_KEY overrides were applied */
};

/**
 * Reports a mistake in KEY of the section at PLACE where the value was
 * set: its environment variable when that overrides it, its value in the
 * file, else the section's key (or the file) when KEY was left at its default.
 * The message names the setting itself ("web.listen: ...").
 */
void cfg_report_key(struct diag_list *diags, const struct cfg_place *place, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/** Environment variable name for SECTION.KEY: TEGRAWATCH_SECTION_KEY, upper case. */
void cfg_env_name(const char *section, const char *key, char *buf, size_t size);

#endif
