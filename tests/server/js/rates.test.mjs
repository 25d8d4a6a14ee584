// Per-viewer rates (PROTOCOL.md 5, protocol 1.2) against a live daemon: a subscription
// at 10 Hz gets every 6th tick (tick % 6 == 0 at 60 Hz) as its own delta stream and
// decodes it to the same points as a 60 Hz viewer of the same ticks; 1.0 clients keep
// every tick; a bad rate is refused naming the field; a connection whose socket backs up
// is moved down a rate and back up when it drains, counted in /metrics; so is a compact
// one (PROTOCOL.md 11.3), stalled beside it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { encodeMessage, StrandDecoder } from '../../../proto/js/ponytail-proto.mjs';
import { Client } from './client.mjs';
import { def, metric, startDaemon } from './daemon.mjs';

let d;
before(async () => { d = await startDaemon({ args: ['--write-rate', '0', '--max-conns-per-ip', '200'] }); });
after(async () => { await d.cleanup(); });

async function create(over = {}) {
  const r = await d.req('POST', '/v1/instances', def(over));
  assert.equal(r.status, 201, r.text);
  return r.json;
}

/* Decodes every record of one instance into points per tick; counts keyframe records. */
function tracker(c, id) {
  const t = { ticks: [], points: new Map(), keys: 0, deltas: 0, errors: [] };
  let dec = null;
  c.waiters.push((m) => {
    if (m.type === 'instance_event' && m.instance_id === id && m.kind !== 'removed') dec = new StrandDecoder(m.shape);
    if (m.type !== 'frame_batch') return false;
    for (const rec of m.records) {
      if (rec.id !== id) continue;
      if (!dec) { t.errors.push('record before added'); continue; }
      try {
        t.points.set(m.tick, Array.from(dec.apply(m.tick, rec))); /* x, y, z, x, ... */
        t.ticks.push(m.tick);
        if (rec.flags & 1) t.keys++; else t.deltas++;
      } catch (e) { t.errors.push(String(e)); }
    }
    c.msgs.length = 0;
    return false;
  });
  return t;
}

const wait = (ms) => new Promise((r) => setTimeout(r, ms));

test('a 10 Hz subscriber gets every 6th tick as deltas and decodes the same points as a 60 Hz one', async () => {
  const inst = await create({ name: 'rated', room: 'rates', driver: { motion: 'shake', amplitude: 30, period: 0.7 } });
  const id = BigInt(inst.id);
  const slow = await Client.open(d.ws, { minor: 2, name: 'ten' });
  const fast = await Client.open(d.ws, { minor: 2, name: 'sixty' });
  const old = await Client.open(d.ws, { minor: 0, name: 'old' });
  assert.equal(slow.welcome.minor, 2);
  const ts = tracker(slow, id), tf = tracker(fast, id), to = tracker(old, id);
  slow.send({ type: 'subscribe', room: '', ids: [id], rate_hz: 10 });
  fast.send({ type: 'subscribe', room: '', ids: [id], rate_hz: 60 });
  old.send({ type: 'subscribe', room: '', ids: [id] }); /* 1.0: no rate_hz, every tick */
  await wait(2500);
  for (const c of [slow, fast, old]) c.close();
  for (const t of [ts, tf, to]) assert.deepEqual(t.errors, []);
  /* 10 Hz: only ticks that are multiples of 6, one in six (the machine is shared: a
   * late WebSocket thread may skip a due tick, never send another one) */
  assert.ok(ts.ticks.length >= 8, `${ts.ticks.length} records at 10 Hz in 2.5 s`);
  for (const tick of ts.ticks) assert.equal(tick % 6n, 0n, `tick ${tick} at 10 Hz`);
  const steps = ts.ticks.slice(1).map((t, i) => t - ts.ticks[i]);
  assert.ok(steps.filter((s) => s === 6n).length >= steps.length * 0.8, `steps ${steps}`);
  assert.ok(ts.deltas >= 5, `${ts.deltas} delta records at 10 Hz (the stream is its own delta chain)`);
  /* the 60 Hz and 1.0 viewers get every tick */
  for (const t of [tf, to]) {
    assert.ok(t.ticks.length >= ts.ticks.length * 4, `${t.ticks.length} records at 60 Hz`);
    const st = t.ticks.slice(1).map((x, i) => x - t.ticks[i]);
    assert.ok(st.filter((s) => s === 1n).length >= st.length * 0.8, `60 Hz steps ${st}`);
  }
  /* Both streams decode within max_error_m of the server's points, so within twice it of
   * each other, tick for tick. */
  const bound = 2 * slow.welcome.max_error_m + 1e-6;
  let compared = 0;
  for (const tick of ts.ticks) {
    const a = ts.points.get(tick), b = tf.points.get(tick);
    if (!b) continue;
    compared++;
    assert.equal(a.length, b.length);
    for (let i = 0; i < a.length; i += 3) {
      const dist = Math.hypot(a[i] - b[i], a[i + 1] - b[i + 1], a[i + 2] - b[i + 2]);
      assert.ok(dist <= bound, `tick ${tick} point ${i / 3}: ${dist} m apart`);
    }
  }
  assert.ok(compared >= ts.ticks.length * 0.8, `${compared} ticks compared`);
});

