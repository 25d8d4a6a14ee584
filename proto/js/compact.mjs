// Ponytail wire protocol 1.2: the compact frame coding (PROTOCOL.md 11), decoder side.
// Mirrors proto/src/compact.c and ptp_decoder_apply_c (proto/src/strand_dec.c): the strand
// blocks are section 7's (StrandDecoder.readStrand), the head pose and seq are predicted
// from the stream's last two frames.
//
//   const clock = new BatchClock(welcome.tick, welcome.server_time_us, welcome.tick_hz);
//   const b = decodeBatchC(bytes);          // a frame_batch_c message
//   clock.advance(b);                       // every batch, in order
//   for (const rec of b.records) decoders.get(rec.id).applyCompact(clock.tick, rec.step, rec);

import { E, HEADER_SIZE, MAJOR, MAX_PAYLOAD, MINOR, MINOR_HASH, BitReader, fail, unzigzag } from './wire.mjs';
import { StrandDecoder } from './strand.mjs';

export const FRAME_BATCH_C = 0x87;
export const MINOR_COMPACT = 2;
export const FEATURE_COMPACT = 1;
export const RECORD_ABS = 2;
const HEAD_GRID = 65536;
const HEAD_P_MAX = 2 ** 30;
const HEAD_VEL_LIMIT = 2 ** 19;
const SEQ_DELTA_LIMIT = 2 ** 20;
const TWO32 = 1n << 32n;

// A LEB128 varint at r.pos (shortest form, <= 10 bytes, < 2^64) as a BigInt.
function varint(r) {
  let x = 0n;
  for (let i = 0; i < 10; i++) {
    if (r.pos >= r.end) fail(E.TRUNC);
    const b = r.b[r.pos++];
    if (i === 9 && b > 1) fail(E.RANGE);
    x |= BigInt(b & 0x7f) << BigInt(7 * i);
    if (!(b & 0x80)) {
      if (b === 0 && i > 0) fail(E.RANGE);
      return x;
    }
  }
  return fail(E.RANGE);
}

const unzigzag64 = (u) => ((u & 1n) ? -((u >> 1n) + 1n) : u >> 1n);

// One record: {id, flags (key, abs, dropped component), step (flags bits 2..5 + 1), body},
// and in a batch of minor >= 4 a key record's state_hash (BigInt), the body's last 8
// bytes (PROTOCOL.md 11.2), which `body` then leaves out.
function record(r, minor) {
  const hi = varint(r), lo = varint(r);
  if (hi >= TWO32 || lo >= TWO32) fail(E.RANGE);
  if (r.pos >= r.end) fail(E.TRUNC);
  let flags = r.b[r.pos++];
  const step = ((flags >> 2) & 15) + 1;
  flags &= ~0x3c;
  const len = varint(r);
  if (len > 65535n) fail(E.RANGE);
  const n = Number(len);
  if (n > r.end - r.pos) fail(E.TRUNC);
  let body = r.b.subarray(r.pos, r.pos + n);
  r.pos += n;
  if (minor >= MINOR_HASH && flags & 1) {
    if (n < 8) fail(E.TRUNC); // the hash cut short
    const state_hash = new DataView(body.buffer, body.byteOffset + n - 8, 8).getBigUint64(0, true);
    body = body.subarray(0, n - 8);
    return { id: (hi << 32n) | lo, flags, step, body, state_hash };
  }
  return { id: (hi << 32n) | lo, flags, step, body };
}

// Decodes a whole frame_batch_c message: {type, header_minor, tick_gap, time_dev,
// records: [{id, flags, step, body}]} (BigInt tick_gap, time_dev, id). Header checks in
// PROTOCOL.md section 2's order; throws ProtoError.
export function decodeBatchC(bytes) {
  if (bytes.length < HEADER_SIZE) fail(E.TRUNC);
  if (bytes[0] !== 0x50 || bytes[1] !== 0x54) fail(E.MAGIC);
  if (bytes[2] !== MAJOR) fail(E.VERSION);
  const payload = (bytes[6] | bytes[7] << 8 | bytes[8] << 16) + bytes[9] * 2 ** 24;
  if (payload > MAX_PAYLOAD) fail(E.TOOBIG);
  if (payload > bytes.length - HEADER_SIZE) fail(E.TRUNC);
  if (payload < bytes.length - HEADER_SIZE) fail(E.LENGTH);
  // strict up to this module's minor (3 has 1.2's layout, 4 adds the state hash)
  const minor = bytes[3], strict = minor <= MINOR;
  if (strict && bytes[5] !== 0) fail(E.FLAGS);
  if (bytes[4] !== FRAME_BATCH_C) fail(E.TYPE);
  const r = { b: bytes, pos: HEADER_SIZE, end: bytes.length };
  const tickGap = varint(r);
  if (tickGap > TWO32) fail(E.RANGE);
  const timeDev = unzigzag64(varint(r));
  const count = varint(r);
  if (count > 65535n) fail(E.LIMIT);
  if (Number(count) * 4 > r.end - r.pos) fail(E.COUNT);
  const records = [];
  for (let i = 0n; i < count; i++) records.push(record(r, minor));
  if (strict && r.pos !== r.end) fail(E.TRAILING);
  return { type: 'frame_batch_c', header_minor: minor, tick_gap: tickGap, time_dev: timeDev, records };
}

