#!/usr/bin/env bash
# Runs the benchmarks and merges them into BUILD/bench/results.json and a table
# (tests/bench/merge.py). Every program prints lines
#   METRIC <name> <value> <unit> <description...>
# Usage: run-bench.sh BUILD BENCH_PROGRAM...     (make bench passes build/bench/bench_*)
#
# Rounds (PT_BENCH_RUNS, default 3, at least 3 for figures worth quoting): each round runs
# every in-process benchmark program, then each peer (PT_BENCH_PEERS: node scripts timing
# the plugin article's JS and three-vrm on the same scenes, tests/bench/peers/; set it
# empty to skip them and their npm install), so that a peer and our kernel are measured
# within a minute of each other on the same machine; merge.py reports each metric as the
# median of its rounds with min and max, and the peers' ratios per round. Then the
# kernels under callgrind (PT_BENCH_CALLGRIND=0 to skip): instructions per point-substep
# on reduced scenes, counted inside bench_step / time_encode only, PT_BENCH_CALLGRIND_RUNS
# runs each (default 2: they agree exactly, the range shows it; a third added a minute
# and a half to a make bench held to 10). Last, the live-daemon scripts (PT_BENCH_EXTRA),
# PT_BENCH_EXTRA_RUNS times (default 1: each repeats its capacity search 3 times itself and
# takes minutes: bench_server.sh about 13, bench_load.sh about 5 on the quiet machine;
# make bench-live runs them alone).
#
# Output (in PT_BENCH_OUT, default BUILD/bench): results.json, numbers.md (the table),
# runs/<program>.<round>.txt (every run's output); numbers.md is copied to
# PT_BENCH_RESULTS when set (make bench: tests/bench/RESULTS.md, committed from a run on
# a quiet machine). Exits 1 if any run failed
# (after writing what the others measured).
set -eu
build="$1"; shift
out="${PT_BENCH_OUT:-$build/bench}"; runs="$out/runs"
rm -rf "$runs"; mkdir -p "$runs"
export PT_BUILD="$build" PT_ROOT="$(pwd)"
nruns="${PT_BENCH_RUNS:-3}"
peers="${PT_BENCH_PEERS-tests/bench/peers/verlet_plugin.mjs tests/bench/peers/springbone_threevrm.mjs}"
failed=""
t_start=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# run NAME ROUND CMD...: the command's output into runs/NAME.ROUND.txt, all but METRIC
# lines echoed; a failure is recorded, not fatal.
run() {
	local name="$1" round="$2"; shift 2
	echo "== $name (round $round, $(date -u +%T))" >&2
	if ! "$@" >"$runs/$name.$round.txt" 2>"$runs/$name.$round.err"; then
		failed="$failed $name.$round"
		echo "FAILED: $name round $round (exit status; stderr in $runs/$name.$round.err)" >&2
		tail -5 "$runs/$name.$round.err" >&2
	fi
	grep -v '^METRIC' "$runs/$name.$round.txt" || true
}

if [ -n "$peers" ]; then
	bash tests/bench/npm-deps.sh
fi
for r in $(seq 1 "$nruns"); do
	for b in "$@"; do
		run "$(basename "$b")" "$r" "$b"
	done
	for p in $peers; do
		run "$(basename "$p" .mjs)" "$r" node "$p"
	done
done

