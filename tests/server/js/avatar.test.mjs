// Avatars over REST: POST /v1/import/vrm (the importer compiled into the daemon), PUT/GET
// /v1/instances/{id}/avatar (kept per instance, served back byte for byte, gone with the
// instance, kept across a restart), and the bones a client maps strands with (GET
// /v1/instances/{id} and the room listing with ?include=bones). The avatars are the
// committed test avatar files (tests/fixtures/vrm/, written by make_test_avatar.py, which
// does not use the importer), and what the bones must say is its test_avatar.expect.json.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { check } from './contract.mjs';
import { bearer, startDaemon, until } from './daemon.mjs';

const FIX = 'tests/fixtures/vrm';
const vrm1 = readFileSync(`${FIX}/test_avatar_1.vrm`);
const vrm0 = readFileSync(`${FIX}/test_avatar_0.vrm`);
const expect = JSON.parse(readFileSync(`${FIX}/test_avatar.expect.json`, 'utf8'));
const GLB = { 'Content-Type': 'model/gltf-binary' };

let d;
before(async () => { d = await startDaemon({ args: ['--max-avatar', String(64 << 10)] }); });
after(() => d.cleanup());

// A binary body in, the answer checked against the contract; binary answers stay bytes.
async function raw(method, path, body, headers = {}) {
  const r = await fetch(d.http + path, { method, headers, body });
  const bytes = Buffer.from(await r.arrayBuffer());
  const type = r.headers.get('content-type') ?? '';
  const text = type.startsWith('application/json') ? bytes.toString('utf8') : '';
  let json = null;
  try { json = JSON.parse(text); } catch {}
  const res = { status: r.status, headers: r.headers, json, text, bytes };
  check(method, d.http + path, { ...res, text: type.startsWith('application/json') || r.status === 204 ? text : 'binary' });
  return res;
}

// a and b the same JSON but for numbers within tol (the CLI prints 9 digits, REST 15).
function same(a, b, tol, where = '') {
  if (typeof a === 'number' && typeof b === 'number') return assert.ok(Math.abs(a - b) <= tol, `${where}: ${a} vs ${b}`);
  if (a === null || typeof a !== 'object') return assert.equal(a, b, where);
  assert.equal(typeof b, 'object', where);
  assert.deepEqual(Object.keys(a).sort(), Object.keys(b ?? {}).sort(), where);
  for (const k of Object.keys(a)) same(a[k], b[k], tol, `${where}.${k}`);
}

const near = (a, b, tol = 1e-5) => a.length === b.length && a.every((x, i) => Math.abs(x - b[i]) <= tol);

test('POST /v1/import/vrm answers what ponytail import-vrm prints, joint names included', async () => {
  for (const [v, file] of [['1', vrm1], ['0', vrm0]]) {
    const r = await raw('POST', '/v1/import/vrm', file, GLB);
    assert.equal(r.status, 200, r.text);
    const cli = JSON.parse(execFileSync(`${process.env.PT_BUILD || 'build'}/bin/ponytail`,
      ['import-vrm', `${FIX}/test_avatar_${v}.vrm`], { stdio: ['ignore', 'pipe', 'ignore'] }));
    same(r.json.definition, cli, 1e-8, `VRM ${v}: the daemon's import is the CLI's`);
    assert.equal(r.json.report.source.format, v === '1' ? 'VRM 1.0' : 'VRM 0.x');
    const tail = v === '0' ? [''] : []; // 0.x: the virtual tail has no bone
    assert.deepEqual(r.json.definition.strands.map((s) => s.joints), expect.chains.map((c) => c.joints.concat(tail)));
  }
});

