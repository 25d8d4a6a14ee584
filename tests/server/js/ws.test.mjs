// WebSocket against a live daemon: the protocol of proto/PROTOCOL.md end to end.
//
// Nothing here depends on the machine's speed (issue 37): frames are checked for what the
// protocol makes exact (tick order, keyframes after every missed tick, decoding, the same
// bytes for every subscriber) over as many batches as a case needs, waited for with a
// generous deadline; "after the daemon handled X" is a ping sent after X (its pong comes
// after whatever X caused), never a sleep.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { encodeMessage } from '../../../proto/js/ponytail-proto.mjs';
import { checkStream, Client, Viewer } from './client.mjs';
import { bearer, def, metric, startDaemon, until } from './daemon.mjs';

let d;
const ADMIN = 'ws-admin-token-0123456789';
before(async () => { d = await startDaemon({ args: ['--pose-rate', '40', '--max-subscriptions', '4', '--admin-token', ADMIN] }); });
after(async () => { await d.cleanup(); });

async function create(over = {}) {
  const r = await d.req('POST', '/v1/instances', def(over));
  assert.equal(r.status, 201, r.text);
  return r.json;
}

const closing = (m, code) => m.type === 'error' && m.code === code && (m.flags & 1) === 1;

// Every frame_batch c receives from now on, in order (left in c.msgs for next() too).
function recordBatches(c) {
  const got = [];
  c.waiters.push((m) => { if (m.type === 'frame_batch') got.push(m); return false; });
  return got;
}

// One instance's records in batches, for checkStream.
const recsOf = (batches, id) => batches.flatMap((b) => b.records.filter((r) => r.id === id)
  .map((r) => ({ tick: b.tick, step: r.step ?? 1, key: (r.flags & 1) === 1, seq: b.seq, rec: r })));

// Batches whose tick is after the daemon handled what c sent before the ping that got
// `pong`: the ticks began after the pong was made (server_time_us is the tick's deadline;
// a 100 ms margin covers the wall clock drifting from the tick clock).
const afterPong = (pong) => (b) => b.server_time_us > pong.server_time_us + 100000n;

describe('handshake', () => {
  test('hello gets welcome with the server parameters', async () => {
    const c = await Client.open(d.ws);
    assert.equal(c.welcome.major, 1);
    assert.equal(c.welcome.minor, 0);
    assert.equal(c.welcome.tick_hz, 60);
    assert.equal(c.welcome.substeps, 4);
    assert.equal(c.welcome.max_message, 4096);
    assert.equal(c.welcome.max_subscriptions, 4);
    assert.ok(c.welcome.tick > 0n);
    assert.match(c.welcome.server_version, /^ponytaild/);
    c.close();
  });

  test('a handshake without the ponytail.v1 subprotocol is refused', async () => {
    await assert.rejects(Client.open(d.ws, { protocol: 'chat', hello: false }));
  });

  test('a message before hello: error hello_required, close 1002', async () => {
    const c = await Client.open(d.ws, { hello: false });
    c.send({ type: 'ping', client_time_us: 5n });
    const e = await c.next('error');
    assert.ok(closing(e, 9), JSON.stringify(e, (k, v) => typeof v === 'bigint' ? String(v) : v));
    assert.equal((await c.closed).code, 1002);
  });

  test('ping gets pong with the client time echoed', async () => {
    const c = await Client.open(d.ws);
    c.send({ type: 'ping', client_time_us: 123456789n });
    const p = await c.next('pong');
    assert.equal(p.client_time_us, 123456789n);
    assert.ok(p.server_time_us > 1600000000000000n);
    c.close();
  });
});

