/* What the configuration loader tests share (see config_checks.h). */
#include "config_checks.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/diag.h"

extern char **environ;


void
clear_env(void)
{
	for (;;) {
		char name[256] = "";
		for (char **e = environ; e && *e; e++) {
			if (strncmp(*e, "TEGRAWATCH_", 11) == 0) {
				const char *eq = strchr(*e, '=');
				size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
				if (len < sizeof(name)) {
					memcpy(name, *e, len);
					name[len] = '\0';
				}
				break;
			}
		}
		if (!name[0]) {
			return;
		}
		unsetenv(name);
	}
}

int
setup(void **state)
{
	(void)state;
	clear_env();
	return chdir(CONFIG_DIR);
}

struct config *
load_ok(const char *path)
{
	struct diag_list diags;
	diag_list_init(&diags);
	struct config *cfg = NULL;
	int r = config_load(path, &cfg, &diags);
	diag_list_print(&diags, stderr);
	assert_int_equal(r, 0);
	assert_int_equal(diags.count, 0);
	assert_non_null(cfg);
	diag_list_free(&diags);
	return cfg;
}

void
load_bad(const char *path, const char *const *want, size_t n)
{
	struct diag_list diags;
	diag_list_init(&diags);
	struct config *cfg = (struct config *)&diags; /* must stay untouched */
	int r = config_load(path, &cfg, &diags);
	assert_true(r < 0);
	assert_ptr_equal(cfg, (struct config *)&diags);
	for (size_t i = 0; i < diags.count || i < n; i++) {
		char got[LINE_MAX_BYTES] = "(nothing)";
		if (i < diags.count) {
			diag_format(&diags.items[i], got, sizeof(got));
		}
		if (i >= n || strcmp(got, want[i]) != 0) {
			fprintf(stderr, "%s: message %zu\n  want: %s\n  got:  %s\n", path, i + 1,
				i < n ? want[i] : "(nothing)", got);
			fail();
		}
	}
	diag_list_free(&diags);
}

char **
read_lines(const char *path, size_t *count)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		fail_msg("%s: %s", path, strerror(errno));
	}
	char **lines = NULL;
	size_t n = 0;
	char buf[LINE_MAX_BYTES];
	while (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		lines = realloc(lines, (n + 1) * sizeof(*lines));
		assert_non_null(lines);
		lines[n++] = strdup(buf);
	}
	fclose(f);
	*count = n;
	return lines;
}
