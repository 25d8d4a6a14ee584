// Cameras: front and side (orthographic) and orbit (perspective). A view maps a world point
// to canvas pixels plus a depth (larger = nearer the viewer) and a local scale (pixels per
// metre at that point), and maps a pixel drag back to a world displacement.

import { add, cross, dot, normalize, scale, sub } from './math.mjs';

export const VIEW_KINDS = Object.freeze(['front', 'side', 'orbit']);

// Fixed cameras: right, up and toward-the-viewer unit vectors.
const ORTHO = {
  // From +Z (in front of the face, which looks along +Z) toward -Z.
  front: { right: [1, 0, 0], up: [0, 1, 0], toViewer: [0, 0, 1], title: 'Front' },
  // From +X (the head's left) toward -X: the face points left, a ponytail right.
  side: { right: [0, 0, -1], up: [0, 1, 0], toViewer: [1, 0, 0], title: 'Side' },
};

export class View {
  // kind: 'front' | 'side' | 'orbit'; rect: {x, y, w, h} in canvas pixels.
  constructor(kind, rect) {
    this.kind = kind;
    this.rect = rect;
    // The world box to keep in sight (set by the app from the heads in the room).
    this.lo = [-0.1, 1.4, -0.1];
    this.hi = [0.1, 1.6, 0.1];
    this.yaw = 35 * Math.PI / 180; // orbit only
    this.pitch = 12 * Math.PI / 180;
    this.zoom = 1;
    this.title = kind === 'orbit' ? '3D orbit' : ORTHO[kind].title;
    this.update();
  }

  // Recomputes the camera from lo/hi (and yaw/pitch for orbit) and zoom. The box is
  // padded by a head and a ponytail's length: 0.3 m sideways, 0.45 m down, 0.25 m up.
  update() {
    const { w, h } = this.rect;
    const lo = [this.lo[0] - 0.3, this.lo[1] - 0.45, this.lo[2] - 0.3];
    const hi = [this.hi[0] + 0.3, this.hi[1] + 0.25, this.hi[2] + 0.3];
    this.center = scale(add(lo, hi), 0.5);
    const span = sub(hi, lo);
    const across = (axis) => Math.abs(axis[0]) * span[0] + Math.abs(axis[1]) * span[1] + Math.abs(axis[2]) * span[2];
    if (this.kind !== 'orbit') {
      Object.assign(this, ORTHO[this.kind]);
      this.ppm = Math.min(w / across(this.right), h / across(this.up)) * this.zoom; // pixels per metre
      return;
    }
    const cp = Math.cos(this.pitch);
    // Unit vector from the target to the eye.
    const back = [Math.sin(this.yaw) * cp, Math.sin(this.pitch), Math.cos(this.yaw) * cp];
    this.toViewer = back;
    this.right = normalize(cross([0, 1, 0], back));
    this.up = cross(back, this.right);
    const tanHalf = Math.tan(20 * Math.PI / 180); // 40 degrees across the smaller side
    this.focal = Math.min(w, h) / 2 / tanHalf;
    const radius = Math.max(span[0], span[1], span[2]) * 0.5;
    const need = Math.max(across(this.right) / w, across(this.up) / h) * this.focal;
    this.distance = Math.max(need * 1.2, radius * 2) / this.zoom;
    this.eye = add(this.center, scale(back, this.distance));
    this.ppm = this.focal / this.distance; // at the target
  }

  // World point -> [sx, sy, depth, ppm] (ppm: pixels per metre there), or null when the
  // point is behind an orbit camera.
  project(p) {
    const { x, y, w, h } = this.rect;
    const cx = x + w / 2;
    const cy = y + h / 2;
    if (this.kind !== 'orbit') {
      const d = sub(p, this.center);
      return [cx + dot(d, this.right) * this.ppm, cy - dot(d, this.up) * this.ppm, dot(d, this.toViewer), this.ppm];
    }
    const d = sub(p, this.eye);
    const z = -dot(d, this.toViewer); // distance in front of the eye
    if (z < 0.05) return null;
    const f = this.focal / z;
    return [cx + dot(d, this.right) * f, cy - dot(d, this.up) * f, -z, f];
  }

  // A pixel drag (dx, dy) made over a point at world position `at` -> world displacement
  // in the view plane through that point.
  unproject(dx, dy, at) {
    let ppm = this.ppm;
    if (this.kind === 'orbit' && at) {
      const pr = this.project(at);
      if (pr) ppm = pr[3];
    }
    return add(scale(this.right, dx / ppm), scale(this.up, -dy / ppm));
  }

  contains(px, py) {
    const r = this.rect;
    return px >= r.x && px < r.x + r.w && py >= r.y && py < r.y + r.h;
  }
}

// Splits the canvas (w x h pixels) into one rect per view kind, left to right, or in a
// grid when the canvas is tall.
export function layout(kinds, w, h, gap = 6) {
  const n = kinds.length;
  if (n === 0) return [];
  const cols = w >= h * 0.9 * n || n === 1 ? n : n === 3 && w > h ? 3 : Math.min(n, 2);
  const rows = Math.ceil(n / cols);
  const cw = (w - gap * (cols - 1)) / cols;
  const ch = (h - gap * (rows - 1)) / rows;
  return kinds.map((k, i) => ({
    kind: k,
    rect: {
      x: Math.round((i % cols) * (cw + gap)),
      y: Math.round(Math.floor(i / cols) * (ch + gap)),
      w: Math.round(cw),
      h: Math.round(ch),
    },
  }));
}
