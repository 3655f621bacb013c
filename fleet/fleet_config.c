/* The remote_write: and otlp: sections: key tables, defaults and checks (no libcurl here). */
#include "fleet_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/cfg_headers.h"
#include "core/metrics.h"
#include "core/readfile.h"
#include "core/url.h"
#include "core/xalloc.h"

#define LABELS_MAX 32
#define SECRET_FILE_MAX 4096

/* Labels the sinks set themselves. */
static const char *const reserved_labels[] = {"instance", "job", "board"};

static const char *const compression_names[] = {"gzip", "none", NULL};
static const int compression_values[] = {FLEET_COMPRESSION_GZIP, FLEET_COMPRESSION_NONE};

/* ---- metrics: and exclude: (globs) ---- */

static int
decode_globs(struct cfg_decoder *dec, const struct cfg_node *node, const char *key, char ***list, size_t *count)
{
	char **got;
	size_t n;
	if (cfg_decode_string_list(dec, node, key, "a metric name or glob", &got, &n) < 0) {
		return -EINVAL;
	}
	cfg_free_string_list(*list);
	*list = n ? got : NULL;
	*count = n;
	if (!n) {
		cfg_free_string_list(got);
	}
	return 0;
}

static int
decode_metrics(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct fleet_config *cfg = obj;
	return decode_globs(dec, node, "metrics", &cfg->metrics, &cfg->metric_count);
}

static int
decode_exclude(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct fleet_config *cfg = obj;
	return decode_globs(dec, node, "exclude", &cfg->exclude, &cfg->exclude_count);
}

static bool
lists_equal(char *const *x, char *const *y)
{
	for (; x && y && *x && *y; x++, y++) {
		if (strcmp(*x, *y) != 0) {
			return false;
		}
	}
	return (!x || !*x) && (!y || !*y);
}

static bool
metrics_equal(const void *a, const void *b)
{
	return lists_equal(((const struct fleet_config *)a)->metrics, ((const struct fleet_config *)b)->metrics);
}

static bool
exclude_equal(const void *a, const void *b)
{
	return lists_equal(((const struct fleet_config *)a)->exclude, ((const struct fleet_config *)b)->exclude);
}

static void
metrics_release(void *obj)
{
	struct fleet_config *cfg = obj;
	cfg_free_string_list(cfg->metrics);
	cfg->metrics = NULL;
	cfg->metric_count = 0;
}

static void
exclude_release(void *obj)
{
	struct fleet_config *cfg = obj;
	cfg_free_string_list(cfg->exclude);
	cfg->exclude = NULL;
	cfg->exclude_count = 0;
}

/* ---- labels: {name: value} ---- */

/* Prometheus label names: [a-zA-Z_][a-zA-Z0-9_]*, and "__" is Prometheus's own. */
static bool
label_name_ok(const char *s)
{
	if (!(isalpha((unsigned char)s[0]) || s[0] == '_') || strncmp(s, "__", 2) == 0) {
		return false;
	}
	for (const char *p = s; *p; p++) {
		if (!isalnum((unsigned char)*p) && *p != '_') {
			return false;
		}
	}
	return true;
}

static void
labels_release(void *obj)
{
	struct fleet_config *cfg = obj;
	for (size_t i = 0; i < cfg->label_count; i++) {
		free(cfg->label_names[i]);
		free(cfg->label_values[i]);
	}
	free(cfg->label_names);
	free(cfg->label_values);
	cfg->label_names = cfg->label_values = NULL;
	cfg->label_count = 0;
}

static int
decode_labels(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct fleet_config *cfg = obj;
	size_t before = dec->diags->count;
	char got[CFG_SHOW_MAX + 8], shown[CFG_SHOW_MAX];
	if (node->type != CFG_MAP || node->count > LABELS_MAX) {
		cfg_describe(node, got, sizeof(got));
		cfg_report(dec, node, "labels: expected a map of at most %d label names to values, got %s", LABELS_MAX,
			   node->type == CFG_MAP ? "more" : got);
		return -EINVAL;
	}
	labels_release(cfg);
	cfg->label_names = xcalloc(node->count + 1, sizeof(char *));
	cfg->label_values = xcalloc(node->count + 1, sizeof(char *));
	for (size_t i = 0; i < node->count; i++) {
		const struct cfg_node *k = node->keys[i], *v = node->items[i];
		cfg_show(k->value, shown, sizeof(shown));
		bool reserved = false;
		for (size_t r = 0; r < sizeof(reserved_labels) / sizeof(reserved_labels[0]); r++) {
			reserved = reserved || strcmp(k->value, reserved_labels[r]) == 0;
		}
		if (!label_name_ok(k->value) || reserved) {
			cfg_report(
				dec, k,
				reserved ? "labels: '%s' is set by tegrawatch itself (instance, job, board)"
					 : "labels: '%s' is not a label name (a letter or _, then letters, digits, _; "
					   "not __)",
				shown);
			continue;
		}
		if (v->type != CFG_SCALAR || cfg_node_is_null(v)) {
			cfg_describe(v, got, sizeof(got));
			cfg_report(dec, v, "labels: '%s': expected a text value, got %s", shown, got);
			continue;
		}
		cfg->label_names[cfg->label_count] = xstrdup(k->value);
		cfg->label_values[cfg->label_count] = xstrdup(v->value);
		cfg->label_count++;
	}
	if (dec->diags->count != before) {
		labels_release(cfg);
		return -EINVAL;
	}
	return 0;
}

