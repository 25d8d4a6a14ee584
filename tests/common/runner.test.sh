#!/usr/bin/env bash
# The test runner (tests/run-tests.sh) on three small scripts of tests/common/runner/: one
# that hangs with a daemon and an orphaned process running, one that passes but leaves a
# process behind, one that fails. The runner must report the timeout with the test's last
# lines, print the failing test's output, count 1 passed and 2 failed, exit 1, and leave
# nothing running: the daemon, the sleepers, nothing listening.
# sanitize: skip (tests the runner, a bash script; the daemon is only what it must kill)
set -u
B="${PT_BUILD:-build}"
[ -x "$B/bin/ponytaild" ] || { echo "FAIL: $B/bin/ponytaild not built"; exit 1; }
T=$(mktemp -d)
trap 'pkill -f "sleep 100[123]" 2>/dev/null; rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
rc=0
RUNNER_BUILD="$B" TEST_TMPROOT="$T/b/test-tmp" JOBS=3 TEST_TIMEOUT_SCALE=1 tests/run-tests.sh "$T/b" -- tests/common/runner/hang.sh \
	tests/common/runner/leave.sh tests/common/runner/fail.sh >"$T/out" 2>&1 || rc=$?
cat "$T/out"
[ "$rc" = 1 ] || fail "runner exit $rc, want 1"
grep -q '^tests: 1 passed, 2 failed in ' "$T/out" || fail "closing line"
grep -q 'hang.sh: TIMED OUT after 10 s' "$T/out" || fail "no timeout report"
grep -q '| hang: started' "$T/out" || fail "the hung test's last lines are not shown"
port=$(sed -nE 's/.*hang: daemon listening: http:\/\/127.0.0.1:([0-9]+).*/\1/p' "$T/out")
[ -n "$port" ] || fail "the hung test's daemon did not start (so its end proves nothing)"
grep -q 'fail.sh: FAILED (exit 3)' "$T/out" && grep -q '| fail: the reason' "$T/out" ||
	fail "the failing test's output is not shown"
grep -q 'leave.sh left processes running; killed:' "$T/out" || fail "the leftover is not named"
sleep 0.5
! pgrep -f 'sleep 100[123]' >/dev/null || fail "sleepers left running: $(pgrep -af 'sleep 100[123]')"
! pgrep -f "ponytaild .*--data $T/b/" >/dev/null || fail "the hung test's daemon is still running"
[ -z "$port" ] || ! python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" 2>/dev/null ||
	fail "something still listens on the hung daemon's port $port"
[ -z "$(ls -A "$T/b/test-tmp" 2>/dev/null)" ] || fail "temporary directories left: $(ls "$T/b/test-tmp")"
[ "$fails" = 0 ] && echo "ok: runner" || exit 1
