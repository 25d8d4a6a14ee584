// The browser client's modules that need no browser, under node's test runner: head
// orientation, cameras, the strand curve, error-to-field mapping, the WebSocket URL, and
// the page's decoding path (proto's encoder -> Link -> points). No npm dependencies.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { StrandEncoder, encodeMessage } from '../../proto/js/ponytail-proto.mjs';
import { quatFromYawPitchRoll, rotate, DEG } from '../../clients/web/js/math.mjs';
import { View, layout } from '../../clients/web/js/view.mjs';
import { guideCurve, strandSamples } from '../../clients/web/js/render.mjs';
import { HAIRS_PER_STRAND, HAIR_VERTICES, hairInstances, lockHairs, lockProfile } from '../../clients/web/js/locks.mjs';
import { FIELDS, fieldForError } from '../../clients/web/js/panel.mjs';
import { Link, wsUrlFor } from '../../clients/web/js/net.mjs';
import { ownDefinition } from '../../clients/web/js/definition.mjs';
import { DELAY_TICKS, FrameClock, pushFrame, sampleFrames } from '../../clients/web/js/interp.mjs';
import { RIGHT_HAND, WindControl, nearestPoint, viewPoint } from '../../clients/web/js/touch.mjs';

globalThis.CustomEvent ??= class extends Event {
  constructor(type, init) {
    super(type);
    this.detail = init?.detail;
  }
};

const close = (a, b, eps = 1e-9) => a.every((v, i) => Math.abs(v - b[i]) <= eps);

test('head orientation: yaw turns the face (+Z) about +Y, pitch nods it down', () => {
  assert.ok(close(rotate(quatFromYawPitchRoll(90 * DEG, 0, 0), [0, 0, 1]), [1, 0, 0]));
  assert.ok(close(rotate(quatFromYawPitchRoll(0, 90 * DEG, 0), [0, 0, 1]), [0, -1, 0]));
  assert.ok(close(rotate(quatFromYawPitchRoll(0, 0, 90 * DEG), [1, 0, 0]), [0, 1, 0]));
  // rotate() agrees with PROTOCOL.md 7.3's rotation matrix.
  const q = quatFromYawPitchRoll(0.3, -0.7, 1.1);
  const [x, y, z, w] = q;
  const R = [
    1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
    2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
    2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y),
  ];
  const v = [0.2, -0.5, 0.9];
  const m = [0, 1, 2].map((r) => R[3 * r] * v[0] + R[3 * r + 1] * v[1] + R[3 * r + 2] * v[2]);
  assert.ok(close(rotate(q, v), m, 1e-12));
});

test('cameras: front looks along -Z, side along -X, orbit at yaw 0 matches front', () => {
  const rect = { x: 0, y: 0, w: 400, h: 300 };
  const front = new View('front', rect);
  const side = new View('side', rect);
  const orbit = new View('orbit', rect);
  Object.assign(orbit, { yaw: 0, pitch: 0 });
  orbit.update();
  const c = front.center;
  const p = front.project(c);
  assert.ok(Math.abs(p[0] - 200) < 1e-9 && Math.abs(p[1] - 150) < 1e-9);
  // +X is to the right in front, +Y up everywhere, +Z (the face) to the left in side.
  const dx = [c[0] + 0.1, c[1], c[2]];
  const dy = [c[0], c[1] + 0.1, c[2]];
  const dz = [c[0], c[1], c[2] + 0.1];
  assert.ok(front.project(dx)[0] > p[0] && front.project(dy)[1] < p[1]);
  assert.ok(front.project(dz)[2] > p[2], 'nearer the viewer = larger depth');
  assert.ok(side.project(dz)[0] < side.project(c)[0] && side.project(dx)[2] > side.project(c)[2]);
  assert.ok(orbit.project(dx)[0] > orbit.project(c)[0] && orbit.project(dz)[2] > orbit.project(c)[2]);
  // A drag maps back to the displacement that projects onto it.
  for (const v of [front, side, orbit]) {
    const d = v.unproject(30, -20, c);
    const q = v.project([c[0] + d[0], c[1] + d[1], c[2] + d[2]]);
    const o = v.project(c);
    assert.ok(Math.abs(q[0] - o[0] - 30) < 0.5 && Math.abs(q[1] - o[1] + 20) < 0.5, v.kind);
  }
  const l = layout(['front', 'side', 'orbit'], 1200, 500);
  assert.equal(l.length, 3);
  assert.ok(l.every((r) => r.rect.w > 300 && r.rect.h === 500));
});

