/* The metric dictionary: the table and its lookups (see metric_dict.h). */
#include "metric_dict.h"

#include <stdio.h>
#include <string.h>

#include "text.h"

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

#define MHZ_TO_HZ 1e6
#define PCT_TO_RATIO 0.01
#define MILLI 0.001
#define MIB_TO_BYTES 1048576.0
#define KIB_TO_BYTES 1024.0

#define GAUGE METRIC_KIND_GAUGE
#define COUNTER METRIC_KIND_COUNTER
#define LIMIT METRIC_KIND_LIMIT

/* clang-format off */
#define DEG_C "\xc2\xb0" "C"

/* Labels: each takes the next placeholder's text, or the value given. */
#define L(a) {{a, NULL}}
#define L2(a, b) {{a, NULL}, {b, NULL}}
#define LV(a, v) {{a, v}}
#define L1V(a, b, v) {{a, NULL}, {b, v}}
/* the placeholder's text, or the real text and the labels a source said for it (metric_attrs.h) */
#define LA(a) {{a, METRIC_LABEL_ATTRS}}

/* Home Assistant: a sensor entity (name, device class, unit, display precision). */
#define HA(name, cls, unit, prec) {name, cls, unit, prec, 0, false, false}
/* Home Assistant: a binary sensor of class "running", ON when the value is 1 or more */
#define HA_RUNNING(name) {name, "running", NULL, 0, 0, false, true}
/* Home Assistant: a binary sensor of device class CLS ("connectivity"), ON when the value is 1 or more */
#define HA_BINARY(name, cls) {name, cls, NULL, 0, 0, false, true}

/* The agent's own metrics: family "tegrawatch_agent_...", from the name. */
#define AGENT_HELP "A value the agent reports about itself."
#define AGENT_COUNTER(name, help) {name, "count", COUNTER, NULL, 1, "1", {{0}}, help, {0}, false}
#define AGENT_GAUGE(name, unit, help) {name, unit, GAUGE, NULL, 1, "1", {{0}}, help, {0}, false}
#define AGENT_BYTES(name) {name, "bytes", LIMIT, NULL, 1, "By", {{0}}, AGENT_HELP, {0}, false}
#define AGENT_TIME(name) {name, "unix s", GAUGE, NULL, 1, "s", {{0}}, AGENT_HELP, {0}, false}
/* clang-format on */

/*
 * Every canonical metric, one entry per pattern of docs/metrics.md (a test
 * holds the two together: tests/unit/test_metric_dict.c). To add a metric:
 * add its line here and its row to docs/metrics.md; /metrics, the MQTT
 * limits split, Home Assistant, the rule checker and every sink follow.
 *
 *   pattern       as in the docs: N = digits, UPPER = one [a-z0-9_]+ segment
 *   unit          the canonical unit, as the docs' unit column writes it
 *   kind          GAUGE; COUNTER (Prometheus counter, its family ends in _total);
 *                 LIMIT (a gauge that moves only with a setting, the power mode or
 *                 the hardware: MQTT sends it on PREFIX/ID/limits when it changes)
 *   family        Prometheus family in base units (NULL: tegrawatch_ + the name)
 *   scale         value x scale = the family's unit
 *   base unit     UCUM code of the scaled value (OTLP)
 *   labels        one per placeholder, in order, or a fixed value
 *   help          the family's # HELP text
 *   ha            Home Assistant entity: name ("%s" = the placeholder), device
 *                 class, unit, display precision (and exp10 when the entity shows
 *                 another unit than the name's: mW shown as W)
 *   no_rules      true when the rules stage never sees it
 *
 * The first entry that matches a name wins: a pattern that would also take
 * a more specific one comes after it.
 */
