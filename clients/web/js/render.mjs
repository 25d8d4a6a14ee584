// Drawing one room on a 2D canvas: per view, every instance's head as its collider shapes
// and each strand as a smooth tapered curve (thick at the root, thin at the tip), drawn as
// three layered locks in slightly different shades so a ponytail has body (the technique
// of the original Ponytail plugin: quadratic curves through the midpoints of the chain,
// width falling from root to tip, back layer darker, front layer lighter and translucent).

import {
  add, clamp, cross, dot, eigenSym2, hash32, headToWorld, normalize, rotate, scale, sub,
} from './math.mjs';
import { hairInstances, lockHairs } from './locks.mjs';

// Hair colours as [hue, saturation %, lightness %]; an instance picks one by its id.
const HAIR = [
  [24, 48, 24], // dark brown
  [14, 58, 33], // auburn
  [40, 62, 52], // blonde
  [218, 12, 16], // black
  [20, 70, 40], // copper
  [30, 40, 36], // chestnut
  [330, 52, 58], // dyed pink
  [205, 50, 44], // dyed blue
];
const OWN_HAIR = [12, 66, 38];
const SKIN = [28, 52, 80];

const hsl = (h, s, l, a = 1) => `hsla(${h.toFixed(1)},${s.toFixed(1)}%,${clamp(l, 2, 98).toFixed(1)}%,${a})`;

// Strand appearance (metres): half-widths of the drawn lock at root and tip.
const HALF_ROOT_M = 0.0105;
const HALF_TIP_M = 0.0009;
// The three locks of one strand: relative width, lateral offset (in root half-widths),
// lightness shift and opacity. Back to front.
const LOCKS = [
  { w: 1.0, off: 0.45, dl: -9, a: 1 },
  { w: 0.8, off: -0.4, dl: 0, a: 1 },
  { w: 0.46, off: 0.08, dl: 9, a: 0.82 },
];
const SAMPLES_PER_SEGMENT = 5;

export function hairColour(inst) {
  return inst.own ? OWN_HAIR : HAIR[hash32(inst.key ?? inst.id) % HAIR.length];
}

// The plugin's curve through a strand's points (quadratic Béziers with the chain points as
// controls and their midpoints as joins, root to tip), sampled in world space.
export function guideCurve(pts) {
  const n = pts.length;
  if (n < 2) return n ? [pts[0]] : [];
  const world = [pts[0]];
  if (n === 2) {
    for (let k = 1; k <= SAMPLES_PER_SEGMENT; k++) {
      const t = k / SAMPLES_PER_SEGMENT;
      world.push(add(scale(pts[0], 1 - t), scale(pts[1], t)));
    }
    return world;
  }
  let start = pts[0];
  for (let i = 1; i <= n - 2; i++) {
    const c = pts[i];
    const end = i === n - 2 ? pts[n - 1] : scale(add(pts[i], pts[i + 1]), 0.5);
    for (let k = 1; k <= SAMPLES_PER_SEGMENT; k++) {
      const t = k / SAMPLES_PER_SEGMENT;
      const a = (1 - t) * (1 - t);
      const b = 2 * (1 - t) * t;
      const e = t * t;
      world.push([
        a * start[0] + b * c[0] + e * end[0],
        a * start[1] + b * c[1] + e * end[1],
        a * start[2] + b * c[2] + e * end[2],
      ]);
    }
    start = end;
  }
  return world;
}

