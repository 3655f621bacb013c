#!/usr/bin/env bash
# floor_files.sh - the files the skeleton floor reads every sample: the ~N board
# files a Jetson monitoring agent reads (the shared harness' sysfs_floor.sh -l
# choice, unchanged), then the host files tegrawatch's host source reads every
# sample (host/host_source.c: kept_paths, zram, each watched interface's link).
#
# usage: floor_files.sh [-n N] [-i IFACE]... [-B]
#   -n N      number of board files (default 40)
#   -i IFACE  a watched network interface: its operstate, carrier, carrier_changes
#   -B        the board files only (the shared harness' floor)
# Mounts (statvfs, every 10 s) and processes (/proc/PID/*, every 5 s) are not
# files read every sample: skeleton_agent's -M and -c options do them.
set -euo pipefail
n=40; ifaces=(); board_only=0
while getopts "n:i:Bh" opt; do
  case $opt in
    n) n=$OPTARG ;; i) ifaces+=("$OPTARG") ;; B) board_only=1 ;;
    h|*) sed -n '2,12p' "$0"; exit 2 ;;
  esac
done
# Jetson paths first where they exist (thermal zones, cpufreq, GPU load/devfreq,
# INA3221 rails, nvpmodel status), then the /proc files every agent reads, then
# generic small sysfs attributes to reach N
board() {
  ls /sys/class/thermal/thermal_zone*/temp 2>/dev/null || true
  ls /sys/devices/system/cpu/cpu*/cpufreq/scaling_cur_freq 2>/dev/null || true
  ls /sys/devices/gpu.0/load /sys/devices/platform/gpu.0/load /sys/devices/platform/bus@0/17000000.gpu/load 2>/dev/null || true
  ls /sys/class/devfreq/*/cur_freq 2>/dev/null || true
  ls /sys/bus/i2c/drivers/ina3221*/*/hwmon/hwmon*/in*_input /sys/bus/i2c/drivers/ina3221*/*/hwmon/hwmon*/curr*_input 2>/dev/null || true
  ls /sys/class/hwmon/hwmon*/temp*_input /sys/class/hwmon/hwmon*/in*_input /sys/class/hwmon/hwmon*/curr*_input 2>/dev/null || true
  ls /var/lib/nvpmodel/status 2>/dev/null || true
  echo /proc/stat; echo /proc/meminfo; echo /proc/loadavg; echo /proc/uptime
  ls /sys/devices/system/cpu/online /sys/devices/system/cpu/present 2>/dev/null || true
  ls /sys/devices/system/cpu/cpu*/online 2>/dev/null || true
  ls /sys/block/*/stat 2>/dev/null || true
  ls /sys/devices/system/cpu/cpu*/topology/core_id 2>/dev/null || true
  for i in /sys/class/net/*; do
    for s in rx_bytes tx_bytes rx_packets tx_packets rx_errors tx_errors rx_dropped tx_dropped; do
      [ -r "$i/statistics/$s" ] && echo "$i/statistics/$s"; done
    for s in operstate carrier mtu; do [ -r "$i/$s" ] && echo "$i/$s"; done
  done
}
host() {
  for f in meminfo loadavg uptime vmstat pressure/cpu pressure/memory pressure/io diskstats net/dev net/wireless; do
    echo "/proc/$f"
  done
  ls /sys/block/zram*/mm_stat 2>/dev/null || true
  for i in "${ifaces[@]:-}"; do
    [ -n "$i" ] && for s in operstate carrier carrier_changes; do echo "/sys/class/net/$i/$s"; done
  done
}
readable() { while read -r f; do head -c1 "$f" >/dev/null 2>&1 && echo "$f"; done; }
# readable ones, the first N board files, no file twice
{
  (set +o pipefail; board | awk '!seen[$0]++' | readable | head -n "$n")
  [ "$board_only" = 1 ] || host | readable
} | awk '!seen[$0]++'
