# Sourced by the SIMD=0 comparison scripts (tests/core/nosimd.test.sh and its twins):
# nosimd_build TARGET... makes those targets in a build without any SIMD code and sets
# $nosimd to its directory. That build is always made without sanitizers, into
# build/nosimd beside the plain build (PT_BUILD=build/san maps to build/nosimd too), so
# CI's sanitizer pass reuses the one its plain pass made: an ASan build of the emulated
# kernels cost minutes per script to prove nothing more, since the sanitized default
# build runs the same plain-C code under ASan in its own tests.
build="${PT_BUILD:-build}"
nosimd="${build%/san}/nosimd"
nosimd_build() {
  local targets=()
  for t in "$@"; do targets+=("$nosimd/$t"); done
  # one make at a time in that build: the scripts run in parallel (tests/run-tests.sh)
  mkdir -p "$nosimd"
  flock "$nosimd/.lock" make -s SANITIZE=0 SIMD=0 B="$nosimd" "${targets[@]}" >/dev/null
}
