# Sourced by tests/client/*.test.sh: a ponytaild on free loopback ports with a temporary
# data directory (killed on exit, whatever happens: also on SIGTERM/SIGINT, with every
# other background job the script started), and helpers that run the CLI with a time bound
# and check its exit status and messages (tests/common/cli.sh). PT_BUILD is the build
# directory.
#
# Nothing here measures speed (issue 37: speed belongs to `make bench`). A wait is for a
# condition, with a deadline (WAIT_S, 30 s) that only a broken daemon or client reaches on a
# slow, loaded machine (a sanitizer build on 2 cores, 2 other tests running).
. tests/common/cli.sh
PD="$B/bin/ponytaild"
[ -x "$PD" ] || { echo "FAIL: $PD not built"; exit 1; }
WAIT_S="${WAIT_S:-30}"
DPID=""
stop_daemon() {
	if [ -n "$DPID" ]; then
		kill -TERM "$DPID" 2>/dev/null
		# A drain (and LeakSanitizer's report) may take a while on a loaded machine.
		local end=$((SECONDS + WAIT_S))
		while kill -0 "$DPID" 2>/dev/null && [ "$SECONDS" -lt "$end" ]; do sleep 0.1; done
		kill -KILL "$DPID" 2>/dev/null
		wait "$DPID" 2>/dev/null
		DPID=""
	fi
}
# kill_jobs: ends the background jobs this script started (by their ids), but the daemon.
kill_jobs() {
	local j
	for j in $(jobs -p); do [ "$j" = "$DPID" ] || kill -TERM "$j" 2>/dev/null; done
}
# bash runs the EXIT trap when SIGTERM or SIGINT ends it too (no trap of their own here:
# one would wait for the foreground command to finish first).
trap 'kill_jobs; stop_daemon; rm -rf "$T"' EXIT

# start_daemon [FLAGS...]: ports from HTTP_PORT / WS_PORT (0 = free ones, read back from
# the daemon's log). Sets S (REST URL), WS (WebSocket URL), HTTP_PORT, WS_PORT.
start_daemon() {
	: >"$T/daemon.log"
	"$PD" --http-port "${HTTP_PORT:-0}" --ws-port "${WS_PORT:-0}" --data "$T/data" \
		--web-root "$T" "$@" >>"$T/daemon.log" 2>&1 &
	DPID=$!
	local line="" end=$((SECONDS + WAIT_S))
	while [ "$SECONDS" -lt "$end" ]; do
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
	end=$((SECONDS + WAIT_S))
	while [ "$SECONDS" -lt "$end" ]; do
		python3 -c "import urllib.request as u; u.urlopen('$S/readyz', timeout=5)" 2>/dev/null && return 0
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.05
	done
	echo "FAIL: ponytaild never became ready"; cat "$T/daemon.log"; exit 1
}

# A port nothing listens on (bound, then closed: free for the moment).
dead_port() { python3 -c "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"; }

# eventually WHAT CMD...: runs CMD until it succeeds, for at most WAIT_S seconds; a failure
# named WHAT (status 1) if it never does.
eventually() {
	local what="$1" end=$((SECONDS + WAIT_S))
	shift
	until "$@"; do
		[ "$SECONDS" -lt "$end" ] || { fail "$what: not within $WAIT_S s"; return 1; }
		sleep 0.1
	done
}

# lines_in FILE N: FILE has at least N lines (for eventually).
lines_in() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }

# frame_seq ID [SERVER] [FLAGS...]: the instance's newest frame's last_seq (REST).
frame_seq() {
	local id="$1" srv="${2:-$S}"
	shift; [ $# -gt 0 ] && shift
	timeout 30 "$P" get "$id" --frame --json --server "$srv" "$@" 2>/dev/null |
		python3 -c "import json, sys; print(json.load(sys.stdin)['last_seq'])" 2>/dev/null
}

# applied ID SEQ [SERVER] [FLAGS...]: the daemon applied pose SEQ to instance ID: its
# frames carry it now. `ponytail stream` waits 2 s for that echo and says so; on a loaded
# machine it may come later, so a test asks the daemon, until it does (WAIT_S).
applied() {
	local id="$1" seq="$2"
	shift 2
	eventually "instance $id shows pose seq $seq" _seq_is "$seq" "$id" "$@"
}
_seq_is() { local want="$1"; shift; [ "$(frame_seq "$@")" = "$want" ]; }
