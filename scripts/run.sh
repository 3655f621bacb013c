#!/usr/bin/env bash
# Sets everything up, then runs the agent: on a Jetson it watches the board;
# elsewhere it runs the built-in demo board (a replay of a recording in the
# real tegrastats format). Extra arguments go to `tegrawatch run`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
if [ -e /etc/nv_tegra_release ] || grep -qs tegra /proc/device-tree/compatible; then
	exec build/tegrawatch run "$@"
fi
echo "run: no Jetson here: running the demo board (configs/demo); Ctrl-C to stop" >&2
exec build/tegrawatch run --demo "$@"
