// Touch and grabs (issue 40 items 1, 2, 3): the interaction grants of a definition, hands
// sent as body-bone poses colliding with other instances' hair, and grabs over REST
// (POST/GET/DELETE /v1/instances/{id}/grabs) with every way a grab ends, and a room with
// hands and grabs replaying with `ponytail replay --verify`. Facts are checked in the
// frames and lists answered after the tick that applied a change, never by wall clock.
// timeout: 240 (several daemons, frames polled tick by tick; a loaded sanitizer build)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { Client } from './client.mjs';
import { BIN, bearer, def, startDaemon, tempDir, until } from './daemon.mjs';

const CLI = join(dirname(BIN), 'ponytail');
const tmp = tempDir();
const daemons = [];
after(async () => { for (const d of daemons) await d.cleanup(); });

// A hand is held for --hand-hold-ms after its newest pose: long here, so a loaded machine
// that delays the test's re-sends never lets a hand go stale in the middle of a check.
async function daemon(args = []) {
  const d = await startDaemon({ args: ['--record-seconds', '60', '--hand-hold-ms', '4000', ...args] });
  daemons.push(d);
  return d;
}

async function mk(d, over) {
  const r = await d.req('POST', '/v1/instances', def(over));
  assert.equal(r.status, 201, r.text);
  return r.json;
}

const ID = [0, 0, 0, 1];
// A pose of instance `who` with its right hand at p (REST).
async function hand(d, who, p, seq, bone = 'right_hand') {
  const r = await d.req('PUT', `/v1/instances/${who.id}/pose`,
    { p: [0, 1.5, 1], q: ID, seq, bones: { [bone]: { p, q: ID } } }, bearer(who.token));
  assert.equal(r.status, 204, r.text);
}
const frame = async (d, id) => (await d.req('GET', `/v1/instances/${id}/frame`)).json;
// The first frame of `id` at or after tick t.
const frameAfter = (d, id, t) => until(async () => { const f = await frame(d, id); return f.tick >= t ? f : null; },
  `a frame of ${id} at tick ${t}`);
// The tick that applied pose `seq` of instance `who`.
const applied = (d, who, seq) => until(async () => { const f = await frame(d, who.id); return f.last_seq >= seq ? f.tick : null; },
  `pose ${seq} of ${who.id} applied`);
const grabs = async (d, id) => (await d.req('GET', `/v1/instances/${id}/grabs`)).json;
const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
const isError = (r, status, field) => {
  assert.equal(r.status, status, r.text);
  assert.equal(r.json.error.field, field, r.text);
};

test('grants: defaults, PATCH, field-named 422s with nothing changed', async () => {
  const d = await daemon();
  const a = await mk(d, { name: 'a', room: 'g' });
  assert.deepEqual(a.definition.interaction, { touch: 'room', grab: 'none', allow: [] });
  assert.deepEqual((await d.req('GET', `/v1/instances/${a.id}`)).json.definition.interaction,
    { touch: 'room', grab: 'none', allow: [] });
  const info = (await d.req('GET', '/v1/info')).json.limits;
  assert.deepEqual([info.grabs, info.hands, info.touch, info.allow], [8, 64, 64, 64]);

  let r = await d.req('PATCH', `/v1/instances/${a.id}`, { interaction: { grab: 'listed', allow: [9, 3] } }, bearer(a.token));
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.definition.interaction, { touch: 'room', grab: 'listed', allow: [3, 9] });
  r = await d.req('PATCH', `/v1/instances/${a.id}`, { interaction: { touch: 'none' } }, bearer(a.token));
  assert.deepEqual(r.json.definition.interaction, { touch: 'none', grab: 'listed', allow: [3, 9] });

  const before = (await d.req('GET', `/v1/instances/${a.id}`)).json.definition;
  const bad = [
    [{ touch: 'everyone' }, 'interaction.touch', /none, room, listed/],
    [{ grab: 1 }, 'interaction.grab', /none, room, listed/],
    [{ allow: [4, 'x'] }, 'interaction.allow[1]', /instance id/],
    [{ allow: [4, 0] }, 'interaction.allow[1]', /instance id/],
    [{ allow: [5, 6, 5] }, 'interaction.allow[2]', /twice/],
    [{ allow: Array.from({ length: 65 }, (_, i) => i + 1) }, 'interaction.allow', /at most 64/],
    [{ allow: 3 }, 'interaction.allow', /array/],
    [{ hug: 'room' }, 'interaction.hug', /unknown/],
  ];
  for (const [x, field, msg] of bad) {
    r = await d.req('PATCH', `/v1/instances/${a.id}`, { interaction: x, name: 'changed' }, bearer(a.token));
    isError(r, 422, field);
    assert.match(r.json.error.message, msg);
  }
  r = await d.req('POST', '/v1/instances', def({ interaction: 'room' }));
  isError(r, 422, 'interaction');
  assert.deepEqual((await d.req('GET', `/v1/instances/${a.id}`)).json.definition, before);
});

