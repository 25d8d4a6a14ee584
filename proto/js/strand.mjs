// Ponytail wire protocol: the strand codec (mirrors proto/src/strand_geo.c, strand_enc.c,
// strand_dec.c). Every floating-point expression keeps the C order of operations: both
// sides are IEEE double without fused multiply-add, so they produce the same bytes and the
// same decoded floats. Keep them in step when editing either.

import {
  BitReader, BitWriter, E, MAX_POINTS, MAX_STRANDS, bitLength, egLen, fail,
  unzigzag, zigzag,
} from './wire.mjs';
import { RECORD_KEY, encodeRecord, quat16Pack, quat16Unpack } from './msg.mjs';

const MODE_HOLD = 0;
const MODE_DELTA = 1;
const MODE_KEY = 2;
const MODE_RAW = 3;
const PRED_LINEAR = 1;
const PRED_SPATIAL = 2;
const BITS_MIN = 2;
const BITS_MAX = 16;
const K_MAX = 15;
const OCT_MAX_ANGLE_M = 1.42;
const SEGMENT_ERROR_SHARE = 0.5;
const FLT_MAX = 3.4028234663852886e38;
const f32 = Math.fround;

export const gridM = (bits) => 2 ** (bits - 1) - 1;
const sgn = (x) => (x < 0 ? -1 : 1);

// Checks a shape (array of {points, segment_length, anchor, direction}) like
// ptp_shape_validate; throws ProtoError.
export function validateShape(shape) {
  if (!Array.isArray(shape) || shape.length < 1 || shape.length > MAX_STRANDS) fail(E.LIMIT);
  for (const s of shape) {
    if (!Number.isInteger(s.points) || s.points < 2 || s.points > MAX_POINTS) fail(E.RANGE);
    const len = f32(s.segment_length);
    if (!Number.isFinite(len)) fail(E.FLOAT);
    if (!(len > 0 && len <= 10)) fail(E.RANGE);
    const v = [...s.anchor, ...s.direction].map(f32);
    if (v.length !== 6) fail(E.INVAL, 'anchor/direction');
    if (!v.every(Number.isFinite)) fail(E.FLOAT);
    if (!(v[3] * v[3] + v[4] * v[4] + v[5] * v[5] >= 1e-12)) fail(E.RANGE);
  }
}

function geo(s) {
  const x = f32(s.direction[0]), y = f32(s.direction[1]), z = f32(s.direction[2]);
  const len = Math.sqrt(x * x + y * y + z * z);
  const n0 = x / len, n1 = y / len, n2 = z / len;
  const sign = n2 < 0.0 ? -1.0 : 1.0;
  const a = -1.0 / (sign + n2);
  const b = n0 * n1 * a;
  const basis = new Float64Array(9);
  basis[0] = 1.0 + sign * n0 * n0 * a;
  basis[3] = sign * b;
  basis[6] = -sign * n0;
  basis[1] = b;
  basis[4] = sign + n1 * n1 * a;
  basis[7] = -n1;
  basis[2] = n0;
  basis[5] = n1;
  basis[8] = n2;
  return {
    points: s.points,
    length: f32(s.segment_length),
    anchor: s.anchor.map(f32),
    basis,
  };
}

function quatMatrix(q) {
  const [x, y, z, w] = q;
  return [
    1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w),
    2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w),
    2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y),
  ];
}

function frameOf(rot, basis) {
  const f = new Float64Array(9);
  for (let r = 0; r < 3; r++) {
    for (let c = 0; c < 3; c++) {
      f[r * 3 + c] = rot[r * 3 + 0] * basis[0 + c] + rot[r * 3 + 1] * basis[3 + c] +
        rot[r * 3 + 2] * basis[6 + c];
    }
  }
  return f;
}

export function octDecode(cu, cv, m) {
  let u = cu / m, v = cv / m;
  const z = 1.0 - Math.abs(u) - Math.abs(v);
  if (z < 0.0) {
    const fu = (1.0 - Math.abs(v)) * sgn(u);
    const fv = (1.0 - Math.abs(u)) * sgn(v);
    u = fu;
    v = fv;
  }
  const n = Math.sqrt(u * u + v * v + z * z);
  return [u / n, v / n, z / n];
}

