/* Inside work/: the ledger's fields and the reading side of it. */
#ifndef TEGRAWATCH_WORK_PRIV_H
#define TEGRAWATCH_WORK_PRIV_H

#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>

#include "work.h"

struct work_ledger {
	pthread_mutex_t lock;
	int refs;
	int count;
	char names[WORK_NAMES_MAX][WORK_NAME_MAX];
	double units[WORK_NAMES_MAX]; /* since the ledger was made */
	uint64_t reports;             /* lines and POSTs taken */
};

/** Copies the names and their units (at most WORK_NAMES_MAX) and the reports taken; returns how many names. */
size_t work_ledger_snapshot(struct work_ledger *l, char names[][WORK_NAME_MAX], double *units, uint64_t *reports);

/** Parses a loopback HOST:PORT (127.0.0.0/8, localhost, [::1]). 0 or -EINVAL. Pure. */
int work_parse_listen(const char *text, struct sockaddr_storage *addr, socklen_t *len);

#endif
