#!/usr/bin/env bash
# Crash trials (tests/server/js/crash.mjs): TRIALS kill -9 during writes, 10 in make test;
# `make crash-trials TRIALS=100` runs more. Bounded to 20 s a trial plus a minute.
set -u
export PT_BUILD="${PT_BUILD:-build}"
n="${TRIALS:-10}"
exec timeout -k 5 $((n * 20 + 60)) node --experimental-websocket --no-warnings tests/server/js/crash.mjs "$n"
