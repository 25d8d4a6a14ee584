// The avatar page (clients/web/avatar.html) end to end, in Debian's headless Chromium:
// a visitor opens the generated test avatar (tests/fixtures/vrm/, written by
// make_test_avatar.py, independent of the importer), the page imports it through the
// daemon, creates the instance, stores the file and publishes head poses (?demo=1 sweeps
// the head); then every hair bone's world position in three.js must be the server's point
// within 1 mm on each of 60 frames (ticks both the page and the subscriber got: a viewer
// that falls behind is sent the newest tick, so which ticks, and how soon 60 of them come,
// is the machine's speed, issue 37). The server's points come from this test's own
// WebSocket subscriber (the proto JS decoder, no page code). A second visitor of the room
// sees the first one's avatar with the same hair, and adds a VRM 0.x avatar.
// Run by avatar.test.sh (which provides Chromium, playwright-core and node's WebSocket).

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, sleep, until } from './harness.mjs';
import { avatarRoom, checkRun as checkRunOf } from './avatar-lib.mjs';

const ROOM = 'avtest';
const FIX = path.join(ROOT, 'tests/fixtures/vrm');
const expect = JSON.parse(fs.readFileSync(path.join(FIX, 'test_avatar.expect.json'), 'utf8'));

// A bound for a hang (the script's is 280 s): about 20 s here alone.
describe('avatar page, end to end', { timeout: 270000 }, () => {
  let room, daemon, context, sub, foreign;
  const errors = [];

  before(async () => {
    room = await avatarRoom('avatar', ROOM);
    ({ daemon, context, sub, foreign } = room);
  });

  after(async () => { await room?.close(); });

  async function visitor(name) {
    const page = await context.newPage();
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`${name}: ${m.text()}`); });
    page.on('pageerror', (e) => errors.push(`${name}: ${e.message}`));
    await page.goto(`${daemon.base}/avatar.html?room=${ROOM}&demo=1&sample=0`); // no sample: the files below
    await until(`${name}: the page module`, () => page.evaluate(() => !!window.ptAvatar));
    return page;
  }

  async function openAvatar(page, file) {
    await page.setInputFiles('#vrm-file', path.join(FIX, file));
    const key = await until(`the instance of ${file}`, () => page.evaluate(() => window.ptAvatar.own));
    await until(`${file} shown`, () => page.evaluate((k) => window.ptAvatar.shown.includes(k), key));
    return key;
  }

  const checkRun = (page, key, what) => checkRunOf(page, sub, key, what);

  let a, keyA;
  test('VRM 1.0: every hair bone on the server\'s point within 1 mm, on 60 frames', async () => {
    a = await visitor('A');
    keyA = await openAvatar(a, 'test_avatar_1.vrm');
    const names = await a.evaluate((k) => window.ptAvatar.names(k), keyA);
    assert.deepEqual(names, expect.chains.map((c) => c.joints), 'each point drives the bone of its name');
    assert.deepEqual(await a.evaluate(() => window.ptAvatar.problems), []);
    const r = await checkRun(a, keyA, 'VRM 1.0, own page');
    assert.equal(r.bones, expect.chains.reduce((n, c) => n + c.joints.length, 0));
  });

  // The head_pose carries the body bones the page moves (protocol 1.2): the hips, which
  // follow the head without turning, and the chest (this avatar has no upper chest),
  // which takes part of the head's turn. Checked against make_test_avatar.py's skeleton
  // (test_avatar.expect.json, head frame = world at rest for VRM 1.0): Hips 0.26 m below
  // Chest (Spine between, not turned), Head 0.24 m above Chest along the chest's turned
  // +Y (Neck not turned), rest rotations identity.
  test('VRM 1.0: the head pose carries the hips and the chest, where the skeleton has them', async () => {
    const body = expect.bones_head_local;
    const up = (name, from) => body[name][1] - body[from][1];
    const rot = (q, v) => { // q v q*
      const [x, y, z, w] = q;
      const tx = 2 * (y * v[2] - z * v[1]), ty = 2 * (z * v[0] - x * v[2]), tz = 2 * (x * v[1] - y * v[0]);
      return [v[0] + w * tx + (y * tz - z * ty), v[1] + w * ty + (z * tx - x * tz), v[2] + w * tz + (x * ty - y * tx)];
    };
    let turned = 0;
    for (let k = 0; k < 20; k++) {
      const pose = await a.evaluate(() => window.ptAvatar.lastPose);
      assert.deepEqual(pose.bones.map((b) => b.bone), [0, 2], 'hips (0) and chest (2), PROTOCOL.md 5');
      const [hips, chest] = pose.bones;
      hips.q.forEach((c, i) => assert.ok(Math.abs(c - [0, 0, 0, 1][i]) < 1e-6, `hips not turned: ${hips.q}`));
      const hc = chest.p.map((c, i) => c - hips.p[i]);
      assert.ok(Math.hypot(hc[0], hc[1] - up('Chest', 'Hips'), hc[2]) < 1e-5, `chest ${up('Chest', 'Hips')} m above the hips: ${hc}`);
      const want = rot(chest.q, [0, up('Head', 'Chest'), 0]);
      const ch = pose.p.map((c, i) => c - chest.p[i]);
      assert.ok(Math.hypot(...ch.map((c, i) => c - want[i])) < 1e-5, `head along the chest's turned +Y: ${ch} vs ${want}`);
      turned = Math.max(turned, 2 * Math.acos(Math.min(1, Math.abs(chest.q[3]))));
      await sleep(100);
    }
    assert.ok(turned > 2 * Math.PI / 180, `the chest turned with the head (up to ${turned} rad): the check would prove nothing otherwise`);
  });

  test('a second visitor sees the first avatar with the same hair, and adds a VRM 0.x one', async () => {
    const b = await visitor('B');
    await until('B shows A\'s avatar', () => b.evaluate((k) => window.ptAvatar.shown.includes(k), keyA));
    await checkRun(b, keyA, 'VRM 1.0, seen by another visitor');
    const keyB = await openAvatar(b, 'test_avatar_0.vrm');
    assert.notEqual(keyB, keyA);
    const r = await checkRun(b, keyB, 'VRM 0.x, own page');
    assert.equal(r.bones, expect.chains.reduce((n, c) => n + c.joints.length, 0), 'the virtual tails have no bone');
    await until('A shows B\'s avatar', () => a.evaluate((k) => window.ptAvatar.shown.includes(k), keyB));
    await checkRun(a, keyB, 'VRM 0.x, seen by another visitor');
  });

  test('nothing was fetched from anywhere but the daemon, and no page errors', () => {
    assert.deepEqual(foreign, []);
    assert.deepEqual(errors, []);
  });
});
