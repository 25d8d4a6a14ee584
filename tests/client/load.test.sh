#!/usr/bin/env bash
# `ponytail load` against a real daemon: a short run whose report adds up (connections,
# frames per subscriber, records, latency samples, bytes), the JSON report, clean-up (and
# --keep, --reuse), the daemon's refusals counted as errors, and flag validation.
# What the figures say about speed (frames per subscriber against the window's ticks,
# latency, the verdict line) is `make bench`'s (issue 37): here each report must add up,
# exactly where it can, whatever the machine's speed. load's exit status does not depend
# on its verdict (0 once it has measured).
# timeout: 180 (about 30 s alone: five load runs of 0.5-2 s windows, plus ramps)
. "$(dirname "$0")/lib.sh"
start_daemon --max-conns-per-ip 1000

# 2 rooms x 3 instances, 3 publishers (2 instances each), 8 subscribers (4 per room).
run 0 "" load --rooms 2 --per-room 3 --publishers 3 --subscribers 8 --duration 2 --ramp 0.5 \
	--motion nod --prefix t1 --json "$T/r.json" --server "$S"
grep -q "^ponytail load: 2 rooms x 3 instances, 3 publishers at 60 Hz, 8 subscribers" "$T/out" ||
	fail "load report head: $(head -3 "$T/out")"
grep -q "^  connections   11 made, 0 failed, 0 lost$" "$T/out" || fail "load connections: $(cat "$T/out")"
grep -q "^  verdict " "$T/out" || fail "load verdict: $(cat "$T/out")"
[ "$(grep -c '^\[ *[0-9.]*s\] \(ramp\|measure\) *conns ' "$T/err")" -ge 2 ] || fail "load progress lines: $(cat "$T/err")"
python3 - "$T/r.json" <<'PY' || fail "load JSON: $(cat "$T/r.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["instances"] == 6 and j["publishers"] == 3 and j["subscribers"] == 8
assert j["connections"] == {"made": 11, "failed": 0, "lost": 0}
assert j["duration_s"] >= 2, j["duration_s"]        # never shorter than asked
f = j["frames"]
# frames/sub: the window's ticks as the subscribers saw them (expected), and how many of
# them each one got (a lagging one is sent the newest tick): at least one, at most all.
assert f["expected"] > 0, f
assert 1 <= f["received_min"] <= f["received_p1"] <= f["received_p50"] <= f["expected"], f
assert f["received_min"] <= f["received_mean"] <= f["expected"], f
# The ticks the subscribers missed, exactly those the report counts.
got = round(f["received_mean"] * 8)
assert j["frames_skipped"]["subscribers"] == 8 * f["expected"] - got, (j["frames_skipped"], f)
r = j["records"]
# 3 instances a room: a record each per tick, none outside the window.
assert r["expected"] == f["expected"] * 3 * 8, r
assert 0 < r["received"] <= min(r["expected"], 3 * got), (r, got)
l = j["latency_ms"]
assert l["samples"] > 0 and 0 <= l["p50"] <= l["p99"] <= l["max"], l
d = j["delivery_ms"]
# A delivery sample per record whose connection already knows the server's clock offset
# (clients/lib/rx.c: -1 before that, not a sample): at most one a record.
assert 0 < d["records"] <= r["received"] and d["p50"] <= d["p99"], (d, r)
b = j["bytes_per_s"]
# Protocol bytes: each record received is at least 33 B (in), and the publishers sent.
assert b["in"] * j["duration_s"] >= 0.99 * 33 * r["received"] and b["out"] > 0, (b, r)
assert j["errors"] == {}, j["errors"]
assert j["daemon"]["tick_p99_ms"] > 0, j["daemon"]
assert set(j["pass"]) == {"frames_99", "latency_2_ticks", "connections"}
assert j["pass"]["connections"] is True
PY
run 0 "" list --server "$S" --json
py "assert json.loads(out)['count'] == 0" || fail "load did not delete its instances: $(cat "$T/out")"

# Poses at 120 Hz against 60 Hz ticks: a record reflects two new poses (more when the
# subscriber skipped ticks), and each is a latency sample (the older waited longer), not
# only the record's last_seq: more samples than records. (Counting only last_seq gives at
# most one a record; how close the ratio comes to 2 is the machine's speed.)
run 0 "" load --rooms 1 --per-room 2 --publishers 1 --subscribers 1 --duration 2 --ramp 0.3 \
	--rate 120 --prefix t2 --json "$T/r2.json" --server "$S"
python3 - "$T/r2.json" <<'PY' || fail "load at 120 Hz, a sample per pose: $(cat "$T/r2.json")"
import json, sys
j = json.load(open(sys.argv[1]))
n, rec = j["latency_ms"]["samples"], j["records"]["received"]
assert rec > 0 and n > rec, (n, rec)
PY

