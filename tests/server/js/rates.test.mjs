// timeout: 150 (18 s alone, up to 49 s seen under load: 6-8 s read phases per rate)
// Per-viewer rates (PROTOCOL.md 5, protocol 1.2) against a live daemon: a subscription
// at 10 Hz gets every 6th tick (tick % 6 == 0 at 60 Hz) as its own delta stream and
// decodes it to the same points as a 60 Hz viewer of the same ticks; 1.0 clients keep
// every tick; a bad rate is refused naming the field; a connection whose socket backs up
// is moved down a rate and back up when it drains, counted in /metrics; so is a compact
// one (PROTOCOL.md 11.3), stalled beside it.
//
// Nothing here depends on the machine's speed (issue 37): the rate of a stream is checked
// by what is exact in its records (ticks that are multiples of the step, the step the
// subscription asked for, a keyframe wherever a record does not continue its stream),
// over as many records as a case needs, waited for with a generous deadline. A loaded
// machine may make the daemon move a connection down a rate (backpressure, counted in
// ponytail_ws_rate_down_total): then, and only then, a slower rate's step is allowed. "The
// daemon has handled a subscription" is a ping after it, never a sleep.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, test } from 'node:test';
import { encodeMessage, StrandDecoder } from '../../../proto/js/ponytail-proto.mjs';
import { checkStream, Client } from './client.mjs';
import { def, metric, startDaemon, until } from './daemon.mjs';

let d;
before(async () => { d = await startDaemon({ args: ['--write-rate', '0', '--max-conns-per-ip', '200'] }); });
after(async () => { await d.cleanup(); });

async function create(over = {}) {
  const r = await d.req('POST', '/v1/instances', def(over));
  assert.equal(r.status, 201, r.text);
  return r.json;
}

/* Decodes every record of one instance into points per tick; counts keyframe records;
 * keeps the records ({tick, step, key, seq: the batch's arrival number}) for checkStream. */
function tracker(c, id) {
  const t = { ticks: [], recs: [], points: new Map(), keys: 0, deltas: 0, errors: [] };
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
        t.recs.push({ tick: m.tick, step: rec.step ?? 1, key: (rec.flags & 1) === 1, seq: m.seq });
        if (rec.flags & 1) t.keys++; else t.deltas++;
      } catch (e) { t.errors.push(String(e)); }
    }
    const i = c.msgs.indexOf(m); /* taken (another tracker may have taken it already) */
    if (i >= 0) c.msgs.splice(i, 1);
    return false;
  });
  return t;
}

const rateDown = () => metric(d, 'ponytail_ws_rate_down_total');
/* the tick divisors of the rates, 60 -> 10 Hz at a 60 Hz tick (PROTOCOL.md 5) */
const LADDER = [1, 2, 3, 6];

// recs' steps are dv, or, when the daemon moved some connection down meanwhile, dv or a
// slower rate's (backpressure never moves a connection above what it asked for).
function checkSteps(recs, dv, moved, what) {
  const allowed = moved ? LADDER.filter((x) => x >= dv) : [dv];
  for (const r of recs) assert.ok(allowed.includes(r.step), `${what}: tick ${r.tick} has step ${r.step}, allowed ${allowed}`);
}

test('a 10 Hz subscriber gets every 6th tick as deltas and decodes the same points as a 60 Hz one', async () => {
  const inst = await create({ name: 'rated', room: 'rates', driver: { motion: 'shake', amplitude: 30, period: 0.7 } });
  const id = BigInt(inst.id);
  const slow = await Client.open(d.ws, { minor: 2, name: 'ten' });
  const fast = await Client.open(d.ws, { minor: 2, name: 'sixty' });
  const old = await Client.open(d.ws, { minor: 0, name: 'old' });
  assert.equal(slow.welcome.minor, 2);
  const ts = tracker(slow, id), tf = tracker(fast, id), to = tracker(old, id);
  const down0 = await rateDown();
  slow.send({ type: 'subscribe', room: '', ids: [id], rate_hz: 10 });
  fast.send({ type: 'subscribe', room: '', ids: [id], rate_hz: 60 });
  old.send({ type: 'subscribe', room: '', ids: [id] }); /* 1.0: no rate_hz, every tick */
  /* Both streams decode within max_error_m of the server's points, so within twice it of
   * each other, tick for tick: compared on every tick both got. */
  const bound = 2 * slow.welcome.max_error_m + 1e-6;
  let compared = 0;
  const compare = () => {
    compared = 0;
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
    return compared >= 5;
  };
  /* until the 10 Hz stream has 8 records, 5 of them deltas (its own delta chain), and
   * the 60 Hz and 1.0 viewers have ticks off the 10 Hz grid */
  const off6 = (t) => t.ticks.some((x) => x % 6n !== 0n);
  await until(() => ts.ticks.length >= 8 && ts.deltas >= 5 && off6(tf) && off6(to) && compare(),
    () => `10 Hz: ${ts.ticks.length} records, ${ts.deltas} deltas, ${compared} compared; ` +
      `60 Hz: ${tf.ticks.length}, 1.0: ${to.ticks.length} records`);
  for (const c of [slow, fast, old]) c.close();
  const moved = (await rateDown()) > down0;
  for (const t of [ts, tf, to]) assert.deepEqual(t.errors, []);
  /* 10 Hz: only ticks that are multiples of 6, each record saying step 6 (the slowest
   * rate: backpressure cannot move it), a keyframe after any due tick it missed */
  for (const tick of ts.ticks) assert.equal(tick % 6n, 0n, `tick ${tick} at 10 Hz`);
  checkStream(ts.recs, '10 Hz', { fromStart: true });
  checkSteps(ts.recs, 6, moved, '10 Hz');
  /* the 60 Hz viewer gets every tick (step 1) unless moved down; the 1.0 one always */
  checkStream(tf.recs, '60 Hz', { fromStart: true });
  checkSteps(tf.recs, 1, moved, '60 Hz');
  checkStream(to.recs, '1.0', { fromStart: true });
  checkSteps(to.recs, 1, false, '1.0 (one rate)');
});

