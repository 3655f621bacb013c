#!/bin/sh
# An exec action that leaves processes behind (test_hardening.py): "$1" is a directory, "$2" "exit" or "stay".
# It starts a sleeper in its own process group (group.pid) and one that escapes it through a double fork and
# setsid (setsid.pid), writes its own pid (action.pid), then exits at once (exit) or sleeps (stay).
out=$1
sleep 300 &
echo $! >"$out/group.pid.tmp" && mv "$out/group.pid.tmp" "$out/group.pid"
# the subshell ends (and the agent adopts the escaped one and stops it) only once the escaped one has written its
# pid: on a loaded machine it could otherwise be stopped while still starting, and never write it
(setsid sh -c 'echo $$ >"$1/setsid.pid.tmp" && mv "$1/setsid.pid.tmp" "$1/setsid.pid"; exec sleep 300' sh "$out" &
	while [ ! -e "$out/setsid.pid" ]; do sleep 0.05; done)
echo $$ >"$out/action.pid.tmp" && mv "$out/action.pid.tmp" "$out/action.pid"
[ "$2" = exit ] && exit 0
sleep 300
