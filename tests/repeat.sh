#!/usr/bin/env bash
# The flake check (make test-repeat N=10 LOAD=60): the whole suite N times in a row
# (tests/run-tests.sh, as make test runs it), with stress-ng loading both cores to LOAD
# percent beside every run when LOAD > 0. Prints each run's closing line and then
# "repeat: K of N runs passed"; exit 1 unless all passed. Every run's output is kept in
# BUILD/test-repeat/run-I.log.
# Usage: repeat.sh N LOAD BUILD_DIR BIN... -- SCRIPT...
set -u
n="$1" load="$2" build="$3"; shift 3
out="$build/test-repeat"
rm -rf "$out"; mkdir -p "$out"
stress=""
stop_stress() { [ -z "$stress" ] || { kill "$stress" 2>/dev/null; wait "$stress" 2>/dev/null; stress=""; }; }
trap 'stop_stress' EXIT
trap 'stop_stress; exit 130' INT TERM
if [ "$load" -gt 0 ]; then
	command -v stress-ng >/dev/null || { echo "repeat: stress-ng not found (apt-get install stress-ng; make deps-test installs it as root)"; exit 1; }
	stress-ng --cpu "$(nproc)" --cpu-load "$load" --quiet &
	stress=$!
	echo "repeat: stress-ng loads $(nproc) cores to $load % (pid $stress)"
fi
ok=0
for i in $(seq 1 "$n"); do
	t0=$SECONDS
	if tests/run-tests.sh "$build" "$@" >"$out/run-$i.log" 2>&1; then ok=$((ok + 1)); fi
	echo "run $i of $n: $(tail -n 1 "$out/run-$i.log") (wall $((SECONDS - t0)) s)"
	grep '^FAILED: ' "$out/run-$i.log" | sed 's/^/  /'
done
echo "repeat: $ok of $n runs passed$([ "$load" -gt 0 ] && echo " under stress-ng --cpu $(nproc) --cpu-load $load")"
[ "$ok" -eq "$n" ]
