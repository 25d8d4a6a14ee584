#!/usr/bin/env bash
# `ponytail sim`'s "state_hash" (issue 39 item 1): every JSON frame carries the instance's
# state hash after its tick as 16 lowercase hex digits; the same run gives the same hashes
# (both solvers), and a state that differs (another tick, substep count, parameter) gives
# another. tests/server/js/state_hash.test.mjs shows the daemon's REST frame agrees.
# Run from the repository root (make test does); PT_BUILD is the build directory.
RUN_TIMEOUT=120
. tests/common/cli.sh

cat >"$T/v.json" <<'J'
{"name": "h", "prewarm_s": 0.5,
 "strands": [{"anchor": [0, 0.06, -0.12], "points": 12, "segment_length": 0.03},
             {"anchor": [0.05, 0.06, -0.12], "points": 5, "segment_length": 0.05}],
 "colliders": [{"shape": "sphere", "center": [0, 0, 0], "radius": 0.1}]}
J
sed 's/{"name": "h"/{"name": "h", "solver": "springbone"/' "$T/v.json" >"$T/s.json"
sed 's/"prewarm_s": 0.5/"prewarm_s": 0.5, "gravity": [0, -9.7, 0]/' "$T/v.json" >"$T/g.json"

for f in v s; do
	run 0 "" sim "$T/$f.json" --motion shake --ticks 40
	cp "$T/out" "$T/$f.1"
	run 0 "" sim "$T/$f.json" --motion shake --ticks 40
	cmp -s "$T/out" "$T/$f.1" || fail "sim $f: two runs differ"
	py "
frames = [json.loads(l) for l in out.splitlines()]
assert len(frames) == 40, len(frames)
hs = [f['state_hash'] for f in frames]
import re
assert all(isinstance(h, str) and re.fullmatch('[0-9a-f]{16}', h) for h in hs), hs[:3]
assert len(set(hs)) == 40, 'a moving head: every tick another state'
assert list(frames[0])[:3] == ['tick', 't', 'state_hash'], list(frames[0])
" || fail "sim $f: state_hash: $(head -c 300 "$T/out")"
done
cmp -s "$T/v.1" "$T/s.1" && fail "verlet and spring bone give the same frames"

# One tick more or less, another substep count, another parameter: other hashes; the
# first frames of a longer run are those of the shorter one.
hashes() { python3 -c "import json, sys; [print(json.loads(l)['state_hash']) for l in open(sys.argv[1])]" "$1"; }
run 0 "" sim "$T/v.json" --motion shake --ticks 41
hashes "$T/out" >"$T/h41"
hashes "$T/v.1" >"$T/h40"
[ "$(head -40 "$T/h41")" = "$(cat "$T/h40")" ] || fail "sim --ticks 41: its first 40 hashes are not those of --ticks 40"
run 0 "" sim "$T/v.json" --motion shake --ticks 40 --substeps 5
hashes "$T/out" | tail -1 >"$T/h5"
[ "$(cat "$T/h5")" != "$(tail -1 "$T/h40")" ] || fail "sim --substeps 5: the same hash as 4"
run 0 "" sim "$T/g.json" --motion still --ticks 1
hashes "$T/out" >"$T/hg"
run 0 "" sim "$T/v.json" --motion still --ticks 1
hashes "$T/out" >"$T/hv"
cmp -s "$T/hg" "$T/hv" && fail "sim: another gravity, the same hash"

# CSV has no hash column (one row per point)
run 0 "" sim "$T/v.json" --ticks 1 --format csv
[ "$(head -1 "$T/out")" = "tick,t,strand,point,x,y,z" ] || fail "sim csv header: $(head -1 "$T/out")"
# --help says what it is
run 0 "" sim --help
grep -q "state_hash" "$T/out" || fail "sim --help does not describe state_hash"

finish sim_hash
