#!/usr/bin/env bash
# Determinism across builds: a build without any SIMD code (SIMD=0) must produce the
# same state hash on the stress scenario as the default build's AVX2 and scalar kernels.
# The SIMD=0 build is always made without sanitizers, into build/nosimd beside the plain
# build (so CI's sanitizer pass reuses the one its plain pass made): under SANITIZE=1 the
# sanitized build's kernels are compared with it, which is a check across compile flags
# too, and an ASan build of the emulated kernels cost ~7 minutes to prove nothing more
# (the default build's scalar kernel is the same code and runs under ASan already).
set -eu
build="${PT_BUILD:-build}"
nosimd="${build%/san}/nosimd"
make -s SANITIZE=0 SIMD=0 B="$nosimd" "$nosimd/tests/core/test_world" >/dev/null
hash_of() { "$1" 2>&1 | sed -n 's/.*scalar and auto hashes \([0-9a-f]*\) \([0-9a-f]*\).*/\1 \2/p'; }
read -r a1 a2 <<<"$(hash_of "$build/tests/core/test_world")"
read -r b1 b2 <<<"$(hash_of "$nosimd/tests/core/test_world")"
echo "default build: scalar $a1 auto $a2; SIMD=0 build: scalar $b1 auto $b2"
[ -n "$a1" ] && [ "$a1" = "$a2" ] && [ "$a1" = "$b1" ] && [ "$b1" = "$b2" ] || {
  echo "FAIL: state hashes differ between kernels or builds"; exit 1; }
echo "ok: bit-identical across AVX2, scalar kernel and SIMD=0 build"