/* a table laid out by hand */
/* clang-format off */
static const struct metric_def table[] = {
	{"ram.used_mb", "MiB", GAUGE, "tegrawatch_memory_used_bytes", MIB_TO_BYTES, "By", {{0}},
	 "Memory in use in bytes.", HA("RAM used", "data_size", "MiB", 0), false},
	{"ram.total_mb", "MiB", LIMIT, "tegrawatch_memory_total_bytes", MIB_TO_BYTES, "By", {{0}},
	 "Memory available to applications in bytes.", {0}, false},
	{"swap.used_mb", "MiB", GAUGE, "tegrawatch_swap_used_bytes", MIB_TO_BYTES, "By", {{0}},
	 "Swap in use in bytes.", HA("Swap used", "data_size", "MiB", 0), false},
	{"swap.total_mb", "MiB", LIMIT, "tegrawatch_swap_total_bytes", MIB_TO_BYTES, "By", {{0}},
	 "Swap size in bytes.", {0}, false},
	{"swap.cached_mb", "MiB", GAUGE, "tegrawatch_swap_cached_bytes", MIB_TO_BYTES, "By", {{0}},
	 "Swap cached in bytes.", {0}, false},
	{"iram.used_kb", "KiB", GAUGE, "tegrawatch_iram_used_bytes", KIB_TO_BYTES, "By", {{0}},
	 "IRAM in use in bytes.", {0}, false},
	{"iram.total_kb", "KiB", LIMIT, "tegrawatch_iram_total_bytes", KIB_TO_BYTES, "By", {{0}},
	 "IRAM size in bytes.", {0}, false},
	{"cpu.N.load_pct", "%", GAUGE, "tegrawatch_cpu_load_ratio", PCT_TO_RATIO, "1", L("cpu"),
	 "Load of a CPU core (0 to 1).", {0}, false},
	{"cpu.N.freq_mhz", "MHz", GAUGE, "tegrawatch_cpu_frequency_hertz", MHZ_TO_HZ, "Hz", L("cpu"),
	 "Current clock of a CPU core in hertz.", {0}, false},
	{"cpu.N.requested_freq_mhz", "MHz", GAUGE, "tegrawatch_cpu_requested_frequency_hertz", MHZ_TO_HZ, "Hz", L("cpu"),
	 "Clock asked of a CPU core while its measured clock is more than 10 % below it, in hertz.", {0}, false},
	{"cpu.N.online", "0/1", LIMIT, "tegrawatch_cpu_online", 1, "1", L("cpu"),
	 "1 when the CPU core is online.", {0}, false},
	{"cpu.load_pct", "%", GAUGE, "tegrawatch_cpu_mean_load_ratio", PCT_TO_RATIO, "1", {{0}},
	 "Mean load over the online CPU cores (0 to 1).", HA("CPU load", NULL, "%", 0), false},
	{"cpu.N.max_freq_mhz", "MHz", LIMIT, "tegrawatch_cpu_max_frequency_hertz", MHZ_TO_HZ, "Hz", L("cpu"),
	 "Current clock ceiling of a CPU core (power mode, thermal caps) in hertz.", {0}, false},
	{"cpu.N.min_freq_mhz", "MHz", LIMIT, "tegrawatch_cpu_min_frequency_hertz", MHZ_TO_HZ, "Hz", L("cpu"),
	 "Current clock floor of a CPU core in hertz.", {0}, false},
	{"cpu.N.hw_max_freq_mhz", "MHz", LIMIT, "tegrawatch_cpu_hw_max_frequency_hertz", MHZ_TO_HZ, "Hz", L("cpu"),
	 "Hardware maximum clock of a CPU core in hertz.", {0}, false},
	{"gpu.load_pct", "%", GAUGE, "tegrawatch_gpu_load_ratio", PCT_TO_RATIO, "1", {{0}},
	 "GPU load (0 to 1).", HA("GPU load", NULL, "%", 0), false},
	{"gpu.freq_mhz", "MHz", GAUGE, "tegrawatch_gpu_frequency_hertz", MHZ_TO_HZ, "Hz", {{0}},
	 "Current GPU clock in hertz.", HA("GPU clock", "frequency", "MHz", 0), false},
	{"gpu.gpc.N.freq_mhz", "MHz", GAUGE, "tegrawatch_gpu_gpc_frequency_hertz", MHZ_TO_HZ, "Hz", L("gpc"),
	 "Current clock of a GPU GPC in hertz.", {0}, false},
	{"gpu.max_freq_mhz", "MHz", LIMIT, "tegrawatch_gpu_max_frequency_hertz", MHZ_TO_HZ, "Hz", {{0}},
	 "Current GPU clock ceiling in hertz.", {0}, false},
	{"gpu.min_freq_mhz", "MHz", LIMIT, "tegrawatch_gpu_min_frequency_hertz", MHZ_TO_HZ, "Hz", {{0}},
	 "Current GPU clock floor in hertz.", {0}, false},
	{"gpu.hw_max_freq_mhz", "MHz", LIMIT, "tegrawatch_gpu_hw_max_frequency_hertz", MHZ_TO_HZ, "Hz", {{0}},
	 "Hardware maximum GPU clock in hertz.", {0}, false},
	/* NVIDIA GPUs through NVML (nvml/), GPU N */
	{"gpu.N.lost", "0/1", GAUGE, "tegrawatch_nvml_gpu_lost", 1, "1", L("gpu"),
	 "1 when NVML says the GPU is lost (fallen off the bus); its other series are then absent.", {0}, false},
	{"gpu.N.load_pct", "%", GAUGE, "tegrawatch_nvml_gpu_utilization_ratio", PCT_TO_RATIO, "1", L("gpu"),
	 "Share of the last sample period in which a kernel ran on the GPU (NVML, 0 to 1).",
	 HA("GPU %s load", NULL, "%", 0), false},
	{"gpu.N.mem.load_pct", "%", GAUGE, "tegrawatch_nvml_gpu_memory_utilization_ratio", PCT_TO_RATIO, "1", L("gpu"),
	 "Share of the last sample period in which the GPU's memory was read or written (NVML, 0 to 1).", {0}, false},
	{"gpu.N.temp_c", DEG_C, GAUGE, "tegrawatch_nvml_gpu_temperature_celsius", 1, "Cel", L("gpu"),
	 "GPU temperature (NVML) in degrees Celsius.", HA("GPU %s temperature", "temperature", DEG_C, 1), false},
	{"gpu.N.temp_slowdown_c", DEG_C, LIMIT, "tegrawatch_nvml_gpu_slowdown_temperature_celsius", 1, "Cel", L("gpu"),
	 "Temperature at which the GPU slows down (NVML) in degrees Celsius.", {0}, false},
	{"gpu.N.temp_shutdown_c", DEG_C, LIMIT, "tegrawatch_nvml_gpu_shutdown_temperature_celsius", 1, "Cel", L("gpu"),
	 "Temperature at which the GPU shuts down (NVML) in degrees Celsius.", {0}, false},
	{"gpu.N.sm.freq_mhz", "MHz", GAUGE, "tegrawatch_nvml_gpu_sm_frequency_hertz", MHZ_TO_HZ, "Hz", L("gpu"),
	 "GPU SM clock (NVML) in hertz.", {0}, false},
	{"gpu.N.mem.freq_mhz", "MHz", GAUGE, "tegrawatch_nvml_gpu_memory_frequency_hertz", MHZ_TO_HZ, "Hz", L("gpu"),
	 "GPU memory clock (NVML) in hertz.", {0}, false},
	{"gpu.N.sm.max_freq_mhz", "MHz", LIMIT, "tegrawatch_nvml_gpu_sm_max_frequency_hertz", MHZ_TO_HZ, "Hz", L("gpu"),
	 "Highest GPU SM clock (NVML) in hertz.", {0}, false},
	{"gpu.N.mem.max_freq_mhz", "MHz", LIMIT, "tegrawatch_nvml_gpu_memory_max_frequency_hertz", MHZ_TO_HZ, "Hz",
	 L("gpu"), "Highest GPU memory clock (NVML) in hertz.", {0}, false},
	{"gpu.N.power_mw", "mW", GAUGE, "tegrawatch_nvml_gpu_power_watts", MILLI, "W", L("gpu"),
	 "GPU power draw (NVML) in watts.", {"GPU %s power", "power", "W", 2, -3, false, false}, false},
	{"gpu.N.power_limit_mw", "mW", LIMIT, "tegrawatch_nvml_gpu_power_limit_watts", MILLI, "W", L("gpu"),
	 "Power limit the GPU enforces (NVML) in watts.", {0}, false},
	{"gpu.N.energy_joules_total", "J", COUNTER, "tegrawatch_nvml_gpu_energy_joules_total", 1, "J", L("gpu"),
	 "Energy the GPU used since the driver was loaded (NVML, read every 10 s) in joules.", {0}, false},
	{"gpu.N.pstate", "0..15", GAUGE, "tegrawatch_nvml_gpu_performance_state", 1, "1", L("gpu"),
	 "GPU performance state (NVML): 0 (P0) is the fastest, 15 the slowest.", {0}, false},
	{"gpu.N.fan_pct", "%", GAUGE, "tegrawatch_nvml_gpu_fan_ratio", PCT_TO_RATIO, "1", L("gpu"),
	 "GPU fan speed as a share of its maximum (NVML, 0 to 1).", {0}, false},
	{"gpu.N.mem.used_mb", "MiB", GAUGE, "tegrawatch_nvml_gpu_memory_used_bytes", MIB_TO_BYTES, "By", L("gpu"),
	 "GPU memory in use (NVML) in bytes.", {0}, false},
	{"gpu.N.mem.total_mb", "MiB", LIMIT, "tegrawatch_nvml_gpu_memory_total_bytes", MIB_TO_BYTES, "By", L("gpu"),
	 "GPU memory (NVML) in bytes.", {0}, false},
	{"gpu.N.clocks_event_reasons", "bit mask", GAUGE, "tegrawatch_nvml_gpu_clocks_event_reasons", 1, "1", L("gpu"),
	 "NVML's clocks event reasons of the GPU, its raw bit mask.", {0}, false},
	{"gpu.N.event.NAME", "0/1", GAUGE, "tegrawatch_nvml_gpu_clocks_event", 1, "1", L2("gpu", "event"),
	 "1 while this clocks event reason of the GPU applies (NVML: thermal, power_cap, power_brake, hw_slowdown, idle, "
	 "applications).", {0}, false},
	{"emc.load_pct", "%", GAUGE, "tegrawatch_emc_load_ratio", PCT_TO_RATIO, "1", {{0}},
	 "Memory controller load (0 to 1).", HA("EMC load", NULL, "%", 0), false},
	{"emc.freq_mhz", "MHz", GAUGE, "tegrawatch_emc_frequency_hertz", MHZ_TO_HZ, "Hz", {{0}},
	 "Memory controller clock in hertz.", HA("EMC clock", "frequency", "MHz", 0), false},
	{"engine.NAME.load_pct", "%", GAUGE, "tegrawatch_engine_load_ratio", PCT_TO_RATIO, "1", L("engine"),
	 "Load of a hardware engine (0 to 1).", {0}, false},
	{"engine.NAME.freq_mhz", "MHz", GAUGE, "tegrawatch_engine_frequency_hertz", MHZ_TO_HZ, "Hz", L("engine"),
	 "Clock of a hardware engine in hertz.", {0}, false},
	{"engine.NAME.on", "0/1", GAUGE, "tegrawatch_engine_on", 1, "1", L("engine"),
	 "1 when the hardware engine is powered on.", {0}, false},
	{"temp.SENSOR_c", DEG_C, GAUGE, "tegrawatch_temperature_celsius", 1, "Cel", L("sensor"),
	 "Temperature of a thermal zone or sensor in degrees Celsius.",
	 HA("%s temperature", "temperature", DEG_C, 1), false},
	{"temp_max.SENSOR_c", DEG_C, GAUGE, "tegrawatch_temperature_max_celsius", 1, "Cel", L("sensor"),
	 "Highest temperature of a sensor since tegrastats started (tegrastats' running maximum, JetPack 7), in degrees "
	 "Celsius.", {0}, false},
	{"trip.SENSOR.passive_c", DEG_C, LIMIT, "tegrawatch_trip_point_celsius", 1, "Cel", L1V("sensor", "type", "passive"),
	 "Lowest trip point of each type (passive, hot, critical, active) of a thermal zone in degrees Celsius.", {0}, false},
	{"trip.SENSOR.hot_c", DEG_C, LIMIT, "tegrawatch_trip_point_celsius", 1, "Cel", L1V("sensor", "type", "hot"),
	 "Lowest trip point of each type (passive, hot, critical, active) of a thermal zone in degrees Celsius.", {0}, false},
	{"trip.SENSOR.critical_c", DEG_C, LIMIT, "tegrawatch_trip_point_celsius", 1, "Cel", L1V("sensor", "type", "critical"),
	 "Lowest trip point of each type (passive, hot, critical, active) of a thermal zone in degrees Celsius.", {0}, false},
	{"trip.SENSOR.active_c", DEG_C, LIMIT, "tegrawatch_trip_point_celsius", 1, "Cel", L1V("sensor", "type", "active"),
	 "Lowest trip point of each type (passive, hot, critical, active) of a thermal zone in degrees Celsius.", {0}, false},
	{"trip.SENSOR.hot_surface_c", DEG_C, LIMIT, "tegrawatch_trip_point_celsius", 1, "Cel",
	 L1V("sensor", "type", "hot_surface"),
	 "Lowest trip point of each type (passive, hot, critical, active) of a thermal zone in degrees Celsius.", {0}, false},
	{"zone.SENSOR.gated", "0/1", GAUGE, "tegrawatch_zone_gated", 1, "1", L("sensor"),
	 "1 while a thermal zone has no value because its rail is power-gated (Thor's GPU zone while the GPU sleeps).",
	 {0}, false},
	{"cooling.TYPE.state", "steps", GAUGE, "tegrawatch_cooling_device_state", 1, "1", L("device"),
	 "Current state of a cooling device.", {0}, false},
	{"cooling.TYPE.max_state", "steps", LIMIT, "tegrawatch_cooling_device_max_state", 1, "1", L("device"),
	 "Highest state of a cooling device.", {0}, false},
	{"power.RAIL.mw", "mW", GAUGE, "tegrawatch_power_watts", MILLI, "W", L("rail"),
	 "Power drawn through a rail in watts.", {"%s power", "power", "W", 2, -3, true, false}, false},
	{"power.RAIL.avg_mw", "mW", GAUGE, "tegrawatch_power_average_watts", MILLI, "W", L("rail"),
	 "Average power through a rail since tegrastats started (tegrastats' running average), in watts.", {0}, false},
	{"power.RAIL.max_mw", "mW", GAUGE, "tegrawatch_power_max_watts", MILLI, "W", L("rail"),
	 "Highest power through a rail since tegrastats started (tegrastats' running maximum, JetPack 7), in watts.",
	 {0}, false},
	{"power.RAIL.mv", "mV", GAUGE, "tegrawatch_rail_voltage_volts", MILLI, "V", L("rail"),
	 "Bus voltage of a rail in volts.", {0}, false},
	{"power.RAIL.ma", "mA", GAUGE, "tegrawatch_rail_current_amperes", MILLI, "A", L("rail"),
	 "Current through a rail in amperes.", {0}, false},
	{"power.RAIL.crit_alarm", "0/1", GAUGE, "tegrawatch_rail_crit_alarm", 1, "1", L("rail"),
	 "1 when the rail's current is above its critical limit.", {0}, false},
	{"power.RAIL.max_alarm", "0/1", GAUGE, "tegrawatch_rail_max_alarm", 1, "1", L("rail"),
	 "1 when the rail's current is above its warning limit.", {0}, false},
	{"power.RAIL.crit_ma", "mA", LIMIT, "tegrawatch_rail_current_limit_amperes", MILLI, "A", L("rail"),
	 "Over-current limit of a rail in amperes.", {0}, false},
	{"oc.N.events", "count", COUNTER, "tegrawatch_oc_events_total", 1, "1", L("event"),
	 "Over-current and under-voltage events counted by the SoC since boot.", {0}, false},
	{"oc.N.throttle_enabled", "0/1", LIMIT, "tegrawatch_oc_throttle_enabled", 1, "1", L("event"),
	 "1 when the over-current event throttles the clocks.", {0}, false},
	{"fan.N.pwm", "0..255", GAUGE, "tegrawatch_fan_pwm", 1, "1", L("fan"),
	 "Fan drive (0 to 255).", {0}, false},
	{"fan.N.rpm", "rpm", GAUGE, "tegrawatch_fan_rpm", 1, "{rev}/min", L("fan"),
	 "Fan speed in revolutions per minute.", HA("Fan %s speed", NULL, "rpm", 0), false},
	{"fan.NAME.rpm", "rpm", GAUGE, "tegrawatch_fan_rpm", 1, "{rev}/min", L("fan"),
	 "Fan speed in revolutions per minute.", HA("Fan %s speed", NULL, "rpm", 0), false},
	{"fan.N.dead", "0/1", GAUGE, "tegrawatch_fan_dead", 1, "1", L("fan"),
	 "1 when a fan is driven (PWM above 0) and its tachometer reads 0 rpm.", {0}, false},
	{"thermal.hot_surface", "0/1", GAUGE, "tegrawatch_hot_surface", 1, "1", {{0}},
	 "1 while a zone is at or above a trip bound to the hot-surface alert (Orin's touch warning): not a throttle.",
	 {0}, false},
	{"thermal.resistance_now_c_per_w", DEG_C "/W", GAUGE, "tegrawatch_thermal_resistance_now_celsius_per_watt", 1,
	 "Cel/W", {{0}},
	 "Junction degrees above the reference per watt of input power, over the last minutes of thermal steady state.",
	 {0}, false},
	{"thermal.resistance_c_per_w", DEG_C "/W", GAUGE, "tegrawatch_thermal_resistance_celsius_per_watt", 1, "Cel/W",
	 {{0}}, "The power mode's slow average of the thermal resistance (about 6 h of steady time).", {0}, false},
	{"thermal.resistance_baseline_c_per_w", DEG_C "/W", GAUGE, "tegrawatch_thermal_resistance_baseline_celsius_per_watt",
	 1, "Cel/W", {{0}}, "The power mode's thermal resistance over its first 6 h of steady time.", {0}, false},
	{"thermal.resistance_rise_pct", "%", GAUGE, "tegrawatch_thermal_resistance_rise_ratio", PCT_TO_RATIO, "1", {{0}},
	 "How far the thermal resistance rose above its baseline (0.2 = 20 %).", {0}, false},
	{"mts.fg_pct", "%", GAUGE, "tegrawatch_mts_foreground_ratio", PCT_TO_RATIO, "1", {{0}},
	 "Foreground time of the Denver MTS (0 to 1).", {0}, false},
	{"mts.bg_pct", "%", GAUGE, "tegrawatch_mts_background_ratio", PCT_TO_RATIO, "1", {{0}},
	 "Background time of the Denver MTS (0 to 1).", {0}, false},
	/* a limit in all but name: it moves with the power budget, so it stays in the MQTT state */
	{"cpu.edp_limit_mhz", "MHz", GAUGE, "tegrawatch_cpu_edp_limit_hertz", MHZ_TO_HZ, "Hz", {{0}},
	 "CPU clock limit reported by old tegrastats (EDP limit) in hertz.", {0}, false},
	{"nvpmodel.id", "id", LIMIT, "tegrawatch_power_mode_id", 1, "1", {{0}},
	 "Id of the nvpmodel power mode.", {0}, false},
	{"nvpmodel.unexpected", "0/1", GAUGE, "tegrawatch_power_mode_unexpected", 1, "1", {{0}},
	 "1 when the board runs another power mode than agent.expected_power_mode.", {0}, false},
	{"nvpmodel.mismatch", "0/1", GAUGE, "tegrawatch_power_mode_mismatch", 1, "1", {{0}},
	 "1 when the clocks run other ceilings than the power mode nvpmodel's status names.", {0}, false},
	{"jetson_clocks.active", "0/1", GAUGE, "tegrawatch_jetson_clocks_active", 1, "1", {{0}},
	 "1 when every online CPU core and the GPU have their clock floor at their ceiling (jetson_clocks).", {0}, false},
	{"jetson_clocks.unexpected", "0/1", GAUGE, "tegrawatch_jetson_clocks_unexpected", 1, "1", {{0}},
	 "1 when jetson_clocks is not as agent.expected_power_mode says.", {0}, false},
	{"headroom.SENSOR_c", DEG_C, GAUGE, "tegrawatch_thermal_headroom_celsius", 1, "Cel", L("sensor"),
	 "A thermal zone's passive (else hot) trip point minus its temperature, in degrees Celsius.",
	 HA("%s thermal headroom", NULL, DEG_C, 1), false},
	{"steady_temp.SENSOR_c", DEG_C, GAUGE, "tegrawatch_steady_temperature_celsius", 1, "Cel", L("sensor"),
	 "Where a thermal zone's temperature settles at the present load (first-order fit), in degrees Celsius.", {0},
	 false},
	{"throttle_eta.SENSOR_s", "s", GAUGE, "tegrawatch_throttle_eta_seconds", 1, "s", L("sensor"),
	 "Predicted time until a thermal zone reaches its trip point at the present load; absent when none is predicted.",
	 HA("%s time to throttle", "duration", "s", 0), false},
	{"throttle_eta_error.SENSOR_s", "s", GAUGE, "tegrawatch_throttle_eta_error_seconds", 1, "s", L("sensor"),
	 "Half-width of a ~90 % interval around tegrawatch_throttle_eta_seconds.", {0}, false},
	{"throttle.active", "0/1", GAUGE, "tegrawatch_throttle_active", 1, "1", {{0}},
	 "1 when the board is throttled, for any reason.", {0}, false},
	{"throttle.thermal", "0/1", GAUGE, "tegrawatch_throttle_reason_active", 1, "1", LV("reason", "thermal"),
	 "1 when this throttle reason applies (several may at once).", {0}, false},
	{"throttle.overcurrent", "0/1", GAUGE, "tegrawatch_throttle_reason_active", 1, "1", LV("reason", "overcurrent"),
	 "1 when this throttle reason applies (several may at once).", {0}, false},
	{"throttle.rail_alarm", "0/1", GAUGE, "tegrawatch_throttle_reason_active", 1, "1", LV("reason", "rail_alarm"),
	 "1 when this throttle reason applies (several may at once).", {0}, false},
	{"throttle.freq_cap", "0/1", GAUGE, "tegrawatch_throttle_reason_active", 1, "1", LV("reason", "freq_cap"),
	 "1 when this throttle reason applies (several may at once).", {0}, false},
	{"throttle.seconds_total", "s", COUNTER, "tegrawatch_throttle_seconds_total", 1, "s", {{0}},
	 "Time the board was throttled, for any reason, in seconds.", {0}, false},
	{"throttle.REASON.seconds_total", "s", COUNTER, "tegrawatch_throttle_reason_seconds_total", 1, "s", L("reason"),
	 "Time the board was throttled for this reason, in seconds (reasons overlap).", {0}, false},
	{"energy.RAIL.joules_total", "J", COUNTER, "tegrawatch_energy_joules_total", 1, "J", L("rail"),
	 "Energy through a power rail since the agent started, in joules (power of every sample times its interval).",
	 {0}, false},
	{"work.NAME.count_total", "units", COUNTER, "tegrawatch_work_units_total", 1, "1", L("work"),
	 "Units of work the application reported (StatsD lines, POST /api/v1/work) since the agent started.", {0}, false},
	{"work.NAME.rate_per_s", "units/s", GAUGE, "tegrawatch_work_rate_per_second", 1, "1/s", L("work"),
	 "Units of work a second over about the last minute.", {0}, false},
	{"work.NAME.joules_per_unit", "J", GAUGE, "tegrawatch_work_energy_per_unit_joules", 1, "J", L("work"),
	 "The board's input energy (idle and everything else running included) per unit of work, about the last minute.",
	 HA("Energy per %s", NULL, "J", 3), false},
	{"work.NAME.above_idle_joules_per_unit", "J", GAUGE, "tegrawatch_work_energy_above_idle_per_unit_joules", 1, "J",
	 L("work"), "The board's input energy above its measured idle power, per unit of work, about the last minute.",
	 {0}, false},
	{"work.NAME.RAIL.joules_per_unit", "J", GAUGE, "tegrawatch_work_rail_energy_per_unit_joules", 1, "J",
	 L2("work", "rail"), "A rail's energy per unit of work, about the last minute.", {0}, false},
	{"work.idle_mw", "mW", GAUGE, "tegrawatch_work_idle_power_watts", MILLI, "W", {{0}},
	 "The board's input power measured while no work was reported, in this power mode.", {0}, false},
	{"hwmon.CHIP.LABEL_mv", "mV", GAUGE, "tegrawatch_hwmon_voltage_volts", MILLI, "V", L2("chip", "sensor"),
	 "Voltage of a generic hwmon sensor in volts.", {0}, false},
	/* the host (host/): memory, pressure, OOM kills, load, file systems, disks, network */
	{"ram.available_mb", "MiB", GAUGE, "tegrawatch_memory_available_bytes", MIB_TO_BYTES, "By", {{0}},
	 "Memory available to start new applications without swapping (MemAvailable) in bytes.",
	 HA("Memory available", "data_size", "MiB", 0), false},
	{"ram.used_pct", "%", GAUGE, "tegrawatch_memory_used_ratio", PCT_TO_RATIO, "1", {{0}},
	 "Share of the memory in use: 1 - MemAvailable / MemTotal (0 to 1).", {0}, false},
	{"swap.used_pct", "%", GAUGE, "tegrawatch_swap_used_ratio", PCT_TO_RATIO, "1", {{0}},
	 "Share of the swap in use (0 to 1).", {0}, false},
	{"zram.N.data_mb", "MiB", GAUGE, "tegrawatch_zram_data_bytes", MIB_TO_BYTES, "By", L("zram"),
	 "Data stored in a zram device, uncompressed, in bytes.", {0}, false},
	{"zram.N.compressed_mb", "MiB", GAUGE, "tegrawatch_zram_compressed_bytes", MIB_TO_BYTES, "By", L("zram"),
	 "That data compressed, in bytes.", {0}, false},
	{"zram.N.used_mb", "MiB", GAUGE, "tegrawatch_zram_memory_used_bytes", MIB_TO_BYTES, "By", L("zram"),
	 "Memory a zram device takes, its own overhead included, in bytes.", {0}, false},
	{"pressure.NAME.some_avg10_pct", "%", GAUGE, "tegrawatch_pressure_some_avg10_ratio", PCT_TO_RATIO, "1",
	 L("resource"), "Share of the last 10 s in which some task stalled on the resource (PSI, 0 to 1).", {0}, false},
	{"pressure.NAME.full_avg10_pct", "%", GAUGE, "tegrawatch_pressure_full_avg10_ratio", PCT_TO_RATIO, "1",
	 L("resource"), "Share of the last 10 s in which every non-idle task stalled on the resource (PSI, 0 to 1).",
	 {0}, false},
	{"pressure.NAME.some_seconds_total", "s", COUNTER, "tegrawatch_pressure_some_seconds_total", 1, "s",
	 L("resource"), "Time some task stalled on the resource since boot (PSI) in seconds.", {0}, false},
	{"pressure.NAME.full_seconds_total", "s", COUNTER, "tegrawatch_pressure_full_seconds_total", 1, "s",
	 L("resource"), "Time every non-idle task stalled on the resource since boot (PSI) in seconds.", {0}, false},
	{"oom.kills_total", "count", COUNTER, "tegrawatch_oom_kills_total", 1, "1", {{0}},
	 "Processes the kernel's OOM killer killed since boot.", HA("OOM kills", NULL, NULL, 0), false},
	{"load.avg_1m", "tasks", GAUGE, "tegrawatch_load1", 1, "1", {{0}}, "Load average over 1 minute.", {0}, false},
	{"load.avg_5m", "tasks", GAUGE, "tegrawatch_load5", 1, "1", {{0}}, "Load average over 5 minutes.", {0}, false},
	{"load.avg_15m", "tasks", GAUGE, "tegrawatch_load15", 1, "1", {{0}}, "Load average over 15 minutes.", {0},
	 false},
	{"tasks.running", "count", GAUGE, "tegrawatch_tasks_running", 1, "1", {{0}},
	 "Tasks (threads) runnable now.", {0}, false},
	{"tasks.count", "count", GAUGE, "tegrawatch_tasks", 1, "1", {{0}},
	 "Tasks (processes and their threads) that exist.", {0}, false},
	{"system.uptime_s", "s", GAUGE, "tegrawatch_uptime_seconds", 1, "s", {{0}},
	 "Time since boot in seconds.", {0}, false},
	{"filesystem.MOUNT.size_mb", "MiB", GAUGE, "tegrawatch_filesystem_size_bytes", MIB_TO_BYTES, "By",
	 LA("mountpoint"), "Size of a file system in bytes.", {0}, false},
	{"filesystem.MOUNT.avail_mb", "MiB", GAUGE, "tegrawatch_filesystem_avail_bytes", MIB_TO_BYTES, "By",
	 LA("mountpoint"), "Space on a file system that unprivileged users may still take, in bytes.", {0}, false},
	{"filesystem.MOUNT.used_mb", "MiB", GAUGE, "tegrawatch_filesystem_used_bytes", MIB_TO_BYTES, "By",
	 LA("mountpoint"), "Space in use on a file system in bytes.", {0}, false},
	{"filesystem.MOUNT.used_pct", "%", GAUGE, "tegrawatch_filesystem_used_ratio", PCT_TO_RATIO, "1",
	 LA("mountpoint"), "Share of a file system in use as df shows it: used / (used + avail) (0 to 1).",
	 HA("Disk %s used", NULL, "%", 1), false},
	{"filesystem.MOUNT.inodes", "count", GAUGE, "tegrawatch_filesystem_files", 1, "1", LA("mountpoint"),
	 "Inodes of a file system.", {0}, false},
	{"filesystem.MOUNT.inodes_free", "count", GAUGE, "tegrawatch_filesystem_files_free", 1, "1", LA("mountpoint"),
	 "Free inodes of a file system.", {0}, false},
	{"filesystem.MOUNT.inodes_used_pct", "%", GAUGE, "tegrawatch_filesystem_files_used_ratio", PCT_TO_RATIO, "1",
	 LA("mountpoint"), "Share of a file system's inodes in use (0 to 1).", {0}, false},
	{"filesystem.MOUNT.readonly", "0/1", GAUGE, "tegrawatch_filesystem_readonly", 1, "1", LA("mountpoint"),
	 "1 when a file system is mounted read-only.", {0}, false},
	{"filesystem.MOUNT.full_eta_s", "s", GAUGE, "tegrawatch_filesystem_full_eta_seconds", 1, "s", LA("mountpoint"),
	 "Predicted time until a file system is full at the rate its use grew over host.filesystems.trend (a "
	 "least-squares line); absent when it is not filling.", {0}, false},
	{"disk.DEV.read_bytes_total", "bytes", COUNTER, "tegrawatch_disk_read_bytes_total", 1, "By", L("device"),
	 "Bytes read from a block device since boot.", {0}, false},
	{"disk.DEV.written_bytes_total", "bytes", COUNTER, "tegrawatch_disk_written_bytes_total", 1, "By",
	 L("device"), "Bytes written to a block device since boot.", {0}, false},
	{"disk.DEV.reads_total", "count", COUNTER, "tegrawatch_disk_reads_completed_total", 1, "1", L("device"),
	 "Reads a block device completed since boot.", {0}, false},
	{"disk.DEV.writes_total", "count", COUNTER, "tegrawatch_disk_writes_completed_total", 1, "1", L("device"),
	 "Writes a block device completed since boot.", {0}, false},
	{"disk.DEV.busy_ms_total", "ms", COUNTER, "tegrawatch_disk_io_time_seconds_total", MILLI, "s", L("device"),
	 "Time a block device had I/O in flight since boot, in seconds.", {0}, false},
	{"emmc.DEV.life_time_a_pct", "%", GAUGE, "tegrawatch_emmc_life_time_used_ratio", PCT_TO_RATIO, "1",
	 L1V("device", "type", "a"), "eMMC life time used, the upper end of the JEDEC band (0.1 to 1.1).", {0}, false},
	{"emmc.DEV.life_time_b_pct", "%", GAUGE, "tegrawatch_emmc_life_time_used_ratio", PCT_TO_RATIO, "1",
	 L1V("device", "type", "b"), "eMMC life time used, the upper end of the JEDEC band (0.1 to 1.1).", {0}, false},
	{"emmc.DEV.pre_eol", "1..3", GAUGE, "tegrawatch_emmc_pre_eol_info", 1, "1", L("device"),
	 "eMMC pre-EOL information: 1 normal, 2 warning (80 % of reserved blocks used), 3 urgent.", {0}, false},
	{"network.IF.receive_bytes_total", "bytes", COUNTER, "tegrawatch_network_receive_bytes_total", 1, "By",
	 LA("device"), "Bytes a network interface received since it appeared.", {0}, false},
	{"network.IF.transmit_bytes_total", "bytes", COUNTER, "tegrawatch_network_transmit_bytes_total", 1, "By",
	 LA("device"), "Bytes a network interface sent since it appeared.", {0}, false},
	{"network.IF.receive_packets_total", "count", COUNTER, "tegrawatch_network_receive_packets_total", 1, "1",
	 LA("device"), "Packets a network interface received since it appeared.", {0}, false},
	{"network.IF.transmit_packets_total", "count", COUNTER, "tegrawatch_network_transmit_packets_total", 1, "1",
	 LA("device"), "Packets a network interface sent since it appeared.", {0}, false},
	{"network.IF.receive_errors_total", "count", COUNTER, "tegrawatch_network_receive_errors_total", 1, "1",
	 LA("device"), "Receive errors of a network interface since it appeared.", {0}, false},
	{"network.IF.transmit_errors_total", "count", COUNTER, "tegrawatch_network_transmit_errors_total", 1, "1",
	 LA("device"), "Transmit errors of a network interface since it appeared.", {0}, false},
	{"network.IF.receive_drop_total", "count", COUNTER, "tegrawatch_network_receive_drop_total", 1, "1",
	 LA("device"), "Received packets a network interface dropped or missed since it appeared.", {0}, false},
	{"network.IF.transmit_drop_total", "count", COUNTER, "tegrawatch_network_transmit_drop_total", 1, "1",
	 LA("device"), "Packets a network interface dropped instead of sending since it appeared.", {0}, false},
	{"network.IF.up", "0/1", GAUGE, "tegrawatch_network_up", 1, "1", LA("device"),
	 "1 when a network interface's link is up (operstate up, or unknown with a carrier).",
	 HA_BINARY("Link %s", "connectivity"), false},
	{"network.IF.link_lost", "0/1", GAUGE, "tegrawatch_network_link_lost", 1, "1", LA("device"),
	 "1 while a network interface's link is down after it was up since the agent started (or the interface "
	 "appeared).",
	 {0}, false},
	{"network.IF.carrier_changes_total", "count", COUNTER, "tegrawatch_network_carrier_changes_total", 1, "1",
	 LA("device"), "Times a network interface's carrier went up or down since it appeared.", {0}, false},
	{"network.IF.wifi_signal_dbm", "dBm", GAUGE, "tegrawatch_network_wifi_signal_dbm", 1, "dB[mW]", LA("device"),
	 "Signal level of a Wi-Fi interface in dBm (/proc/net/wireless).", {0}, false},
	/* host.probes (host/probe_source.c) and reboots (host/boot_source.c) */
	{"probe.NAME.up", "0/1", GAUGE, "tegrawatch_probe_up", 1, "1", L("name"),
	 "1 when the probe's last attempt was answered (a TCP connection made, an ICMP echo reply).", {0}, false},
	{"probe.NAME.rtt_ms", "ms", GAUGE, "tegrawatch_probe_rtt_seconds", MILLI, "s", L("name"),
	 "Mean round-trip time of the answered attempts in the probe's window, in seconds.", {0}, false},
	{"probe.NAME.loss_pct", "%", GAUGE, "tegrawatch_probe_loss_ratio", PCT_TO_RATIO, "1", L("name"),
	 "Share of the attempts in the probe's window that got no answer (0 to 1).", {0}, false},
	{"reboot.KIND.last_seen_timestamp_s", "unix s", GAUGE, "tegrawatch_reboot_last_seen_timestamp_seconds", 1, "s",
	 L("kind"),
	 "On the first sample after the agent started on a new boot only: when it last saw the boot before (unix time).",
	 {0}, false},

	/* the application's processes (procs/): one NAME per entry of the processes: section */
	{"process.NAME.up", "0/1", GAUGE, "tegrawatch_process_up", 1, "1", LA("name"),
	 "1 while at least one process of a watched name runs.", HA_RUNNING("%s running"), false},
	{"process.NAME.count", "count", GAUGE, "tegrawatch_process_num_procs", 1, "1", LA("name"),
	 "Processes of a watched name running now.", {0}, false},
	{"process.NAME.restarts_total", "count", COUNTER, "tegrawatch_process_restarts_total", 1, "1", LA("name"),
	 "Times a watched name's main process changed or came back since the agent started.", {0}, false},
	{"process.NAME.cpu_seconds_total", "s", COUNTER, "tegrawatch_process_cpu_seconds_total", 1, "s", LA("name"),
	 "CPU time (user and system) a watched name's processes used since the agent started watching, in seconds.",
	 {0}, false},
	{"process.NAME.cpu_pct", "%", GAUGE, "tegrawatch_process_cpu_ratio", PCT_TO_RATIO, "1", LA("name"),
	 "CPU a watched name's processes used over the last scan, in cores (1 = one core busy).", {0}, false},
	{"process.NAME.resident_mb", "MiB", GAUGE, "tegrawatch_process_resident_memory_bytes", MIB_TO_BYTES, "By",
	 LA("name"), "Resident memory of a watched name's processes in bytes.", {0}, false},
	{"process.NAME.virtual_mb", "MiB", GAUGE, "tegrawatch_process_virtual_memory_bytes", MIB_TO_BYTES, "By",
	 LA("name"), "Virtual memory of a watched name's processes in bytes.", {0}, false},
	{"process.NAME.gpu_memory_mb", "MiB", GAUGE, "tegrawatch_process_gpu_memory_bytes", MIB_TO_BYTES, "By",
	 LA("name"),
	 "GPU memory a watched name's processes hold in bytes (absent where the platform does not tell).", {0}, false},
	{"process.NAME.threads", "count", GAUGE, "tegrawatch_process_num_threads", 1, "1", LA("name"),
	 "Threads of a watched name's processes.", {0}, false},
	{"process.NAME.open_fds", "count", GAUGE, "tegrawatch_process_open_fds", 1, "1", LA("name"),
	 "Open file descriptors of a watched name's processes (absent when one's cannot be read).", {0}, false},
	{"process.NAME.uptime_s", "s", GAUGE, "tegrawatch_process_uptime_seconds", 1, "s", LA("name"),
	 "Time since a watched name's oldest process started, in seconds.", {0}, false},

	AGENT_COUNTER("agent.samples_total", "Samples produced since the agent started."),
	AGENT_COUNTER("agent.late_ticks_total", "Ticks that started late because the loop fell behind its interval."),
	AGENT_COUNTER("agent.clock_steps_total",
		      "Steps of the wall clock seen between samples (durations do not follow them)."),
	AGENT_COUNTER("agent.read_errors_total", "Sensor files that failed to read."),
	AGENT_COUNTER("agent.process_errors_total",
		      "Pid files with no pid, pids another process took, cgroup lines that are no pid, lines of nvmap's "
		      "clients file that are no client (processes:)."),
	AGENT_COUNTER("agent.parse_errors_total", "tegrastats lines that could not be parsed."),
	AGENT_COUNTER("agent.unknown_tokens_total", "tegrastats tokens skipped because unknown."),
	AGENT_COUNTER("agent.config_reloads_total", "Configuration reloads that worked."),
	AGENT_COUNTER("agent.config_reload_failures_total", "Configuration reloads that were refused."),
	AGENT_GAUGE("agent.config_restart_needed", "0/1",
		    "1 when the last reload changed settings that only a restart applies."),
	AGENT_GAUGE("agent.alerts_firing", "count", "Alerts firing now."),
	AGENT_COUNTER("agent.alerts_fired_total", "Alerts that started firing."),
	AGENT_COUNTER("agent.alerts_resolved_total", "Alerts that resolved."),
	AGENT_COUNTER("agent.action_runs_total", "Alert actions started."),
	AGENT_COUNTER("agent.action_failures_total", "Alert actions that failed."),
	AGENT_COUNTER("agent.action_timeouts_total", "Alert actions stopped at their timeout."),
	AGENT_COUNTER("agent.action_dropped_total", "Alert actions not started because too many were running."),
	AGENT_COUNTER("agent.action_leftovers_total", "Processes alert actions left behind, stopped by the agent."),
	AGENT_GAUGE("agent.mqtt_connected", "0/1", AGENT_HELP),
	AGENT_COUNTER("agent.mqtt_connects_total", AGENT_HELP),
	AGENT_COUNTER("agent.mqtt_disconnects_total", AGENT_HELP),
	AGENT_COUNTER("agent.mqtt_publishes_total", AGENT_HELP),
	AGENT_GAUGE("agent.mqtt_spool_depth", "count", AGENT_HELP),
	AGENT_COUNTER("agent.mqtt_dropped_total", AGENT_HELP),
	AGENT_COUNTER("agent.mqtt_spool_corrupt_total", AGENT_HELP),
	AGENT_COUNTER("agent.mqtt_spool_write_errors_total", AGENT_HELP),
	AGENT_COUNTER("agent.remote_write_samples_sent_total", AGENT_HELP),
	AGENT_COUNTER("agent.remote_write_samples_rejected_total", AGENT_HELP),
	AGENT_COUNTER("agent.remote_write_requests_total", AGENT_HELP),
	AGENT_COUNTER("agent.remote_write_retries_total", AGENT_HELP),
	AGENT_COUNTER("agent.remote_write_sent_bytes_total", AGENT_HELP),
	AGENT_GAUGE("agent.remote_write_failing", "0/1", AGENT_HELP),
	AGENT_TIME("agent.remote_write_last_success_timestamp_seconds"),
	AGENT_GAUGE("agent.remote_write_spool_depth", "count", AGENT_HELP),
	AGENT_COUNTER("agent.remote_write_spool_dropped_total", AGENT_HELP),
	AGENT_COUNTER("agent.remote_write_spool_corrupt_total", AGENT_HELP),
	AGENT_COUNTER("agent.remote_write_spool_write_errors_total", AGENT_HELP),
	AGENT_COUNTER("agent.otlp_samples_sent_total", AGENT_HELP),
	AGENT_COUNTER("agent.otlp_samples_rejected_total", AGENT_HELP),
	AGENT_COUNTER("agent.otlp_requests_total", AGENT_HELP),
	AGENT_COUNTER("agent.otlp_retries_total", AGENT_HELP),
	AGENT_COUNTER("agent.otlp_sent_bytes_total", AGENT_HELP),
	AGENT_GAUGE("agent.otlp_failing", "0/1", AGENT_HELP),
	AGENT_TIME("agent.otlp_last_success_timestamp_seconds"),
	AGENT_GAUGE("agent.otlp_spool_depth", "count", AGENT_HELP),
	AGENT_COUNTER("agent.otlp_spool_dropped_total", AGENT_HELP),
	AGENT_COUNTER("agent.otlp_spool_corrupt_total", AGENT_HELP),
	AGENT_COUNTER("agent.otlp_spool_write_errors_total", AGENT_HELP),
	AGENT_COUNTER("agent.json_lines_dropped_total", AGENT_HELP),
	AGENT_COUNTER("agent.record_errors_total", AGENT_HELP),
	AGENT_COUNTER("agent.record_rotations_total", AGENT_HELP),
	AGENT_GAUGE("agent.http_connections", "count", "HTTP connections open now, event streams included."),
	AGENT_GAUGE("agent.http_event_streams", "count", "HTTP event streams open now."),
	AGENT_COUNTER("agent.http_connections_refused_total",
		      "HTTP connections closed at once because every connection was busy."),
	AGENT_COUNTER("agent.http_connections_evicted_total", "Idle HTTP connections closed to make room for a new one."),
	AGENT_COUNTER("agent.http_header_timeouts_total",
		      "HTTP connections closed because their request head was not complete in time."),
	AGENT_COUNTER("agent.http_streams_refused_total",
		      "HTTP event streams refused because the stream budget was spent."),
	AGENT_COUNTER("agent.http_streams_stalled_total",
		      "HTTP event streams dropped because their client stopped reading."),
	AGENT_COUNTER("agent.http_auth_failures_total", "HTTP requests with wrong credentials."),
	AGENT_COUNTER("agent.http_auth_throttled_total",
		      "HTTP requests refused with 429 after too many failed logins from their address."),
	AGENT_COUNTER("agent.http_requests_total", "HTTP requests answered, every status."),
	AGENT_COUNTER("agent.work_reports_total", "Work reports taken (StatsD lines and POST /api/v1/work)."),
	AGENT_COUNTER("agent.work_bad_lines_total", "StatsD lines refused (not a counter, a bad name or number)."),
	AGENT_COUNTER("agent.http_request_errors_total", "HTTP requests answered with a 4xx or 5xx status."),
	AGENT_BYTES("agent.memory_budget_bytes"),
	AGENT_BYTES("agent.memory_budget_web_bytes"),
	AGENT_BYTES("agent.memory_budget_mqtt_bytes"),
	AGENT_BYTES("agent.memory_budget_webhooks_bytes"),
	AGENT_BYTES("agent.memory_budget_fleet_bytes"),
	AGENT_BYTES("agent.memory_max_bytes"),
	AGENT_GAUGE("agent.nvml_gpus", "count", "NVIDIA GPUs NVML reports."),
	AGENT_COUNTER("agent.nvml_errors_total", "NVML calls that failed (not counting NOT_SUPPORTED answers)."),
	AGENT_GAUGE("agent.nvml_stale", "0/1",
		    "1 while NVML has not answered for three intervals (a call hangs): GPU metrics are left out."),

	{"webhook.NAME.sent_total", "count", COUNTER, "tegrawatch_webhook_sent_total", 1, "1", L("action"),
	 "Notifications a webhook action's receiver accepted (2xx).", {0}, true},
	{"webhook.NAME.failed_total", "count", COUNTER, "tegrawatch_webhook_failed_total", 1, "1", L("action"),
	 "Notifications a webhook action gave up on: refused (3xx, 4xx, 410) or retried for 24 hours.", {0}, true},
	{"webhook.NAME.retried_total", "count", COUNTER, "tegrawatch_webhook_retried_total", 1, "1", L("action"),
	 "Delivery attempts of a webhook action after the first of each notification.", {0}, true},
	{"webhook.NAME.dropped_total", "count", COUNTER, "tegrawatch_webhook_dropped_total", 1, "1", L("action"),
	 "Notifications a webhook action dropped unsent: the oldest of a full queue, or the queue of an action "
	 "disabled by 410 or removed.", {0}, true},
	{"webhook.NAME.queue_depth", "count", GAUGE, "tegrawatch_webhook_queue_depth", 1, "1", L("action"),
	 "Notifications of a webhook action waiting to be delivered.", {0}, true},
	{"webhook.NAME.last_success_s", "unix s", GAUGE, "tegrawatch_webhook_last_success_timestamp_seconds", 1, "s",
	 L("action"),
	 "Time a webhook action's receiver last accepted a notification, in seconds since the epoch (0: never).", {0},
	 true},
};
/* clang-format on */

