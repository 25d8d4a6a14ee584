#!/usr/bin/env bash
# Every file in clients/examples/: it loads; the stress sequence at 1, 2, 4, 8 and 16
# substeps keeps it whole (no NaN, penetration <= 1 mm, stretch <= 1 %); released from its
# rest pose with no prewarm and the head still, it settles (every tip under 1 cm/s).
RUN_TIMEOUT=120
. tests/common/cli.sh

# Known solver limits, lifted as the solver improves (the test says when one no longer
# holds), as "FILE SUBSTEPS". None now: long-hair.json at 1 substep settles since friction
# acts on the position (core/src/solver_verlet.c, step 6).
KNOWN_UNSETTLED=""

n=0
for f in clients/examples/*.json; do
	name="$(basename "$f")"
	n=$((n + 1))
	run 0 "" sim "$f" --ticks 1
	py "f = json.loads(out); assert f['tick'] == 0 and len(f['strands']) >= 1" ||
		fail "$name: does not load: $(head -c 300 "$T/err")"
	python3 -c "import json; d = json.load(open('$f')); d['prewarm_s'] = 0; json.dump(d, open('$T/p0.json', 'w'))"
	for k in 1 2 4 8 16; do
		run 0 "" sim "$f" --motion stress --summary --substeps "$k"
		py "
s = json.loads(out)
assert s['nan_count'] == 0, s
assert s['max_penetration_m'] <= 1e-3, s
assert s['max_segment_error_ratio'] <= 0.01, s
" || fail "$name: stress at $k substeps: $(cat "$T/out")"

		run 0 "" sim "$T/p0.json" --motion still --summary --substeps "$k" --ticks 600
		if [ "$KNOWN_UNSETTLED" = "$name $k" ]; then
			py "assert json.loads(out)['settle_s'] is None" ||
				echo "note: $name settles at $k substeps now; drop it from KNOWN_UNSETTLED"
			continue
		fi
		py "
s = json.loads(out)
assert s['nan_count'] == 0 and s['settle_s'] is not None, s
assert s['settle_s'] <= 3, s                      # at rest 3 s after release at the latest
" || fail "$name: released with the head still at $k substeps, does not settle: $(cat "$T/out")"
	done
done
[ "$n" -ge 4 ] || fail "expected at least 4 examples in clients/examples, found $n"

finish examples
