// Compact frames (proto/PROTOCOL.md 11) from a live daemon: a 1.2 client that asks gets
// frame_batch_c, a 1.1 client watching the same instance at the same time keeps getting
// frame_batch, both decode within welcome.max_error_m of each other's points (the same
// simulation), and a second compact client joining late starts from a keyframe record and
// then decodes exactly the first one's points, tick for tick (one compact encoder).
// Per-viewer rates of the compact coding (PROTOCOL.md 5, 11.3; issue 15): compact
// subscribers at 30, 20 and 10 Hz get exactly every 2nd, 3rd and 6th tick, each record
// carrying that step, and decode within max_error_m of the daemon's own points of those
// ticks (so within twice it of the 60 Hz compact and classic streams'); a keyframe request
// on a 10 Hz compact stream is answered with a keyframe; a late 20 Hz joiner starts from a
// keyframe and then decodes the first 20 Hz client's points exactly; an unsupported rate
// is refused as it is for classic connections.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { BatchClock, CompactDecoder, encodeMessage, StrandDecoder } from '../../../proto/js/ponytail-proto.mjs';
import { Client } from './client.mjs';
import { def, startDaemon } from './daemon.mjs';

let d;
before(async () => { d = await startDaemon(); });
after(async () => { await d.cleanup(); });

