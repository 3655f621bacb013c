/* A webhook action's settings: key table, the headers: map, checks and secret files (no libcurl, no OpenSSL). */
#include "webhook_config.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base64.h"
#include "core/cfg_headers.h"
#include "core/readfile.h"
#include "core/url.h"
#include "core/xalloc.h"
#include "build_config.h"

static const char *const format_names[] = {"alertmanager-api", "alertmanager", "json", NULL};
static const int format_values[] = {WEBHOOK_ALERTMANAGER_API, WEBHOOK_ALERTMANAGER, WEBHOOK_JSON};

/* Set by the module itself: a configured copy would send two or break the signature. */
static const struct cfg_reserved_header reserved_headers[] = {
	{"content-type", NULL},      {"content-length", NULL},    {"host", NULL},
	{"transfer-encoding", NULL}, {"connection", NULL},        {"expect", NULL},
	{"webhook-id", NULL},        {"webhook-timestamp", NULL}, {"webhook-signature", NULL},
};

/* headers: {Name: value, ...} -> "Name: value" strings */
static int
decode_headers(struct cfg_decoder *dec, const struct cfg_node *node, void *obj)
{
	struct webhook_config *cfg = obj;
	return cfg_decode_headers(dec, node, reserved_headers, sizeof(reserved_headers) / sizeof(reserved_headers[0]),
				  &cfg->headers, &cfg->header_count);
}

static bool
headers_equal(const void *a, const void *b)
{
	const struct webhook_config *x = a, *y = b;
	return cfg_headers_equal(x->headers, x->header_count, y->headers, y->header_count);
}

static void
headers_release(void *obj)
{
	struct webhook_config *cfg = obj;
	cfg_headers_free(cfg->headers, cfg->header_count);
	cfg->headers = NULL;
	cfg->header_count = 0;
}

#define R CFG_F_RELOADED
const struct cfg_key webhook_keys[] = {
	CFG_STRING("url", struct webhook_config, url, NULL, CFG_F_REQUIRED | CFG_F_NOT_EMPTY | R),
	CFG_CHOICE("format", struct webhook_config, format, NULL, CFG_F_REQUIRED | R, format_names, format_values),
	CFG_DURATION("timeout", struct webhook_config, timeout_ms, "10s", R, 100, 30 * 1000),
	CFG_STRING("secret_file", struct webhook_config, secret_file, "", R | CFG_F_SECRET_FILE),
	CFG_STRING("bearer_token_file", struct webhook_config, bearer_token_file, "", R | CFG_F_SECRET_FILE),
	{.name = "headers",
	 .kind = CFG_K_CUSTOM,
	 .flags = R,
	 .decode = decode_headers,
	 .equal = headers_equal,
	 .release = headers_release},
	CFG_STRING("ca_file", struct webhook_config, ca_file, "", R),
	CFG_STRING("queue_file", struct webhook_config, queue_file, "", 0),
	CFG_INT("queue_max", struct webhook_config, queue_max, "1000", 0, 1, 100000),
	CFG_DURATION("resend", struct webhook_config, resend_ms, "1m", R, 1000, 3600 * 1000),
};
#undef R
const size_t webhook_key_count = sizeof(webhook_keys) / sizeof(webhook_keys[0]);

uint64_t
webhook_config_memory_bytes(const struct webhook_config *cfg)
{
	return (uint64_t)(cfg->queue_max > 0 ? cfg->queue_max : 1) * WEBHOOK_NOTIFICATION_BYTES;
}

void
webhook_config_free(struct webhook_config *cfg)
{
	cfg_free_strings(webhook_keys, webhook_key_count, cfg);
}

static char *
dup_or_empty(const char *s)
{
	return xstrdup(s ? s : "");
}

void
webhook_config_copy(struct webhook_config *dst, const struct webhook_config *src)
{
	*dst = *src;
	dst->url = dup_or_empty(src->url);
	dst->secret_file = dup_or_empty(src->secret_file);
	dst->bearer_token_file = dup_or_empty(src->bearer_token_file);
	dst->ca_file = dup_or_empty(src->ca_file);
	dst->queue_file = dup_or_empty(src->queue_file);
	dst->headers = cfg_headers_copy(src->headers, src->header_count);
}

const char *
webhook_format_name(int format)
{
	return format >= 0 && format <= WEBHOOK_JSON ? format_names[format] : "unknown";
}

bool
webhook_supported(void)
{
	return HAVE_WEBHOOKS;
}

bool
webhook_secret_syntax_ok(const char *text)
{
	if (strncmp(text, "whsec_", 6) != 0) {
		return false;
	}
	const char *b = text + 6;
	size_t len = strlen(b), pad = 0;
	while (pad < 2 && len > pad && b[len - 1 - pad] == '=') {
		pad++;
	}
	size_t chars = len - pad;
	if (pad && len % 4 != 0) {
		return false;
	}
	if (chars % 4 == 1) {
		return false; /* no whole byte */
	}
	for (size_t i = 0; i < chars; i++) {
		if (base64_value(b[i]) < 0) {
			return false;
		}
	}
	size_t bytes = chars * 3 / 4;
	return bytes >= WEBHOOK_SECRET_MIN_BYTES && bytes <= WEBHOOK_SECRET_MAX_BYTES;
}

