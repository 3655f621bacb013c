/*
 * The only file that knows NVML: its function names, types and constants
 * are declared here by hand from NVIDIA's public NVML API reference
 * (docs.nvidia.com/deploy/nvml-api, "Device Queries", "Initialization and
 * Cleanup", "Error reporting", "Clocks Event Reasons"; nvml.h of the CUDA
 * toolkit holds the same values), so neither nvml.h nor the library is
 * needed to build. The library is loaded at run time (core/dynlib.h) by name
 * (libnvidia-ml.so.1, the soname every NVIDIA driver installs), never
 * linked: a host without an NVIDIA driver runs the same binary. Values
 * checked against what a real H200 (driver 580.159, NVML 13.580) answered,
 * tests/fixtures/nvml/h200-probe.jsonl.
 */
#include "nvml_lib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_config.h"
#include "core/dynlib.h"
#include "core/xalloc.h"

/* nvmlReturn_t (API reference, "Error reporting"): the codes handled by name */
#define NVML_SUCCESS 0
#define NVML_ERROR_NOT_SUPPORTED 3 /* what the H200 answered for the fan: rc 3 */
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_GPU_IS_LOST 15

/* nvmlTemperatureSensors_t: NVML_TEMPERATURE_GPU = 0 */
#define NVML_TEMPERATURE_GPU 0
/* nvmlTemperatureThresholds_t: SHUTDOWN = 0, SLOWDOWN = 1 (the H200 probe used these) */
#define NVML_TEMPERATURE_THRESHOLD_SHUTDOWN 0
#define NVML_TEMPERATURE_THRESHOLD_SLOWDOWN 1
/* nvmlClockType_t: GRAPHICS = 0, SM = 1, MEM = 2 */
#define NVML_CLOCK_SM_TYPE 1
#define NVML_CLOCK_MEM_TYPE 2
/* buffer sizes: NVML_DEVICE_NAME_V2_BUFFER_SIZE, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE */
#define NVML_NAME_BUFFER 96
#define NVML_DRIVER_BUFFER 80

/*
 * nvmlClocksEventReasons (formerly "throttle reasons", same bits): GpuIdle
 * 0x1, ApplicationsClocksSetting 0x2, SwPowerCap 0x4, HwSlowdown 0x8,
 * SyncBoost 0x10, SwThermalSlowdown 0x20, HwThermalSlowdown 0x40,
 * HwPowerBrakeSlowdown 0x80, DisplayClockSetting 0x100. The H200's
 * supported mask was 0x1ff: all nine.
 */
static const uint64_t event_bit[NVML_EV_COUNT] = {
	[NVML_EV_IDLE] = 0x1,        [NVML_EV_APPLICATIONS] = 0x2,    [NVML_EV_SW_POWER_CAP] = 0x4,
	[NVML_EV_HW_SLOWDOWN] = 0x8, [NVML_EV_SYNC_BOOST] = 0x10,     [NVML_EV_SW_THERMAL] = 0x20,
	[NVML_EV_HW_THERMAL] = 0x40, [NVML_EV_HW_POWER_BRAKE] = 0x80, [NVML_EV_DISPLAY_CLOCK] = 0x100,
};

/* nvmlUtilization_t and nvmlMemory_t (v1) */
struct nvml_utilization {
	unsigned int gpu;
	unsigned int memory;
};

struct nvml_memory {
	unsigned long long total;
	unsigned long long free;
	unsigned long long used;
};

/*
 * nvmlProcessInfo_t ("Device Structs"; nvmlProcessInfo_v2_t's layout),
 * what the _v3 process queries fill; usedGpuMemory is
 * NVML_VALUE_NOT_AVAILABLE, (unsigned long long)-1, when NVML cannot say.
 */
struct nvml_process_info {
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId;
	unsigned int computeInstanceId;
};
#define NVML_VALUE_NOT_AVAILABLE (~0ULL)

/* nvmlDevice_t is an opaque pointer; nvmlPstates_t an int-sized enum */
typedef void *nvml_device;