static const char fallback_help[] =
	"A tegrawatch metric without a Prometheus mapping: its canonical name with dots as underscores, unconverted.";

/* Families /metrics writes after the metrics, with the info families; a metric must not land on them. */
static const char *const reserved_families[] = {
	"tegrawatch_alerts",
	"tegrawatch_sample_timestamp_seconds",
};

const struct metric_def *
metric_dict_table(size_t *count)
{
	*count = N_OF(table);
	return table;
}

static bool
is_upper(char c)
{
	return c >= 'A' && c <= 'Z';
}

static bool
is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* Where a placeholder's text lies in the name. */
struct capture {
	size_t start, len;
};

/*
 * Matches NAME (from offset AT) against PAT; placeholder IDX on goes to
 * CAP (room for METRIC_LABELS_MAX, more are matched but not kept).
 */
static bool
match_at(const char *pat, const char *name, size_t at, struct capture *cap, size_t idx)
{
	const char *s = name + at;
	while (*pat) {
		if (is_upper(*pat)) {
			const char *end = pat;
			while (is_upper(*end)) {
				end++;
			}
			bool digits = end - pat == 1 && *pat == 'N';
			size_t max = 0;
			while (digits ? text_is_digit(s[max]) : is_word(s[max])) {
				max++;
			}
			/* longest first: "temp.a_c_c" gives sensor "a_c" */
			for (size_t n = max; n >= 1; n--) {
				if (match_at(end, name, (size_t)(s - name) + n, cap, idx + 1)) {
					if (cap && idx < METRIC_LABELS_MAX) {
						cap[idx].start = (size_t)(s - name);
						cap[idx].len = n;
					}
					return true;
				}
			}
			return false;
		}
		if (*pat != *s) {
			return false;
		}
		pat++;
		s++;
	}
	return *s == '\0';
}

