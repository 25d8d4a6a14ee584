// Recordings (issue 39 items 2 and 3): GET /v1/rooms/{room}/recording and ponytail replay.
// A room lives through what a room lives through: a ponytail whose client streams poses
// with velocities (extrapolated heads) and bones over WebSocket, a whole body avatar
// imported from a VRM with every body bone posed, a driven bot that is patched and then
// deleted, a reset, an instance that moves in from another room and one that moves out.
// The replay must then agree with every state hash the daemon recorded, and its points at
// a tick must be those the daemon's REST frame gave for that tick, bit for bit. Bad
// requests and bad files are refused naming the field or the byte offset.
// timeout: 180 (13 s of a room past its first segment, REST, replays; a loaded sanitizer build)
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from './client.mjs';
import { check } from './contract.mjs';
import { BIN, bearer, def, request, sleep, startDaemon, tempDir, until } from './daemon.mjs';

const CLI = join(dirname(BIN), 'ponytail');
const tmp = tempDir();
let d;
const disk = join(tmp, 'disk');
before(async () => { d = await startDaemon({ args: ['--record-seconds', '60', '--record', disk] }); });
after(() => d.cleanup());

async function recording(room, query = '') {
  const url = `${d.http}/v1/rooms/${encodeURIComponent(room)}/recording${query}`;
  const r = await fetch(url);
  const bytes = Buffer.from(await r.arrayBuffer());
  const type = r.headers.get('content-type') ?? '';
  let json = null;
  if (type.startsWith('application/json')) json = JSON.parse(bytes.toString('utf8'));
  check('GET', url, { status: r.status, headers: r.headers, json, text: json ? bytes.toString('utf8') : 'binary' });
  return { status: r.status, type, bytes, json };
}

function replay(file, ...args) {
  return spawnSync(CLI, ['replay', file, ...args], { encoding: 'utf8', maxBuffer: 1 << 30 });
}

async function create(body) {
  const r = await request(d.http, 'POST', '/v1/instances', body);
  assert.equal(r.status, 201, r.text);
  return r.json;
}

const rot = (a) => [0, Math.sin(a / 2), 0, Math.cos(a / 2)];

