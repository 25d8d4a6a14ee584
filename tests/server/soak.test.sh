#!/usr/bin/env bash
# The soak (tests/server/js/soak.mjs) for DURATION seconds, 60 in make test; `make soak
# DURATION=3600` runs it long. Bounded to DURATION + 120 s.
set -u
export PT_BUILD="${PT_BUILD:-build}"
d="${DURATION:-60}"
exec timeout -k 5 $((d + 120)) node --experimental-websocket --no-warnings tests/server/js/soak.mjs "$d"