const char *
metric_dict_absent_words(const char *name)
{
	static const struct {
		const char *pattern;
		const char *words;
	} absent[] = {
		{"throttle_eta.SENSOR_s", "will not throttle at this load"},
		{"filesystem.MOUNT.full_eta_s", "not filling"},
	};
	const struct metric_def *def = name ? metric_dict_find(name) : NULL;
	for (size_t i = 0; def && i < N_OF(absent); i++) {
		if (strcmp(def->pattern, absent[i].pattern) == 0) {
			return absent[i].words;
		}
	}
	return NULL;
}

const struct metric_def *
metric_dict_find(const char *name)
{
	for (size_t i = 0; i < N_OF(table); i++) {
		/* most patterns differ from the name in their first letter */
		if (table[i].pattern[0] == name[0] && match_at(table[i].pattern, name, 0, NULL, 0)) {
			return &table[i];
		}
	}
	return NULL;
}

const struct metric_def *
metric_dict_by_pattern(const char *pattern)
{
	for (size_t i = 0; i < N_OF(table); i++) {
		if (strcmp(table[i].pattern, pattern) == 0) {
			return &table[i];
		}
	}
	return NULL;
}

bool
metric_dict_capture(const struct metric_def *def, const char *name, size_t k, char *buf, size_t size)
{
	struct capture cap[METRIC_LABELS_MAX] = {{0, 0}};
	if (k >= METRIC_LABELS_MAX || !match_at(def->pattern, name, 0, cap, 0) || cap[k].len == 0 ||
	    cap[k].len >= size) {
		return false;
	}
	memcpy(buf, name + cap[k].start, cap[k].len);
	buf[cap[k].len] = '\0';
	return true;
}