test('a strand is drawn as a smooth curve from its root to its tip', () => {
  const view = new View('front', { x: 0, y: 0, w: 400, h: 400 });
  const pts = [];
  for (let i = 0; i < 12; i++) pts.push([0.02 * Math.sin(i / 3), 1.5 - 0.03 * i, -0.1]);
  const S = strandSamples(view, pts);
  const root = view.project(pts[0]);
  const tip = view.project(pts[11]);
  assert.ok(Math.abs(S[0].x - root[0]) < 1e-9 && Math.abs(S[0].y - root[1]) < 1e-9);
  assert.ok(Math.abs(S.at(-1).x - tip[0]) < 1e-9 && Math.abs(S.at(-1).y - tip[1]) < 1e-9);
  assert.equal(S[0].u, 0);
  assert.equal(S.at(-1).u, 1);
  for (let i = 1; i < S.length; i++) assert.ok(S[i].u >= S[i - 1].u);
  for (const s of S) assert.ok(Math.abs(Math.hypot(s.nx, s.ny) - 1) < 1e-9);
  assert.ok(S.length > 40, 'several samples per segment');
  assert.deepEqual(strandSamples(view, [pts[0]]), []);
});

test("the server's error field names the control it belongs to", () => {
  assert.equal(fieldForError('verlet.damping').name, 'verlet.damping');
  assert.equal(fieldForError('gravity').name, 'gravity');
  assert.equal(fieldForError('wind.velocity').name, 'wind.velocity');
  assert.equal(fieldForError('strands[1].colliders').name, 'colliders');
  assert.equal(fieldForError('driver.motion').name, 'driver');
  assert.equal(fieldForError('springbone.drag_force').name, 'springbone.drag_force');
  assert.equal(fieldForError('teleport.mode'), null);
  assert.equal(fieldForError(null), null);
  assert.equal(new Set(FIELDS.map((f) => f.name)).size, FIELDS.length);
});

test('the WebSocket URL: ?ws=, then /v1/info, then the HTTP port + 1', () => {
  const loc = new URL('http://127.0.0.1:8080/?room=demo');
  assert.equal(wsUrlFor(loc, { ws_port: 8081 }, null), 'ws://127.0.0.1:8081/');
  assert.equal(wsUrlFor(loc, null, null), 'ws://127.0.0.1:8081/');
  assert.equal(wsUrlFor(loc, { ws_port: 8081 }, '9000'), 'ws://127.0.0.1:9000/');
  assert.equal(wsUrlFor(loc, null, 'ws://example.test:1/x'), 'ws://example.test:1/x');
  assert.equal(wsUrlFor(new URL('https://h.test/'), { ws_url: '/ws' }, null), 'wss://h.test/ws');
  assert.equal(wsUrlFor(new URL('https://h.test/'), null, null), 'wss://h.test:444/');
});

