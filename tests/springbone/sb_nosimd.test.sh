#!/usr/bin/env bash
# The spring-bone wide path across builds: a build without any SIMD code (SIMD=0) must end
# test_sb_lanes' scene in the same state as the default build, whose AVX2 lanes, emulated
# lanes and per-chain path agree with each other (the test itself checks that, every tick).
# The SIMD=0 build is made as tests/common/nosimd.sh says.
# sanitize: skip (a comparison of builds, made in the plain phase; the sanitizer phase runs
# the same kernels under ASan + UBSan in the test binary this script compares)
set -eu
. "$(dirname "$0")/../common/nosimd.sh"
nosimd_build tests/springbone/test_sb_lanes
hash_of() {
  CMOCKA_MESSAGE_OUTPUT=stdout "$1" 2>&1 |
    sed -n 's/.*per chain: \([0-9a-f]*\) \([0-9a-f]*\) \([0-9a-f]*\).*/\1 \2 \3/p'
}
read -r a1 a2 a3 <<<"$(hash_of "$build/tests/springbone/test_sb_lanes")"
read -r b1 b2 b3 <<<"$(hash_of "$nosimd/tests/springbone/test_sb_lanes")"
echo "default build: lanes $a1, emulated lanes $a2, per chain $a3; SIMD=0 build: $b1 $b2 $b3"
[ -n "$a1" ] && [ "$a1" = "$a2" ] && [ "$a1" = "$a3" ] && [ "$a1" = "$b1" ] &&
  [ "$b1" = "$b2" ] && [ "$b1" = "$b3" ] || {
  echo "FAIL: spring-bone state differs between kernels, paths or builds"; exit 1; }
echo "ok: spring bone bit-identical across AVX2 lanes, emulated lanes, per chain and SIMD=0"