test('POST /v1/import/vrm refuses what is not an avatar, naming the body and why', async () => {
  let r = await raw('POST', '/v1/import/vrm', Buffer.from('glTF but not really'), GLB);
  assert.equal(r.status, 422);
  assert.equal(r.json.error.field, 'body');
  assert.match(r.json.error.message, /not an avatar Ponytail can import: .*GLB|header|version/);
  const cut = vrm1.subarray(0, 1000); // a GLB whose chunks run past its end
  r = await raw('POST', '/v1/import/vrm', cut, GLB);
  assert.equal(r.status, 422);
  assert.match(r.json.error.message, /bytes|length|truncated/);
  r = await raw('POST', '/v1/import/vrm', vrm1, { 'Content-Type': 'application/json' });
  assert.equal(r.status, 415);
  assert.match(r.json.error.message, /model\/gltf-binary/);
  r = await raw('POST', '/v1/import/vrm', Buffer.alloc(0), GLB);
  assert.equal(r.status, 400);
  r = await raw('POST', '/v1/import/vrm', Buffer.alloc((64 << 10) + 1), GLB);
  assert.equal(r.status, 413);
  assert.match(r.json.error.message, /at most 65536 \(--max-avatar\)/);
  assert.equal((await d.req('GET', '/healthz')).status, 200, 'the daemon is still well');
});

async function createFrom(file, room) {
  const imp = await raw('POST', '/v1/import/vrm', file, GLB);
  const c = await d.req('POST', '/v1/instances', { ...imp.json.definition, room });
  assert.equal(c.status, 201, c.text);
  return c.json;
}

test('an instance keeps its avatar: PUT, GET byte for byte, bones, listing, delete', async () => {
  const inst = await createFrom(vrm1, 'avatars');
  const id = inst.id;
  assert.equal(inst.avatar, null);
  // the bones: names and rest per strand, as the generator put them in
  assert.equal(inst.bones.length, expect.chains.length);
  inst.bones.forEach((b, s) => {
    assert.deepEqual(b.joints, expect.chains[s].joints);
    assert.equal(b.anchor_bone, '');
    assert.equal(b.rest.length, expect.chains[s].rest_head_local.length);
    b.rest.forEach((p, i) => assert.ok(near(p, expect.chains[s].rest_head_local[i]), `strand ${s} point ${i}: ${p}`));
  });
  let r = await raw('PUT', `/v1/instances/${id}/avatar`, vrm1, GLB);
  assert.equal(r.status, 401);
  r = await raw('PUT', `/v1/instances/${id}/avatar`, vrm1, { ...GLB, ...bearer('0'.repeat(32)) });
  assert.equal(r.status, 403);
  r = await raw('PUT', `/v1/instances/${id}/avatar`, Buffer.from('not a vrm at all'), { ...GLB, ...bearer(inst.token) });
  assert.equal(r.status, 422);
  assert.equal(r.json.error.field, 'body');
  r = await raw('GET', `/v1/instances/${id}/avatar`);
  assert.equal(r.status, 404, 'no avatar yet');
  r = await raw('PUT', `/v1/instances/${id}/avatar`, vrm1, { 'Content-Type': 'application/octet-stream', ...bearer(inst.token) });
  assert.equal(r.status, 204);
  r = await raw('GET', `/v1/instances/${id}/avatar`);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'model/gltf-binary');
  assert.ok(r.bytes.equals(vrm1), 'served back byte for byte');
  // a new upload replaces it
  r = await raw('PUT', `/v1/instances/${id}/avatar`, vrm0, { ...GLB, ...bearer(inst.token) });
  assert.equal(r.status, 204);
  assert.ok((await raw('GET', `/v1/instances/${id}/avatar`)).bytes.equals(vrm0));
  const g = await d.req('GET', `/v1/instances/${id}`);
  assert.deepEqual(g.json.avatar, { url: `/v1/instances/${id}/avatar`, bytes: vrm0.length });
  assert.deepEqual(g.json.bones, inst.bones);
  const list = await d.req('GET', '/v1/instances?room=avatars&include=bones');
  assert.equal(list.json.count, 1);
  assert.deepEqual(list.json.instances[0].bones, inst.bones);
  assert.deepEqual(list.json.instances[0].avatar, g.json.avatar);
  assert.equal((await d.req('GET', '/v1/instances?room=avatars')).json.instances[0].bones, undefined);
  assert.equal((await d.req('GET', '/v1/instances?room=avatars&include=all')).status, 400);
  // renaming a joint by PATCH changes the bones, not the motion's topology
  const names = inst.definition.strands.map((s) => s.joints);
  names[0][0] = 'Renamed_01';
  const p = await d.req('PATCH', `/v1/instances/${id}`, { strands: inst.definition.strands.map((s, k) => ({ ...s, joints: names[k] })) }, bearer(inst.token));
  assert.equal(p.status, 200, p.text);
  assert.equal(p.json.bones[0].joints[0], 'Renamed_01');
  const bad = await d.req('PATCH', `/v1/instances/${id}`, { strands: [{ ...inst.definition.strands[0], joints: ['a'] }] }, bearer(inst.token));
  assert.equal(bad.status, 422);
  assert.equal(bad.json.error.field, 'strands[0].joints');
  // deleted with its instance
  assert.equal((await d.req('DELETE', `/v1/instances/${id}`, undefined, bearer(inst.token))).status, 204);
  r = await raw('GET', `/v1/instances/${id}/avatar`);
  assert.equal(r.status, 404);
  assert.equal(r.json.error.field, 'id');
});