test('frames encoded by proto decode through the page link to the same points', () => {
  const def = ownDefinition('r', 'n');
  const shape = def.strands.map((s) => ({ ...s }));
  const link = new Link({ location: new URL('http://127.0.0.1:1/') });
  const got = [];
  link.addEventListener('frames', (e) => got.push(e.detail));
  const feed = (m) => link.onMessage(encodeMessage(m));
  feed({
    type: 'welcome', major: 1, minor: 0, tick_hz: 60, substeps: 4, keyframe_interval: 60,
    max_message: 4096, max_subscriptions: 1024, server_time_us: 0n, tick: 10n, server_version: 't',
  });
  feed({ type: 'instance_event', kind: 'added', instance_id: 7n, tick: 11n, name: 'n', room: 'r', shape });
  const enc = new StrandEncoder(shape);
  const truth = [];
  for (let t = 11; t < 16; t++) {
    const xyz = [];
    for (const s of shape) {
      for (let i = 0; i < s.points; i++) {
        const a = 0.1 * t + 0.05 * i;
        const r = [s.anchor[0], s.anchor[1], s.anchor[2]];
        xyz.push(r[0] + 0.02 * i * Math.sin(a), r[1] - 0.027 * i * 0.9, r[2] - 0.01 * i * Math.cos(a));
      }
    }
    // keep segment lengths exact so the strands are coded, not sent raw
    let k = 0;
    for (const s of shape) {
      for (let i = 1; i < s.points; i++) {
        const p = 3 * (k + i);
        const q = 3 * (k + i - 1);
        const d = [xyz[p] - xyz[q], xyz[p + 1] - xyz[q + 1], xyz[p + 2] - xyz[q + 2]];
        const n = Math.hypot(...d);
        for (let j = 0; j < 3; j++) xyz[p + j] = xyz[q + j] + (d[j] / n) * s.segment_length;
      }
      k += s.points;
    }
    enc.tick([0, 0, 0], [0, 0, 0, 1], xyz);
    truth.push(xyz);
    feed({ type: 'frame_batch', tick: BigInt(t), server_time_us: 0n, records: [enc.record(t === 11, 7n, t)] });
  }
  assert.equal(got.length, 5);
  assert.equal(link.decodeErrors, 0);
  got.forEach((f, i) => {
    const r = f.records[0];
    assert.equal(r.key, '7');
    assert.equal(r.lastSeq, 11 + i);
    let worst = 0;
    for (let j = 0; j < r.pts.length; j++) worst = Math.max(worst, Math.abs(r.pts[j] - truth[i][j]));
    assert.ok(worst < 0.0015, `tick ${11 + i}: off by ${worst} m`);
  });
});

// A point moving at 1 m/s, frames at 60 Hz (server clock 1000 s ahead), arriving 12 ms
// later plus up to 6 ms of jitter; the page draws at 144 Hz.
function play144(interpolate) {
  let seed = 11;
  const rnd = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
  const frames = [];
  for (let k = 0; k < 120; k++) frames.push({ serverT: 1000 + k / 60, arrive: k / 60 + 0.012 + 0.006 * rnd() });
  const clock = new FrameClock();
  const hist = [];
  let next = 0;
  const xs = [];
  for (let j = Math.ceil(0.5 * 144); j < 1.9 * 144; j++) { // after half a second of warm-up
    const L = j / 144;
    for (; next < frames.length && frames[next].arrive <= L; next++) {
      const f = frames[next];
      clock.observe(f.serverT, f.arrive);
      pushFrame(hist, { t: f.serverT, pts: new Float32Array([f.serverT - 1000, 0, 0]), headP: [0, 1.5, 0], headQ: [0, 0, 0, 1] });
    }
    const s = interpolate ? sampleFrames(hist, clock.renderTime(L, 1 / 60)) : { pts: hist[hist.length - 1].pts };
    xs.push({ L, x: s.pts[0] });
  }
  return xs;
}

test('interpolation: 60 Hz frames drawn at 144 Hz move evenly, a fixed delay behind', () => {
  const even = play144(true);
  const step = 1 / 144;
  for (let i = 1; i < even.length; i++) {
    const d = even[i].x - even[i - 1].x;
    assert.ok(d > 0.75 * step && d < 1.25 * step, `refresh ${i}: moved ${(d * 1000).toFixed(2)} mm, want ${(step * 1000).toFixed(2)}`);
  }
  // The delay: the least network delay seen (12 ms) plus DELAY_TICKS ticks, within 2 ms.
  for (const { L, x } of even) assert.ok(Math.abs(L - x - (0.012 + DELAY_TICKS / 60)) < 0.002, `delay at ${L}: ${L - x}`);
  // Drawing the newest frame instead: the same motion judders (refreshes that do not move,
  // then a jump of a whole tick).
  const naive = play144(false);
  const steps = naive.slice(1).map((p, i) => p.x - naive[i].x);
  assert.ok(steps.filter((d) => d === 0).length > steps.length / 2, "over half the refreshes stall (1 - 60/144)");
  assert.ok(Math.max(...steps) > 0.9 / 60);
});