/* The functions, as the API reference declares them (every one returns nvmlReturn_t, an int). */
#define NVML_FUNCTIONS(X)                                                                                              \
	X(nvmlInit_v2, int (*)(void))                                                                                  \
	X(nvmlShutdown, int (*)(void))                                                                                 \
	X(nvmlErrorString, const char *(*)(int))                                                                       \
	X(nvmlSystemGetDriverVersion, int (*)(char *, unsigned int))                                                   \
	X(nvmlDeviceGetCount_v2, int (*)(unsigned int *))                                                              \
	X(nvmlDeviceGetHandleByIndex_v2, int (*)(unsigned int, nvml_device *))                                         \
	X(nvmlDeviceGetName, int (*)(nvml_device, char *, unsigned int))                                               \
	X(nvmlDeviceGetUtilizationRates, int (*)(nvml_device, struct nvml_utilization *))                              \
	X(nvmlDeviceGetTemperature, int (*)(nvml_device, int, unsigned int *))                                         \
	X(nvmlDeviceGetTemperatureThreshold, int (*)(nvml_device, int, unsigned int *))                                \
	X(nvmlDeviceGetClockInfo, int (*)(nvml_device, int, unsigned int *))                                           \
	X(nvmlDeviceGetMaxClockInfo, int (*)(nvml_device, int, unsigned int *))                                        \
	X(nvmlDeviceGetPowerUsage, int (*)(nvml_device, unsigned int *))                                               \
	X(nvmlDeviceGetEnforcedPowerLimit, int (*)(nvml_device, unsigned int *))                                       \
	X(nvmlDeviceGetTotalEnergyConsumption, int (*)(nvml_device, unsigned long long *))                             \
	X(nvmlDeviceGetMemoryInfo, int (*)(nvml_device, struct nvml_memory *))                                         \
	X(nvmlDeviceGetPerformanceState, int (*)(nvml_device, int *))                                                  \
	X(nvmlDeviceGetFanSpeed, int (*)(nvml_device, unsigned int *))

typedef int (*reasons_fn)(nvml_device, unsigned long long *);
typedef int (*processes_fn)(nvml_device, unsigned int *, struct nvml_process_info *);

struct nvml_lib {
	struct dynlib *dl;
	int initialised;
#define NVML_FIELD(name, type) __typeof__(type) name;
	NVML_FUNCTIONS(NVML_FIELD)
#undef NVML_FIELD
	/* nvmlDeviceGetCurrentClocksEventReasons, or ...ThrottleReasons before driver 535 (same bits) */
	reasons_fn current_reasons;
	reasons_fn supported_reasons;
	/* nvmlDeviceGet{Compute,Graphics}RunningProcesses_v3 (NVML 11.4 on), optional */
	processes_fn compute_processes;
	processes_fn graphics_processes;
};

static const char *const call_names[NVML_CALL_COUNT] = {
	[NVML_UTILIZATION] = "nvmlDeviceGetUtilizationRates",
	[NVML_TEMP] = "nvmlDeviceGetTemperature",
	[NVML_TEMP_SLOWDOWN] = "nvmlDeviceGetTemperatureThreshold(SLOWDOWN)",
	[NVML_TEMP_SHUTDOWN] = "nvmlDeviceGetTemperatureThreshold(SHUTDOWN)",
	[NVML_CLOCK_SM] = "nvmlDeviceGetClockInfo(SM)",
	[NVML_CLOCK_MEM] = "nvmlDeviceGetClockInfo(MEM)",
	[NVML_CLOCK_SM_MAX] = "nvmlDeviceGetMaxClockInfo(SM)",
	[NVML_CLOCK_MEM_MAX] = "nvmlDeviceGetMaxClockInfo(MEM)",
	[NVML_POWER] = "nvmlDeviceGetPowerUsage",
	[NVML_POWER_LIMIT] = "nvmlDeviceGetEnforcedPowerLimit",
	[NVML_ENERGY] = "nvmlDeviceGetTotalEnergyConsumption",
	[NVML_EVENT_REASONS] = "nvmlDeviceGetCurrentClocksEventReasons",
	[NVML_EVENT_SUPPORTED] = "nvmlDeviceGetSupportedClocksEventReasons",
	[NVML_MEMORY] = "nvmlDeviceGetMemoryInfo",
	[NVML_PSTATE] = "nvmlDeviceGetPerformanceState",
	[NVML_FAN] = "nvmlDeviceGetFanSpeed",
	[NVML_PROCS_COMPUTE] = "nvmlDeviceGetComputeRunningProcesses_v3",
	[NVML_PROCS_GRAPHICS] = "nvmlDeviceGetGraphicsRunningProcesses_v3",
};

const char *
nvml_call_name(enum nvml_call call)
{
	return (unsigned)call < NVML_CALL_COUNT ? call_names[call] : "?";
}

int
nvml_event_in(uint64_t mask, enum nvml_event ev)
{
	return (unsigned)ev < NVML_EV_COUNT && (mask & event_bit[ev]) != 0;
}