test('subscribing again changes the rate; the new stream starts with a keyframe', async () => {
  const inst = await create({ name: 'rerated', room: 'rates2', driver: { motion: 'nod', amplitude: 20, period: 0.9 } });
  const id = BigInt(inst.id);
  const c = await Client.open(d.ws, { minor: 2 });
  const t = tracker(c, id);
  const down0 = await rateDown();
  c.send({ type: 'subscribe', room: 'rates2', ids: [], rate_hz: 20 });
  await until(() => t.recs.length >= 8, () => `8 records at 20 Hz (${t.recs.length})`);
  const before20 = t.recs.slice();
  c.send({ type: 'subscribe', room: 'rates2', ids: [], rate_hz: 30 });
  /* records that arrive after the pong were written after the change (those between may
   * be of either rate) */
  const pong = await c.ping();
  const later = () => t.recs.filter((r) => r.seq > pong.seq);
  await until(() => later().length >= 15 && later().some((r) => r.tick % 3n !== 0n),
    () => `15 records at 30 Hz, one off the 20 Hz grid (${later().map((r) => r.tick)})`);
  c.close();
  const moved = (await rateDown()) > down0;
  assert.deepEqual(t.errors, []);
  checkSteps(before20, 3, moved, 'before the change (20 Hz)');
  checkSteps(later(), 2, moved, 'after the change (30 Hz)');
  /* the new stream starts with a keyframe: checkStream wants one wherever the step
   * changes; one key at the start, one at the switch (and the periodic ones) */
  checkStream(t.recs, 'resubscribed', { fromStart: true });
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
  const down0 = await rateDown();
  c.send({ type: 'subscribe', room: '', ids: [id], rate_hz: 10 });
  c.send({ type: 'subscribe', room: 'rates3', ids: [], rate_hz: 30 });
  /* after the pong both subscriptions apply (before it, a record may come from the id's
   * 10 Hz subscription alone) */
  const pong = await c.ping();
  const later = (x) => x.recs.filter((r) => r.seq > pong.seq);
  await until(() => later(t).length >= 15 && later(t).some((r) => r.tick % 6n !== 0n) && later(u).length >= 5,
    () => `15 records at 30 Hz, one off the 10 Hz grid (${later(t).map((r) => r.tick)}), 5 of the roommate`);
  c.close();
  const moved = (await rateDown()) > down0;
  assert.deepEqual(t.errors, []);
  assert.deepEqual(u.errors, []);
  checkSteps(later(t), 2, moved, 'id at 10 Hz and room at 30 Hz');
  checkSteps(later(u), 2, moved, 'roommate');
  checkStream(t.recs, 'id and room', { fromStart: true });
  checkStream(u.recs, 'roommate', { fromStart: true });
  for (const [tick, n] of perTick) assert.equal(n, 1, `tick ${tick}: ${n} records of one instance`);
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
  /* A 1.2 client that stalls 5 s (a 4 KiB receive buffer), then reads for 8 s
   * (slow_client.py): once it reads, a second without falling behind moves it up a rate,
   * after it has drained what the stall left in the socket; 8 s leave room for a slow
   * machine (on a quiet one 4 were enough). */
  const slow = spawn('python3', ['tests/server/slow_client.py', String(d.wsPort), 'backed', '5', '8', '2']);
  /* and a compact one, the same way (frame_batch_c, steps in its records) */
  const slowC = spawn('python3', ['tests/server/slow_client.py', String(d.wsPort), 'backed', '5', '8', '2', 'compact']);
  let out = '', outC = '';
  slow.stdout.on('data', (s) => { out += s; });
  slowC.stdout.on('data', (s) => { outC += s; });
  let exited = 0;
  const exit = new Promise((r) => slow.on('exit', () => { exited++; r(); }));
  const exitC = new Promise((r) => slowC.on('exit', () => { exited++; r(); }));
  /* The kernel's send buffer takes a while to fill: watch the counters until both
   * connections were moved down and the gauge shows a connection below its rate (a move
   * down lasts at least a second of reading, so the gauge is seen), or they are done. */
  let down = down0, slowed = 0;
  await until(async () => {
    down = await metric(d, 'ponytail_ws_rate_down_total');
    slowed = Math.max(slowed, await metric(d, 'ponytail_ws_connections_slowed'));
    return (down - down0 >= 2 && slowed >= 1) || exited === 2;
  }, 'the slow clients are done', 60000, 100);
  assert.ok(down - down0 >= 1, `rate_down ${down0} -> ${down} during the stall`);
  assert.ok(slowed >= 1, `${slowed} connections slowed during the stall`);
  await exit;
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
  /* how it went, as runs of batches per step (for a failure's reader; not asserted) */
  const runs = (st) => st.reduce((a, x) => (a.length && a.at(-1)[0] === x ? a.at(-1)[1]++ : a.push([x, 1]), a), [])
    .map(([x, n]) => `${x}x${n}`).join(' ');
  console.log(`backpressure: steps after the stall, classic ${runs(steps)}; compact ${runs(stepsC)}`);
  assert.ok(stepsC.some((st) => st < stepsC[0]), `compact never moved back up: steps ${stepsC}`);
  assert.ok(down - down0 >= 2, `rate_down ${down0} -> ${down}: both connections moved`);
});
