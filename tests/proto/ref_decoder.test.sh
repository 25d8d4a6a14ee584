#!/usr/bin/env bash
# The Python reference decoder (written from proto/PROTOCOL.md alone) on every golden
# vector; then the same decoder with one misreading of the spec put in must fail them
# (the vectors tell a wrong fold, a reciprocal, an MSB-first Exp-Golomb suffix, an
# unchecked hello major, a record step ignored and hello features read by the minor field
# apart from the spec).
# sanitize: skip (Python on the golden vectors: no code of ours under the sanitizers)
set -eu
command -v python3 >/dev/null || { echo "ref_decoder.test.sh: python3 not found" >&2; exit 1; }
ref=tests/proto/ref_decoder.py
python3 "$ref" proto/vectors
# a directory of its own (ref_compact.test.sh may run beside it): the mutant decodes the
# invalid/batch_c_* vectors with ref_compact.py, which imports ref_decoder (unmutated)
out="${PT_BUILD:-build}/tests/proto/ref_decoder_mutants"
mkdir -p "$out"
cp tests/proto/ref_compact.py tests/proto/ref_decoder.py "$out/"
status=0
while IFS='|' read -r name from to; do
	sed "s/$from/$to/" "$ref" >"$out/ref_mutant.py"
	if cmp -s "$ref" "$out/ref_mutant.py"; then
		echo "FAIL: mutant '$name' changed nothing (the decoder's text moved?)"; status=1; continue
	fi
	if python3 "$out/ref_mutant.py" proto/vectors >/dev/null; then
		echo "FAIL: the vectors accept a decoder with '$name'"; status=1
	else
		echo "ok: the vectors refuse a decoder with '$name'"
	fi
done <<'MUTANTS'
wrong fold|(1 - abs(y)) \* sgn(x), (1 - abs(x)) \* sgn(y)|(1 - abs(x)) * sgn(x), (1 - abs(y)) * sgn(y)
integer fold test|if z < 0:|if abs(codes[2 * i]) + abs(codes[2 * i + 1]) > M:
grid reciprocal|codes\[2 \* i\] \/ M, codes\[2 \* i + 1\] \/ M|codes[2 * i] * (1 \/ M), codes[2 * i + 1] * (1 \/ M)
MSB-first Exp-Golomb suffix|(1 << m) + self.get(m)|(1 << m) + int(format(self.get(m), "0%db" % m)[::-1] or "0", 2)
hello major unchecked|need(m\['major'\] == MAJOR, 'version')|pass
record step ignored|tick == self.last_tick + rec.get('step', 1)|tick == self.last_tick + 1
any earlier record will do|tick == self.last_tick + rec.get('step', 1)|tick > self.last_tick
hello features by the minor field|if minor >= 2:  # section 11|if m['minor'] >= 2:  # section 11
MUTANTS
exit $status
