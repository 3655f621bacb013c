/*
 * Small helpers of the HTTP server kept apart from libmicrohttpd so they
 * can be tested alone: the listen address, the Host allow-list, secrets
 * compared in constant time, query numbers.
 */
#ifndef TEGRAWATCH_WEB_UTIL_H
#define TEGRAWATCH_WEB_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define WEB_SECRET_MAX 4096

/**
 * Parses "HOST:PORT" where HOST is an IPv4 literal, "[IPv6]" or "localhost"
 * (127.0.0.1); no name lookups. Writes the socket address and whether it is
 * a loopback one (127.0.0.0/8, ::1, ::ffff:127.x.x.x). Returns 0 or -EINVAL.
 */
int web_parse_listen(const char *text, struct sockaddr_storage *addr, socklen_t *len, bool *loopback);

/**
 * A non-blocking listening socket bound to ADDR (IPv6 only for an IPv6
 * address); *PORT gets the port bound. Returns the descriptor or -errno.
 */
int web_listen_socket(const struct sockaddr_storage *addr, socklen_t len, int backlog, int *port);

/**
 * True when a Host header value names this machine's loopback interface:
 * localhost, 127.x.x.x or [::1], with any port. A missing header (NULL)
 * is accepted (HTTP/1.0). Guards the loopback-only server against DNS
 * rebinding: a page from elsewhere cannot read the API through a name it
 * controls that resolves to 127.0.0.1.
 */
bool web_host_is_loopback(const char *host);

/**
 * Compares GIVEN with SECRET in time that depends only on SECRET_LEN, not
 * on where they differ or on GIVEN's length.
 */
bool web_secret_equal(const char *secret, size_t secret_len, const char *given, size_t given_len);

/**
 * Checks the Authorization header value HEADER (HEADER_LEN bytes, which
 * may hold NULs) against basic credentials: "Basic" (any case), spaces,
 * then the base64 of "user:pass". The decoded text is split at its first
 * ':', and both parts are compared in full, lengths included, in constant
 * time. A control byte anywhere (a NUL above all: "pass\0junk" must not
 * pass for "pass") fails, as RFC 7617 forbids them.
 */
bool web_basic_auth_match(const char *header, size_t header_len, const char *user, size_t user_len, const char *pass,
			  size_t pass_len);

/**
 * Checks HEADER (HEADER_LEN bytes) against a bearer TOKEN: "Bearer" (any
 * case), spaces, then exactly the token, compared in constant time.
 */
bool web_bearer_match(const char *header, size_t header_len, const char *token, size_t token_len);

/**
 * Reads a secret (token, password) from PATH: at most WEB_SECRET_MAX bytes,
 * trailing newlines and spaces removed, not empty. Returns 0 and *OUT
 * (malloc'd), -EINVAL for an empty or too long file, or -errno.
 * *WORLD_READABLE tells whether others may read the file.
 */
int web_read_secret(const char *path, char **out, bool *world_readable);

/**
 * Parses a whole decimal number of MIN..MAX from TEXT (no sign, no
 * spaces, no leading zeros but "0"). Returns 0 and *OUT, or -EINVAL.
 */
int web_parse_uint(const char *text, int64_t min, int64_t max, int64_t *out);

/**
 * The 16-byte key of a peer address SA: an IPv4 address as ::ffff:a.b.c.d,
 * an IPv6 one whole, or only its /64 network with PREFIX64 (one host
 * usually holds a whole /64). Other families give all zeros.
 */
void web_addr_key(const struct sockaddr *sa, bool prefix64, unsigned char key[16]);

#endif
