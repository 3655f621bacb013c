/*
 * A stand-in for NVIDIA's libnvidia-ml.so.1, built by the test suite as
 * tests/nvml/libnvidia-ml.so.1 and found through LD_LIBRARY_PATH, so the
 * agent loads it through its real dlopen() path. It exports the NVML
 * functions tegrawatch calls and answers what the data file named by
 * FAKE_NVML_DATA says (a .fake file of tests/fixtures/nvml), one line each:
 *
 *   init RC                   nvmlInit_v2's answer (default 0)
 *   driver VERSION            nvmlSystemGetDriverVersion
 *   gpu INDEX NAME...         a GPU, in index order
 *   FIELD INDEX RC VALUE...   one answer, by the field names of the H200
 *                             probe (temp_gpu_c, fan_pct, ...): the return
 *                             code and the value(s); several values are
 *                             answered in turn, the last one repeated;
 *                             procs_compute and procs_graphics (the running
 *                             processes) take theirs as PID BYTES pairs,
 *                             the whole list at each call
 *   cost FIELD US             spin US microseconds in each call of FIELD
 *                             (only with FAKE_NVML_COSTS=1: the bench)
 *   hang INDEX FIELD N        call N+1 of FIELD on GPU INDEX sleeps until
 *                             the file FAKE_NVML_RELEASE is gone (or 60 s)
 *   lost INDEX N              after N utilization calls, every call on
 *                             GPU INDEX answers 15 (GPU_IS_LOST)
 *
 * A field without a line answers 3 (NOT_SUPPORTED). Call counts per field
 * are written to FAKE_NVML_COUNTS (when set) at nvmlShutdown, and
 * fake_nvml_calls() gives them to a test that dlopen()s this library.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define GPUS 8
#define VALUES 16

enum field {
	F_TEMP,
	F_SLOWDOWN,
	F_SHUTDOWN,
	F_UTIL_GPU,
	F_UTIL_MEM,
	F_CLOCK_SM,
	F_CLOCK_MEM,
	F_MAX_SM,
	F_MAX_MEM,
	F_POWER,
	F_POWER_LIMIT,
	F_ENERGY,
	F_REASONS,
	F_SUPPORTED,
	F_MEM_USED,
	F_MEM_TOTAL,
	F_PSTATE,
	F_FAN,
	F_PROCS_COMPUTE,
	F_PROCS_GRAPHICS,
	F_COUNT,
};

static const char *const field_names[F_COUNT] = {
	"temp_gpu_c",  "temp_slowdown_c",  "temp_shutdown_c", "util_gpu_pct",
	"util_mem_pct", "clock_sm_mhz",    "clock_mem_mhz",   "clock_max_sm_mhz",
	"clock_max_mem_mhz", "power_mw",   "power_limit_mw",  "energy_mj",
	"clocks_event_reasons", "supported_event_reasons", "mem_used_b", "mem_total_b",
	"pstate",      "fan_pct",         "procs_compute",   "procs_graphics",
};

struct answer {
	int set;
	int rc;
	int nvalues;
	unsigned long long values[VALUES];
	unsigned long calls;
	long hang_after; /* -1: never */
};

struct gpu {
	int present;
	char name[96];
	struct answer a[F_COUNT];
	long lost_after; /* -1: never */
	unsigned long util_calls;
};

static int loaded;
static int init_rc;
static char driver[80] = "580.159.04";
static struct gpu gpus[GPUS];
static unsigned gpu_count;
static long cost_us[F_COUNT];
static int costs_on;

static int
field_index(const char *name)
{
	for (int i = 0; i < F_COUNT; i++) {
		if (strcmp(name, field_names[i]) == 0) {
			return i;
		}
	}
	return -1;
}

