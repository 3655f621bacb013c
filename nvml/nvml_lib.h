/*
 * NVIDIA's management library (NVML) behind tegrawatch's own types:
 * loaded with dlopen(), never linked (nvml_lib.c is the only file that
 * knows NVML's names, types and constants). Each call reads one thing of
 * one GPU and answers 0, -ENOTSUP (this GPU or driver does not have it),
 * -ENODEV (the GPU is lost: fallen off the bus) or -EIO (another NVML
 * error, named by nvml_lib_error()).
 *
 * The calls may block for as long as the driver does: call them from a
 * thread that the sampling loop never waits for (nvml_source.c).
 */
#ifndef TEGRAWATCH_NVML_LIB_H
#define TEGRAWATCH_NVML_LIB_H

#include <stddef.h>
#include <stdint.h>

/* What one call reads; the order is the order of nvml_lib.c's table. */
enum nvml_call {
	NVML_UTILIZATION,     /* v[0] GPU %, v[1] memory % */
	NVML_TEMP,            /* C */
	NVML_TEMP_SLOWDOWN,   /* C, static */
	NVML_TEMP_SHUTDOWN,   /* C, static */
	NVML_CLOCK_SM,        /* MHz */
	NVML_CLOCK_MEM,       /* MHz */
	NVML_CLOCK_SM_MAX,    /* MHz, static */
	NVML_CLOCK_MEM_MAX,   /* MHz, static */
	NVML_POWER,           /* mW */
	NVML_POWER_LIMIT,     /* mW, the enforced limit */
	NVML_ENERGY,          /* mJ since the driver was loaded */
	NVML_EVENT_REASONS,   /* NVML's clocks event reasons mask */
	NVML_EVENT_SUPPORTED, /* the reasons this GPU can report, static */
	NVML_MEMORY,          /* v[0] total bytes, v[1] used bytes */
	NVML_PSTATE,          /* 0 (P0, fastest) .. 15 */
	NVML_FAN,             /* % of the fan's maximum */
	NVML_PROCS_COMPUTE,   /* the processes with a compute context: nvml_lib_processes() */
	NVML_PROCS_GRAPHICS,  /* the processes with a graphics context: nvml_lib_processes() */
	NVML_CALL_COUNT,
};

/* NVML's clocks event reasons, as tegrawatch names them (bits of NVML_EVENT_REASONS). */
enum nvml_event {
	NVML_EV_IDLE,
	NVML_EV_APPLICATIONS,
	NVML_EV_SW_POWER_CAP,
	NVML_EV_HW_SLOWDOWN,
	NVML_EV_SYNC_BOOST,
	NVML_EV_SW_THERMAL,
	NVML_EV_HW_THERMAL,
	NVML_EV_HW_POWER_BRAKE,
	NVML_EV_DISPLAY_CLOCK,
	NVML_EV_COUNT,
};

struct nvml_lib;

/**
 * Loads SONAME ("libnvidia-ml.so.1" when NULL) and finds its functions.
 * Returns 0 and *OUT, or -ENOENT (no such library, or one without the
 * functions) with the reason in WHY. Does not initialise NVML.
 */
int nvml_lib_open(const char *soname, struct nvml_lib **out, char *why, size_t why_size);

/** Initialises NVML and counts the GPUs into *GPUS. 0, or -EIO with the reason in WHY. */
int nvml_lib_init(struct nvml_lib *lib, unsigned *gpus, char *why, size_t why_size);

/** The driver version ("580.159.04") into BUF; "" when NVML does not say. */
void nvml_lib_driver(struct nvml_lib *lib, char *buf, size_t size);

/** The handle of GPU INDEX into *DEV and its name into NAME. 0 or -errno as the reads. */
int nvml_lib_device(struct nvml_lib *lib, unsigned index, void **dev, char *name, size_t name_size);

/** Reads CALL of DEV into V[0] (and V[1]). 0, -ENOTSUP, -ENODEV or -EIO (*RC: NVML's code). */
int nvml_lib_read(struct nvml_lib *lib, void *dev, enum nvml_call call, uint64_t v[2], int *rc);

/* A process on a GPU and the GPU memory it uses. */
struct nvml_process {
	uint32_t pid;
	uint64_t bytes; /* UINT64_MAX: NVML cannot say (its NVML_VALUE_NOT_AVAILABLE) */
};

/**
 * The processes of KIND (NVML_PROCS_COMPUTE or NVML_PROCS_GRAPHICS) on DEV
 * into OUT, which has room for *COUNT; *COUNT gets how many. 0; -ENOSPC
 * with *COUNT the room needed (more started meanwhile); -ENOTSUP (not
 * supported, or a driver without the function: NVML before 11.4);
 * -ENODEV or -EIO (*RC: NVML's code).
 */
int nvml_lib_processes(struct nvml_lib *lib, void *dev, enum nvml_call kind, struct nvml_process *out, unsigned *count,
		       int *rc);

/** True when bit EV is set in MASK (an NVML_EVENT_REASONS or NVML_EVENT_SUPPORTED value). */
int nvml_event_in(uint64_t mask, enum nvml_event ev);

/** NVML's text for its return code RC. */
const char *nvml_lib_error(struct nvml_lib *lib, int rc);

/** The name of CALL's NVML function, for messages. */
const char *nvml_call_name(enum nvml_call call);

/** Shuts NVML down (when initialised) and unloads it. NULL is a no-op. */
void nvml_lib_close(struct nvml_lib *lib);

#endif
