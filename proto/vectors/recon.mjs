// For generate.mjs only: strand reconstruction written from PROTOCOL.md 6 and 7.3 alone
// (not from proto/js), with switches for the ways a reader could take "in the order
// written" otherwise, and a bit writer for hand-made key blocks. The generator keeps a
// vector only if the module's decoder agrees with `reconstruct(..., {})` to the bit, and
// the "order" vector only if every misreading below changes at least one decoded float.

const f32 = Math.fround;
const sgn = (x) => (x < 0 ? -1 : 1);

// Each one a plausible implementation that is not the spec's (PROTOCOL.md 7.3 names them).
export const MISREADINGS = {
  quat_reciprocal: 'smallest-three component as s * (1 / 46340) instead of s / 46340',
  quat_renormalised: 'the unpacked quaternion normalised again',
  matrix_expanded: 'R entries as 2xy - 2zw and 1 - 2yy - 2zz instead of 2(xy - zw), 1 - 2(yy + zz)',
  direction_reciprocal: 'rest direction scaled by 1 / |d| instead of divided by |d|',
  basis_regrouped: 't1.x as 1 + s * n_x * (n_x * a) instead of 1 + ((s * n_x) * n_x) * a',
  no_frame: 'R * (B * o) instead of (R * B) * o',
  grid_reciprocal: 'u as c * (1 / M) instead of c / M',
  z_grouped: 'z as 1 - (|x| + |y|) instead of (1 - |x|) - |y|',
  fold_integer: 'folding when |u| + |v| > M instead of when the computed z < 0',
  fold_swapped: 'folding to ((1 - |x|) sgn x, (1 - |y|) sgn y) instead of ((1 - |y|) sgn x, (1 - |x|) sgn y)',
  norm_reciprocal: 'oct direction scaled by 1 / sqrt(...) instead of divided',
  sums_reversed: 'every 3-term sum added right to left',
  root_chained: 'root as ((p + R0 a0) + R1 a1) + R2 a2 instead of p + ((R0 a0 + R1 a1) + R2 a2)',
  length_inside: 'step as p + ((L F0) o0 + (L F1) o1 + (L F2) o2) instead of p + L (F o)',
  float_points: 'each point rounded to binary32 before the next is built on it',
};

const sum3 = (a, b, c, v) => (v.sums_reversed ? (c + b) + a : (a + b) + c);

export function quatUnpack(largest, c, v = {}) {
  const q = [0, 0, 0, 0];
  let s = 0;
  let k = 0;
  for (let i = 0; i < 4; i++) {
    if (i === largest) continue;
    const x = v.quat_reciprocal ? c[k++] * (1 / 46340) : c[k++] / 46340;
    q[i] = x;
    s += x * x;
  }
  q[largest] = Math.sqrt(Math.max(0, 1 - s));
  if (v.quat_renormalised) {
    const n = Math.sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (let i = 0; i < 4; i++) q[i] /= n;
  }
  return q;
}

export function matrix([x, y, z, w], v = {}) {
  if (v.matrix_expanded) {
    return [
      1 - 2 * y * y - 2 * z * z, 2 * x * y - 2 * z * w, 2 * x * z + 2 * y * w,
      2 * x * y + 2 * z * w, 1 - 2 * x * x - 2 * z * z, 2 * y * z - 2 * x * w,
      2 * x * z - 2 * y * w, 2 * y * z + 2 * x * w, 1 - 2 * x * x - 2 * y * y,
    ];
  }
  return [
    1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
    2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
    2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y),
  ];
}

// Row-major B with columns t1, t2, n.
export function basis(d, v = {}) {
  const [dx, dy, dz] = d.map(f32);
  const len = Math.sqrt(sum3(dx * dx, dy * dy, dz * dz, v));
  const inv = 1 / len;
  const [nx, ny, nz] = v.direction_reciprocal ? [dx * inv, dy * inv, dz * inv] : [dx / len, dy / len, dz / len];
  const s = nz < 0 ? -1 : 1;
  const a = -1 / (s + nz);
  const b = nx * ny * a;
  const t1x = v.basis_regrouped ? 1 + s * nx * (nx * a) : 1 + s * nx * nx * a;
  return [t1x, b, nx, s * b, s + ny * ny * a, ny, -s * nx, -ny, nz];
}

const mul = (m, o, v) => [0, 1, 2].map((r) => sum3(m[3 * r] * o[0], m[3 * r + 1] * o[1], m[3 * r + 2] * o[2], v));