/* True when /metrics writes FAMILY itself (info, timestamp and alert families): no metric may land on it. */
static bool
family_reserved(const char *family)
{
	for (size_t i = 0; i < N_OF(reserved_families); i++) {
		if (strcmp(family, reserved_families[i]) == 0) {
			return true;
		}
	}
	size_t n;
	const struct metric_info_def *info = metric_dict_info(&n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(family, info[i].family) == 0) {
			return true;
		}
	}
	return false;
}

static void
sanitize_into(char *dst, size_t size, const char *prefix, const char *name)
{
	size_t n = strlen(prefix);
	memcpy(dst, prefix, n);
	for (const char *p = name; *p && n + 1 < size; p++) {
		dst[n++] = is_word(*p) ? *p : '_';
	}
	dst[n] = '\0';
}

static void
describe_unknown(const char *name, struct metric_series *out)
{
	out->scale = 1;
	out->base_unit = "";
	if (strncmp(name, "agent.", 6) == 0 && name[6]) {
		const char *rest = name + 6;
		size_t len = strlen(rest);
		sanitize_into(out->family, sizeof(out->family), "tegrawatch_agent_", rest);
		out->kind = len > 6 && strcmp(rest + len - 6, "_total") == 0 ? METRIC_KIND_COUNTER : METRIC_KIND_GAUGE;
		out->help = AGENT_HELP;
		return;
	}
	sanitize_into(out->family, sizeof(out->family), "tegrawatch_", name);
	out->kind = METRIC_KIND_GAUGE;
	out->help = fallback_help;
}