test('a room with poses, bones, a driver, patches, resets and moves replays to every hash, and to the REST frame bit for bit', async () => {
  const pony = await create(def({ name: 'pony', room: 'rec' }));
  const imp = await fetch(`${d.http}/v1/import/vrm`, {
    method: 'POST', headers: { 'Content-Type': 'model/gltf-binary' },
    body: readFileSync('tests/fixtures/vrm/body_avatar_1.vrm'),
  });
  assert.equal(imp.status, 200);
  const body = await create({ ...(await imp.json()).definition, name: 'body', room: 'rec' });
  const bot = await create(def({ name: 'bot', room: 'rec', driver: { motion: 'shake', amplitude: 30, period: 0.7 } }));
  const visitor = await create(def({ name: 'visitor', room: 'elsewhere' }));

  const c = await Client.open(d.ws, { minor: 3 });
  for (const i of [pony, body]) c.send({ type: 'authorize', instance_id: BigInt(i.id), token: i.token });
  c.send({ type: 'subscribe', room: 'rec', ids: [] });
  await c.next('frame_batch');
  const bones = (k) => [1, 2, 3, 7, 8, 9, 12, 13, 14].map((b, j) => ({
    bone: b, p: [0.1 * Math.sin(k / 9 + j), 1.0 + 0.02 * j, 0.05 * Math.cos(k / 7)], q: rot(0.3 * Math.sin(k / 11 + j)),
  }));
  for (let k = 1; k <= 60; k++) {
    const a = 0.6 * Math.sin(k / 8);
    c.send({ type: 'head_pose', instance_id: BigInt(pony.id), seq: k, client_time_us: 0n, flags: 3 | 4,
      p: [0.2 * Math.sin(k / 5), 1.5, 0], q: rot(a), v: [0.4, 0, 0.1], w: [0, 2.0 * Math.cos(k / 8), 0], bones: bones(k) });
    c.send({ type: 'head_pose', instance_id: BigInt(body.id), seq: k, client_time_us: 0n, flags: 4,
      p: [0, 1.55 + 0.03 * Math.sin(k / 4), 0], q: rot(-a), bones: bones(k + 3) });
    if (k === 20) assert.equal((await request(d.http, 'PATCH', `/v1/instances/${bot.id}`, { verlet: { damping: 0.9 } }, bearer(bot.token))).status, 200);
    if (k === 25) assert.equal((await request(d.http, 'POST', `/v1/instances/${pony.id}/reset`, undefined, bearer(pony.token))).status, 204);
    if (k === 30) assert.equal((await request(d.http, 'PATCH', `/v1/instances/${visitor.id}`, { room: 'rec' }, bearer(visitor.token))).status, 200);
    if (k === 40) assert.equal((await request(d.http, 'DELETE', `/v1/instances/${bot.id}`, undefined, bearer(bot.token))).status, 204);
    if (k === 45) assert.equal((await request(d.http, 'PATCH', `/v1/instances/${visitor.id}`, { room: 'gone' }, bearer(visitor.token))).status, 200);
    await sleep(15);
  }
  // the REST frames of a tick, then a recording that holds it
  const frames = {};
  for (const i of [pony, body]) frames[i.id] = (await request(d.http, 'GET', `/v1/instances/${i.id}/frame`)).json;
  const t0 = Math.max(frames[pony.id].tick, frames[body.id].tick);
  await until(async () => (await request(d.http, 'GET', `/v1/instances/${pony.id}/frame`)).json.tick > t0 + 2, 'two more ticks');
  c.close();

  const rec = await recording('rec');
  assert.equal(rec.status, 200);
  assert.equal(rec.type, 'application/vnd.ponytail.recording');
  const file = join(tmp, 'rec.ptrec');
  writeFileSync(file, rec.bytes);

  const v = replay(file, '--verify');
  assert.equal(v.status, 0, v.stderr);
  const m = /ticks (\d+)-(\d+) \((\d+) steps\): all (\d+) state hashes agree/.exec(v.stderr);
  assert.ok(m, v.stderr);
  assert.ok(Number(m[3]) >= 60 && Number(m[4]) >= 2 * Number(m[3]), v.stderr);
  assert.ok(Number(m[1]) <= frames[pony.id].tick && Number(m[2]) > t0, `the recording (${m[1]}-${m[2]}) holds the frames' ticks`);

  // the scalar kernel gives the same bits
  assert.equal(replay(file, '--verify', '--kernel', 'scalar').status, 0);

  // the replay's frames at t0 are the daemon's (REST writes 15 digits of a float: the
  // same float again)
  const out = replay(file);
  assert.equal(out.status, 0, out.stderr);
  const lines = out.stdout.trim().split('\n').map((l) => JSON.parse(l));
  const ids = new Set(lines.map((l) => l.id));
  for (const i of [pony, body, bot]) assert.ok(ids.has(Number(i.id)), `frames of ${i.id}`);
  for (const i of [pony, body]) {
    const at = frames[i.id].tick; // each frame was read at a tick of its own
    const mine = lines.find((l) => l.id === Number(i.id) && l.tick === at);
    assert.ok(mine, `a replayed frame of ${i.id} at tick ${at}`);
    assert.match(mine.state_hash, /^[0-9a-f]{16}$/);
    const rest = frames[i.id];
    assert.equal(mine.strands.length, rest.strands.length);
    for (let s = 0; s < rest.strands.length; s++)
      for (let k = 0; k < rest.strands[s].length; k++)
        for (let x = 0; x < 3; x++)
          assert.equal(Math.fround(mine.strands[s][k][x]), Math.fround(rest.strands[s][k][x]),
            `instance ${i.id} strand ${s} point ${k}: replay ${JSON.stringify(mine.strands[s].slice(0, 3))} tick ${mine.tick}, REST ${JSON.stringify(rest.strands[s].slice(0, 3))} tick ${rest.tick}`);
  }
  // a shorter window starts later
  const short = await recording('rec', '?last=0.5');
  assert.equal(short.status, 200);
  // header: first tick at 32, last tick at 40 (core/RECORDING.md)
  assert.ok(short.bytes.readBigUInt64LE(32) >= rec.bytes.readBigUInt64LE(32));
  assert.ok(short.bytes.readBigUInt64LE(40) >= rec.bytes.readBigUInt64LE(40));
  writeFileSync(join(tmp, 'short.ptrec'), short.bytes);
  assert.equal(replay(join(tmp, 'short.ptrec'), '--verify').status, 0);
});