describe('subscriptions and frames', () => {
  test('subscribe by id: added with the shape, then a batch every tick, decodable', async () => {
    const a = await create({ name: 'sub', room: 'frames', driver: { motion: 'shake', amplitude: 40, period: 0.5 } });
    const c = await Client.open(d.ws);
    /* before the subscription: the skips this connection causes all come after it */
    const skipped0 = await metric(d, 'ponytail_ws_frames_skipped_total');
    c.send({ type: 'subscribe', room: '', ids: [BigInt(a.id)] });
    const added = await c.next('instance_event');
    assert.equal(added.kind, 'added');
    assert.equal(added.instance_id, BigInt(a.id));
    assert.equal(added.name, 'sub');
    assert.equal(added.room, 'frames');
    assert.equal(added.shape.length, 1);
    assert.equal(added.shape[0].points, 8);
    const v = new Viewer();
    v.feed(added);
    /* A second's worth of batches, however long they take to come. Every tick the daemon
     * made from the first on is in them, or is one it skipped for this connection: a
     * starved service thread may skip ticks (the protocol's answer to lateness), and then
     * the next record is a keyframe, and the skip is counted in /metrics (each gap begins
     * with a counted tick; read after the batches arrived, so it holds their skips). */
    const batches = await c.take('frame_batch', 60, '60 batches');
    const skipped = (await metric(d, 'ponytail_ws_frames_skipped_total')) - skipped0;
    for (const b of batches) {
      assert.equal(b.records.length, 1);
      v.batch(b);
    }
    assert.equal(v.errors, 0, String(v.lastError));
    const recs = recsOf(batches, BigInt(a.id));
    checkStream(recs, 'subscriber', { fromStart: true });
    const gaps = recs.filter((r, i) => i > 0 && r.tick !== recs[i - 1].tick + 1n).length;
    assert.ok(gaps <= skipped, `${gaps} gaps in the ticks, ${skipped} frames counted as skipped`);
    /* The decoded root is at the anchor of the moving head, within the codec's 1 mm. */
    const f = (await d.req('GET', `/v1/instances/${a.id}/frame`)).json;
    const pts = v.points.get(BigInt(a.id));
    assert.equal(pts.length, 8 * 3);
    assert.ok(Math.abs(pts[1] - f.strands[0][0][1]) < 0.002);
    c.close();
  });

  test('unknown ids get not_found and the connection stays open', async () => {
    const c = await Client.open(d.ws);
    c.send({ type: 'subscribe', room: '', ids: [987654321n] });
    const e = await c.next('error');
    assert.equal(e.code, 6);
    assert.equal(e.flags & 1, 0);
    assert.equal(e.instance_id, 987654321n);
    c.send({ type: 'ping', client_time_us: 1n });
    await c.next('pong');
    c.close();
  });

  test('a room covers present and future instances; changed, reset and removed reach it', async () => {
    const a = await create({ room: 'room-events' });
    const c = await Client.open(d.ws);
    c.send({ type: 'subscribe', room: 'room-events', ids: [] });
    const addedA = await c.next('instance_event', (m) => m.kind === 'added');
    assert.equal(addedA.instance_id, BigInt(a.id));
    const b = await create({ room: 'room-events', name: 'later' });
    const addedB = await c.next('instance_event', (m) => m.kind === 'added');
    assert.equal(addedB.instance_id, BigInt(b.id));
    await c.next('frame_batch', (m) => m.records.some((r) => r.id === BigInt(b.id)));
    await d.req('PATCH', `/v1/instances/${b.id}`, { strands: [{ points: 4 }] }, bearer(b.token));
    const changed = await c.next('instance_event', (m) => m.kind === 'changed');
    assert.equal(changed.shape[0].points, 4);
    /* batches of earlier ticks may still be queued here: the first from the event's tick on */
    const next = await c.next('frame_batch', (m) => m.tick >= changed.tick && m.records.some((r) => r.id === BigInt(b.id)));
    assert.equal(next.records.find((r) => r.id === BigInt(b.id)).flags & 1, 1, 'keyframe after changed');
    await d.req('POST', `/v1/instances/${a.id}/reset`, undefined, bearer(a.token));
    assert.equal((await c.next('instance_event', (m) => m.kind === 'reset')).instance_id, BigInt(a.id));
    await d.req('DELETE', `/v1/instances/${a.id}`, undefined, bearer(a.token));
    const removed = await c.next('instance_event', (m) => m.kind === 'removed');
    assert.equal(removed.instance_id, BigInt(a.id));
    /* the room's frames go on (b is still in it), from the removal's tick on without a */
    const after = await c.collectUntil('frame_batch', (l) => l.filter((m) => m.tick >= removed.tick).length >= 5,
      'five batches from the removal on');
    for (const m of after.filter((x) => x.tick >= removed.tick)) {
      assert.ok(m.records.every((r) => r.id !== BigInt(a.id)), `tick ${m.tick} still has the removed instance`);
      assert.ok(m.records.some((r) => r.id === BigInt(b.id)), `tick ${m.tick} lacks the instance still in the room`);
    }
    c.close();
  });

  test('each instance is encoded once per tick: every subscriber gets the same bytes', async () => {
    const a = await create({ room: 'shared', driver: { motion: 'nod', period: 0.5 } });
    const cs = await Promise.all([0, 1, 2].map(() => Client.open(d.ws)));
    const runs = cs.map(recordBatches);
    for (const c of cs) c.send({ type: 'subscribe', room: 'shared', ids: [] });
    /* A tick that all three received together with the tick before (each continues the
     * shared stream) carries the same record bytes for all three: the one encoding of
     * that tick. A subscriber that missed the tick before gets a keyframe instead (the
     * protocol's answer to a late connection), so such ticks are not compared. */
    const byTick = runs.map(() => new Map());
    let compared = 0;
    const compare = () => {
      for (const [i, bs] of runs.entries()) for (const b of bs.splice(0)) byTick[i].set(b.tick, b.records[0]);
      compared = 0;
      for (const [tick, rec] of byTick[0]) {
        if (!byTick.every((m) => m.has(tick) && m.has(tick - 1n))) continue;
        for (const other of [byTick[1].get(tick), byTick[2].get(tick)])
          assert.deepEqual(Buffer.from(other.data), Buffer.from(rec.data), `tick ${tick}`);
        compared++;
      }
      return compared >= 10;
    };
    await until(compare, () => `10 ticks received by all three in a row (${compared} so far)`);
    assert.ok(a.id > 0);
    for (const c of cs) c.close();
  });

  test('subscriptions are limited (--max-subscriptions 4): the excess gets error limit', async () => {
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push(BigInt((await create({ room: `lim${i}` })).id));
    const c = await Client.open(d.ws);
    c.send({ type: 'subscribe', room: 'lim-room', ids: ids.slice(0, 4) });
    const e = await c.next('error');
    assert.equal(e.code, 7);
    assert.equal(e.flags & 1, 0);
    assert.equal(e.instance_id, ids[3]); /* the room took one of the four */
    const added = [];
    for (let i = 0; i < 3; i++) added.push((await c.next('instance_event')).instance_id);
    assert.deepEqual(added, ids.slice(0, 3));
    c.send({ type: 'unsubscribe', room: 'lim-room', ids: [] });
    c.send({ type: 'subscribe', room: '', ids: [ids[4]] });
    assert.equal((await c.next('instance_event')).instance_id, ids[4]);
    c.close();
  });

  test('an instance moving rooms is removed from the old room\'s view and added to the new one', async () => {
    const a = await create({ room: 'move-from' });
    const from = await Client.open(d.ws), to = await Client.open(d.ws);
    from.send({ type: 'subscribe', room: 'move-from', ids: [] });
    to.send({ type: 'subscribe', room: 'move-to', ids: [] });
    await from.next('instance_event', (m) => m.kind === 'added');
    await from.next('frame_batch');
    const r = await d.req('PATCH', `/v1/instances/${a.id}`, { room: 'move-to' }, bearer(a.token));
    assert.equal(r.status, 200, r.text);
    const removed = await from.next('instance_event');
    assert.equal(removed.kind, 'removed');
    const added = await to.next('instance_event');
    assert.equal(added.kind, 'added');
    assert.equal(added.room, 'move-to');
    const first = await to.next('frame_batch');
    assert.equal(first.records[0].id, BigInt(a.id));
    assert.equal(first.records[0].flags & 1, 1, 'first record in the new room is a keyframe');
    /* The old room's subscriber: nothing after the removed event. Checked once the new
     * room's has had ten more ticks and a ping on the old one came back (everything the
     * daemon wrote to it before the pong has arrived). */
    await to.take('frame_batch', 10, 'ten batches in the new room');
    await from.ping();
    const later = from.msgs.filter((m) => m.type === 'frame_batch' && m.seq > removed.seq);
    assert.equal(later.length, 0, `the old room got frames of ticks ${later.map((m) => m.tick)} after its removed event`);
    from.close();
    to.close();
  });

  test('keyframe_request makes the next record a keyframe', async () => {
    const a = await create();
    const c = await Client.open(d.ws);
    c.send({ type: 'subscribe', room: '', ids: [BigInt(a.id)] });
    await c.next('frame_batch');
    const mark = c.seqNo; /* what arrives from here on was written after this point */
    c.send({ type: 'keyframe_request', room: '', ids: [BigInt(a.id)] });
    /* The request is handled before the ping after it: the first record written after the
     * pong comes from a connection that no longer counts as having the instance's history,
     * so it is a keyframe unless one came between the request and the pong. Records
     * before that may be deltas written before the request was read. */
    const pong = await c.ping();
    const batches = await c.collectUntil('frame_batch', (l) => l.some((b) => b.seq > pong.seq), 'a batch after the pong');
    const since = batches.filter((b) => b.seq > mark);
    const firstKey = since.findIndex((b) => (b.records[0].flags & 1) === 1);
    const firstAfter = since.findIndex((b) => b.seq > pong.seq);
    assert.ok(firstKey >= 0 && firstKey <= firstAfter,
      `first keyframe at batch ${firstKey}, first batch after the pong at ${firstAfter} (ticks ${since.map((b) => b.tick)})`);
    c.close();
  });
});