test('grabs over REST: 201, 403, 422s, 404, 409s, the limit, list, delete, and every end within a tick', async () => {
  const d = await daemon();
  const two = [{ anchor: [0, 0.06, -0.09], direction: [0, -1, 0], points: 8, segment_length: 0.03 },
    { anchor: [0.05, 0.06, -0.09], direction: [0, -1, 0], points: 8, segment_length: 0.03 }];
  const a = await mk(d, { name: 'grabber', room: 'g' });
  const b = await mk(d, { name: 'grabbed', room: 'g', strands: two, interaction: { grab: 'room' } });
  const c = await mk(d, { name: 'closed', room: 'g' });
  const far = await mk(d, { name: 'far', room: 'other', interaction: { grab: 'room' } });
  const other = await mk(d, { name: 'other', room: 'g' });
  let seq = 0;
  await hand(d, a, [0.3, 1.4, 0.2], ++seq);
  const post = (on, body, token) => d.req('POST', `/v1/instances/${on.id}/grabs`, body, bearer(token));
  const g = (over = {}) => ({ by: a.id, strand: 0, point: 7, bone: 'right_hand', ...over });

  isError(await d.req('POST', `/v1/instances/${b.id}/grabs`, g()), 401, null);
  isError(await post(b, g(), b.token), 403, null); /* not the grabber's token */
  isError(await post(c, g(), a.token), 403, 'interaction.grab');
  isError(await post(far, g(), a.token), 403, 'interaction.grab');
  isError(await post(b, g({ strand: 2 }), a.token), 422, 'strand');
  isError(await post(b, g({ point: 8 }), a.token), 422, 'point');
  isError(await post(b, g({ point: 0 }), a.token), 422, 'point');
  isError(await post(b, g({ bone: 'head' }), a.token), 422, 'bone');
  isError(await post(b, g({ bone: 'left_hand' }), a.token), 409, 'bone'); /* never sent */
  isError(await post(b, g({ by: 999999 }), a.token), 422, 'by');
  isError(await post(b, g({ by: b.id }), b.token), 422, 'by');
  isError(await post(b, { ...g(), hold: true }, a.token), 422, 'hold');
  isError(await d.req('POST', '/v1/instances/999999/grabs', g(), bearer(a.token)), 404, 'id');
  assert.deepEqual(await grabs(d, b.id), { grabs: [], count: 0 });

  let r = await post(b, g(), a.token);
  assert.equal(r.status, 201, r.text);
  const first = r.json;
  assert.deepEqual({ ...first, id: 0 }, { id: 0, instance: b.id, by: a.id, strand: 0, point: 7, bone: 'right_hand' });
  assert.equal(r.headers.get('location'), `/v1/instances/${b.id}/grabs/${first.id}`);
  isError(await post(b, g(), a.token), 409, 'point');
  /* up to the limit: 8 grabs of one instance, the 9th refused naming it */
  for (let k = 1; k < 8; k++) {
    r = await post(b, g({ strand: k < 7 ? 0 : 1, point: k < 7 ? k : 1 }), a.token);
    assert.equal(r.status, 201, r.text);
  }
  r = await post(b, g({ strand: 1, point: 2 }), a.token);
  isError(r, 409, 'grabs');
  assert.match(r.json.error.message, /limits\.grabs/);
  let list = await grabs(d, b.id);
  assert.equal(list.count, 8);
  assert.deepEqual(list.grabs.map((x) => x.id), [...list.grabs.map((x) => x.id)].sort((x, y) => x - y));

  /* DELETE: the grabbed instance's token, or the grabber's; nobody else's */
  const del = (id, token) => d.req('DELETE', `/v1/instances/${b.id}/grabs/${id}`, undefined, bearer(token));
  isError(await del(first.id, other.token), 403, null);
  assert.equal((await del(first.id, b.token)).status, 204);
  isError(await del(first.id, a.token), 404, 'grab');
  assert.equal((await del(list.grabs[1].id, a.token)).status, 204);
  assert.equal((await grabs(d, b.id)).count, 6);

  /* the owner takes the grant away: every grab ends at that tick */
  r = await d.req('PATCH', `/v1/instances/${b.id}`, { interaction: { grab: 'listed', allow: [other.id] } }, bearer(b.token));
  assert.equal(r.status, 200, r.text);
  assert.equal((await grabs(d, b.id)).count, 0);
  isError(await post(b, g(), a.token), 403, 'interaction.grab');
  r = await d.req('PATCH', `/v1/instances/${b.id}`, { interaction: { allow: [a.id, other.id] } }, bearer(b.token));
  assert.equal((await post(b, g(), a.token)).status, 201);

  /* the point no longer exists (b reshaped to 4 points): the grab of point 7 ends */
  assert.equal((await post(b, g({ point: 2 }), a.token)).status, 201);
  r = await d.req('PATCH', `/v1/instances/${b.id}`, { strands: [{ ...two[0], points: 4 }] }, bearer(b.token));
  assert.equal(r.status, 200, r.text);
  list = await grabs(d, b.id);
  assert.deepEqual(list.grabs.map((x) => x.point), [2]);

  /* the grabber moves to another room, and is deleted */
  r = await d.req('PATCH', `/v1/instances/${a.id}`, { room: 'other' }, bearer(a.token));
  assert.equal(r.status, 200, r.text);
  assert.equal((await grabs(d, b.id)).count, 0);
  r = await d.req('PATCH', `/v1/instances/${a.id}`, { room: 'g' }, bearer(a.token));
  await hand(d, a, [0.3, 1.4, 0.2], ++seq);
  assert.equal((await post(b, g({ point: 3 }), a.token)).status, 201);
  assert.equal((await d.req('DELETE', `/v1/instances/${a.id}`, undefined, bearer(a.token))).status, 204);
  assert.equal((await grabs(d, b.id)).count, 0);

  /* over WebSocket: a hand sent by a connection ends its grabs when the connection closes */
  const e = await mk(d, { name: 'ws', room: 'g' });
  r = await d.req('PATCH', `/v1/instances/${b.id}`, { interaction: { grab: 'room' } }, bearer(b.token));
  const ws = await Client.open(d.ws, { minor: 4 });
  ws.send({ type: 'authorize', instance_id: BigInt(e.id), token: e.token });
  ws.send({ type: 'head_pose', instance_id: BigInt(e.id), seq: 1, client_time_us: 0n, flags: 4,
    p: [0, 1.5, 1], q: ID, bones: [{ bone: 23, p: [0.1, 1.4, 0.3], q: ID }] });
  await applied(d, e, 1);
  r = await post(b, g({ by: e.id, point: 3 }), e.token);
  assert.equal(r.status, 201, r.text);
  ws.close();
  await ws.closed;
  await until(async () => (await grabs(d, b.id)).count === 0, 'the grab ended with its connection');

  /* the grabber stops sending: past the hold time the grab ends (a daemon of 0.25 s) */
  const d2 = await startDaemon({ args: ['--hand-hold-ms', '250'] });
  daemons.push(d2);
  const a2 = await mk(d2, { name: 'a', room: 'g' });
  const b2 = await mk(d2, { name: 'b', room: 'g', interaction: { grab: 'room' } });
  await hand(d2, a2, [0.2, 1.4, 0.2], 1);
  r = await d2.req('POST', `/v1/instances/${b2.id}/grabs`, g({ by: a2.id }), bearer(a2.token));
  if (r.status === 201) /* (a machine slower than the hold between the two requests: 409 bone) */
    await until(async () => (await grabs(d2, b2.id)).count === 0, 'the grab ended with its stale hand');
  else
    isError(r, 409, 'bone');
});