#if !HAVE_NVML
/* Built without it (-Dnvml=disabled: the small static build, which cannot load a shared library). */
int
nvml_lib_open(const char *soname, struct nvml_lib **out, char *why, size_t why_size)
{
	(void)soname;
	(void)out;
	snprintf(why, why_size, "this build has no NVML support (-Dnvml=disabled)");
	return -ENOENT;
}
#else
/* An optional function: NAME, or OLD_NAME in drivers that predate it. */
static void *
find(const struct dynlib *dl, const char *name, const char *old_name)
{
	void *f = dynlib_find(dl, name);
	return f || !old_name ? f : dynlib_find(dl, old_name);
}

int
nvml_lib_open(const char *soname, struct nvml_lib **out, char *why, size_t why_size)
{
	const char *const names[] = {soname ? soname : "libnvidia-ml.so.1", NULL};
	struct nvml_lib *lib = xcalloc(1, sizeof(*lib));
#define NVML_SYMBOL(fn, type) {#fn, (void **)&lib->fn},
	const struct dynlib_symbol symbols[] = {NVML_FUNCTIONS(NVML_SYMBOL)};
#undef NVML_SYMBOL
	if (dynlib_open(names, symbols, sizeof(symbols) / sizeof(symbols[0]), &lib->dl, why, why_size) < 0) {
		free(lib);
		return -ENOENT;
	}
	*(void **)&lib->current_reasons =
		find(lib->dl, "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons");
	*(void **)&lib->supported_reasons = find(lib->dl, "nvmlDeviceGetSupportedClocksEventReasons",
						 "nvmlDeviceGetSupportedClocksThrottleReasons");
	*(void **)&lib->compute_processes = find(lib->dl, call_names[NVML_PROCS_COMPUTE], NULL);
	*(void **)&lib->graphics_processes = find(lib->dl, call_names[NVML_PROCS_GRAPHICS], NULL);
	*out = lib;
	return 0;
}
#endif

const char *
nvml_lib_error(struct nvml_lib *lib, int rc)
{
	const char *s = lib && lib->nvmlErrorString ? lib->nvmlErrorString(rc) : NULL;
	return s ? s : "unknown NVML error";
}

int
nvml_lib_init(struct nvml_lib *lib, unsigned *gpus, char *why, size_t why_size)
{
	int rc = lib->nvmlInit_v2();
	if (rc != NVML_SUCCESS) {
		snprintf(why, why_size, "nvmlInit_v2: %s (%d)", nvml_lib_error(lib, rc), rc);
		return -EIO;
	}
	lib->initialised = 1;
	unsigned int n = 0;
	rc = lib->nvmlDeviceGetCount_v2(&n);
	if (rc != NVML_SUCCESS) {
		snprintf(why, why_size, "nvmlDeviceGetCount_v2: %s (%d)", nvml_lib_error(lib, rc), rc);
		return -EIO;
	}
	*gpus = n;
	return 0;
}

void
nvml_lib_driver(struct nvml_lib *lib, char *buf, size_t size)
{
	char v[NVML_DRIVER_BUFFER] = "";
	if (lib->nvmlSystemGetDriverVersion(v, sizeof(v)) != NVML_SUCCESS) {
		v[0] = '\0';
	}
	v[sizeof(v) - 1] = '\0';
	snprintf(buf, size, "%s", v);
}

static int
status(int rc)
{
	switch (rc) {
	case NVML_SUCCESS:
		return 0;
	case NVML_ERROR_NOT_SUPPORTED:
		return -ENOTSUP;
	case NVML_ERROR_GPU_IS_LOST:
		return -ENODEV;
	default:
		return -EIO;
	}
}

int
nvml_lib_device(struct nvml_lib *lib, unsigned index, void **dev, char *name, size_t name_size)
{
	nvml_device d = NULL;
	char n[NVML_NAME_BUFFER] = "";
	int rc = lib->nvmlDeviceGetHandleByIndex_v2(index, &d);
	if (rc != NVML_SUCCESS) {
		return status(rc);
	}
	if (lib->nvmlDeviceGetName(d, n, sizeof(n)) != NVML_SUCCESS) {
		n[0] = '\0';
	}
	n[sizeof(n) - 1] = '\0';
	snprintf(name, name_size, "%s", n);
	*dev = d;
	return 0;
}

