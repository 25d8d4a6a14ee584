#!/usr/bin/env bash
# Integration tests of ponytaild: REST, persistence, WebSocket, shutdown, against real
# daemons on free loopback ports with temporary data directories (tests/server/js/).
# Run from the repository root (make test does); PT_BUILD is the build directory.
set -u
export PT_BUILD="${PT_BUILD:-build}"
[ -x "$PT_BUILD/bin/ponytaild" ] || { echo "FAIL: $PT_BUILD/bin/ponytaild not built"; exit 1; }
# The pinned validator packages (responses are checked against server/openapi.json).
bash tests/server/npm-deps.sh || exit 1
# Node runs in its own process group so that, whatever happens, every daemon it started
# is killed with it; the whole run is bounded to 300 s.
setsid node --experimental-websocket --no-warnings --test --test-concurrency=1 --test-reporter=spec \
	tests/server/js/*.test.mjs &
pid=$!
trap 'kill -KILL -- -"$pid" 2>/dev/null' EXIT
deadline=$((SECONDS + 300))
while kill -0 "$pid" 2>/dev/null; do
	if [ "$SECONDS" -ge "$deadline" ]; then
		echo "FAIL: server tests took over 300 s"
		kill -KILL -- -"$pid" 2>/dev/null
		break
	fi
	sleep 0.2
done
wait "$pid"
