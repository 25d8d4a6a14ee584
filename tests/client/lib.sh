# Sourced by tests/client/*.test.sh: a ponytaild on free loopback ports with a temporary
# data directory (killed on exit, whatever happens), and helpers that run the CLI with a
# time bound and check its exit status and messages (tests/common/cli.sh). PT_BUILD is the
# build directory.
. tests/common/cli.sh
PD="$B/bin/ponytaild"
[ -x "$PD" ] || { echo "FAIL: $PD not built"; exit 1; }
DPID=""
stop_daemon() {
	if [ -n "$DPID" ]; then
		kill -TERM "$DPID" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$DPID" 2>/dev/null
		wait "$DPID" 2>/dev/null
		DPID=""
	fi
}
trap 'stop_daemon; rm -rf "$T"' EXIT

# start_daemon [FLAGS...]: ports from HTTP_PORT / WS_PORT (0 = free ones, read back from
# the daemon's log). Sets S (REST URL), WS (WebSocket URL), HTTP_PORT, WS_PORT.
start_daemon() {
	: >"$T/daemon.log"
	"$PD" --http-port "${HTTP_PORT:-0}" --ws-port "${WS_PORT:-0}" --data "$T/data" \
		--web-root "$T" "$@" >>"$T/daemon.log" 2>&1 &
	DPID=$!
	local line=""
	for _ in $(seq 100); do
		line=$(grep -m1 -o 'listening: http://[0-9.]*:[0-9]*/ ws://[0-9.]*:[0-9]*/' "$T/daemon.log") && break
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.05
	done
	if [ -z "$line" ]; then
		echo "FAIL: ponytaild did not start:"; cat "$T/daemon.log"; exit 1
	fi
	HTTP_PORT=$(echo "$line" | sed -E 's|.*http://[0-9.]*:([0-9]+)/.*|\1|')
	WS_PORT=$(echo "$line" | sed -E 's|.*ws://[0-9.]*:([0-9]+)/.*|\1|')
	S="http://127.0.0.1:$HTTP_PORT"
	WS="ws://127.0.0.1:$WS_PORT/"
	for _ in $(seq 100); do
		python3 -c "import urllib.request as u; u.urlopen('$S/readyz', timeout=1)" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "FAIL: ponytaild never became ready"; cat "$T/daemon.log"; exit 1
}

# A port nothing listens on (bound, then closed: free for the moment).
dead_port() { python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }
