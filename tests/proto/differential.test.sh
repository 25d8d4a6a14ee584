#!/usr/bin/env bash
# Differential test: the C decoders (a small driver linked against the built library) and
# the JS decoders must agree on 20,000 randomly mutated messages, strand records and
# compact frame_batch_c messages (PROTOCOL.md 11).
set -eu
build="${PT_BUILD:-build}"
out="$build/tests/proto"
mkdir -p "$out"
cc -std=c11 -O1 -g -Iproto/include -o "$out/diff_driver" tests/proto/diff_driver.c "$build/lib/libpt_proto.a" -lm \
  $( [ "${build%san}" != "$build" ] && echo -fsanitize=address,undefined )
exec node tests/proto/differential.mjs "$out/diff_driver" "${PT_DIFF_COUNT:-20000}"
