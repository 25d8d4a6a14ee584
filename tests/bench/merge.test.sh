#!/usr/bin/env bash
# The bench's statistics (tests/bench/merge.py) on made-up runs whose answers are known:
# medians and ranges over rounds, peer ratios taken per round (not ratio of medians), a
# metric missing from one round, the flat keys earlier readers used, the results table
# (tests/bench/RESULTS.md).
# Runs no benchmark (make test never times anything). Run from the repository root.
# sanitize: skip (Python only: no code of ours under the sanitizers)
set -eu
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
mkdir "$T/runs"
m() { echo "METRIC $*"; }
# ours: 2, 5, 4 ns; the peer: 10, 20, 32 ns -> per-round ratios 5, 4, 8 (median 5), while
# the ratio of the medians would be 20 / 4 = 5 too: so round 3 is made to tell them apart
# for the x4 pair: ours 1, 2, 4 and the peer 8, 12, 40 -> ratios 8, 6, 10 (median 8), the
# ratio of medians 12 / 2 = 6.
for r in 1 2 3; do
	v=$(echo "2 5 4" | cut -d' ' -f$r); v4=$(echo "1 2 4" | cut -d' ' -f$r)
	p=$(echo "10 20 32" | cut -d' ' -f$r); p4=$(echo "8 12 40" | cut -d' ' -f$r)
	{ echo "verlet: some chatter"; m core.verlet.ns_per_point_substep "$v" ns ours, 1 substep
	  m core.verlet.ns_per_point_substep_x4 "$v4" ns ours, 4 substeps; } >"$T/runs/bench_verlet.$r.txt"
	{ m peer.js_verlet.ns_per_point_substep "$p" ns peer
	  m peer.js_verlet.ns_per_point_substep_x4 "$p4" ns peer x4; } >"$T/runs/verlet_plugin.$r.txt"
done
# a metric present in two rounds only (a failed run): median of two = their mean
m server.instances_at_60hz 5000 instances capacity >"$T/runs/bench_server.1.txt"
m server.instances_at_60hz 6000 instances capacity >"$T/runs/bench_server.2.txt"
echo '{"date": "2026-12-01 12:00 UTC", "commit": "abc1234", "nproc": 2}' >"$T/meta.json"
python3 tests/bench/merge.py "$T/runs" "$T/results.json" "$T/numbers.md" "$T/meta.json" >"$T/out.txt"

python3 - "$T/results.json" "$T/numbers.md" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
md = open(sys.argv[2]).read()
passed, fails = 0, []
def check(ok, what):
    global passed
    if ok: passed += 1
    else: fails.append(what)
def eq(what, got, want):
    check(abs(got - want) < 1e-9, f"{what}: {got} != {want}")
eq("median ours", r["core.verlet.ns_per_point_substep"], 4)
s = r["_stats"]["core.verlet.ns_per_point_substep"]
eq("min", s["min"], 2); eq("max", s["max"], 5); eq("n", s["n"], 3)
check(s["runs"] == [2, 5, 4], f"runs in round order: {s['runs']}")
eq("ratio median", r["core.verlet.peer_js_ratio"], 5)
st = r["_stats"]["core.verlet.peer_js_ratio"]
eq("ratio min", st["min"], 4); eq("ratio max", st["max"], 8)
eq("x4 ratio per round, not of medians", r["core.verlet.peer_js_ratio_x4"], 8)
eq("two runs: their mean", r["server.instances_at_60hz"], 5500)
eq("two runs: n", r["_stats"]["server.instances_at_60hz"]["n"], 2)
check("core.springbone.peer_threevrm_ratio" not in r, "a ratio without its runs was made up")
check(r["_meta"].get("commit") == "abc1234", "meta not carried")
check("| `core.verlet.peer_js_ratio` | 5.00× | 4.00–8.00 | 3 |" in md, "RESULTS.md table row for the ratio:\n" + md)
check("abc1234" in md, "table header names the commit")
for f in fails: print("FAIL:", f)
print(f"merge: {passed} passed, {len(fails)} failed")
sys.exit(1 if fails else 0)
PY
grep -q "fewer than 3 runs" "$T/out.txt" || { echo "FAIL: merge.py does not flag metrics with fewer than 3 runs"; exit 1; }