test('subscribing again changes the rate; the new stream starts with a keyframe', async () => {
  const inst = await create({ name: 'rerated', room: 'rates2', driver: { motion: 'nod', amplitude: 20, period: 0.9 } });
  const id = BigInt(inst.id);
  const c = await Client.open(d.ws, { minor: 2 });
  const t = tracker(c, id);
  c.send({ type: 'subscribe', room: 'rates2', ids: [], rate_hz: 20 });
  await wait(1000);
  const n20 = t.ticks.length;
  for (const tick of t.ticks) assert.equal(tick % 3n, 0n, `tick ${tick} at 20 Hz`);
  c.send({ type: 'subscribe', room: 'rates2', ids: [], rate_hz: 30 });
  await wait(1000);
  c.close();
  assert.deepEqual(t.errors, []);
  const later = t.ticks.slice(n20 + 2); /* past the switch (a batch may be in flight) */
  assert.ok(later.length >= 15, `${later.length} records at 30 Hz`);
  for (const tick of later) assert.equal(tick % 2n, 0n, `tick ${tick} at 30 Hz`);
  assert.ok(later.some((tick) => tick % 3n !== 0n), 'still at 20 Hz after asking for 30');
  /* one key at the start, one at the switch (and the periodic ones, once a second) */
  assert.ok(t.keys >= 2, `${t.keys} keyframes`);
});

test('an instance covered by its id at 10 Hz and its room at 30 Hz gets 30 Hz, once per tick', async () => {
  const inst = await create({ name: 'both', room: 'rates3', driver: { motion: 'shake', amplitude: 20, period: 0.8 } });
  const other = await create({ name: 'roommate', room: 'rates3' });
  const id = BigInt(inst.id);
  const c = await Client.open(d.ws, { minor: 2 });
  const t = tracker(c, id), u = tracker(c, BigInt(other.id));
  const perTick = new Map();
  c.waiters.push((m) => {
    if (m.type === 'frame_batch') for (const r of m.records) if (r.id === id) perTick.set(m.tick, (perTick.get(m.tick) ?? 0) + 1);
    return false;
  });
  c.send({ type: 'subscribe', room: '', ids: [id], rate_hz: 10 });
  c.send({ type: 'subscribe', room: 'rates3', ids: [], rate_hz: 30 });
  await wait(1500);
  c.close();
  assert.deepEqual(t.errors, []);
  assert.deepEqual(u.errors, []);
  const later = t.ticks.slice(2);
  assert.ok(later.length >= 15, `${later.length} records`);
  for (const tick of later) assert.equal(tick % 2n, 0n, `tick ${tick}`);
  assert.ok(later.some((tick) => tick % 6n !== 0n), 'got only the 10 Hz stream');
  for (const [tick, n] of perTick) assert.equal(n, 1, `tick ${tick}: ${n} records of one instance`);
  for (const tick of u.ticks.slice(2)) assert.equal(tick % 2n, 0n, `roommate tick ${tick}`);
});

test('a rate_hz other than 0, 60, 30, 20, 10 is refused naming the field', async () => {
  const c = await Client.open(d.ws, { minor: 2 });
  const b = encodeMessage({ type: 'subscribe', room: 'x', ids: [], rate_hz: 10 }, 2);
  b[b.length - 1] = 45;
  c.sendRaw(b);
  const e = await c.next('error');
  assert.equal(e.code, 1); /* bad_message, closing (like every undecodable message) */
  assert.match(e.text, /rate_hz must be 0, 60, 30, 20 or 10/);
  c.close();
});

