/*
 * The server's credentials and their check, apart from libmicrohttpd so
 * they can be tested and fuzzed alone: a bearer token and/or basic auth,
 * both compared in full and in constant time (web_util.h), behind the
 * limit on failed logins per address (auth_limit.h).
 */
#ifndef TEGRAWATCH_WEB_AUTH_H
#define TEGRAWATCH_WEB_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth_limit.h"
#include "web_config.h"

struct web_auth {
	char *token; /* NULL = none */
	size_t token_len;
	char *basic_user; /* NULL = no basic auth */
	size_t basic_user_len;
	char *basic_pass;
	size_t basic_pass_len;
	struct auth_limit limit;
};

enum auth_result {
	AUTH_OK,        /* no authentication configured, or the right credentials */
	AUTH_MISSING,   /* no credentials: 401, not counted */
	AUTH_WRONG,     /* 401, counted against the address */
	AUTH_THROTTLED, /* 429: too many failures from the address */
};

/** Reads the secret files CFG names (errors logged). 0 or -EINVAL; web_auth_free() in both cases. */
int web_auth_load(struct web_auth *a, const struct web_config *cfg);
void web_auth_free(struct web_auth *a);

/**
 * Checks the Authorization value HEADER (HEADER_LEN bytes; NULL when the
 * request has none) of a request from address KEY (web_addr_key with
 * the /64). With AUTH_THROTTLED, *WAIT_MS says for how long.
 */
enum auth_result web_auth_check(struct web_auth *a, const char *header, size_t header_len, const unsigned char key[16],
				int64_t now_ms, int64_t *wait_ms);

#endif
