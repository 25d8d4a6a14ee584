#!/usr/bin/env bash
# Body-bone poses over the wire (protocol 1.2) and REST move a chest collider; a 1.1
# client's bones are ignored (tests/server/bones_client.py says what is checked). Then the
# C client library's path: `ponytail stream --poses` with "bones" in its pose lines.
# What the poses bring about is polled for (up to 30 s), never assumed after a sleep
# (issue 37: nothing depends on the machine's speed).
. "$(dirname "$0")/../client/lib.sh"
start_daemon
timeout 300 python3 tests/server/bones_client.py "$S" "$WS_PORT" || fail "bones_client.py"

P="$B/bin/ponytail"
read -r ID TOK < <(python3 - "$S" <<'PY'
import json, sys, urllib.request
body = {"name": "stream-bones", "prewarm_s": 0.2,
        "strands": [{"anchor": [0, 0, 0], "direction": [0, -1, 0], "points": 10, "segment_length": 0.04, "radius": 0.005}],
        "bones": {"chest": {"position": [0, -0.3, 0.5], "rotation": [0, 0, 0, 1]}},
        "colliders": [{"shape": "sphere", "attach": "chest", "center": [0, 0, 0], "radius": 0.12}]}
req = urllib.request.Request(sys.argv[1] + "/v1/instances", json.dumps(body).encode(), {"Content-Type": "application/json"})
j = json.load(urllib.request.urlopen(req, timeout=10))
print(j["id"], j["token"])
PY
)
python3 -c "
for k in range(60):
    print('{\"tick\": %d, \"p\": [0, 1.6, 0], \"q\": [0, 0, 0, 1], \"bones\": {\"chest\": {\"p\": [0, 1.3, 0.08], \"q\": [0, 0, 0, 1]}}}' % k)
" >"$T/bones.jsonl"
timeout 60 "$P" stream "$ID" --poses "$T/bones.jsonl" --token "$TOK" --server "$S" >"$T/out" 2>&1 ||
	fail "stream --poses with bones: $(cat "$T/out")"
_chest_pushed() {
	timeout 30 "$P" get "$ID" --frame --json --server "$S" >"$T/frame" 2>/dev/null || return 1
	python3 - "$T/frame" <<'PY'
import json, math, sys
f = json.load(open(sys.argv[1]))
pts = [p for s in f['strands'] for p in s]
gap = min(math.dist(p, (0, 1.3, 0.08)) for p in pts) - 0.125
back = min(p[2] for p in pts)
ok = gap >= -1e-3 and back < -0.02
if ok:
    print('stream --poses with bones: gap %.3f mm, pushed back to z = %.3f m' % (gap * 1e3, back))
sys.exit(0 if ok else 1)
PY
}
eventually "ponytail stream's bones moving the chest" _chest_pushed
# Every body bone in each line (54, the names of PROTOCOL.md's table), the chest 5 m away
# and last: the client library sends all 54 (a 1,650-byte head_pose), the strand hangs
# straight again once the chest has moved off.
python3 - "$T/all54.jsonl" <<'PY'
import json, sys
names = {}
for line in open('proto/PROTOCOL.md'):
    c = [x.strip() for x in line.strip().strip('|').split('|')]
    if len(c) == 6 and all(x.isdigit() for x in c[0::2]):
        names.update({int(c[i]): c[i + 1] for i in (0, 2, 4)})
assert sorted(names) == list(range(54)), names
bones = {names[i]: {'p': [0.01 * i, 1.0, 3.0], 'q': [0, 0, 0, 1]} for i in range(54) if names[i] != 'chest'}
bones['chest'] = {'p': [0, 1.3, 5.0], 'q': [0, 0, 0, 1]}
with open(sys.argv[1], 'w') as f:
    for k in range(60):
        print(json.dumps({'tick': k, 'p': [0, 1.6, 0], 'q': [0, 0, 0, 1], 'bones': bones}), file=f)
PY
timeout 60 "$P" stream "$ID" --poses "$T/all54.jsonl" --token "$TOK" --server "$S" >"$T/out" 2>&1 ||
	fail "stream --poses with 54 bones: $(cat "$T/out")"
_hangs_straight() {
	timeout 30 "$P" get "$ID" --frame --json --server "$S" >"$T/frame" 2>/dev/null || return 1
	python3 - "$T/frame" <<'PY'
import json, math, sys
f = json.load(open(sys.argv[1]))
off = max(math.hypot(p[0], p[2]) for s in f['strands'] for p in s)
ok = off < 1e-3
if ok:
    print('stream --poses with 54 bones: the chest moved off, the strand hangs straight (%.3f mm)' % (off * 1e3))
sys.exit(0 if ok else 1)
PY
}
eventually "ponytail stream's 54 bones moving the chest away" _hangs_straight
printf '{"t": 0, "p": [0, 1.6, 0], "q": [0, 0, 0, 1], "bones": {"chst": {"p": [0, 1, 0], "q": [0, 0, 0, 1]}}}\n' >"$T/bad.jsonl"
timeout 60 "$P" stream "$ID" --poses "$T/bad.jsonl" --token "$TOK" --server "$S" >"$T/out" 2>&1 &&
	fail "stream accepted a bad bone name"
grep -q "bones.chst: not a body bone" "$T/out" || fail "stream's bad bone message: $(cat "$T/out")"
finish bones