static bool
labels_equal(const void *a, const void *b)
{
	const struct fleet_config *x = a, *y = b;
	if (x->label_count != y->label_count) {
		return false;
	}
	for (size_t i = 0; i < x->label_count; i++) {
		if (strcmp(x->label_names[i], y->label_names[i]) != 0 ||
		    strcmp(x->label_values[i], y->label_values[i]) != 0) {
			return false;
		}
	}
	return true;
}

/* ---- headers: {Name: value} ---- */

#define BODY_WHY "it tells the receiver how the body is encoded"
#define CLIENT_WHY "the HTTP client sets it from the URL and the body"
/* What every request of a sink carries already (push.c, core/http_client.c); Authorization: fleet_validate(). */
#define REQUEST_HEADERS                                                                                                \
	{"Content-Type", BODY_WHY}, {"Content-Encoding", BODY_WHY},                                                    \
		{"User-Agent", "it names the agent and its version (tegrawatch/VERSION)"}, {"Host", CLIENT_WHY},       \
		{"Content-Length", CLIENT_WHY}, {"Transfer-Encoding", CLIENT_WHY}, {"Connection", CLIENT_WHY},         \
	{                                                                                                              \
		"Expect", CLIENT_WHY                                                                                   \
	}

static const struct cfg_reserved_header remote_write_reserved[] = {
	REQUEST_HEADERS,
	{"X-Prometheus-Remote-Write-Version", BODY_WHY},
};
static const struct cfg_reserved_header otlp_reserved[] = {REQUEST_HEADERS};

static int
decode_remote_write_headers(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct fleet_config *cfg = obj;
	return cfg_decode_headers(dec, node, remote_write_reserved,
				  sizeof(remote_write_reserved) / sizeof(remote_write_reserved[0]), &cfg->headers,
				  &cfg->header_count);
}

static int
decode_otlp_headers(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct fleet_config *cfg = obj;
	return cfg_decode_headers(dec, node, otlp_reserved, sizeof(otlp_reserved) / sizeof(otlp_reserved[0]),
				  &cfg->headers, &cfg->header_count);
}

static bool
headers_equal(const void *a, const void *b)
{
	const struct fleet_config *x = a, *y = b;
	return cfg_headers_equal(x->headers, x->header_count, y->headers, y->header_count);
}

static void
headers_release(void *obj)
{
	struct fleet_config *cfg = obj;
	cfg_headers_free(cfg->headers, cfg->header_count);
	cfg->headers = NULL;
	cfg->header_count = 0;
}

/* ---- the key tables ---- */

