// Viewers at any rate agree (issue 39 item 4): on one room (a ponytail whose client streams
// poses with velocities, a driven spring-bone bot, a driven verlet bot), viewers at 60,
// 30, 20 and 10 Hz in the classic and the compact coding, one that subscribes late and one
// whose socket stops being read for a second. Every frame each of them decodes is checked
// against the daemon's own state at that tick, which the room's recording gives for every
// tick (GET /v1/rooms/{room}/recording, re-simulated by ponytail replay and checked
// against every state hash it recorded): each point within the welcome's max_error_m
// (plus binary32 rounding). The late viewer's first record is a keyframe of the tick its
// `added` event names or the next.
//
// Nothing here depends on the machine's speed (issue 37): a loaded machine may make a
// viewer miss ticks or be moved down a rate (PROTOCOL.md 5); every frame it does decode
// must still be right, and each viewer must decode enough of them, waited for with a
// generous deadline.
// timeout: 180 (about 10 s of viewing, a recording and a replay; a loaded sanitizer build)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { BatchClock, CompactDecoder, StrandDecoder } from '../../../proto/js/ponytail-proto.mjs';
import { Client } from './client.mjs';
import { BIN, def, request, sleep, startDaemon, tempDir, until } from './daemon.mjs';
import { RawWs } from './rawws.mjs';

const CLI = join(dirname(BIN), 'ponytail');
const ROOM = 'viewers';
let d;
before(async () => { d = await startDaemon({ args: ['--record-seconds', '120', '--write-rate', '0'] }); });
after(() => d.cleanup());

// A viewer's decoded frames: `${id}:${tick}` -> Float32Array, first record per instance.
function viewer(name, compact, welcome) {
  const v = { name, frames: new Map(), errors: [], first: new Map(), added: new Map() };
  const dec = new Map();
  const clock = welcome ? new BatchClock(welcome.tick, welcome.server_time_us, welcome.tick_hz) : null;
  const put = (id, tick, rec, key, fn) => {
    const k = String(id);
    if (!v.first.has(k)) v.first.set(k, { tick: BigInt(tick), key });
    try { v.frames.set(`${k}:${tick}`, fn()); } catch (e) { v.errors.push(`${k}:${tick} ${e.code ?? e.message}`); }
  };
  v.feed = (m) => {
    if (m.type === 'instance_event' && m.kind === 'added') {
      dec.set(String(m.instance_id), compact ? new CompactDecoder(m.shape) : new StrandDecoder(m.shape));
      v.added.set(String(m.instance_id), BigInt(m.tick));
    }
    if (m.type === 'frame_batch')
      for (const r of m.records) put(r.id, m.tick, r, (r.flags & 1) === 1, () => dec.get(String(r.id)).apply(m.tick, r));
    if (m.type === 'frame_batch_c') {
      clock.advance(m);
      for (const r of m.records)
        put(r.id, clock.tick, r, (r.flags & 3) === 3, () => dec.get(String(r.id)).applyCompact(clock.tick, r.step, r).points);
    }
  };
  return v;
}

function follow(c, v) {
  for (const m of c.msgs.splice(0)) v.feed(m);
  c.waiters.push((m) => {
    v.feed(m);
    const i = c.msgs.indexOf(m);
    if (i >= 0) c.msgs.splice(i, 1);
    return false;
  });
}

const rot = (a) => [0, Math.sin(a / 2), 0, Math.cos(a / 2)];

