#!/usr/bin/env bash
# timeout: 10 (tests/common/runner.test.sh: a test that hangs)
# A daemon, an orphaned sleeper in a session of its own, then a hang.
echo "hang: started"
"$PT_ROOT/$RUNNER_BUILD/bin/ponytaild" --http-port 0 --ws-port 0 --data "$TMPDIR/d" \
	--web-root "$TMPDIR" >"$TMPDIR/daemon.log" 2>&1 &
( setsid sleep 1001 & )
for _ in $(seq 80); do grep -q 'listening: ' "$TMPDIR/daemon.log" && break; sleep 0.1; done
grep -o 'listening: http://[0-9.:]*' "$TMPDIR/daemon.log" | sed 's/^/hang: daemon /'
sleep 1002