#define T struct fleet_config
/* clang-format off */
#define COMMON_KEYS(records)                                                                                           \
	CFG_STRING("url", T, url, "", 0),                                                                              \
	CFG_DURATION("timeout", T, timeout_ms, "30s", 0, 100, 600 * 1000),                                             \
	CFG_INT("batch_samples", T, batch_samples, "100", 0, 1, 10000),                                                \
	CFG_DURATION("batch_interval", T, batch_interval_ms, "10s", CFG_F_ZERO_OK, 100, 3600 * 1000),                  \
	CFG_DURATION("interval", T, interval_ms, "0", CFG_F_ZERO_OK, 10, 3600 * 1000),                                 \
	{.name = "metrics", .kind = CFG_K_CUSTOM, .decode = decode_metrics, .equal = metrics_equal,                    \
	 .release = metrics_release},                                                                                  \
	{.name = "exclude", .kind = CFG_K_CUSTOM, .decode = decode_exclude, .equal = exclude_equal,                    \
	 .release = exclude_release},                                                                                  \
	{.name = "labels", .kind = CFG_K_CUSTOM, .decode = decode_labels, .equal = labels_equal,                       \
	 .release = labels_release},                                                                                   \
	CFG_STRING("username", T, username, "", 0),                                                                    \
	CFG_STRING("password_file", T, password_file, "", CFG_F_SECRET_FILE),                                          \
	CFG_STRING("bearer_token_file", T, bearer_token_file, "", CFG_F_SECRET_FILE),                                  \
	CFG_STRING("ca_file", T, ca_file, "", 0),                                                                      \
	CFG_STRING("cert_file", T, cert_file, "", 0),                                                                  \
	CFG_STRING("key_file", T, key_file, "", CFG_F_SECRET_FILE),                                                    \
	CFG_DURATION("backoff_base", T, backoff_base_ms, "1s", 0, 100, 3600 * 1000),                                   \
	CFG_DURATION("backoff_cap", T, backoff_cap_ms, "60s", 0, 1000, 24 * 3600 * 1000),                              \
	CFG_INT("spool_records", T, spool_records, records, 0, 10, 10000000),                                          \
	CFG_STRING("spool_file", T, spool_file, "", 0),                                                                \
	CFG_INT("spool_file_max_mb", T, spool_file_max_mb, "64", 0, 1, 4096)

#define HEADERS_KEY(decode_)                                                                                           \
	{.name = "headers", .kind = CFG_K_CUSTOM, .decode = (decode_), .equal = headers_equal,                         \
	 .release = headers_release}

static const struct cfg_key remote_write_keys[] = {
	COMMON_KEYS("3600"),
	CFG_STRING("job", T, job, "tegrawatch", CFG_F_NOT_EMPTY),
	HEADERS_KEY(decode_remote_write_headers),
};

static const struct cfg_key otlp_keys[] = {
	COMMON_KEYS("3600"),
	CFG_CHOICE("compression", T, compression, "gzip", 0, compression_names, compression_values),
	HEADERS_KEY(decode_otlp_headers),
};
/* clang-format on */
#undef T

/* ---- checks ---- */

/* A configured URL's problem, with what to use instead of credentials in it. */
static const char *
url_problem_here(const char *url)
{
	const char *problem = url_problem(url);
	return problem == url_has_credentials
		       ? "credentials in the URL would be logged and shown: use username and password_file"
		       : problem;
}

int
fleet_read_secret(const char *path, char **out, char *why, size_t why_size)
{
	char *text;
	size_t len;
	int r = readfile_all(path, SECRET_FILE_MAX, &text, &len, NULL);
	if (r < 0) {
		snprintf(why, why_size, "%s",
			 r == -EINVAL  ? "not a regular file"
			 : r == -EFBIG ? "larger than 4 KiB"
				       : strerror(-r));
		return r;
	}
	len = strcspn(text, "\r\n");
	for (size_t i = 0; i < len && r == 0; i++) {
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f) {
			snprintf(why, why_size, "its first line holds a control character");
			r = -EINVAL;
		}
	}
	if (r == 0 && len == 0) {
		snprintf(why, why_size, "its first line is empty");
		r = -EINVAL;
	}
	if (r < 0) {
		explicit_bzero(text, strlen(text));
		free(text);
		return r;
	}
	explicit_bzero(text + len, strlen(text + len));
	text[len] = '\0';
	*out = text;
	return 0;
}

/* A file the sink reads at start: readable, regular and, for a secret, its owner's alone. */
static void
check_file(const char *key, const char *path, bool secret, const struct cfg_place *place, struct diag_list *diags)
{
	if (!path || !path[0]) {
		return;
	}
	const char *s = place->section;
	char why[160];
	unsigned mode;
	if (secret && strcmp(key, "key_file") != 0) {
		char *text = NULL;
		if (fleet_read_secret(path, &text, why, sizeof(why)) < 0) {
			cfg_report_key(diags, place, key, "%s.%s: cannot use %s: %s", s, key, path, why);
			return;
		}
		explicit_bzero(text, strlen(text));
		free(text);
	} else {
		struct stat st;
		int fd = readfile_open(path, &st);
		if (fd < 0) {
			cfg_report_key(diags, place, key, "%s.%s: cannot read %s: %s", s, key, path,
				       fd == -EINVAL ? readfile_kind(st.st_mode) : strerror(-fd));
			return;
		}
		close(fd);
	}
	if (secret && readfile_private(path, &mode) == -EACCES) {
		cfg_report_key(diags, place, key,
			       "%s.%s: %s can be read by group or others (mode %04o): it holds a secret; chmod 600 it",
			       s, key, path, mode);
	}
}