function octEncode(l, m) {
  const s = Math.abs(l[0]) + Math.abs(l[1]) + Math.abs(l[2]);
  let u = 0.0, v = 0.0, best = -Infinity;
  if (s > 0.0) {
    u = l[0] / s;
    v = l[1] / s;
    if (l[2] < 0.0) {
      const ou = (1.0 - Math.abs(v)) * sgn(u);
      const ov = (1.0 - Math.abs(u)) * sgn(v);
      u = ou;
      v = ov;
    }
  }
  const fu = Math.floor(u * m), fv = Math.floor(v * m);
  let res = [fu, fv, null];
  for (let i = 0; i < 2; i++) {
    for (let j = 0; j < 2; j++) {
      if (fu + i > m || fv + j > m) continue;
      const d = octDecode(fu + i, fv + j, m);
      const dot = d[0] * l[0] + d[1] * l[1] + d[2] * l[2];
      if (dot > best) {
        best = dot;
        res = [fu + i, fv + j, d];
      }
    }
  }
  return res;
}

function strandRoot(g, rot, hp) {
  const out = [0, 0, 0];
  for (let r = 0; r < 3; r++) {
    out[r] = hp[r] + (rot[r * 3 + 0] * g.anchor[0] + rot[r * 3 + 1] * g.anchor[1] +
      rot[r * 3 + 2] * g.anchor[2]);
  }
  return out;
}

function strandStep(g, frame, d, prev) {
  const next = [0, 0, 0];
  for (let r = 0; r < 3; r++) {
    next[r] = prev[r] + g.length * (frame[r * 3 + 0] * d[0] + frame[r * 3 + 1] * d[1] +
      frame[r * 3 + 2] * d[2]);
  }
  return next;
}

function chooseBits(length, maxError) {
  const need = OCT_MAX_ANGLE_M * length / (SEGMENT_ERROR_SHARE * maxError);
  let b = BITS_MIN;
  while (b < BITS_MAX && gridM(b) < need) b++;
  return b;
}

function bestK(z, n) {
  let best = 0, top = 0, least = -1;
  for (let i = 0; i < n; i++) if (bitLength(z[i]) > top) top = bitLength(z[i]);
  for (let k = 0; k <= top && k <= K_MAX; k++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += egLen(z[i], k);
    if (least < 0 || sum < least) {
      least = sum;
      best = k;
    }
  }
  return [best, least];
}

const dist = (a, b) => {
  const dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return Math.sqrt(dx * dx + dy * dy + dz * dz);
};

export const encoderDefaults = Object.freeze({ max_error_m: 0.001, keyframe_interval: 60 });

// One encoder per instance, shared by all its subscribers (see ptp/strand.h).
export class StrandEncoder {
  constructor(shape, params = encoderDefaults) {
    validateShape(shape);
    const maxErr = f32(params.max_error_m ?? encoderDefaults.max_error_m);
    const ki = params.keyframe_interval ?? encoderDefaults.keyframe_interval;
    if (!(maxErr >= f32(1e-5) && maxErr <= 1) || !Number.isInteger(ki) || ki < 1 || ki > 65535) {
      fail(E.INVAL, 'params');
    }
    this.maxError = maxErr;
    this.interval = ki;
    this.geo = shape.map(geo);
    this.bits = this.geo.map((g) => chooseBits(g.length, maxErr));
    this.segOff = [0];
    for (const g of this.geo) this.segOff.push(this.segOff[this.segOff.length - 1] + g.points - 1);
    this.nPoints = this.geo.reduce((a, g) => a + g.points, 0);
    const segs = this.segOff[this.geo.length];
    for (const k of ['cur', 'vel', 'prevCur', 'prevVel', 'next']) this[k] = new Int32Array(2 * segs);
    this.zz = new Uint32Array(2 * segs);
    this.xyz = new Float32Array(3 * this.nPoints);
    this.ticks = 0;
    this.forceKey = false;
    const S = this.geo.length;
    this.needKey = new Uint8Array(S);
    this.raw = new Uint8Array(S);
    this.mode = new Uint8Array(S);
    this.pred = new Uint8Array(S);
    this.k = new Uint8Array(S);
    this.dbits = new Array(S).fill(-1);
    this.lastError = 0;
  }

  get rawStrands() { return this.raw.reduce((a, b) => a + b, 0); }