describe('head poses', () => {
  test('authorize, publish, and the pose comes back applied with its seq', async () => {
    const a = await create({ room: 'poses' });
    const c = await Client.open(d.ws);
    c.send({ type: 'authorize', instance_id: BigInt(a.id), token: 'f'.repeat(32) });
    const e = await c.next('error');
    assert.equal(e.code, 5);
    assert.equal(e.flags & 1, 0);
    c.send({ type: 'authorize', instance_id: BigInt(a.id), token: a.token });
    c.send({ type: 'subscribe', room: '', ids: [BigInt(a.id)] });
    await c.next('frame_batch');
    c.send({ type: 'head_pose', instance_id: BigInt(a.id), seq: 7, client_time_us: 0n, flags: 0, p: [0.5, 1.5, 0], q: [0, 0, 0, 1] });
    const b = await c.next('frame_batch', (m) => m.records[0].last_seq === 7);
    assert.deepEqual(b.records[0].head_p, [0.5, 1.5, 0]);
    /* An older seq is dropped: every batch from here to the first of a tick that began
     * after the daemon handled it (a ping later) still says seq 7 at 0.5. */
    c.send({ type: 'head_pose', instance_id: BigInt(a.id), seq: 3, client_time_us: 0n, flags: 0, p: [9, 9, 9], q: [0, 0, 0, 1] });
    const pong = await c.ping();
    const since = (l) => l.filter((x) => x.seq > b.seq); /* (those before b are older) */
    const later = await c.collectUntil('frame_batch', (l) => since(l).some(afterPong(pong)), 'a batch of a tick after the pong');
    for (const m of since(later))
      assert.ok(m.records[0].last_seq === 7 && m.records[0].head_p[0] === 0.5, `tick ${m.tick}: seq ${m.records[0].last_seq} at ${m.records[0].head_p}`);
    c.close();
  });

  test('the admin token authorizes any instance, as it does over REST', async () => {
    const a = await create({ room: 'admin' });
    const c = await Client.open(d.ws);
    c.send({ type: 'authorize', instance_id: 999999n, token: ADMIN });
    assert.equal((await c.next('error')).code, 6); /* not_found, as with an instance token */
    c.send({ type: 'authorize', instance_id: BigInt(a.id), token: ADMIN });
    c.send({ type: 'subscribe', room: '', ids: [BigInt(a.id)] });
    await c.next('frame_batch');
    c.send({ type: 'head_pose', instance_id: BigInt(a.id), seq: 11, client_time_us: 0n, flags: 0, p: [0.25, 1.5, 0], q: [0, 0, 0, 1] });
    const b = await c.next('frame_batch', (m) => m.records[0].last_seq === 11);
    assert.deepEqual(b.records[0].head_p, [0.25, 1.5, 0]);
    c.close();
  });

  test('poses need authorization; absurd poses and floods are refused and counted', async () => {
    const a = await create();
    const c = await Client.open(d.ws);
    const pose = (seq, p = [0, 1.5, 0]) => ({ type: 'head_pose', instance_id: BigInt(a.id), seq, client_time_us: 0n, flags: 0, p, q: [0, 0, 0, 1] });
    c.send(pose(1));
    assert.equal((await c.next('error')).code, 5);
    c.send({ type: 'authorize', instance_id: BigInt(a.id), token: a.token });
    c.send(pose(2, [0, 1e6, 0]));
    assert.equal((await c.next('error')).code, 7);
    const rejected = await metric(d, 'ponytail_poses_rejected_total', 'reason="invalid"');
    assert.ok(rejected >= 1);
    /* --pose-rate 40, a burst of 10: 400 at once are refused unless the daemon took
     * nearly ten seconds to read them */
    for (let i = 0; i < 400; i++) c.send(pose(10 + i));
    const e = await c.next('error', (m) => m.code === 8);
    assert.equal(e.flags & 1, 0);
    assert.ok((await metric(d, 'ponytail_poses_rejected_total', 'reason="rate"')) > 0);
    c.send({ type: 'ping', client_time_us: 1n });
    await c.next('pong');
    c.close();
  });
});

