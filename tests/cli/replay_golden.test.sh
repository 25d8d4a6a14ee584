#!/usr/bin/env bash
# A recorded session (tests/fixtures/recording/session.ptrec: a whole body avatar with its
# bones posed, a ponytail with extrapolated head poses and a reset, a driven bot patched
# half-way; written by make_session.py from a live daemon) replays to the hashes it
# recorded and to the output pinned in session.golden, byte for byte: on the AVX2 kernels,
# on the plain-C kernels and in a build without any SIMD code (SIMD=0,
# tests/common/nosimd.sh). A change to the physics fails here and must update the golden
# file on purpose.
# sanitize: skip (compares builds; recording.test.mjs replays under the sanitizers)
set -eu
cd "$(dirname "$0")/../.."
. tests/common/nosimd.sh
nosimd_build bin/ponytail
F=tests/fixtures/recording/session.ptrec
G=tests/fixtures/recording/session.golden
want=$(sed -n 's/^sha256 //p' "$G")
fails=0
for run in "$build/bin/ponytail replay $F" "$build/bin/ponytail replay $F --kernel scalar" \
           "$nosimd/bin/ponytail replay $F"; do
  $run --verify 2>/dev/null || { echo "FAIL: $run --verify: $($run --verify 2>&1 | tail -1)"; fails=$((fails + 1)); }
  got=$($run | sha256sum | cut -d' ' -f1)
  [ "$got" = "$want" ] || { echo "FAIL: $run: output sha256 $got, golden $want"; fails=$((fails + 1)); }
  last=$($run | tail -n 3 | sed -E 's/^\{"id":([0-9]+),"tick":([0-9]+),.*"state_hash":"([0-9a-f]+)".*/state \1 \2 \3/')
  [ "$last" = "$(grep '^state ' "$G")" ] || { echo "FAIL: $run: last tick $last"; fails=$((fails + 1)); }
done
[ "$fails" = 0 ] && echo "ok: session.ptrec replays to its recorded hashes and to session.golden on AVX2, scalar and SIMD=0" || exit 1
