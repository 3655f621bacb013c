/*
 * host.probes: the reachability targets the probe source watches
 * (docs/configuration.md#host). A TCP connect when a port is given, else an
 * ICMP echo. Pure: decoding and checks, no I/O (inet_pton reads no file).
 */
#ifndef TEGRAWATCH_PROBE_CONFIG_H
#define TEGRAWATCH_PROBE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/cfg_decode.h"

#define PROBE_MAX 16         /* probes: 3 metrics each */
#define PROBE_NAME_MAX 32    /* a metric segment: [a-z0-9_]+ */
#define PROBE_HOST_MAX 253   /* the longest DNS name */
#define PROBE_WINDOW_MAX 100 /* attempts in the window */

struct probe_config {
	char name[PROBE_NAME_MAX + 1];
	char host[PROBE_HOST_MAX + 1]; /* an IPv4 or IPv6 address, or a DNS name */
	int port;                      /* 1..65535: TCP connect; 0: ICMP echo */
	int64_t interval_ms;           /* between attempts, 10 s */
	int64_t timeout_ms;            /* of one attempt, 2 s (at most interval_ms) */
	int window;                    /* attempts the loss and round-trip time are taken over, 6 */
};

/* host.probes as decoded: a list; absent = none */
struct host_probes {
	struct probe_config *items; /* NULL when none */
	size_t count;
};

enum probe_host_kind {
	PROBE_HOST_BAD,
	PROBE_HOST_IPV4,
	PROBE_HOST_IPV6,
	PROBE_HOST_NAME, /* looked up without blocking the loop (getaddrinfo_a) */
};

/** What HOST is: an address literal, a name that may be looked up, or neither. */
enum probe_host_kind probe_host_kind(const char *host);

/** True for a probe name: 1..32 of [a-z0-9_] (it is the NAME of probe.NAME.up). */
bool probe_name_valid(const char *name);

/**
 * Decodes the host.probes list NODE into *OUT (freed first), reporting
 * every mistake with its place. Returns 0, or -EINVAL after reporting
 * (*OUT is then empty).
 */
int probe_config_decode(struct cfg_decoder *dec, const struct cfg_node *node, struct host_probes *out);

/** Frees what probe_config_decode() made; leaves *P empty. */
void probe_config_free(struct host_probes *p);

/** The same probes, in the same order. */
bool probe_config_equal(const struct host_probes *a, const struct host_probes *b);

#endif
