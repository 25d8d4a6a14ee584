// The state hash (issue 39 item 1, PROTOCOL.md 1.4): every key record a 1.4 connection
// receives carries the instance's state hash after its tick, the value GET .../frame
// reports for that tick; a 1.3 connection gets the same records without it (its bytes
// are those of before 1.4), in both codings; and `ponytail sim` of the same definition
// under the same motion reports the same hash for the same number of ticks.
//
// Nothing here depends on the machine's speed: records and REST frames are matched by
// tick number, whichever ticks a loaded machine lets the connections see.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { encodeRecord } from '../../../proto/js/ponytail-proto.mjs';
import { Client, Viewer } from './client.mjs';
import { def, startDaemon, tempDir, until, WAIT_MS } from './daemon.mjs';

const CLI = join(process.env.PT_BUILD || 'build', 'bin', 'ponytail');
const HEX16 = /^[0-9a-f]{16}$/;
const hex = (h) => h.toString(16).padStart(16, '0');
// a head that moves every tick, so that every tick's hash differs from the one before
const motion = { motion: 'shake', amplitude: 30, period: 0.5 };

let d; // every record a keyframe: each tick's hash reaches a 1.4 connection
let dd; // keyframes once a second: deltas between them
before(async () => {
  [d, dd] = await Promise.all([startDaemon({ args: ['--keyframe-interval', '1'] }), startDaemon()]);
});
after(async () => { await Promise.all([d?.cleanup(), dd?.cleanup()]); });

async function create(daemon, name) {
  const r = await daemon.req('POST', '/v1/instances', def({ name, room: name, driver: motion }));
  assert.equal(r.status, 201, r.text);
  return BigInt(r.json.id);
}

async function watcher(daemon, id, minor, features) {
  const c = await Client.open(daemon.ws, { minor, features, name: `hash-${minor}-${features ?? 0}` });
  assert.equal(c.welcome.minor, minor);
  c.send({ type: 'subscribe', room: '', ids: [id] });
  return c;
}

// The records of `id` by tick (classic batches carry the tick; compact ones a gap from
// welcome's tick, PROTOCOL.md 11.1).
function recordsByTick(c, batches, id) {
  const out = new Map();
  let tick = c.welcome.tick;
  for (const b of batches) {
    tick = b.type === 'frame_batch_c' ? tick + b.tick_gap : b.tick;
    for (const r of b.records) if (r.id === id) out.set(tick, { ...r, header_minor: b.header_minor });
  }
  return out;
}

test('a 1.4 keyframe carries the hash GET .../frame reports for its tick; 1.3 gets it without', async () => {
  const id = await create(d, 'keyed');
  const c4 = await watcher(d, id, 4), c3 = await watcher(d, id, 3);
  const v4 = new Viewer(), v3 = new Viewer();
  v4.feed(await c4.next('instance_event')), v3.feed(await c3.next('instance_event'));
  const b4 = [], b3 = [];
  const seen = () => recordsByTick(c4, b4, id);
  const matched = [];
  await until(async () => {
    b4.push(...c4.msgs.filter((m) => m.type === 'frame_batch'));
    c4.msgs = c4.msgs.filter((m) => m.type !== 'frame_batch');
    const f = (await d.req('GET', `/v1/instances/${id}/frame`)).json;
    assert.match(f.state_hash, HEX16);
    const rec = seen().get(BigInt(f.tick));
    if (rec) matched.push([f, rec]);
    return matched.length >= 3;
  }, () => `3 REST frames of ticks a 1.4 viewer got (${matched.length})`);
  for (const [f, rec] of matched) {
    assert.equal(rec.header_minor, 4);
    assert.equal(rec.flags & 1, 1, `tick ${f.tick}: a keyframe`);
    assert.equal(hex(rec.state_hash), f.state_hash, `tick ${f.tick}`);
  }
  // Different ticks, different hashes (the head moves).
  assert.equal(new Set(matched.map(([f]) => f.state_hash)).size, new Set(matched.map(([f]) => f.tick)).size);

  // The 1.3 viewer: the same records of the same ticks, without the hash, in 1.3 batches
  const last = [...seen().keys()].at(-1);
  await c3.collectUntil('frame_batch', (l) => l.some((b) => b.tick >= last), `1.3 batches up to tick ${last}`)
    .then((l) => b3.push(...l));
  const got3 = recordsByTick(c3, b3, id);
  let same = 0;
  for (const [tick, r4] of seen()) {
    const r3 = got3.get(tick);
    if (!r3) continue; /* a tick one of them skipped (a slow connection) */
    same++;
    assert.equal(r3.header_minor, 3);
    assert.equal(r3.state_hash, undefined);
    const { state_hash: h, header_minor: m4, ...plain } = r4;
    const { header_minor: m3, ...old } = r3;
    /* the 1.3 record is the 1.4 one minus the hash's 8 bytes: data_len 8 less */
    assert.deepEqual(encodeRecord(old), encodeRecord(plain), `tick ${tick}`);
    assert.equal(encodeRecord(r4).length, encodeRecord(old).length + 8);
  }
  assert.ok(same >= 3, `${same} ticks seen by both`);
  /* and both decode, to the same points */
  for (const b of b4) v4.feed(b);
  for (const b of b3) v3.feed(b);
  assert.equal(v4.errors + v3.errors, 0, String(v4.lastError ?? v3.lastError));
  c4.close(), c3.close();
});

