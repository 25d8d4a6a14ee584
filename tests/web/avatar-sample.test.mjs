// The avatar page shows something at once, and its stream view (issue 38 item 8), end to
// end in Debian's headless Chromium:
// - a visitor opens avatar.html with no interaction at all: the page loads the shipped
//   sample (clients/web/sample/sample.vrm, make_sample_avatar.py: the skeleton and chains
//   of the generated whole-body avatar -- hair, a branch, skirt, sleeves, bust, a tail
//   under a non-humanoid node -- with a mesh to look at), creates its instance and moves
//   it; every joint of every chain (names from body_avatar.expect.json, what the generator
//   put in) is on the server's point within 1 mm on 60 frames;
// - the generated body-chain test avatar (tests/fixtures/vrm/body_avatar_1.vrm) dropped on
//   the page replaces the sample (whose instance is deleted), checked the same way; a
//   reload adopts it again, and a page closed on its sample deletes that instance;
// - the stream view (view=stream&width=W&height=H) has no control, a canvas of the URL's
//   size with an alpha channel, a transparent empty corner in a screenshot taken over
//   nothing, creates no instance, and draws the other visitor's avatar from the server's
//   frames (the same 1 mm check).
// The server's points come from this test's own subscriber (avatar-lib.mjs). Run by
// avatar-sample.test.sh.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, until } from './harness.mjs';
import { avatarRoom, checkRun as checkRunOf } from './avatar-lib.mjs';

const ROOM = 'sampletest';
const FIX = path.join(ROOT, 'tests/fixtures/vrm');
const expect = JSON.parse(fs.readFileSync(path.join(FIX, 'body_avatar.expect.json'), 'utf8'));
const JOINTS = expect.chains.reduce((n, c) => n + c.joints.length, 0);
const GROUPS = new Set(expect.chains.map((c) => c.group));
const STREAM_W = 480, STREAM_H = 270;