test('viewers at 60, 30, 20 and 10 Hz, classic and compact, late and stalled, each within max_error_m of the daemon at every tick they decode', async () => {
  const create = async (o) => { const r = await request(d.http, 'POST', '/v1/instances', def({ room: ROOM, ...o })); assert.equal(r.status, 201, r.text); return r.json; };
  const pub = await create({ name: 'pub' });
  await create({ name: 'sb-bot', solver: 'springbone', driver: { motion: 'nod', amplitude: 35, period: 0.9 } });
  await create({ name: 'v-bot', driver: { motion: 'shake', amplitude: 30, period: 0.7 } });

  // the publisher: poses with velocities, ~30 Hz, until the end
  const p = await Client.open(d.ws, { minor: 2 });
  p.send({ type: 'authorize', instance_id: BigInt(pub.id), token: pub.token });
  let publishing = true, seq = 0;
  const publisher = (async () => {
    while (publishing) {
      seq++;
      p.send({ type: 'head_pose', instance_id: BigInt(pub.id), seq, client_time_us: 0n, flags: 3,
        p: [0.2 * Math.sin(seq / 6), 1.5, 0], q: rot(0.6 * Math.sin(seq / 9)), v: [0.5, 0, 0], w: [0, 2, 0] });
      await sleep(33);
    }
  })();

  const viewers = [];
  const clients = [];
  for (const compact of [false, true])
    for (const hz of [60, 30, 20, 10]) {
      const c = await Client.open(d.ws, { minor: 2, features: compact ? 1 : 0, name: `${compact ? 'c' : ''}${hz}` });
      const v = viewer(`${compact ? 'compact' : 'classic'} ${hz} Hz`, compact, c.welcome);
      v.bound = c.welcome.max_error_m;
      follow(c, v);
      c.send({ type: 'subscribe', room: ROOM, ids: [], rate_hz: hz });
      viewers.push(v), clients.push(c);
    }
  // the stalled one: a raw socket, every tick, not read for a second once frames flow
  const raw = await RawWs.open(d.wsPort);
  raw.send({ type: 'hello', major: 1, minor: 2, client_name: 'stalled' });
  await until(() => raw.msgs.some((m) => m.type === 'welcome'), 'the stalled viewer\'s welcome');
  const stalled = viewer('stalled', false, null);
  stalled.bound = raw.msgs.find((m) => m.type === 'welcome').max_error_m;
  raw.send({ type: 'subscribe', room: ROOM, ids: [], rate_hz: 0 });
  await until(() => raw.msgs.filter((m) => m.type === 'frame_batch').length >= 10, 'frames to the stalled viewer');
  raw.sock.pause();
  await sleep(1000);
  raw.sock.resume();

  // the late one, at 60 Hz
  const late = await Client.open(d.ws, { minor: 2, name: 'late' });
  const lv = viewer('late', false, late.welcome);
  lv.bound = late.welcome.max_error_m;
  follow(late, lv);
  late.send({ type: 'subscribe', room: ROOM, ids: [], rate_hz: 60 });
  viewers.push(lv), clients.push(late);

  // enough frames for everyone (10 Hz: 20 frames of each instance is 2 s of its ticks)
  await until(() => viewers.every((v) => v.frames.size >= 60) &&
    raw.msgs.filter((m) => m.type === 'frame_batch').length >= 60, 'every viewer decoding', 60000);
  publishing = false;
  await publisher;
  for (const m of raw.msgs) stalled.feed(m);
  viewers.push(stalled);
  for (const c of [...clients, p]) c.close();
  raw.sock.destroy();

  // the daemon's state at every tick of the room
  const r = await fetch(`${d.http}/v1/rooms/${ROOM}/recording`);
  assert.equal(r.status, 200);
  const file = join(tempDir(), 'viewers.ptrec');
  writeFileSync(file, Buffer.from(await r.arrayBuffer()));
  const verify = spawnSync(CLI, ['replay', file, '--verify'], { encoding: 'utf8' });
  assert.equal(verify.status, 0, verify.stderr);
  const out = spawnSync(CLI, ['replay', file], { encoding: 'utf8', maxBuffer: 1 << 30 });
  assert.equal(out.status, 0, out.stderr);
  const truth = new Map();
  for (const line of out.stdout.trim().split('\n')) {
    const f = JSON.parse(line);
    truth.set(`${f.id}:${f.tick}`, Float32Array.from(f.strands.flat(2)));
  }

  for (const v of viewers) {
    assert.deepEqual(v.errors, [], `${v.name}: every record decodes`);
    let compared = 0, worst = 0;
    for (const [key, pts] of v.frames) {
      const t = truth.get(key);
      assert.ok(t, `${v.name}: the recording holds ${key}`);
      assert.equal(pts.length, t.length, `${v.name} ${key}: points`);
      for (let i = 0; i < t.length; i += 3) {
        const e = Math.hypot(pts[i] - t[i], pts[i + 1] - t[i + 1], pts[i + 2] - t[i + 2]);
        worst = Math.max(worst, e);
        assert.ok(e <= v.bound + 1e-6, `${v.name} ${key} point ${i / 3}: ${e} m from the daemon's (bound ${v.bound})`);
      }
      compared++;
    }
    assert.ok(compared >= 60, `${v.name}: ${compared} frames compared`);
    console.log(`# ${v.name}: ${compared} frames within ${worst.toExponential(2)} m (bound ${v.bound})`);
  }
  // the late one starts from a keyframe of its subscription's tick or the next
  for (const [id, t] of lv.added) {
    const f = lv.first.get(id);
    assert.ok(f, `late: a record of ${id}`);
    assert.ok(f.key, `late: ${id}'s first record is a keyframe`);
    assert.ok(f.tick >= t && f.tick <= t + 1n, `late: ${id}'s first record of tick ${f.tick}, added at ${t}`);
  }
  assert.equal(lv.added.size, 3);
});
