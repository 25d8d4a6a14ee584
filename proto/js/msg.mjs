// Ponytail wire protocol: message encoder and decoder (mirrors proto/src/msg.c).
//
// Each message is described once, by a walk over its fields in wire order; the same walk
// reads (DecIO) or writes (EncIO). Decoded messages are plain objects with the field names
// of the C structs (snake_case); 64-bit fields are BigInt, record data a Uint8Array view
// of the input. The encoder also accepts decimal strings for 64-bit fields and hex strings
// for record data, so the vectors' JSON can be encoded directly.

import {
  E, HEADER_SIZE, MAJOR, MAX_IDS, MAX_NAME, MAX_PAYLOAD, MAX_STRANDS, MAX_STRANDS_1_2, MAX_POINTS, MAX_TEXT,
  MAX_TOKEN, MINOR, MINOR_GRAB, MINOR_HASH, RECORD_MIN, Reader, Writer, fail,
} from './wire.mjs';

export const TYPES = Object.freeze({
  hello: 0x01, authorize: 0x02, subscribe: 0x03, unsubscribe: 0x04, head_pose: 0x05,
  keyframe_request: 0x06, ping: 0x07, grab: 0x08, release: 0x09, welcome: 0x81, frame_batch: 0x82,
  instance_event: 0x83, pong: 0x84, error: 0x85, grab_result: 0x88,
});
const TYPE_NAMES = new Map(Object.entries(TYPES).map(([k, v]) => [v, k]));

export const POSE_HAS_VELOCITY = 1;
export const POSE_HAS_ANGULAR = 2;
export const POSE_HAS_BONES = 4; // since 1.2
export const MAX_POSE_BONES = 54; // every body bone once (a repeated id: the later wins)
// head_pose bone ids (since 1.2, PROTOCOL.md section 5): VRM 1.0 humanoid order, no head.
export const BONE_NAMES = Object.freeze([
  'hips', 'spine', 'chest', 'upper_chest', 'neck', 'left_eye', 'right_eye', 'jaw',
  'left_upper_leg', 'left_lower_leg', 'left_foot', 'left_toes', 'right_upper_leg',
  'right_lower_leg', 'right_foot', 'right_toes', 'left_shoulder', 'left_upper_arm',
  'left_lower_arm', 'left_hand', 'right_shoulder', 'right_upper_arm', 'right_lower_arm',
  'right_hand',
  ...['left', 'right'].flatMap((side) => [
    `${side}_thumb_metacarpal`, `${side}_thumb_proximal`, `${side}_thumb_distal`,
    ...['index', 'middle', 'ring', 'little'].flatMap((f) =>
      ['proximal', 'intermediate', 'distal'].map((j) => `${side}_${f}_${j}`)),
  ]),
]);
export const ERROR_CLOSING = 1;
export const RECORD_KEY = 1;
export const EVENT_KINDS = Object.freeze(['added', 'removed', 'changed', 'reset']); // 1..4
export const CODES = Object.freeze({
  bad_message: 1, version: 2, unknown_type: 3, too_large: 4, unauthorized: 5,
  not_found: 6, limit: 7, rate: 8, hello_required: 9, internal: 10, shutdown: 11,
});
export const RATES = Object.freeze([0, 60, 30, 20, 10]); // subscribe rate_hz (1.2); 0 = every tick
const QUAT16_SCALE = 46340; // floor(32767 * sqrt(2))