test('a recording that begins at a later segment starts from its snapshots and replays to every hash', async () => {
  const imp = await fetch(`${d.http}/v1/import/vrm`, {
    method: 'POST', headers: { 'Content-Type': 'model/gltf-binary' },
    body: readFileSync('tests/fixtures/vrm/body_avatar_1.vrm'),
  });
  const body = await create({ ...(await imp.json()).definition, name: 'seg-body', room: 'seg' });
  const pony = await create(def({ name: 'seg-pony', room: 'seg', driver: { motion: 'nod', amplitude: 25, period: 0.9 } }));
  const first = (await request(d.http, 'GET', `/v1/instances/${pony.id}/frame`)).json.tick;
  const c = await Client.open(d.ws, { minor: 3 });
  c.send({ type: 'authorize', instance_id: BigInt(body.id), token: body.token });
  // past the first segment (10 s of ticks), posing the body all the while
  let k = 0;
  for (;;) {
    k++;
    c.send({ type: 'head_pose', instance_id: BigInt(body.id), seq: k, client_time_us: 0n, flags: 2 | 4,
      p: [0, 1.55, 0.1 * Math.sin(k / 6)], q: rot(0.5 * Math.sin(k / 10)), w: [0, 1.5, 0],
      bones: [{ bone: 12, p: [0.2, 1.3, 0], q: rot(Math.sin(k / 5)) }, { bone: 1, p: [0, 0.95, 0], q: rot(0.2 * Math.cos(k / 7)) }] });
    await sleep(30);
    if (k % 20) continue;
    const now = (await request(d.http, 'GET', `/v1/instances/${pony.id}/frame`)).json.tick;
    if (now > first + 12 * 60) break;
  }
  c.close();
  const rec = await recording('seg', '?last=1');
  assert.equal(rec.status, 200);
  const from = Number(rec.bytes.readBigUInt64LE(32));
  assert.ok(from > first + 60, `the recording starts at a later segment (tick ${from}; the room began at ${first})`);
  assert.equal(rec.bytes[rec.bytes.readUInt32LE(12)], 1, 'its first record is a SNAPSHOT');
  const file = join(tmp, 'seg.ptrec');
  writeFileSync(file, rec.bytes);
  const v = replay(file, '--verify');
  assert.equal(v.status, 0, v.stderr);
  assert.match(v.stderr, /all \d+ state hashes agree/);
});

test('bad requests name the field; bad files name the offset', async () => {
  await create(def({ name: 'x', room: 'bad' }));
  await sleep(100);
  for (const q of ['?last=0', '?last=-1', '?last=61', '?last=abc', '?last=']) {
    const r = await recording('bad', q);
    assert.equal(r.status, 422, q);
    assert.equal(r.json.error.field, 'last');
    assert.match(r.json.error.message, /\(0, 60\]/);
  }
  const none = await recording('nobody-here');
  assert.equal(none.status, 404);
  assert.equal(none.json.error.field, 'room');
  assert.match(none.json.error.message, /nobody-here/);

  const good = (await recording('bad')).bytes;
  const put = (name, bytes) => { const f = join(tmp, name); writeFileSync(f, bytes); return replay(f, '--verify'); };
  let r = put('cut.ptrec', good.subarray(0, good.length - 5));
  assert.equal(r.status, 1);
  assert.match(r.stderr, /offset \d+: truncated record/);
  const future = Buffer.from(good);
  future.writeUInt32LE(2, 8);
  r = put('future.ptrec', future);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /offset 8: version 2; this reader reads version 1/);
  r = put('junk.ptrec', Buffer.from('hello, not a recording'));
  assert.equal(r.status, 1);
  assert.match(r.stderr, /offset 0: not a Ponytail recording/);
  // a changed hash is named with its tick and instance
  const forged = Buffer.from(good);
  forged[forged.length - 1] ^= 1; // the last STEP's last hash
  r = put('forged.ptrec', forged);
  assert.equal(r.status, 1);
  assert.match(r.stderr, /tick \d+, instance \d+ \(offset \d+\): recorded state hash [0-9a-f]{16}, replayed [0-9a-f]{16}/);
  // every prefix of the file is refused or read, never a crash
  for (let n = 0; n < Math.min(good.length, 400); n += 7) {
    const p = put('prefix.ptrec', good.subarray(0, n));
    assert.ok(p.status === 0 || p.status === 1, `prefix ${n}: exit ${p.status} ${p.stderr}`);
  }
  assert.ok(execFileSync(CLI, ['replay', '--help'], { encoding: 'utf8' }).includes('--verify'));
});

test('--record DIR: every room on disk, a file a replay verifies, the same records as the daemon answers', async () => {
  const mem = (await recording('rec')).bytes; // the first test's room, all of it
  await d.stop();
  const files = readdirSync(disk).filter((f) => f.startsWith('rec.'));
  assert.equal(files.length, 1, `one file for room rec: ${readdirSync(disk)}`);
  assert.ok(readdirSync(disk).some((f) => f.startsWith('seg.')), 'and one for room seg');
  const file = join(disk, files[0]);
  const v = replay(file, '--verify');
  assert.equal(v.status, 0, v.stderr);
  const bytes = readFileSync(file);
  assert.equal(bytes.readBigUInt64LE(32), mem.readBigUInt64LE(32), 'both begin at the room\'s first tick');
  // after the headers (same room: same length), the daemon's answer is a prefix of the file
  const h = mem.readUInt32LE(12);
  assert.ok(bytes.length >= mem.length);
  assert.ok(bytes.subarray(h, mem.length).equals(mem.subarray(h)), 'the same records');
});

