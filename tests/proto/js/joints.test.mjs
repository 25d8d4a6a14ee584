// jointRotations: the rotations put the rest chain back on the frame's points (forward
// kinematics written here, not the module's), on curved and uneven chains under a turned
// parent; a hand-worked case; the degenerate inputs.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { jointRotations } from '../../../proto/js/ponytail-proto.mjs';

const mul = ([ax, ay, az, aw], [bx, by, bz, bw]) => [
  aw * bx + ax * bw + ay * bz - az * by, aw * by + ay * bw + az * bx - ax * bz,
  aw * bz + az * bw + ax * by - ay * bx, aw * bw - ax * bx - ay * by - az * bz,
];
const rot = (q, v) => mul(mul(q, [...v, 0]), [-q[0], -q[1], -q[2], q[3]]).slice(0, 3);
const axisAngle = (axis, a) => {
  const n = Math.hypot(...axis);
  return [...axis.map((c) => (c / n) * Math.sin(a / 2)), Math.cos(a / 2)];
};
const sub = (a, b) => a.map((c, i) => c - b[i]);
const add = (a, b) => a.map((c, i) => c + b[i]);
const dist = (a, b) => Math.hypot(...sub(a, b));

// p[0] = points[0], p[i+1] = p[i] + W_i (r[i+1] - r[i]), W_i = P L_0 ... L_i
function pose(rest, root, parent, rots) {
  let w = parent;
  const out = [root];
  for (let i = 0; i + 1 < rest.length; i++) {
    w = mul(w, rots[i]);
    out.push(add(out[i], rot(w, sub(rest[i + 1], rest[i]))));
  }
  return out;
}

// A rest chain bent in two planes with unequal segments (1.5 to 6 cm).
const lengths = [0.03, 0.055, 0.015, 0.04, 0.06, 0.025, 0.035];
const rest = [[0.02, 0.08, -0.09]];
lengths.forEach((l, i) => {
  const a = 0.25 * i;
  rest.push(add(rest[i], [l * Math.sin(a) * 0.6, -l * Math.cos(a), l * Math.sin(a) * 0.8].map((c) => c / Math.hypot(Math.sin(a) * 0.6, Math.cos(a), Math.sin(a) * 0.8))));
});
const parent = axisAngle([0.3, 1, -0.2], 1.1); // a head turned and tilted

// A frame: the rest chain with every bone turned a different way (lengths kept).
function frame(seed) {
  const world = [[0.4, 1.6, 0.1]];
  let w = parent;
  for (let i = 0; i + 1 < rest.length; i++) {
    w = mul(w, axisAngle([Math.sin(seed + i), Math.cos(2 * seed + i), 0.5], 0.3 + 0.4 * Math.sin(seed * 3 + i)));
    world.push(add(world[i], rot(w, sub(rest[i + 1], rest[i]))));
  }
  return world;
}

test('the rotations put the rest chain on the frame\'s points within 0.5 mm (curved, uneven, turned parent)', () => {
  for (let seed = 0; seed < 20; seed++) {
    const pts = frame(seed);
    const rots = jointRotations(rest, pts, parent);
    assert.equal(rots.length, pts.length);
    for (const q of rots) assert.ok(Math.abs(Math.hypot(...q) - 1) < 1e-9);
    assert.deepEqual(rots.at(-1), [0, 0, 0, 1]);
    const back = pose(rest, pts[0], parent, rots);
    for (let i = 0; i < pts.length; i++) assert.ok(dist(back[i], pts[i]) <= 0.0005, `seed ${seed} point ${i}: ${dist(back[i], pts[i])}`);
    // flat input (as StrandDecoder gives) and Float32Array work the same
    const flat = jointRotations(Float32Array.from(rest.flat()), Float32Array.from(pts.flat()), parent);
    const back32 = pose(rest, pts[0], parent, flat);
    for (let i = 0; i < pts.length; i++) assert.ok(dist(back32[i], pts[i]) <= 0.0005);
  }
});

