// Small vector and quaternion helpers (core/README.md "Units and axes": right-handed, +Y up,
// metres, quaternions [x, y, z, w]). Plain arrays; nothing here allocates more than its result.

export const add = (a, b) => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
export const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
export const scale = (a, s) => [a[0] * s, a[1] * s, a[2] * s];
export const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
export const cross = (a, b) => [
  a[1] * b[2] - a[2] * b[1],
  a[2] * b[0] - a[0] * b[2],
  a[0] * b[1] - a[1] * b[0],
];
export const length = (a) => Math.sqrt(dot(a, a));
export function normalize(a) {
  const l = length(a);
  return l > 0 ? scale(a, 1 / l) : [0, 0, 0];
}
export const lerp = (a, b, t) => a + (b - a) * t;
export const clamp = (x, lo, hi) => (x < lo ? lo : x > hi ? hi : x);
export const DEG = Math.PI / 180;

// Hamilton product a * b (apply b first, then a).
export function quatMul(a, b) {
  const [ax, ay, az, aw] = a;
  const [bx, by, bz, bw] = b;
  return [
    aw * bx + ax * bw + ay * bz - az * by,
    aw * by - ax * bz + ay * bw + az * bx,
    aw * bz + ax * by - ay * bx + az * bw,
    aw * bw - ax * bx - ay * by - az * bz,
  ];
}

export function quatAxisAngle(axis, angle) {
  const n = normalize(axis);
  const s = Math.sin(angle / 2);
  return [n[0] * s, n[1] * s, n[2] * s, Math.cos(angle / 2)];
}

// Head orientation from yaw (about +Y, turning), pitch (about +X, nodding; positive tips
// the face, which looks along +Z, downwards) and roll (about +Z, tilting): q = yaw·pitch·roll.
export function quatFromYawPitchRoll(yaw, pitch, roll) {
  const qy = quatAxisAngle([0, 1, 0], yaw);
  const qx = quatAxisAngle([1, 0, 0], pitch);
  const qz = quatAxisAngle([0, 0, 1], roll);
  return quatMul(qy, quatMul(qx, qz));
}

// Rotates v by unit quaternion q.
export function rotate(q, v) {
  const [x, y, z, w] = q;
  // t = 2 q.xyz × v; v' = v + w t + q.xyz × t
  const tx = 2 * (y * v[2] - z * v[1]);
  const ty = 2 * (z * v[0] - x * v[2]);
  const tz = 2 * (x * v[1] - y * v[0]);
  return [
    v[0] + w * tx + (y * tz - z * ty),
    v[1] + w * ty + (z * tx - x * tz),
    v[2] + w * tz + (x * ty - y * tx),
  ];
}

// World position of head-local point `local` for head pose (p, q).
export const headToWorld = (p, q, local) => add(p, rotate(q, local));

// Symmetric 2x2 [[a, b], [b, c]] -> { l1 >= l2, angle of l1's eigenvector }.
export function eigenSym2(a, b, c) {
  const tr = (a + c) / 2;
  const d = Math.sqrt(((a - c) / 2) ** 2 + b * b);
  const l1 = tr + d;
  const l2 = tr - d;
  let angle;
  if (Math.abs(b) > 1e-12) angle = Math.atan2(l1 - a, b);
  else angle = a >= c ? 0 : Math.PI / 2;
  return { l1, l2: Math.max(l2, 0), angle };
}

// Deterministic 32-bit hash of a string or BigInt, for stable per-instance colours.
export function hash32(v) {
  const s = String(v);
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return h >>> 0;
}
