/*
 * The probe source: reachability and round-trip time of host.probes
 * (docs/metrics.md#probes). A TCP connect to a port, or an ICMP echo
 * through an unprivileged ping socket where net.ipv4.ping_group_range
 * allows the agent's group. Never blocks the loop: every socket is
 * non-blocking and polled by the loop through the source's one epoll fd;
 * names are looked up with getaddrinfo_a(); timeouts are checked at each
 * tick. Metrics: probe.NAME.up, probe.NAME.rtt_ms, probe.NAME.loss_pct.
 */
#ifndef TEGRAWATCH_PROBE_SOURCE_H
#define TEGRAWATCH_PROBE_SOURCE_H

#include "core/pipeline.h"
#include "probe_config.h"

/** Creates the source for the COUNT probes of PROBES (copied). Returns 0 and *OUT, or -errno (epoll). */
int probe_source_create(const struct host_probes *probes, struct source **out);

#endif
