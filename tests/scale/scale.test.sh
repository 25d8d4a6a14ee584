#!/usr/bin/env bash
# make test-scale (also part of make test): three ponytaild nodes behind the real nginx
# configs of docker/ on loopback, then a fourth (tests/scale/scale.test.mjs). Run from the
# repository root; PT_BUILD is the build directory. Bounded to 300 s: a bound for a hang
# (about 15 s here alone; a sanitizer build on a loaded machine takes several times that),
# not a speed requirement (issue 37).
# timeout: 330 (its own bound is 300 s)
set -u
export PT_BUILD="${PT_BUILD:-build}"
[ -x "$PT_BUILD/bin/ponytaild" ] || { echo "FAIL: $PT_BUILD/bin/ponytaild not built"; exit 1; }
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] ||
	{ echo "FAIL: nginx is not installed (.ci/deps test installs nginx-light)"; exit 1; }
# The pinned validator packages (responses are checked against server/openapi.json).
bash tests/server/npm-deps.sh || exit 1
# Its own process group, so every daemon and nginx it started dies with it, and its own
# temporary directory (node's tmpdir() is $TMPDIR), removed with whatever they left there.
TMPDIR=$(mktemp -d)
export TMPDIR
setsid node --experimental-websocket --no-warnings --test --test-concurrency=1 --test-reporter=spec \
	tests/scale/docker.test.mjs tests/scale/scale.test.mjs &
pid=$!
trap 'kill -KILL -- -"$pid" 2>/dev/null; rm -rf "$TMPDIR"' EXIT
deadline=$((SECONDS + 300))
while kill -0 "$pid" 2>/dev/null; do
	if [ "$SECONDS" -ge "$deadline" ]; then
		echo "FAIL: the scale test did not end within 300 s (hung?)"
		kill -KILL -- -"$pid" 2>/dev/null
		break
	fi
	sleep 0.2
done
wait "$pid"
