// The REST contract itself: server/openapi.json is a valid OpenAPI 3.1 document (the
// official schema), the daemon serves exactly it, it names every route of the route
// table (server/rest.c) and nothing else, and the response checker every other test
// uses (contract.mjs, through daemon.mjs's request()) does reject what breaks it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { check, doc, DOC_PATH, lint, route } from './contract.mjs';
import { def, request, startDaemon } from './daemon.mjs';

let d;
before(async () => { d = await startDaemon(); });
after(() => d.cleanup());

test('the document is valid OpenAPI 3.1, and the linter does catch a broken one', async () => {
  const r = await lint();
  assert.equal(r.valid, true, JSON.stringify(r.errors, null, 1));
  assert.equal(doc.openapi, '3.1.0');
  const broken = structuredClone(doc);
  broken.paths['/v1/info'].get.responses = { 200: { content: 'no' } };
  assert.equal((await lint(broken)).valid, false);
});

test('GET /v1/openapi.json serves the committed file byte for byte', async () => {
  const r = await d.req('GET', '/v1/openapi.json');
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'application/json');
  assert.equal(r.text, readFileSync(DOC_PATH, 'utf8'));
});

test('the document and the route table name the same routes', () => {
  const table = readFileSync('server/rest.c', 'utf8');
  const routes = [...table.matchAll(/^\s+\{"([A-Z]+)", "(\/[^"]*)", h_\w+,/gm)].map((m) => `${m[1]} ${m[2]}`);
  assert.ok(routes.length >= 10, `parsed ${routes.length} routes from server/rest.c`);
  const documented = Object.entries(doc.paths).flatMap(([p, item]) =>
    Object.keys(item).filter((k) => k !== 'parameters').map((m) => `${m.toUpperCase()} ${p}`));
  /* The static route ("*") is documented as / and /proto/js/{file}. */
  const statics = ['GET /', 'GET /proto/js/{file}'];
  assert.deepEqual(routes.slice().sort(), documented.filter((x) => !statics.includes(x)).sort());
  assert.ok(statics.every((x) => documented.includes(x)));
  /* Every operation documents its errors with the one Error shape. */
  for (const [p, item] of Object.entries(doc.paths))
    for (const [m, op] of Object.entries(item)) {
      if (m === 'parameters') continue;
      for (const [code, resp] of Object.entries(op.responses))
        if (Number(code) >= 400 && resp.content?.['application/json'])
          assert.match(JSON.stringify(resp.content['application/json'].schema), /Error|Health|Ready/, `${m} ${p} ${code}`);
    }
});

test('the response checker rejects what the contract does not allow', async () => {
  const h = (type) => new Headers(type ? { 'content-type': type } : {});
  const ok = await d.req('POST', '/v1/instances', def());
  assert.equal(ok.status, 201);
  assert.equal(route(`/v1/instances/${ok.json.id}/frame`), '/v1/instances/{id}/frame');
  const bad = (r, re) => assert.throws(() => check(r.method ?? 'GET', r.url, r), re);
  const body = { ...ok.json };
  delete body.token;
  bad({ method: 'POST', url: '/v1/instances', status: 201, headers: new Headers({ 'content-type': 'application/json', location: '/v1/instances/1' }), json: body, text: JSON.stringify(body) },
    /must have required property 'token'/);
  bad({ method: 'POST', url: '/v1/instances', status: 201, headers: h('application/json'), json: ok.json, text: ok.text }, /no Location header/);
  bad({ url: '/v1/info', status: 200, headers: h('application/json'), json: { name: 'ponytaild' }, text: '{}' }, /must have required property/);
  bad({ url: '/v1/info', status: 418, headers: h('application/json'), json: {}, text: '{}' }, /status 418 is not one of/);
  bad({ url: '/v1/info', status: 200, headers: h('text/html'), json: null, text: '<p>' }, /Content-Type text\/html/);
  bad({ url: '/healthz', status: 503, headers: h('application/json'), json: { error: {} }, text: '{}' }, /must have required property 'status'/);
  bad({ method: 'DELETE', url: '/v1/instances/1', status: 204, headers: h('application/json'), json: {}, text: '{}' }, /says no body/);
  bad({ url: '/v1/nope', status: 200, headers: h('application/json'), json: {}, text: '{}' }, /must be 404/);
  bad({ method: 'POST', url: '/v1/info', status: 405, headers: new Headers({ 'content-type': 'application/json', allow: 'GET' }),
    json: { error: { code: 'method_not_allowed', message: 'x', field: null } }, text: '{}' }, /Allow: GET, the document has get, head/);
  const e = { error: { code: 'teapot', message: 'x', field: null } };
  bad({ url: '/v1/instances/1', status: 404, headers: h('application/json'), json: e, text: JSON.stringify(e) }, /must be equal to one of the allowed values/);
});

test('every part of a definition is in the contract: rest shapes, per-point values, drivers', async () => {
  /* The canonical document answered back (checked by request()) names what it holds. */
  const full = def({
    strands: [{ rest: [[0, 0.06, -0.09], [0, 0.03, -0.1], [0, 0, -0.12]], mass: [2, 3], radius: [0.01, 0.02], gravity_scale: 0.5 },
      { points: 4, colliders: [], springbone: { stiffness: [1, 0.8, 0.6], limit: [{ type: 'cone', angle_deg: 30 }, {}, {}] } }],
    colliders: [{ shape: 'capsule', attach: 'head', a: [0, -0.08, 0], b: [0, -0.2, 0], radius: 0.05, radius_b: 0.04 }],
    driver: { motion: 'nod' },
  });
  const r = await d.req('POST', '/v1/instances', full);
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(r.json.definition.strands[0].rest[2], [0, 0, -0.12]);
  assert.equal((await d.req('GET', `/v1/instances/${r.json.id}`)).status, 200);
});

test('the enumerations the daemon accepts are the document\'s', async () => {
  /* Driver motions: each one the document lists is accepted, and the daemon's list of
   * the accepted ones (its 422 message) is exactly the document's. */
  const motions = doc.components.schemas.Driver.properties.motion.enum;
  for (const motion of motions)
    assert.equal((await d.req('POST', '/v1/instances', def({ driver: { motion } }))).status, 201, motion);
  const bad = await d.req('POST', '/v1/instances', def({ driver: { motion: 'fly' } }));
  assert.equal(bad.status, 422);
  assert.deepEqual(/expected one of (.*)$/.exec(bad.json.error.message)[1].split(', '), motions);
});

test('error answers of every kind match the contract (checked by request())', async () => {
  for (const [m, p, body, want] of [
    ['GET', '/v1/instances/abc', undefined, 400], ['GET', '/v1/instances/999', undefined, 404],
    ['POST', '/v1/instances', '{', 400], ['POST', '/v1/instances', { strands: [{ points: 1 }] }, 422],
    ['DELETE', '/v1/instances/1', undefined, 401], ['POST', '/v1/info', undefined, 405], ['PUT', '/metrics', undefined, 405],
    ['GET', '/v1/nothing', undefined, 404], ['GET', '/no-such-file.txt', undefined, 404], ['GET', '/', undefined, 200],
    ['GET', '/proto/js/ponytail-proto.mjs', undefined, 200], ['GET', '/metrics', undefined, 200], ['HEAD', '/v1/info', undefined, 200],
  ]) {
    const r = await request(d.http, m, p, body);
    assert.equal(r.status, want, `${m} ${p}: ${r.text}`);
  }
});