static void
load(void)
{
	if (loaded) {
		return;
	}
	loaded = 1;
	for (unsigned g = 0; g < GPUS; g++) {
		gpus[g].lost_after = -1;
		for (int f = 0; f < F_COUNT; f++) {
			gpus[g].a[f].hang_after = -1;
		}
	}
	const char *c = getenv("FAKE_NVML_COSTS");
	costs_on = c && strcmp(c, "1") == 0;
	const char *path = getenv("FAKE_NVML_DATA");
	FILE *f = path ? fopen(path, "r") : NULL;
	if (!f) {
		return;
	}
	char line[512];
	while (fgets(line, sizeof(line), f)) {
		char key[64];
		int n = 0;
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || sscanf(line, "%63s %n", key, &n) < 1) {
			continue;
		}
		const char *rest = line + n;
		unsigned idx;
		int k;
		if (strcmp(key, "init") == 0) {
			init_rc = atoi(rest);
		} else if (strcmp(key, "driver") == 0) {
			snprintf(driver, sizeof(driver), "%s", rest);
		} else if (strcmp(key, "gpu") == 0 && sscanf(rest, "%u %n", &idx, &k) == 1 && idx < GPUS) {
			gpus[idx].present = 1;
			snprintf(gpus[idx].name, sizeof(gpus[idx].name), "%s", rest + k);
			if (idx + 1 > gpu_count) {
				gpu_count = idx + 1;
			}
		} else if (strcmp(key, "cost") == 0) {
			char name[64];
			long us;
			if (sscanf(rest, "%63s %ld", name, &us) == 2 && field_index(name) >= 0) {
				cost_us[field_index(name)] = us;
			}
		} else if (strcmp(key, "hang") == 0) {
			char name[64];
			long after;
			if (sscanf(rest, "%u %63s %ld", &idx, name, &after) == 3 && idx < GPUS && field_index(name) >= 0) {
				gpus[idx].a[field_index(name)].hang_after = after;
			}
		} else if (strcmp(key, "lost") == 0) {
			long after;
			if (sscanf(rest, "%u %ld", &idx, &after) == 2 && idx < GPUS) {
				gpus[idx].lost_after = after;
			}
		} else if (field_index(key) >= 0 && sscanf(rest, "%u %n", &idx, &k) == 1 && idx < GPUS) {
			struct answer *a = &gpus[idx].a[field_index(key)];
			const char *p = rest + k;
			char *end;
			a->set = 1;
			a->rc = (int)strtol(p, &end, 10);
			p = end;
			while (a->nvalues < VALUES) {
				unsigned long long v = strtoull(p, &end, 10);
				if (end == p) {
					break;
				}
				a->values[a->nvalues++] = v;
				p = end;
			}
		}
	}
	fclose(f);
}

static void
spin(long us)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

/* Sleeps until FAKE_NVML_RELEASE is gone, at most 60 s: a driver call that hangs. */
static void
hang(void)
{
	const char *release = getenv("FAKE_NVML_RELEASE");
	struct stat st;
	for (int i = 0; i < 600 && release && stat(release, &st) == 0; i++) {
		struct timespec t = {0, 100 * 1000 * 1000};
		nanosleep(&t, NULL);
	}
}

/* The answer to FIELD of the GPU behind DEV: its return code, and the value in *V. */
static int
answer(void *dev, int field, unsigned long long *v)
{
	struct gpu *g = dev;
	if (!loaded || !g || g < gpus || g >= gpus + GPUS || !g->present) {
		return 2; /* INVALID_ARGUMENT */
	}
	struct answer *a = &g->a[field];
	/* atomic: a test reads the count from its own thread while the NVML worker calls */
	unsigned long calls = __atomic_add_fetch(&a->calls, 1, __ATOMIC_RELAXED);
	if (field == F_UTIL_GPU) {
		g->util_calls++;
	}
	if (g->lost_after >= 0 && g->util_calls > (unsigned long)g->lost_after) {
		return 15;
	}
	if (a->hang_after >= 0 && calls == (unsigned long)a->hang_after + 1) {
		hang();
	}
	if (costs_on && cost_us[field] > 0) {
		spin(cost_us[field]);
	}
	if (!a->set) {
		return 3;
	}
	if (a->nvalues > 0) {
		unsigned long i = calls - 1 < (unsigned long)a->nvalues ? calls - 1 : (unsigned long)a->nvalues - 1;
		*v = a->values[i];
	}
	return a->rc;
}

