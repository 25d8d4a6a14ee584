// Test helper: a WebSocket client speaking proto/PROTOCOL.md through the JS codec, with a
// queue of decoded messages to await.
import { FRAME_BATCH_C, MINOR, decodeBatchC, decodeMessage, encodeMessage, StrandDecoder } from '../../../proto/js/ponytail-proto.mjs';

export class Client {
  static async open(url, { name = 'test', hello = true, protocol = 'ponytail.v1', minor = 0, features } = {}) {
    const c = new Client();
    c.ws = new WebSocket(url, protocol);
    c.minor = minor;
    c.ws.binaryType = 'arraybuffer';
    c.msgs = [];
    c.waiters = [];
    c.closed = new Promise((resolve) => c.ws.addEventListener('close', (e) => resolve({ code: e.code, reason: e.reason })));
    c.ws.addEventListener('message', (e) => {
      const b = typeof e.data === 'string' ? null : new Uint8Array(e.data);
      /* compact frames (PROTOCOL.md 11) are their own message type */
      const m = !b ? { type: 'text' } : b[4] === FRAME_BATCH_C ? decodeBatchC(b) : decodeMessage(b);
      m.at = performance.now();
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
  next(type, pred = () => true, timeoutMs = 3000) {
    const match = (m) => (type === '*' || m.type === type) && pred(m);
    const i = this.msgs.findIndex(match);
    if (i >= 0) return Promise.resolve(this.msgs.splice(i, 1)[0]);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no ${type} within ${timeoutMs} ms; got ${this.msgs.map((m) => m.type).join(',')}`)), timeoutMs);
      this.waiters.push((m) => {
        if (!match(m)) return false;
        clearTimeout(t);
        this.msgs.splice(this.msgs.indexOf(m), 1);
        resolve(m);
        return true;
      });
    });
  }

  // Messages of a type received during ms milliseconds from now (fresh), or also those
  // already waiting (fresh = false).
  async collect(type, ms, fresh = true) {
    if (fresh) this.msgs = this.msgs.filter((m) => m.type !== type);
    await new Promise((r) => setTimeout(r, ms));
    const got = this.msgs.filter((m) => m.type === type);
    this.msgs = this.msgs.filter((m) => m.type !== type);
    return got;
  }

  close() { try { this.ws.close(); } catch {} }
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
