#!/usr/bin/env bash
# `ponytail vmc` against a real daemon: tests/client/vmc_play (liblo) plays a recorded
# VMC motion at 60 Hz into the bridge; every frame of the instance must show one of the
# poses sent (converted from Unity's frame), and the frames end showing the last pose;
# the capture's five body bones go with each pose.
# Garbage, truncated bundles, NaNs, unknown addresses and wrong types in the middle are
# counted and leave the bridge running and following. Then --forward passes packets on
# unchanged, --hair-out sends the joints, --create makes an instance, and bad flags are
# refused. How soon a pose shows (the lag, the bridge's latency) is the machine's speed:
# printed, judged by `make bench` only (issue 37). The bridge runs until the test stops
# it, so nothing depends on how long the playback takes.
. "$(dirname "$0")/lib.sh"
PLAY="$B/tests/client/vmc_play"
[ -x "$PLAY" ] || { echo "FAIL: $PLAY not built"; exit 1; }
CAPTURE=tests/fixtures/vmc/nod-turn.txt
start_daemon
free_udp() { python3 -c "import socket; s = socket.socket(type=socket.SOCK_DGRAM); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }

echo '{"name": "vtuber", "room": "stage"}' >"$T/def.json"
read -r ID TOKEN < <(timeout 60 "$P" create "$T/def.json" --server "$S" --json |
	python3 -c "import json, sys; j = json.load(sys.stdin); print(j['id'], j['token'])")
[ -n "$ID" ] || { fail "create"; finish vmc; exit 1; }

# 1. The recorded motion, abuse in the middle, into a bridge that also forwards and sends
# the hair out (to UDP sinks that count what arrives).
PORT=$(free_udp); FWD=$(free_udp); HAIR=$(free_udp)
# The sinks: every datagram, until SIGTERM (then what is queued, and out).
python3 - "$FWD" "$HAIR" "$T" <<'PY' &
import select, signal, socket, sys
stop = []
signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
socks = {}
for port, name in ((int(sys.argv[1]), "fwd"), (int(sys.argv[2]), "hair")):
    s = socket.socket(type=socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.bind(("127.0.0.1", port)); s.setblocking(False)
    socks[s] = open(f"{sys.argv[3]}/{name}.bin", "wb")
open(f"{sys.argv[3]}/sinks.ready", "w").close()
while True:
    try:
        ready = select.select(list(socks), [], [], 0.1)[0]
    except InterruptedError:
        ready = []
    for s in (list(socks) if stop else ready):
        while True:
            try:
                d = s.recv(65536)
            except BlockingIOError:
                break
            socks[s].write(len(d).to_bytes(4, "big") + d)
        socks[s].flush()
    if stop:
        break
PY
SINKS=$!
eventually "the UDP sinks" test -f "$T/sinks.ready"
timeout 330 "$P" vmc --instance "$ID" --token "$TOKEN" --server "$S" --listen "127.0.0.1:$PORT" \
	--forward "127.0.0.1:$FWD" --hair-out "127.0.0.1:$HAIR" --duration 300 --json >"$T/bridge.jsonl" 2>"$T/bridge.err" &
BR=$!
# Play once the bridge is subscribed: a status line (each second) counting frames.
_bridge_up() { python3 -c "import json, sys; sys.exit(not any(json.loads(l)['frames'] > 0 for l in open('$T/bridge.jsonl')))" 2>/dev/null; }
eventually "the bridge's first frames" _bridge_up
timeout 120 "$PLAY" "$CAPTURE" "$PORT" "$WS" "$ID" >"$T/play.json" 2>"$T/play.err" || fail "vmc_play: $(cat "$T/play.err")"
kill -TERM "$BR" # Ctrl-C: the bridge stops cleanly, with its final status
wait "$BR" || fail "the bridge exited $?: $(tail -3 "$T/bridge.err")"
kill -TERM "$SINKS"; wait "$SINKS"
cat "$T/play.json"
tail -1 "$T/bridge.jsonl"
python3 - "$T" <<'PY' || fail "the bridge did not follow: $(cat "$T/play.json") $(tail -1 "$T/bridge.jsonl") $(head -5 "$T/play.err")"
import json, sys
t = sys.argv[1]
play = json.load(open(f"{t}/play.json"))
lines = [json.loads(l) for l in open(f"{t}/bridge.jsonl")]
fin = lines[-1]
assert fin["final"] and all(not l["final"] for l in lines[:-1]), "one final status, last"
assert len(lines) >= 2, f"a status each second, then the final one: {len(lines)} lines"
# Every frame shows a pose that was sent, and the frames end showing the last one.
assert play["frames"] >= 1 and play["unmatched"] == 0, play
assert play["last_frame_shows_last_pose"], play
# The abuse was counted, not applied, and the bridge kept going.
assert fin["malformed"] >= 20, fin      # junk, cut bundles, a lying size, wrong types, zero rotation
assert fin["nonfinite"] == 2, fin       # the NaN bone and the infinite root
assert fin["unknown"] >= 1, fin         # /obs/scene (junk may add more)
assert fin["ignored"] >= 3 * play["sent"], fin  # /VMC/Ext/OK, /T, /Blend/Val of every bundle
# Poses published (bundles that came together are one pose: how many is speed), none lost.
assert fin["poses"] >= 1 and fin["not_published"] == 0, fin
# The capture's body bones (Hips, Spine, Chest, UpperChest, Neck; Head is the head) went
# with the last pose (tests/client/test_vmc.c checks their world poses by hand).
assert fin["bones"] == 5, fin
assert fin["packets"] == fin["forwarded"] and fin["forward_errors"] == 0, fin
# --forward: the same datagrams, byte for byte, in order.
def packets(name):
    data, out = open(f"{t}/{name}.bin", "rb").read(), []
    while data:
        n = int.from_bytes(data[:4], "big"); out.append(data[4:4 + n]); data = data[4 + n:]
    return out
fwd = packets("fwd")
assert len(fwd) == fin["packets"], (len(fwd), fin["packets"])
assert sum(1 for p in fwd if p.startswith(b"#bundle\0")) >= play["sent"]
# --hair-out: bundles of /VMC/Thru/ponytail/Bone/Pos, one message per joint.
hair = packets("hair")
assert len(hair) >= 1 and fin["hair_bundles"] >= len(hair), (len(hair), fin.get("hair_bundles"))
assert b"/VMC/Thru/ponytail/Bone/Pos" in hair[-1] and b"s0j0" in hair[-1] and b"s0j11" in hair[-1]
PY

# 2. The text status line each second, and --create: until a status line shows, then Ctrl-C.
PORT=$(free_udp)
timeout 120 "$P" vmc --create "$T/def.json" --server "$S" --listen "$PORT" --duration 100 >"$T/out" 2>"$T/err" &
VC=$!
STATUS_RE='^vmc: .* packets/s, .* poses/s, dropped 0 (malformed 0, unknown 0, non-finite 0, not sent 0), latency -$'
eventually "vmc --create's status line" grep -q "$STATUS_RE" "$T/err"
kill -TERM "$VC"
wait "$VC" || fail "vmc --create: $(cat "$T/err")"
grep -q "^ponytail vmc: created instance [0-9]*, token: " "$T/err" || fail "vmc --create says: $(cat "$T/err")"
grep -q '^vmc (total): ' "$T/err" || fail "final status: $(cat "$T/err")"

# 3. Refusals.
run 2 "give one target" vmc --server "$S"
run 2 "give one target" vmc --create "$T/def.json" --instance "$ID" --token "$TOKEN" --server "$S"
run 2 "needs the instance's write token" vmc --instance "$ID" --server "$S"
run 2 "--listen: expected [HOST:]PORT" vmc --instance "$ID" --token "$TOKEN" --listen 70000
run 2 "--forward: expected [HOST:]PORT" vmc --instance "$ID" --token "$TOKEN" --forward "host:"
run 2 "unknown flag '--bogus'" vmc --bogus
run 1 "wrong token" vmc --instance "$ID" --token nope --server "$S" --listen "$(free_udp)" --duration 50 # ends at the refusal
run 1 "404" vmc --instance 999999 --token nope --server "$S"
run 0 "" vmc --help
grep -q "negate\|(x, y, -z)" "$T/out" || fail "vmc --help states the conversion"

finish vmc
