#!/bin/sh
# An exec action that leaves processes behind (test_hardening.py): "$1" is a directory, "$2" "exit" or "stay".
# It starts a sleeper in its own process group (group.pid) and one that escapes it through a double fork and
# setsid (setsid.pid), writes its own pid (action.pid), then exits at once (exit) or sleeps (stay).
out=$1
sleep 300 &
echo $! >"$out/group.pid.tmp" && mv "$out/group.pid.tmp" "$out/group.pid"
(setsid sh -c 'echo $$ >"$1/setsid.pid.tmp" && mv "$1/setsid.pid.tmp" "$1/setsid.pid"; exec sleep 300' sh "$out" &)
# the escaped one is running before this program ends (on a loaded machine it could still be starting when the
# agent stops what was left, and never write its pid)
while [ ! -e "$out/setsid.pid" ]; do sleep 0.05; done
echo $$ >"$out/action.pid.tmp" && mv "$out/action.pid.tmp" "$out/action.pid"
[ "$2" = exit ] && exit 0
sleep 300
