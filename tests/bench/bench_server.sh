#!/usr/bin/env bash
# ponytaild benchmarks: capacity at 60 Hz, pose-to-frame latency, the workers' speed-up
# and the REST frame route, against live daemons on loopback (tests/server/js/bench.mjs
# explains each). Prints METRIC lines for tests/bench/run-bench.sh: medians of
# PT_BENCH_RUNS runs (default 3) with their spread. Usage: bench_server.sh [all|capacity|
# capacity1|capacity10|capacity0|latency|workers|frame|avatars|touch] (capacity: all three audiences;
# capacity1 / capacity10 / capacity0: one of them: 1 or 10 watched per subscriber, or all;
# avatars: whole avatars in rooms of 20, tests/server/js/bench_avatars.mjs, which needs
# build/bench/bench_avatar; touch: 8 users each touching 50 instances with both hands,
# tests/server/js/bench_touch.mjs; all runs these two last); make bench PT_BENCH_EXTRA=tests/bench/bench_server.sh
set -u
export PT_BUILD="${PT_BUILD:-build}"
[ -x "$PT_BUILD/bin/ponytaild" ] || { echo "bench_server: $PT_BUILD/bin/ponytaild not built" >&2; exit 1; }
# daemon.mjs checks every REST answer against server/openapi.json with the pinned validator.
bash tests/server/npm-deps.sh || exit 1
# wrk (Debian) for the frame route: installed as root, else the command is printed and
# that one measurement is skipped.
.ci/deps bench || echo "bench_server: without wrk the frame route is not measured" >&2
# node_bench SCRIPT ARGS...: in its own process group, killed with it on exit.
node_bench() {
	setsid node --experimental-websocket --no-warnings "$@" &
	pid=$!
	trap 'kill -KILL -- -"$pid" 2>/dev/null' EXIT
	wait "$pid"
}
which="${1:-all}"
rc=0
if [ "$which" != avatars ] && [ "$which" != touch ]; then
	node_bench tests/server/js/bench.mjs "$which" || rc=$?
fi
if [ "$which" = avatars ] || [ "$which" = all ]; then
	node_bench tests/server/js/bench_avatars.mjs || rc=$?
fi
if [ "$which" = touch ] || [ "$which" = all ]; then
	node_bench tests/server/js/bench_touch.mjs || rc=$?
fi
exit "$rc"