class DecIO {
  constructor(reader, strict, minor = MINOR) {
    this.r = reader;
    this.strict = strict;
    this.minor = minor; // the header's: fields a later minor added are absent
    this.writing = false;
  }
  check(cond, code) { if (!cond) fail(code); }
  u8(o, k) { o[k] = this.r.u8(); }
  u16(o, k) { o[k] = this.r.u16(); }
  u32(o, k) { o[k] = this.r.u32(); }
  u64(o, k) { o[k] = this.r.u64(); }
  i64(o, k) { o[k] = this.r.i64(); }
  i16s(o, k, n) {
    o[k] = [];
    for (let i = 0; i < n; i++) {
      o[k].push(this.r.i16());
      this.check(o[k][i] !== -32768, E.RANGE);
    }
  }
  f32(o, k) { o[k] = this.r.f32(); }
  f32s(o, k, n) { o[k] = this.r.f32s(n); }
  str8(o, k, max) { o[k] = this.r.str8(max); }
  flags(o, k, known) {
    o[k] = this.r.u8();
    if (this.strict) this.check((o[k] & ~known) === 0, E.FLAGS);
    o[k] &= known;
  }
  count(o, k, limit, size) {
    o[k] = this.r.u16();
    this.check(o[k] <= limit, E.LIMIT);
    this.r.need(o[k], size);
  }
}

const isInt = (v, lo, hi) => Number.isInteger(v) && v >= lo && v <= hi;

class EncIO {
  constructor(writer, minor = MINOR) {
    this.w = writer;
    this.minor = minor;
    this.strict = true;
    this.writing = true;
  }
  check(cond, code) { if (!cond) fail(code); }
  int(o, k, lo, hi) {
    const v = o[k] ?? 0;
    if (!isInt(v, lo, hi)) fail(E.INVAL, `${k} = ${v}`);
    return v;
  }
  u8(o, k) { this.w.u8(this.int(o, k, 0, 0xff)); }
  u16(o, k) { this.w.u16(this.int(o, k, 0, 0xffff)); }
  u32(o, k) { this.w.u32(this.int(o, k, 0, 0xffffffff)); }
  big(o, k, signed) {
    let v;
    try {
      v = BigInt(o[k] ?? 0);
    } catch {
      fail(E.INVAL, k);
    }
    const ok = signed ? BigInt.asIntN(64, v) === v : BigInt.asUintN(64, v) === v;
    if (!ok) fail(E.INVAL, k);
    return v;
  }
  u64(o, k) { this.w.u64(this.big(o, k, false)); }
  i64(o, k) { this.w.i64(this.big(o, k, true)); }
  i16s(o, k, n) {
    for (let i = 0; i < n; i++) {
      const v = o[k]?.[i];
      if (!isInt(v, -32768, 32767)) fail(E.INVAL, k);
      this.check(v !== -32768, E.RANGE);
      this.w.i16(v);
    }
  }
  f32(o, k) { this.w.f32(o[k]); }
  f32s(o, k, n) {
    if (!Array.isArray(o[k]) && !ArrayBuffer.isView(o[k])) fail(E.INVAL, k);
    this.w.f32s(o[k], n);
  }
  str8(o, k, max) { this.w.str8(o[k] ?? '', max); }
  flags(o, k, known) {
    const v = this.int(o, k, 0, 0xff);
    this.check((v & ~known) === 0, E.FLAGS);
    this.w.u8(v);
  }
  count(o, k, limit) {
    const n = o[k]?.length;
    if (!Number.isInteger(n)) fail(E.INVAL, k);
    this.check(n <= limit, E.LIMIT);
    this.w.u16(n);
  }
}

const f32 = Math.fround;
const norm2 = (q) => f32(q[0]) * f32(q[0]) + f32(q[1]) * f32(q[1]) + f32(q[2]) * f32(q[2]) + f32(q[3]) * f32(q[3]);

function ids(io, m) {
  if (io.writing) {
    io.count(m, 'ids', MAX_IDS);
    for (let i = 0; i < m.ids.length; i++) io.u64(m.ids, i);
  } else {
    const c = {};
    io.count(c, 'n', MAX_IDS, 8);
    m.ids = [];
    for (let i = 0; i < c.n; i++) m.ids.push(io.r.u64());
  }
}

