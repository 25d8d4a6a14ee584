// The opening of a connection as PROTOCOL.md sections 1 and 3 state it, against a live
// daemon: the upgrade (any path, subprotocol required), version negotiation (welcome 1.1
// carries the encoder's error bound, 1.0 does not; later messages carry the negotiated
// minor) and the version error for a hello of another major.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client } from './client.mjs';
import { def, startDaemon } from './daemon.mjs';
import { RawWs } from './rawws.mjs';

let d;
before(async () => { d = await startDaemon(); });
after(async () => { await d.cleanup(); });

const json = (m) => JSON.stringify(m, (k, v) => (typeof v === 'bigint' ? String(v) : v));

test('the upgrade is accepted on any path; without ponytail.v1 it is refused (400 with the reason, or closed unanswered)', async () => {
  for (const path of ['/', '/ponytail/ws?room=a']) {
    const w = await RawWs.open(d.wsPort, { path });
    w.destroy();
  }
  const w = await RawWs.open(d.wsPort, { protocol: 'chat, ponytail.v1' }); // one of several
  w.destroy();
  /* No subprotocol header reaches ponytaild, which answers 400 with the reason; one that
   * names only others is refused by libwebsockets itself, which closes unanswered. */
  const none = await RawWs.open(d.wsPort, { protocol: null }).then(() => null, (e) => e);
  assert.match(none?.head ?? '', /^HTTP\/1\.[01] 400 [^]*no ponytail\.v1 subprotocol/);
  for (const protocol of ['chat', 'ponytail.v2']) {
    const e = await RawWs.open(d.wsPort, { protocol }).then(() => null, (err) => err);
    assert.ok(e && e.head === '', String(protocol));
  }
});

test('hello 1.1: welcome 1.1 with max_error_m, and every later message in 1.1', async () => {
  const r = await d.req('POST', '/v1/instances', def({ room: 'hs' }));
  assert.equal(r.status, 201, r.text);
  const c = await Client.open(d.ws, { minor: 1 });
  assert.equal(c.welcome.header_minor, 1);
  assert.equal(c.welcome.minor, 1);
  assert.equal(c.welcome.max_error_m, Math.fround(0.001));
  c.send({ type: 'subscribe', room: 'hs', ids: [] });
  assert.equal((await c.next('instance_event')).header_minor, 1);
  assert.equal((await c.next('frame_batch')).header_minor, 1);
  c.close();
});

test('hello 1.0 (an old client): welcome 1.0 without the new field, frames in 1.0; a newer minor gets ours', async () => {
  const c = await Client.open(d.ws, { minor: 0 });
  assert.equal(c.welcome.header_minor, 0);
  assert.equal(c.welcome.minor, 0);
  assert.equal(c.welcome.max_error_m, undefined);
  c.send({ type: 'subscribe', room: 'hs', ids: [] });
  assert.equal((await c.next('frame_batch')).header_minor, 0);
  c.close();
  const n = await Client.open(d.ws, { minor: 9 });
  assert.equal(n.welcome.minor, 5); /* ours since 1.5 (PROTOCOL.md 3) */
  assert.equal(n.welcome.header_minor, 5);
  n.close();
});

test('a hello whose payload major is 2 gets error version (closing), then close 1002', async () => {
  const c = await Client.open(d.ws, { hello: false });
  const b = new Uint8Array([0x50, 0x54, 1, 0, 0x01, 0, 3, 0, 0, 0, 2, 0, 0]); // hello 2.0, no name
  c.sendRaw(b);
  const e = await c.next('error');
  assert.ok(e.code === 2 && (e.flags & 1) === 1 && e.about_type === 1, json(e));
  assert.equal((await c.closed).code, 1002);
  assert.equal(c.msgs.filter((m) => m.type === 'welcome').length, 0);
});
