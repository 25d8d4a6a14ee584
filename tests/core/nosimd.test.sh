#!/usr/bin/env bash
# Determinism across builds: a build without any SIMD code (SIMD=0) must produce the
# same state hash on the stress scenario as the default build's AVX2 and scalar kernels.
# The SIMD=0 build is made as tests/common/nosimd.sh says.
# sanitize: skip (a comparison of builds, made in the plain phase; the sanitizer phase runs
# the same kernels under ASan + UBSan in the test binary this script compares)
set -eu
. "$(dirname "$0")/../common/nosimd.sh"
nosimd_build tests/core/test_world
hash_of() { "$1" 2>&1 | sed -n 's/.*scalar and auto hashes \([0-9a-f]*\) \([0-9a-f]*\).*/\1 \2/p'; }
read -r a1 a2 <<<"$(hash_of "$build/tests/core/test_world")"
read -r b1 b2 <<<"$(hash_of "$nosimd/tests/core/test_world")"
echo "default build: scalar $a1 auto $a2; SIMD=0 build: scalar $b1 auto $b2"
[ -n "$a1" ] && [ "$a1" = "$a2" ] && [ "$a1" = "$b1" ] && [ "$b1" = "$b2" ] || {
  echo "FAIL: state hashes differ between kernels or builds"; exit 1; }
echo "ok: bit-identical across AVX2, scalar kernel and SIMD=0 build"
