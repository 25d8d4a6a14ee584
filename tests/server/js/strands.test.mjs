// Whole avatars on the wire (issue 38 item 3, PROTOCOL.md 1.3): an instance of up to 256
// strands reaches a 1.3 connection whole and decodes to the server's points; a 1.0-1.2
// connection, whose shape count stops at 32, is told which instance it cannot be sent
// (error `limit` naming it) and gets no event and no record of it, while the rest of its
// room flows; an instance that grows past 32 strands is removed for it, and added again
// when it shrinks.
//
// Nothing here depends on the machine's speed: "after the daemon handled X" is a ping sent
// after X, batches are counted, never timed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, Viewer } from './client.mjs';
import { bearer, def, startDaemon } from './daemon.mjs';

let d;
before(async () => { d = await startDaemon(); });
after(async () => { await d.cleanup(); });

// n strands hanging still from a grid (no collider, no driver): at rest after the prewarm,
// so the points a viewer decodes can be compared with GET .../frame whenever it is read.
// Points 2..16 by strand, 4,096 at most for 256 strands.
const strands = (n) => Array.from({ length: n }, (_, i) => ({
  anchor: [(i % 16) * 0.02 - 0.15, 0.1 - Math.floor(i / 16) * 0.02, -0.1],
  direction: [0, -1, 0], points: 2 + (i % 15), segment_length: 0.01,
}));

async function create(name, room, n) {
  const r = await d.req('POST', '/v1/instances', def({ name, room, strands: strands(n), colliders: [], prewarm_s: 1 }));
  assert.equal(r.status, 201, r.text);
  return r.json;
}

// The first n batches that came after message `mark` (a pong: after the daemon handled
// what was sent before its ping; an instance_event: from its keyframe on). Ticks come
// whatever the machine's speed, so counting them is exact.
async function batchesAfter(c, mark, n) {
  const got = await c.collectUntil('frame_batch', (l) => l.filter((b) => b.seq > mark.seq).length >= n, `${n} batches`);
  return got.filter((b) => b.seq > mark.seq);
}

// A batch with the records of one instance only (a Viewer fed one instance's event).
const only = (b, id) => ({ ...b, records: b.records.filter((r) => r.id === id) });

const ids = (batches) => new Set(batches.flatMap((b) => b.records.map((r) => r.id)));

