// A lock of thin follower hairs around each guide strand, for the 3D view: a few guide
// strands on the wire look like a full ponytail. The mass-spring article's scheme
// ("3.4 渲染优化"): one base hair of 20 vertices along a curve, drawn as N instances, each
// deformed from the guide's curve by its own few parameters, with a little noise near the
// tip for split ends. Here the page has no WebGL pipeline, so the "vertex shader" below
// runs in JavaScript and the hairs are stroked on the 2D canvas; the structure is the
// article's: a per-strand table of instance attributes made once, and per frame only the
// guide's curve changes.
//
// Instance attributes (hairInstances): where the hair sits in the lock's cross-section
// (angle, radius as a fraction of the lock's), how long it is (a fraction of the guide, so
// the tip is wispy rather than blunt), a shade, and whether and where it splits: a split
// hair forks into two branches over its last 10 to 20 %.
//
// Vertex shader (lockHairs): vertex k of hair j is the guide's point at arc fraction
// u = len_j · k / 19, pushed out along the guide's normal frame (carried along the curve
// from the head's x axis at the root, so it twists with the head and the hair, not with
// the view) by the lock's radius profile at u: gathered at the tie, fullest at 40 %, thin
// again at the tip.

export const HAIRS_PER_STRAND = 36;
export const HAIR_VERTICES = 20;
const SPLIT_M = 0.004; // how far the two branches of a split end part, at the very tip
const STRIDE = 6; // angle, radius, length, shade, split start, split direction

// Deterministic per-instance attributes for one strand (seed: any integer).
export function hairInstances(seed, n = HAIRS_PER_STRAND) {
  let s = (seed >>> 0) % 2147483646 + 1;
  const rnd = () => ((s = (s * 16807) % 2147483647) - 1) / 2147483646;
  const a = new Float32Array(n * STRIDE);
  for (let j = 0; j < n; j++) {
    const o = j * STRIDE;
    a[o] = ((j + rnd() * 0.8) / n) * 2 * Math.PI; // spread evenly round the lock
    a[o + 1] = Math.sqrt(0.15 + 0.85 * rnd()); // uniform over the disc, none on the axis
    a[o + 2] = 0.72 + 0.28 * rnd();
    a[o + 3] = rnd() * 2 - 1;
    a[o + 4] = j % 3 === 0 ? 0.8 + 0.1 * rnd() : 2; // every third hair splits
    a[o + 5] = rnd() * 2 * Math.PI;
  }
  return a;
}

// The lock's radius at arc fraction u, as a fraction of its largest.
export const lockProfile = (u) => 0.3 + 0.7 * Math.sin(Math.PI * Math.min(1, u * 1.25)) ** 0.6 * (1 - 0.35 * u);

const sub = (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
const dot = (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
const cross = (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
const norm = (a) => {
  const l = Math.hypot(a[0], a[1], a[2]);
  return l > 1e-12 ? [a[0] / l, a[1] / l, a[2] / l] : null;
};

// The guide curve's samples with arc fractions and a normal frame (t, n, b) at each.
function frameAlong(curve, refX) {
  const m = curve.length;
  const len = [0];
  for (let i = 1; i < m; i++) len.push(len[i - 1] + Math.hypot(...sub(curve[i], curve[i - 1])));
  const total = len[m - 1] || 1;
  const out = [];
  let n = null;
  for (let i = 0; i < m; i++) {
    const t = norm(sub(curve[Math.min(m - 1, i + 1)], curve[Math.max(0, i - 1)])) ?? [0, -1, 0];
    // Gram-Schmidt of the previous normal against the new tangent: the frame turns with the
    // curve and does not spin about it (a rotation-minimising frame, to first order).
    let cand = n ?? refX;
    cand = norm(sub(cand, t.map((v) => v * dot(cand, t)))) ?? norm(cross(t, [0, 0, 1])) ?? [1, 0, 0];
    n = cand;
    out.push({ p: curve[i], u: len[i] / total, t, n, b: cross(t, n) });
  }
  return { frames: out, total };
}

// The guide's point and frame at arc fraction u (linear between samples; i0 is a search
// start, since callers walk u upwards).
function at(frames, u, i0) {
  let i = i0;
  while (i < frames.length - 2 && frames[i + 1].u < u) i++;
  const a = frames[i];
  const b = frames[Math.min(frames.length - 1, i + 1)];
  const w = b.u > a.u ? Math.min(1, Math.max(0, (u - a.u) / (b.u - a.u))) : 0;
  const mix = (x, y) => [x[0] + (y[0] - x[0]) * w, x[1] + (y[1] - x[1]) * w, x[2] + (y[2] - x[2]) * w];
  return { i, p: mix(a.p, b.p), n: mix(a.n, b.n), b: mix(a.b, b.b) };
}

// The follower hairs of one guide: curve = its world samples root first (render.mjs's
// guideCurve), refX = the head's x axis in the world, attrs = hairInstances(), radiusM = the
// lock's largest radius. Returns polylines ([[x, y, z], ...], HAIR_VERTICES each; a split
// hair gives two, the second starting where it forks) with their shade: [{pts, shade}].
export function lockHairs(curve, refX, attrs, radiusM) {
  if (curve.length < 2) return [];
  const { frames } = frameAlong(curve, refX);
  const out = [];
  const n = attrs.length / STRIDE;
  for (let j = 0; j < n; j++) {
    const o = j * STRIDE;
    const [ang, rad, length, shade, splitAt, splitDir] = attrs.subarray(o, o + STRIDE);
    const c = Math.cos(ang) * rad;
    const s = Math.sin(ang) * rad;
    const main = [];
    const branch = [];
    let i = 0;
    for (let k = 0; k < HAIR_VERTICES; k++) {
      const f = k / (HAIR_VERTICES - 1);
      const u = length * f;
      const g = at(frames, u, i);
      i = g.i;
      const r = radiusM * lockProfile(u);
      const base = [0, 1, 2].map((d) => g.p[d] + (g.n[d] * c + g.b[d] * s) * r);
      if (f < splitAt) {
        main.push(base);
        continue;
      }
      // Past the fork: the two branches part along a direction of their own, growing as
      // the square of the distance past the fork.
      if (!branch.length) branch.push(main[main.length - 1]);
      const e = ((f - splitAt) / (1 - splitAt)) ** 2 * SPLIT_M;
      const dx = Math.cos(splitDir) * e;
      const dy = Math.sin(splitDir) * e;
      main.push([0, 1, 2].map((d) => base[d] + g.n[d] * dx + g.b[d] * dy));
      branch.push([0, 1, 2].map((d) => base[d] - g.n[d] * dx - g.b[d] * dy));
    }
    out.push({ pts: main, shade });
    if (branch.length > 1) out.push({ pts: branch, shade, split: true });
  }
  return out;
}