// The guide curve projected. Returns {x, y, d, k, u}[]: pixels, depth, pixels per metre,
// arc parameter 0..1.
export function strandSamples(view, pts) {
  if (pts.length < 2) return [];
  const world = guideCurve(pts);
  const out = [];
  let total = 0;
  for (let i = 0; i < world.length; i++) {
    const p = view.project(world[i]);
    if (!p) return [];
    if (i > 0) {
      const d = sub(world[i], world[i - 1]);
      total += Math.sqrt(dot(d, d));
    }
    out.push({ x: p[0], y: p[1], d: p[2], k: p[3], u: total, nx: 0, ny: 0 });
  }
  for (const s of out) s.u = total > 0 ? s.u / total : 0;
  // Screen normals from neighbouring samples (kept from the previous one when the curve
  // points at the viewer and its projection stalls).
  let nx = 1;
  let ny = 0;
  for (let i = 0; i < out.length; i++) {
    const a = out[Math.max(0, i - 1)];
    const b = out[Math.min(out.length - 1, i + 1)];
    const tx = b.x - a.x;
    const ty = b.y - a.y;
    const l = Math.hypot(tx, ty);
    if (l > 1e-6) {
      nx = -ty / l;
      ny = tx / l;
    }
    out[i].nx = nx;
    out[i].ny = ny;
  }
  return out;
}

const halfWidth = (u) => HALF_TIP_M + (HALF_ROOT_M - HALF_TIP_M) * Math.pow(1 - u, 1.15);

// One lock over samples [i0, i1] as a filled outline.
function lockPath(ctx, S, i0, i1, lock) {
  ctx.beginPath();
  for (let i = i0; i <= i1; i++) {
    const s = S[i];
    const hw = Math.max(0.35, halfWidth(s.u) * s.k * lock.w);
    const off = lock.off * HALF_ROOT_M * s.k * 4 * s.u * (1 - s.u);
    const x = s.x + s.nx * (off + hw);
    const y = s.y + s.ny * (off + hw);
    if (i === i0) ctx.moveTo(x, y);
    else ctx.lineTo(x, y);
  }
  for (let i = i1; i >= i0; i--) {
    const s = S[i];
    const hw = Math.max(0.35, halfWidth(s.u) * s.k * lock.w);
    const off = lock.off * HALF_ROOT_M * s.k * 4 * s.u * (1 - s.u);
    ctx.lineTo(s.x + s.nx * (off - hw), s.y + s.ny * (off - hw));
  }
  ctx.closePath();
}

function highlightPath(ctx, S, i0, i1, lock) {
  ctx.beginPath();
  for (let i = i0; i <= i1; i++) {
    const s = S[i];
    const hw = halfWidth(s.u) * s.k * lock.w;
    const off = lock.off * HALF_ROOT_M * s.k * 4 * s.u * (1 - s.u) + 0.35 * hw;
    if (i === i0) ctx.moveTo(s.x + s.nx * off, s.y + s.ny * off);
    else ctx.lineTo(s.x + s.nx * off, s.y + s.ny * off);
  }
}

// Runs of consecutive samples on one side of the head's depth: [{i0, i1, front}]. Adjacent
// runs share their boundary sample so the curve stays continuous.
function runs(S, headDepth) {
  const out = [];
  let i0 = 0;
  for (let i = 1; i <= S.length; i++) {
    const f0 = S[i0].d > headDepth;
    if (i === S.length || (S[i].d > headDepth) !== f0) {
      out.push({ i0, i1: Math.min(i, S.length - 1), front: f0 });
      i0 = i;
    }
  }
  return out.filter((r) => r.i1 > r.i0 || S.length === 1);
}

// World-space collider from a definition entry and the head pose.
function placeCollider(c, headP, headQ) {
  const onHead = (c.attach ?? 'head') === 'head';
  const pt = (v) => (onHead ? headToWorld(headP, headQ, v ?? [0, 0, 0]) : (v ?? [0, 0, 0]));
  const dir = (v) => (onHead ? rotate(headQ, v) : v);
  const out = { shape: c.shape };
  switch (c.shape) {
    case 'sphere':
    case 'inside_sphere':
      out.center = pt(c.center);
      out.axes = [[c.radius, 0, 0], [0, c.radius, 0], [0, 0, c.radius]].map(dir);
      break;
    case 'ellipsoid': {
      const r = c.radii ?? [0.1, 0.1, 0.1];
      out.center = pt(c.center);
      out.axes = [[r[0], 0, 0], [0, r[1], 0], [0, 0, r[2]]].map(dir);
      break;
    }
    case 'capsule':
    case 'inside_capsule':
      out.a = pt(c.a);
      out.b = pt(c.b);
      out.ra = c.radius;
      out.rb = c.radius_b !== undefined && c.radius_b >= 0 ? c.radius_b : c.radius;
      out.center = scale(add(out.a, out.b), 0.5);
      break;
    case 'plane':
      out.center = pt(c.point ?? c.center);
      out.normal = normalize(dir(c.normal ?? [0, 1, 0]));
      break;
    default:
      return null;
  }
  return out;
}

