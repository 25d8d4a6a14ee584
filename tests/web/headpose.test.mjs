// Webcam head tracking without a browser: the head-pose solver on landmark fixtures made
// by projecting the canonical face at known poses (tests/web/fixtures/make-face-fixtures.py:
// yaw up to ±60°, pitch ±35°, roll ±30°, two cameras, pixel noise), the One Euro filter's
// stated lag, and the tracker's "no face" path.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';

import { solveHeadPose, quatToMatrix } from '../../clients/web/js/headpose.mjs';
import { OneEuro } from '../../clients/web/js/oneeuro.mjs';
import { HeadTracker } from '../../clients/web/js/camera.mjs';
import { FACE_INDICES } from '../../clients/web/js/face-geometry.mjs';
import { DEG, quatFromYawPitchRoll } from '../../clients/web/js/math.mjs';

const fixtures = JSON.parse(fs.readFileSync(new URL('./fixtures/face-landmarks.json', import.meta.url)));

// Angle of the rotation between unit quaternions a and b, degrees.
const angleBetween = (a, b) => {
  const d = Math.abs(a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]);
  return (2 * Math.acos(Math.min(1, d))) / DEG;
};

test('head pose: every fixture within 1 degree, ±60° yaw included; position and depth', () => {
  assert.ok(fixtures.cases.length >= 25);
  let worst = 0;
  let exactWorst = 0;
  for (const c of fixtures.cases) {
    const r = solveHeadPose(c.landmarks, { width: c.width, height: c.height, fovY: c.fovY });
    const what = `yaw ${c.yaw} pitch ${c.pitch} roll ${c.roll} (${c.width}x${c.height}, noise ${c.noise_px} px)`;
    assert.ok(r.ok, `${what}: ${r.reason}`);
    const err = Math.max(Math.abs(r.yaw / DEG - c.yaw), Math.abs(r.pitch / DEG - c.pitch), Math.abs(r.roll / DEG - c.roll));
    const total = angleBetween(r.q, quatFromYawPitchRoll(c.yaw * DEG, c.pitch * DEG, c.roll * DEG));
    assert.ok(err <= 1 && total <= 1, `${what}: got yaw ${(r.yaw / DEG).toFixed(2)} pitch ${(r.pitch / DEG).toFixed(2)} roll ${(r.roll / DEG).toFixed(2)}`);
    // The head's centre: camera (x right, y down, z forward) is ours turned about x.
    const want = [c.head_cm[0] / 100, -c.head_cm[1] / 100, -c.head_cm[2] / 100];
    const dist = Math.hypot(...r.position.map((v, i) => v - want[i]));
    assert.ok(dist <= 0.03 * c.head_cm[2] / 100 + 0.002, `${what}: position ${r.position} want ${want}`);
    if (c.noise_px === 0) exactWorst = Math.max(exactWorst, err, dist);
    worst = Math.max(worst, err);
  }
  assert.ok(exactWorst < 1e-4, `noise-free fixtures (7 digits) are exact (${exactWorst})`);
  assert.ok(worst > 0.001, 'the noisy fixtures do have noise');
});

test('head pose: the yaw sign is ours, a turn to the left is positive and moves the nose to image right', () => {
  const c = fixtures.cases.find((k) => k.yaw === 60 && k.pitch === 0 && k.roll === 0);
  assert.ok(c.landmarks[1].x > c.landmarks[6].x, 'nose tip right of the bridge in the image');
  const r = solveHeadPose(c.landmarks, c);
  assert.ok(r.yaw > 59 * DEG);
  // the rotation matrix takes the face's forward (+Z) toward +X (our left)
  const R = quatToMatrix(r.q);
  assert.ok(R[0][2] > 0.85);
});

test('head pose: not a face, missing or non-finite landmarks give no pose', () => {
  const c = fixtures.cases[0];
  let seed = 5;
  const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  let rejected = 0;
  for (let k = 0; k < 200; k++) {
    const lm = {};
    for (const i of FACE_INDICES) lm[i] = { x: rnd(), y: rnd(), z: (rnd() - 0.5) * 0.1 };
    const r = solveHeadPose(lm, c);
    if (!r.ok) rejected++;
  }
  assert.ok(rejected >= 195, `${rejected} of 200 random landmark sets rejected`);
  const missing = { ...c.landmarks };
  delete missing[33];
  assert.equal(solveHeadPose(missing, c).ok, false);
  assert.equal(solveHeadPose({ ...c.landmarks, 1: { x: NaN, y: 0.5, z: 0 } }, c).ok, false);
  assert.equal(solveHeadPose(null, c).ok, false);
  assert.equal(solveHeadPose(c.landmarks, { width: 0, height: 480 }).ok, false);
});

test('One Euro: the lag on a steady turn is the stated 1 / (2 pi fc), and stillness is smoothed', () => {
  for (const speed of [0.05, 90 * DEG]) {
    const f = new OneEuro({ minCutoff: 1.5, beta: 1, dCutoff: 1 });
    let out = 0;
    const dt = 1 / 30;
    let t = 0;
    for (; t < 6; t += dt) out = f.filter(speed * t, t);
    t -= dt;
    const lag = (speed * t - out) / speed;
    const stated = f.lagFor(speed);
    assert.ok(Math.abs(lag - stated) / stated < 0.05, `speed ${speed}: lag ${lag * 1000} ms, stated ${stated * 1000} ms`);
  }
  assert.ok(Math.abs(new OneEuro({ minCutoff: 1.5, beta: 1 }).lagFor(0) - 0.106) < 0.001);
  assert.ok(Math.abs(new OneEuro({ minCutoff: 1.5, beta: 1 }).lagFor(90 * DEG) - 0.052) < 0.001);
  // jitter of 1 degree on a still head comes out several times smaller
  const f = new OneEuro({ minCutoff: 1.5, beta: 1 });
  let seed = 9;
  const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647 - 0.5) * 2 * DEG;
  let sIn = 0;
  let sOut = 0;
  for (let k = 0; k < 600; k++) {
    const v = rnd();
    const o = f.filter(v, k / 30);
    if (k > 60) { sIn += v * v; sOut += o * o; }
  }
  assert.ok(Math.sqrt(sOut / sIn) < 0.4, `jitter kept: ${Math.sqrt(sOut / sIn)}`);
});

test('tracker: no face, then a face, then lost again; offsets from where tracking began', () => {
  const tr = new HeadTracker();
  assert.equal(tr.update({ multiFaceLandmarks: [] }, 640, 480, 0), null);
  assert.equal(tr.status, 'no face');
  const c = fixtures.cases.find((k) => k.width === 640 && k.noise_px === 0);
  const lm = Object.assign([], c.landmarks);
  const p = tr.update({ multiFaceLandmarks: [lm] }, c.width, c.height, 0.1);
  assert.equal(tr.status, 'tracking');
  assert.ok(Math.abs(p.yaw / DEG - c.yaw) < 1e-3 && p.offset.every((v) => v === 0));
  // landmarks that do not fit a face are no pose, and after 0.5 s the status says so
  const junk = FACE_INDICES.reduce((o, i) => Object.assign(o, { [i]: { x: (i % 7) / 7, y: (i % 5) / 5, z: 0 } }), []);
  assert.equal(tr.update({ multiFaceLandmarks: [junk] }, 640, 480, 0.2), null);
  assert.equal(tr.status, 'tracking', 'one bad frame does not drop the face');
  assert.equal(tr.update({ multiFaceLandmarks: [junk] }, 640, 480, 0.7), null);
  assert.equal(tr.status, 'no face');
  assert.equal(tr.pose, null);
});
