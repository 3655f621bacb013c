/*
 * A GET to the agent's own API: plain HTTP/1.0 over a loopback TCP
 * socket, one request a connection, with a deadline. Not a general
 * client (no TLS, no redirects, no chunked bodies: the agent sends none
 * to an HTTP/1.0 request); core/http_client.c (libcurl) is for the world
 * outside. top_http_parse() is the pure part, fuzzed (tests/fuzz/fuzz_top.c).
 */
#ifndef TEGRAWATCH_TOP_HTTP_H
#define TEGRAWATCH_TOP_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

/* answers longer than this are refused (a snapshot is ~10 KiB) */
#define TOP_HTTP_MAX (4u << 20)

/* Where the agent listens: from "http://HOST:PORT", "HOST:PORT" or "[V6]:PORT". */
struct top_endpoint {
	char host[64];
	char port[8];
};

/** Parses URL into *EP (default port 9474; a path after the port is ignored). Returns 0 or -EINVAL. */
int top_endpoint_parse(const char *url, struct top_endpoint *ep);

/**
 * Splits an HTTP/1.x answer of LEN bytes: *STATUS and *BODY (the offset of
 * the body). The body ends at LEN, or earlier at a Content-Length. Returns
 * 0, or -EBADMSG (not an HTTP answer, or cut short).
 */
int top_http_parse(const char *answer, size_t len, int *status, size_t *body, size_t *body_len);

/**
 * GETs PATH from EP within TIMEOUT_MS. On 0, *STATUS and BODY (its text,
 * NUL-terminated) are set. Returns 0, -ECONNREFUSED (nobody listens),
 * -ETIMEDOUT, -EBADMSG or another -errno.
 */
int top_http_get(const struct top_endpoint *ep, const char *path, int64_t timeout_ms, int *status, struct buf *body);

#endif
