// Head pose from Face Mesh landmarks: a rigid fit of the canonical face geometry
// (face-geometry.mjs) to the landmarks, back-projected through a pinhole camera.
//
// Landmarks. Face Mesh gives x and y normalised to the image's width and height, and z, a
// depth relative to the head's centre, in the same units as x (image widths); smaller is
// nearer the camera.
//
// Method.
// 1. The camera: a pinhole with its principal point at the image centre and a vertical field
//    of view fovY (default 63°, the camera MediaPipe's own face-geometry module assumes):
//    focal length f = (H / 2) / tan(fovY / 2) pixels.
// 2. Back-projection at unit depth: a landmark at pixel (u, v) with depth offset z·W pixels
//    lies, if the head's centre is at depth D, at D · ((u - cx)/f · k, (v - cy)/f · k, k) with
//    k = 1 + z·W/f. Every point scales with the one unknown D, so the points at D = 1 are the
//    true ones shrunk by 1/D: the same shape, the same rotation.
// 3. Our frame: camera x right, y down, z forward becomes world x right, y up, z toward the
//    viewer (a half turn about x), so a face looking into the camera has the identity
//    orientation, and turning to one's left is a positive yaw, as our heads do.
// 4. The fit: the similarity (s, R, t) that best maps the canonical points M onto those points
//    P in the least-squares sense, P ≈ s·R·M + t, by Horn's closed form (1987): R is the
//    eigenvector of the largest eigenvalue of a 4x4 matrix built from the cross-covariance,
//    read as a quaternion (Jacobi's method here), s the ratio of the projections.
// 5. Depth and position: s = 1/D (a canonical-sized face), so the head's centre is at t/s cm.
//    The residual (RMS distance of the fitted points, in cm at the true scale) rejects
//    landmarks that are not a face: above maxResidualCm the answer is "no face".
//
// Angles: q = yaw(about +Y) · pitch(about +X) · roll(about +Z), as math.mjs builds them.
// Exact on landmarks made by projecting the model; ≤ 1° with ±60° yaw and pixel noise
// (tests/web/unit.test.mjs, fixtures from tests/web/fixtures/make-face-fixtures.py).

import { FACE_INDICES, FACE_POINTS } from './face-geometry.mjs';

// Eigenvector of the largest eigenvalue of a symmetric 4x4 matrix (cyclic Jacobi).
function topEigenvector(a) {
  const A = a.map((r) => [...r]);
  const V = [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]];
  for (let sweep = 0; sweep < 30; sweep++) {
    let off = 0;
    for (let p = 0; p < 4; p++) for (let q = p + 1; q < 4; q++) off += A[p][q] * A[p][q];
    if (off < 1e-30) break;
    for (let p = 0; p < 4; p++) {
      for (let q = p + 1; q < 4; q++) {
        if (Math.abs(A[p][q]) < 1e-300) continue;
        const theta = (A[q][q] - A[p][p]) / (2 * A[p][q]);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < 4; k++) {
          const akp = A[k][p];
          const akq = A[k][q];
          A[k][p] = c * akp - s * akq;
          A[k][q] = s * akp + c * akq;
        }
        for (let k = 0; k < 4; k++) {
          const apk = A[p][k];
          const aqk = A[q][k];
          A[p][k] = c * apk - s * aqk;
          A[q][k] = s * apk + c * aqk;
        }
        for (let k = 0; k < 4; k++) {
          const vkp = V[k][p];
          const vkq = V[k][q];
          V[k][p] = c * vkp - s * vkq;
          V[k][q] = s * vkp + c * vkq;
        }
      }
    }
  }
  let best = 0;
  for (let i = 1; i < 4; i++) if (A[i][i] > A[best][best]) best = i;
  return [V[0][best], V[1][best], V[2][best], V[3][best]];
}

