#!/usr/bin/env bash
# The encoders' pinned output bytes (test_enc_hash.c) from a build without any SIMD code
# (SIMD=0: the reference quantiser loop and the plain integer passes only): the same
# hashes as main's AVX2 build. Like core/nosimd.test.sh, the SIMD=0 build is made without
# sanitizers into build/nosimd, so CI's sanitizer pass reuses its plain pass's build (an ASan
# build of it took ~3 minutes and the sanitized default build runs test_enc_hash already).
set -eu
build="${PT_BUILD:-build}"
nosimd="${build%/san}/nosimd"
make -s SANITIZE=0 SIMD=0 B="$nosimd" "$nosimd/tests/proto/test_enc_hash" >/dev/null
PT_ROOT="${PT_ROOT:-.}" "$nosimd/tests/proto/test_enc_hash" >"$nosimd/enc_hash.log" 2>&1 || {
  cat "$nosimd/enc_hash.log"; echo "FAIL: SIMD=0 build's encoder output differs"; exit 1; }
grep -q 'differs from main' "$nosimd/enc_hash.log" && {
  echo "note: inputs differ from main's (core changed); SIMD=0 kernels compared with one another only"; }
echo "ok: SIMD=0 build's records hash as main's encoder's"