// The projected ellipse of an ellipsoid given by three world semi-axis vectors.
function ellipseOf(view, center, axes) {
  const p = view.project(center);
  if (!p) return null;
  let a = 0;
  let b = 0;
  let c = 0;
  for (const v of axes) {
    const x = dot(v, view.right) * p[3];
    const y = -dot(v, view.up) * p[3];
    a += x * x;
    b += x * y;
    c += y * y;
  }
  const e = eigenSym2(a, b, c);
  return { x: p[0], y: p[1], rx: Math.sqrt(e.l1), ry: Math.sqrt(e.l2), rot: e.angle, d: p[2] };
}

// The outline of a (tapered) capsule: two circles and their outer tangents.
function capsulePath(ctx, A, ra, B, rb) {
  const dx = B[0] - A[0];
  const dy = B[1] - A[1];
  const d = Math.hypot(dx, dy);
  ctx.beginPath();
  if (d < 1e-6 || Math.abs(ra - rb) >= d) {
    const big = ra >= rb ? [A, ra] : [B, rb];
    ctx.arc(big[0][0], big[0][1], Math.max(big[1], 0.5), 0, 2 * Math.PI);
    return;
  }
  const th = Math.atan2(dy, dx);
  const phi = Math.acos(clamp((ra - rb) / d, -1, 1));
  ctx.arc(B[0], B[1], Math.max(rb, 0.5), th - phi, th + phi, false);
  ctx.arc(A[0], A[1], Math.max(ra, 0.5), th + phi, th - phi + 2 * Math.PI, false);
  ctx.closePath();
}

function drawCollider(ctx, view, c, skin, own) {
  const inside = c.shape.startsWith('inside_');
  ctx.lineWidth = own ? 1.6 : 1.1;
  ctx.strokeStyle = hsl(skin[0], skin[1] - 10, skin[2] - 34, 0.9);
  if (inside) ctx.setLineDash([5, 4]);
  if (c.shape === 'capsule' || c.shape === 'inside_capsule') {
    const A = view.project(c.a);
    const B = view.project(c.b);
    if (!A || !B) return;
    capsulePath(ctx, A, c.ra * A[3], B, c.rb * B[3]);
  } else if (c.shape === 'plane') {
    drawPlane(ctx, view, c);
    return;
  } else {
    const e = ellipseOf(view, c.center, c.axes);
    if (!e) return;
    ctx.beginPath();
    ctx.ellipse(e.x, e.y, Math.max(e.rx, 0.5), Math.max(e.ry, 0.5), e.rot, 0, 2 * Math.PI);
    if (!inside) {
      const g = ctx.createRadialGradient(e.x - e.rx * 0.35, e.y - e.ry * 0.4, Math.max(e.rx, e.ry) * 0.1, e.x, e.y, Math.max(e.rx, e.ry) * 1.05);
      g.addColorStop(0, hsl(skin[0], skin[1], skin[2] + 8));
      g.addColorStop(1, hsl(skin[0], skin[1], skin[2] - 14));
      ctx.fillStyle = g;
    }
  }
  if (!inside) {
    if (c.shape !== 'sphere' && c.shape !== 'ellipsoid') ctx.fillStyle = hsl(skin[0], skin[1] - 6, skin[2] - 6);
    ctx.fill();
  }
  ctx.stroke();
  ctx.setLineDash([]);
}