test('interpolation: rotation the shorter way; teleports, new shapes and restarts are cuts', () => {
  const h = 0.7071067811865476;
  const hist = [];
  pushFrame(hist, { t: 1, pts: new Float32Array([0, 0, 0]), headP: [0, 1.5, 0], headQ: [0, 0, 0, 1] });
  pushFrame(hist, { t: 2, pts: new Float32Array([1, 0, 0]), headP: [0.2, 1.5, 0], headQ: [0, -h, 0, -h] }); // 90° about y, as -q
  let s = sampleFrames(hist, 1.5);
  assert.ok(close(s.headP, [0.1, 1.5, 0]) && Math.abs(s.pts[0] - 0.5) < 1e-6 && s.alpha === 0.5);
  const half = rotate(s.headQ, [0, 0, 1]);
  assert.ok(close(half, [Math.SQRT1_2, 0, Math.SQRT1_2], 1e-9), `half way: ${half}`);
  assert.equal(sampleFrames(hist, 2.5).alpha, 1, 'late: the newest, not a guess ahead');
  assert.equal(sampleFrames(hist, 0).alpha, 0);
  pushFrame(hist, { t: 3, pts: new Float32Array([0, 0, 0]), headP: [2, 1.5, 0], headQ: [0, 0, 0, 1] });
  assert.equal(sampleFrames(hist, 2.5).alpha, 1, 'a 1.8 m jump is drawn as a cut');
  assert.ok(Math.abs(sampleFrames(hist, 1.25).pts[0] - 0.25) < 1e-6, 'an older pair when t is further back');
  pushFrame(hist, { t: 4, pts: new Float32Array([0, 0, 0, 1, 1, 1]), headP: [2, 1.5, 0], headQ: [0, 0, 0, 1] });
  assert.equal(sampleFrames(hist, 3.5).pts.length, 6, 'a new shape: the newest');
  pushFrame(hist, { t: 5, pts: new Float32Array([0, 0, 0, 1, 1, 1]), headP: [2, 1.5, 0], headQ: [0, 0, 0, 1] });
  assert.equal(hist.length, 4, 'four frames kept');
  pushFrame(hist, { t: 0.5, pts: new Float32Array([0, 0, 0]), headP: [0, 0, 0], headQ: [0, 0, 0, 1] });
  assert.equal(hist.length, 1, 'time went back: start over');
  // The clock follows a restarted daemon's new clock at once, and ignores one early frame.
  const c = new FrameClock();
  c.observe(100, 5);
  c.observe(100.5, 5.51);
  assert.ok(Math.abs(c.offset + 95) < 2e-3, 'the later frame did not move the offset up, past the creep');
  c.observe(2, 6);
  assert.ok(Math.abs(c.offset - 4) < 1e-9);
  assert.equal(new FrameClock().renderTime(1, 1 / 60), null);
});

test('follower hairs: a lock around the guide, uneven ends, split ends, the same every frame', () => {
  // A guide hanging 30 cm down and curving back.
  const guide = [];
  for (let i = 0; i < 12; i++) guide.push([0, 1.5 - 0.027 * i, -0.1 - 0.002 * i * i]);
  const curve = guideCurve(guide);
  const attrs = hairInstances(42);
  assert.deepEqual(attrs, hairInstances(42), 'deterministic per strand');
  const R = 0.016;
  const hairs = lockHairs(curve, [1, 0, 0], attrs, R);
  const main = hairs.filter((h) => !h.split);
  const split = hairs.filter((h) => h.split);
  assert.equal(main.length, HAIRS_PER_STRAND);
  assert.equal(split.length, Math.ceil(HAIRS_PER_STRAND / 3), 'every third hair forks');
  assert.ok(main.every((h) => h.pts.length === 3 * HAIR_VERTICES));
  const P = (h, k) => [h.pts[3 * k], h.pts[3 * k + 1], h.pts[3 * k + 2]];
  const count = (h) => h.pts.length / 3;
  // Every vertex lies within the lock's radius (plus the fork's parting) of the guide.
  const near = (p) => Math.min(...curve.map((c) => Math.hypot(p[0] - c[0], p[1] - c[1], p[2] - c[2])));
  for (const h of hairs) for (let k = 0; k < count(h); k++) assert.ok(near(P(h, k)) <= R + 0.005, `a hair strays ${near(P(h, k))} m`);
  // Roots gathered at the tie, ends spread over the last 28 % of the guide.
  for (const h of main) assert.ok(near(P(h, 0)) <= R * lockProfile(0) + 1e-6);
  const tipY = main.map((h) => P(h, HAIR_VERTICES - 1)[1]);
  assert.ok(Math.max(...tipY) - Math.min(...tipY) > 0.05, 'uneven lengths');
  // A fork's two branches start together and part by up to 2 x 4 mm.
  for (const b of split) {
    const k0 = HAIR_VERTICES - count(b); // the hair's vertex the branch starts from
    const m = main.find((h) => [0, 1, 2].every((d) => h.pts[3 * k0 + d] === b.pts[d]));
    assert.ok(m, 'a branch starts on its hair');
    const end = Math.hypot(...[0, 1, 2].map((d) => P(m, HAIR_VERTICES - 1)[d] - P(b, count(b) - 1)[d]));
    assert.ok(end > 0.004 && end <= 0.0081, `branches part by ${end}`);
  }
  // Turning the head turns the lock with it (the frame starts from the head's x axis).
  const turned = lockHairs(curve, [0, 0, 1], attrs, R).filter((h) => !h.split);
  assert.ok(Math.hypot(...[0, 1, 2].map((d) => P(turned[1], 5)[d] - P(main[1], 5)[d])) > 0.002);
});

