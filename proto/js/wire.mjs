// Ponytail wire protocol: errors, the bounded little-endian reader, the writer, and the
// LSB-first bit streams with Exp-Golomb codes. Mirrors proto/src/wire.c and bits.c.

export const MAJOR = 1;
export const MINOR = 5;
export const MINOR_HASH = 4; // from 1.4 on a key record carries the state hash
export const MINOR_GRAB = 5; // from 1.5 on: grab, release, grab_result, error's ref
export const HEADER_SIZE = 10;
export const MAX_PAYLOAD = 1 << 20;
export const MAX_CLIENT_MESSAGE = 4096;
export const MAX_IDS = 256;
export const MAX_NAME = 64;
export const MAX_TOKEN = 128;
export const MAX_TEXT = 255;
export const MAX_STRANDS = 256; // since 1.3
export const MAX_STRANDS_1_2 = 32; // in a 1.0 to 1.2 message
export const MAX_POINTS = 64;
export const RECORD_MIN = 33;
export const EG_MAX_BITS = 20;

// Error names: the same vocabulary as ptp_err_name() in C and the vectors.
export const E = Object.freeze({
  TRUNC: 'truncated', MAGIC: 'bad_magic', VERSION: 'version', TYPE: 'unknown_type',
  TOOBIG: 'too_big', LENGTH: 'length', TRAILING: 'trailing', COUNT: 'count',
  LIMIT: 'limit', FLOAT: 'non_finite', RANGE: 'range', UTF8: 'utf8', FLAGS: 'flags',
  SHAPE: 'shape', NOKEY: 'no_key', NOSPACE: 'no_space', INVAL: 'invalid',
});

export class ProtoError extends Error {
  constructor(code, detail) {
    super(detail ? `${code}: ${detail}` : code);
    this.name = 'ProtoError';
    this.code = code;
  }
}

export function fail(code, detail) {
  throw new ProtoError(code, detail);
}

const utf8dec = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const utf8enc = new TextEncoder();

// Bounded reader over a Uint8Array: every get checks the bytes left first.
export class Reader {
  constructor(bytes, start = 0, end = bytes.length) {
    this.b = bytes;
    this.dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.pos = start;
    this.end = end;
  }
  get left() { return this.end - this.pos; }
  take(n) {
    if (n > this.left) fail(E.TRUNC);
    const p = this.pos;
    this.pos += n;
    return p;
  }
  u8() { return this.b[this.take(1)]; }
  u16() { return this.dv.getUint16(this.take(2), true); }
  u32() { return this.dv.getUint32(this.take(4), true); }
  i16() { return this.dv.getInt16(this.take(2), true); }
  u64() { return this.dv.getBigUint64(this.take(8), true); }
  i64() { return this.dv.getBigInt64(this.take(8), true); }
  f32() {
    const v = this.dv.getFloat32(this.take(4), true);
    if (!Number.isFinite(v)) fail(E.FLOAT);
    return v;
  }
  f32s(n) {
    const out = [];
    for (let i = 0; i < n; i++) out.push(this.f32());
    return out;
  }
  str8(max) {
    const n = this.u8();
    if (n > max) fail(E.LIMIT);
    const p = this.take(n);
    const bytes = this.b.subarray(p, p + n);
    if (bytes.includes(0)) fail(E.UTF8);
    try {
      return utf8dec.decode(bytes);
    } catch {
      return fail(E.UTF8);
    }
  }
  bytes(n) {
    const p = this.take(n);
    return this.b.subarray(p, p + n);
  }
  need(count, size) {
    if (count > Math.floor(this.left / size)) fail(E.COUNT);
  }
}

// Growing writer; validation failures throw.
export class Writer {
  constructor() {
    this.buf = new Uint8Array(64);
    this.len = 0;
  }
  room(n) {
    if (this.len + n <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + n) cap *= 2;
    const b = new Uint8Array(cap);
    b.set(this.buf.subarray(0, this.len));
    this.buf = b;
  }
  dv() { return new DataView(this.buf.buffer); }
  u8(v) { this.room(1); this.buf[this.len++] = v & 0xff; }
  u16(v) { this.room(2); this.dv().setUint16(this.len, v, true); this.len += 2; }
  u32(v) { this.room(4); this.dv().setUint32(this.len, v, true); this.len += 4; }
  i16(v) { this.room(2); this.dv().setInt16(this.len, v, true); this.len += 2; }
  u64(v) { this.room(8); this.dv().setBigUint64(this.len, BigInt.asUintN(64, BigInt(v)), true); this.len += 8; }
  i64(v) { this.room(8); this.dv().setBigInt64(this.len, BigInt.asIntN(64, BigInt(v)), true); this.len += 8; }
  f32(v) {
    if (!Number.isFinite(v)) fail(E.FLOAT);
    this.room(4);
    this.dv().setFloat32(this.len, v, true);
    this.len += 4;
  }
  f32s(a, n) { for (let i = 0; i < n; i++) this.f32(a[i]); }
  str8(s, max) {
    const b = utf8enc.encode(s ?? '');
    if (b.length > max || b.length > 255) fail(E.LIMIT);
    if (b.includes(0)) fail(E.UTF8);
    this.u8(b.length);
    this.bytes(b);
  }
  bytes(b) { this.room(b.length); this.buf.set(b, this.len); this.len += b.length; }
  result() { return this.buf.slice(0, this.len); }
}

// ---- bit streams (bit i is bit i % 8 of byte i / 8; fields least significant bit first)

export function bitLength(u) {
  return u === 0 ? 0 : 32 - Math.clz32(u);
}

export function egLen(v, k) {
  return 2 * (bitLength(v + 2 ** k) - 1) - k + 1;
}

export function zigzag(v) {
  return v >= 0 ? 2 * v : -2 * v - 1;
}

export function unzigzag(u) {
  return u % 2 === 1 ? -(u - 1) / 2 - 1 : u / 2;
}

export class BitWriter {
  constructor() {
    this.out = [];
    this.bits = 0;
  }
  put(v, n) {
    for (let i = 0; i < n; i++) {
      const byte = this.bits >>> 3;
      if (byte === this.out.length) this.out.push(0);
      this.out[byte] |= ((v >>> i) & 1) << (this.bits & 7);
      this.bits++;
    }
  }
  // Order-k Exp-Golomb: u = v + 2^k, n = floor(log2 u): n - k zeros, a one, low n bits of u.
  eg(v, k) {
    const u = v + 2 ** k;
    const n = bitLength(u) - 1;
    this.put(0, n - k);
    this.put(1, 1);
    this.put(u, n);
  }
  bytes() { return Uint8Array.from(this.out); }
}

export class BitReader {
  constructor(bytes) {
    this.b = bytes;
    this.nbits = bytes.length * 8;
    this.pos = 0;
  }
  get(n) {
    if (n > this.nbits - this.pos) fail(E.TRUNC);
    let v = 0;
    for (let i = 0; i < n; i++, this.pos++) v += ((this.b[this.pos >>> 3] >>> (this.pos & 7)) & 1) * 2 ** i;
    return v;
  }
  eg(k) {
    let zeros = 0;
    for (;;) {
      if (this.get(1)) break;
      if (++zeros > EG_MAX_BITS - k) fail(E.RANGE);
    }
    const low = this.get(zeros + k);
    return 2 ** (zeros + k) + low - 2 ** k;
  }
}