test('a connection whose socket backs up is moved down a rate, and back up when it drains (classic and compact)', async () => {
  /* 20 instances of 32 x 64 points: tens of KB per tick fill the sockets in a moment */
  const big = { prewarm_s: 0, room: 'backed', strands: [] };
  for (let s = 0; s < 32; s++) big.strands.push({ anchor: [s * 0.005 - 0.08, 0.06, -0.09], points: 64, segment_length: 0.01 });
  for (let i = 0; i < 20; i++) {
    const r = await d.req('POST', '/v1/instances', { ...big, name: `big${i}`, driver: { motion: 'shake', period: 0.3 + i * 0.01 } });
    assert.equal(r.status, 201, r.text);
  }
  const down0 = await metric(d, 'ponytail_ws_rate_down_total');
  const up0 = await metric(d, 'ponytail_ws_rate_up_total');
  /* A 1.2 client that stalls 5 s (a 4 KiB receive buffer), then reads for 4 s
   * (slow_client.py). The kernel's send buffer takes a while to fill: poll for the move. */
  const slow = spawn('python3', ['tests/server/slow_client.py', String(d.wsPort), 'backed', '5', '4', '2']);
  /* and a compact one, the same way (frame_batch_c, steps in its records) */
  const slowC = spawn('python3', ['tests/server/slow_client.py', String(d.wsPort), 'backed', '5', '4', '2', 'compact']);
  let out = '', outC = '';
  slow.stdout.on('data', (s) => { out += s; });
  slowC.stdout.on('data', (s) => { outC += s; });
  const exitC = new Promise((r) => slowC.on('exit', r));
  let down = down0, slowed = 0;
  for (let i = 0; i < 22 && down - down0 < 6; i++) {
    await wait(200);
    down = await metric(d, 'ponytail_ws_rate_down_total');
    slowed = await metric(d, 'ponytail_ws_connections_slowed');
  }
  assert.ok(down - down0 >= 1, `rate_down ${down0} -> ${down} during the stall`);
  assert.ok(slowed >= 1, `${slowed} connections slowed during the stall`);
  await new Promise((r) => slow.on('exit', r));
  await exitC;
  const up1 = await metric(d, 'ponytail_ws_rate_up_total');
  assert.ok(up1 - up0 >= 1, `rate_up ${up0} -> ${up1} after draining`);
  /* After the stall: the slowest stream first (10 Hz: ticks that are multiples of 6) */
  const { batches } = JSON.parse(out);
  /* the stall is the longest jump in ticks (a loaded machine may skip a tick before it) */
  let gap = -1;
  for (let i = 1; i < batches.length; i++)
    if (batches[i][0] - batches[i - 1][0] > 1 && (gap < 0 || batches[i][0] - batches[i - 1][0] > batches[gap][0] - batches[gap - 1][0])) gap = i;
  assert.ok(gap > 0, 'no tick gap after the stall');
  const first = batches.slice(gap, gap + 3);
  assert.equal(first.length, 3);
  /* the records say their step (1.2), always a divisor of their tick; right after the
   * stall it is above 1 (moved down) */
  for (const [tick, recs] of batches) for (const [, , step] of recs) assert.equal(tick % step, 0, `tick ${tick}, step ${step}`);
  const steps = batches.slice(gap).map(([, recs]) => Math.max(...recs.map((x) => x[2])));
  assert.ok(steps[0] >= 2, `first classic batch after the stall: step ${steps[0]}`);
  /* every instance restarts from a keyframe after the gap (the stream changed) */
  const seen = new Set();
  for (const [, recs] of batches.slice(gap)) for (const [id, flags] of recs) {
    if (!seen.has(id)) assert.equal(flags & 1, 1, `first record of ${id} after the gap is not a keyframe`);
    seen.add(id);
  }
  /* and faster again once drained: some later batch is off the 10 Hz grid */
  assert.ok(batches.slice(gap).some(([tick]) => tick % 6 !== 0), 'never back above 10 Hz');

  /* The compact connection: the same moves, seen in its records' steps. */
  const bc = JSON.parse(outC).batches;
  assert.ok(bc.length > 10, `${bc.length} compact batches`);
  for (const [tick, recs] of bc) for (const [, , step] of recs) assert.equal(tick % step, 0, `compact tick ${tick}, step ${step}`);
  let gc = -1;
  for (let i = 1; i < bc.length; i++)
    if (bc[i][0] - bc[i - 1][0] > 1 && (gc < 0 || bc[i][0] - bc[i - 1][0] > bc[gc][0] - bc[gc - 1][0])) gc = i;
  assert.ok(gc > 0, 'no tick gap after the compact stall');
  const stepsC = bc.slice(gc).map(([, recs]) => Math.max(...recs.map((x) => x[2])));
  assert.ok(stepsC[0] >= 2, `first compact batch after the stall: step ${stepsC[0]} (moved down)`);
  const seenC = new Set();
  for (const [, recs] of bc.slice(gc)) for (const [id, flags] of recs) {
    if (!seenC.has(id)) assert.equal(flags & 3, 3, `first compact record of ${id} after the gap is not a keyframe`);
    seenC.add(id);
  }
  assert.ok(stepsC.some((st) => st < stepsC[0]), `compact never moved back up: steps ${stepsC}`);
  assert.ok(down - down0 >= 2, `rate_down ${down0} -> ${down}: both connections moved`);
});
