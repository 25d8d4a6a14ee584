// REST against a live daemon: every route of server/README.md and every error status, with the
// error shape {"error": {"code", "message", "field"}} naming the field at fault.
//
// Nothing here depends on the machine's speed (issue 37): what takes a tick to show (a
// pose) is polled for with a generous deadline, rate limits are checked against a bound
// computed from the time the requests really took, timeouts from below only.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { bearer, def, metric, startDaemon, until } from './daemon.mjs';

const ADMIN = 'admin-token-0123456789';
let d;
before(async () => { d = await startDaemon({ args: ['--admin-token', ADMIN, '--max-body', '4096'] }); });
after(async () => { await d.cleanup(); });

function isError(r, status, code, field) {
  assert.equal(r.status, status, r.text);
  assert.equal(r.json?.error?.code, code, r.text);
  assert.equal(typeof r.json.error.message, 'string');
  assert.ok('field' in r.json.error, r.text);
  if (field !== undefined) assert.equal(r.json.error.field, field, r.text);
}

async function create(over = {}) {
  const r = await d.req('POST', '/v1/instances', def(over));
  assert.equal(r.status, 201, r.text);
  return r.json;
}

describe('operations', () => {
  test('healthz, readyz, info, metrics', async () => {
    const h = await d.req('GET', '/healthz');
    assert.equal(h.status, 200);
    assert.equal(h.json.status, 'ok');
    assert.equal((await d.req('GET', '/readyz')).status, 200);
    const i = await d.req('GET', '/v1/info');
    assert.equal(i.json.tick_hz, 60);
    assert.equal(i.json.ws_port, d.wsPort);
    assert.equal(i.json.ws_subprotocol, 'ponytail.v1');
    // the caps of an instance here (issue 38 item 3): a 1.3 frame's strands (core's),
    // --max-points (default 4096, core's), core's points per strand, colliders and bones;
    // the zones of a room's wind; and touch and grabs' (issue 40)
    assert.deepEqual(i.json.limits,
      { strands: 256, points: 4096, points_per_strand: 64, colliders: 128, bones: 54, wind_zones: 16,
        grabs: 8, hands: 64, touch: 64, allow: 64 });
    const m = await d.req('GET', '/metrics');
    assert.equal(m.status, 200);
    assert.match(m.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
    for (const name of ['ponytail_tick_duration_seconds_bucket', 'ponytail_tick_overruns_total',
      'ponytail_instances', 'ponytail_ws_connections', 'ponytail_ws_subscriptions',
      'ponytail_ws_frames_sent_total', 'ponytail_ws_bytes_sent_total',
      'ponytail_ws_frames_skipped_total', 'ponytail_poses_received_total',
      'ponytail_poses_rejected_total', 'ponytail_http_requests_total'])
      assert.ok(m.text.includes(name), name);
    assert.ok((await metric(d, 'ponytail_ticks_total')) > 0);
  });

  test('static files: the web root, the codec, no escape', async () => {
    const root = await d.req('GET', '/');
    assert.equal(root.status, 200);
    assert.match(root.headers.get('content-type'), /^text\/html/);
    const js = await d.req('GET', '/proto/js/ponytail-proto.mjs');
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type'), /^text\/javascript/);
    for (const p of ['/../server/main.c', '/%2e%2e/server/main.c', '/.git/config', '/nope.html',
      '/proto/js/../../server/main.c'])
      assert.equal((await d.req('GET', p)).status, 404, p);
  });

  test('unknown routes 404, wrong methods 405 with Allow', async () => {
    isError(await d.req('GET', '/v1/nothing'), 404, 'not_found');
    const r = await d.req('DELETE', '/v1/instances');
    isError(r, 405, 'method_not_allowed');
    assert.equal(r.headers.get('allow'), 'GET, HEAD, POST');
    const r2 = await d.req('PUT', '/v1/instances/1');
    isError(r2, 405, 'method_not_allowed');
    assert.equal(r2.headers.get('allow'), 'GET, HEAD, PATCH, DELETE');
    isError(await d.req('POST', '/metrics'), 405, 'method_not_allowed');
    isError(await d.req('GET', '/v1/instances/abc'), 400, 'bad_request', 'id');
    isError(await d.req('GET', '/v1/instances/0'), 400, 'bad_request', 'id');
  });
});

describe('create, read, list', () => {
  test('create answers 201 with id, token (once) and the full definition', async () => {
    const r = await d.req('POST', '/v1/instances', def({ name: 'alice', room: 'r1' }));
    assert.equal(r.status, 201, r.text);
    assert.match(r.json.token, /^[0-9a-f]{32}$/);
    assert.ok(Number.isInteger(r.json.id) && r.json.id > 0);
    assert.equal(r.headers.get('location'), `/v1/instances/${r.json.id}`);
    assert.equal(r.json.definition.verlet.damping, 0.96); /* defaults made explicit */
    assert.equal(r.json.definition.strands[0].points, 8);
    const g = await d.req('GET', `/v1/instances/${r.json.id}`);
    assert.equal(g.status, 200);
    assert.equal(g.json.name, 'alice');
    assert.deepEqual(g.json.definition, r.json.definition);
    assert.equal(g.json.token, undefined); /* shown once */
  });

  test('list, with and without ?room=', async () => {
    const a = await create({ room: 'list-a' });
    const b = await create({ room: 'list-b' });
    const all = await d.req('GET', '/v1/instances');
    assert.ok(all.json.instances.some((i) => i.id === a.id));
    assert.ok(all.json.instances.some((i) => i.id === b.id));
    const onlyA = await d.req('GET', '/v1/instances?room=list-a');
    assert.deepEqual(onlyA.json.instances.map((i) => i.id), [a.id]);
    assert.equal(onlyA.json.count, 1);
  });

  test('400 malformed, 415 wrong type, 413 too large, 422 invalid (field named)', async () => {
    isError(await d.req('POST', '/v1/instances', '{"name": '), 400, 'bad_request');
    isError(await d.req('POST', '/v1/instances', '[1, 2]'), 400, 'bad_request');
    isError(await d.req('POST', '/v1/instances', ''), 400, 'bad_request');
    isError(await d.req('POST', '/v1/instances', '{"name":"a","name":"b"}'), 400, 'bad_request');
    isError(await d.req('POST', '/v1/instances', '{}', { 'Content-Type': 'text/plain' }), 415, 'unsupported_media_type');
    isError(await d.req('POST', '/v1/instances', 'name=x', { 'Content-Type': 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type');
    isError(await d.req('POST', '/v1/instances', { name: 'x'.repeat(5000) }), 413, 'too_large');
    isError(await d.req('POST', '/v1/instances', def({ strands: [{ points: 100 }] })), 422, 'invalid', 'strands[0].points');
    isError(await d.req('POST', '/v1/instances', def({ colour: 'red' })), 422, 'invalid', 'colour');
    // more strands than an instance may have (/v1/info limits.strands); 256 are taken
    const many = await d.req('POST', '/v1/instances', def({ strands: Array.from({ length: 257 }, () => ({ points: 2 })) }));
    isError(many, 422, 'invalid', 'strands');
    assert.match(many.json.error.message, /at most 256/);
    const all = await d.req('POST', '/v1/instances', def({ strands: Array.from({ length: 256 }, () => ({ points: 2 })) }));
    assert.equal(all.status, 201, all.text);
    isError(await d.req('POST', '/v1/instances', def({ verlet: { damping: 'lots' } })), 422, 'invalid', 'verlet.damping');
    isError(await d.req('POST', '/v1/instances', def({ driver: { motion: 'fly' } })), 422, 'invalid', 'driver.motion');
    isError(await d.req('POST', '/v1/instances', def({ driver: { motion: 'shake', period: -1 } })), 422, 'invalid', 'driver.period');
  });

  test('413 also for a chunked body without Content-Length', async () => {
    const big = 'x'.repeat(6000);
    const stream = new ReadableStream({ start(c) { c.enqueue(new TextEncoder().encode(`{"name":"${big}"}`)); c.close(); } });
    const r = await d.req('POST', '/v1/instances', stream);
    assert.equal(r.status, 413);
  });

  test('a room that differs from the one the request was routed by is 422 (room)', async () => {
    isError(await d.req('POST', '/v1/instances?room=a', def({ room: 'b' })), 422, 'invalid', 'room');
    isError(await d.req('POST', '/v1/instances', def({ room: 'b' }), { 'X-Ponytail-Room': 'a' }), 422, 'invalid', 'room');
    assert.equal((await d.req('POST', '/v1/instances', def({ room: 'a' }), { 'X-Ponytail-Room': 'a' })).status, 201);
  });

  test('404 for unknown instances', async () => {
    isError(await d.req('GET', '/v1/instances/999999'), 404, 'not_found', 'id');
    isError(await d.req('GET', '/v1/instances/999999/frame'), 404, 'not_found', 'id');
  });
});

describe('writes need the token', () => {
  test('401 without or with a malformed header, 403 with another token, admin token works', async () => {
    const a = await create();
    const b = await create();
    const r = await d.req('PATCH', `/v1/instances/${a.id}`, { name: 'x' });
    isError(r, 401, 'unauthorized');
    assert.match(r.headers.get('www-authenticate'), /^Bearer/);
    isError(await d.req('PATCH', `/v1/instances/${a.id}`, { name: 'x' }, { Authorization: `Basic ${a.token}` }), 401, 'unauthorized');
    isError(await d.req('PATCH', `/v1/instances/${a.id}`, { name: 'x' }, bearer(b.token)), 403, 'forbidden');
    isError(await d.req('DELETE', `/v1/instances/${a.id}`, undefined, bearer(b.token)), 403, 'forbidden');
    isError(await d.req('POST', `/v1/instances/${a.id}/reset`, undefined, bearer('0'.repeat(32))), 403, 'forbidden');
    isError(await d.req('PUT', `/v1/instances/${a.id}/pose`, { p: [0, 0, 0], q: [0, 0, 0, 1] }), 401, 'unauthorized');
    isError(await d.req('PATCH', '/v1/instances/999999', { name: 'x' }, bearer(a.token)), 404, 'not_found');
    const ok = await d.req('PATCH', `/v1/instances/${a.id}`, { name: 'by-admin' }, bearer(ADMIN));
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.name, 'by-admin');
    /* Tokens are never logged. */
    assert.ok(!d.log.includes(a.token) && !d.log.includes(ADMIN));
  });
});

describe('PATCH is a JSON merge patch, validated as a whole, applied atomically', () => {
  test('merge semantics: one field changes, siblings stay, arrays replace, null removes', async () => {
    const a = await create({ name: 'm', driver: { motion: 'shake', amplitude: 20 } });
    const r = await d.req('PATCH', `/v1/instances/${a.id}`, { verlet: { damping: 0.9 } }, bearer(a.token));
    assert.equal(r.status, 200, r.text);
    const want = structuredClone(a.definition);
    want.verlet.damping = 0.9;
    assert.deepEqual(r.json.definition, want);
    const r2 = await d.req('PATCH', `/v1/instances/${a.id}`,
      { strands: [{ points: 5, segment_length: 0.05 }], driver: null },
      { ...bearer(a.token), 'Content-Type': 'application/merge-patch+json' });
    assert.equal(r2.status, 200, r2.text);
    assert.equal(r2.json.definition.strands.length, 1);
    assert.equal(r2.json.definition.strands[0].points, 5);
    assert.equal(r2.json.definition.driver, undefined);
    assert.equal(r2.json.driven, false);
    assert.equal(r2.json.definition.verlet.damping, 0.9);
    /* The sim applied it: the frame has the new shape. */
    const f = await d.req('GET', `/v1/instances/${a.id}/frame`);
    assert.equal(f.json.strands[0].length, 5);
  });

  test('an invalid patch names the field and changes nothing', async () => {
    const a = await create();
    const before = (await d.req('GET', `/v1/instances/${a.id}`)).json;
    isError(await d.req('PATCH', `/v1/instances/${a.id}`, { name: 'new', strands: [{ points: 1 }] }, bearer(a.token)),
      422, 'invalid', 'strands[0].points');
    isError(await d.req('PATCH', `/v1/instances/${a.id}`, { verlet: { iterations: 0 } }, bearer(a.token)),
      422, 'invalid', 'verlet.iterations');
    isError(await d.req('PATCH', `/v1/instances/${a.id}`, { driver: { motion: 'nod', amplitude: 1000 } }, bearer(a.token)),
      422, 'invalid', 'driver.amplitude');
    isError(await d.req('PATCH', `/v1/instances/${a.id}`, '{"name": ', bearer(a.token)), 400, 'bad_request');
    isError(await d.req('PATCH', `/v1/instances/${a.id}`, '{}', { ...bearer(a.token), 'Content-Type': 'text/plain' }), 415, 'unsupported_media_type');
    const afterPatch = (await d.req('GET', `/v1/instances/${a.id}`)).json;
    assert.deepEqual(afterPatch, before);
  });

  test('a parameter change keeps the motion; a topology change resets', async () => {
    const a = await create({ driver: { motion: 'shake', amplitude: 40, period: 0.5 } });
    const f1 = (await d.req('GET', `/v1/instances/${a.id}/frame`)).json;
    const r = await d.req('PATCH', `/v1/instances/${a.id}`, { gravity: [0, -9, 0] }, bearer(a.token));
    assert.equal(r.status, 200);
    const f2 = (await d.req('GET', `/v1/instances/${a.id}/frame`)).json;
    assert.ok(f2.tick > f1.tick);
    assert.equal(f2.strands[0].length, 8);
  });
});

describe('reset, frame, pose, delete', () => {
  test('frame is the JSON form; PUT pose moves the head; reset answers 204', async () => {
    const a = await create();
    const f = await d.req('GET', `/v1/instances/${a.id}/frame`);
    assert.equal(f.status, 200);
    assert.ok(f.json.tick > 0);
    assert.ok(Math.abs(f.json.t - f.json.tick / 60) < 1e-9);
    assert.equal(f.json.strands.length, 1);
    assert.equal(f.json.strands[0].length, 8);
    assert.deepEqual(f.json.strands[0][0].map((x) => Math.round(x * 1000)), [0, 60, -90]);
    const p = await d.req('PUT', `/v1/instances/${a.id}/pose`, { p: [1, 2, 3], q: [0, 0, 0, 2], seq: 42 }, bearer(a.token));
    assert.equal(p.status, 204, p.text);
    /* 204 when admitted; applied at the start of the next tick */
    const g = await until(async () => {
      const r = (await d.req('GET', `/v1/instances/${a.id}/frame`)).json;
      return r.last_seq === 42 && r;
    }, 'a frame with the pose\'s seq 42');
    assert.deepEqual(g.head.p, [1, 2, 3]);
    assert.deepEqual(g.head.q, [0, 0, 0, 1]);
    assert.equal(g.last_seq, 42);
    /* The root follows the head: anchor (0, 0.06, -0.09) from (1, 2, 3). */
    assert.deepEqual(g.strands[0][0].map((x) => Math.round(x * 1000)), [1000, 2060, 2910]);
    assert.equal((await d.req('POST', `/v1/instances/${a.id}/reset`, undefined, bearer(a.token))).status, 204);
  });

  test('a pose with w is extrapolated for 50 ms from its arrival, then held', async () => {
    const a = await create();
    const p = await d.req('PUT', `/v1/instances/${a.id}/pose`, { p: [0, 1.5, 0], q: [0, 0, 0, 1], v: [1, 0, 0], w: [0, 4, 0], seq: 5 }, bearer(a.token));
    assert.equal(p.status, 204, p.text);
    /* The extrapolation ends after 50 ms of ticks (the pose's age grows by a tick per
     * tick), however long the machine takes: read frames until two of different ticks
     * carry the same head (held), and that head must be the end of the extrapolation. */
    let prev = null;
    const g = await until(async () => {
      const f = (await d.req('GET', `/v1/instances/${a.id}/frame`)).json;
      const held = prev && f.last_seq === 5 && prev.last_seq === 5 && f.tick > prev.tick &&
        JSON.stringify(f.head) === JSON.stringify(prev.head);
      prev = f;
      return held && f;
    }, () => `the head held still (last frame: tick ${prev?.tick}, ${JSON.stringify(prev?.head)})`);
    /* 4 rad/s about +y for 0.05 s: 0.2 rad, q = [0, sin 0.1, 0, cos 0.1]; 1 m/s: 5 cm */
    assert.ok(Math.abs(g.head.q[1] - Math.sin(0.1)) < 1e-4, JSON.stringify(g.head));
    assert.ok(Math.abs(g.head.q[3] - Math.cos(0.1)) < 1e-4, JSON.stringify(g.head));
    assert.ok(Math.abs(g.head.p[0] - 0.05) < 1e-4, JSON.stringify(g.head));
    isError(await d.req('PUT', `/v1/instances/${a.id}/pose`, { p: [0, 0, 0], q: [0, 0, 0, 1], w: [0, 101, 0] }, bearer(a.token)), 422, 'invalid', 'w');
  });

  test('bad poses are 422 naming the field; poses to a driven instance are 409', async () => {
    const a = await create();
    const put = (body) => d.req('PUT', `/v1/instances/${a.id}/pose`, body, bearer(a.token));
    isError(await put({ p: [0, 0], q: [0, 0, 0, 1] }), 422, 'invalid', 'p');
    isError(await put({ p: [0, 1e9, 0], q: [0, 0, 0, 1] }), 422, 'invalid', 'p');
    isError(await put({ p: [0, 0, 0], q: [0, 0, 0, 0] }), 422, 'invalid', 'q');
    isError(await put({ p: [0, 0, 0], q: [0, 0, 0, 1], seq: -1 }), 422, 'invalid', 'seq');
    isError(await put({ p: [0, 0, 0], q: [0, 0, 0, 1], v: 1 }), 422, 'invalid', 'v');
    const before = await metric(d, 'ponytail_poses_rejected_total', 'reason="invalid"');
    assert.ok(before >= 5);
    const b = await create({ driver: { motion: 'nod' } });
    isError(await d.req('PUT', `/v1/instances/${b.id}/pose`, { p: [0, 0, 0], q: [0, 0, 0, 1] }, bearer(b.token)), 409, 'conflict', 'driver');
  });

  test('delete answers 204, then the instance is gone', async () => {
    const a = await create();
    assert.equal((await d.req('DELETE', `/v1/instances/${a.id}`, undefined, bearer(a.token))).status, 204);
    isError(await d.req('GET', `/v1/instances/${a.id}`), 404, 'not_found');
    isError(await d.req('GET', `/v1/instances/${a.id}/frame`), 404, 'not_found');
    isError(await d.req('DELETE', `/v1/instances/${a.id}`, undefined, bearer(a.token)), 404, 'not_found');
  });

  test('requests are counted by route and status', async () => {
    assert.ok((await metric(d, 'ponytail_http_requests_total', 'route="POST /v1/instances",code="201"')) >= 1);
    assert.ok((await metric(d, 'ponytail_http_requests_total', 'route="POST /v1/instances",code="422"')) >= 1);
  });
});

describe('limits', () => {
  test('503 beyond --max-instances, 429 beyond --write-rate, 422 beyond --max-points', async () => {
    const small = await startDaemon({ args: ['--max-instances', '2', '--write-rate', '5', '--max-points', '20'] });
    try {
      /* Every write counts against --write-rate 5 (a second's worth of burst): of the 14
       * below, at most 5 + 5 per second they took get through, whatever their answer, and
       * the last 10, sent together, come nowhere near that. */
      const t0 = performance.now();
      isError(await small.req('POST', '/v1/instances', def({ strands: [{ points: 12 }, { points: 12 }] })), 422, 'invalid', 'strands');
      const body = def();
      assert.equal((await small.req('POST', '/v1/instances', body)).status, 201);
      assert.equal((await small.req('POST', '/v1/instances', body)).status, 201);
      isError(await small.req('POST', '/v1/instances', body), 503, 'unavailable');
      const codes = (await Promise.all(Array.from({ length: 10 }, () => small.req('POST', '/v1/instances', body)))).map((r) => r.status);
      const secs = (performance.now() - t0) / 1000;
      const through = 4 + codes.filter((c) => c !== 429).length;
      assert.ok(through <= 5 + 5 * secs + 1, `${through} writes through in ${secs.toFixed(2)} s: ${codes}`);
      assert.ok(codes.includes(429), codes.join(','));
      assert.ok(codes.every((c) => c === 429 || c === 503), codes.join(','));
      /* Reads are not rate limited. */
      assert.equal((await small.req('GET', '/v1/instances')).status, 200);
    } finally { await small.cleanup(); }
  });

  test('connections per client address and idle timeout', async () => {
    const small = await startDaemon({ args: ['--max-conns-per-ip', '2', '--request-timeout', '1'] });
    /* From an address of their own: this process's fetch() may keep a connection from
     * 127.0.0.1 open (startDaemon's readiness check), which would take one of the two. */
    const open = () => new Promise((resolve) => {
      const s = net.connect({ port: small.httpPort, host: '127.0.0.1', localAddress: '127.0.0.2' }, () => resolve(s));
      s.gone = false;
      s.closedAt = new Promise((r) => s.on('close', () => { s.gone = true; r(performance.now()); }));
      s.on('error', () => {});
    });
    try {
      const t0 = performance.now();
      const a = await open(), b = await open();
      const c = await open(); /* over the limit: accepted and closed at once, and logged */
      await until(() => c.gone, 'the third connection from one address is closed');
      await until(() => /connection limit/.test(small.log), () => `the refusal is logged:\n${small.log}`);
      /* The two idle ones are closed by --request-timeout 1, not before (a bound from
       * below holds on any machine). */
      await until(() => a.gone, 'idle connection should time out');
      const aClosed = await a.closedAt;
      assert.ok(aClosed - t0 >= 900, `idle connection closed after ${aClosed - t0} ms`);
      b.destroy();
    } finally { await small.cleanup(); }
  });
});