test('the pointer hand: a pixel and a depth map back to the world point the view shows there', () => {
  for (const kind of ['front', 'side']) {
    const v = new View(kind, { x: 10, y: 20, w: 400, h: 300 });
    v.lo = [-0.2, 1.3, -0.1];
    v.hi = [0.3, 1.6, 0.2];
    v.update();
    for (const p of [[0, 1.5, 0], [0.12, 1.21, -0.07], [-0.3, 1.8, 0.25]]) {
      const [sx, sy, depth] = v.project(p);
      assert.ok(close(viewPoint(v, sx, sy, depth), p, 1e-9), `${kind} ${p}`);
    }
  }
  assert.equal(RIGHT_HAND, 23); // PROTOCOL.md's bone ids: right_hand is the 24th
});

test('the pointer hand grabs the nearest hair point of another instance, never a root', () => {
  const v = new View('front', { x: 0, y: 0, w: 400, h: 400 });
  const inst = (key, pts) => ({ key, id: BigInt(key), shape: [{ points: pts.length / 3 }], pts });
  const own = inst('1', [0, 1.5, 0, 0.001, 1.45, 0]);
  const other = inst('2', [0.05, 1.5, 0, 0.05, 1.45, 0.02, 0.05, 1.40, 0.04]);
  const at = (p) => v.project(p);
  let [x, y] = at([0.05, 1.5, 0]); // on the other's root: its point 1 is taken
  assert.deepEqual(
    (({ key, strand, point }) => ({ key, strand, point }))(nearestPoint(v, [own, other], '1', x, y)),
    { key: '2', strand: 0, point: 1 });
  [x, y] = at([0.001, 1.45, 0]); // on the own point: the other's nearest is taken instead
  const n = nearestPoint(v, [own, other], '1', x, y);
  assert.equal(n.key, '2');
  assert.equal(n.depth, at([0.05, 1.45, 0.02])[2]);
  assert.equal(nearestPoint(v, [own], '1', x, y), null);
});

test('the wind control: strength 0 is calm, else one global zone toward the angle about +Y', () => {
  const el = (strength, direction, turbulence) => ({ strength: { value: strength }, direction: { value: direction }, turbulence: { value: turbulence } });
  assert.deepEqual(new WindControl({}, el('0', '90', '0')).zones(), []);
  const [z] = new WindControl({}, el('3', '90', '0.5')).zones();
  assert.equal(z.type, 'global');
  assert.equal(z.strength, 3);
  assert.equal(z.turbulence, 0.5);
  assert.ok(close(z.direction, [0, 0, -1], 1e-6)); // 90 degrees about +Y turns +X to -Z
  assert.ok(close(new WindControl({}, el('1', '0', '0')).zones()[0].direction, [1, 0, 0], 1e-6));
});