// Rotation matrix of unit quaternion [x, y, z, w].
export function quatToMatrix([x, y, z, w]) {
  return [
    [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
    [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
    [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
  ];
}

// Yaw, pitch, roll (radians) of R = Ry(yaw) · Rx(pitch) · Rz(roll).
export function matrixToYawPitchRoll(R) {
  return {
    yaw: Math.atan2(R[0][2], R[2][2]),
    pitch: Math.asin(Math.max(-1, Math.min(1, -R[1][2]))),
    roll: Math.atan2(R[1][0], R[1][1]),
  };
}

export const DEFAULT_FOV_Y = 63; // degrees

// landmarks: Face Mesh's list (or any object indexed by landmark number) of {x, y, z};
// width, height: the image's, pixels. Returns {ok: true, q, yaw, pitch, roll, position
// (m, world axes, from the camera to the head's centre), depthM, residualCm} or
// {ok: false, reason}.
export function solveHeadPose(landmarks, { width, height, fovY = DEFAULT_FOV_Y, maxResidualCm = 2 } = {}) {
  if (!landmarks || !(width > 0) || !(height > 0)) return { ok: false, reason: 'no landmarks' };
  const f = height / 2 / Math.tan((fovY * Math.PI) / 360);
  const cx = width / 2;
  const cy = height / 2;
  const P = [];
  const M = [];
  for (const i of FACE_INDICES) {
    const l = landmarks[i];
    if (!l || !Number.isFinite(l.x) || !Number.isFinite(l.y) || !Number.isFinite(l.z)) return { ok: false, reason: `landmark ${i} missing` };
    const k = 1 + (l.z * width) / f;
    // camera (x right, y down, z forward) -> ours (x right, y up, z toward the viewer)
    P.push([((l.x * width - cx) / f) * k, -((l.y * height - cy) / f) * k, -k]);
    M.push(FACE_POINTS[i]);
  }
  const n = P.length;
  const mc = [0, 0, 0];
  const pc = [0, 0, 0];
  for (let i = 0; i < n; i++) for (let a = 0; a < 3; a++) { mc[a] += M[i][a] / n; pc[a] += P[i][a] / n; }
  const S = [[0, 0, 0], [0, 0, 0], [0, 0, 0]];
  let mm = 0;
  for (let i = 0; i < n; i++) {
    for (let a = 0; a < 3; a++) {
      mm += (M[i][a] - mc[a]) ** 2;
      for (let b = 0; b < 3; b++) S[a][b] += (M[i][a] - mc[a]) * (P[i][b] - pc[b]);
    }
  }
  const [[xx, xy, xz], [yx, yy, yz], [zx, zy, zz]] = S;
  const N = [
    [xx + yy + zz, yz - zy, zx - xz, xy - yx],
    [yz - zy, xx - yy - zz, xy + yx, zx + xz],
    [zx - xz, xy + yx, -xx + yy - zz, yz + zy],
    [xy - yx, zx + xz, yz + zy, -xx - yy + zz],
  ];
  const [w, x, y, z] = topEigenvector(N);
  const norm = Math.hypot(w, x, y, z);
  let q = [x / norm, y / norm, z / norm, w / norm];
  if (q[3] < 0) q = q.map((v) => -v);
  const R = quatToMatrix(q);
  const rot = (v) => [0, 1, 2].map((r) => R[r][0] * v[0] + R[r][1] * v[1] + R[r][2] * v[2]);
  let proj = 0;
  for (let i = 0; i < n; i++) {
    const rm = rot([M[i][0] - mc[0], M[i][1] - mc[1], M[i][2] - mc[2]]);
    for (let a = 0; a < 3; a++) proj += rm[a] * (P[i][a] - pc[a]);
  }
  const s = proj / mm;
  if (!(s > 0) || !Number.isFinite(s)) return { ok: false, reason: 'degenerate fit' };
  const rmc = rot(mc);
  const t = [0, 1, 2].map((a) => pc[a] - s * rmc[a]);
  let err = 0;
  for (let i = 0; i < n; i++) {
    const rm = rot(M[i]);
    for (let a = 0; a < 3; a++) err += (P[i][a] - (s * rm[a] + t[a])) ** 2;
  }
  const residualCm = Math.sqrt(err / n) / s;
  const position = t.map((v) => v / s / 100);
  if (!(residualCm <= maxResidualCm)) return { ok: false, reason: 'not a face', residualCm };
  if (!(position[2] < 0)) return { ok: false, reason: 'behind the camera', residualCm };
  return { ok: true, q, ...matrixToYawPitchRoll(R), position, depthM: -position[2], residualCm };
}
