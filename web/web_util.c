/* Helpers of the HTTP server (see web_util.h). */
#include "web_util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base64.h"
#include "core/readfile.h"
#include "core/xalloc.h"

static int
parse_port(const char *s, uint16_t *port)
{
	int64_t v;
	if (web_parse_uint(s, 0, 65535, &v) < 0) {
		return -EINVAL;
	}
	*port = (uint16_t)v;
	return 0;
}

static bool
v6_is_loopback(const struct in6_addr *a)
{
	if (IN6_IS_ADDR_LOOPBACK(a)) {
		return true;
	}
	return IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127;
}

int
web_parse_listen(const char *text, struct sockaddr_storage *addr, socklen_t *len, bool *loopback)
{
	char host[64];
	const char *port_text;
	if (text[0] == '[') {
		const char *close = strchr(text, ']');
		if (!close || close[1] != ':' || (size_t)(close - text - 1) >= sizeof(host)) {
			return -EINVAL;
		}
		memcpy(host, text + 1, (size_t)(close - text - 1));
		host[close - text - 1] = '\0';
		port_text = close + 2;
		struct sockaddr_in6 sa6;
		memset(&sa6, 0, sizeof(sa6));
		sa6.sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, host, &sa6.sin6_addr) != 1 || parse_port(port_text, &sa6.sin6_port) < 0) {
			return -EINVAL;
		}
		sa6.sin6_port = htons(sa6.sin6_port);
		memset(addr, 0, sizeof(*addr));
		memcpy(addr, &sa6, sizeof(sa6));
		*len = sizeof(sa6);
		*loopback = v6_is_loopback(&sa6.sin6_addr);
		return 0;
	}
	const char *colon = strrchr(text, ':');
	if (!colon || colon == text || (size_t)(colon - text) >= sizeof(host) || strchr(text, ':') != colon) {
		return -EINVAL;
	}
	memcpy(host, text, (size_t)(colon - text));
	host[colon - text] = '\0';
	port_text = colon + 1;
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	if (strcasecmp(host, "localhost") == 0) {
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	} else if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		return -EINVAL;
	}
	if (parse_port(port_text, &sa.sin_port) < 0) {
		return -EINVAL;
	}
	sa.sin_port = htons(sa.sin_port);
	memset(addr, 0, sizeof(*addr));
	memcpy(addr, &sa, sizeof(sa));
	*len = sizeof(sa);
	*loopback = (ntohl(sa.sin_addr.s_addr) >> 24) == 127;
	return 0;
}

bool
web_host_is_loopback(const char *host)
{
	if (!host) {
		return true;
	}
	char name[64];
	size_t n;
	const char *rest;
	if (host[0] == '[') {
		const char *close = strchr(host, ']');
		if (!close) {
			return false;
		}
		n = (size_t)(close - host - 1);
		if (n >= sizeof(name)) {
			return false;
		}
		memcpy(name, host + 1, n);
		name[n] = '\0';
		rest = close + 1;
		struct in6_addr a6;
		if (inet_pton(AF_INET6, name, &a6) != 1 || !v6_is_loopback(&a6)) {
			return false;
		}
	} else {
		n = strcspn(host, ":");
		if (n >= sizeof(name)) {
			return false;
		}
		memcpy(name, host, n);
		name[n] = '\0';
		rest = host + n;
		if (n > 0 && name[n - 1] == '.') {
			name[n - 1] = '\0'; /* "localhost." is the same name */
		}
		struct in_addr a4;
		if (strcasecmp(name, "localhost") != 0 &&
		    (inet_pton(AF_INET, name, &a4) != 1 || (ntohl(a4.s_addr) >> 24) != 127)) {
			return false;
		}
	}
	if (rest[0] == '\0') {
		return true;
	}
	uint16_t port;
	return rest[0] == ':' && parse_port(rest + 1, &port) == 0;
}

bool
web_secret_equal(const char *secret, size_t secret_len, const char *given, size_t given_len)
{
	/* every byte of the secret is visited whatever GIVEN holds */
	volatile unsigned char diff = (unsigned char)(secret_len != given_len);
	for (size_t i = 0; i < secret_len; i++) {
		unsigned char g = i < given_len ? (unsigned char)given[i] : 0;
		diff |= (unsigned char)((unsigned char)secret[i] ^ g);
	}
	return diff == 0;
}