describe('instances of more than 32 strands', () => {
  test('/v1/info says 256 strands and 4,096 points', async () => {
    const info = (await d.req('GET', '/v1/info')).json;
    assert.equal(info.limits.strands, 256);
    assert.equal(info.limits.points, 4096);
  });

  test('a 256-strand instance reaches a 1.3 viewer whole and decodes to the server\'s points', async () => {
    const big = await create('big', 'avatars', 256);
    const total = strands(256).reduce((n, s) => n + s.points, 0);
    const c = await Client.open(d.ws, { minor: 3 });
    assert.equal(c.welcome.minor, 3);
    c.send({ type: 'subscribe', room: '', ids: [BigInt(big.id)] });
    const added = await c.next('instance_event');
    assert.equal(added.kind, 'added');
    assert.equal(added.header_minor, 3);
    assert.equal(added.shape.length, 256);
    assert.deepEqual(added.shape.map((s) => s.points), strands(256).map((s) => s.points));
    const v = new Viewer();
    v.feed(added);
    for (const b of await c.take('frame_batch', 10)) v.batch(b);
    assert.equal(v.errors, 0, String(v.lastError));
    const pts = v.points.get(BigInt(big.id));
    assert.equal(pts.length, 3 * total);
    const f = (await d.req('GET', `/v1/instances/${big.id}/frame`)).json;
    let worst = 0, k = 0;
    for (const s of f.strands) for (const p of s) {
      worst = Math.max(worst, Math.hypot(p[0] - pts[k], p[1] - pts[k + 1], p[2] - pts[k + 2]));
      k += 3;
    }
    assert.equal(k, 3 * total, 'every point compared');
    // the codec's bound (welcome.max_error_m) plus what a still strand may drift in a tick
    assert.ok(worst <= c.welcome.max_error_m + 1e-4, `a decoded point is ${worst} m from the server's`);
    c.close();
  });

  test('a 1.2 viewer is told which instance it cannot get and gets the rest of its room', async () => {
    const big = await create('big2', 'mixed', 40);
    const small = await create('small', 'mixed', 3);
    const c = await Client.open(d.ws, { minor: 2 });
    assert.equal(c.welcome.minor, 2);
    c.send({ type: 'subscribe', room: 'mixed', ids: [] });
    const e = await c.next('error');
    assert.equal(e.code, 7, 'limit');
    assert.equal(e.flags & 1, 0, 'the connection stays open');
    assert.equal(e.instance_id, BigInt(big.id));
    assert.match(e.text, /40 strands: protocol 1\.2 carries 32 \(1\.3 carries 256\)/);
    const pong = await c.ping();
    const batches = await batchesAfter(c, pong, 10);
    assert.deepEqual([...ids(batches)], [BigInt(small.id)], 'records of the small instance only');
    const events = c.msgs.filter((m) => m.type === 'instance_event');
    assert.ok(events.every((m) => m.instance_id === BigInt(small.id)), 'no event of the large one');
    c.close();
    // by id, too (a connection whose room covers it was told already)
    const byId = await Client.open(d.ws, { minor: 2 });
    byId.send({ type: 'subscribe', room: '', ids: [BigInt(big.id)] });
    const e2 = await byId.next('error');
    assert.equal(e2.code, 7);
    assert.equal(e2.instance_id, BigInt(big.id));
    assert.equal((await byId.ping()).type, 'pong', 'the connection stays open');
    assert.ok(!byId.msgs.some((m) => m.type === 'instance_event'), 'no event of it');
    byId.close();
  });

  test('growing past 32 strands removes an instance for a 1.2 viewer; shrinking adds it back', async () => {
    const a = await create('grows', 'growing', 20);
    const mate = await create('mate', 'growing', 2); // keeps the 1.2 viewer's batches coming
    const old = await Client.open(d.ws, { minor: 2 });
    const cur = await Client.open(d.ws, { minor: 3 });
    for (const c of [old, cur]) {
      c.send({ type: 'subscribe', room: 'growing', ids: [] });
      await c.next('instance_event', (m) => m.kind === 'added' && m.instance_id === BigInt(a.id));
      await c.next('instance_event', (m) => m.kind === 'added' && m.instance_id === BigInt(mate.id));
    }
    const grow = await d.req('PATCH', `/v1/instances/${a.id}`, { strands: strands(40) }, bearer(a.token));
    assert.equal(grow.status, 200, grow.text);
    const removed = await old.next('instance_event', (m) => m.instance_id === BigInt(a.id));
    assert.equal(removed.kind, 'removed');
    const e = await old.next('error');
    assert.equal(e.code, 7);
    assert.equal(e.instance_id, BigInt(a.id));
    const changed = await cur.next('instance_event', (m) => m.instance_id === BigInt(a.id));
    assert.equal(changed.kind, 'changed');
    assert.equal(changed.shape.length, 40);
    // the 1.3 viewer decodes the grown instance; the 1.2 one gets none of its records
    const v = new Viewer();
    v.feed(changed);
    for (const b of await batchesAfter(cur, changed, 5)) v.batch(only(b, BigInt(a.id)));
    assert.equal(v.points.get(BigInt(a.id)).length, 3 * strands(40).reduce((n, s) => n + s.points, 0));
    assert.equal(v.errors, 0, String(v.lastError));
    const opong = await old.ping();
    assert.deepEqual([...ids(await batchesAfter(old, opong, 5))], [BigInt(mate.id)], 'the 1.2 viewer: its mate only');
    const shrink = await d.req('PATCH', `/v1/instances/${a.id}`, { strands: strands(32) }, bearer(a.token));
    assert.equal(shrink.status, 200, shrink.text);
    const back = await old.next('instance_event', (m) => m.instance_id === BigInt(a.id));
    assert.equal(back.kind, 'added');
    assert.equal(back.shape.length, 32);
    const v2 = new Viewer();
    v2.feed(back);
    const after2 = await batchesAfter(old, back, 5);
    for (const b of after2) v2.batch(only(b, BigInt(a.id)));
    assert.equal(v2.points.get(BigInt(a.id)).length, 3 * strands(32).reduce((n, s) => n + s.points, 0));
    assert.equal(v2.errors, 0, String(v2.lastError));
    assert.ok(ids(after2).has(BigInt(a.id)), 'the 1.2 viewer gets its records again');
    old.close();
    cur.close();
  });
});
