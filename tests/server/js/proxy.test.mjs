// The scale-out topology of docker/: two daemons, each behind its edge (docker/edge.conf),
// behind the front proxy (docker/nginx.conf) with consistent hashing on the room, all on
// loopback with the real config files (listen ports and server lines rewritten). A
// room's REST and WebSocket traffic must reach the same daemon. Skipped without nginx.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from './client.mjs';
import { bearer, def, request, startDaemon, until } from './daemon.mjs';

const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => spawnSync(p, ['-v']).status === 0);
const dir = mkdtempSync(join(tmpdir(), 'pt-proxy-test-'));
const procs = [];
let nodes = [], front;

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

/* Runs nginx on `conf` (text) with everything it writes kept in the test directory. */
async function nginx(name, conf, port) {
  const temps = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
    .map((t) => `    ${t}_temp_path ${dir}/${name}-${t};`).join('\n');
  conf = conf.replace(/^http \{$/m, `http {\n    access_log off;\n${temps}`);
  const path = join(dir, `${name}.conf`);
  writeFileSync(path, conf);
  const p = spawn(NGINX, ['-p', dir, '-c', path, '-g', `daemon off; pid ${dir}/${name}.pid; error_log stderr warn;`],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  p.log = '';
  p.stderr.on('data', (s) => { p.log += s; });
  procs.push(p);
  await until(() => new Promise((r) => { const s = net.connect(port, '127.0.0.1', () => { s.destroy(); r(true); }); s.on('error', () => r(false)); }),
    () => `nginx ${name} did not start: ${p.log}`);
  return p;
}

before(async () => {
  if (!NGINX) return;
  nodes = [await startDaemon(), await startDaemon()];
  const edgeConf = readFileSync('docker/edge.conf', 'utf8');
  const edgePorts = [];
  for (const [i, d] of nodes.entries()) {
    const port = await freePort();
    edgePorts.push(port);
    await nginx(`edge${i}`, edgeConf
      .replace(/listen 80;/, `listen 127.0.0.1:${port};`)
      .replace(/127\.0\.0\.1:8081/g, `127.0.0.1:${d.wsPort}`)
      .replace(/127\.0\.0\.1:8080/g, `127.0.0.1:${d.httpPort}`), port);
  }
  const frontPort = await freePort();
  let frontConf = readFileSync('docker/nginx.conf', 'utf8').replace(/listen 80;/, `listen 127.0.0.1:${frontPort};`);
  /* Two nodes: node3's lines go, node1 and node2 become the edges. */
  frontConf = frontConf.split('\n').filter((l) => !/node3/.test(l)).join('\n')
    .replace(/node([12]):80/g, (_, k) => `127.0.0.1:${edgePorts[k - 1]}`);
  await nginx('front', frontConf, frontPort);
  front = `http://127.0.0.1:${frontPort}`;
});

after(async () => {
  for (const p of procs) p.kill('SIGTERM');
  for (const d of nodes) await d.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

test('rooms are spread over the nodes; a room\'s REST and WebSocket reach the same node', { skip: !NGINX && 'nginx not installed' }, async () => {
  const rooms = Array.from({ length: 16 }, (_, i) => `room${i}`);
  const created = new Map();
  for (const room of rooms) {
    for (let k = 0; k < 2; k++) {
      const r = await request(front, 'POST', `/v1/instances?room=${room}`, def({ room, name: `${room}-${k}` }));
      assert.equal(r.status, 201, r.text);
      created.set(`${room}-${k}`, r.json);
    }
  }
  /* Each room lives on exactly one node, and both nodes got rooms. */
  const owner = new Map();
  for (const room of rooms) {
    const counts = await Promise.all(nodes.map(async (d) => (await d.req('GET', `/v1/instances?room=${room}`)).json.count));
    assert.deepEqual(counts.slice().sort(), [0, 2], `${room}: ${counts}`);
    owner.set(room, counts.indexOf(2));
  }
  assert.equal(new Set(owner.values()).size, 2, 'every room hashed to the same node');
  /* Reads and writes through the front find the instance (routed by ?room=). */
  for (const room of rooms.slice(0, 4)) {
    const a = created.get(`${room}-0`);
    assert.equal((await request(front, 'GET', `/v1/instances/${a.id}/frame?room=${room}`)).status, 200);
    const p = await request(front, 'PATCH', `/v1/instances/${a.id}?room=${room}`, { name: 'patched' }, bearer(a.token));
    assert.equal(p.status, 200, p.text);
    const bad = await request(front, 'PATCH', `/v1/instances/${a.id}?room=${room}`, { room: 'elsewhere' }, bearer(a.token));
    assert.equal(bad.status, 422);
    assert.equal(bad.json.error.field, 'room');
  }
  /* WebSocket through both proxies: the room's instances, with their ids, and frames. */
  for (const node of [0, 1]) {
    const room = rooms.find((r) => owner.get(r) === node);
    const c = await Client.open(`${front.replace('http', 'ws')}/ws?room=${room}`);
    c.send({ type: 'subscribe', room, ids: [] });
    const ids = new Set();
    for (let k = 0; k < 2; k++) ids.add((await c.next('instance_event', (m) => m.kind === 'added')).instance_id);
    assert.deepEqual([...ids].sort(), [0, 1].map((k) => BigInt(created.get(`${room}-${k}`).id)).sort());
    const b = await c.next('frame_batch', (m) => m.records.length === 2);
    assert.ok(b.tick > 0n);
    c.close();
  }
});