// A world plane as a 1.6 m square patch of grid lines around the point nearest the view.
function drawPlane(ctx, view, c) {
  const n = c.normal;
  const t1 = normalize(Math.abs(n[1]) < 0.9 ? cross(n, [0, 1, 0]) : cross(n, [1, 0, 0]));
  const t2 = cross(n, t1);
  const toC = sub(view.center, c.center);
  const o = sub(view.center, scale(n, dot(toC, n)));
  const half = 0.8;
  ctx.strokeStyle = 'rgba(60,70,90,0.28)';
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (let i = -8; i <= 8; i++) {
    for (const [u, v] of [[t1, t2], [t2, t1]]) {
      const a = view.project(add(add(o, scale(u, (i / 8) * half)), scale(v, -half)));
      const b = view.project(add(add(o, scale(u, (i / 8) * half)), scale(v, half)));
      if (!a || !b) continue;
      ctx.moveTo(a[0], a[1]);
      ctx.lineTo(b[0], b[1]);
    }
  }
  ctx.stroke();
}

// Eyes and mouth on the largest head-attached sphere or ellipsoid (the face looks along
// head-local +Z), drawn only where that side faces the viewer.
function drawFace(ctx, view, head, headP, headQ) {
  const r = head.shape === 'sphere' ? [head.radius, head.radius, head.radius] : head.radii;
  const c = head.center ?? [0, 0, 0];
  const at = (dir) => {
    const u = normalize(dir);
    const local = [c[0] + r[0] * u[0], c[1] + r[1] * u[1], c[2] + r[2] * u[2]];
    const nrm = normalize([u[0] / r[0], u[1] / r[1], u[2] / r[2]]);
    const w = headToWorld(headP, headQ, local);
    const nw = rotate(headQ, nrm);
    const toEye = view.kind === 'orbit' ? normalize(sub(view.eye, w)) : view.toViewer;
    return { p: view.project(w), facing: dot(nw, toEye) };
  };
  ctx.fillStyle = 'rgba(40,30,30,0.85)';
  for (const sx of [-1, 1]) {
    const e = at([0.36 * sx, 0.16, 0.92]);
    if (!e.p || e.facing < 0.08) continue;
    const rr = 0.011 * e.p[3];
    ctx.beginPath();
    ctx.ellipse(e.p[0], e.p[1], rr * Math.max(e.facing, 0.25), rr * 1.25, 0, 0, 2 * Math.PI);
    ctx.fill();
  }
  const m0 = at([-0.22, -0.42, 0.88]);
  const m1 = at([0.22, -0.42, 0.88]);
  const mc = at([0, -0.55, 0.84]);
  if (m0.p && m1.p && mc.p && mc.facing > 0.08) {
    ctx.strokeStyle = 'rgba(120,50,50,0.8)';
    ctx.lineWidth = Math.max(1, 0.005 * mc.p[3]);
    ctx.beginPath();
    ctx.moveTo(m0.p[0], m0.p[1]);
    ctx.quadraticCurveTo(mc.p[0], mc.p[1], m1.p[0], m1.p[1]);
    ctx.stroke();
  }
}