test('each rotation is the shortest arc: no twist about the rest bone', () => {
  const pts = frame(3);
  const rots = jointRotations(rest, pts, parent);
  for (let i = 0; i + 1 < rest.length; i++) {
    const d = sub(rest[i + 1], rest[i]);
    const axis = rots[i].slice(0, 3);
    assert.ok(Math.abs(axis[0] * d[0] + axis[1] * d[1] + axis[2] * d[2]) < 1e-9 * Math.hypot(...d), `joint ${i}`);
  }
});

test('worked by hand: a bone hanging down turned to +X is a quarter turn about +Z', () => {
  const r = jointRotations([[0, 0, 0], [0, -1, 0], [0, -2, 0]], [[0, 0, 0], [1, 0, 0], [1, -1, 0]]);
  const s = Math.SQRT1_2;
  [[0, 0, s, s], [0, 0, -s, s], [0, 0, 0, 1]].forEach((want, i) => want.forEach((c, k) => assert.ok(Math.abs(r[i][k] - c) < 1e-12, `${i}: ${r[i]}`)));
  // the same under a parent turned a quarter about +Y: the local answer is unchanged
  const py = axisAngle([0, 1, 0], Math.PI / 2);
  const world = pose([[0, 0, 0], [0, -1, 0], [0, -2, 0]], [0, 0, 0], py, r);
  assert.ok(dist(world[1], [0, 0, -1]) < 1e-12, String(world[1])); // +X under the parent is -Z
  const r2 = jointRotations([[0, 0, 0], [0, -1, 0], [0, -2, 0]], world, py);
  r2.forEach((q, i) => q.forEach((c, k) => assert.ok(Math.abs(c - r[i][k]) < 1e-12)));
});

test('a bone turned half round (180 degrees from its rest direction) still lands on its point', () => {
  // shortest arcs everywhere (axes across the rest bones), bone 3 a half turn
  const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
  const rots = rest.slice(1).map((p, i) => axisAngle(cross(sub(p, rest[i]), [0.2, 0.1, 1]), i === 3 ? Math.PI : 0.2 + 0.1 * i));
  const pts = pose(rest, [0.4, 1.6, 0.1], parent, rots);
  const got = jointRotations(rest, pts, parent);
  assert.ok(Math.abs(got[3][3]) < 1e-9, `joint 3 is a half turn: ${got[3]}`);
  const back = pose(rest, pts[0], parent, got);
  for (let i = 0; i < pts.length; i++) assert.ok(dist(back[i], pts[i]) <= 0.0005, `point ${i}: ${dist(back[i], pts[i])}`);
  // exactly opposite to the rest bone, at the root
  const rr = jointRotations([[0, 0, 0], [0, -0.1, 0]], [[0, 0, 0], [0, 0.1, 0]]);
  assert.ok(dist(rot(rr[0], [0, -0.1, 0]), [0, 0.1, 0]) < 1e-12);
  assert.ok(Math.abs(Math.hypot(...rr[0]) - 1) < 1e-12);
});

test('degenerate input is refused with an error, not a NaN', () => {
  const ok = [[0, 0, 0], [0, -1, 0]];
  assert.throws(() => jointRotations([], []), RangeError);
  assert.throws(() => jointRotations([[0, 0, 0]], [[0, 0, 0]]), RangeError); // one point: no bone
  assert.throws(() => jointRotations(ok, [[0, 0, 0], [0, -1, 0], [0, -2, 0]]), RangeError);
  assert.throws(() => jointRotations(ok, [[0, 0, 0], [0, 0, 0]]), /segment 0 is shorter/); // zero-length bone now
  assert.throws(() => jointRotations([[0, 0, 0], [0, 0, 0]], ok), /restPoints: segment 0/); // and at rest
  assert.throws(() => jointRotations(ok, [[0, 0, 0], [NaN, -1, 0]]), /finite/);
  assert.throws(() => jointRotations(ok, ok, [0, 0, 0, 0]), /parentRotation/);
  assert.throws(() => jointRotations(ok, ok, [0, 0, 1]), /parentRotation/);
  assert.throws(() => jointRotations(null, ok), TypeError);
  assert.throws(() => jointRotations([0, 0, 0, 1, 2], [0, 0, 0, 1, 2]), RangeError); // not triples
});