test('straight strands get their rest points too; an avatar survives a restart', async () => {
  const c = await d.req('POST', '/v1/instances', { room: 'plain', strands: [{ anchor: [0, 0.1, 0], direction: [0, -2, 0], points: 3, segment_length: 0.05 }] });
  assert.equal(c.status, 201);
  assert.equal(c.json.bones.length, 1);
  assert.equal(c.json.bones[0].anchor_bone, '');
  assert.equal(c.json.bones[0].joints, null, 'no names given: null, not a list of ""');
  assert.equal(c.json.bones[0].rest.length, 3);
  c.json.bones[0].rest.forEach((p, i) => assert.ok(near(p, [0, 0.1 - 0.05 * i, 0], 1e-7), `point ${i}: ${p}`));
  const inst = await createFrom(vrm1, 'kept');
  assert.equal((await raw('PUT', `/v1/instances/${inst.id}/avatar`, vrm1, { ...GLB, ...bearer(inst.token) })).status, 204);
  const data = d.data;
  await d.stop('SIGKILL'); // fsync'ed before the 204: survives even this
  d = await startDaemon({ data, args: ['--max-avatar', String(64 << 10)] });
  const r = await raw('GET', `/v1/instances/${inst.id}/avatar`);
  assert.equal(r.status, 200);
  assert.ok(r.bytes.equals(vrm1));
});

test('at most 16 avatar files in flight at once: the 17th is told to retry, then all is well', async () => {
  // 16 uploads that send their headers and then hold their bodies open
  const ctrls = [], pending = [];
  for (let i = 0; i < 16; i++) {
    let ctrl;
    const body = new ReadableStream({ start(c) { ctrl = c; c.enqueue(new Uint8Array(vrm1.subarray(0, 100))); } });
    ctrls.push(ctrl);
    pending.push(fetch(d.http + '/v1/import/vrm', { method: 'POST', headers: GLB, body, duplex: 'half' }).then((r) => r.status, () => 'error'));
  }
  let r;
  await until(async () => { // the uploads reach the daemon in their own time
    r = await raw('GET', '/v1/instances/1/avatar');
    return r.status === 503;
  }, () => `the 17th avatar request refused while 16 are in flight (got ${r?.status})`);
  assert.match(r.json.error.message, /16 avatar files .* retry/);
  for (const c of ctrls) c.close(); // each upload ends: a cut GLB, refused
  assert.deepEqual(await Promise.all(pending), Array(16).fill(422));
  const ok = await raw('POST', '/v1/import/vrm', vrm1, GLB);
  assert.equal(ok.status, 200, 'the slots are free again');
});
