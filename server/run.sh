#!/usr/bin/env bash
# `make run`: starts ponytaild on its embedded defaults (or PONYTAIL_* variables), prints
# where to go, and when the store is empty creates a demo instance moved by the built-in
# "shake" motion, so the browser client has something to show. Ctrl-C stops the daemon
# cleanly (SIGINT reaches it through the terminal's process group).
set -u
bin="$1"
shift
"$bin" "$@" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null; wait "$pid"; exit $?' TERM
trap 'wait "$pid"; exit $?' INT

host="${PONYTAIL_BIND:-127.0.0.1}"
[ "$host" = 0.0.0.0 ] && host=127.0.0.1
http="http://$host:${PONYTAIL_HTTP_PORT:-8080}"

python3 - "$http" <<'PY' || { kill -TERM "$pid" 2>/dev/null; wait "$pid"; exit 1; }
import json, sys, time, urllib.request
base = sys.argv[1]
def call(method, path, body=None):
    req = urllib.request.Request(base + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read() or b"null")
for _ in range(100):
    try:
        call("GET", "/readyz")
        break
    except Exception:
        time.sleep(0.1)
else:
    sys.exit("ponytaild did not become ready at " + base)
info = call("GET", "/v1/info")
ws = base.replace("http://", "ws://").rsplit(":", 1)[0] + ":%d/" % info["ws_port"]
if call("GET", "/v1/instances")["count"] == 0:
    demo = {
        "name": "demo", "room": "demo",
        "strands": [
            {"anchor": [-0.05, 0.06, -0.08], "direction": [-0.3, -1, -0.2], "points": 14, "segment_length": 0.03},
            {"anchor": [0.05, 0.06, -0.08], "direction": [0.3, -1, -0.2], "points": 14, "segment_length": 0.03},
        ],
        "colliders": [
            {"shape": "sphere", "attach": "head", "center": [0, 0, 0], "radius": 0.1},
            {"shape": "capsule", "attach": "head", "a": [0, -0.08, 0], "b": [0, -0.2, 0], "radius": 0.05},
        ],
        "driver": {"motion": "shake", "amplitude": 30, "period": 1.5},
    }
    made = call("POST", "/v1/instances", demo)
    print(f"demo instance {made['id']} created (room 'demo', moved by 'shake'); "
          f"its write token, shown once: {made['token']}", flush=True)
print(f"""
  ponytaild is running (tick {info['tick_hz']} Hz x {info['substeps']} substeps)
    browser client   {base}/
    REST API         {base}/v1/instances
    WebSocket        {ws}  (subprotocol ponytail.v1)
    metrics          {base}/metrics
  Ctrl-C stops it.
""", flush=True)
PY
wait "$pid"