test('grabs over WebSocket (1.5): grab_result and errors carry the ref; release; 1.4 does not know them', async () => {
  const d = await daemon();
  const a = await mk(d, { name: 'a', room: 'w' });
  const b = await mk(d, { name: 'b', room: 'w', interaction: { grab: 'room' } });
  const c = await mk(d, { name: 'c', room: 'w' });
  const ws = await Client.open(d.ws, { minor: 5 });
  assert.equal(ws.welcome.minor, 5);
  const grab = (ref, on, over = {}) => ws.send({ type: 'grab', ref, instance_id: BigInt(on.id), by: BigInt(a.id), strand: 0, point: 3, bone: 23, ...over });
  grab(1, b); /* a not authorized here yet */
  let e = await ws.next('error', (m) => m.ref === 1);
  assert.deepEqual([e.code, e.about_type, e.instance_id], [5, 0x08, BigInt(b.id)]);
  assert.match(e.text, /^by: authorize/);
  ws.send({ type: 'authorize', instance_id: BigInt(a.id), token: a.token });
  ws.send({ type: 'head_pose', instance_id: BigInt(a.id), seq: 1, client_time_us: 0n, flags: 4,
    p: [0, 1.5, 1], q: ID, bones: [{ bone: 23, p: [0.1, 1.4, 0.3], q: ID }] });
  grab(2, b);
  const ok = await ws.next('grab_result', (m) => m.ref === 2);
  assert.equal(ok.instance_id, BigInt(b.id));
  assert.deepEqual((await grabs(d, b.id)).grabs.map((x) => [BigInt(x.id), x.by, x.point, x.bone]),
    [[ok.grab_id, a.id, 3, 'right_hand']]);
  grab(3, c);
  e = await ws.next('error', (m) => m.ref === 3);
  assert.equal(e.code, 5);
  assert.match(e.text, /^interaction\.grab: /);
  grab(4, b, { strand: 4 });
  e = await ws.next('error', (m) => m.ref === 4);
  assert.match(e.text, /^strand: /);
  grab(5, b); /* the same point */
  e = await ws.next('error', (m) => m.ref === 5);
  assert.match(e.text, /^point: .*already grabbed/);
  ws.send({ type: 'release', ref: 6, instance_id: BigInt(b.id), grab_id: ok.grab_id });
  const rel = await ws.next('grab_result', (m) => m.ref === 6);
  assert.equal(rel.grab_id, ok.grab_id);
  assert.equal((await grabs(d, b.id)).count, 0);
  ws.send({ type: 'release', ref: 7, instance_id: BigInt(b.id), grab_id: ok.grab_id });
  e = await ws.next('error', (m) => m.ref === 7);
  assert.equal(e.code, 6);
  /* a grab made over a connection ends when it closes */
  grab(8, b);
  await ws.next('grab_result', (m) => m.ref === 8);
  ws.close();
  await ws.closed;
  await until(async () => (await grabs(d, b.id)).count === 0, 'the WebSocket grab ended with its connection');
  /* a 1.4 connection: unknown_type, as before 1.5 */
  const old = await Client.open(d.ws, { minor: 4 });
  old.send({ type: 'grab', ref: 1, instance_id: BigInt(b.id), by: BigInt(a.id), strand: 0, point: 3, bone: 23 });
  e = await old.next('error');
  assert.deepEqual([e.code, e.about_type, e.ref], [3, 0x08, undefined]);
  old.close();
});

