#!/usr/bin/env bash
# ponytaild benchmarks: capacity at 60 Hz and pose-to-frame latency, against live daemons
# on loopback (tests/server/js/bench.mjs explains both). Prints METRIC lines for
# tests/bench/run-bench.sh: make bench PT_BENCH_EXTRA=tests/bench/bench_server.sh
set -u
export PT_BUILD="${PT_BUILD:-build}"
[ -x "$PT_BUILD/bin/ponytaild" ] || { echo "bench_server: $PT_BUILD/bin/ponytaild not built" >&2; exit 1; }
# daemon.mjs checks every REST answer against server/openapi.json with the pinned validator.
bash tests/server/npm-deps.sh || exit 1
setsid node --experimental-websocket --no-warnings tests/server/js/bench.mjs "${1:-all}" &
pid=$!
trap 'kill -KILL -- -"$pid" 2>/dev/null' EXIT
wait "$pid"