  quantise(s, rot, hp, pts, p0) {
    const g = this.geo[s];
    const m = gridM(this.bits[s]);
    const off = 2 * this.segOff[s];
    const frame = frameOf(rot, g.basis);
    let prev = strandRoot(g, rot, hp);
    let err = dist(prev, pts.subarray(3 * p0, 3 * p0 + 3));
    for (let i = 0; i + 1 < g.points; i++) {
      const t = pts.subarray(3 * (p0 + i + 1), 3 * (p0 + i + 2));
      const d = [t[0] - prev[0], t[1] - prev[1], t[2] - prev[2]];
      const l = [0, 0, 0];
      for (let c = 0; c < 3; c++) l[c] = frame[0 + c] * d[0] + frame[3 + c] * d[1] + frame[6 + c] * d[2];
      const [cu, cv, dir] = octEncode(l, m);
      this.next[off + 2 * i] = cu;
      this.next[off + 2 * i + 1] = cv;
      const next = strandStep(g, frame, dir, prev);
      const pe = dist(next, t);
      if (pe > err) err = pe;
      prev = next;
    }
    return err;
  }

  chooseMode(s, keyTick) {
    const off = 2 * this.segOff[s], n = 2 * (this.geo[s].points - 1);
    if (this.raw[s] || keyTick || this.needKey[s]) {
      this.mode[s] = this.raw[s] ? MODE_RAW : MODE_KEY;
      this.dbits[s] = -1;
      return;
    }
    const sum = [0, 0, 0, 0];
    const last = [[0, 0], [0, 0]];
    for (let i = 0; i < n; i++) {
      const r0 = this.cur[off + i] - this.prevCur[off + i];
      const r1 = r0 - this.prevVel[off + i];
      sum[0] += zigzag(r0);
      sum[1] += zigzag(r1);
      sum[2] += zigzag(r0 - last[0][i & 1]);
      sum[3] += zigzag(r1 - last[1][i & 1]);
      last[0][i & 1] = r0;
      last[1][i & 1] = r1;
    }
    if (sum[PRED_LINEAR] === 0) {
      this.mode[s] = MODE_HOLD;
      this.dbits[s] = 2;
      return;
    }
    let pred = 0;
    for (let p = 1; p < 4; p++) if (sum[p] < sum[pred]) pred = p;
    const lastR = [0, 0];
    for (let i = 0; i < n; i++) {
      const r = this.cur[off + i] - this.prevCur[off + i] - ((pred & PRED_LINEAR) ? this.prevVel[off + i] : 0);
      this.zz[off + i] = zigzag((pred & PRED_SPATIAL) ? r - lastR[i & 1] : r);
      lastR[i & 1] = r;
    }
    const [k, bits] = bestK(this.zz.subarray(off, off + n), n);
    this.mode[s] = MODE_DELTA;
    this.pred[s] = pred;
    this.k[s] = k;
    this.dbits[s] = 2 + 2 + 4 + bits;
  }

  // headP: [x, y, z] m; headQ: [x, y, z, w]; xyz: Float32Array (or array) of every point.
  tick(headP, headQ, xyz) {
    const pts = xyz instanceof Float32Array ? xyz : Float32Array.from(xyz);
    if (pts.length !== 3 * this.nPoints) fail(E.INVAL, 'point count');
    if (!pts.every(Number.isFinite)) fail(E.FLOAT);
    const hp = [0, 1, 2].map((i) => f32(headP[i]));
    if (!hp.every(Number.isFinite)) fail(E.FLOAT);
    const q16 = quat16Pack(headQ);
    const rot = quatMatrix(quat16Unpack(q16));
    const raw = [];
    let worst = 0;
    for (let s = 0, p = 0; s < this.geo.length; p += this.geo[s].points, s++) {
      const se = this.quantise(s, rot, hp, pts, p);
      raw.push(se > this.maxError ? 1 : 0);
      if (!raw[s] && se > worst) worst = se;
    }
    this.prevCur.set(this.cur);
    this.prevVel.set(this.vel);
    for (let i = 0; i < this.cur.length; i++) {
      this.vel[i] = this.ticks === 0 ? 0 : this.next[i] - this.cur[i];
      this.cur[i] = this.next[i];
    }
    this.xyz.set(pts);
    this.headP = hp;
    this.headQ = q16;
    this.lastError = worst;
    const keyTick = this.ticks % this.interval === 0 || this.forceKey;
    for (let s = 0; s < this.geo.length; s++) {
      this.raw[s] = raw[s];
      this.chooseMode(s, keyTick);
      this.needKey[s] = raw[s];
    }
    this.forceKey = false;
    this.ticks++;
  }

