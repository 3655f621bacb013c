/* The server's credentials and their check (see auth.h). */
#include "auth.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/xalloc.h"
#include "web_util.h"

static int
load_secret(const char *what, const char *path, char **out, size_t *len)
{
	bool world;
	int r = web_read_secret(path, out, &world);
	if (r < 0) {
		log_error("web: %s %s: %s", what, path,
			  r == -EINVAL ? "must be a regular file holding 1 to 4096 bytes" : strerror(-r));
		return -EINVAL;
	}
	if (world) {
		log_warn("web: %s %s can be read by every user: chmod o-r it", what, path);
	}
	*len = strlen(*out);
	return 0;
}

int
web_auth_load(struct web_auth *a, const struct web_config *cfg)
{
	memset(a, 0, sizeof(*a));
	auth_limit_init(&a->limit);
	int r = 0;
	if (cfg->token_file[0]) {
		r = load_secret("token_file", cfg->token_file, &a->token, &a->token_len);
	}
	if (r == 0 && cfg->basic_auth_user[0]) {
		a->basic_user = xstrdup(cfg->basic_auth_user);
		a->basic_user_len = strlen(a->basic_user);
		r = load_secret("basic_auth_password_file", cfg->basic_auth_password_file, &a->basic_pass,
				&a->basic_pass_len);
	}
	return r;
}

static void
free_secret(char *s, size_t len)
{
	if (s) {
		explicit_bzero(s, len);
		free(s);
	}
}

void
web_auth_free(struct web_auth *a)
{
	free_secret(a->token, a->token_len);
	free(a->basic_user);
	free_secret(a->basic_pass, a->basic_pass_len);
	a->token = a->basic_user = a->basic_pass = NULL;
}

enum auth_result
web_auth_check(struct web_auth *a, const char *header, size_t header_len, const unsigned char key[16], int64_t now_ms,
	       int64_t *wait_ms)
{
	*wait_ms = 0;
	if (!a->token && !a->basic_user) {
		return AUTH_OK;
	}
	if (!header) {
		return AUTH_MISSING;
	}
	*wait_ms = auth_limit_check(&a->limit, key, now_ms);
	if (*wait_ms > 0) {
		return AUTH_THROTTLED;
	}
	if ((a->token && web_bearer_match(header, header_len, a->token, a->token_len)) ||
	    (a->basic_user && web_basic_auth_match(header, header_len, a->basic_user, a->basic_user_len, a->basic_pass,
						   a->basic_pass_len))) {
		return AUTH_OK;
	}
	auth_limit_failed(&a->limit, key, now_ms);
	return AUTH_WRONG;
}
