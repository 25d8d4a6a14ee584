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
//
// Nothing here depends on the machine's speed (issue 37). Each case follows its clients
// until it has seen as many records as it needs, with a generous deadline. On a loaded
// machine a client may miss ticks or be moved down a rate by backpressure (PROTOCOL.md 5,
// counted in ponytail_ws_rate_down_total); what stays exact is checked on every record:
// ticks in order and multiples of the record's step, a keyframe wherever a record does not
// continue its stream, every record decoding, the step the one asked for unless the daemon
// reports a move down (then a slower rate's), and identical points only between records of
// one stream (the same step).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { BatchClock, CompactDecoder, encodeMessage, StrandDecoder } from '../../../proto/js/ponytail-proto.mjs';
import { checkStream, Client } from './client.mjs';
import { def, metric, startDaemon, until } from './daemon.mjs';

let d;
before(async () => { d = await startDaemon(); });
after(async () => { await d.cleanup(); });

// Follows one instance on client c: every frame batch is fed as it arrives (and taken out
// of c.msgs), decoded points by tick with the record's step, records in arrival order
// ({tick, step, flags, key, seq}), decode errors.
function follower(c, compact) {
  const f = { byTick: new Map(), errors: [], batches: 0, first: null, types: new Set(), recs: [] };
  let dec = null;
  f.reset = () => { dec = new CompactDecoder(f.shape); };
  const clock = new BatchClock(c.welcome.tick, c.welcome.server_time_us, c.welcome.tick_hz);
  const record = (tick, rec, flags, seq) => {
    const step = rec.step ?? 1;
    if (f.first === null) f.first = flags;
    f.recs.push({ tick, step, flags, key: compact ? (flags & 3) === 3 : (flags & 1) === 1, seq });
    return step;
  };
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
        const step = record(clock.tick, rec, rec.flags, m.seq);
        /* decoded with the record's own step (PROTOCOL.md 11.2) */
        try { f.byTick.set(clock.tick, { step, points: dec.applyCompact(clock.tick, rec.step, rec).points }); } catch (e) { f.errors.push(e.code); }
      }
    }
    if (m.type === 'frame_batch') {
      f.batches++;
      for (const rec of m.records) {
        const step = record(m.tick, rec, rec.flags, m.seq);
        try { f.byTick.set(m.tick, { step, points: dec.apply(m.tick, rec) }); } catch (e) { f.errors.push(e.code); }
      }
    }
  };
  c.waiters.push((m) => {
    f.feed(m);
    const i = c.msgs.indexOf(m);
    if (m.type.startsWith('frame_batch') && i >= 0) c.msgs.splice(i, 1);
    return false;
  });
  return f;
}

const deltas = (f) => f.recs.filter((r, i) => i > 0 && !r.key && f.recs[i - 1].tick === r.tick - BigInt(r.step)).length;
const rateDown = () => metric(d, 'ponytail_ws_rate_down_total');
/* the tick divisors of the rates, 60 -> 10 Hz at a 60 Hz tick (PROTOCOL.md 5) */
const LADDER = [1, 2, 3, 6];

// The steps f's records may have when it asked for divisor dv: exactly dv, or, if the
// daemon moved any connection down meanwhile (backpressure), a slower rate's.
function checkSteps(f, dv, moved, what) {
  const allowed = moved ? LADDER.filter((x) => x >= dv) : [dv];
  for (const r of f.recs) assert.ok(allowed.includes(r.step), `${what}: tick ${r.tick} has step ${r.step}, allowed ${allowed}`);
}

