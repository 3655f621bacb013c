/*
 * bench_nvml: what NVML costs a sample, with the fake libnvidia-ml.so.1 of
 * the test suite (tests/nvml) answering the H200's recorded answers and
 * spinning each call's recorded median cost (FAKE_NVML_COSTS=1: the fake
 * stands in for the driver's time, not for a real NVML's code).
 *
 *   LD_LIBRARY_PATH=build/tests/nvml FAKE_NVML_DATA=tests/fixtures/nvml/h200.fake \
 *   FAKE_NVML_COSTS=1 build/bench/bench_nvml
 *
 * 1. the sampling loop's side: one read() of the NVML source (copy the
 *    worker's last poll, put the gpu.0.* metrics), which is all a sample pays;
 * 2. the worker's side, per poll of one GPU: the 16 calls of the probe every
 *    time, against tegrawatch's schedule (static fields once, the fan
 *    dropped after its NOT_SUPPORTED, the energy every 10 s of 1 s polls).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/sample.h"
#include "nvml/nvml.h"
#include "nvml/nvml_lib.h"

static double
now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int
bench_read(void)
{
	struct nvml_options o = {.interval_ms = 1000};
	struct source *src;
	char why[256];
	if (nvml_source_create(&o, &src, why, sizeof(why)) < 0) {
		fprintf(stderr, "bench_nvml: %s\n", why);
		return 1;
	}
	struct sample *s = calloc(1, sizeof(*s));
	/* the first read waits for the first poll */
	sample_clear(s);
	src->ops->read(src, s);
	size_t metrics = s->metrics.count;
	const int n = 200000;
	double t0 = now_us();
	for (int i = 0; i < n; i++) {
		sample_clear(s);
		src->ops->read(src, s);
	}
	double per = (now_us() - t0) / n;
	printf("read() on the sampling loop: %.2f us for %zu metrics (1 GPU)\n", per, metrics);
	free(s);
	source_destroy(src);
	return 0;
}

/* One poll's calls: all 16 (every time), or tegrawatch's per-poll ones. */
static double
poll_us(struct nvml_lib *lib, void *dev, const enum nvml_call *calls, size_t n, int rounds)
{
	uint64_t v[2];
	double t0 = now_us();
	for (int r = 0; r < rounds; r++) {
		for (size_t i = 0; i < n; i++) {
			nvml_lib_read(lib, dev, calls[i], v, NULL);
		}
	}
	return (now_us() - t0) / rounds;
}

static int
bench_calls(void)
{
	struct nvml_lib *lib;
	char why[256], name[96];
	unsigned gpus;
	void *dev;
	if (nvml_lib_open(NULL, &lib, why, sizeof(why)) < 0 || nvml_lib_init(lib, &gpus, why, sizeof(why)) < 0 ||
	    gpus == 0 || nvml_lib_device(lib, 0, &dev, name, sizeof(name)) < 0) {
		fprintf(stderr, "bench_nvml: no NVML GPU (%s)\n", why);
		return 1;
	}
	static const enum nvml_call all[] = {
		NVML_UTILIZATION, NVML_TEMP,	    NVML_TEMP_SLOWDOWN,	  NVML_TEMP_SHUTDOWN, NVML_CLOCK_SM,
		NVML_CLOCK_MEM,	  NVML_CLOCK_SM_MAX, NVML_CLOCK_MEM_MAX,  NVML_POWER,	      NVML_POWER_LIMIT,
		NVML_ENERGY,	  NVML_EVENT_REASONS, NVML_EVENT_SUPPORTED, NVML_MEMORY,	      NVML_PSTATE,
		NVML_FAN,
	};
	/* what nvml_source.c calls every poll once the fan has answered NOT_SUPPORTED */
	static const enum nvml_call polled[] = {
		NVML_UTILIZATION, NVML_TEMP,	      NVML_CLOCK_SM, NVML_CLOCK_MEM, NVML_POWER,
		NVML_POWER_LIMIT, NVML_EVENT_REASONS, NVML_MEMORY,   NVML_PSTATE,
	};
	static const enum nvml_call energy[] = {NVML_ENERGY};
	const int rounds = 50;
	double naive = poll_us(lib, dev, all, sizeof(all) / sizeof(all[0]), rounds);
	double ours = poll_us(lib, dev, polled, sizeof(polled) / sizeof(polled[0]), rounds * 20);
	double e = poll_us(lib, dev, energy, 1, rounds);
	printf("%s, one poll: every call of the probe %.0f us; tegrawatch's %.1f us + the energy %.0f us every 10th "
	       "poll = %.0f us a poll on average at 1 s\n",
	       name, naive, ours, e, ours + e / 10);
	nvml_lib_close(lib);
	return 0;
}

int
main(void)
{
	if (!getenv("FAKE_NVML_DATA")) {
		fprintf(stderr, "bench_nvml: set LD_LIBRARY_PATH to build/tests/nvml and FAKE_NVML_DATA (see the header)\n");
		return 2;
	}
	return bench_read() || bench_calls();
}
