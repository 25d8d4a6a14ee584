#!/usr/bin/env bash
# Runs every benchmark program, each of which prints lines
#   METRIC <name> <value> <unit> <description...>
# and merges them into BUILD/bench/results.json ({"name": value, ...}) and a table.
set -eu
build="$1"; shift
out="$build/bench"; mkdir -p "$out"
raw="$out/metrics.txt"; : > "$raw"
export PT_BUILD="$build" PT_ROOT="$(pwd)"
for b in "$@"; do
  echo "== $b" >&2
  "$b" | tee -a "$raw" | grep -v '^METRIC' || true
done
[ -n "${PT_BENCH_EXTRA:-}" ] && for s in $PT_BENCH_EXTRA; do bash "$s" | tee -a "$raw" | grep -v '^METRIC' || true; done
python3 - "$raw" "$out/results.json" <<'PY'
import json, sys
rows = []
for line in open(sys.argv[1]):
    if line.startswith("METRIC "):
        parts = line.rstrip("\n").split(" ", 4)
        rows.append((parts[1], float(parts[2]), parts[3], parts[4] if len(parts) > 4 else ""))
json.dump({n: v for n, v, _, _ in rows}, open(sys.argv[2], "w"), indent=1, sort_keys=True)
w = max([len(r[0]) for r in rows] + [6])
print(f"\n{'metric':<{w}}  {'value':>14}  unit        description")
for n, v, u, d in rows:
    print(f"{n:<{w}}  {v:>14.4g}  {u:<10}  {d}")
print(f"\nwrote {sys.argv[2]}")
PY