test('compact and classic clients of one instance, and a late compact joiner', async () => {
  const r = await d.req('POST', '/v1/instances', def({ room: 'cp', driver: { motion: 'shake', amplitude: 40, period: 0.7 } }));
  assert.equal(r.status, 201, r.text);
  const id = BigInt(r.json.id);
  const down0 = await rateDown();
  const a = await Client.open(d.ws, { minor: 2, features: 1, name: 'compact-a' });
  const b = await Client.open(d.ws, { minor: 1, name: 'classic-b' });
  assert.equal(a.welcome.minor, 2);
  const fa = follower(a, true), fb = follower(b, false);
  a.send({ type: 'subscribe', room: '', ids: [id] });
  b.send({ type: 'subscribe', room: '', ids: [id] });
  await until(() => fa.recs.length >= 40 && fb.recs.length >= 40, () => `40 records each (${fa.recs.length}, ${fb.recs.length})`);
  const c = await Client.open(d.ws, { minor: 2, features: 1, name: 'compact-late' });
  const fc = follower(c, true);
  c.send({ type: 'subscribe', room: '', ids: [id] });

  const bound = a.welcome.max_error_m;
  /* The late joiner decodes the first compact client's points exactly on the ticks both
   * got from one stream (the same step; at the full rate unless backpressure moved one);
   * compact and classic decode within 2 max_error_m of each other (of the same ticks). */
  let same = 0, both = 0;
  const compare = () => {
    same = 0, both = 0;
    for (const [tick, pc] of fc.byTick) {
      const pa = fa.byTick.get(tick);
      if (!pa || pa.step !== pc.step) continue;
      assert.deepEqual(Array.from(pc.points), Array.from(pa.points), `tick ${tick}: the late joiner and the first compact client`);
      same++;
    }
    for (const [tick, { points: pa }] of fa.byTick) {
      const pb = fb.byTick.get(tick)?.points;
      if (!pb) continue;
      for (let i = 0; i < pa.length; i += 3) {
        const dist = Math.hypot(pa[i] - pb[i], pa[i + 1] - pb[i + 1], pa[i + 2] - pb[i + 2]);
        assert.ok(dist <= 2 * bound + 1e-6, `tick ${tick} point ${i / 3}: ${dist} m apart`);
      }
      both++;
    }
    return same >= 20 && both >= 40;
  };
  await until(compare, () => `${same} ticks shared by the compact clients (20 wanted), ${both} by compact and classic (40)`);
  for (const x of [a, b, c]) x.close();
  const moved = (await rateDown()) > down0;

  assert.deepEqual([fa.errors, fb.errors, fc.errors], [[], [], []]);
  assert.deepEqual([...fa.types].sort(), ['frame_batch_c']);
  assert.deepEqual([...fb.types].sort(), ['frame_batch']);
  assert.equal(fc.first & 3, 3, 'the late joiner starts from a keyframe record (key | abs)');
  for (const [f, what] of [[fa, 'compact a'], [fb, 'classic b'], [fc, 'compact late']]) {
    checkStream(f.recs, what, { fromStart: true });
    checkSteps(f, 1, moved, what);
  }
});

/* The daemon's own points by tick, from the frame route, until stop() */
function truth(id) {
  const t = new Map();
  let stopped = false;
  const done = (async () => {
    while (!stopped) {
      const r = await d.req('GET', `/v1/instances/${id}/frame`);
      if (r.status === 200) t.set(BigInt(r.json.tick), r.json.strands.flat().flat());
      await new Promise((res) => setTimeout(res, 10));
    }
  })();
  t.stop = () => { stopped = true; return done; };
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
  const down0 = await rateDown();
  const cs = await Promise.all(rates.map((hz) => Client.open(d.ws, { minor: 2, features: 1, name: `compact-${hz}` })));
  const k = await Client.open(d.ws, { minor: 2, name: 'classic-60' });
  const fs = cs.map((c) => follower(c, true)), fk = follower(k, false);
  cs.forEach((c, i) => c.send({ type: 'subscribe', room: '', ids: [id], rate_hz: rates[i] }));
  k.send({ type: 'subscribe', room: '', ids: [id], rate_hz: 60 });
  const real = truth(id);

  const bound = cs[0].welcome.max_error_m;
  /* Each rate's decoded points against the same ticks of the 60 Hz compact and classic
   * streams (within 2 max_error_m) and of the daemon's own points (within max_error_m):
   * until each rate has 8 deltas (its own delta chain), 3 comparisons with the 60 Hz
   * streams and 2 with the daemon. */
  const counts = rates.map(() => ({ vs60: 0, vsReal: 0 }));
  const compare = () => {
    for (let i = 0; i < rates.length; i++) {
      const f = fs[i], n = counts[i];
      n.vs60 = 0, n.vsReal = 0;
      for (const [tick, { points: p }] of f.byTick) {
        for (const [other, what] of [[fs[0], 'compact 60'], [fk, 'classic 60']]) {
          const q = other.byTick.get(tick)?.points;
          if (q) { within(p, q, 2 * bound + 1e-6, `${rates[i]} Hz vs ${what}, tick ${tick}`); n.vs60++; }
        }
        const t = real.get(tick);
        /* the bound holds for the doubles; the floats round by < 3e-7 m here */
        if (t) { within(p, t, bound + 3e-7, `${rates[i]} Hz vs the daemon, tick ${tick}`); n.vsReal++; }
      }
    }
    return fs.every((f, i) => deltas(f) >= 8 && counts[i].vs60 >= 3 && counts[i].vsReal >= 2);
  };
  await until(compare, () => rates.map((hz, i) => `${hz} Hz: ${fs[i].recs.length} records, ${deltas(fs[i])} deltas, ` +
    `${counts[i].vs60} vs 60 Hz, ${counts[i].vsReal} vs the daemon`).join('; '));
  await real.stop();
  for (const c of [...cs, k]) c.close();
  const moved = (await rateDown()) > down0;

  assert.deepEqual([...fs.map((f) => f.errors), fk.errors], [[], [], [], [], []]);
  checkStream(fk.recs, 'classic 60', { fromStart: true });
  checkSteps(fk, 1, moved, 'classic 60');
  for (let i = 0; i < rates.length; i++) {
    const f = fs[i], dv = 60 / rates[i];
    assert.deepEqual([...f.types], ['frame_batch_c']);
    /* only ticks that are multiples of the step, each record saying its step (dv, unless
     * the daemon moved a connection down), and a keyframe wherever one does not follow
     * the record of tick - step */
    checkStream(f.recs, `${rates[i]} Hz`, { fromStart: true });
    checkSteps(f, dv, moved, `${rates[i]} Hz`);
  }
});

