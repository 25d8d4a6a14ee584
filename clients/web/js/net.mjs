// Talking to ponytaild: the REST API (JSON, errors {"error": {"code", "message", "field"}})
// and the WebSocket of proto/PROTOCOL.md, decoded and encoded with proto's own JS module
// (served by the daemon at /proto/js/; the relative path below also resolves in the
// repository, so node can import this file for tests).

import {
  StrandDecoder, decodeMessage, encodeMessage, quat16Unpack,
} from '../../../proto/js/ponytail-proto.mjs';

export const SUBPROTOCOL = 'ponytail.v1';

export class ApiError extends Error {
  constructor(status, body) {
    const e = body?.error ?? {};
    super(e.message || `HTTP ${status}`);
    this.status = status;
    this.code = e.code ?? 'http_error';
    this.field = e.field ?? null;
  }
}

// fetch wrapper: JSON in, JSON out; throws ApiError for non-2xx answers.
export async function api(method, path, { body, token, signal } = {}) {
  const headers = {};
  if (body !== undefined) headers['Content-Type'] = method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(path, {
    method, headers, signal, cache: 'no-store',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json = null;
  if (text) {
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
  }
  if (!res.ok) throw new ApiError(res.status, json);
  return json;
}

// Where the WebSocket is: ?ws= (a full ws:// URL or a port) wins; else /v1/info's ws_url
// or ws_port on this page's host; else the HTTP port + 1.
export function wsUrlFor(loc, info, override) {
  const scheme = loc.protocol === 'https:' ? 'wss:' : 'ws:';
  const host = loc.hostname.includes(':') ? `[${loc.hostname}]` : loc.hostname;
  if (override) {
    if (/^wss?:\/\//.test(override)) return override;
    if (/^\d+$/.test(override)) return `${scheme}//${host}:${override}/`;
  }
  if (info?.ws_url) return new URL(info.ws_url, loc.href).href.replace(/^http/, 'ws');
  if (info?.ws_port) return `${scheme}//${host}:${info.ws_port}/`;
  const httpPort = Number(loc.port || (loc.protocol === 'https:' ? 443 : 80));
  return `${scheme}//${host}:${httpPort + 1}/`;
}

const nowUs = () => BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000));

// One WebSocket session that reconnects by itself. Events (EventTarget, detail in
// `event.detail`): state {state, detail}, welcome, event (instance_event), frames
// {tick, records: [{id, key, pts, headP, headQ, lastSeq}]}, error (protocol error),
// pong {rtt}.
export class Link extends EventTarget {
  // minor: the highest protocol minor the page speaks (hello); 2 lets a head pose carry
  // body bones, 3 receives instances of more than 32 strands, 4 a state hash with each
  // keyframe record (decoded, unused by the pages). Messages are written at the
  // minor the welcome settled.
  constructor({ location: loc, wsOverride = null, clientName = 'ponytail-web', minor = 0 } = {}) {
    super();
    this.minor = minor;
    this.loc = loc;
    this.wsOverride = wsOverride;
    this.clientName = clientName;
    this.state = 'idle';
    this.ws = null;
    this.decoders = new Map(); // key -> StrandDecoder
    this.room = '';
    this.extraIds = new Set(); // keys subscribed by id (an own instance in another room)
    this.auth = new Map(); // key -> token
    this.retry = 0;
    this.timer = null;
    this.seq = 0;
    this.sent = new Map(); // seq -> performance.now() when sent
    this.bytesIn = 0;
    this.bytesOut = 0;
    this.batches = 0;
    this.decodeErrors = 0;
    this.info = null;
    this.welcome = null;
    this.stopped = false;
  }

  setState(state, detail = '') {
    this.state = state;
    this.dispatchEvent(new CustomEvent('state', { detail: { state, detail } }));
  }

  emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  async start() {
    this.stopped = false;
    clearTimeout(this.timer);
    this.setState('connecting');
    let info = null;
    try {
      info = await api('GET', '/v1/info');
    } catch (e) {
      // Unreachable (restarting?) or not ready: try again later. Only a daemon without
      // /v1/info (404) leaves the WebSocket port to the fallback.
      if (!(e instanceof ApiError) || e.status !== 404) {
        this.scheduleReconnect(e instanceof ApiError ? `/v1/info: ${e.message}` : `daemon unreachable (${e.message})`);
        return;
      }
    }
    this.info = info;
    const url = wsUrlFor(this.loc, info, this.wsOverride);
    let ws;
    try {
      ws = new WebSocket(url, SUBPROTOCOL);
    } catch (e) {
      this.scheduleReconnect(e.message);
      return;
    }
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.send({ type: 'hello', major: 1, minor: this.minor, client_name: this.clientName });
    };
    ws.onmessage = (ev) => {
      if (this.ws !== ws || !(ev.data instanceof ArrayBuffer)) return;
      this.bytesIn += ev.data.byteLength;
      this.onMessage(new Uint8Array(ev.data));
    };
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.welcome = null;
      if (this.stopped) this.setState('closed');
      else this.scheduleReconnect(ev.code ? `closed (${ev.code}${ev.reason ? ` ${ev.reason}` : ''})` : 'closed');
    };
    ws.onerror = () => {}; // onclose follows and reports
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.ws) this.ws.close(1000);
  }

  scheduleReconnect(why) {
    if (this.stopped) return;
    const delay = Math.min(250 * 2 ** this.retry, 2000);
    this.retry = Math.min(this.retry + 1, 4);
    this.setState('reconnecting', `${why}; retrying in ${(delay / 1000).toFixed(2)} s`);
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.start(), delay);
  }

  send(msg) {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return false;
    const bytes = encodeMessage(msg, this.welcome?.minor ?? 0);
    this.bytesOut += bytes.length;
    this.ws.send(bytes);
    return true;
  }

  get open() {
    return !!this.welcome && this.ws?.readyState === WebSocket.OPEN;
  }

  onMessage(bytes) {
    let m;
    try {
      m = decodeMessage(bytes);
    } catch (e) {
      this.decodeErrors++;
      return;
    }
    switch (m.type) {
      case 'welcome':
        this.welcome = m;
        this.retry = 0;
        this.decoders.clear();
        for (const [key, token] of this.auth) this.send({ type: 'authorize', instance_id: BigInt(key), token });
        this.resubscribe();
        this.setState('open', `tick ${m.tick_hz} Hz, ${m.server_version}`);
        this.emit('welcome', m);
        break;
      case 'instance_event': {
        const key = m.instance_id.toString();
        if (m.kind === 'removed') this.decoders.delete(key);
        else {
          try {
            this.decoders.set(key, new StrandDecoder(m.shape));
          } catch {
            this.decoders.delete(key);
          }
        }
        this.emit('event', { ...m, key });
        break;
      }
      case 'frame_batch':
        this.onBatch(m);
        break;
      case 'pong': {
        const rtt = Number(nowUs() - m.client_time_us) / 1000;
        this.emit('pong', { rtt });
        break;
      }
      case 'error':
        this.emit('error', { ...m, key: m.instance_id.toString() });
        break;
      default:
        break; // PROTOCOL.md: a client ignores unknown server types
    }
  }

  onBatch(m) {
    this.batches++;
    const out = [];
    const lost = [];
    for (const rec of m.records) {
      const key = rec.id.toString();
      const dec = this.decoders.get(key);
      if (!dec) continue;
      let pts;
      try {
        pts = dec.apply(m.tick, rec);
      } catch {
        this.decodeErrors++;
        lost.push(rec.id);
        continue;
      }
      out.push({
        key, pts, lastSeq: rec.last_seq, headP: Array.from(rec.head_p), headQ: quat16Unpack(rec.head_q),
      });
    }
    if (lost.length) this.send({ type: 'keyframe_request', ids: lost });
    this.emit('frames', { tick: m.tick, serverTimeUs: m.server_time_us, records: out });
  }

  resubscribe() {
    if (!this.ws) return;
    const ids = [...this.extraIds].map((k) => BigInt(k));
    this.send({ type: 'subscribe', room: this.room, ids });
  }

  // Follows a room (every instance in it), replacing the previous one.
  setRoom(room) {
    if (room === this.room) return;
    if (this.open && this.room) this.send({ type: 'unsubscribe', room: this.room, ids: [] });
    this.room = room;
    if (this.open) this.resubscribe();
  }

  follow(key) {
    if (this.extraIds.has(key)) return;
    this.extraIds.add(key);
    if (this.open) this.send({ type: 'subscribe', room: '', ids: [BigInt(key)] });
  }

  authorize(key, token) {
    this.auth.set(key, token);
    if (this.open) this.send({ type: 'authorize', instance_id: BigInt(key), token });
  }

  forget(key) {
    this.auth.delete(key);
    if (this.extraIds.delete(key) && this.open) this.send({ type: 'unsubscribe', room: '', ids: [BigInt(key)] });
  }

  // Publishes a head pose; returns its seq (0 when not sent).
  // bones: [{bone, p, q}] body-bone world poses (PROTOCOL.md 5), sent when the server
  // speaks 1.2 (an older one would ignore them).
  sendPose(key, p, q, bones = null) {
    if (!this.open) return 0;
    this.seq = (this.seq + 1) >>> 0 || 1;
    const withBones = bones?.length > 0 && this.welcome.minor >= 2;
    const ok = this.send({
      type: 'head_pose', instance_id: BigInt(key), seq: this.seq, client_time_us: nowUs(),
      flags: withBones ? 4 : 0, p, q, ...(withBones ? { bones } : {}),
    });
    if (!ok) return 0;
    this.sent.set(this.seq, performance.now());
    if (this.sent.size > 512) this.sent.delete(this.sent.keys().next().value);
    return this.seq;
  }

  // Input-to-frame latency of the pose `seq` echoed in a frame, once (ms), else null.
  latencyOf(seq) {
    const t = this.sent.get(seq);
    if (t === undefined) return null;
    for (const s of this.sent.keys()) {
      if (((seq - s) | 0) < 0) break;
      this.sent.delete(s);
    }
    return performance.now() - t;
  }

  ping() {
    this.send({ type: 'ping', client_time_us: nowUs() });
  }
}
