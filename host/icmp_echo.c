/* ICMP echo messages of a ping socket (icmp_echo.h). */
#include "icmp_echo.h"

#include <errno.h>
#include <string.h>

#define ICMP_ECHO_REQUEST 8
#define ICMP_ECHO_REPLY 0
#define ICMP6_ECHO_REQUEST 128
#define ICMP6_ECHO_REPLY 129
#define HEADER_LEN 8

static const char payload[] = "tegrawatch probe"; /* 16 bytes: the NUL is not sent */

void
icmp_echo_request(bool ipv6, uint16_t seq, uint8_t buf[ICMP_ECHO_LEN])
{
	memset(buf, 0, ICMP_ECHO_LEN);
	buf[0] = ipv6 ? ICMP6_ECHO_REQUEST : ICMP_ECHO_REQUEST;
	/* buf[1] code 0; buf[2..3] checksum and buf[4..5] identifier: the kernel's */
	buf[6] = (uint8_t)(seq >> 8); /* network byte order */
	buf[7] = (uint8_t)seq;
	memcpy(buf + HEADER_LEN, payload, ICMP_ECHO_LEN - HEADER_LEN);
}

int
icmp_echo_reply_seq(bool ipv6, const uint8_t *buf, size_t len, uint16_t *seq)
{
	if (len < HEADER_LEN || buf[0] != (ipv6 ? ICMP6_ECHO_REPLY : ICMP_ECHO_REPLY) || buf[1] != 0) {
		return -EINVAL;
	}
	*seq = (uint16_t)(buf[6] << 8 | buf[7]);
	return 0;
}