test('hands push hair of whoever grants touch, and stop within a tick of leaving; a grabbed point follows the hand', async () => {
  const d = await daemon();
  const toucher = await mk(d, { name: 'toucher', room: 'h' });
  /* no head collider: nothing but the hand holds the hair, which hangs straight from
   * (0, 0.06, -0.09) to y = -0.15 under a head at the origin and falls back there */
  const hair = await mk(d, { name: 'hair', room: 'h', prewarm_s: 1, colliders: [] });
  const rest = (await frame(d, hair.id)).strands[0];
  const c = [0.03, -0.06, -0.09]; /* a 5 cm hand sphere across the strand's line */
  let seq = 0;
  const place = async (p) => { const s = ++seq; await hand(d, toucher, p, s); return applied(d, toucher, s); };
  const pushed = (f) => f.strands[0].some((p, i) => dist(p, rest[i]) > 0.005);
  const outside = (f, at) => f.strands[0].every((p) => dist(p, at) >= 0.05 - 0.001);
  const settled = async (what) => until(async () => {
    const f = await frame(d, hair.id);
    return f.strands[0].every((p, i) => dist(p, rest[i]) < 0.002) ? f : null;
  }, what);

  /* the hand away from the hair, then into it: every frame keeps the hair outside it */
  let t = await place([0.3, -0.06, -0.09]);
  t = await place(c);
  for (let k = 0; k < 10; k++) {
    const f = await frameAfter(d, hair.id, t + k);
    assert.ok(outside(f, c), `tick ${f.tick}: a point inside the hand: ${JSON.stringify(f.strands[0])}`);
  }
  assert.ok(pushed(await frame(d, hair.id)), 'the hand did not move the hair');

  /* touch none: the same hand no longer pushes */
  let r = await d.req('PATCH', `/v1/instances/${hair.id}`, { interaction: { touch: 'none' } }, bearer(hair.token));
  assert.equal(r.status, 200, r.text);
  await settled('the hair back at rest with touch none');
  /* listed, without and with the toucher */
  r = await d.req('PATCH', `/v1/instances/${hair.id}`, { interaction: { touch: 'listed', allow: [hair.id + 100] } }, bearer(hair.token));
  await settled('the hair at rest, listed without the toucher');
  r = await d.req('PATCH', `/v1/instances/${hair.id}`, { interaction: { allow: [toucher.id] } }, bearer(hair.token));
  t = (await frame(d, hair.id)).tick;
  await until(async () => pushed(await frame(d, hair.id)), 'pushed once listed');
  assert.ok(outside(await frameAfter(d, hair.id, t + 2), c));

  /* the toucher leaves the room: from its tick on no push */
  r = await d.req('PATCH', `/v1/instances/${toucher.id}`, { room: 'elsewhere' }, bearer(toucher.token));
  await settled('the hair back at rest once the toucher left');
  r = await d.req('PATCH', `/v1/instances/${toucher.id}`, { room: 'h' }, bearer(toucher.token));
  await place(c);
  await until(async () => pushed(await frame(d, hair.id)), 'pushed again');
  /* the toucher stops sending: past --hand-hold-ms (250 ms) its hand is gone, and the hair
   * hangs back through where the hand was */
  await settled('the hair back at rest once the toucher stopped sending');
  await place(c);
  await until(async () => pushed(await frame(d, hair.id)), 'pushed once it sends again');
  assert.equal((await d.req('DELETE', `/v1/instances/${toucher.id}`, undefined, bearer(toucher.token))).status, 204);
  await settled('the hair back at rest once the toucher was deleted');

  /* a grabbed point follows the hand, within 1 mm while in reach */
  const g2 = await mk(d, { name: 'grabber', room: 'h' });
  r = await d.req('PATCH', `/v1/instances/${hair.id}`, { interaction: { grab: 'room', touch: 'none' } }, bearer(hair.token));
  const target = [0.08, -0.08, -0.05]; /* 0.16 m from the root: within the 0.21 m reach */
  await hand(d, g2, target, 1);
  await applied(d, g2, 1);
  r = await d.req('POST', `/v1/instances/${hair.id}/grabs`, { by: g2.id, strand: 0, point: 7, bone: 'right_hand' }, bearer(g2.token));
  assert.equal(r.status, 201, r.text);
  const f = await frameAfter(d, hair.id, (await frame(d, hair.id)).tick + 3);
  const tip = f.strands[0][7];
  assert.ok(dist(tip, target) <= 0.001, `the grabbed point ${JSON.stringify(tip)} is ${dist(tip, target)} m from the hand`);
  for (let i = 1; i < 8; i++) /* lengths kept: stretch at most 1 % */
    assert.ok(Math.abs(dist(f.strands[0][i], f.strands[0][i - 1]) - 0.03) <= 0.0003);
  assert.equal((await d.req('DELETE', `/v1/instances/${hair.id}/grabs/${r.json.id}`, undefined, bearer(hair.token))).status, 204);
  await settled('the hair back at rest once released');
});

