// Joint rotations for skinned meshes: turns a strand's points into the local rotations of
// the bones of a hair chain, the way VRMC_springBone turns a tail position into a bone
// rotation (shortest arc from the bone's rest direction to its current one, composed
// from root to tip). Mirrored by clients/lib/joints.c.
//
// The chain: joint i sits at point i; bone i runs from point i to point i + 1. At rest,
// every joint's local rotation is the identity (its axes are those of the root's parent),
// so bone i's rest direction is r[i+1] - r[i] in the parent's frame. With P the parent's
// world rotation and W_i = P * L_0 * ... * L_i, the returned L_i are the local rotations
// that put every bone on the frame's points:
//
//   p[0] = points[0],  p[i+1] = p[i] + rotate(W_i, r[i+1] - r[i])
//
// gives back the points (exactly, up to rounding, when the segment lengths are the rest
// ones, as Ponytail keeps them). The last joint has no bone to aim: its rotation is the
// identity. An avatar whose joints have rest rotations I_i (glTF node rotations at rest)
// sets node i's rotation to I_i * (C_i^-1 * L_i * C_i) with C_i = I_0 * ... * I_i; with
// identity rest rotations that is L_i.

const MIN_SEGMENT = 1e-9; // m: shorter has no direction

function asPoints(a, what) {
  if (!a || typeof a.length !== 'number') throw new TypeError(`${what}: expected points`);
  const flat = a.length > 0 && typeof a[0] !== 'number' ? Array.from(a, (p) => [p[0], p[1], p[2]]).flat() : Array.from(a);
  if (flat.length % 3 !== 0 || flat.length < 6) throw new RangeError(`${what}: expected at least 2 points of 3 numbers`);
  if (!flat.every(Number.isFinite)) throw new RangeError(`${what}: not a finite number`);
  return flat;
}

const quatMul = (a, b) => [
  a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
  a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
  a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
  a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2],
];

function quatRotate(q, v) { // q v q*, q unit
  const [x, y, z, w] = q;
  const tx = 2 * (y * v[2] - z * v[1]), ty = 2 * (z * v[0] - x * v[2]), tz = 2 * (x * v[1] - y * v[0]);
  return [v[0] + w * tx + (y * tz - z * ty), v[1] + w * ty + (z * tx - x * tz), v[2] + w * tz + (x * ty - y * tx)];
}

const conj = (q) => [-q[0], -q[1], -q[2], q[3]];

// The shortest rotation taking unit vector a to unit vector b; half a turn about an axis
// perpendicular to a when they are opposite (the choice is arbitrary but fixed).
function fromTo(a, b) {
  const d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  let q;
  if (1 + d < 1e-12) {
    const o = Math.abs(a[0]) < 0.9 ? [1, 0, 0] : [0, 1, 0]; // the axis is a x o
    q = [a[1] * o[2] - a[2] * o[1], a[2] * o[0] - a[0] * o[2], a[0] * o[1] - a[1] * o[0], 0];
  } else {
    q = [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0], 1 + d];
  }
  const n = Math.hypot(...q);
  return q.map((c) => c / n);
}

function segment(p, i, what) {
  const v = [p[3 * i + 3] - p[3 * i], p[3 * i + 4] - p[3 * i + 1], p[3 * i + 5] - p[3 * i + 2]];
  const n = Math.hypot(...v);
  if (!(n >= MIN_SEGMENT)) throw new RangeError(`${what}: segment ${i} is shorter than ${MIN_SEGMENT} m`);
  return v.map((c) => c / n);
}

// restPoints, points: the strand's rest points (in the root's parent frame) and a frame's
// points (world), the same count, root first; flat [x, y, z, ...] (as StrandDecoder
// gives) or [[x, y, z], ...]. parentRotation: the parent's world rotation [x, y, z, w]
// (normalised here; identity when omitted). Returns one unit quaternion [x, y, z, w] per
// point. Throws RangeError/TypeError for fewer than 2 points, different counts, a value
// that is not finite, a segment shorter than 1 nm, or a parent rotation of norm ~0.
export function jointRotations(restPoints, points, parentRotation = [0, 0, 0, 1]) {
  const r = asPoints(restPoints, 'restPoints');
  const p = asPoints(points, 'points');
  if (r.length !== p.length) throw new RangeError(`restPoints has ${r.length / 3} points, points ${p.length / 3}`);
  const pq = Array.from(parentRotation ?? [], Number);
  const pn = Math.hypot(...pq);
  if (pq.length !== 4 || !pq.every(Number.isFinite) || !(pn > 1e-9)) throw new RangeError('parentRotation: expected a non-zero quaternion [x, y, z, w]');
  let world = pq.map((c) => c / pn);
  const out = [];
  for (let i = 0; i + 1 < r.length / 3; i++) {
    const rest = segment(r, i, 'restPoints');
    const now = quatRotate(conj(world), segment(p, i, 'points')); // in the parent joint's frame
    const local = fromTo(rest, now);
    out.push(local);
    world = quatMul(world, local);
    const n = Math.hypot(...world); // keep the chain unit over many joints
    world = world.map((c) => c / n);
  }
  out.push([0, 0, 0, 1]);
  return out;
}
