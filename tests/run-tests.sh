#!/usr/bin/env bash
# Runs every test binary and script given, then prints one closing line
# "tests: N passed, N failed" (each binary or script counts once). Exit 1 on any failure.
# Usage: run-tests.sh BUILD_DIR BIN... -- SCRIPT...
set -u
build="$1"; shift
bins=(); scripts=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do bins+=("$1"); shift; done
[ $# -gt 0 ] && shift
scripts=("$@")
export PT_BUILD="$build" PT_ROOT="$(pwd)"
export CMOCKA_MESSAGE_OUTPUT=stdout
pass=0; fail=0; failed=()
for t in "${bins[@]}"; do
  echo "== $t"
  if "$t"; then pass=$((pass+1)); else fail=$((fail+1)); failed+=("$t"); fi
done
for s in "${scripts[@]}"; do
  [ -n "$s" ] || continue
  echo "== $s"
  if bash "$s"; then pass=$((pass+1)); else fail=$((fail+1)); failed+=("$s"); fi
done
for f in "${failed[@]}"; do echo "FAILED: $f"; done
echo "tests: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