describe('protocol violations close only that connection', () => {
  test('garbage: bad_message then 1002; oversize: too_large then 1009; text: 1003', async () => {
    const a = await create({ room: 'bystander' });
    const bystander = await Client.open(d.ws);
    const seen = recordBatches(bystander), view = new Viewer();
    bystander.waiters.push((m) => { view.feed(m); return false; });
    bystander.send({ type: 'subscribe', room: 'bystander', ids: [] });
    await bystander.next('frame_batch');

    const g = await Client.open(d.ws);
    g.sendRaw(new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]));
    assert.ok(closing(await g.next('error'), 1));
    assert.equal((await g.closed).code, 1002);

    const v = await Client.open(d.ws, { hello: false });
    const bad = encodeMessage({ type: 'hello', major: 1, minor: 0, client_name: 'x' });
    bad[2] = 2; /* major 2 */
    v.sendRaw(bad);
    assert.ok(closing(await v.next('error'), 2));
    assert.equal((await v.closed).code, 1002);

    const o = await Client.open(d.ws);
    o.sendRaw(new Uint8Array(5000));
    assert.ok(closing(await o.next('error'), 4));
    assert.equal((await o.closed).code, 1009);

    const t = await Client.open(d.ws);
    t.ws.send('hello?');
    assert.equal((await t.closed).code, 1003);

    const u = await Client.open(d.ws);
    const unk = encodeMessage({ type: 'ping', client_time_us: 0n });
    unk[4] = 0x42;
    u.sendRaw(unk);
    const ue = await u.next('error');
    assert.equal(ue.code, 3);
    assert.equal(ue.flags & 1, 0);
    /* A server type from a client is an unknown type whatever its payload (PROTOCOL.md
     * 3): a pong cut short, and frame_batch_c 0x87 at minor 0, are answered as a whole
     * pong is, the connection kept open. */
    for (const bytes of [
      encodeMessage({ type: 'pong', client_time_us: 0n, server_time_us: 0n }),
      Uint8Array.of(0x50, 0x54, 1, 0, 0x84, 0, 3, 0, 0, 0, 1, 2, 3),
      Uint8Array.of(0x50, 0x54, 1, 0, 0x87, 0, 3, 0, 0, 0, 0, 0, 0),
    ]) {
      u.sendRaw(bytes);
      const se = await u.next('error');
      assert.deepEqual([se.code, se.flags & 1, se.about_type], [3, 0, bytes[4]]);
    }
    u.send({ type: 'hello', major: 1, minor: 0, client_name: 'twice' });
    assert.ok(closing(await u.next('error'), 1));

    /* The bystander never noticed: twelve more batches come, and from its subscription on
     * its stream is whole (ticks in order, a keyframe after any tick it missed) and
     * decodes, with no error message. */
    await bystander.take('frame_batch', 12, 'twelve more batches for the bystander', true);
    assert.ok(seen.every((b) => b.records.length === 1 && b.records[0].id === BigInt(a.id)));
    checkStream(recsOf(seen, BigInt(a.id)), 'bystander', { fromStart: true });
    assert.equal(view.errors, 0, String(view.lastError));
    assert.deepEqual(bystander.msgs.filter((m) => m.type === 'error'), []);
    bystander.close();
  });
});