unsigned long fake_nvml_calls(const char *field, unsigned gpu);

unsigned long
fake_nvml_calls(const char *field, unsigned gpu)
{
	int f = field_index(field);
	return f >= 0 && gpu < GPUS ? __atomic_load_n(&gpus[gpu].a[f].calls, __ATOMIC_RELAXED) : 0;
}

/* ---- the NVML functions (signatures of the public API reference) ---- */

int nvmlInit_v2(void);
int nvmlShutdown(void);
const char *nvmlErrorString(int rc);
int nvmlSystemGetDriverVersion(char *buf, unsigned int size);
int nvmlDeviceGetCount_v2(unsigned int *n);
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **dev);
int nvmlDeviceGetName(void *dev, char *buf, unsigned int size);
int nvmlDeviceGetTemperature(void *dev, int sensor, unsigned int *t);
int nvmlDeviceGetTemperatureThreshold(void *dev, int which, unsigned int *t);
int nvmlDeviceGetUtilizationRates(void *dev, unsigned int *util);
int nvmlDeviceGetClockInfo(void *dev, int type, unsigned int *mhz);
int nvmlDeviceGetMaxClockInfo(void *dev, int type, unsigned int *mhz);
int nvmlDeviceGetPowerUsage(void *dev, unsigned int *mw);
int nvmlDeviceGetEnforcedPowerLimit(void *dev, unsigned int *mw);
int nvmlDeviceGetTotalEnergyConsumption(void *dev, unsigned long long *mj);
int nvmlDeviceGetCurrentClocksEventReasons(void *dev, unsigned long long *mask);
int nvmlDeviceGetSupportedClocksEventReasons(void *dev, unsigned long long *mask);
int nvmlDeviceGetMemoryInfo(void *dev, unsigned long long *mem);
int nvmlDeviceGetPerformanceState(void *dev, int *p);
int nvmlDeviceGetFanSpeed(void *dev, unsigned int *pct);

/* nvmlProcessInfo_t, as NVML's API reference lays it out */
struct process_info {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
};

int nvmlDeviceGetComputeRunningProcesses_v3(void *dev, unsigned int *count, struct process_info *infos);
int nvmlDeviceGetGraphicsRunningProcesses_v3(void *dev, unsigned int *count, struct process_info *infos);

int
nvmlInit_v2(void)
{
	load();
	return init_rc;
}

int
nvmlShutdown(void)
{
	const char *path = getenv("FAKE_NVML_COUNTS");
	FILE *f = path ? fopen(path, "w") : NULL;
	for (unsigned g = 0; f && g < gpu_count; g++) {
		for (int i = 0; i < F_COUNT; i++) {
			fprintf(f, "%u %s %lu\n", g, field_names[i], gpus[g].a[i].calls);
		}
	}
	if (f) {
		fclose(f);
	}
	return 0;
}

const char *
nvmlErrorString(int rc)
{
	switch (rc) {
	case 0:
		return "Success";
	case 3:
		return "Not Supported";
	case 9:
		return "Driver Not Loaded";
	case 15:
		return "GPU is lost";
	default:
		return "Unknown Error";
	}
}

int
nvmlSystemGetDriverVersion(char *buf, unsigned int size)
{
	snprintf(buf, size, "%s", driver);
	return 0;
}

int
nvmlDeviceGetCount_v2(unsigned int *n)
{
	*n = gpu_count;
	return loaded ? 0 : 1;
}

int
nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **dev)
{
	if (i >= gpu_count || !gpus[i].present) {
		return 2;
	}
	*dev = &gpus[i];
	return 0;
}

int
nvmlDeviceGetName(void *dev, char *buf, unsigned int size)
{
	snprintf(buf, size, "%s", ((struct gpu *)dev)->name);
	return 0;
}

static int
uint_answer(void *dev, int field, unsigned int *out)
{
	unsigned long long v = 0;
	int rc = answer(dev, field, &v);
	if (rc == 0) {
		*out = (unsigned int)v;
	}
	return rc;
}

int
nvmlDeviceGetTemperature(void *dev, int sensor, unsigned int *t)
{
	return sensor == 0 ? uint_answer(dev, F_TEMP, t) : 2;
}