// A bound for a hang (the script's is 280 s).
describe('avatar page: the sample at once, a dropped body avatar, the stream view', { timeout: 270000 }, () => {
  let room, daemon, context, sub, foreign;
  const errors = [];
  const missing = []; // [page, url] of every 404 (the console's copy is not an error, below)

  before(async () => {
    room = await avatarRoom('avatar-sample', ROOM);
    ({ daemon, context, sub, foreign } = room);
  });

  after(async () => { await room?.close(); });

  async function open(name, query) {
    const page = await context.newPage();
    // A page may ask for an instance the room announced just before it was deleted (another
    // visitor's sample, gone with its page): Chromium logs the 404 as a console error. The
    // 404s are kept apart and checked to be for deleted instances only.
    page.on('response', (r) => { if (r.status() === 404) missing.push([name, r.url()]); });
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().includes('status of 404 (Not Found)')) errors.push(`${name}: ${m.text()}`);
    });
    page.on('pageerror', (e) => errors.push(`${name}: ${e.message}`));
    await page.goto(`${daemon.base}/avatar.html?room=${ROOM}&${query}`);
    await until(`${name}: the page module`, () => page.evaluate(() => !!window.ptAvatar));
    return page;
  }

  const checkRun = (page, key, what) => checkRunOf(page, sub, key, what);

  async function checkChains(page, key, what) {
    const names = await page.evaluate((k) => window.ptAvatar.names(k), key);
    assert.deepEqual(names, expect.chains.map((c) => c.joints), `${what}: each point drives the bone of its name, in every chain`);
    assert.deepEqual(await page.evaluate(() => window.ptAvatar.problems), []);
    const r = await checkRun(page, key, what);
    assert.equal(r.bones, JOINTS, `${what}: every joint of every chain compared`);
  }

  let a, sampleKey, keyA, keyC;
  test('the page opens on the sample and moves every chain: every joint within 1 mm of the server', async () => {
    assert.ok(['hair', 'skirt', 'sleeves'].every((g) => GROUPS.has(g)), `the sample has hair, a skirt and sleeves (${[...GROUPS]})`);
    a = await open('A', 'demo=1'); // no click, no file: the page does it all
    sampleKey = await until('the sample\'s instance', () => a.evaluate(() => window.ptAvatar.ownIsSample && window.ptAvatar.own));
    await until('the sample shown', () => a.evaluate((k) => window.ptAvatar.shown.includes(k), sampleKey));
    const inst = await daemon.api('GET', `/v1/instances/${sampleKey}`);
    assert.equal(inst.status, 200);
    assert.equal(inst.json.room, ROOM);
    assert.equal(inst.json.bones.length, expect.chains.length, 'the server imported every chain of the sample');
    await checkChains(a, sampleKey, 'the sample, own page');
  });

  test('a body-chain avatar dropped on the page replaces the sample', async () => {
    const bytes = [...fs.readFileSync(path.join(FIX, 'body_avatar_1.vrm'))];
    const dt = await a.evaluateHandle((b) => {
      const d = new DataTransfer();
      d.items.add(new File([new Uint8Array(b)], 'body_avatar_1.vrm', { type: 'model/gltf-binary' }));
      return d;
    }, bytes);
    await a.dispatchEvent('#stage', 'dragover', { dataTransfer: dt });
    await a.dispatchEvent('#stage', 'drop', { dataTransfer: dt });
    keyA = await until('the dropped file\'s instance', () => a.evaluate((k) => (window.ptAvatar.own !== k ? window.ptAvatar.own : null), sampleKey));
    assert.equal(await a.evaluate(() => window.ptAvatar.ownIsSample), false);
    await until('the dropped avatar shown', () => a.evaluate((k) => window.ptAvatar.shown.includes(k), keyA));
    await until('the sample\'s instance deleted', async () => (await daemon.api('GET', `/v1/instances/${sampleKey}`)).status === 404);
    assert.ok(!(await a.evaluate(() => window.ptAvatar.shown)).includes(sampleKey), 'the sample is no longer drawn');
    await checkChains(a, keyA, 'the dropped body avatar, own page');
  });

  test('a reload adopts the tab\'s avatar again; a closed page takes its sample with it', async () => {
    const seqBefore = sub.lastSeq.get(keyA);
    assert.ok(seqBefore > 0, 'A\'s poses reach the server');
    await a.reload();
    await until('A: the page module again', () => a.evaluate(() => !!window.ptAvatar));
    assert.equal(await until('A\'s own avatar after the reload', () => a.evaluate(() => window.ptAvatar.own)), keyA);
    await until('A shows it again (from the server\'s copy)', () => a.evaluate((k) => window.ptAvatar.shown.includes(k), keyA));
    // the server drops a pose older than one it applied: the reloaded page goes on from there
    const first = await until('A publishing again', () => a.evaluate((k) => window.ptAvatar.firstSeq(k), keyA));
    assert.ok(first > seqBefore, `the reloaded page's first pose (seq ${first}) is newer than those applied before (${seqBefore})`);
    await until('A\'s poses applied again after the reload', () => sub.lastSeq.get(keyA) >= first);
    const c = await open('C', 'sample=1');
    keyC = await until('C\'s sample', () => c.evaluate(() => window.ptAvatar.ownIsSample && window.ptAvatar.own));
    assert.equal((await daemon.api('GET', `/v1/instances/${keyC}`)).status, 200);
    // The page deletes its sample on pagehide (a keepalive fetch). Whether a request made
    // while a page closes still leaves the browser is best effort (a loaded machine, a
    // crash): the page's part is checked with the page alive, then it closes.
    await c.evaluate(() => dispatchEvent(new PageTransitionEvent('pagehide', { persisted: false })));
    await until('C\'s sample deleted when its page goes away', async () => (await daemon.api('GET', `/v1/instances/${keyC}`)).status === 404);
    await c.close();
    const list = await daemon.api('GET', `/v1/instances?room=${ROOM}`);
    assert.deepEqual(list.json.instances.map((i) => String(i.id)), [keyA], 'the room holds A\'s avatar only');
  });

  test('the stream view: no controls, transparent, the URL\'s size, the room\'s avatars from the server', async () => {
    const s = await open('S', `view=stream&width=${STREAM_W}&height=${STREAM_H}`);
    const dom = await s.evaluate(() => ({
      controls: document.querySelectorAll('input, button, select, textarea, a[href], video, [contenteditable], [tabindex]').length,
      text: document.body.innerText.trim(),
      canvas: (() => { const r = document.querySelector('#stage canvas').getBoundingClientRect(); return [r.left, r.top, r.width, r.height]; })(),
      body: getComputedStyle(document.body).backgroundColor,
      html: getComputedStyle(document.documentElement).backgroundColor,
    }));
    assert.equal(dom.controls, 0, 'no control element');
    assert.equal(dom.text, '', 'no text');
    assert.deepEqual(dom.canvas, [0, 0, STREAM_W, STREAM_H], 'the canvas at the URL\'s size, top left');
    assert.deepEqual(await s.evaluate(() => window.ptAvatar.canvasSize()), [STREAM_W, STREAM_H], 'as many pixels as the URL says');
    assert.equal((await s.evaluate(() => window.ptAvatar.contextAttributes())).alpha, true, 'a canvas with alpha');
    assert.equal(dom.body, 'rgba(0, 0, 0, 0)');
    assert.equal(dom.html, 'rgba(0, 0, 0, 0)');
    assert.deepEqual(await s.evaluate(() => window.ptAvatar.errors), []);
    await until('the stream shows A\'s avatar', () => s.evaluate((k) => window.ptAvatar.shown.includes(k), keyA));
    assert.equal(await s.evaluate(() => window.ptAvatar.own), null, 'the stream view made no avatar of its own');
    const list = await daemon.api('GET', `/v1/instances?room=${ROOM}`);
    assert.deepEqual(list.json.instances.map((i) => String(i.id)), [keyA], 'the room holds A\'s avatar only');
    await checkChains(s, keyA, 'the dropped body avatar, stream view');
    // Composited over nothing (as OBS does): the corner is clear, the avatar is opaque.
    const png = await s.screenshot({ omitBackground: true, clip: { x: 0, y: 0, width: STREAM_W, height: STREAM_H } });
    const alpha = await s.evaluate(async (b64) => {
      const img = new Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const g = c.getContext('2d');
      g.drawImage(img, 0, 0);
      const d = g.getImageData(0, 0, c.width, c.height).data;
      let corner = 0, opaque = 0;
      for (let y = 0; y < 8; y++) for (let x = 0; x < 8; x++) corner = Math.max(corner, d[(y * c.width + x) * 4 + 3]);
      for (let i = 3; i < d.length; i += 4) if (d[i] === 255) opaque++;
      return { w: c.width, h: c.height, corner, opaque };
    }, png.toString('base64'));
    console.log(`stream screenshot: ${alpha.w}x${alpha.h}, corner alpha ${alpha.corner}, ${alpha.opaque} opaque pixels`);
    assert.equal(alpha.corner, 0, 'the empty corner is transparent');
    assert.ok(alpha.opaque > 0, 'the avatar is drawn');
  });

  test('nothing was fetched from anywhere but the daemon, and no page errors', () => {
    assert.deepEqual(foreign, []);
    assert.deepEqual(errors, []);
    const gone = new Set([sampleKey, keyC].filter(Boolean));
    const other = missing.filter(([, url]) => !gone.has(new URL(url).pathname.match(/^\/v1\/instances\/(\d+)(\/avatar)?$/)?.[1]));
    assert.deepEqual(other, [], 'a 404 only for an instance the test deleted');
  });
});
