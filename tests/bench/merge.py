#!/usr/bin/env python3
"""Merges the benchmark runs of tests/bench/run-bench.sh into results.json and a table.

Usage: merge.py RUNS_DIR RESULTS_JSON NUMBERS_MD META_JSON

RUNS_DIR holds one file per program run, named <program>.<round>.txt, each with lines
    METRIC <name> <value> <unit> <description...>
(anything else is the program's own output). A metric seen in several runs is reported
as the median of its runs with their spread (min, max, every run). Ratios to the peers
are computed per round, from the peer's run and ours in the same round, then reported
the same way (median and spread of the per-round ratios): never from constants.

results.json: {"<name>": median, ..., "_stats": {"<name>": {"median", "min", "max", "n",
"runs", "unit", "description", "source"}}, "_meta": {...}}; the flat "<name>": value pairs
are what earlier versions wrote, so readers of those keep working.
"""
import json
import os
import re
import statistics
import sys

# (ratio, peer metric, our metric, description): peer ns / our ns in the same round.
RATIOS = [
    ("core.verlet.peer_js_ratio", "peer.js_verlet.ns_per_point_substep",
     "core.verlet.ns_per_point_substep",
     "the plugin article's algorithm in plain JS (tests/bench/peers/verlet_plugin.mjs) / ours, "
     "ns per point-substep, bench_verlet's scene at 1 substep, same round"),
    ("core.verlet.peer_js_ratio_x4", "peer.js_verlet.ns_per_point_substep_x4",
     "core.verlet.ns_per_point_substep_x4", "same at 4 substeps"),
    ("core.springbone.peer_threevrm_ratio", "peer.threevrm_springbone.ns_per_joint_substep",
     "core.springbone.ns_per_joint_substep",
     "@pixiv/three-vrm's spring bone (tests/bench/peers/springbone_threevrm.mjs) / ours, ns per "
     "joint-substep, bench_springbone's scene, same round"),
]

RUN_FILE = re.compile(r"^(?P<prog>.+)\.(?P<round>\d+)\.txt$")


def read_runs(runs_dir):
    """{name: {"unit", "description", "source", "runs": {round: value}}}"""
    metrics = {}
    for fn in sorted(os.listdir(runs_dir)):
        m = RUN_FILE.match(fn)
        if not m:
            continue
        prog, rnd = m.group("prog"), int(m.group("round"))
        with open(os.path.join(runs_dir, fn), encoding="utf-8", errors="replace") as f:
            for line in f:
                if not line.startswith("METRIC "):
                    continue
                parts = line.rstrip("\n").split(" ", 4)
                if len(parts) < 4:
                    continue
                try:
                    value = float(parts[2])
                except ValueError:
                    continue
                e = metrics.setdefault(parts[1], {"unit": parts[3],
                                                  "description": parts[4] if len(parts) > 4 else "",
                                                  "source": prog, "runs": {}})
                e["runs"][rnd] = value
    return metrics


def add_ratios(metrics):
    for name, peer, ours, desc in RATIOS:
        if peer not in metrics or ours not in metrics:
            continue
        p, o = metrics[peer]["runs"], metrics[ours]["runs"]
        runs = {r: p[r] / o[r] for r in sorted(set(p) & set(o)) if o[r] > 0}
        if runs:
            metrics[name] = {"unit": "x", "description": desc, "source": "run-bench.sh", "runs": runs}


def stats(e):
    v = [e["runs"][r] for r in sorted(e["runs"])]
    return {"median": statistics.median(v), "min": min(v), "max": max(v), "n": len(v), "runs": v,
            "unit": e["unit"], "description": e["description"], "source": e["source"]}


def fmt(v):
    a = abs(v)
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def main():
    runs_dir, out_json, out_md, meta_json = sys.argv[1:5]
    metrics = read_runs(runs_dir)
    add_ratios(metrics)
    st = {n: stats(e) for n, e in sorted(metrics.items())}
    meta = {}
    if os.path.exists(meta_json):
        with open(meta_json, encoding="utf-8") as f:
            meta = json.load(f)
    result = {n: s["median"] for n, s in st.items()}
    result["_stats"] = st
    result["_meta"] = meta
    with open(out_json, "w", encoding="utf-8") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")

    rows = [(n, s) for n, s in st.items()]
    w = max([len(n) for n, _ in rows] + [6])
    print(f"\n{'metric':<{w}}  {'median':>12}  {'min':>10}  {'max':>10}  n  unit        description")
    for n, s in rows:
        print(f"{n:<{w}}  {s['median']:>12.4g}  {s['min']:>10.4g}  {s['max']:>10.4g}  {s['n']}  "
              f"{s['unit']:<10}  {s['description']}")
    with open(out_md, "w", encoding="utf-8") as f:
        f.write("# Benchmark results\n\n"
                "Written by `make bench` (tests/bench/README.md says how to run and read it).\n\n"
                f"- machine: {meta.get('cpu', '?')}, {meta.get('nproc', '?')} vCPUs\n"
                f"- commit: {meta.get('commit', '?')}\n- date: {meta.get('date', '?')}\n"
                f"- node: {meta.get('node', '?')}, {meta.get('valgrind', '?')}\n\n")
        f.write(f"Measured {meta.get('date', '?')} by `make bench` (commit {meta.get('commit', '?')}), "
                f"{meta.get('nproc', '?')} vCPUs shared with other work (load average "
                f"{meta.get('load_start', '?')} at the start, {meta.get('load_end', '?')} at the end): "
                "medians of n runs with their range; callgrind counts are instructions, which "
                "do not depend on the load.\n\n")
        f.write("| metric | median | range (min–max) | n | description |\n|---|---|---|---|---|\n")
        for n, s in rows:
            unit = "×" if s["unit"] == "x" else " " + s["unit"]
            desc = s["description"].replace("|", "\\|")
            f.write(f"| `{n}` | {fmt(s['median'])}{unit} | {fmt(s['min'])}–{fmt(s['max'])} | "
                    f"{s['n']} | {desc} |\n")
    print(f"\nwrote {out_json} and {out_md}")
    few = [n for n, s in rows if s["n"] < 3]
    if few:
        print(f"note: fewer than 3 runs for {len(few)} metrics ({', '.join(few[:4])}"
              f"{', ...' if len(few) > 4 else ''}): single searches of the live-daemon scripts "
              "(PT_BENCH_EXTRA_RUNS) or a short PT_BENCH_RUNS")


if __name__ == "__main__":
    main()
