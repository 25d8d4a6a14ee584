#!/usr/bin/env bash
# `make run` on a busy machine (server/run.sh): with the REST port already taken, the
# start script must stop as soon as the daemon exits, repeat the daemon's reason and say
# how to pick other ports -- not poll whatever owns the port and blame readiness. The
# owner here accepts and never answers, so polling it would take run.sh's whole readiness
# loop (100 tries of 0.4 s) and end in "did not become ready" or in timeout's 30 s: the
# status and the words tell, not how many seconds it took (issue 37).
set -u
B="${PT_BUILD:-build}"
T=$(mktemp -d)
trap 'kill "$HOLDER" 2>/dev/null; rm -rf "$T"' EXIT
python3 -c "
import socket, sys, time
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()
print(s.getsockname()[1], flush=True); sys.stdout.close(); time.sleep(600)" >"$T/port" &
HOLDER=$!
end=$((SECONDS + 30))
while [ ! -s "$T/port" ] && [ "$SECONDS" -lt "$end" ]; do sleep 0.05; done
PORT=$(cat "$T/port")
start=$SECONDS
PONYTAIL_HTTP_PORT=$PORT PONYTAIL_WS_PORT=0 PONYTAIL_DATA="$T/data" timeout 30 \
	server/run.sh "$B/bin/ponytaild" >"$T/out" 2>&1
rc=$?
took=$((SECONDS - start))
fails=0
check() { grep -qF -- "$1" "$T/out" || { echo "FAIL: no '$1' in:"; cat "$T/out"; fails=$((fails + 1)); }; }
[ "$rc" = 1 ] || { echo "FAIL: run.sh exited $rc, expected 1"; fails=$((fails + 1)); }
[ "$took" -lt 25 ] || { echo "FAIL: run.sh took $took s to give up (it polled the port's owner?)"; fails=$((fails + 1)); }
check "make run: ponytaild exited (status 1) before it was ready:"
check "--http-port $PORT: cannot listen on 127.0.0.1 (in use?)"
check "PONYTAIL_HTTP_PORT=8090 PONYTAIL_WS_PORT=8091 make run"
grep -q "did not become ready" "$T/out" && { echo "FAIL: misleading readiness message"; fails=$((fails + 1)); }
[ "$fails" = 0 ] && echo "run: busy port reported in ${took} s"
[ "$fails" = 0 ]
