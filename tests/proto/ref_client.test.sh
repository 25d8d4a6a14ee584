#!/usr/bin/env bash
# A third-party client written from PROTOCOL.md alone (tests/proto/ref_client.py, Python
# stdlib, decoding with ref_decoder.py) against a live daemon: hello 1.1, subscribe, three
# seconds of frames of an instance shaken by the built-in driver (twin strands, a collider),
# every decoded tick within the welcome's max_error_m of the daemon's own points for that
# tick (GET /v1/instances/{id}/frame); then again as a 1.2 client of compact frames, once
# more in 1.2 at 10 Hz, and compact at 10 Hz (every 6th tick, through the records' step).
. "$(dirname "$0")/../client/lib.sh"
start_daemon
ID=$(python3 - "$S" <<'PY'
import json, sys, urllib.request
body = {"name": "ref", "room": "ref", "prewarm_s": 0.2,
        "driver": {"motion": "shake", "amplitude": 45, "period": 0.6},
        "strands": [{"anchor": [-0.05, 0.04, -0.11], "direction": [0, -1, 0], "points": 12, "segment_length": 0.03},
                    {"anchor": [0.05, 0.04, -0.11], "direction": [0.3, -1, 0.2], "points": 9, "segment_length": 0.045}],
        "colliders": [{"shape": "sphere", "attach": "head", "center": [0, 0, 0], "radius": 0.1}]}
req = urllib.request.Request(sys.argv[1] + "/v1/instances", json.dumps(body).encode(), {"Content-Type": "application/json"})
print(json.load(urllib.request.urlopen(req, timeout=10))["id"])
PY
) || fail "create the instance"
timeout 120 python3 tests/proto/ref_client.py "$S" "$WS_PORT" "$ID" 3 || fail "ref_client.py"
# the same with hello 1.2 asking for compact frames (PROTOCOL.md 11): frame_batch_c,
# decoded by ref_compact.py, within the same bound
timeout 120 python3 tests/proto/ref_client.py "$S" "$WS_PORT" "$ID" 3 compact || fail "ref_client.py compact"
# protocol 1.2: the same at 10 Hz (every 6th tick, deltas through the records' step)
timeout 120 python3 tests/proto/ref_client.py "$S" "$WS_PORT" "$ID" 3 10 || fail "ref_client.py at 10 Hz"
# compact frames at 10 Hz (PROTOCOL.md 11.3): every 6th tick, step 6 in each record
timeout 120 python3 tests/proto/ref_client.py "$S" "$WS_PORT" "$ID" 3 compact 10 || fail "ref_client.py compact at 10 Hz"
finish ref_client
