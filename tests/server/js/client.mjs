// Test helper: a WebSocket client speaking proto/PROTOCOL.md through the JS codec, with a
// queue of decoded messages to await.
//
// Nothing here measures speed (issue 37: speed belongs to `make bench`). Waits are for an
// event, with a generous deadline that only a broken daemon reaches (WAIT_MS); every
// message is numbered in arrival order (m.seq), so a test can tell what came after a
// barrier (ping(): a pong is queued after everything the daemon did with the messages
// sent before the ping).
import assert from 'node:assert/strict';
import { FRAME_BATCH_C, MINOR, decodeBatchC, decodeMessage, encodeMessage, StrandDecoder } from '../../../proto/js/ponytail-proto.mjs';
import { WAIT_MS } from './daemon.mjs';

// Removes m from the queue; false when it is no longer there.
function unqueue(q, m) {
  const i = q.indexOf(m);
  if (i < 0) return false;
  q.splice(i, 1);
  return true;
}

export class Client {
  static async open(url, { name = 'test', hello = true, protocol = 'ponytail.v1', minor = 0, features } = {}) {
    const c = new Client();
    c.ws = new WebSocket(url, protocol);
    c.minor = minor;
    c.ws.binaryType = 'arraybuffer';
    c.msgs = [];
    c.waiters = [];
    c.seqNo = 0;
    c.closed = new Promise((resolve) => c.ws.addEventListener('close', (e) => resolve({ code: e.code, reason: e.reason })));
    c.ws.addEventListener('message', (e) => {
      const b = typeof e.data === 'string' ? null : new Uint8Array(e.data);
      /* compact frames (PROTOCOL.md 11) are their own message type */
      const m = !b ? { type: 'text' } : b[4] === FRAME_BATCH_C ? decodeBatchC(b) : decodeMessage(b);
      m.at = performance.now();
      m.seq = ++c.seqNo;
      c.msgs.push(m);
      c.waiters = c.waiters.filter((w) => !w(m));
    });
    await new Promise((resolve, reject) => {
      c.ws.addEventListener('open', resolve, { once: true });
      c.ws.addEventListener('error', () => reject(new Error('websocket did not open')), { once: true });
    });
    if (hello) {
      c.send({ type: 'hello', major: 1, minor, client_name: name, features });
      c.welcome = await c.next('welcome');
    }
    return c;
  }

  // In the negotiated minor once welcome came (PROTOCOL.md 3), before it in the hello's.
  send(m) { this.ws.send(encodeMessage(m, this.welcome?.minor ?? Math.min(this.minor, MINOR))); }
  sendRaw(bytes) { this.ws.send(bytes); }

  // Resolves with the first message (already received or coming) matching type and pred.
  next(type, pred = () => true, timeoutMs = WAIT_MS) {
    const match = (m) => (type === '*' || m.type === type) && pred(m);
    const i = this.msgs.findIndex(match);
    if (i >= 0) return Promise.resolve(this.msgs.splice(i, 1)[0]);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no ${type} within ${timeoutMs} ms; got ${this.msgs.map((m) => m.type).join(',')}`)), timeoutMs);
      this.waiters.push((m) => {
        if (!match(m)) return false;
        if (!unqueue(this.msgs, m)) return false; /* another waiter took it */
        clearTimeout(t);
        resolve(m);
        return true;
      });
    });
  }

  // Takes messages of a type (already received or coming, in arrival order) until
  // done(list) holds; fails after timeoutMs. Returns the list.
  async collectUntil(type, done, what, timeoutMs = WAIT_MS) {
    const got = [];
    const take = () => {
      for (let i = 0; i < this.msgs.length; i++)
        if (this.msgs[i].type === type) { got.push(this.msgs.splice(i, 1)[0]); i--; if (done(got)) return true; }
      return done(got);
    };
    if (take()) return got;
    await new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new Error(`${what}: not within ${timeoutMs} ms (${got.length} ${type} received)`));
      }, timeoutMs);
      /* a waiter answers whether it is finished (the listener then drops it) */
      const waiter = (m) => {
        if (m.type !== type || !unqueue(this.msgs, m)) return false;
        got.push(m);
        if (!done(got)) return false; /* taken; keep waiting */
        clearTimeout(t);
        resolve();
        return true;
      };
      this.waiters.push(waiter);
    });
    return got;
  }

  // The next n messages of a type (fresh: dropping those already waiting).
  take(type, n, what = `${n} ${type}`, fresh = false) {
    if (fresh) this.msgs = this.msgs.filter((m) => m.type !== type);
    return this.collectUntil(type, (l) => l.length >= n, what);
  }

  // A barrier: resolves with the pong to a ping sent now. The daemon handles a
  // connection's messages in order and queues the pong after everything it did for the
  // ones before (a subscription changed, a keyframe asked for, a pose admitted or
  // dropped), so whatever it writes after that is in m.seq > pong.seq.
  async ping() {
    this.pings = (this.pings ?? 0) + 1;
    const id = 7000000000n + BigInt(this.pings);
    this.send({ type: 'ping', client_time_us: id });
    return this.next('pong', (m) => m.client_time_us === id);
  }

  close() { try { this.ws.close(); } catch {} }
}

// What every frame stream of one instance to one connection satisfies, whatever the
// machine's speed (PROTOCOL.md 5, 6, 8): recs = [{tick (BigInt), step, key}] in arrival
// order. Ticks only go up, each is a multiple of its record's step, and a record that does
// not continue the same stream's record of tick - step (the connection missed a tick, or
// changed rate) is a keyframe; with fromStart, so is the first one. Returns the number of
// deltas (records that continued their stream).
export function checkStream(recs, what, { fromStart = false } = {}) {
  let deltas = 0;
  recs.forEach((r, i) => {
    const p = recs[i - 1];
    const step = BigInt(r.step ?? 1);
    assert.equal(r.tick % step, 0n, `${what}: record of tick ${r.tick} with step ${step}`);
    if (p) assert.ok(r.tick > p.tick, `${what}: tick ${r.tick} after ${p.tick}`);
    const continues = p && BigInt(p.step ?? 1) === step && p.tick === r.tick - step;
    if (!continues && (p || fromStart))
      assert.ok(r.key, `${what}: record of tick ${r.tick} (step ${step}) follows ${p ? `tick ${p.tick} (step ${p.step ?? 1})` : 'nothing'} and is not a keyframe`);
    if (continues && !r.key) deltas++;
  });
  return deltas;
}

// Decodes the records of frame batches for the instances whose added events were seen.
export class Viewer {
  constructor() { this.decoders = new Map(); this.points = new Map(); this.errors = 0; }
  event(m) {
    if (m.kind === 'added' || m.kind === 'changed' || m.kind === 'reset')
      this.decoders.set(m.instance_id, new StrandDecoder(m.shape));
    if (m.kind === 'removed') this.decoders.delete(m.instance_id);
  }
  batch(m) {
    for (const rec of m.records) {
      const dec = this.decoders.get(rec.id);
      if (!dec) { this.errors++; continue; }
      try { this.points.set(rec.id, dec.apply(m.tick, rec)); } catch (e) { this.errors++; this.lastError = e; }
    }
  }
  feed(m) { if (m.type === 'instance_event') this.event(m); else if (m.type === 'frame_batch') this.batch(m); }
}