// Hair on the head: the head's outline again, in the hair colour, shifted toward the
// top and back of the head and clipped to the head, so the face shows from the front, the
// hairline from the side and all hair from behind.
function drawHairCap(ctx, view, c, headQ, colour) {
  const e = ellipseOf(view, c.center, c.axes);
  if (!e) return;
  const r = c.main.shape === 'sphere' ? [c.main.radius, c.main.radius, c.main.radius] : c.main.radii;
  const back = dot(rotate(headQ, [0, 0, -1]), view.kind === 'orbit' ? normalize(sub(view.eye, c.center)) : view.toViewer);
  const f = 1 - Math.pow(Math.max(back, 0), 0.6);
  const shift = rotate(headQ, [0, 0.5 * r[1] * f, -0.75 * r[2] * f]);
  const k = view.project(c.center)[3];
  const ox = dot(shift, view.right) * k;
  const oy = -dot(shift, view.up) * k;
  ctx.save();
  ctx.beginPath();
  ctx.ellipse(e.x, e.y, Math.max(e.rx, 0.5), Math.max(e.ry, 0.5), e.rot, 0, 2 * Math.PI);
  ctx.clip();
  const g = ctx.createRadialGradient(e.x + ox - e.rx * 0.3, e.y + oy - e.ry * 0.4, 1, e.x + ox, e.y + oy, Math.max(e.rx, e.ry) * 1.1);
  g.addColorStop(0, hsl(colour[0], colour[1], colour[2] + 10));
  g.addColorStop(1, hsl(colour[0], colour[1], colour[2] - 8));
  ctx.fillStyle = g;
  ctx.beginPath();
  ctx.ellipse(e.x + ox, e.y + oy, e.rx * 1.04, e.ry * 1.04, e.rot, 0, 2 * Math.PI);
  ctx.fill();
  ctx.restore();
  ctx.lineWidth = 1.1;
  ctx.strokeStyle = hsl(colour[0], colour[1], colour[2] - 14, 0.9);
  ctx.beginPath();
  ctx.ellipse(e.x, e.y, Math.max(e.rx, 0.5), Math.max(e.ry, 0.5), e.rot, 0, 2 * Math.PI);
  ctx.stroke();
}

function mainHead(def) {
  let best = null;
  let vol = 0;
  for (const c of def?.colliders ?? []) {
    if ((c.attach ?? 'head') !== 'head') continue;
    let v = 0;
    if (c.shape === 'sphere') v = c.radius ** 3;
    else if (c.shape === 'ellipsoid') v = c.radii[0] * c.radii[1] * c.radii[2];
    if (v > vol) {
      vol = v;
      best = c;
    }
  }
  return best;
}

// Splits an instance's flat point array into per-strand arrays of [x, y, z].
export function strandsOf(inst) {
  const out = [];
  if (!inst.pts || !inst.shape) return out;
  let k = 0;
  for (const s of inst.shape) {
    const a = [];
    for (let i = 0; i < s.points; i++, k++) a.push([inst.pts[3 * k], inst.pts[3 * k + 1], inst.pts[3 * k + 2]]);
    out.push(a);
  }
  return out;
}

function drawHair(ctx, layers, front) {
  for (const L of layers) {
    for (const r of L.runs) {
      if (r.front !== front) continue;
      for (const lock of LOCKS) {
        ctx.fillStyle = hsl(L.colour[0], L.colour[1], L.colour[2] + lock.dl, lock.a);
        lockPath(ctx, L.S, r.i0, r.i1, lock);
        ctx.fill();
      }
      ctx.strokeStyle = hsl(L.colour[0], L.colour[1] - 10, L.colour[2] + 26, 0.35);
      ctx.lineWidth = Math.max(0.6, HALF_ROOT_M * L.S[0].k * 0.25);
      highlightPath(ctx, L.S, r.i0, r.i1, LOCKS[2]);
      ctx.stroke();
    }
    const s0 = L.S[0];
    if ((s0.d > L.headDepth) === front) {
      // The hair tie.
      ctx.fillStyle = hsl(L.colour[0] + 150, 30, 30);
      ctx.beginPath();
      ctx.arc(s0.x, s0.y, Math.max(1.2, HALF_ROOT_M * s0.k * 0.7), 0, 2 * Math.PI);
      ctx.fill();
    }
  }
}

// The follower hairs of every strand (locks.mjs), one path per shade and side of the head,
// thin strokes over the guides' filled locks. Returns the number of hairs drawn.
const LOCK_RADIUS_M = 0.016;
const SHADES = [-12, 0, 10];
const attrCache = new Map(); // "key:strand" -> hairInstances()
function drawFollowers(ctx, view, layers, front) {
  let drawn = 0;
  for (const L of layers) {
    const paths = SHADES.map(() => new Path2D());
    for (const h of L.hairs) {
      const path = paths[h.shade < -0.33 ? 0 : h.shade < 0.33 ? 1 : 2];
      let prev = null;
      let pen = false;
      for (let k = 0; k < h.pts.length; k += 3) {
        const p = view.project([h.pts[k], h.pts[k + 1], h.pts[k + 2]]);
        if (!p) break;
        if (prev && (prev[2] + p[2] > 2 * L.headDepth) === front) {
          if (!pen) path.moveTo(prev[0], prev[1]);
          path.lineTo(p[0], p[1]);
          pen = true;
        } else {
          pen = false;
        }
        prev = p;
      }
      drawn++;
    }
    ctx.lineWidth = Math.max(0.5, 0.0011 * (L.S[0]?.k ?? 100));
    ctx.lineCap = 'round';
    SHADES.forEach((dl, i) => {
      ctx.strokeStyle = hsl(L.colour[0], L.colour[1] + 4, L.colour[2] + dl, 0.9);
      ctx.stroke(paths[i]);
    });
  }
  return drawn;
}