function shape(io, m) {
  const s = io.writing ? { strand_count: m.shape?.length } : {};
  if (io.writing && !Array.isArray(m.shape)) fail(E.INVAL, 'shape');
  // a u8, 1..32 up to 1.2; from 1.3 on 1..255, or 0 followed by a u16 of 256 or more
  const c = { n: io.writing ? (s.strand_count <= 255 ? s.strand_count : 0) : 0 };
  io.u8(c, 'n');
  if (c.n === 0 && io.minor >= 3) {
    io.u16(s, 'strand_count');
    io.check(s.strand_count >= 256, E.RANGE);
  } else if (!io.writing) {
    s.strand_count = c.n;
  }
  io.check(s.strand_count >= 1 && s.strand_count <= (io.minor >= 3 ? MAX_STRANDS : MAX_STRANDS_1_2), E.LIMIT);
  if (!io.writing) {
    io.r.need(s.strand_count, 29);
    m.shape = [];
  }
  for (let i = 0; i < s.strand_count; i++) {
    const st = io.writing ? m.shape[i] : {};
    io.u8(st, 'points');
    io.check(st.points >= 2 && st.points <= MAX_POINTS, E.RANGE);
    io.f32(st, 'segment_length');
    io.check(f32(st.segment_length) > 0 && f32(st.segment_length) <= 10, E.RANGE);
    io.f32s(st, 'anchor', 3);
    io.f32s(st, 'direction', 3);
    const d = st.direction.map(f32);
    io.check(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] >= 1e-12, E.RANGE);
    if (!io.writing) m.shape.push(st);
  }
}

export function hexToBytes(h) {
  if (typeof h !== 'string' || h.length % 2 || /[^0-9a-fA-F]/.test(h)) fail(E.INVAL, 'hex');
  const b = new Uint8Array(h.length / 2);
  for (let i = 0; i < b.length; i++) b[i] = parseInt(h.substr(2 * i, 2), 16);
  return b;
}

