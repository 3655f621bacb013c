#!/usr/bin/env bash
# Builds the small agent into DIR (default build-small/): release, linked
# statically, without MQTT, web, webhooks and libsensors. It runs the rules and the
# log/exec actions in about 1.5 MiB of RSS (bench/README.md). Used by
# scripts/test.sh and bench/run-all.sh; prints nothing unless it fails.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
dir=${1:-build-small}
opts=(--buildtype=release -Dsensors=disabled -Dmqtt=disabled -Dweb=disabled -Dwebhooks=disabled
	-Dnvml=disabled -Dtests=disabled -Dbench=false -Dprefer_static=true -Dc_link_args=-static)
if [ ! -f "$dir/build.ninja" ]; then
	meson setup "$dir" "${opts[@]}" >/dev/null || exit 1
else
	meson configure "$dir" "${opts[@]:1}" >/dev/null || exit 1
fi
ninja -C "$dir" >/dev/null