static int
fleet_validate(const void *obj, const struct cfg_place *place, struct diag_list *diags)
{
	const struct fleet_config *cfg = obj;
	size_t before = diags->count;
	const char *s = place->section;
	if (!cfg->url[0]) {
		return 0; /* off: nothing else is used */
	}
	const char *problem = url_problem_here(cfg->url);
	if (problem) {
		cfg_report_key(diags, place, "url", "%s.url: %s", s, problem);
	}
	if (!cfg->cert_file[0] != !cfg->key_file[0]) {
		cfg_report_key(diags, place, cfg->cert_file[0] ? "cert_file" : "key_file",
			       "%s.cert_file and %s.key_file go together (a client certificate needs its key)", s, s);
	}
	if (cfg->password_file[0] && !cfg->username[0]) {
		cfg_report_key(diags, place, "password_file", "%s.password_file needs %s.username (basic auth)", s, s);
	}
	if (cfg->username[0] && cfg->bearer_token_file[0]) {
		cfg_report_key(diags, place, "bearer_token_file",
			       "%s.username and %s.bearer_token_file both set the Authorization header: choose one", s,
			       s);
	}
	if (cfg_headers_has(cfg->headers, cfg->header_count, "Authorization") &&
	    (cfg->username[0] || cfg->bearer_token_file[0])) {
		bool basic = cfg->username[0] != '\0';
		cfg_report_key(diags, place, "headers",
			       "%s.headers: Authorization is the header %s.%s sets (%s): keep one of the two", s, s,
			       basic ? "username" : "bearer_token_file", basic ? "basic auth" : "Bearer");
	}
	for (size_t i = 0; i < cfg->metric_count; i++) {
		if (!metric_is_glob(cfg->metrics[i]) && !metric_name_valid(cfg->metrics[i])) {
			cfg_report_key(diags, place, "metrics", "%s.metrics: '%s' is neither a metric name nor a glob",
				       s, cfg->metrics[i]);
		}
	}
	check_file("password_file", cfg->password_file, true, place, diags);
	check_file("bearer_token_file", cfg->bearer_token_file, true, place, diags);
	check_file("ca_file", cfg->ca_file, false, place, diags);
	check_file("cert_file", cfg->cert_file, false, place, diags);
	check_file("key_file", cfg->key_file, true, place, diags);
	return diags->count == before ? 0 : -EINVAL;
}

const struct cfg_section remote_write_config_section = {
	.name = "remote_write",
	.keys = remote_write_keys,
	.key_count = sizeof(remote_write_keys) / sizeof(remote_write_keys[0]),
	.validate = fleet_validate,
};

const struct cfg_section otlp_config_section = {
	.name = "otlp",
	.keys = otlp_keys,
	.key_count = sizeof(otlp_keys) / sizeof(otlp_keys[0]),
	.validate = fleet_validate,
};

/* ---- what a sink holds ---- */

size_t
fleet_config_spool_memory_records(const struct fleet_config *cfg, int64_t interval_ms)
{
	if (!cfg->spool_file || !cfg->spool_file[0]) {
		return cfg->spool_records > 0 ? (size_t)cfg->spool_records : 1;
	}
	/* half the window is the head (the next batch, twice), half the newest samples not yet written */
	size_t head = 2 * (size_t)(cfg->batch_samples > 0 ? cfg->batch_samples : 1);
	size_t per_s = interval_ms > 0 ? (size_t)((1000 + interval_ms - 1) / interval_ms) : 1000;
	size_t tail = 2 * per_s + 32;
	return 2 * (head > tail ? head : tail);
}

uint64_t
fleet_config_memory_bytes(const struct fleet_config *cfg, int64_t interval_ms)
{
	if (!cfg->url || !cfg->url[0]) {
		return 0;
	}
	uint64_t records = fleet_config_spool_memory_records(cfg, interval_ms);
	uint64_t request = 2u * (uint64_t)cfg->batch_samples * FLEET_RECORD_BYTES;
	uint64_t buffers = cfg->spool_file && cfg->spool_file[0] ? 128u * 1024u : 0;
	return records * FLEET_RECORD_BYTES + request + buffers;
}

bool
fleet_config_wants(const struct fleet_config *cfg, const char *name)
{
	bool in = cfg->metric_count == 0;
	for (size_t i = 0; !in && i < cfg->metric_count; i++) {
		in = metric_glob_match(cfg->metrics[i], name);
	}
	for (size_t i = 0; in && i < cfg->exclude_count; i++) {
		in = !metric_glob_match(cfg->exclude[i], name);
	}
	return in;
}