# --keep leaves them; --reuse runs subscribers on them (publishers need an admin token).
run 0 "" load --rooms 1 --per-room 2 --publishers 0 --subscribers 2 --duration 0.5 --ramp 0 \
	--prefix kept --keep --server "$S"
grep -q "kept 2 instances in rooms kept-\*" "$T/err" || fail "load --keep: $(cat "$T/err")"
run 0 "" list --room kept-0 --server "$S" --json
py "assert json.loads(out)['count'] == 2" || fail "load --keep: $(cat "$T/out")"
run 0 "" load --rooms 1 --publishers 0 --subscribers 3 --duration 2 --ramp 0 --prefix kept \
	--reuse --decode --server "$S" --json "$T/r.json"
python3 -c "
import json; j = json.load(open('$T/r.json'))
assert j['instances'] == 2 and j['connections']['made'] == 3 and j['records']['received'] > 0, j
assert j['errors'] == {}, j['errors']  # --decode: every record decoded" ||
	fail "load --reuse: $(cat "$T/out")"
run 0 "" list --room kept-0 --server "$S" --json
py "assert json.loads(out)['count'] == 2" || fail "load --reuse deleted what it did not create"
run 1 "room nothere-0 has no instances" load --rooms 1 --publishers 0 --subscribers 1 --duration 1 \
	--prefix nothere --reuse --server "$S"

# The daemon's limits show up as errors by kind, not as a crash.
stop_daemon
start_daemon --max-conns-per-ip 4
run 0 "" load --rooms 1 --per-room 2 --publishers 1 --subscribers 6 --duration 0.5 --ramp 0 \
	--json "$T/r.json" --server "$S"
python3 -c "
import json; j = json.load(open('$T/r.json'))
assert j['connections']['failed'] == 3 and j['connections']['made'] == 4, j['connections']
assert j['errors'].get('connect_failed') == 3 and not j['pass']['connections'], j" ||
	fail "load past --max-conns-per-ip: $(cat "$T/out")"
grep -q "first failure: " "$T/out" || fail "load: the first connect failure is not shown: $(cat "$T/out")"

# Unreachable server; flags.
dead="http://127.0.0.1:$(dead_port)"
run 1 "cannot reach $dead" load --rooms 1 --publishers 1 --subscribers 1 --duration 1 --server "$dead"
base=(--rooms 1 --publishers 1 --subscribers 1 --duration 1)
run 2 "missing --rooms" load --publishers 1 --subscribers 1 --duration 1
run 2 "missing --duration" load --rooms 1 --publishers 1 --subscribers 1
run 2 "--rooms: expected an integer in [1, 10000], got '0'" load --rooms 0 --publishers 1 --subscribers 1 --duration 1
run 2 "--publishers: at most one per instance (10)" load --rooms 1 --publishers 11 --subscribers 1 --duration 1
run 2 "each publishes at most 64 instances; need at least 2" load --rooms 1 --per-room 100 --publishers 1 --subscribers 1 --duration 1
run 2 "each publishes at most 64 instances; need at least 4" load --rooms 2 --per-room 100 --publishers 3 --subscribers 1 --duration 1
run 2 "--publishers: at least one per room (3), or 0" load --rooms 3 --publishers 2 --subscribers 1 --duration 1
run 2 "nothing to run" load --rooms 1 --publishers 0 --subscribers 0 --duration 1
run 2 "--duration: expected a number in [0.01, 86400]" load --rooms 1 --publishers 1 --subscribers 1 --duration -1
run 2 "--rate: expected a number in [1, 240]" load "${base[@]}" --rate 500
run 2 "--ramp: expected a number in [0, 600]" load "${base[@]}" --ramp 601
run 2 "--per-room: expected an integer in [1, 1000]" load "${base[@]}" --per-room 0
run 2 "--motion: expected one of" load "${base[@]}" --motion dance
run 2 "--amplitude: for circle, metres in [0, 10]" load "${base[@]}" --motion circle --amplitude 20
run 2 "--amplitude: for jog, metres in [0, 0.2]" load "${base[@]}" --motion jog --amplitude 0.5
run 2 "--prefix: expected 1 to 64 of A-Z a-z 0-9 _ . -, got 'a b'" load "${base[@]}" --prefix "a b"
run 2 "--prefix: at most 40 bytes" load "${base[@]}" --prefix aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
run 2 "--reuse with publishers needs --token" load "${base[@]}" --reuse
run 2 "--reuse creates nothing" load "${base[@]}" --reuse --keep --token t
run 2 "unknown flag '--bogus'" load "${base[@]}" --bogus
run 2 "unknown argument 'x'" load "${base[@]}" x
run 0 "" load --help
for f in --rooms --publishers --subscribers --duration --motion --ramp --keep --json; do
	grep -q -- "$f" "$T/out" || fail "load --help lacks $f"
done

finish "load"