int
webhook_read_secrets(const char *path, char *secrets[WEBHOOK_SECRETS_MAX], char *why, size_t why_size)
{
	char *buf;
	size_t len;
	int r = readfile_all(path, WEBHOOK_SECRET_FILE_MAX, &buf, &len, NULL);
	if (r < 0) {
		snprintf(why, why_size, "%s",
			 r == -EINVAL  ? "not a regular file"
			 : r == -EFBIG ? "larger than 4 KiB"
				       : strerror(-r));
		return r;
	}
	int n = 0;
	const char *sep = " \t\r\n";
	char *save = NULL;
	for (char *w = strtok_r(buf, sep, &save); w; w = strtok_r(NULL, sep, &save)) {
		if (n == WEBHOOK_SECRETS_MAX) {
			snprintf(why, why_size, "more than %d secrets", WEBHOOK_SECRETS_MAX);
			r = -EINVAL;
			break;
		}
		if (!webhook_secret_syntax_ok(w)) {
			snprintf(why, why_size, "secret %d is not whsec_ followed by the base64 of %d to %d bytes",
				 n + 1, WEBHOOK_SECRET_MIN_BYTES, WEBHOOK_SECRET_MAX_BYTES);
			r = -EINVAL;
			break;
		}
		secrets[n++] = xstrdup(w);
	}
	if (r == 0 && n == 0) {
		snprintf(why, why_size, "no secret in the file");
		r = -EINVAL;
	}
	memset(buf, 0, len);
	free(buf);
	if (r < 0) {
		while (n > 0) {
			n--;
			memset(secrets[n], 0, strlen(secrets[n]));
			free(secrets[n]);
		}
		return r;
	}
	return n;
}

int
webhook_read_token(const char *path, char **token, char *why, size_t why_size)
{
	char *buf;
	size_t len;
	int r = readfile_all(path, WEBHOOK_SECRET_FILE_MAX, &buf, &len, NULL);
	if (r < 0) {
		snprintf(why, why_size, "%s",
			 r == -EINVAL  ? "not a regular file"
			 : r == -EFBIG ? "larger than 4 KiB"
				       : strerror(-r));
		return r;
	}
	while (len > 0 && isspace((unsigned char)buf[len - 1])) {
		buf[--len] = '\0';
	}
	for (size_t i = 0; i < len && r == 0; i++) {
		if (buf[i] <= 0x20 || buf[i] >= 0x7f) {
			snprintf(why, why_size, "the token holds a space, line break or non-ASCII byte");
			r = -EINVAL;
		}
	}
	if (r == 0 && len == 0) {
		snprintf(why, why_size, "the file is empty");
		r = -EINVAL;
	}
	if (r < 0) {
		memset(buf, 0, len);
		free(buf);
		return r;
	}
	*token = buf;
	return 0;
}

/* A configured URL's problem, with what to use instead of credentials in it. */
static const char *
url_problem_here(const char *url)
{
	const char *problem = url_problem(url);
	return problem == url_has_credentials
		       ? "credentials in the URL would be logged and shown: use bearer_token_file or headers"
		       : problem;
}

static int
check_readable(const char *path)
{
	struct stat st;
	int fd = readfile_open(path, &st);
	if (fd >= 0) {
		close(fd);
	}
	return fd < 0 ? fd : 0;
}

/* A secret only its owner may read (systemd credentials aside): E5 refuses anything else. */
static void
check_private(const char *path, const char *key, const struct cfg_place *place, struct diag_list *diags)
{
	unsigned mode;
	if (path && path[0] && readfile_private(path, &mode) == -EACCES) {
		cfg_report_key(diags, place, key,
			       "%s.%s: %s can be read by group or others (mode %04o): it holds a secret; chmod 600 it",
			       place->section, key, path, mode);
	}
}

int
webhook_config_validate(const struct webhook_config *cfg, const struct cfg_place *place, struct diag_list *diags)
{
	size_t before = diags->count;
	const char *s = place->section;
	char why[160];
	const char *problem = cfg->url ? url_problem_here(cfg->url) : "no URL";
	if (problem) {
		cfg_report_key(diags, place, "url", "%s.url: %s", s, problem);
	}
	check_private(cfg->secret_file, "secret_file", place, diags);
	check_private(cfg->bearer_token_file, "bearer_token_file", place, diags);
	if (cfg->secret_file && cfg->secret_file[0]) {
		char *secrets[WEBHOOK_SECRETS_MAX];
		int n = webhook_read_secrets(cfg->secret_file, secrets, why, sizeof(why));
		if (n < 0) {
			cfg_report_key(diags, place, "secret_file", "%s.secret_file: cannot use %s: %s", s,
				       cfg->secret_file, why);
		}
		for (int i = 0; i < n; i++) {
			memset(secrets[i], 0, strlen(secrets[i]));
			free(secrets[i]);
		}
	}
	if (cfg->bearer_token_file && cfg->bearer_token_file[0]) {
		char *token = NULL;
		if (webhook_read_token(cfg->bearer_token_file, &token, why, sizeof(why)) < 0) {
			cfg_report_key(diags, place, "bearer_token_file", "%s.bearer_token_file: cannot use %s: %s", s,
				       cfg->bearer_token_file, why);
		} else {
			memset(token, 0, strlen(token));
			free(token);
		}
		for (size_t i = 0; i < cfg->header_count; i++) {
			if (strncasecmp(cfg->headers[i], "authorization:", 14) == 0) {
				cfg_report_key(
					diags, place, "headers",
					"%s.headers: Authorization and bearer_token_file both set the same header", s);
			}
		}
	}
	if (cfg->ca_file && cfg->ca_file[0]) {
		int r = check_readable(cfg->ca_file);
		if (r < 0) {
			cfg_report_key(diags, place, "ca_file", "%s.ca_file: cannot read %s: %s", s, cfg->ca_file,
				       r == -EINVAL ? "not a regular file" : strerror(-r));
		}
	}
	return diags->count == before ? 0 : -EINVAL;
}
