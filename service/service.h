/*
 * The service manager's view of the agent (systemd's notify protocol,
 * spoken directly, no libsystemd): READY=1 once the first sample is
 * in, WATCHDOG=1 only while sampling is on time (a stuck loop stops the
 * pings and systemd restarts it), RELOADING=1 / READY=1 around a SIGHUP
 * reload, STOPPING=1 on the way out.
 */
#ifndef TEGRAWATCH_SERVICE_H
#define TEGRAWATCH_SERVICE_H

#include "core/pipeline.h"

/**
 * The notifier as a stage, to be added first (it announces a reload before
 * the other stages reload). NULL when there is no service manager to tell
 * (NOTIFY_SOCKET unset, or not a Unix socket: said once).
 */
struct stage *service_stage_create(void);

#endif
