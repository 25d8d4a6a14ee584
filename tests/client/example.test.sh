#!/usr/bin/env bash
# The client library's example program as a test: it connects, subscribes, receives N
# decoded frames, publishes poses and must see one of its sequence numbers echoed;
# failures (wrong token, unknown instance, no server) end it with status 1. The program's
# own deadline (--timeout, 10 s by default) is raised to 60 s where it must succeed: how
# many ticks a frame count takes is the machine's speed (issue 37), so the checks are
# counts, order and the echo, not latencies.
. "$(dirname "$0")/lib.sh"
E="$B/bin/ponytail-client-example"
[ -x "$E" ] || { echo "FAIL: $E not built"; exit 1; }
start_daemon

read -r ID TOKEN < <(echo '{"name": "ex", "room": "r"}' | timeout 60 "$P" create - --server "$S" --json |
	python3 -c "import json, sys; j = json.load(sys.stdin); print(j['id'], j['token'])")

# Subscribe only: 30 frames, no latency (nothing published).
timeout 90 "$E" "$WS" "$ID" --frames 30 --timeout 60 >"$T/out" 2>"$T/err" || fail "example (subscribe): $(tail -3 "$T/out") $(cat "$T/err")"
[ "$(grep -c '^tick [0-9]* seq 0 latency - tip ' "$T/out")" -eq 30 ] || fail "example frames: $(head -5 "$T/out")"
grep -q "^ok: 30 frames, 0 poses sent" "$T/out" || fail "example summary: $(tail -1 "$T/out")"
grep -q "^connected: ponytaild .*, protocol 1.5, 60 Hz, points within 0.001 m$" "$T/out" || fail "example welcome: $(head -1 "$T/out")"

# Publish and subscribe: the seqs come back (rising, each frame's latency measured).
timeout 90 "$E" "$WS" "$ID" "$TOKEN" --frames 60 --timeout 60 >"$T/out" 2>"$T/err" || fail "example (publish): $(tail -3 "$T/out") $(cat "$T/err")"
python3 - "$T/out" <<'PY' || fail "example publish run: $(tail -5 "$T/out")"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
rows = [re.match(r"tick (\d+) seq (\d+) latency (-|[\d.]+ ms) tip (\S+) (\S+) (\S+)$", l) for l in lines]
rows = [r for r in rows if r]
assert len(rows) >= 60, len(rows)
seqs = [int(r.group(2)) for r in rows]
lat = [float(r.group(3)[:-3]) for r in rows if r.group(3) != "-"]
assert seqs == sorted(seqs) and seqs[-1] > 0, seqs  # in order, and ours came back
assert lat and min(lat) >= 0, lat                     # measured where a new seq showed
ticks = [int(r.group(1)) for r in rows]
assert ticks == sorted(ticks) and len(set(ticks)) == len(ticks)
assert lines[-1].startswith("ok: ")
PY

# The server's word reaches the program: a wrong token, an unknown instance, no server.
timeout 90 "$E" "$WS" "$ID" wrong-token --frames 10 --timeout 60 >"$T/out" 2>"$T/err"
[ $? -eq 1 ] && grep -q "server error unauthorized (instance $ID): wrong token" "$T/err" || fail "example wrong token: $(cat "$T/err")"
timeout 90 "$E" "$WS" 999999 --frames 10 --timeout 60 >"$T/out" 2>"$T/err"
[ $? -eq 1 ] && grep -q "server error not_found (instance 999999)" "$T/err" || fail "example unknown id: $(cat "$T/err")"
timeout 60 "$E" "ws://127.0.0.1:$(dead_port)/" "$ID" --frames 10 --timeout 30 >"$T/out" 2>"$T/err"
[ $? -eq 1 ] && grep -q "^closed: " "$T/out" || fail "example no server: $(cat "$T/out")"
timeout 60 "$E" "http://127.0.0.1/" "$ID" >"$T/out" 2>"$T/err"
[ $? -eq 2 ] && grep -q "expected a ws:// or wss://host" "$T/err" || fail "example bad url: $(cat "$T/err")"

finish "example"
