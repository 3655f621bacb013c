/* The headers: map shared by the modules that send HTTP (see cfg_headers.h). */
#include "cfg_headers.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "xalloc.h"

/* RFC 9110 token characters, the only ones a header name may hold. */
static bool
is_tchar(unsigned char c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static bool
name_ok(const char *name)
{
	bool ok = name[0] != '\0';
	for (const char *p = name; *p; p++) {
		ok = ok && is_tchar((unsigned char)*p);
	}
	return ok;
}

static bool
value_ok(const char *v)
{
	for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
		if ((*p < 0x20 && *p != '\t') || *p == 0x7f) {
			return false; /* CR/LF would split the request */
		}
	}
	return true;
}

static const struct cfg_reserved_header *
find_reserved(const char *name, const struct cfg_reserved_header *reserved, size_t n)
{
	for (size_t r = 0; r < n; r++) {
		if (strcasecmp(name, reserved[r].name) == 0) {
			return &reserved[r];
		}
	}
	return NULL;
}

void
cfg_headers_free(char **lines, size_t count)
{
	for (size_t i = 0; i < count; i++) {
		free(lines[i]);
	}
	free(lines);
}

int
cfg_decode_headers(struct cfg_decoder *dec, const struct cfg_node *node, const struct cfg_reserved_header *reserved,
		   size_t nreserved, char ***lines, size_t *count)
{
	size_t before = dec->diags->count;
	char got[CFG_SHOW_MAX + 8];
	if (node->type != CFG_MAP) {
		cfg_describe(node, got, sizeof(got));
		cfg_report(dec, node, "headers: expected a map of header names to values, got %s", got);
		return -EINVAL;
	}
	if (node->count > CFG_HEADERS_MAX) {
		cfg_report(dec, node, "headers: at most %d headers, got %zu", CFG_HEADERS_MAX, node->count);
		return -EINVAL;
	}
	char **list = xcalloc(node->count + 1, sizeof(*list));
	size_t n = 0;
	for (size_t i = 0; i < node->count; i++) {
		const struct cfg_node *k = node->keys[i], *v = node->items[i];
		char shown[CFG_SHOW_MAX];
		cfg_show(k->value, shown, sizeof(shown));
		if (!name_ok(k->value)) {
			cfg_report(dec, k, "headers: '%s' is not a header name (letters, digits and !#$%%&'*+-.^_`|~)",
				   shown);
			continue;
		}
		const struct cfg_reserved_header *own = find_reserved(k->value, reserved, nreserved);
		if (own) {
			cfg_report(dec, k, "headers: '%s' is set by tegrawatch itself%s%s", shown, own->why ? ": " : "",
				   own->why ? own->why : "");
			continue;
		}
		if (v->type != CFG_SCALAR || cfg_node_is_null(v)) {
			cfg_describe(v, got, sizeof(got));
			cfg_report(dec, v, "headers: '%s': expected a text value, got %s", shown, got);
			continue;
		}
		if (!value_ok(v->value)) {
			/* the value may be a credential: never quoted */
			cfg_report(dec, v, "headers: '%s': the value holds a line break or control character", shown);
			continue;
		}
		size_t len = strlen(k->value) + strlen(v->value) + 3;
		list[n] = xmalloc(len);
		snprintf(list[n], len, "%s: %s", k->value, v->value);
		n++;
	}
	if (dec->diags->count != before) {
		cfg_headers_free(list, n);
		return -EINVAL;
	}
	cfg_headers_free(*lines, *count);
	*lines = n ? list : NULL;
	*count = n;
	if (!n) {
		free(list);
	}
	return 0;
}

bool
cfg_headers_equal(char *const *a, size_t count, char *const *b, size_t nb)
{
	if (count != nb) {
		return false;
	}
	for (size_t i = 0; i < count; i++) {
		if (strcmp(a[i], b[i]) != 0) {
			return false;
		}
	}
	return true;
}

char **
cfg_headers_copy(char *const *lines, size_t count)
{
	if (!count) {
		return NULL;
	}
	char **out = xcalloc(count + 1, sizeof(*out));
	for (size_t i = 0; i < count; i++) {
		out[i] = xstrdup(lines[i]);
	}
	return out;
}

bool
cfg_headers_has(char *const *lines, size_t count, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = 0; i < count; i++) {
		if (strncasecmp(lines[i], name, len) == 0 && lines[i][len] == ':') {
			return true;
		}
	}
	return false;
}
