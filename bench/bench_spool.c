/*
 * bench_spool: cost of the MQTT spool.
 *
 *   bench_spool [DIR]
 *
 * 1. Memory only, broker connected: push + peek + ack of one record.
 * 2. Broker away, file spool in DIR (default /dev/shm, else /tmp): pushes
 *    with a spool_sync() every 10 records until the 64 MiB file is full and
 *    drops begin, then the drain after "reconnect" (peek + ack, sync every
 *    100). Prints records/s, bytes per record on disk and the file size.
 * 3. Restart: spool_open() of that full file (the recovery scan).
 * Payloads are 600-byte JSON-like state documents on a 24-byte topic.
 * Wall-clock times: the file phases include write() and fsync().
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/spool.h"

#define PAYLOAD_BYTES 600
#define TOPIC "tegrawatch/jetson/state"

static double
now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char payload[PAYLOAD_BYTES];

static void
fill_payload(uint64_t seq)
{
	memset(payload, 'x', sizeof(payload));
	int n = snprintf(payload, sizeof(payload), "{\"seq\":%" PRIu64 ",\"temp.cpu_c\":52.9,\"pad\":\"", seq);
	payload[n] = 'x';
	payload[sizeof(payload) - 2] = '"';
	payload[sizeof(payload) - 1] = '}';
}

static int
bench_memory(void)
{
	struct spool_options o = {.max_records = 36000};
	struct spool *sp = NULL;
	if (spool_open(&o, &sp) != 0) {
		return 1;
	}
	const uint64_t n = 2000000;
	double t0 = now_s();
	for (uint64_t i = 0; i < n; i++) {
		fill_payload(i);
		spool_push(sp, TOPIC, payload, sizeof(payload), 1, false);
		const struct spool_record *r = spool_peek_next(sp);
		spool_ack(sp, r->id);
	}
	double dt = now_s() - t0;
	printf("memory, connected: %.0f push+peek+ack/s (%.0f ns each, payload formatting included)\n", n / dt,
	       dt / n * 1e9);
	/* A full ring drained by a window of 100 in flight with out-of-order acks. */
	for (uint64_t i = 0; i < 36000; i++) {
		fill_payload(i);
		spool_push(sp, TOPIC, payload, sizeof(payload), 1, false);
	}
	t0 = now_s();
	uint64_t window[100];
	size_t done = 0;
	for (;;) {
		size_t k = 0;
		const struct spool_record *r;
		while (k < 100 && (r = spool_peek_next(sp)) != NULL) {
			window[k++] = r->id;
		}
		if (k == 0) {
			break;
		}
		for (size_t i = k; i > 0; i--) {
			spool_ack(sp, window[i - 1]);
		}
		done += k;
	}
	dt = now_s() - t0;
	printf("memory, drain of 36000 (window 100, acks reversed): %.0f records/s\n", done / dt);
	spool_close(sp);
	return 0;
}

static int
bench_file(const char *dir)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/bench-spool-%d", dir, (int)getpid());
	struct spool_options o = {.max_records = 1000000, .path = path, .max_file_bytes = 64ull << 20};
	struct spool *sp = NULL;
	if (spool_open(&o, &sp) != 0) {
		fprintf(stderr, "bench_spool: cannot open %s\n", path);
		return 1;
	}
	/* Outage: nothing is acknowledged; run until 20% more than the file holds. */
	struct spool_stats st;
	const uint64_t n = 120000;
	double t0 = now_s();
	for (uint64_t i = 1; i <= n; i++) {
		fill_payload(i);
		spool_push(sp, TOPIC, payload, sizeof(payload), 1, false);
		if (i % 10 == 0) {
			spool_sync(sp);
		}
	}
	spool_sync(sp);
	double dt = now_s() - t0;
	spool_get_stats(sp, &st);
	size_t rec_bytes = 24 + strlen(TOPIC) + PAYLOAD_BYTES;
	printf("file, outage: %.0f records/s pushed (sync every 10); depth %" PRIu64 ", dropped %" PRIu64 "\n",
	       n / dt, st.depth, st.dropped);
	printf("  a record is %zu bytes on disk (%d payload + %zu topic + 24 framing); live %.1f MiB, file %.1f MiB"
	       " (the rest is delivered or dropped records awaiting compaction)\n",
	       rec_bytes, PAYLOAD_BYTES, strlen(TOPIC), st.depth * rec_bytes / 1048576.0,
	       st.file_bytes / 1048576.0);
	spool_close(sp);

	t0 = now_s();
	if (spool_open(&o, &sp) != 0) {
		return 1;
	}
	dt = now_s() - t0;
	spool_get_stats(sp, &st);
	printf("restart: spool_open of a %.1f MiB file with %" PRIu64 " records: %.0f ms\n",
	       st.file_bytes / 1048576.0, st.depth, dt * 1e3);

	t0 = now_s();
	uint64_t done = 0;
	const struct spool_record *r;
	while ((r = spool_peek_next(sp)) != NULL) {
		spool_ack(sp, r->id);
		if (++done % 100 == 0) {
			spool_sync(sp);
		}
	}
	spool_sync(sp);
	dt = now_s() - t0;
	spool_get_stats(sp, &st);
	printf("file, drain after reconnect: %.0f records/s (peek+ack, sync every 100); file now %" PRIu64
	       " bytes\n",
	       done / dt, st.file_bytes);
	spool_close(sp);
	unlink(path);
	return 0;
}

int
main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (bench_memory() != 0) {
		return 1;
	}
	return bench_file(dir);
}
