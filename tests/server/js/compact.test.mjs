// Compact frames (proto/PROTOCOL.md 11) from a live daemon: a 1.2 client that asks gets
// frame_batch_c, a 1.1 client watching the same instance at the same time keeps getting
// frame_batch, both decode within welcome.max_error_m of each other's points (the same
// simulation), and a second compact client joining late starts from a keyframe record and
// then decodes exactly the first one's points, tick for tick (one compact encoder).
// Compact frames are sent at 60 Hz; rate_hz applies to classic frames (PROTOCOL.md 5):
// a compact subscriber asking for 10 Hz still gets every tick, step 1, while a classic
// 10 Hz subscriber of the same instance gets every 6th tick.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { BatchClock, CompactDecoder, StrandDecoder } from '../../../proto/js/ponytail-proto.mjs';
import { Client } from './client.mjs';
import { def, startDaemon } from './daemon.mjs';

let d;
before(async () => { d = await startDaemon(); });
after(async () => { await d.cleanup(); });

// Follows one instance: decoded points by tick, keyframe records, decode errors.
function follower(c, compact) {
  const f = { byTick: new Map(), keys: 0, errors: [], batches: 0, first: null, types: new Set() };
  let dec = null;
  const clock = new BatchClock(c.welcome.tick, c.welcome.server_time_us, c.welcome.tick_hz);
  f.feed = (m) => {
    if (m.type.startsWith('frame_batch')) f.types.add(m.type);
    if (m.type === 'instance_event' && m.kind === 'added') dec = compact ? new CompactDecoder(m.shape) : new StrandDecoder(m.shape);
    if (m.type === 'frame_batch_c') {
      clock.advance(m);
      f.batches++;
      for (const rec of m.records) {
        if (f.first === null) f.first = rec.flags;
        f.keys += rec.flags & 1;
        try { f.byTick.set(clock.tick, dec.applyCompact(clock.tick, 1n, rec).points); } catch (e) { f.errors.push(e.code); }
      }
    }
    if (m.type === 'frame_batch') {
      f.batches++;
      for (const rec of m.records) {
        try { f.byTick.set(m.tick, dec.apply(m.tick, rec)); } catch (e) { f.errors.push(e.code); }
      }
    }
  };
  return f;
}

async function follow(c, f, ms) {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const m = await c.next('*', () => true, 3000);
    f.feed(m);
  }
}

test('compact and classic clients of one instance, and a late compact joiner', async () => {
  const r = await d.req('POST', '/v1/instances', def({ room: 'cp', driver: { motion: 'shake', amplitude: 40, period: 0.7 } }));
  assert.equal(r.status, 201, r.text);
  const id = BigInt(r.json.id);
  const a = await Client.open(d.ws, { minor: 2, features: 1, name: 'compact-a' });
  const b = await Client.open(d.ws, { minor: 1, name: 'classic-b' });
  assert.equal(a.welcome.minor, 2);
  const fa = follower(a, true), fb = follower(b, false);
  a.send({ type: 'subscribe', room: '', ids: [id] });
  b.send({ type: 'subscribe', room: '', ids: [id] });
  await Promise.all([follow(a, fa, 700), follow(b, fb, 700)]);
  const c = await Client.open(d.ws, { minor: 2, features: 1, name: 'compact-late' });
  const fc = follower(c, true);
  c.send({ type: 'subscribe', room: '', ids: [id] });
  await Promise.all([follow(a, fa, 800), follow(b, fb, 800), follow(c, fc, 800)]);
  for (const x of [a, b, c]) x.close();

  assert.deepEqual([fa.errors, fb.errors, fc.errors], [[], [], []]);
  assert.ok(fa.batches > 60 && fb.batches > 60 && fc.batches > 20, `${fa.batches} ${fb.batches} ${fc.batches}`);
  assert.deepEqual([...fa.types].sort(), ['frame_batch_c']);
  assert.deepEqual([...fb.types].sort(), ['frame_batch']);
  assert.equal(fc.first & 3, 3, 'the late joiner starts from a keyframe record (key | abs)');
  const bound = a.welcome.max_error_m;
  let same = 0, both = 0;
  for (const [tick, pc] of fc.byTick) {
    const pa = fa.byTick.get(tick);
    if (!pa) continue;
    assert.deepEqual(Array.from(pc), Array.from(pa), `tick ${tick}: the late joiner and the first compact client`);
    same++;
  }
  for (const [tick, pa] of fa.byTick) {
    const pb = fb.byTick.get(tick);
    if (!pb) continue;
    for (let i = 0; i < pa.length; i += 3) {
      const dist = Math.hypot(pa[i] - pb[i], pa[i + 1] - pb[i + 1], pa[i + 2] - pb[i + 2]);
      assert.ok(dist <= 2 * bound + 1e-6, `tick ${tick} point ${i / 3}: ${dist} m apart`);
    }
    both++;
  }
  assert.ok(same >= 20 && both >= 40, `${same} ticks shared by the compact clients, ${both} by compact and classic`);
});

test('compact frames ignore rate_hz: every tick, while a classic 10 Hz viewer gets every 6th', async () => {
  const r = await d.req('POST', '/v1/instances', def({ room: 'cp10', driver: { motion: 'shake', amplitude: 40, period: 0.7 } }));
  assert.equal(r.status, 201, r.text);
  const id = BigInt(r.json.id);
  const a = await Client.open(d.ws, { minor: 2, features: 1, name: 'compact-10' });
  const b = await Client.open(d.ws, { minor: 2, name: 'classic-10' });
  const fa = follower(a, true), fb = follower(b, false);
  const ticksB = [];
  const feedB = fb.feed;
  fb.feed = (m) => { if (m.type === 'frame_batch') ticksB.push(m.tick); feedB(m); };
  a.send({ type: 'subscribe', room: '', ids: [id], rate_hz: 10 });
  b.send({ type: 'subscribe', room: '', ids: [id], rate_hz: 10 });
  await Promise.all([follow(a, fa, 1200), follow(b, fb, 1200)]);
  a.close();
  b.close();

  assert.deepEqual([fa.errors, fb.errors], [[], []]);
  assert.deepEqual([...fa.types], ['frame_batch_c']);
  assert.deepEqual([...fb.types], ['frame_batch']);
  /* 1.2 s: ~72 ticks at 60 Hz, ~12 at 10 Hz (a loaded machine may skip some) */
  assert.ok(fa.batches > 30, `compact at rate_hz 10: ${fa.batches} batches (every tick expected)`);
  assert.ok(fb.batches >= 4 && fb.batches <= 16, `classic at 10 Hz: ${fb.batches} batches`);
  for (const t of ticksB) assert.equal(t % 6n, 0n, `classic 10 Hz batch of tick ${t}`);
  const bound = a.welcome.max_error_m;
  let both = 0;
  for (const [tick, pb] of fb.byTick) {
    const pa = fa.byTick.get(tick);
    if (!pa) continue;
    for (let i = 0; i < pa.length; i += 3) {
      const dist = Math.hypot(pa[i] - pb[i], pa[i + 1] - pb[i + 1], pa[i + 2] - pb[i + 2]);
      assert.ok(dist <= 2 * bound + 1e-6, `tick ${tick} point ${i / 3}: ${dist} m apart`);
    }
    both++;
  }
  assert.ok(both >= 3, `${both} ticks shared by the compact and the 10 Hz classic client`);
});
