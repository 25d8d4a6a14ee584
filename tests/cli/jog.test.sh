#!/usr/bin/env bash
# The mass-spring article's realism figures: `ponytail sim --summary`'s tip speed, tip sigma
# and damping ratio, checked against a pendulum worked on paper and against a second
# implementation reading the frames; clients/examples/jog-ponytail.json under the jog
# motion lands in the article's bands at 2, 4 and 8 substeps.
RUN_TIMEOUT=120
. tests/common/cli.sh

# Frames -> the figures, written again from the definitions in `ponytail sim --help`
# (the jog and the step below do not rotate the head, so the head frame is a shift).
# Local extrema of the dominant coordinate here; half-cycle extremes in the C code.
FIG='
frames = [json.loads(l) for l in out.splitlines()]
assert all(f["head"]["q"] == [0, 0, 0, 1] for f in frames)
hp = [f["head"]["p"] for f in frames]
d = [[f["strands"][0][-1][i] - f["head"]["p"][i] for i in range(3)] for f in frames]
mv = [k for k in range(1, len(frames)) if hp[k] != hp[k - 1]]
first, last = mv[0], mv[-1]
def sigma(v):
    m = [sum(p[i] for p in v) / len(v) for i in range(3)]
    return math.sqrt(sum((p[i] - m[i]) ** 2 for p in v for i in range(3)) / len(v))
tip_sigma, head_sigma = sigma(d[first:last + 1]), sigma(hp[first:last + 1])
speed = max(math.dist(d[k], d[k - 1]) * 60 for k in range(1, len(d)))
e = [[p[i] - d[-1][i] for i in range(3)] for p in d[last:]]
axis = max(range(3), key=lambda i: max(abs(p[i]) for p in e))
u = [p[axis] for p in e]
turns = [(k, u[k]) for k in range(1, len(u) - 1)
         if (u[k] - u[k - 1]) * (u[k + 1] - u[k]) < 0 and abs(u[k]) >= 5e-5]
big = max(range(len(turns)), key=lambda j: abs(turns[j][1]))
turns = turns[big:]
logs = [math.log(abs(turns[j][1] / turns[j + 1][1])) for j in range(len(turns) - 1)]
delta = 2 * sum(logs) / len(logs)
zeta = delta / math.sqrt(4 * math.pi ** 2 + delta ** 2)
'

# --- a pendulum on paper --------------------------------------------------------------------
# A 0.25 m rod (2 points), no drag, damping 0.9393 of the velocity kept per 1/60 s: the
# velocity decays at c = -60 ln 0.9393 = 3.757 /s, omega = sqrt(9.81 / 0.25) = 6.264 rad/s,
# zeta = c / (2 omega) = 0.300. The head steps 5 cm sideways and stands.
cat >"$T/rod.json" <<'J'
{"name": "rod", "verlet": {"damping": 0.9393}, "wind": {"drag": 0},
 "strands": [{"anchor": [0, 0, 0], "points": 2, "segment_length": 0.25, "colliders": []}]}
J
printf '{"t": 0, "p": [0, 1.5, 0], "q": [0, 0, 0, 1]}\n{"t": 0.02, "p": [0.05, 1.5, 0], "q": [0, 0, 0, 1]}\n' >"$T/step.jsonl"
for k in 1 2 4 8 16; do
	run 0 "" sim "$T/rod.json" --poses "$T/step.jsonl" --ticks 600 --summary --substeps "$k"
	py "
s = json.loads(out)
assert abs(s['damping_ratio'] - 0.300) <= 0.015, s
assert s['decay_turning_points'] >= 5, s        # 5 cm down to 0.05 mm at 0.38 per half-cycle
assert s['tip_sigma_m'] == 0, s                 # the head moved in one tick only
assert abs(s['max_tip_speed_head_mps'] - 0.05 * 60) < 0.1, s   # the step, seen from the head
" || fail "rod pendulum at $k substeps: $(cat "$T/out")"
done
"$P" sim "$T/rod.json" --poses "$T/step.jsonl" --ticks 600 >"$T/out"
py "$FIG
assert abs(zeta - 0.300) <= 0.015, zeta
l4 = logs[:4]                                              # one ratio: exponential decay
assert len(l4) == 4 and max(l4) - min(l4) < 0.1 * sum(l4) / 4, logs
" || fail "rod pendulum frames do not decay exponentially at zeta 0.3"

# --- no fit where there is nothing to fit ----------------------------------------------------
run 0 "" sim "$T/rod.json" --motion still --summary
py "s = json.loads(out); assert s['tip_sigma_m'] is None and s['damping_ratio'] is None, s" ||
	fail "still head: sigma and zeta should be null: $(cat "$T/out")"
run 0 "" sim "$T/rod.json" --motion circle --summary
py "s = json.loads(out); assert s['tip_sigma_m'] > 0 and s['damping_ratio'] is None, s" ||
	fail "head never stops: zeta should be null: $(cat "$T/out")"
sed 's/0.9393/0.5/' "$T/rod.json" >"$T/rod_over.json"          # zeta ~ 5: no overshoot
run 0 "" sim "$T/rod_over.json" --poses "$T/step.jsonl" --ticks 600 --summary
py "s = json.loads(out); assert s['damping_ratio'] is None and s['decay_turning_points'] == 0, s" ||
	fail "overdamped rod: zeta should be null: $(cat "$T/out")"

# --- the jog ponytail ------------------------------------------------------------------------
# Article bands (seeds: ponytail-mass-spring-article): tip speed peak <= 1.2 m/s while
# running, exponential decay, zeta = 0.73 (no tolerance given: +-0.1 here). Its sigma band
# 0.17-0.19 m cannot be met together with the speed bound (README "Realism figures"): the
# tip is above resonance and stays nearly still in the world, so its head-frame sigma is
# the head's own (0.024 m), which is what is held here.
J=clients/examples/jog-ponytail.json
for k in 2 4 8; do
	run 0 "" sim "$J" --motion jog --summary --substeps "$k"
	cp "$T/out" "$T/summary"
	run 0 "" sim "$J" --motion jog --substeps "$k"
	py "$FIG
s = json.load(open('$T/summary'))
assert s['nan_count'] == 0 and s['head_stop_s'] == 5 and s['settle_s'] is not None, s
assert s['max_tip_speed_head_mps'] <= 1.2, s
assert abs(s['damping_ratio'] - 0.73) <= 0.1, s
assert 0.8 <= s['tip_sigma_m'] / head_sigma <= 1.25, (s, head_sigma)
# The summary agrees with the frames.
assert abs(s['tip_sigma_m'] - tip_sigma) < 1e-5, (s, tip_sigma)
assert abs(s['max_tip_speed_head_mps'] - speed) < 1e-4, (s, speed)
assert abs(s['damping_ratio'] - zeta) < 0.03, (s, zeta)
# Exponential decay: from the largest turning point on, the tip stays within twice the
# envelope exp(-zeta omega_n t), omega_n from the first half-period and the fitted zeta.
(k0, a0), (k1, a1) = turns[0], turns[1]
z = s['damping_ratio']
rate = z * math.pi / ((k1 - k0) / 60) / math.sqrt(1 - z * z)
worst = max(math.hypot(*e[k]) - 2 * abs(a0) * math.exp(-rate * (k - k0) / 60) for k in range(k0, len(e)))
assert worst < 5e-5, worst
" || fail "jog ponytail at $k substeps: $(cat "$T/summary")"
done

finish jog
