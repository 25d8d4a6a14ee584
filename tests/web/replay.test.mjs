// Instant replay in the browser page (issue 39 item 5): the page takes the room's
// recording (its "Replay 60 s" button) or a .ptrec file dropped on it, has the daemon
// re-simulate it (POST /v1/replay, every state hash checked) and plays, pauses and scrubs
// it, drawing every instance as the recording had it. The frames the page shows are
// checked against the daemon's replay of the same recording fetched here, point for
// point; a bad file is refused with the reader's reason on the page.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Daemon, launchChromium, until } from './harness.mjs';

const ROOM = 'replay-room';

describe('instant replay', () => {
  let tmp, daemon, context, page, bot, other;
  const pageErrors = [];

  before(async () => {
    tmp = process.env.PT_WEB_TMP || fs.mkdtempSync(path.join(os.tmpdir(), 'ponytail-replay-'));
    daemon = new Daemon(path.join(tmp, 'data'), path.join(tmp, 'ponytaild.log'));
    await daemon.start();
    const make = async (name, motion) => {
      const r = await daemon.api('POST', '/v1/instances', {
        name, room: ROOM,
        strands: [{ anchor: [0, 0.06, -0.09], direction: [0, -1, -0.3], points: 10, segment_length: 0.03 }],
        driver: { motion, amplitude: 40, period: 0.8 },
      });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      return r.json;
    };
    bot = await make('bot', 'shake');
    other = await make('other', 'nod');
    context = await launchChromium(path.join(tmp, 'profile'));
    page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (e) => pageErrors.push(e.message));
  });

  after(async () => {
    await context?.close().catch(() => {});
    await daemon?.stop();
    if (tmp && !process.env.PT_WEB_TMP) fs.rmSync(tmp, { recursive: true, force: true });
  });

  // The daemon's own replay of bytes, at 30 Hz: tick -> {key -> flat points}.
  async function daemonFrames(bytes) {
    const r = await fetch(`${daemon.base}/v1/replay?rate=30`, {
      method: 'POST', headers: { 'Content-Type': 'application/octet-stream' }, body: bytes,
    });
    assert.equal(r.status, 200);
    const j = await r.json();
    const m = new Map();
    for (const f of j.frames) m.set(f.tick, new Map(f.instances.map((i) => [String(i.id), i.strands.flat()])));
    return { j, m };
  }

  const shown = () => page.evaluate(() => window.ponytail.replay);

  test('the room\'s last 60 s: played, paused, scrubbed, every instance as recorded', async () => {
    await page.goto(`${daemon.base}/?room=${ROOM}&create=0`);
    await until('the live frames', () => page.evaluate(() => window.ponytail.instances().filter((i) => i.hasFrame).length === 2));
    await page.waitForTimeout(1500); // a recording of more than a second
    await page.click('#btn-replay');
    const r0 = await until('the replay', async () => { const r = await shown(); return r && r.length >= 30 && r; });
    assert.equal(r0.room, ROOM);
    // pause on a frame by scrubbing: the position follows the slider
    await page.locator('#replay-pos').fill('10');
    let r = await until('paused on frame 10', async () => { const x = await shown(); return x.index === 10 && !x.playing && x; });
    assert.deepEqual([...r.keys].sort(), [String(bot.id), String(other.id)].sort());
    // the same recording replayed here gives the same points for that tick
    const rec = Buffer.from(await (await fetch(`${daemon.base}/v1/rooms/${ROOM}/recording?last=60`)).arrayBuffer());
    const { m } = await daemonFrames(rec);
    const want = m.get(r.tick);
    assert.ok(want, `the daemon's replay has tick ${r.tick}`);
    for (const key of r.keys) {
      const got = (await page.evaluate((k) => window.ponytail.replayPoints(k), key)).flat();
      assert.equal(got.length, want.get(key).length);
      got.forEach((v, i) => assert.ok(Math.abs(v - want.get(key)[i]) <= 1e-6, `instance ${key} value ${i}: ${v} vs ${want.get(key)[i]}`));
    }
    assert.match(await page.locator('#replay-tick').textContent(), new RegExp(`tick ${r.tick}`));
    // back and forth: earlier, then later frames, ticks in the same order
    await page.locator('#replay-pos').fill('3');
    const early = await until('frame 3', async () => { const x = await shown(); return x.index === 3 && x; });
    await page.locator('#replay-pos').fill(String(r0.length - 1));
    const late = await until('the last frame', async () => { const x = await shown(); return x.index === r0.length - 1 && x; });
    assert.ok(early.tick < r.tick && r.tick < late.tick, `${early.tick} < ${r.tick} < ${late.tick}`);
    // play from the end starts over and moves on
    await page.click('#btn-play');
    await until('playing from the start', async () => { const x = await shown(); return x.playing && x.index > 0 && x.index < r0.length - 1; });
    await page.click('#btn-play');
    const paused = await until('paused', async () => { const x = await shown(); return !x.playing && x; });
    await page.waitForTimeout(300);
    assert.equal((await shown()).index, paused.index, 'paused: the frame stays');
    await page.click('#btn-live');
    await until('live again', async () => (await shown()) === null);
    assert.equal(await page.locator('#replay-tick').textContent(), 'live');
  });

  test('a dropped .ptrec file is replayed; a bad one is refused with its reason', async () => {
    const bytes = fs.readFileSync('tests/fixtures/recording/session.ptrec');
    const drop = (b64, name) => page.evaluate(({ b64, name }) => {
      const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([bin], name));
      document.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
    }, { b64, name });
    await drop(bytes.toString('base64'), 'session.ptrec');
    const r = await until('the dropped recording', async () => { const x = await shown(); return x && x.room === 'golden' && x; });
    const { j } = await daemonFrames(bytes);
    assert.equal(r.length, j.frames.length);
    assert.equal(r.keys.length, j.frames[r.index].instances.length);
    await page.click('#btn-live');
    await drop(Buffer.from('not a recording at all').toString('base64'), 'junk.ptrec');
    await until('the reason on the page', async () => /not a Ponytail recording/.test(await page.locator('#replay-tick').textContent()));
    assert.equal(await shown(), null);
    assert.deepEqual(pageErrors, []);
  });
});