# callgrind: KEY DESCRIPTION TOGGLE PROGRAM ARGS... ; the program prints
# "CALLGRIND point_substeps N" (or bench_proto's summary line), callgrind's summary gives
# the instructions counted inside TOGGLE.
cg() {
	local key="$1" desc="$2" toggle="$3"; shift 3
	local r f
	for r in $(seq 1 "${PT_BENCH_CALLGRIND_RUNS:-2}"); do
		f="$runs/callgrind.$key.$r"
		echo "== callgrind $key (run $r)" >&2
		if ! PTP_BENCH_REPS=1 valgrind --tool=callgrind --callgrind-out-file="$f.out" \
			"--toggle-collect=$toggle" "$@" >"$f.log" 2>&1; then
			failed="$failed callgrind.$key.$r"
			echo "FAILED: callgrind $key (log in $f.log)" >&2
			continue
		fi
		local ir points
		ir=$(awk '/^summary:/ {print $2}' "$f.out")
		points=$(awk '/^CALLGRIND point_substeps/ { print $3 }
			/^proto: [0-9]+ ticks/ { for (i = 1; i <= NF; i++) if ($i == "points/frame,") print $2 * $(i - 1) }' "$f.log")
		if [ -z "$ir" ] || [ -z "$points" ]; then
			failed="$failed callgrind.$key.$r"
			echo "FAILED: callgrind $key: no count (log in $f.log)" >&2
			continue
		fi
		awk -v k="$key" -v ir="$ir" -v n="$points" -v d="$desc" \
			'BEGIN { printf "METRIC %s %.2f instr %s (%d instructions / %d)\n", k, ir / n, d, ir, n }' \
			>"$f.txt"
		rm -f "$f.out"
	done
}
if [ "${PT_BENCH_CALLGRIND:-1}" != 0 ]; then
	if ! command -v valgrind >/dev/null; then
		echo "run-bench: valgrind not found (apt-get install valgrind; make deps-test installs it as root)" >&2
		failed="$failed callgrind"
	else
		cg core.verlet.callgrind_instr_per_point_substep \
			"reduced scene: 1,000 bench_verlet instances x 20 steps, 1 substep, inside pt_world_step" \
			'bench_step*' "$build/bench/bench_verlet" --callgrind 1000 1 20
		cg core.verlet.callgrind_instr_per_point_substep_x4 \
			"reduced scene: 1,000 bench_verlet instances x 20 steps, 4 substeps, inside pt_world_step" \
			'bench_step*' "$build/bench/bench_verlet" --callgrind 1000 4 20
		cg core.springbone.callgrind_instr_per_joint_substep \
			"reduced scene: 200 bench_springbone avatars (vrm form) x 30 steps, inside pt_world_step" \
			'bench_step*' "$build/bench/bench_springbone" --callgrind 200 30
		cg core.avatar.callgrind_instr_per_joint_substep \
			"reduced scene: 100 bench_avatar whole avatars (200 joints, 20 colliders, head + 15 bone poses a tick) x 30 steps, 4 substeps, inside pt_world_step" \
			'bench_step*' "$build/bench/bench_avatar" --callgrind 100 30
		cg core.touch.callgrind_instr_per_instance_tick_untouched \
			"reduced scene: bench_touch's 400 default ponytails x 30 ticks, 4 substeps, no touch, inside pt_world_step (per instance-tick)" \
			'bench_step*' "$build/bench/bench_touch" --callgrind untouched 30
		cg core.touch.callgrind_instr_per_instance_tick_touched \
			"the same, each instance touched by two hand capsules every tick (per touched instance-tick)" \
			'bench_step*' "$build/bench/bench_touch" --callgrind touched 30
		cg server.tick.callgrind_instr_per_instance_tick \
			"the daemon's tick (tick_once: poses, step, publish, records), 1,000 driven verlet instances (12 points) in rooms of 20, recording off, 30 ticks" \
			'tick_once' "$build/bench/bench_record" tick off 1000 30
		cg server.record.callgrind_instr_per_instance_tick \
			"same, recording on (the state hash, each pose's record, each tick's hashes)" \
			'tick_once' "$build/bench/bench_record" tick on 1000 30
		# bench_proto times its encoder in time_encode (one pass with PTP_BENCH_REPS=1);
		# its "proto: T ticks ..., P points/frame" line gives the T x P points encoded.
		cg proto.callgrind_instr_per_point_encoded \
			"bench_proto's shared encoder (tick + delta record), 60 s of ticks, inside time_encode" \
			'time_encode*' "$build/bench/bench_proto"
	fi
fi

for s in ${PT_BENCH_EXTRA:-}; do
	for r in $(seq 1 "${PT_BENCH_EXTRA_RUNS:-1}"); do
		run "$(basename "$s" .sh)" "$r" bash "$s"
	done
done

python3 - "$out/meta.json" "$nruns" "$t_start" "$load_start" "$failed" <<'PY'
import json, os, subprocess, sys, time
path, nruns, t0, load0, failed = sys.argv[1:6]
def cmd(*a):
    try:
        return subprocess.run(a, capture_output=True, text=True, timeout=10).stdout.strip()
    except Exception:
        return ""
json.dump({
    "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    "commit": cmd("git", "describe", "--always", "--dirty") or "?",
    "nproc": os.cpu_count(),
    "cpu": next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?"),
    "load_start": load0, "load_end": " ".join(open("/proc/loadavg").read().split()[:3]),
    "rounds": int(nruns), "seconds": int(time.time()) - int(t0),
    "node": cmd("node", "--version"), "valgrind": cmd("valgrind", "--version"),
    "failed": failed.split(),
    "note": "shared machine: other work ran during the measurement; wall-clock figures are "
            "medians of rounds with their range, callgrind counts are load-independent",
}, open(path, "w"), indent=1)
PY
python3 tests/bench/merge.py "$runs" "$out/results.json" "$out/numbers.md" "$out/meta.json"
[ -z "${PT_BENCH_RESULTS:-}" ] || cp "$out/numbers.md" "$PT_BENCH_RESULTS"
echo "make bench took $(( $(date +%s) - t_start )) s" >&2
if [ -n "$failed" ]; then
	echo "run-bench: FAILED runs:$failed" >&2
	exit 1
fi
