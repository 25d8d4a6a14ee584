// Room wind (issue 40 item 4): PUT/PATCH/GET /v1/rooms/{room}/wind. Who may write it (an
// instance of the room, or only the admin token when one is set), field-named 422s with
// the allowed range and nothing half-applied, the zone limit in /v1/info, the wind
// blowing on the room's instances and on no other, an instance entering the room getting
// it and one leaving losing it, persistence across a restart, and a recording of the room
// with the wind changed mid-way replaying with `ponytail replay --verify`.
// timeout: 180 (two daemons, a restart, waits for strands to swing; a loaded sanitizer build)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import { check } from './contract.mjs';
import { BIN, bearer, def, request, startDaemon, tempDir, until } from './daemon.mjs';

const CLI = join(dirname(BIN), 'ponytail');
const tmp = tempDir();
const data = join(tmp, 'data');
const daemons = [];
after(async () => { for (const d of daemons) await d.cleanup(); });

const still = (room, name) => def({ name, room, prewarm_s: 0.5 });
const wind = (d, room, method, body, token, type) => request(d.http, method, `/v1/rooms/${room}/wind`, body,
  { ...(token ? bearer(token) : {}), ...(type ? { 'Content-Type': type } : {}) });
const frame = async (d, id) => (await request(d.http, 'GET', `/v1/instances/${id}/frame`)).json;
// how far the tip is blown along +X from under the root, m
const lean = (f) => { const s = f.strands[0]; return s[s.length - 1][0] - s[0][0]; };

const east = { zones: [{ type: 'global', direction: [1, 0, 0], strength: 12 }] };