// Draws one instance in one view. inst: {key, own, shape, def, pts, headP, headQ, name}.
// opts.locks: the 3D view draws follower hairs around the guides. Returns the number of
// follower hairs drawn.
export function drawInstance(ctx, view, inst, labels = [], opts = {}) {
  const headP = inst.headP ?? [0, 0, 0];
  const headQ = inst.headQ ?? [0, 0, 0, 1];
  const hp = view.project(headP);
  if (!hp) return;
  const headDepth = hp[2];
  const base = hairColour(inst);
  const strands = strandsOf(inst);
  // Follower hairs only where they can be told apart: a lock at least 4 px across.
  const locks = opts.locks && view.kind === 'orbit' && hp[3] * LOCK_RADIUS_M >= 2;
  const refX = rotate(headQ, [1, 0, 0]);
  const layers = strands.map((pts, i) => {
    const S = strandSamples(view, pts);
    const shift = (i % 2 ? 1 : -1) * Math.min(i, 3) * 2.5;
    let hairs = [];
    if (locks && S.length > 1) {
      const id = `${inst.key}:${i}`;
      if (!attrCache.has(id)) attrCache.set(id, hairInstances(hash32(id)));
      hairs = lockHairs(guideCurve(pts), refX, attrCache.get(id), LOCK_RADIUS_M);
    }
    return { S, runs: S.length ? runs(S, headDepth) : [], headDepth, colour: [base[0] + shift, base[1], base[2] + shift], hairs };
  }).filter((L) => L.S.length > 1);
  let followers = 0;

  const head = mainHead(inst.def);
  const colliders = (inst.def?.colliders ?? []).map((c) => {
    const w = placeCollider(c, headP, headQ);
    if (w && c === head) w.main = c;
    return w;
  }).filter(Boolean);
  const order = { plane: 0, capsule: 1, inside_capsule: 3, inside_sphere: 3, ellipsoid: 2, sphere: 2 };
  const placed = colliders.map((c) => ({ c, d: view.project(c.center)?.[2] ?? -Infinity }));
  // Planes first, then far to near; at equal depth a neck before the head on it.
  const rank = (x) => (order[x.c.shape] === 0 ? 0 : 1);
  placed.sort((x, y) => rank(x) - rank(y) || x.d - y.d || order[x.c.shape] - order[y.c.shape]);

  drawHair(ctx, layers, false);
  if (locks) followers += drawFollowers(ctx, view, layers, false);
  for (const { c } of placed) {
    drawCollider(ctx, view, c, SKIN, inst.own);
    if (c.main) drawHairCap(ctx, view, c, headQ, base);
  }
  if (head) drawFace(ctx, view, head, headP, headQ);
  else if (!colliders.length) {
    // No collider to show the head by: a small dashed marker at the head position.
    ctx.setLineDash([3, 3]);
    ctx.strokeStyle = 'rgba(60,60,80,0.6)';
    ctx.beginPath();
    ctx.arc(hp[0], hp[1], Math.max(3, 0.03 * hp[3]), 0, 2 * Math.PI);
    ctx.stroke();
    ctx.setLineDash([]);
  }
  drawHair(ctx, layers, true);
  if (locks) followers = Math.max(followers, drawFollowers(ctx, view, layers, true));

  const top = view.project(add(headP, [0, 0.17, 0]));
  if (top) {
    ctx.font = `${inst.own ? '600 ' : ''}12px system-ui, sans-serif`;
    ctx.textAlign = 'center';
    ctx.fillStyle = inst.own ? '#7a2e12' : 'rgba(30,35,50,0.75)';
    const label = (inst.name || `#${inst.key}`) + (inst.own ? ' (you)' : inst.driven ? ' · bot' : '');
    const w = ctx.measureText(label).width;
    let y = top[1];
    // Labels of heads that line up in this view are stacked instead of overprinted.
    for (let i = 0; i < 8 && labels.some((b) => Math.abs(b.x - top[0]) < (b.w + w) / 2 && Math.abs(b.y - y) < 14); i++) y -= 15;
    labels.push({ x: top[0], y, w });
    ctx.fillText(label, top[0], y);
  }
  return followers;
}