test('a room with hands and grabs replays with every hash verified', async () => {
  const d = await daemon();
  const a = await mk(d, { name: 'a', room: 'rec' });
  const b = await mk(d, { name: 'b', room: 'rec', interaction: { grab: 'room' } });
  const c2 = await mk(d, { name: 'c', room: 'rec', strands: [{ anchor: [0.2, 0.06, -0.09], direction: [0, -1, 0], points: 6, segment_length: 0.03 }] });
  let seq = 0;
  const at = (k) => [0.03 * Math.sin(k / 4), -0.06, -0.09 + 0.02 * Math.cos(k / 5)];
  for (let k = 0; k < 30; k++) {
    await hand(d, a, at(k), ++seq);
    if (k === 5) {
      const r = await d.req('POST', `/v1/instances/${b.id}/grabs`, { by: a.id, strand: 0, point: 4, bone: 'right_hand' }, bearer(a.token));
      assert.equal(r.status, 201, r.text);
    }
    if (k === 20) /* c takes no touch from here on */
      await d.req('PATCH', `/v1/instances/${c2.id}`, { interaction: { touch: 'none' } }, bearer(c2.token));
  }
  const last = await applied(d, a, seq);
  await frameAfter(d, b.id, last + 2);
  const r = await fetch(`${d.http}/v1/rooms/rec/recording`);
  assert.equal(r.status, 200);
  const bytes = Buffer.from(await r.arrayBuffer());
  /* the records it holds, by type: HANDS 11, TOUCH 12, GRABS 13 each at least once */
  const types = new Map();
  for (let at2 = bytes.readUInt32LE(12); at2 < bytes.length; at2 += 8 + bytes.readUInt32LE(at2 + 4))
    types.set(bytes[at2], (types.get(bytes[at2]) ?? 0) + 1);
  for (const t of [11, 12, 13]) assert.ok(types.get(t) > 0, `no record of type ${t}: ${[...types]}`);
  assert.ok(types.get(12) < types.get(11), 'TOUCH only when an instance\'s touch changes');
  const file = join(tmp, 'hands.ptrec');
  writeFileSync(file, bytes);
  const v = spawnSync(CLI, ['replay', file, '--verify'], { encoding: 'utf8', maxBuffer: 1 << 30 });
  assert.equal(v.status, 0, v.stderr);
});
