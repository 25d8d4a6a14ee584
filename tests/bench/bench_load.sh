#!/usr/bin/env bash
# load.subscribers_at_60hz: the most WebSocket subscribers, each watching a room of 10
# default instances driven by 10 publishers at 60 Hz, that still receive >= 99 % of the
# frames (the 1st-percentile subscriber) with input-to-frame p99 <= 2 ticks and no failed
# connection -- daemon and `ponytail load` sharing this machine, loopback only.
#
# Search: 100, 200, 400, ... doubling while a level passes, then up to three bisection
# steps between the last pass and the first failure. A level passes when one of two runs
# does: a busy machine's hiccup (other processes share the two cores) is not a capacity.
# Each level is a short `ponytail load` run (ramp, 4 s measured) on one daemon with free
# ports and a temporary data directory, killed on exit. No level starts after 150 s (a
# search stays under ~3 min). The search runs PT_BENCH_RUNS times (default 3): the METRIC
# line of run-bench.sh is the median, with _min and _max for the spread; one line per
# level on stderr.
# The daemon runs with --realtime PT_BENCH_REALTIME (default 10, as bench_server.sh's; 0 =
# normal scheduling; refused without CAP_SYS_NICE, then normal) and PT_SERVER_ARGS.
# Usage: PT_BUILD=build tests/bench/bench_load.sh   (PT_BENCH_EXTRA in run-bench.sh)
set -u
B="${PT_BUILD:-build}"
P="$B/bin/ponytail"
PD="$B/bin/ponytaild"
for bin in "$P" "$PD"; do
	[ -x "$bin" ] || { echo "bench_load: $bin not built" >&2; exit 1; }
done
T="$(mktemp -d)"
DPID=""
cleanup() {
	[ -n "$DPID" ] && { kill -TERM "$DPID" 2>/dev/null; sleep 0.5; kill -KILL "$DPID" 2>/dev/null; wait "$DPID" 2>/dev/null; }
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Thousands of sockets on each side of loopback.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
fds=$(ulimit -n)

"$PD" --bind 127.0.0.1 --http-port 0 --ws-port 0 --data "$T/data" --web-root "$T" \
	--max-conns-per-ip 100000 --max-ws-conns 100000 --realtime "${PT_BENCH_REALTIME:-10}" \
	${PT_SERVER_ARGS:-} >"$T/daemon.log" 2>&1 & # word-split on purpose: extra flags
DPID=$!
line=""
for _ in $(seq 100); do
	line=$(grep -m1 -o 'listening: http://127.0.0.1:[0-9]*/' "$T/daemon.log") && break
	kill -0 "$DPID" 2>/dev/null || break
	sleep 0.05
done
[ -n "$line" ] || { echo "bench_load: ponytaild did not start:" >&2; cat "$T/daemon.log" >&2; exit 1; }
if grep -q SCHED_FIFO "$T/daemon.log"; then
	echo "bench_load: daemon scheduling: SCHED_FIFO (--realtime ${PT_BENCH_REALTIME:-10})" >&2
else
	echo "bench_load: daemon scheduling: normal" >&2
fi
S="${line#listening: }"
S="${S%/}"

# level N: 0 when N subscribers pass; the report in $T/N.json. Ramp ~1 s per 1000.
level() {
	local n="$1" ramp
	ramp=$(python3 -c "print(max(1.0, $n / 1000))")
	timeout 120 "$P" load --server "$S" --rooms 1 --per-room 10 --publishers 10 --subscribers "$n" \
		--duration 4 --ramp "$ramp" --json "$T/$n.json" >"$T/$n.txt" 2>"$T/$n.err" || return 1
	python3 - "$T/$n.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
f, l = j["frames"], j["latency_ms"]
ok = all(j["pass"].values())
print(f"bench_load: {j['subscribers']:6d} subscribers: frames p1 {f['received_p1']}/{f['expected']}, "
      f"latency p50 {l['p50']:.1f} ms p99 {l['p99']:.1f} ms, failed {j['connections']['failed']}, "
      f"generator {100 * j['generator_cpu']:.0f} % of a core, daemon tick p99 {j['daemon']['tick_recent_p99_ms']:.2f} ms"
      f" -> {'pass' if ok else 'FAIL'}", file=sys.stderr)
sys.exit(0 if ok else 1)
PY
}

# Each level keeps its own space: more than the descriptors allow is not a level.
max_n=$(( (fds - 200) / 2 ))
# One search: sets best (the capacity found), fail (the first failing level, 0 if none)
# and n (where it stopped).
search() {
	local deadline=$((SECONDS + 150))
	best=0
	fail=0
	n=100
	while [ "$n" -le "$max_n" ] && [ "$SECONDS" -lt "$deadline" ]; do
		if level "$n" || { [ "$SECONDS" -lt "$deadline" ] && level "$n"; }; then
			best=$n
			n=$((n * 2))
		else
			fail=$n
			break
		fi
	done
	for _ in 1 2 3; do
		[ "$fail" -gt 0 ] && [ $((fail - best)) -gt 100 ] && [ "$SECONDS" -lt "$deadline" ] || break
		mid=$(( (best + fail) / 2 / 50 * 50 ))
		if level "$mid" || { [ "$SECONDS" -lt "$deadline" ] && level "$mid"; }; then best=$mid; else fail=$mid; fi
	done
}
runs="${PT_BENCH_RUNS:-3}"
bests=""
unbounded=0
for r in $(seq "$runs"); do
	search
	echo "bench_load: run $r of $runs: $best subscribers" >&2
	bests="$bests $best"
	[ "$fail" -eq 0 ] && unbounded=1
done
read -r med lo hi <<<"$(python3 -c "import statistics, sys; v = [int(x) for x in sys.argv[1:]]; print(int(statistics.median(v)), min(v), max(v))" $bests)"
echo "METRIC load.subscribers_at_60hz $med subscribers each watching a room of 10 default instances (10 publishers at 60 Hz): >= 99 % of frames at p1, input-to-frame p99 <= 2 ticks; daemon and generator share this machine; median of $runs searches:$bests$([ "$unbounded" -eq 1 ] && echo "; a search stopped at time or file descriptors, not at a failure")"
echo "METRIC load.subscribers_at_60hz_min $lo subscribers load.subscribers_at_60hz: lowest of $runs searches"
echo "METRIC load.subscribers_at_60hz_max $hi subscribers load.subscribers_at_60hz: highest of $runs searches"