function drawGrid(ctx, view) {
  const { x, y, w, h } = view.rect;
  if (view.kind === 'orbit') {
    const fy = view.center[1] - 0.55;
    ctx.strokeStyle = 'rgba(70,80,110,0.16)';
    ctx.lineWidth = 1;
    ctx.beginPath();
    const c = [Math.round(view.center[0] * 10) / 10, fy, Math.round(view.center[2] * 10) / 10];
    for (let i = -10; i <= 10; i++) {
      for (const [a, b] of [
        [[c[0] + i / 10, fy, c[2] - 1], [c[0] + i / 10, fy, c[2] + 1]],
        [[c[0] - 1, fy, c[2] + i / 10], [c[0] + 1, fy, c[2] + i / 10]],
      ]) {
        const pa = view.project(a);
        const pb = view.project(b);
        if (!pa || !pb) continue;
        ctx.moveTo(pa[0], pa[1]);
        ctx.lineTo(pb[0], pb[1]);
      }
    }
    ctx.stroke();
    return;
  }
  // 10 cm grid in the view plane.
  const step = 0.1 * view.ppm;
  if (step < 6) return;
  const o = view.project([0, 0, 0]);
  ctx.strokeStyle = 'rgba(70,80,110,0.09)';
  ctx.lineWidth = 1;
  ctx.beginPath();
  const ox = ((o[0] - x) % step + step) % step;
  const oy = ((o[1] - y) % step + step) % step;
  for (let gx = x + ox; gx < x + w; gx += step) {
    ctx.moveTo(Math.round(gx) + 0.5, y);
    ctx.lineTo(Math.round(gx) + 0.5, y + h);
  }
  for (let gy = y + oy; gy < y + h; gy += step) {
    ctx.moveTo(x, Math.round(gy) + 0.5);
    ctx.lineTo(x + w, Math.round(gy) + 0.5);
  }
  ctx.stroke();
}

// Draws a whole view: background, grid, then instances far to near. Returns the number of
// follower hairs drawn (opts.locks, 3D view only).
export function drawView(ctx, view, instances, opts = {}) {
  const { x, y, w, h } = view.rect;
  ctx.save();
  ctx.beginPath();
  ctx.rect(x, y, w, h);
  ctx.clip();
  const g = ctx.createLinearGradient(0, y, 0, y + h);
  g.addColorStop(0, '#f4f1ec');
  g.addColorStop(1, '#e3e6ee');
  ctx.fillStyle = g;
  ctx.fillRect(x, y, w, h);
  drawGrid(ctx, view);
  const list = instances.filter((i) => i.pts && i.headP).map((i) => ({ i, d: view.project(i.headP)?.[2] ?? -Infinity }));
  list.sort((a, b) => a.d - b.d);
  const labels = [];
  let followers = 0;
  for (const { i } of list) followers += drawInstance(ctx, view, i, labels, opts);
  ctx.font = '600 12px system-ui, sans-serif';
  ctx.textAlign = 'left';
  ctx.fillStyle = 'rgba(30,35,50,0.6)';
  ctx.fillText(view.title, x + 8, y + 16);
  ctx.restore();
  return followers;
}