test('deltas are the same bytes at 1.3 and 1.4; keyframes differ by the hash alone (both codings)', async () => {
  const id = await create(dd, 'deltas');
  const cs = [await watcher(dd, id, 4), await watcher(dd, id, 3), await watcher(dd, id, 4, 1), await watcher(dd, id, 3, 1)];
  /* until each has seen a periodic keyframe after its first (one a second) */
  const lists = await Promise.all(cs.map((c, i) => {
    const type = i >= 2 ? 'frame_batch_c' : 'frame_batch';
    return c.collectUntil(type, (l) => l.flatMap((b) => b.records).filter((r) => r.id === id && r.flags & 1).length >= 2,
      `${type} 1.${c.welcome.minor}: two keyframes`, 3 * WAIT_MS);
  }));
  const [k4, k3, c4, c3] = lists.map((l, i) => recordsByTick(cs[i], l, id));
  for (const [a, b, what] of [[k4, k3, 'classic'], [c4, c3, 'compact']]) {
    let keys = 0, deltas = 0;
    for (const [tick, r4] of a) {
      const r3 = b.get(tick);
      if (!r3) continue;
      assert.equal(r4.header_minor, 4, what);
      assert.equal(r3.header_minor, what === 'classic' ? 3 : 2, what);
      assert.equal(r3.state_hash, undefined);
      if (r4.flags & 1) {
        assert.equal(typeof r4.state_hash, 'bigint', `${what} tick ${tick}: a keyframe's hash`);
        keys++;
      } else {
        assert.equal(r4.state_hash, undefined);
        deltas++;
      }
      if (what === 'compact') {
        assert.deepEqual([r4.id, r4.flags, r4.step, [...r4.body]], [r3.id, r3.flags, r3.step, [...r3.body]], `tick ${tick}`);
      } else {
        const { state_hash: h, header_minor: m4, ...plain } = r4;
        const { header_minor: m3, ...old } = r3;
        assert.deepEqual(encodeRecord(plain), encodeRecord(old), `tick ${tick}`);
      }
    }
    assert.ok(keys >= 1 && deltas >= 1, `${what}: ${keys} keyframes and ${deltas} deltas seen by both`);
  }
  /* a keyframe's hash is the same in both codings */
  for (const [tick, r] of k4) if (r.state_hash !== undefined && c4.get(tick)?.state_hash !== undefined)
    assert.equal(c4.get(tick).state_hash, r.state_hash, `tick ${tick}`);
  for (const c of cs) c.close();
});

test('ponytail sim of the same definition and motion reports the daemon\'s hash for the same tick', async () => {
  /* subscribed to the room first: the added event's tick is the instance's first */
  const c = await Client.open(d.ws, { minor: 4 });
  c.send({ type: 'subscribe', room: 'bake', ids: [] });
  await c.ping();
  const body = def({ name: 'bake', room: 'bake', prewarm_s: 0.5 });
  const r = await d.req('POST', '/v1/instances', { ...body, driver: motion });
  assert.equal(r.status, 201, r.text);
  const added = await c.next('instance_event', (m) => m.kind === 'added');
  const f = await until(async () => {
    const g = (await d.req('GET', `/v1/instances/${r.json.id}/frame`)).json;
    return BigInt(g.tick) >= added.tick + 5n && g;
  }, 'a frame 5 ticks after the first');
  c.close();
  const ticks = Number(BigInt(f.tick) - added.tick) + 1;
  const file = join(tempDir(), 'bake.json');
  writeFileSync(file, JSON.stringify(body));
  const run = () => spawnSync(CLI, ['sim', file, '--ticks', String(ticks), '--motion', motion.motion,
    '--amplitude', String(motion.amplitude), '--period', String(motion.period)], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const out = run();
  assert.equal(out.status, 0, out.stderr);
  const lines = out.stdout.trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(lines.length, ticks);
  for (const l of lines) assert.match(l.state_hash, HEX16);
  assert.equal(lines.at(-1).state_hash, f.state_hash, `tick ${f.tick} (the instance's ${ticks}th)`);
  assert.notEqual(lines.at(-2).state_hash, f.state_hash); /* one tick fewer is another state */
  assert.deepEqual(lines.at(-1).strands, f.strands);
  assert.equal(run().stdout, out.stdout); /* and again the same */
});
