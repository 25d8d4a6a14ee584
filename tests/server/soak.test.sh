#!/usr/bin/env bash
# The soak (tests/server/js/soak.mjs) for DURATION seconds, 60 in make test; `make soak
# DURATION=3600` runs it long. Bounded to DURATION + 120 s.
# timeout: 180 (a 60 s soak, then the checks; the runner doubles it under the sanitizers)
set -u
export PT_BUILD="${PT_BUILD:-build}"
d="${DURATION:-60}"
# Under ASan (build/san) freed memory sits in quarantine and RSS climbs by design (to
# ~350 MiB in 60 s), so the slope says nothing there: LeakSanitizer at the daemon's exit
# is the leak check (the soak fails on its report), and the slope is checked in build/.
case "$PT_BUILD" in *san*) export SOAK_SLOPE_KIB_MIN=1000000000 ;; esac
exec timeout -k 5 $((d + 120)) node --experimental-websocket --no-warnings tests/server/js/soak.mjs "$d"