bool
metric_dict_describe(const struct metric_def *def, const char *name, struct metric_series *out)
{
	if (!name[0]) {
		return false;
	}
	memset(out, 0, sizeof(*out));
	struct capture cap[METRIC_LABELS_MAX] = {{0, 0}};
	if (def && !match_at(def->pattern, name, 0, cap, 0)) {
		def = NULL; /* not this entry's name after all */
	}
	out->def = def;
	if (!def) {
		describe_unknown(name, out);
		return !family_reserved(out->family);
	}
	if (def->family) {
		snprintf(out->family, sizeof(out->family), "%s", def->family);
	} else {
		sanitize_into(out->family, sizeof(out->family), "tegrawatch_", name);
	}
	out->kind = def->kind;
	out->base_unit = def->base_unit;
	out->help = def->help;
	out->scale = def->scale;
	size_t k = 0;
	const char *extra_names[METRIC_ATTRS_MAX];
	char extra_values[METRIC_ATTRS_MAX][METRIC_LABEL_VALUE_MAX];
	size_t extra = 0;
	for (size_t l = 0; l < METRIC_LABELS_MAX && def->labels[l].name; l++) {
		const char *value = def->labels[l].value;
		bool attrs = value && strcmp(value, METRIC_LABEL_ATTRS) == 0;
		out->label_names[l] = def->labels[l].name;
		if (value && !attrs) {
			snprintf(out->label_values[l], sizeof(out->label_values[l]), "%s", value);
		} else if (k < METRIC_LABELS_MAX) {
			memcpy(out->label_values[l], name + cap[k].start, cap[k].len);
			out->label_values[l][cap[k].len] = '\0';
			k++;
			if (attrs && extra == 0) {
				/* the real text behind the segment, and the labels that come with it */
				extra = metric_attrs_get(def->labels[l].name, out->label_values[l], METRIC_ATTRS_MAX,
							 extra_names, extra_values);
				if (extra > 0) {
					memcpy(out->label_values[l], extra_values[0], METRIC_LABEL_VALUE_MAX);
				}
			}
		}
		out->label_count = l + 1;
	}
	for (size_t e = 1; e < extra && out->label_count < METRIC_SERIES_LABELS_MAX; e++) {
		out->label_names[out->label_count] = extra_names[e];
		memcpy(out->label_values[out->label_count], extra_values[e], METRIC_LABEL_VALUE_MAX);
		out->label_count++;
	}
	return !family_reserved(out->family);
}

bool
metric_dict_series(const char *name, struct metric_series *out)
{
	return metric_dict_describe(metric_dict_find(name), name, out);
}

const struct metric_def *const *
metric_dict_classify(struct metric_dict_cache *c, const struct metric_set *set)
{
	if (set->layout != 0 && set->layout == c->layout && set->count <= c->count) {
		return c->defs;
	}
	for (size_t i = 0; i < set->count; i++) {
		c->defs[i] = metric_dict_find(set->items[i].name);
	}
	c->layout = set->layout;
	c->count = set->count;
	c->misses++;
	return c->defs;
}