  forceKeyframe() { this.forceKey = true; }

  writeStrand(w, s, mode, p0) {
    const n = 2 * (this.geo[s].points - 1), off = 2 * this.segOff[s];
    w.put(mode, 2);
    if (mode === MODE_DELTA) {
      w.put(this.pred[s], 2);
      w.put(this.k[s], 4);
      for (let i = 0; i < n; i++) w.eg(this.zz[off + i], this.k[s]);
    } else if (mode === MODE_KEY) {
      const m = gridM(this.bits[s]);
      w.put(this.bits[s] - BITS_MIN, 4);
      for (let i = 0; i < n; i++) w.put(this.cur[off + i] + m, this.bits[s]);
      const z = [];
      for (let i = 0; i < n; i++) z.push(zigzag(this.vel[off + i]));
      const [k] = bestK(z, n);
      w.put(k, 4);
      for (let i = 0; i < n; i++) w.eg(z[i], k);
    } else if (mode === MODE_RAW) {
      const bits = new Uint32Array(this.xyz.buffer);
      for (let i = 0; i < 3 * this.geo[s].points; i++) w.put(bits[3 * p0 + i], 32);
    }
  }

  // Strand data of this tick: key = false the shared delta, true an on-demand keyframe.
  data(key) {
    const w = new BitWriter();
    // the count: a byte, or 0 and a u16 for 256 strands and more
    if (this.geo.length <= 255) w.put(this.geo.length, 8);
    else { w.put(0, 8); w.put(this.geo.length, 16); }
    for (let s = 0, p = 0; s < this.geo.length; p += this.geo[s].points, s++) {
      const mode = key ? (this.raw[s] ? MODE_RAW : MODE_KEY) : this.mode[s];
      this.writeStrand(w, s, mode, p);
    }
    return w.bytes();
  }

  // The whole frame record (ptp_encoder_record) as a Uint8Array.
  record(key, id, lastSeq) {
    if (this.ticks === 0) fail(E.INVAL, 'record before tick');
    let isKey = true;
    for (let s = 0; s < this.geo.length; s++) isKey &&= key || this.mode[s] >= MODE_KEY;
    const data = this.data(key);
    if (data.length > 0xffff) fail(E.LIMIT);
    return encodeRecord({
      id, flags: isKey ? RECORD_KEY : 0, last_seq: lastSeq, head_p: this.headP, head_q: this.headQ, data,
    });
  }
}

// One decoder per subscribed instance (see ptp/strand.h, ptp_decoder_apply).
export class StrandDecoder {
  constructor(shape) {
    validateShape(shape);
    this.geo = shape.map(geo);
    this.nPoints = this.geo.reduce((a, g) => a + g.points, 0);
    this.st = this.geo.map((g) => ({
      valid: false, bits: 0, cur: new Int32Array(2 * (g.points - 1)), vel: new Int32Array(2 * (g.points - 1)),
    }));
    this.lastTick = null;
  }

  reset() {
    for (const st of this.st) st.valid = false;
    this.lastTick = null;
  }