test('a keyframe request on a 10 Hz compact stream; a late 20 Hz compact joiner', async () => {
  const r = await d.req('POST', '/v1/instances', def({ room: 'cpk', driver: { motion: 'nod', amplitude: 30, period: 0.8 } }));
  assert.equal(r.status, 201, r.text);
  const id = BigInt(r.json.id);
  const down0 = await rateDown();
  const a = await Client.open(d.ws, { minor: 2, features: 1, name: 'compact-20-a' });
  const t = await Client.open(d.ws, { minor: 2, features: 1, name: 'compact-10-key' });
  const fa = follower(a, true), ft = follower(t, true);
  a.send({ type: 'subscribe', room: '', ids: [id], rate_hz: 20 });
  t.send({ type: 'subscribe', room: '', ids: [id], rate_hz: 10 });
  await until(() => fa.recs.length >= 5 && ft.recs.length >= 3, () => `first records (${fa.recs.length}, ${ft.recs.length})`);
  const b = await Client.open(d.ws, { minor: 2, features: 1, name: 'compact-20-late' });
  const fb = follower(b, true);
  b.send({ type: 'subscribe', room: '', ids: [id], rate_hz: 20 });
  /* twice: forget the 10 Hz stream's history, ask for a keyframe; the ping after the
   * request marks where the daemon had handled it */
  const marks = [];
  for (let round = 0; round < 2; round++) {
    ft.reset();
    const mark = { recs: ft.recs.length, errors: ft.errors.length };
    marks.push(mark);
    t.send({ type: 'keyframe_request', ids: [id] });
    mark.pong = (await t.ping()).seq;
    /* three records after the first keyframe since the request, one of them after the pong */
    await until(() => {
      const since = ft.recs.slice(mark.recs);
      const k = since.findIndex((x) => (x.flags & 3) === 3);
      return k >= 0 && since.length - k > 3 && since.some((x) => x.seq > mark.pong);
    }, () => `round ${round}: a keyframe and three records after it (${ft.recs.length - mark.recs} records)`);
  }
  let same = 0;
  await until(() => {
    same = 0;
    for (const [tick, p] of fb.byTick) {
      const q = fa.byTick.get(tick);
      if (!q || q.step !== p.step) continue;
      assert.equal(tick % 3n, 0n);
      assert.deepEqual(Array.from(p.points), Array.from(q.points), `tick ${tick}: late and first 20 Hz clients`);
      same++;
    }
    return same >= 15;
  }, () => `${same} ticks shared by the 20 Hz clients (15 wanted)`);
  for (const x of [a, b, t]) x.close();
  const moved = (await rateDown()) > down0;

  assert.deepEqual([fa.errors, fb.errors], [[], []]);
  for (const [f, dv, what] of [[fa, 3, '20 Hz'], [fb, 3, 'late 20 Hz'], [ft, 6, '10 Hz']]) {
    checkStream(f.recs, what, { fromStart: true });
    checkSteps(f, dv, moved, what);
  }
  /* the late joiner: a keyframe (key | abs) of the 20 Hz stream first (of the 10 Hz one if
   * the daemon moved it down), then the first client's points exactly (the same stream's
   * bytes) */
  assert.equal(fb.first & 3, 3, 'the late joiner starts from a keyframe record');
  if (!moved) assert.equal(fb.recs[0].step, 3);
  /* After each request: records the forgotten history cannot take (deltas written before
   * the request was read: no_key), then a keyframe of the 10 Hz stream no later than the
   * first record written after the pong, then deltas that decode. Ignored, the request
   * would leave up to ten deltas undecodable. */
  for (let round = 0; round < 2; round++) {
    const end = round === 0 ? marks[1] : { recs: undefined, errors: undefined };
    const after = ft.recs.slice(marks[round].recs, end.recs);
    const errs = ft.errors.slice(marks[round].errors, end.errors);
    const firstKey = after.findIndex((x) => (x.flags & 3) === 3);
    const firstAfterPong = after.findIndex((x) => x.seq > marks[round].pong);
    assert.ok(firstKey >= 0 && (firstAfterPong < 0 || firstKey <= firstAfterPong),
      `round ${round}: first keyframe at record ${firstKey}, first after the pong at ${firstAfterPong}, of ${after.length}`);
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