/* The credentials after SCHEME and its spaces in HEADER, or NULL. */
static const char *
auth_param(const char *header, size_t header_len, const char *scheme, size_t *len)
{
	size_t n = strlen(scheme);
	if (!header || header_len <= n || strncasecmp(header, scheme, n) != 0 || header[n] != ' ') {
		return NULL;
	}
	while (n < header_len && header[n] == ' ') {
		n++;
	}
	*len = header_len - n;
	return header + n;
}

bool
web_basic_auth_match(const char *header, size_t header_len, const char *user, size_t user_len, const char *pass,
		     size_t pass_len)
{
	size_t len;
	const char *b64 = auth_param(header, header_len, "Basic", &len);
	if (!b64) {
		return false;
	}
	size_t cap = len / 4 * 3;
	unsigned char *text = xrealloc(NULL, cap ? cap : 1, 1);
	size_t n;
	bool ok = base64_decode(b64, len, text, cap, &n, false) == 0;
	size_t colon = n;
	for (size_t i = 0; ok && i < n; i++) {
		if (text[i] < 0x20 || text[i] == 0x7f) {
			ok = false;
		} else if (text[i] == ':' && colon == n) {
			colon = i;
		}
	}
	if (ok && colon < n) {
		/* both compared in full, whichever is wrong */
		bool u = web_secret_equal(user, user_len, (const char *)text, colon);
		bool p = web_secret_equal(pass, pass_len, (const char *)text + colon + 1, n - colon - 1);
		ok = u && p;
	} else {
		ok = false;
	}
	explicit_bzero(text, cap ? cap : 1);
	free(text);
	return ok;
}

bool
web_bearer_match(const char *header, size_t header_len, const char *token, size_t token_len)
{
	size_t len;
	const char *t = auth_param(header, header_len, "Bearer", &len);
	return t && web_secret_equal(token, token_len, t, len);
}

int
web_read_secret(const char *path, char **out, bool *world_readable)
{
	struct stat st;
	char *buf;
	size_t len;
	/* never blocks (a FIFO named as the secret would hang `check` and the start); room for a trailing newline */
	int r = readfile_all(path, WEB_SECRET_MAX + 64, &buf, &len, &st);
	if (r < 0) {
		return r == -EFBIG ? -EINVAL : r;
	}
	while (len > 0 &&
	       (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ' || buf[len - 1] == '\t')) {
		len--;
	}
	if (len == 0 || len > WEB_SECRET_MAX || memchr(buf, '\0', len)) {
		explicit_bzero(buf, len);
		free(buf);
		return -EINVAL;
	}
	buf[len] = '\0';
	*world_readable = (st.st_mode & S_IROTH) != 0;
	*out = buf;
	return 0;
}

int
web_parse_uint(const char *text, int64_t min, int64_t max, int64_t *out)
{
	if (!text || !text[0] || (text[0] == '0' && text[1])) {
		return -EINVAL;
	}
	int64_t v = 0;
	for (const char *p = text; *p; p++) {
		if (*p < '0' || *p > '9') {
			return -EINVAL;
		}
		if (v > (INT64_MAX - 9) / 10) {
			return -EINVAL;
		}
		v = v * 10 + (*p - '0');
	}
	if (v < min || v > max) {
		return -EINVAL;
	}
	*out = v;
	return 0;
}

void
web_addr_key(const struct sockaddr *sa, bool prefix64, unsigned char key[16])
{
	memset(key, 0, 16);
	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		key[10] = 0xff;
		key[11] = 0xff;
		memcpy(key + 12, &in->sin_addr, 4);
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		/* a mapped IPv4 address stays whole: its /64 would be every IPv4 peer */
		bool mapped = IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr);
		memcpy(key, &in6->sin6_addr, prefix64 && !mapped ? 8 : 16);
	}
}

int
web_listen_socket(const struct sockaddr_storage *addr, socklen_t len, int backlog, int *port)
{
	int fd = socket(addr->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return -errno;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (addr->ss_family == AF_INET6) {
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	if (bind(fd, (const struct sockaddr *)addr, len) < 0 || listen(fd, backlog) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	struct sockaddr_storage bound;
	socklen_t blen = sizeof(bound);
	*port = 0;
	if (getsockname(fd, (struct sockaddr *)&bound, &blen) == 0) {
		*port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
							  : ((struct sockaddr_in *)&bound)->sin_port);
	}
	return fd;
}
