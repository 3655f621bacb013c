/*
 * ICMP echo messages as an unprivileged ping socket (socket(AF_INET,
 * SOCK_DGRAM, IPPROTO_ICMP), Linux 3.0 on; IPPROTO_ICMPV6 from 3.11) sends
 * and receives them: the ICMP header and the payload, no IP header; the
 * kernel sets the identifier (the socket's port) and the IPv4 checksum.
 * RFC 792 (type 8 request, 0 reply), RFC 4443 (128, 129). Pure: no I/O.
 */
#ifndef TEGRAWATCH_ICMP_ECHO_H
#define TEGRAWATCH_ICMP_ECHO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ICMP_ECHO_LEN 24 /* the 8-byte header and a 16-byte payload */

/** Writes an echo request with sequence SEQ into BUF (ICMP_ECHO_LEN bytes); IPV6 picks ICMPv6. */
void icmp_echo_request(bool ipv6, uint16_t seq, uint8_t buf[ICMP_ECHO_LEN]);

/**
 * The sequence number of the echo reply in the LEN bytes of BUF into *SEQ.
 * Returns 0, or -EINVAL for anything else (another type, a cut message):
 * a ping socket also hands over replies meant for no one in particular.
 */
int icmp_echo_reply_seq(bool ipv6, const uint8_t *buf, size_t len, uint16_t *seq);

#endif
