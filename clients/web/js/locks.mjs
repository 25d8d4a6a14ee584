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

// The lock's radius at arc fraction u, as a fraction of its largest; tabulated for the
// per-vertex step.
export const lockProfile = (u) => 0.3 + 0.7 * Math.sin(Math.PI * Math.min(1, u * 1.25)) ** 0.6 * (1 - 0.35 * u);
const PROFILE = Float64Array.from({ length: 257 }, (_, i) => lockProfile(i / 256));
const profileAt = (u) => {
  const x = Math.min(256, Math.max(0, u * 256));
  const i = Math.min(255, x | 0);
  return PROFILE[i] + (PROFILE[i + 1] - PROFILE[i]) * (x - i);
};

// The guide curve's samples with arc fractions and a normal frame: per sample, in one
// Float64Array, p (3), n (3), b (3), u. The normal is the previous one made orthogonal to the
// new tangent (Gram-Schmidt): the frame turns with the curve and does not spin about it (a
// rotation-minimising frame, to first order); it starts from the head's x axis.
const F = 10;
function frameAlong(curve, refX) {
  const m = curve.length;
  const f = new Float64Array(m * F);
  let total = 0;
  for (let i = 1; i < m; i++) {
    const a = curve[i - 1];
    const c = curve[i];
    total += Math.hypot(c[0] - a[0], c[1] - a[1], c[2] - a[2]);
    f[i * F + 9] = total;
  }
  let nx = refX[0];
  let ny = refX[1];
  let nz = refX[2];
  for (let i = 0; i < m; i++) {
    const a = curve[Math.max(0, i - 1)];
    const c = curve[Math.min(m - 1, i + 1)];
    let tx = c[0] - a[0];
    let ty = c[1] - a[1];
    let tz = c[2] - a[2];
    const tl = Math.hypot(tx, ty, tz) || 1;
    tx /= tl;
    ty /= tl;
    tz /= tl;
    const d = nx * tx + ny * ty + nz * tz;
    let mx = nx - d * tx;
    let my = ny - d * ty;
    let mz = nz - d * tz;
    let ml = Math.hypot(mx, my, mz);
    if (ml < 1e-9) { // the reference lies along the tangent: any normal will do
      [mx, my, mz] = Math.abs(tx) < 0.9 ? [0, -tz, ty] : [tz, 0, -tx];
      ml = Math.hypot(mx, my, mz);
    }
    nx = mx / ml;
    ny = my / ml;
    nz = mz / ml;
    const o = i * F;
    f[o] = curve[i][0];
    f[o + 1] = curve[i][1];
    f[o + 2] = curve[i][2];
    f[o + 3] = nx;
    f[o + 4] = ny;
    f[o + 5] = nz;
    f[o + 6] = ty * nz - tz * ny; // b = t x n
    f[o + 7] = tz * nx - tx * nz;
    f[o + 8] = tx * ny - ty * nx;
    f[o + 9] = total > 0 ? f[o + 9] / total : 0;
  }
  return f;
}

// The follower hairs of one guide: curve = its world samples root first (render.mjs's
// guideCurve), refX = the head's x axis in the world, attrs = hairInstances(), radiusM = the
// lock's largest radius. Returns polylines (Float32Array of x, y, z; HAIR_VERTICES points
// each; a split hair gives a second one starting where it forks) with their shade:
// [{pts, shade, split}]. About 60 us per strand (node on this machine).
export function lockHairs(curve, refX, attrs, radiusM) {
  if (curve.length < 2) return [];
  const f = frameAlong(curve, refX);
  const m = curve.length;
  const out = [];
  const n = attrs.length / STRIDE;
  for (let j = 0; j < n; j++) {
    const o = j * STRIDE;
    const c = Math.cos(attrs[o]) * attrs[o + 1];
    const s = Math.sin(attrs[o]) * attrs[o + 1];
    const length = attrs[o + 2];
    const splitAt = attrs[o + 4];
    const cd = Math.cos(attrs[o + 5]);
    const sd = Math.sin(attrs[o + 5]);
    const main = new Float32Array(3 * HAIR_VERTICES);
    const k0 = splitAt < 1 ? Math.max(1, Math.ceil(splitAt * (HAIR_VERTICES - 1))) : HAIR_VERTICES;
    const branch = k0 < HAIR_VERTICES ? new Float32Array(3 * (HAIR_VERTICES - k0 + 1)) : null;
    let i = 0;
    for (let k = 0; k < HAIR_VERTICES; k++) {
      const g = k / (HAIR_VERTICES - 1);
      const u = length * g;
      while (i < m - 2 && f[(i + 1) * F + 9] < u) i++;
      const A = i * F;
      const B = Math.min(m - 1, i + 1) * F;
      const du = f[B + 9] - f[A + 9];
      const w = du > 0 ? Math.min(1, Math.max(0, (u - f[A + 9]) / du)) : 0;
      const r = radiusM * profileAt(u);
      // Past the fork the two branches part along a direction of their own, by the square
      // of the distance past the fork.
      const e = k >= k0 ? ((g - splitAt) / (1 - splitAt)) ** 2 * SPLIT_M : 0;
      for (let d = 0; d < 3; d++) {
        const p = f[A + d] + (f[B + d] - f[A + d]) * w;
        const nn = f[A + 3 + d] + (f[B + 3 + d] - f[A + 3 + d]) * w;
        const bb = f[A + 6 + d] + (f[B + 6 + d] - f[A + 6 + d]) * w;
        const base = p + (nn * c + bb * s) * r;
        const part = (nn * cd + bb * sd) * e;
        main[3 * k + d] = base + part;
        if (branch && k >= k0) branch[3 * (k - k0 + 1) + d] = base - part;
      }
    }
    if (branch) branch.set(main.subarray(3 * (k0 - 1), 3 * k0), 0); // it forks off the hair
    out.push({ pts: main, shade: attrs[o + 3], split: false });
    if (branch) out.push({ pts: branch, shade: attrs[o + 3], split: true });
  }
  return out;
}
