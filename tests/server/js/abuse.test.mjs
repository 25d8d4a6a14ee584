// The abuse catalogue: hostile or broken clients against one daemon. After each case the
// daemon still answers, a well-behaved subscriber still receives every tick, and the
// stored data is intact (checked once more at the end).
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, test } from 'node:test';
import { Client } from './client.mjs';
import { def, sleep, startDaemon } from './daemon.mjs';

let d, watcher, ref;
before(async () => {
  d = await startDaemon({ args: ['--max-body', '65536'] });
  ref = (await d.req('POST', '/v1/instances', def({ name: 'ref', room: 'ref' }))).json;
  watcher = await Client.open(d.ws);
  watcher.send({ type: 'subscribe', room: 'ref', ids: [] });
  await watcher.next('frame_batch');
});
after(async () => {
  watcher.close();
  await d.cleanup();
});

// The daemon is healthy: it answers, the reference instance is intact, and the watcher's
// frames keep coming with consecutive ticks.
async function stillHealthy() {
  const r = await d.req('GET', `/v1/instances/${ref.id}`);
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.json.definition, ref.definition);
  watcher.msgs.length = 0;
  const a = await watcher.next('frame_batch');
  const b = await watcher.next('frame_batch');
  assert.ok(b.tick > a.tick);
}

// Resolves with what p resolves to, or `fallback` after ms (the timer does not hold the
// test process open).
function within(p, ms, fallback = null) {
  let t;
  return Promise.race([p, new Promise((r) => { t = setTimeout(() => r(fallback), ms); })])
    .finally(() => clearTimeout(t));
}

// Opens a raw TCP connection to the HTTP port; resolves with the socket once connected.
// s.text collects what the server sends, s.ended resolves when it closes.
function raw(port = d.httpPort) {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.text = '';
    s.setEncoding('latin1');
    s.on('data', (t) => { s.text += t; });
    s.ended = new Promise((r) => s.on('close', r));
    s.on('error', () => {});
  });
}

test('a chunked body that never ends gets 413 and a close once past --max-body', async () => {
  const s = await raw();
  s.write('POST /v1/instances HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
    'Transfer-Encoding: chunked\r\n\r\n');
  const chunk = '1000\r\n' + 'x'.repeat(4096) + '\r\n';
  let sent = 0;
  const pump = setInterval(() => { if (!s.destroyed) { s.write(chunk); sent += 4096; } }, 1);
  const closed = await within(s.ended.then(() => true), 10000, false);
  clearInterval(pump);
  s.destroy();
  assert.ok(closed, 'the connection should be closed');
  assert.match(s.text, /^HTTP\/1\.1 413 /);
  assert.match(s.text, /"code":"too_large"/);
  assert.ok(sent < 4 * 65536, `read ${sent} bytes before refusing`);
  await stillHealthy();
});