// Follows one instance: decoded points by tick, keyframe records, decode errors.
function follower(c, compact) {
  const f = { byTick: new Map(), keys: 0, errors: [], batches: 0, first: null, types: new Set(), recs: [] };
  let dec = null;
  f.reset = () => { dec = new CompactDecoder(f.shape); };
  const clock = new BatchClock(c.welcome.tick, c.welcome.server_time_us, c.welcome.tick_hz);
  f.feed = (m) => {
    if (m.type.startsWith('frame_batch')) f.types.add(m.type);
    if (m.type === 'instance_event' && m.kind === 'added') {
      f.shape = m.shape;
      dec = compact ? new CompactDecoder(m.shape) : new StrandDecoder(m.shape);
    }
    if (m.type === 'frame_batch_c') {
      clock.advance(m);
      f.batches++;
      for (const rec of m.records) {
        if (f.first === null) f.first = rec.flags;
        f.keys += rec.flags & 1;
        f.recs.push({ tick: clock.tick, step: rec.step, flags: rec.flags });
        /* decoded with the record's own step (PROTOCOL.md 11.2) */
        try { f.byTick.set(clock.tick, dec.applyCompact(clock.tick, rec.step, rec).points); } catch (e) { f.errors.push(e.code); }
      }
    }
    if (m.type === 'frame_batch') {
      f.batches++;
      for (const rec of m.records) {
        f.recs.push({ tick: m.tick, step: rec.step ?? 1, flags: rec.flags });
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

/* The daemon's own points by tick, from the frame route, while `until` is ahead. */
async function truth(id, until) {
  const t = new Map();
  while (performance.now() < until) {
    const r = await d.req('GET', `/v1/instances/${id}/frame`);
    if (r.status === 200) t.set(BigInt(r.json.tick), r.json.strands.flat().flat());
    await new Promise((res) => setTimeout(res, 10));
  }
  return t;
}

function within(pa, pb, bound, what) {
  assert.equal(pa.length, pb.length, what);
  for (let i = 0; i < pa.length; i += 3) {
    const dist = Math.hypot(pa[i] - pb[i], pa[i + 1] - pb[i + 1], pa[i + 2] - pb[i + 2]);
    assert.ok(dist <= bound, `${what} point ${i / 3}: ${dist} m apart (bound ${bound})`);
  }
}

test('compact subscribers at 30, 20 and 10 Hz get every 2nd, 3rd and 6th tick with that step', async () => {
  const r = await d.req('POST', '/v1/instances', def({ room: 'cpr', driver: { motion: 'shake', amplitude: 40, period: 0.7 } }));
  assert.equal(r.status, 201, r.text);
  const id = BigInt(r.json.id);
  const rates = [60, 30, 20, 10];
  const cs = await Promise.all(rates.map((hz) => Client.open(d.ws, { minor: 2, features: 1, name: `compact-${hz}` })));
  const k = await Client.open(d.ws, { minor: 2, name: 'classic-60' });
  const fs = cs.map((c) => follower(c, true)), fk = follower(k, false);
  cs.forEach((c, i) => c.send({ type: 'subscribe', room: '', ids: [id], rate_hz: rates[i] }));
  k.send({ type: 'subscribe', room: '', ids: [id], rate_hz: 60 });
  const end = performance.now() + 1800;
  const [real] = await Promise.all([truth(id, end), ...cs.map((c, i) => follow(c, fs[i], 1800)), follow(k, fk, 1800)]);
  for (const c of [...cs, k]) c.close();

  const bound = cs[0].welcome.max_error_m;
  assert.deepEqual([...fs.map((f) => f.errors), fk.errors], [[], [], [], [], []]);
  for (let i = 0; i < rates.length; i++) {
    const f = fs[i], dv = BigInt(60 / rates[i]);
    assert.deepEqual([...f.types], ['frame_batch_c']);
    assert.ok(f.recs.length >= Number(90n / dv), `${rates[i]} Hz: ${f.recs.length} records in 1.8 s`);
    assert.ok(f.recs.length <= Number(108n / dv) + 2, `${rates[i]} Hz: ${f.recs.length} records in 1.8 s`);
    for (const x of f.recs) {
      assert.equal(x.tick % dv, 0n, `${rates[i]} Hz record of tick ${x.tick}`);
      assert.equal(BigInt(x.step), dv, `${rates[i]} Hz record of tick ${x.tick}: step ${x.step}`);
    }
    /* every d-th tick (the machine is shared: a late WebSocket thread may skip one) */
    const gaps = f.recs.slice(1).map((x, j) => x.tick - f.recs[j].tick);
    assert.ok(gaps.filter((g) => g === dv).length >= gaps.length * 0.8, `${rates[i]} Hz gaps ${gaps}`);
    assert.ok(f.recs.filter((x) => !(x.flags & 1)).length >= f.recs.length / 2, `${rates[i]} Hz: deltas`);
    /* the same ticks of the 60 Hz compact and classic streams and the daemon's points */
    let vs60 = 0, vsReal = 0;
    for (const [tick, p] of f.byTick) {
      for (const [other, what] of [[fs[0], 'compact 60'], [fk, 'classic 60']]) {
        const q = other.byTick.get(tick);
        if (q) { within(p, q, 2 * bound + 1e-6, `${rates[i]} Hz vs ${what}, tick ${tick}`); vs60++; }
      }
      const t = real.get(tick);
      /* the bound holds for the doubles; the floats round by < 3e-7 m here */
      if (t) { within(p, t, bound + 3e-7, `${rates[i]} Hz vs the daemon, tick ${tick}`); vsReal++; }
    }
    assert.ok(vs60 >= f.byTick.size, `${rates[i]} Hz: ${vs60} comparisons with the 60 Hz streams`);
    assert.ok(vsReal >= 2, `${rates[i]} Hz: ${vsReal} ticks compared with the daemon's points`);
  }
});

test('a keyframe request on a 10 Hz compact stream; a late 20 Hz compact joiner', async () => {
  const r = await d.req('POST', '/v1/instances', def({ room: 'cpk', driver: { motion: 'nod', amplitude: 30, period: 0.8 } }));
  assert.equal(r.status, 201, r.text);
  const id = BigInt(r.json.id);
  const a = await Client.open(d.ws, { minor: 2, features: 1, name: 'compact-20-a' });
  const t = await Client.open(d.ws, { minor: 2, features: 1, name: 'compact-10-key' });
  const fa = follower(a, true), ft = follower(t, true);
  a.send({ type: 'subscribe', room: '', ids: [id], rate_hz: 20 });
  t.send({ type: 'subscribe', room: '', ids: [id], rate_hz: 10 });
  await Promise.all([follow(a, fa, 700), follow(t, ft, 700)]);
  const b = await Client.open(d.ws, { minor: 2, features: 1, name: 'compact-20-late' });
  const fb = follower(b, true);
  b.send({ type: 'subscribe', room: '', ids: [id], rate_hz: 20 });
  /* twice: forget the 10 Hz stream's history, ask for a keyframe */
  const marks = [];
  for (let round = 0; round < 2; round++) {
    ft.reset();
    marks.push({ recs: ft.recs.length, errors: ft.errors.length });
    t.send({ type: 'keyframe_request', ids: [id] });
    await Promise.all([follow(a, fa, 700), follow(b, fb, 700), follow(t, ft, 700)]);
  }
  for (const x of [a, b, t]) x.close();

  assert.deepEqual([fa.errors, fb.errors], [[], []]);
  /* the late joiner: a keyframe (key | abs) of the 20 Hz stream first, then the first
   * client's points exactly (the same stream's bytes) */
  assert.equal(fb.first & 3, 3, 'the late joiner starts from a keyframe record');
  assert.equal(fb.recs[0].step, 3);
  let same = 0;
  for (const [tick, p] of fb.byTick) {
    const q = fa.byTick.get(tick);
    if (!q) continue;
    assert.equal(tick % 3n, 0n);
    assert.deepEqual(Array.from(p), Array.from(q), `tick ${tick}: late and first 20 Hz clients`);
    same++;
  }
  assert.ok(same >= 15, `${same} ticks shared by the 20 Hz clients`);
  /* After each request: at most two records in flight before it (a delta the forgotten
   * history cannot take: no_key), then a keyframe of the 10 Hz stream, then deltas that
   * decode. Ignored, the request would leave up to ten deltas undecodable. */
  for (let round = 0; round < 2; round++) {
    const after = ft.recs.slice(marks[round].recs, round === 0 ? marks[1].recs : undefined);
    const errs = ft.errors.slice(marks[round].errors, round === 0 ? marks[1].errors : undefined);
    const firstKey = after.findIndex((x) => (x.flags & 3) === 3);
    assert.ok(firstKey >= 0 && firstKey <= 2, `round ${round}: first keyframe at record ${firstKey} of ${after.length}`);
    assert.equal(after[firstKey].step, 6);
    assert.equal(after[firstKey].tick % 6n, 0n);
    assert.deepEqual(errs, Array(firstKey).fill('no_key'), `round ${round}`);
    assert.ok(after.length - firstKey >= 3, `round ${round}: ${after.length - firstKey} records after the key`);
  }
});

test('a compact connection asking for an unsupported rate is refused as a classic one is', async () => {
  const c = await Client.open(d.ws, { minor: 2, features: 1, name: 'compact-45' });
  const b = encodeMessage({ type: 'subscribe', room: 'x', ids: [], rate_hz: 10 }, 2);
  b[b.length - 1] = 45;
  c.sendRaw(b);
  const e = await c.next('error');
  assert.equal(e.code, 1); /* bad_message, closing, as for classic (rates.test.mjs) */
  assert.match(e.text, /rate_hz must be 0, 60, 30, 20 or 10/);
  c.close();
});