export function oct(cu, cv, M, v = {}) {
  let x = v.grid_reciprocal ? cu * (1 / M) : cu / M;
  let y = v.grid_reciprocal ? cv * (1 / M) : cv / M;
  const z = v.z_grouped ? 1 - (Math.abs(x) + Math.abs(y)) : 1 - Math.abs(x) - Math.abs(y);
  if (v.fold_integer ? Math.abs(cu) + Math.abs(cv) > M : z < 0) {
    [x, y] = v.fold_swapped ? [(1 - Math.abs(x)) * sgn(x), (1 - Math.abs(y)) * sgn(y)]
      : [(1 - Math.abs(y)) * sgn(x), (1 - Math.abs(x)) * sgn(y)];
  }
  const n = Math.sqrt(sum3(x * x, y * y, z * z, v));
  if (v.norm_reciprocal) {
    const i = 1 / n;
    return [x * i, y * i, z * i];
  }
  return [x / n, y / n, z / n];
}

// Points (flat, binary32 values) of every strand from a record's head pose and the codes.
// strands: [{points, segment_length, anchor, direction, bits, codes: [u0, v0, u1, ...]}].
export function reconstruct(strands, headP, headQ, v = {}) {
  const R = matrix(quatUnpack(headQ.largest, headQ.c, v), v);
  const out = [];
  for (const s of strands) {
    const B = basis(s.direction, v);
    const F = [];
    for (let r = 0; r < 3; r++) for (let c = 0; c < 3; c++) F.push(sum3(R[3 * r] * B[c], R[3 * r + 1] * B[3 + c], R[3 * r + 2] * B[6 + c], v));
    const a = s.anchor.map(f32);
    const L = f32(s.segment_length);
    const M = 2 ** (s.bits - 1) - 1;
    let p = [0, 1, 2].map((r) => {
      const hp = f32(headP[r]);
      if (v.root_chained) return ((hp + R[3 * r] * a[0]) + R[3 * r + 1] * a[1]) + R[3 * r + 2] * a[2];
      return hp + sum3(R[3 * r] * a[0], R[3 * r + 1] * a[1], R[3 * r + 2] * a[2], v);
    });
    out.push(...p.map(f32));
    for (let i = 0; i + 1 < s.points; i++) {
      const o = oct(s.codes[2 * i], s.codes[2 * i + 1], M, v);
      const w = v.no_frame ? mul(R, mul(B, o, v), v)
        : v.length_inside ? [0, 1, 2].map((r) => sum3(L * F[3 * r] * o[0], L * F[3 * r + 1] * o[1], L * F[3 * r + 2] * o[2], v))
          : mul(F, o, v);
      p = p.map((x, r) => x + (v.length_inside ? w[r] : L * w[r]));
      if (v.float_points) p = p.map(f32);
      out.push(...p.map(f32));
    }
  }
  return out;
}

// LSB-first bit stream (PROTOCOL.md 7): bit i is bit i % 8 of byte i / 8.
export class Bits {
  constructor() { this.bits = []; }
  put(value, n) { for (let i = 0; i < n; i++) this.bits.push(Math.floor(value / 2 ** i) % 2); }
  // Exp-Golomb of order k: m - k zeros, a one, then the low m bits of y = x + 2^k as one
  // field (least significant first).
  eg(x, k) {
    const y = x + 2 ** k;
    let m = 0;
    while (2 ** (m + 1) <= y) m++;
    this.put(0, m - k);
    this.put(1, 1);
    this.put(y - 2 ** m, m);
  }
  bytes() {
    const b = new Uint8Array(Math.ceil(this.bits.length / 8));
    this.bits.forEach((x, i) => { b[i >> 3] |= x << (i & 7); });
    return b;
  }
}

// Strand data of all-key blocks with zero velocities: the count byte, then per strand
// mode 2, b - 2, the codes + M, k = 0 and one `1` (EG_0(0)) per velocity component.
export function keyData(strands) {
  const w = new Bits();
  for (const s of strands) {
    const M = 2 ** (s.bits - 1) - 1;
    w.put(2, 2);
    w.put(s.bits - 2, 4);
    for (const c of s.codes) w.put(c + M, s.bits);
    w.put(0, 4);
    for (let i = 0; i < s.codes.length; i++) w.eg(0, 0);
  }
  return Uint8Array.of(strands.length, ...w.bytes());
}
