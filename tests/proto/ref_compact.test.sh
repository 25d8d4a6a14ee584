#!/usr/bin/env bash
# The compact coding's reference decoder (tests/proto/ref_compact.py, written from
# PROTOCOL.md 11) on proto/vectors/compact/; then the same decoder with one misreading of
# the spec put in must fail them: the vectors tell a wrong predictor, a wrong reset or
# history rule and a wrong clock apart from the spec.
# sanitize: skip (Python on the golden vectors: no code of ours under the sanitizers)
set -eu
command -v python3 >/dev/null || { echo "ref_compact.test.sh: python3 not found" >&2; exit 1; }
ref=tests/proto/ref_compact.py
python3 "$ref" proto/vectors
out="${PT_BUILD:-build}/tests/proto"
mkdir -p "$out"
cp tests/proto/ref_decoder.py "$out/ref_decoder.py"
status=0
while IFS='|' read -r name from to; do
	sed "s/$from/$to/" "$ref" >"$out/ref_compact_mutant.py"
	if cmp -s "$ref" "$out/ref_compact_mutant.py"; then
		echo "FAIL: mutant '$name' changed nothing (the decoder's text moved?)"; status=1; continue
	fi
	if python3 "$out/ref_compact_mutant.py" proto/vectors >/dev/null; then
		echo "FAIL: the vectors accept a decoder with '$name'"; status=1
	else
		echo "ok: the vectors refuse a decoder with '$name'"
	fi
done <<'MUTANTS'
head predicted without its velocity|ocur\[j\] + ovel\[j\] + r\[j\]|ocur[j] + r[j]
head velocity not updated|vel = \[cur\[j\] - ocur\[j\] for j in range(6)\]|vel = ovel
seq absolute in a delta|seq = (oseq + d) % (1 << 32)|seq = d
history step ignored (always 1)|tick - self.last_tick == step|tick - self.last_tick == 1
history not required|need(self.head is not None and in_seq, 'no_key')|need(self.head is not None, 'no_key')
largest not checked|need(largest == olargest, 'range')|pass
clock without rounding|(gap \* 10\*\*6 + hz \/\/ 2) \/\/ hz|gap * 10**6 \/\/ hz
key velocities ignored|vel = triple(bits) + triple(bits)|vel = [0] * 6; triple(bits); triple(bits)
head position bound on the norm|need(all(abs(p) <= 1 << 30 for p in cur\[:3\]), 'range')|need(sum(p * p for p in cur[:3]) <= 1 << 60, 'range')
head position bound exclusive|abs(p) <= 1 << 30|abs(p) < 1 << 30
head position not bounded|need(all(abs(p) <= 1 << 30 for p in cur\[:3\]), 'range')|pass
MUTANTS
exit $status