export function bytesToHex(b) {
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

function record(io, m) {
  io.u64(m, 'id');
  const f = { flags: 0 };
  /* 1.2: bits 1..5 are step - 1 (PROTOCOL.md 6); an older strict reader refuses them */
  const stepBits = io.minor >= 2 || !io.strict ? 0x3e : 0;
  if (io.writing) {
    const step = m.step ?? 1;
    io.check(isInt(m.head_q?.largest, 0, 3) && isInt(m.flags ?? 0, 0, 0x3f) && isInt(step, 1, 32) &&
      (step === 1 || io.minor >= 2), E.INVAL);
    f.flags = (m.flags ?? 0) | (m.head_q.largest << 6) | ((step - 1) << 1);
  }
  io.flags(f, 'flags', RECORD_KEY | 0xc0 | stepBits);
  if (!io.writing) {
    m.flags = f.flags & RECORD_KEY;
    const step = ((f.flags >> 1) & 31) + 1;
    if (step > 1) m.step = step; /* absent: 1 */
    m.head_q = { largest: f.flags >> 6 };
  }
  io.u32(m, 'last_seq');
  io.f32s(m, 'head_p', 3);
  io.i16s(m.head_q, 'c', 3);
  const c = m.head_q.c;
  io.check(c[0] * c[0] + c[1] * c[1] + c[2] * c[2] <= QUAT16_SCALE * QUAT16_SCALE, E.RANGE);
  // 1.4: a key record's data ends with the instance's state hash, a u64 (PROTOCOL.md 6);
  // `state_hash` (BigInt) holds it, `data` the strand data alone
  if (io.writing) {
    const data = typeof m.data === 'string' ? hexToBytes(m.data) : m.data ?? new Uint8Array(0);
    const hashed = m.state_hash !== undefined;
    io.check(!hashed || (m.flags ?? 0) & RECORD_KEY, E.INVAL);
    io.check(data.length + (hashed ? 8 : 0) <= 0xffff, E.LIMIT);
    io.w.u16(data.length + (hashed ? 8 : 0));
    io.w.bytes(data);
    if (hashed) io.u64(m, 'state_hash');
  } else {
    const n = io.r.u16();
    m.data = io.r.bytes(n);
    if (io.minor >= MINOR_HASH && m.flags & RECORD_KEY) {
      if (n < 8) fail(E.TRUNC); // the hash cut short
      m.state_hash = new DataView(m.data.buffer, m.data.byteOffset + n - 8, 8).getBigUint64(0, true);
      m.data = m.data.subarray(0, n - 8);
    }
  }
}

// head_pose's bones (since 1.2): u8 count in [1, 54], then per bone u8 id < 54, p, q.
function bones(io, m) {
  if (io.writing) {
    const n = m.bones?.length;
    if (!Number.isInteger(n)) fail(E.INVAL, 'bones');
    io.w.u8(Math.min(n, 255));
    io.check(n <= MAX_POSE_BONES, E.LIMIT);
    io.check(n >= 1, E.RANGE);
  } else {
    const n = io.r.u8();
    io.check(n <= MAX_POSE_BONES, E.LIMIT);
    io.check(n >= 1, E.RANGE);
    io.r.need(n, 29);
    m.bones = Array.from({ length: n }, () => ({}));
  }
  for (const b of m.bones) {
    io.u8(b, 'bone');
    io.check(b.bone < BONE_NAMES.length, E.RANGE);
    io.f32s(b, 'p', 3);
    io.f32s(b, 'q', 4);
    const b2 = norm2(b.q);
    io.check(b2 >= 0.25 && b2 <= 4.0, E.RANGE);
  }
}

const WALKS = {
  hello(io, m) {
    io.u8(m, 'major');
    io.check(m.major === MAJOR, E.VERSION); // PROTOCOL.md 3: the server closes
    io.u8(m, 'minor');
    io.str8(m, 'client_name', MAX_NAME);
    // since 1.2 (PROTOCOL.md 11): bit 0 asks for compact frames
    if (io.minor < 2) {
      if (!io.writing) delete m.features;
      return;
    }
    io.flags(m, 'features', 1);
  },
  authorize(io, m) {
    io.u64(m, 'instance_id');
    io.str8(m, 'token', MAX_TOKEN);
    io.check(m.token.length > 0, E.RANGE);
  },
  subscribe(io, m) {
    io.str8(m, 'room', MAX_NAME);
    ids(io, m);
    if (io.minor < 2) {
      if (!io.writing) delete m.rate_hz;
      return;
    }
    if (io.writing) m.rate_hz ??= 0;
    io.u8(m, 'rate_hz');
    io.check(RATES.includes(m.rate_hz), E.RANGE); // PROTOCOL.md 5, "Per-viewer rates"
  },
  unsubscribe(io, m) {
    io.str8(m, 'room', MAX_NAME);
    ids(io, m);
  },
  keyframe_request(io, m) { ids(io, m); },
  head_pose(io, m) {
    io.u64(m, 'instance_id');
    io.u32(m, 'seq');
    io.i64(m, 'client_time_us');
    io.flags(m, 'flags', io.minor >= 2 ? 7 : 3); // bit 2 is reserved before 1.2
    io.f32s(m, 'p', 3);
    io.f32s(m, 'q', 4);
    const n2 = norm2(m.q);
    io.check(n2 >= 0.25 && n2 <= 4.0, E.RANGE);
    if (m.flags & 1) io.f32s(m, 'v', 3);
    else if (!io.writing) delete m.v;
    if (m.flags & 2) io.f32s(m, 'w', 3);
    else if (!io.writing) delete m.w;
    if (m.flags & 4) bones(io, m);
    else if (!io.writing) delete m.bones;
  },
  ping(io, m) { io.i64(m, 'client_time_us'); },
  // since 1.5 (PROTOCOL.md 5): a point of instance_id follows hand bone `bone` of `by`
  grab(io, m) {
    io.u32(m, 'ref');
    io.u64(m, 'instance_id');
    io.u64(m, 'by');
    io.u16(m, 'strand');
    io.check(m.strand < MAX_STRANDS, E.RANGE);
    io.u8(m, 'point');
    io.check(m.point >= 1 && m.point < MAX_POINTS, E.RANGE);
    io.u8(m, 'bone');
    io.check(m.bone === 19 || m.bone === 23 || (m.bone >= 24 && m.bone < 54), E.RANGE);
  },
  release(io, m) {
    io.u32(m, 'ref');
    io.u64(m, 'instance_id');
    io.u64(m, 'grab_id');
  },
  grab_result(io, m) {
    io.u32(m, 'ref');
    io.u64(m, 'instance_id');
    io.u64(m, 'grab_id');
  },
  welcome(io, m) {
    io.u8(m, 'major');
    io.u8(m, 'minor');
    io.u16(m, 'tick_hz');
    io.check(m.tick_hz >= 1, E.RANGE);
    io.u8(m, 'substeps');
    io.u16(m, 'keyframe_interval');
    io.check(m.keyframe_interval >= 1, E.RANGE);
    io.u32(m, 'max_message');
    io.u16(m, 'max_subscriptions');
    io.i64(m, 'server_time_us');
    io.u64(m, 'tick');
    io.str8(m, 'server_version', MAX_TEXT);
    if (io.minor < 1) {
      if (!io.writing) delete m.max_error_m;
      return;
    }
    io.f32(m, 'max_error_m');
    io.check(f32(m.max_error_m) > 0 && f32(m.max_error_m) <= 1, E.RANGE);
  },
  frame_batch(io, m) {
    io.u64(m, 'tick');
    io.i64(m, 'server_time_us');
    if (io.writing) {
      if (!Array.isArray(m.records)) fail(E.INVAL, 'records');
      io.w.u16(m.records.length);
      for (const r of m.records) {
        if (r instanceof Uint8Array) {
          const rr = new Reader(r);
          record(new DecIO(rr, true, io.minor), {});
          io.check(rr.left === 0, E.INVAL);
          io.w.bytes(r);
        } else {
          record(io, r);
        }
      }
    } else {
      const n = io.r.u16();
      io.r.need(n, RECORD_MIN);
      m.records = [];
      for (let i = 0; i < n; i++) {
        const r = {};
        record(io, r);
        m.records.push(r);
      }
    }
  },
  instance_event(io, m) {
    const k = { kind: io.writing ? EVENT_KINDS.indexOf(m.kind) + 1 : 0 };
    io.u8(k, 'kind');
    io.check(k.kind >= 1 && k.kind <= 4, E.RANGE);
    m.kind = EVENT_KINDS[k.kind - 1];
    io.u64(m, 'instance_id');
    io.u64(m, 'tick');
    if (m.kind === 'removed') return;
    io.str8(m, 'name', MAX_NAME);
    io.str8(m, 'room', MAX_NAME);
    shape(io, m);
  },
  pong(io, m) {
    io.i64(m, 'client_time_us');
    io.i64(m, 'server_time_us');
  },
  error(io, m) {
    io.u16(m, 'code');
    io.flags(m, 'flags', ERROR_CLOSING);
    io.u8(m, 'about_type');
    io.u64(m, 'instance_id');
    io.str8(m, 'text', MAX_TEXT);
    if (io.minor >= MINOR_GRAB) {
      if (io.writing) m.ref ??= 0;
      io.u32(m, 'ref');
    } else if (!io.writing) delete m.ref;
  },
};

// Decodes one whole WebSocket message (Uint8Array). Throws ProtoError; checks in the order
// of ptp_msg_decode so both report the same first error. The result has a non-enumerable
// `header_minor`.
export function decodeMessage(bytes) {
  if (!(bytes instanceof Uint8Array)) fail(E.INVAL, 'bytes');
  const len = bytes.length;
  if (len < HEADER_SIZE) fail(E.TRUNC);
  if (bytes[0] !== 0x50 || bytes[1] !== 0x54) fail(E.MAGIC);
  const [major, minor, type, reserved] = [bytes[2], bytes[3], bytes[4], bytes[5]];
  if (major !== MAJOR) fail(E.VERSION);
  const payload = new DataView(bytes.buffer, bytes.byteOffset, len).getUint32(6, true);
  if (payload > MAX_PAYLOAD) fail(E.TOOBIG);
  if (payload > len - HEADER_SIZE) fail(E.TRUNC);
  if (payload < len - HEADER_SIZE) fail(E.LENGTH);
  const strict = minor <= MINOR;
  if (strict && reserved !== 0) fail(E.FLAGS);
  const name = TYPE_NAMES.get(type);
  if (!name) fail(E.TYPE);
  const r = new Reader(bytes, HEADER_SIZE, len);
  const m = { type: name };
  WALKS[name](new DecIO(r, strict, minor), m);
  if (strict && r.left !== 0) fail(E.TRAILING);
  Object.defineProperty(m, 'header_minor', { value: minor, enumerable: false });
  return m;
}

// Encodes a message object as version 1.`minor`: 0..MINOR, default 0 (1.0, which every
// peer reads; fields a later minor added are left out), as a zeroed ptp_msg_t in C. A
// peer passes the minor hello and welcome negotiated. Throws ProtoError for what the
// decoder would refuse.
export function encodeMessage(m, minor = 0) {
  const type = TYPES[m?.type];
  if (type === undefined) fail(E.TYPE);
  if (!isInt(minor, 0, MINOR)) fail(E.INVAL, `minor ${minor}`);
  const w = new Writer();
  w.bytes([0x50, 0x54, MAJOR, minor, type, 0, 0, 0, 0, 0]);
  WALKS[m.type](new EncIO(w, minor), { ...m });
  if (w.len - HEADER_SIZE > MAX_PAYLOAD) fail(E.TOOBIG);
  const out = w.result();
  new DataView(out.buffer).setUint32(6, out.length - HEADER_SIZE, true);
  return out;
}

// One frame record (what a server encodes once per instance per tick).
export function encodeRecord(r) {
  const w = new Writer();
  record(new EncIO(w), { ...r });
  return w.result();
}

// Smallest-three quaternion (mirrors ptp_quat16_pack / _unpack).
export function quat16Pack(q) {
  const qf = [0, 1, 2, 3].map((i) => f32(q[i]));
  if (!qf.every(Number.isFinite)) fail(E.FLOAT);
  const n = Math.sqrt(qf[0] * qf[0] + qf[1] * qf[1] + qf[2] * qf[2] + qf[3] * qf[3]);
  if (!(n > 1e-9)) fail(E.RANGE);
  const v = [];
  let largest = 0;
  for (let i = 0; i < 4; i++) {
    v.push(qf[i] / n);
    if (Math.abs(v[i]) > Math.abs(v[largest])) largest = i;
  }
  const c = [];
  for (let i = 0; i < 4; i++) {
    if (i === largest) continue;
    let x = Math.floor((v[largest] < 0 ? -v[i] : v[i]) * QUAT16_SCALE + 0.5);
    if (x > 32767) x = 32767;
    if (x < -32767) x = -32767;
    c.push(x + 0); // + 0 turns -0 into 0, as the C int16 does
  }
  return { largest, c };
}

export function quat16Unpack(p) {
  const q = [0, 0, 0, 0];
  let s = 0;
  let k = 0;
  for (let i = 0; i < 4; i++) {
    if (i === (p.largest & 3)) continue;
    const c = p.c[k++] / QUAT16_SCALE;
    q[i] = c;
    s += c * c;
  }
  q[p.largest & 3] = s < 1.0 ? Math.sqrt(1.0 - s) : 0.0;
  return q;
}

// JSON form used by the vectors: BigInt -> decimal string, bytes -> hex.
export function toJSONable(v) {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Uint8Array) return bytesToHex(v);
  if (Array.isArray(v)) return v.map(toJSONable);
  if (v && typeof v === 'object') {
    const o = {};
    for (const [k, x] of Object.entries(v)) o[k] = toJSONable(x);
    return o;
  }
  return v;
}
