#!/usr/bin/env bash
# Runs every test binary and script given, then prints the slowest ones and one closing
# line "tests: N passed, N failed in S s" (each binary or script counts once). Exit 1 on
# any failure. Each test's wall time follows its result ("-- 12 s"): CI's budget
# (README.md "Development") is spent where the slowest list says.
# Usage: run-tests.sh BUILD_DIR BIN... -- SCRIPT...
set -u
build="$1"; shift
bins=(); scripts=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do bins+=("$1"); shift; done
[ $# -gt 0 ] && shift
scripts=("$@")
export PT_BUILD="$build" PT_ROOT="$(pwd)"
export CMOCKA_MESSAGE_OUTPUT=stdout
pass=0; fail=0; failed=(); times=()
t_all=$SECONDS
# one test: "$@" is the command, $name what the lists call it
run_one() {
  local name="$1" t0=$SECONDS rc=0; shift
  echo "== $name"
  "$@" || rc=$?
  times+=("$((SECONDS - t0)) $name")
  if [ "$rc" -eq 0 ]; then pass=$((pass+1)); else fail=$((fail+1)); failed+=("$name"); fi
  echo "-- $name: $([ "$rc" -eq 0 ] && echo ok || echo "FAILED (exit $rc)") in $((SECONDS - t0)) s"
}
for t in "${bins[@]}"; do run_one "$t" "$t"; done
for s in "${scripts[@]}"; do
  [ -n "$s" ] || continue
  run_one "$s" bash "$s"
done
if [ "${#times[@]}" -gt 0 ]; then
  echo "slowest:"
  printf '%s\n' "${times[@]}" | sort -rn | head -10 | awk '{printf "  %5d s  %s\n", $1, $2}'
fi
for f in "${failed[@]}"; do echo "FAILED: $f"; done
echo "tests: $pass passed, $fail failed in $((SECONDS - t_all)) s"
[ "$fail" -eq 0 ]