int
nvmlDeviceGetTemperatureThreshold(void *dev, int which, unsigned int *t)
{
	return which == 1 ? uint_answer(dev, F_SLOWDOWN, t) : which == 0 ? uint_answer(dev, F_SHUTDOWN, t) : 2;
}

int
nvmlDeviceGetUtilizationRates(void *dev, unsigned int *util)
{
	unsigned long long g = 0, m = 0;
	int rc = answer(dev, F_UTIL_GPU, &g);
	if (rc == 0) {
		answer(dev, F_UTIL_MEM, &m);
		util[0] = (unsigned int)g;
		util[1] = (unsigned int)m;
	}
	return rc;
}

int
nvmlDeviceGetClockInfo(void *dev, int type, unsigned int *mhz)
{
	return type == 1 ? uint_answer(dev, F_CLOCK_SM, mhz) : type == 2 ? uint_answer(dev, F_CLOCK_MEM, mhz) : 2;
}

int
nvmlDeviceGetMaxClockInfo(void *dev, int type, unsigned int *mhz)
{
	return type == 1 ? uint_answer(dev, F_MAX_SM, mhz) : type == 2 ? uint_answer(dev, F_MAX_MEM, mhz) : 2;
}

int
nvmlDeviceGetPowerUsage(void *dev, unsigned int *mw)
{
	return uint_answer(dev, F_POWER, mw);
}

int
nvmlDeviceGetEnforcedPowerLimit(void *dev, unsigned int *mw)
{
	return uint_answer(dev, F_POWER_LIMIT, mw);
}

int
nvmlDeviceGetTotalEnergyConsumption(void *dev, unsigned long long *mj)
{
	return answer(dev, F_ENERGY, mj);
}

int
nvmlDeviceGetCurrentClocksEventReasons(void *dev, unsigned long long *mask)
{
	return answer(dev, F_REASONS, mask);
}

int
nvmlDeviceGetSupportedClocksEventReasons(void *dev, unsigned long long *mask)
{
	return answer(dev, F_SUPPORTED, mask);
}

int
nvmlDeviceGetMemoryInfo(void *dev, unsigned long long *mem)
{
	unsigned long long used = 0, total = 0;
	int rc = answer(dev, F_MEM_USED, &used);
	if (rc == 0) {
		answer(dev, F_MEM_TOTAL, &total);
		mem[0] = total;
		mem[1] = total - used;
		mem[2] = used;
	}
	return rc;
}

int
nvmlDeviceGetPerformanceState(void *dev, int *p)
{
	unsigned long long v = 0;
	int rc = answer(dev, F_PSTATE, &v);
	if (rc == 0) {
		*p = (int)v;
	}
	return rc;
}

int
nvmlDeviceGetFanSpeed(void *dev, unsigned int *pct)
{
	return uint_answer(dev, F_FAN, pct);
}

/* FIELD's processes: its values as PID BYTES pairs; too little room answers 7 (INSUFFICIENT_SIZE) and the count */
static int
processes(void *dev, int field, unsigned int *count, struct process_info *infos)
{
	unsigned long long v = 0;
	int rc = answer(dev, field, &v);
	if (rc != 0) {
		return rc;
	}
	const struct answer *a = &((struct gpu *)dev)->a[field];
	unsigned int n = (unsigned int)a->nvalues / 2;
	if (*count < n) {
		*count = n;
		return 7;
	}
	for (unsigned int i = 0; i < n; i++) {
		infos[i] = (struct process_info){(unsigned int)a->values[2 * i], a->values[2 * i + 1], ~0u, ~0u};
	}
	*count = n;
	return 0;
}

int
nvmlDeviceGetComputeRunningProcesses_v3(void *dev, unsigned int *count, struct process_info *infos)
{
	return processes(dev, F_PROCS_COMPUTE, count, infos);
}

int
nvmlDeviceGetGraphicsRunningProcesses_v3(void *dev, unsigned int *count, struct process_info *infos)
{
	return processes(dev, F_PROCS_GRAPHICS, count, infos);
}