int
nvml_lib_read(struct nvml_lib *lib, void *dev, enum nvml_call call, uint64_t v[2], int *rc_out)
{
	unsigned int u = 0;
	unsigned long long ull = 0;
	int i = 0;
	int rc;
	struct nvml_utilization util = {0, 0};
	struct nvml_memory mem = {0, 0, 0};
	v[0] = v[1] = 0;
	switch (call) {
	case NVML_UTILIZATION:
		rc = lib->nvmlDeviceGetUtilizationRates(dev, &util);
		v[0] = util.gpu;
		v[1] = util.memory;
		break;
	case NVML_TEMP:
		rc = lib->nvmlDeviceGetTemperature(dev, NVML_TEMPERATURE_GPU, &u);
		v[0] = u;
		break;
	case NVML_TEMP_SLOWDOWN:
	case NVML_TEMP_SHUTDOWN:
		rc = lib->nvmlDeviceGetTemperatureThreshold(dev,
							    call == NVML_TEMP_SLOWDOWN
								    ? NVML_TEMPERATURE_THRESHOLD_SLOWDOWN
								    : NVML_TEMPERATURE_THRESHOLD_SHUTDOWN,
							    &u);
		v[0] = u;
		break;
	case NVML_CLOCK_SM:
	case NVML_CLOCK_MEM:
		rc = lib->nvmlDeviceGetClockInfo(dev, call == NVML_CLOCK_SM ? NVML_CLOCK_SM_TYPE : NVML_CLOCK_MEM_TYPE,
						 &u);
		v[0] = u;
		break;
	case NVML_CLOCK_SM_MAX:
	case NVML_CLOCK_MEM_MAX:
		rc = lib->nvmlDeviceGetMaxClockInfo(
			dev, call == NVML_CLOCK_SM_MAX ? NVML_CLOCK_SM_TYPE : NVML_CLOCK_MEM_TYPE, &u);
		v[0] = u;
		break;
	case NVML_POWER:
		rc = lib->nvmlDeviceGetPowerUsage(dev, &u);
		v[0] = u;
		break;
	case NVML_POWER_LIMIT:
		rc = lib->nvmlDeviceGetEnforcedPowerLimit(dev, &u);
		v[0] = u;
		break;
	case NVML_ENERGY:
		rc = lib->nvmlDeviceGetTotalEnergyConsumption(dev, &ull);
		v[0] = ull;
		break;
	case NVML_EVENT_REASONS:
	case NVML_EVENT_SUPPORTED: {
		reasons_fn f = call == NVML_EVENT_REASONS ? lib->current_reasons : lib->supported_reasons;
		rc = f ? f(dev, &ull) : NVML_ERROR_NOT_SUPPORTED;
		v[0] = ull;
		break;
	}
	case NVML_MEMORY:
		rc = lib->nvmlDeviceGetMemoryInfo(dev, &mem);
		v[0] = mem.total;
		v[1] = mem.used;
		break;
	case NVML_PSTATE:
		rc = lib->nvmlDeviceGetPerformanceState(dev, &i);
		v[0] = (uint64_t)(i < 0 ? 0 : i);
		break;
	case NVML_FAN:
		rc = lib->nvmlDeviceGetFanSpeed(dev, &u);
		v[0] = u;
		break;
	default:
		rc = NVML_ERROR_NOT_SUPPORTED;
		break;
	}
	if (rc_out) {
		*rc_out = rc;
	}
	return status(rc);
}

int
nvml_lib_processes(struct nvml_lib *lib, void *dev, enum nvml_call kind, struct nvml_process *out, unsigned *count,
		   int *rc_out)
{
	processes_fn f = kind == NVML_PROCS_COMPUTE    ? lib->compute_processes
			 : kind == NVML_PROCS_GRAPHICS ? lib->graphics_processes
						       : NULL;
	unsigned int n = *count;
	struct nvml_process_info *info = xcalloc(n ? n : 1, sizeof(*info));
	int rc = f ? f(dev, &n, n ? info : NULL) : NVML_ERROR_NOT_SUPPORTED;
	if (rc == NVML_SUCCESS) {
		n = n < *count ? n : *count;
		for (unsigned int i = 0; i < n; i++) {
			out[i].pid = info[i].pid;
			out[i].bytes =
				info[i].usedGpuMemory == NVML_VALUE_NOT_AVAILABLE ? UINT64_MAX : info[i].usedGpuMemory;
		}
	}
	free(info);
	if (rc_out) {
		*rc_out = rc;
	}
	if (rc == NVML_SUCCESS || rc == NVML_ERROR_INSUFFICIENT_SIZE) {
		*count = n;
		return rc == NVML_SUCCESS ? 0 : -ENOSPC;
	}
	return status(rc);
}

void
nvml_lib_close(struct nvml_lib *lib)
{
	if (!lib) {
		return;
	}
	if (lib->initialised && lib->nvmlShutdown) {
		lib->nvmlShutdown();
	}
#if HAVE_NVML
	dynlib_close(lib->dl);
#endif
	free(lib);
}