// A connection's batch clock (PROTOCOL.md 11.1): from welcome's tick and time, advanced
// by every frame_batch_c in order. BigInt tick and time_us.
export class BatchClock {
  constructor(tick, timeUs, tickHz) {
    this.tick = BigInt(tick);
    this.time_us = BigInt(timeUs);
    this.hz = BigInt(tickHz);
  }
  advance(b) {
    if (this.hz < 1n || b.tick_gap > TWO32) fail(E.RANGE);
    this.tick += b.tick_gap;
    const nominal = (b.tick_gap * 1000000n + this.hz / 2n) / this.hz;
    this.time_us = BigInt.asIntN(64, this.time_us + nominal + b.time_dev);
  }
}

function triple(r) {
  const k = r.get(4), v = [];
  for (let i = 0; i < 3; i++) {
    const x = unzigzag(r.eg(k));
    if (x <= -HEAD_VEL_LIMIT || x >= HEAD_VEL_LIMIT) fail(E.RANGE);
    v.push(x);
  }
  return v;
}

const signed = (v, bits) => (v >= 2 ** (bits - 1) ? v - 2 ** bits : v);

// One decoder per subscribed instance and stream (see ptp_decoder_apply_c).
export class CompactDecoder extends StrandDecoder {
  constructor(shape) {
    super(shape);
    this.head = null; // {seq, largest, cur[6], vel[6]}
  }

  reset() {
    super.reset();
    this.head = null;
  }

  readHead(r, abs, largest, inSeq) {
    const o = this.head;
    const h = { seq: 0, largest, cur: new Array(6), vel: new Array(6) };
    if (abs) {
      h.seq = r.get(32);
      for (let i = 0; i < 3; i++) h.cur[i] = signed(r.get(32), 32);
      for (let i = 3; i < 6; i++) h.cur[i] = signed(r.get(16), 16);
      const vp = triple(r), vq = triple(r);
      h.vel = vp.concat(vq);
    } else {
      if (!o || !inSeq) fail(E.NOKEY);
      const d = r.eg(0);
      if (d >= SEQ_DELTA_LIMIT) fail(E.RANGE);
      h.seq = (o.seq + d) % 2 ** 32;
      const res = triple(r).concat(triple(r));
      if (largest !== o.largest) fail(E.RANGE);
      for (let j = 0; j < 6; j++) {
        h.cur[j] = o.cur[j] + o.vel[j] + res[j];
        h.vel[j] = h.cur[j] - o.cur[j];
        if (h.vel[j] <= -HEAD_VEL_LIMIT || h.vel[j] >= HEAD_VEL_LIMIT) fail(E.RANGE);
      }
    }
    for (let i = 0; i < 3; i++) if (h.cur[i] < -HEAD_P_MAX || h.cur[i] > HEAD_P_MAX) fail(E.RANGE);
    let q2 = 0;
    for (let i = 3; i < 6; i++) {
      if (h.cur[i] < -32767 || h.cur[i] > 32767) fail(E.RANGE);
      q2 += h.cur[i] * h.cur[i];
    }
    if (q2 > 46340 * 46340) fail(E.RANGE);
    return h;
  }

  // Applies a compact record of batch tick `tick` for a stream stepping `step` ticks
  // (the record's rec.step; 1 at the full rate). Returns {points: Float32Array, last_seq, head_p: [doubles],
  // head_q: {largest, c}}; throws ProtoError and changes nothing on any error.
  applyCompact(tick, step, rec) {
    const tk = BigInt(tick), st = BigInt(step);
    if (st < 1n) fail(E.INVAL);
    const inSeq = this.lastTick !== null && tk > this.lastTick && tk - this.lastTick === st;
    const r = new BitReader(rec.body);
    const h = this.readHead(r, (rec.flags & RECORD_ABS) !== 0, rec.flags >> 6, inSeq);
    const tmp = this.geo.map((_, s) => this.readStrand(s, r, inSeq));
    if (r.nbits - r.pos >= 8) fail(E.TRAILING);
    if (r.get(r.nbits - r.pos) !== 0) fail(E.FLAGS);
    const headQ = { largest: h.largest, c: h.cur.slice(3) };
    const hp = h.cur.slice(0, 3).map((v) => v / HEAD_GRID);
    const pts = this.rebuild(tmp, headQ, hp);
    this.head = h;
    this.commit(tmp, tk);
    return { points: Float32Array.from(pts), last_seq: h.seq, head_p: hp, head_q: headQ };
  }
}
