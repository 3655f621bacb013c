/* A GET to the agent's own API over loopback: see top_http.h. */
#include "top_http.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/clock.h"

int
top_endpoint_parse(const char *url, struct top_endpoint *ep)
{
	struct top_endpoint out = {.port = "9474"};
	if (strncmp(url, "http://", 7) == 0) {
		url += 7;
	} else if (strstr(url, "://")) {
		return -EINVAL; /* https and the rest: not the agent's loopback API */
	}
	const char *host = url, *end;
	if (*url == '[') {
		host = url + 1;
		end = strchr(host, ']');
		if (!end) {
			return -EINVAL;
		}
		url = end + 1;
	} else {
		end = host + strcspn(host, ":/");
		url = end;
	}
	size_t hl = (size_t)(end - host);
	if (hl == 0 || hl >= sizeof(out.host)) {
		return -EINVAL;
	}
	memcpy(out.host, host, hl);
	if (*url == ':') {
		size_t pl = strspn(url + 1, "0123456789");
		if (pl == 0 || pl >= sizeof(out.port) || (url[1 + pl] && url[1 + pl] != '/') ||
		    strtol(url + 1, NULL, 10) > 65535) {
			return -EINVAL;
		}
		memcpy(out.port, url + 1, pl);
		out.port[pl] = '\0';
	} else if (*url && *url != '/') {
		return -EINVAL;
	}
	*ep = out;
	return 0;
}

int
top_http_parse(const char *answer, size_t len, int *status, size_t *body, size_t *body_len)
{
	/* "HTTP/1.x NNN ..." */
	if (len < 12 || memcmp(answer, "HTTP/1.", 7) != 0 || answer[8] != ' ') {
		return -EBADMSG;
	}
	int code = 0;
	for (int i = 9; i < 12; i++) {
		if (answer[i] < '0' || answer[i] > '9') {
			return -EBADMSG;
		}
		code = code * 10 + (answer[i] - '0');
	}
	size_t head_end = 0;
	for (size_t i = 12; i + 3 < len; i++) {
		if (memcmp(answer + i, "\r\n\r\n", 4) == 0) {
			head_end = i + 4;
			break;
		}
	}
	if (head_end == 0) {
		return -EBADMSG;
	}
	size_t n = len - head_end;
	/* Content-Length, when given, must be there whole */
	for (size_t i = 12; i + 16 < head_end; i++) {
		if (answer[i - 1] == '\n' && strncasecmp(answer + i, "Content-Length:", 15) == 0) {
			size_t k = i + 15, cl = 0;
			while (k < head_end && answer[k] == ' ') {
				k++;
			}
			bool digits = false;
			while (k < head_end && answer[k] >= '0' && answer[k] <= '9' && cl < TOP_HTTP_MAX) {
				cl = cl * 10 + (size_t)(answer[k++] - '0');
				digits = true;
			}
			if (!digits || cl > n) {
				return -EBADMSG;
			}
			n = cl;
			break;
		}
	}
	*status = code;
	*body = head_end;
	*body_len = n;
	return 0;
}

/* Waits for EVENTS on FD until DEADLINE (monotonic ms): 0, or -ETIMEDOUT. */
static int
wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - monotonic_ms();
		if (left <= 0) {
			return -ETIMEDOUT;
		}
		struct pollfd p = {.fd = fd, .events = events};
		int r = poll(&p, 1, (int)clock_poll_ms(left));
		if (r > 0) {
			return 0;
		}
		if (r < 0 && errno != EINTR) {
			return -errno;
		}
	}
}

static int
connect_to(const struct top_endpoint *ep, int64_t deadline, int *out)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV}, *res;
	if (getaddrinfo(ep->host, ep->port, &hints, &res) != 0) {
		return -EHOSTUNREACH;
	}
	int r = -ECONNREFUSED;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			r = -errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 && errno != EINPROGRESS) {
			r = -errno;
			close(fd);
			continue;
		}
		int err = 0;
		socklen_t el = sizeof(err);
		r = wait_fd(fd, POLLOUT, deadline);
		if (r == 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err) {
			r = -err;
		}
		if (r == 0) {
			*out = fd;
			break;
		}
		close(fd);
	}
	freeaddrinfo(res);
	return r;
}

int
top_http_get(const struct top_endpoint *ep, const char *path, int64_t timeout_ms, int *status, struct buf *body)
{
	int64_t deadline = monotonic_ms() + timeout_ms;
	int fd = -1, r = connect_to(ep, deadline, &fd);
	if (r < 0) {
		return r;
	}
	char req[512];
	bool v6 = strchr(ep->host, ':') != NULL;
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: %s%s%s:%s\r\nAccept: application/json\r\n\r\n",
			 path, v6 ? "[" : "", ep->host, v6 ? "]" : "", ep->port);
	struct buf in;
	buf_init(&in);
	for (int sent = 0; r == 0 && sent < n;) {
		ssize_t w = send(fd, req + sent, (size_t)(n - sent), MSG_NOSIGNAL);
		if (w > 0) {
			sent += (int)w;
		} else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			r = wait_fd(fd, POLLOUT, deadline);
		} else {
			r = w < 0 ? -errno : -EPIPE;
		}
	}
	while (r == 0) {
		buf_reserve(&in, 8192);
		ssize_t got = recv(fd, in.buf + in.len, 8192, 0);
		if (got > 0) {
			in.len += (size_t)got;
			r = in.len > TOP_HTTP_MAX ? -EMSGSIZE : 0;
		} else if (got == 0) {
			break; /* HTTP/1.0: the answer ends where the connection does */
		} else if (errno == EAGAIN || errno == EINTR) {
			r = wait_fd(fd, POLLIN, deadline);
		} else {
			r = -errno;
		}
	}
	close(fd);
	size_t off, len;
	if (r == 0) {
		r = top_http_parse(in.buf ? in.buf : "", in.len, status, &off, &len);
	}
	if (r == 0) {
		buf_reset(body);
		buf_add(body, in.buf + off, len); /* NUL-terminated */
	}
	buf_free(&in);
	return r;
}
