#!/usr/bin/env bash
# The encoders' pinned output bytes (test_enc_hash.c) from a build without any SIMD code
# (SIMD=0: the reference quantiser loop and the plain integer passes only): the same
# hashes as main's AVX2 build. The SIMD=0 build is made as tests/common/nosimd.sh says.
# sanitize: skip (a comparison of builds, made in the plain phase; the sanitizer phase runs
# the same kernels under ASan + UBSan in the test binary this script compares)
set -eu
. "$(dirname "$0")/../common/nosimd.sh"
nosimd_build tests/proto/test_enc_hash
PT_ROOT="${PT_ROOT:-.}" "$nosimd/tests/proto/test_enc_hash" >"$nosimd/enc_hash.log" 2>&1 || {
  cat "$nosimd/enc_hash.log"; echo "FAIL: SIMD=0 build's encoder output differs"; exit 1; }
grep -q 'differs from main' "$nosimd/enc_hash.log" && {
  echo "note: inputs differ from main's (core changed); SIMD=0 kernels compared with one another only"; }
echo "ok: SIMD=0 build's records hash as main's encoder's"
