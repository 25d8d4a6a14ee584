#!/usr/bin/env bash
# `make run`: starts ponytaild on its embedded defaults (or PONYTAIL_* variables), prints
# where to go, and when the store is empty creates a demo instance moved by the built-in
# "shake" motion, so the browser client has something to show. Ctrl-C stops the daemon
# cleanly (SIGINT reaches it through the terminal's process group).
set -u
bin="$1"
shift
# The daemon's stderr goes to the terminal and to a file, so that when it exits during
# start-up (a port in use, a bad option) its reason can be repeated next to what to do.
log=$(mktemp "${TMPDIR:-/tmp}/ponytaild-run.XXXXXX")
"$bin" "$@" 2> >(tee "$log" >&2) &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null; wait "$pid"; exit $?' TERM
trap 'wait "$pid"; exit $?' INT

host="${PONYTAIL_BIND:-127.0.0.1}"
[ "$host" = 0.0.0.0 ] && host=127.0.0.1
http="http://$host:${PONYTAIL_HTTP_PORT:-8080}"

# Exits at once when the daemon does (not after polling whatever else owns the port).
gave_up() {
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	sleep 0.1 # the tee behind the daemon's stderr
	reason=$(grep '^ponytaild: ' "$log" | tail -n 1)
	rm -f "$log"
	[ -n "$reason" ] || return 1
	echo "" >&2
	echo "make run: ponytaild exited (status $rc) before it was ready:" >&2
	echo "  ${reason#ponytaild: }" >&2
	case "$reason" in
	*"in use?"*)
		echo "  Another program holds that port. Pick other ports, e.g.:" >&2
		echo "    PONYTAIL_HTTP_PORT=8090 PONYTAIL_WS_PORT=8091 make run" >&2
		;;
	esac
	return 1
}

python3 - "$http" "$pid" <<'PY' || { gave_up; exit 1; }
import json, os, sys, time, urllib.request
base, pid = sys.argv[1], int(sys.argv[2])
def alive():
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
def call(method, path, body=None, timeout=5):
    req = urllib.request.Request(base + path, method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as r:
        return json.loads(r.read() or b"null")
for _ in range(100):
    if not alive():
        sys.exit(1)
    try:
        call("GET", "/readyz", timeout=0.3)  # short: the port may be another program's
        break
    except Exception:
        time.sleep(0.1)
else:
    sys.exit("ponytaild did not become ready at " + base)
if not alive():
    sys.exit(1)
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
rm -f "$log"
wait "$pid"