test('room wind: auth, limits, field-named errors, the room and no other, joining and leaving, restart, replay', async () => {
  let d = await startDaemon({ data, args: ['--record-seconds', '60'] });
  daemons.push(d);
  const info = await d.req('GET', '/v1/info');
  assert.equal(info.json.limits.wind_zones, 16);

  const mk = async (room, name) => { const r = await d.req('POST', '/v1/instances', still(room, name)); assert.equal(r.status, 201, r.text); return r.json; };
  const a = await mk('windy', 'a'), b = await mk('calm', 'b'), c = await mk('calm', 'c');

  // a room without wind reads as no zones
  assert.deepEqual((await wind(d, 'windy', 'GET')).json, { zones: [] });
  assert.equal((await wind(d, 'bad room!', 'GET')).status, 422);

  // who may write: an instance of the room; nobody without a token; not another room's
  assert.equal((await wind(d, 'windy', 'PUT', east)).status, 401);
  let r = await wind(d, 'windy', 'PUT', east, b.token);
  assert.equal(r.status, 403, r.text);
  assert.match(r.json.error.message, /instance in room 'windy'/);
  assert.equal((await wind(d, 'empty', 'PUT', east, a.token)).status, 403); /* no instances there */

  // bad input: the field, the range, and nothing changed
  const zone = (over) => ({ type: 'sphere', direction: [0, 0, 1], strength: 3, center: [0, 1, 0], radius: 1, ...over });
  const bad = [
    [{ zones: [east.zones[0], zone({}), zone({ radius: 0 })] }, 'zones[2].radius', /\(0, 1000\]/],
    [{ zones: [zone({ strength: 101 })] }, 'zones[0].strength', /\[0, 100\]/],
    [{ zones: [zone({ turbulence: 3 })] }, 'zones[0].turbulence', /\[0, 2\]/],
    [{ zones: [zone({ falloff: -1 })] }, 'zones[0].falloff', /\[0, 1000\]/],
    [{ zones: [zone({ direction: [0, 0, 0] })] }, 'zones[0].direction', /length/],
    [{ zones: [zone({ type: 'box', radius: undefined, size: [1, 0, 1] })] }, 'zones[0].size', /\(0, 2000\]/],
    [{ zones: [zone({ type: 'cone' })] }, 'zones[0].type', /global/],
    [{ zones: [zone({ speed: 3 })] }, 'zones[0].speed', /unknown field/],
    [{ zones: [{ ...east.zones[0], radius: 2 }] }, 'zones[0].radius', /not allowed for type "global"/],
    [{ zones: [{ type: 'global', direction: [1, 0, 0] }] }, 'zones[0].strength', /required/],
    [{ zones: [zone({ radius: undefined })] }, 'zones[0].radius', /required/],
    [{ zones: [zone({ seed: -1 })] }, 'zones[0].seed', /4294967295/],
    [{ zones: Array.from({ length: 17 }, () => east.zones[0]) }, 'zones', /at most 16/],
    [{ zones: {} }, 'zones', /array/],
    [{}, 'zones', /required/],
    [{ zones: [], extra: 1 }, 'extra', /unknown field/],
  ];
  for (const [body, field, msg] of bad) {
    r = await wind(d, 'windy', 'PUT', JSON.parse(JSON.stringify(body)), a.token);
    assert.equal(r.status, 422, `${field}: ${r.text}`);
    assert.equal(r.json.error.field, field, r.text);
    assert.match(r.json.error.message, msg, r.text);
  }
  assert.deepEqual((await wind(d, 'windy', 'GET')).json, { zones: [] });

  // PUT: canonical answer, the same on GET
  r = await wind(d, 'windy', 'PUT', east, a.token);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json, { zones: [{ type: 'global', direction: [1, 0, 0], strength: 12, turbulence: 0, seed: 1 }] });
  assert.deepEqual((await wind(d, 'windy', 'GET')).json, r.json);

  // it blows on the room's instance, not on the other room's
  await until(async () => lean(await frame(d, a.id)) > 0.05, 'a leans east');
  for (const i of [b, c]) assert.ok(Math.abs(lean(await frame(d, i.id))) < 1e-4, 'b and c hang straight');

  // PATCH (merge patch: "zones" replaced as a whole), both media types; a bad one changes nothing
  const gusty = { zones: [{ type: 'global', direction: [0, 0, -1], strength: 6, turbulence: 0.5, seed: 7 },
    { type: 'box', direction: [1, 0, 0], strength: 10, center: [0, 0, 0], size: [2, 2, 2], falloff: 0.25 }] };
  r = await wind(d, 'windy', 'PATCH', gusty, a.token, 'application/merge-patch+json');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.zones.length, 2);
  assert.equal(r.json.zones[1].falloff, 0.25);
  r = await wind(d, 'windy', 'PATCH', { zones: [gusty.zones[0], { ...gusty.zones[1], size: [2, 2, 2001] }] }, a.token);
  assert.equal(r.status, 422);
  assert.equal(r.json.error.field, 'zones[1].size');
  assert.equal((await wind(d, 'windy', 'GET')).json.zones.length, 2);

  // an instance entering the room gets the wind, one leaving loses it
  assert.equal((await d.req('PATCH', `/v1/instances/${c.id}`, { room: 'windy' }, bearer(c.token))).status, 200);
  await until(async () => lean(await frame(d, c.id)) > 0.05, 'c, moved in, leans east');
  assert.equal((await d.req('PATCH', `/v1/instances/${a.id}`, { room: 'calm' }, bearer(a.token))).status, 200);
  await until(async () => Math.abs(lean(await frame(d, a.id))) < 1e-3, 'a, moved out, hangs straight again');
  const late = await mk('windy', 'late');
  await until(async () => lean(await frame(d, late.id)) > 0.05, 'a new instance of the room leans east');
  assert.ok(Math.abs(lean(await frame(d, b.id))) < 1e-4, 'b still hangs straight');

  // the room's recording, the wind set and changed in it, replays to every hash
  r = await wind(d, 'windy', 'PUT', east, c.token);
  assert.equal(r.status, 200);
  const t0 = (await frame(d, c.id)).tick;
  await until(async () => (await frame(d, c.id)).tick > t0 + 10, 'ten more ticks');
  const res = await fetch(`${d.http}/v1/rooms/windy/recording`);
  const bytes = Buffer.from(await res.arrayBuffer());
  check('GET', `${d.http}/v1/rooms/windy/recording`, { status: res.status, headers: res.headers, json: null, text: 'binary' });
  assert.equal(res.status, 200);
  const file = join(tmp, 'windy.ptrec');
  writeFileSync(file, bytes);
  for (const kernel of ['auto', 'scalar']) {
    const v = spawnSync(CLI, ['replay', file, '--verify', '--kernel', kernel], { encoding: 'utf8', maxBuffer: 1 << 30 });
    assert.equal(v.status, 0, v.stderr);
    assert.match(v.stderr, /all \d+ state hashes agree/);
  }

  // a restart keeps the wind, and the room's instances feel it from the start
  await d.stop();
  d = await startDaemon({ data });
  daemons.push(d);
  assert.deepEqual((await wind(d, 'windy', 'GET')).json, r.json);
  await until(async () => lean(await frame(d, late.id)) > 0.05, 'after the restart, late leans east');
  assert.ok(Math.abs(lean(await frame(d, b.id))) < 1e-4, 'b hangs straight after the restart');
  // no zones: the row is gone and the wind with it
  assert.deepEqual((await wind(d, 'windy', 'PUT', { zones: [] }, c.token)).json, { zones: [] });
  await until(async () => Math.abs(lean(await frame(d, late.id))) < 1e-3, 'late hangs straight without wind');
});

test('room wind with --admin-token: only the admin token writes it', async () => {
  const d = await startDaemon({ args: ['--admin-token', 'hunter2-hunter2-hunter2'] });
  daemons.push(d);
  const r = await d.req('POST', '/v1/instances', still('gale', 'g'));
  assert.equal(r.status, 201);
  const w = await wind(d, 'gale', 'PUT', east, r.json.token);
  assert.equal(w.status, 403);
  assert.match(w.json.error.message, /admin-token/);
  assert.equal((await wind(d, 'gale', 'PUT', east, 'hunter2-hunter2-hunter2')).status, 200);
  /* the admin token also writes a room that has no instances yet */
  assert.equal((await wind(d, 'nobody', 'PUT', east, 'hunter2-hunter2-hunter2')).status, 200);
  const late = await d.req('POST', '/v1/instances', still('nobody', 'n'));
  await until(async () => lean(await frame(d, late.json.id)) > 0.05, 'an instance created in a windy room leans east');
});
