#!/usr/bin/env bash
# `ponytail load` against a real daemon: a short run whose report adds up (connections,
# frames per subscriber, records, latency samples, bytes), the JSON report, clean-up (and
# --keep, --reuse), the daemon's refusals counted as errors, and flag validation.
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
f = j["frames"]
# 2 s at 60 Hz; the window is measured, so allow a tick either way.
assert 1.9 * 60 <= f["expected"] <= 2.3 * 60, f
# A loaded test machine may drop a few ticks; most must arrive.
assert f["received_p50"] >= 0.8 * f["expected"] and f["received_min"] <= f["received_p1"] <= f["received_p50"], f
r = j["records"]
assert r["expected"] == f["expected"] * 3 * 8 and 0.8 * r["expected"] <= r["received"] <= r["expected"], r
l = j["latency_ms"]
assert l["samples"] > 0.5 * r["received"] and 0 < l["p50"] <= l["p99"] <= l["max"] < 1000, l
d = j["delivery_ms"]
assert d["records"] > 0.5 * r["received"] and 0 <= d["p50"] <= d["p99"] < 1000, d
b = j["bytes_per_s"]
# Each subscriber gets ~60 batches/s of 3 records: at least 33 B each, and each publisher
# sends 2 x 60 poses/s of 59 B (49 + the 10-byte header).
assert b["in"] > 8 * 60 * 3 * 33 * 0.8 and 3 * 2 * 60 * 59 * 0.8 < b["out"] < 3 * 2 * 60 * 59 * 1.3, b
assert j["errors"] == {}, j["errors"]
assert j["daemon"]["tick_p99_ms"] > 0, j["daemon"]
assert set(j["pass"]) == {"frames_99", "latency_2_ticks", "connections"}
PY
run 0 "" list --server "$S" --json
py "assert json.loads(out)['count'] == 0" || fail "load did not delete its instances: $(cat "$T/out")"

# Poses at 120 Hz against 60 Hz ticks: each record reflects two new poses, and each is a
# latency sample (the older waited longer), not only the record's last_seq.
run 0 "" load --rooms 1 --per-room 2 --publishers 1 --subscribers 1 --duration 1.5 --ramp 0.3 \
	--rate 120 --prefix t2 --json "$T/r2.json" --server "$S"
python3 - "$T/r2.json" <<'PY' || fail "load at 120 Hz, a sample per pose: $(cat "$T/r2.json")"
import json, sys
j = json.load(open(sys.argv[1]))
n, rec = j["latency_ms"]["samples"], j["records"]["received"]
assert rec > 0 and 1.6 * rec <= n <= 2.2 * rec, (n, rec)
PY

# --keep leaves them; --reuse runs subscribers on them (publishers need an admin token).
run 0 "" load --rooms 1 --per-room 2 --publishers 0 --subscribers 2 --duration 0.5 --ramp 0 \
	--prefix kept --keep --server "$S"
grep -q "kept 2 instances in rooms kept-\*" "$T/err" || fail "load --keep: $(cat "$T/err")"
run 0 "" list --room kept-0 --server "$S" --json
py "assert json.loads(out)['count'] == 2" || fail "load --keep: $(cat "$T/out")"
run 0 "" load --rooms 1 --publishers 0 --subscribers 3 --duration 0.5 --ramp 0 --prefix kept \
	--reuse --decode --server "$S" --json "$T/r.json"
py "assert 1" && python3 -c "
import json; j = json.load(open('$T/r.json'))
assert j['instances'] == 2 and j['connections']['made'] == 3 and j['records']['received'] > 0, j" ||
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