  readStrand(s, r, inSequence) {
    const old = this.st[s];
    const g = this.geo[s];
    const n = 2 * (g.points - 1);
    const mode = r.get(2);
    if (mode === MODE_RAW) {
      const pts = new Float64Array(3 * g.points);
      const dv = new DataView(new ArrayBuffer(4));
      for (let i = 0; i < 3 * g.points; i++) {
        dv.setUint32(0, r.get(32));
        const f = dv.getFloat32(0);
        if (!Number.isFinite(f)) fail(E.FLOAT);
        pts[i] = f;
      }
      return { valid: false, bits: old.bits, raw: pts };
    }
    const t = { valid: true, bits: old.bits, cur: new Int32Array(n), vel: new Int32Array(n) };
    if (mode === MODE_KEY) {
      const bits = r.get(4) + BITS_MIN;
      if (bits > BITS_MAX) fail(E.RANGE);
      const m = gridM(bits);
      for (let i = 0; i < n; i++) {
        const c = r.get(bits) - m;
        if (c < -m || c > m) fail(E.RANGE);
        t.cur[i] = c;
      }
      const k = r.get(4);
      for (let i = 0; i < n; i++) {
        const v = unzigzag(r.eg(k));
        if (v < -2 * m || v > 2 * m) fail(E.RANGE);
        t.vel[i] = v;
      }
      t.bits = bits;
      return t;
    }
    if (!old.valid || !inSequence) fail(E.NOKEY);
    const m = gridM(old.bits);
    const last = [0, 0];
    let pred = PRED_LINEAR, k = 0;
    if (mode === MODE_DELTA) {
      pred = r.get(2);
      k = r.get(4);
    }
    for (let i = 0; i < n; i++) {
      const p = old.cur[i] + ((pred & PRED_LINEAR) ? old.vel[i] : 0);
      let e = 0;
      if (mode === MODE_DELTA) {
        e = unzigzag(r.eg(k));
        if (pred & PRED_SPATIAL) e += last[i & 1];
      }
      const c = p + e;
      if (c < -m || c > m) fail(E.RANGE);
      last[i & 1] = e;
      t.cur[i] = c;
      t.vel[i] = c - old.cur[i];
    }
    return t;
  }

  // Applies a decoded record (from decodeMessage's frame_batch.records) of batch tick
  // `tick` (BigInt or number); returns the points as a new Float32Array. Throws
  // ProtoError and leaves the state unchanged on any error.
  apply(tick, rec) {
    const tk = BigInt(tick);
    const data = rec.data;
    if (!data || data.length < 1) fail(E.TRUNC);
    // the count: a byte, or 0 and a u16 for 256 strands and more
    let count = data[0], at = 1;
    if (count === 0 && this.geo.length > 255) {
      if (data.length < 3) fail(E.TRUNC);
      count = data[1] | (data[2] << 8);
      at = 3;
    }
    if (count !== this.geo.length) fail(E.SHAPE);
    const r = new BitReader(data.subarray(at));
    /* a rate's stream (1.2) refers to its record `step` ticks before */
    const inSeq = this.lastTick !== null && tk === this.lastTick + BigInt(rec.step ?? 1);
    const tmp = this.geo.map((_, s) => this.readStrand(s, r, inSeq));
    if (r.nbits - r.pos >= 8) fail(E.TRAILING);
    if (r.get(r.nbits - r.pos) !== 0) fail(E.FLAGS);

    const pts = this.rebuild(tmp, rec.head_q, rec.head_p.map(f32));
    this.commit(tmp, tk);
    return Float32Array.from(pts);
  }

  // Points of the strands read by readStrand (tmp) for a head pose (hp: doubles, the
  // root's head position); throws ProtoError range beyond float range.
  rebuild(tmp, headQ, hp) {
    const rot = quatMatrix(quat16Unpack(headQ));
    const pts = new Float64Array(3 * this.nPoints);
    for (let s = 0, p = 0; s < this.geo.length; p += this.geo[s].points, s++) {
      const t = tmp[s];
      if (t.raw) {
        pts.set(t.raw, 3 * p);
        continue;
      }
      const g = this.geo[s];
      const frame = frameOf(rot, g.basis);
      const m = gridM(t.bits);
      let prev = strandRoot(g, rot, hp);
      pts.set(prev, 3 * p);
      for (let i = 0; i + 1 < g.points; i++) {
        prev = strandStep(g, frame, octDecode(t.cur[2 * i], t.cur[2 * i + 1], m), prev);
        pts.set(prev, 3 * (p + i + 1));
      }
    }
    for (let i = 0; i < pts.length; i++) if (!(Math.abs(pts[i]) <= FLT_MAX)) fail(E.RANGE);
    return pts;
  }

  // tmp becomes the state, tick the last applied.
  commit(tmp, tk) {
    for (let s = 0; s < this.geo.length; s++) {
      const t = tmp[s];
      if (!t.raw) {
        this.st[s].cur.set(t.cur);
        this.st[s].vel.set(t.vel);
      }
      this.st[s].valid = t.valid;
      this.st[s].bits = t.bits;
    }
    this.lastTick = tk;
  }
}

