// Touch and wind on the main page (server/README.md "Touch and grabs", "Room wind").
//
// HandControl: with "Hand" on, the pointer over the front or side view is the right hand
// of this page's own instance. The page publishes it with every head pose as the body
// bone right_hand (protocol 1.2 bones), and the daemon makes it a collider on every other
// instance of the room that grants this instance touch: the hair it passes through is
// pushed, for every viewer alike. A press grabs the nearest hair point of another
// instance within the hand's reach (POST /v1/instances/{id}/grabs with this page's
// token); the point then follows the hand until the button is released (DELETE). The hand's depth (the coordinate the
// view does not show) is that of the nearest hair point under the pointer, kept while a
// button is held; with none near, the own head's.
//
// WindControl: the panel's "Room wind" sets the room's wind (PUT /v1/rooms/{room}/wind,
// one global zone) with this page's token, and shows the room's wind as the daemon has it.

import { ApiError, api } from './net.mjs';
import { DEG, add, scale } from './math.mjs';
import { strandsOf } from './render.mjs';

export const RIGHT_HAND = 23; // the bone id of right_hand (proto/PROTOCOL.md, pt_bone)
const NEAR_PX = 60; // a hair point this near the pointer gives the hand its depth
const PICK_PX = 14; // a press this near a hair point grabs it (at least)
const HAND_RADIUS_M = 0.05; // the daemon's default hand sphere (server/README.md)

// The world point under canvas pixel (x, y) of an orthographic view, at depth `depth`
// along the view's toward-the-viewer axis (View.project's third value).
export function viewPoint(view, x, y, depth) {
  const { rect } = view;
  const cx = rect.x + rect.w / 2;
  const cy = rect.y + rect.h / 2;
  const p = add(view.center, scale(view.right, (x - cx) / view.ppm));
  return add(add(p, scale(view.up, -(y - cy) / view.ppm)), scale(view.toViewer, depth));
}

// The hair point of an instance other than `ownKey` nearest to canvas pixel (x, y) in
// `view`: {key, id, strand, point, depth, px} or null. Roots (point 0) hang from their
// anchor and are not taken.
export function nearestPoint(view, instances, ownKey, x, y) {
  let best = null;
  for (const inst of instances) {
    if (inst.key === ownKey || !inst.pts) continue;
    strandsOf(inst).forEach((pts, s) => {
      for (let k = 1; k < pts.length; k++) {
        const pr = view.project(pts[k]);
        if (!pr) continue;
        const px = Math.hypot(pr[0] - x, pr[1] - y);
        if (!best || px < best.px) best = { key: inst.key, id: inst.id, strand: s, point: k, depth: pr[2], px };
      }
    });
  }
  return best;
}

export class HandControl {
  // app: the page (its own instance, instances, note()); button: the Hand toggle.
  constructor(app, button) {
    this.app = app;
    this.button = button;
    this.on = false;
    this.p = null; // the hand's world position, null while not over a view
    this.held = null; // {view, depth} while a button is down
    this.grab = null; // {key, id} of the grab in place
    this.grabs = 0; // grabs made (for tests)
    this.presses = 0; // presses the hand took (for tests)
    this.tries = 0; // grab requests sent (for tests)
  }

  bind() {
    this.button.addEventListener('click', () => this.toggle(!this.on));
  }

  toggle(on) {
    this.on = on;
    this.button.setAttribute('aria-pressed', String(on));
    this.app.canvas.classList.toggle('hand', on);
    if (!on) {
      this.p = null;
      this.release();
    }
  }

  // The bones to publish with the next head pose: the hand while it is over a view.
  bones() {
    return this.on && this.p ? [{ bone: RIGHT_HAND, p: this.p, q: [0, 0, 0, 1] }] : null;
  }

  // Pointer over (x, y) of `view` (front or side): where the hand is.
  move(view, x, y) {
    if (!this.on || view.kind === 'orbit') return;
    let depth = this.held?.view === view ? this.held.depth : null;
    if (depth === null) {
      const near = nearestPoint(view, this.app.instances.values(), this.app.own?.key, x, y);
      if (near && near.px < NEAR_PX) depth = near.depth;
      else {
        const own = this.app.own && this.app.instances.get(this.app.own.key);
        depth = own?.headP ? view.project(own.headP)[2] : 0;
      }
    }
    this.p = viewPoint(view, x, y, depth);
  }

  // Draws the hand (a ring of the daemon's default hand radius) where it is in `view`.
  draw(ctx, view) {
    if (!this.p) return;
    const pr = view.project(this.p);
    if (!pr) return;
    ctx.save();
    ctx.beginPath();
    ctx.arc(pr[0], pr[1], Math.max(3, HAND_RADIUS_M * pr[3]), 0, 2 * Math.PI);
    ctx.strokeStyle = this.grab ? '#f5a623' : '#4a90d9';
    ctx.lineWidth = 2;
    ctx.stroke();
    ctx.restore();
  }

  // A press at (x, y): grabs the hair point under it, if any. Returns true when the hand
  // takes the press (Hand on, a front or side view).
  down(view, x, y) {
    if (!this.on || view.kind === 'orbit' || !this.app.own) return false;
    this.presses++;
    const near = nearestPoint(view, this.app.instances.values(), this.app.own.key, x, y);
    this.held = { view, depth: near && near.px < NEAR_PX ? near.depth : 0 };
    this.move(view, x, y);
    // the hand pushes the hair it hovers over out of itself: a press takes the nearest
    // point within the hand's reach (its radius and 1 cm more), not only under the pointer
    if (near && near.px < Math.max(PICK_PX, (HAND_RADIUS_M + 0.01) * view.ppm)) this.take(near);
    return true;
  }

  up() {
    this.held = null;
    this.release();
  }

  // POST the grab. A press that came with no hover before it (a touch screen), or before
  // the hover's first pose reached the daemon, finds it without a fresh pose of the hand
  // (409 naming bone): asked again every 100 ms while the button is held, for up to 3 s.
  async take(near) {
    const own = this.app.own;
    const post = () => api('POST', `/v1/instances/${near.key}/grabs`, {
      token: own.token,
      body: { by: Number(own.key), strand: near.strand, point: near.point, bone: 'right_hand' },
    });
    try {
      let g = null;
      for (let tries = 0; !g; tries++) {
        try {
          this.tries++;
          g = await post();
        } catch (e) {
          if (!(e instanceof ApiError && e.status === 409 && e.field === 'bone' && tries < 30 && this.held)) throw e;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      if (!this.held) { // released before the answer came
        this.drop(near.key, g.id);
        return;
      }
      this.grab = { key: near.key, id: g.id };
      this.grabs++;
    } catch (e) {
      const why = e instanceof ApiError && e.status === 403 ? 'does not let you grab it' : e.message;
      this.app.note(`instance #${near.key} ${why}`);
    }
  }

  release() {
    if (!this.grab) return;
    const { key, id } = this.grab;
    this.grab = null;
    this.drop(key, id);
  }

  async drop(key, id) {
    try {
      await api('DELETE', `/v1/instances/${key}/grabs/${id}`, { token: this.app.own?.token });
    } catch (e) {
      // 404: the grab had ended already (the owner took the grant away, or left)
      if (!(e instanceof ApiError && e.status === 404)) this.app.note(`release failed: ${e.message}`);
    }
  }
}

export class WindControl {
  // app: the page (room, own token, note()); el: {strength, direction, turbulence, state}.
  constructor(app, el) {
    this.app = app;
    this.el = el;
    this.timer = null;
  }

  bind() {
    for (const k of ['strength', 'direction', 'turbulence']) {
      this.el[k].addEventListener('input', () => {
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.apply(), 150);
      });
    }
  }

  // The zones the controls say: none at strength 0, else one global zone blowing toward
  // `direction` degrees about +Y (0: toward +X, the front view's right).
  zones() {
    const strength = Number(this.el.strength.value);
    if (!(strength > 0)) return [];
    const a = Number(this.el.direction.value) * DEG;
    const direction = [Math.cos(a), 0, -Math.sin(a)].map((v) => Math.round(v * 1e6) / 1e6);
    return [{ type: 'global', direction, strength, turbulence: Number(this.el.turbulence.value), seed: 1 }];
  }

  async apply() {
    const room = this.app.room;
    if (!room) return;
    try {
      const w = await api('PUT', `/v1/rooms/${encodeURIComponent(room)}/wind`, {
        token: this.app.own?.token, body: { zones: this.zones() },
      });
      this.show(w);
    } catch (e) {
      this.el.state.textContent = `not set: ${e.message}`;
    }
  }

  // Reads the room's wind (GET) into the controls.
  async load() {
    const room = this.app.room;
    if (!room) return;
    try {
      const w = await api('GET', `/v1/rooms/${encodeURIComponent(room)}/wind`);
      const z = w?.zones?.find((k) => k.type === 'global');
      if (z) {
        this.el.strength.value = z.strength;
        this.el.direction.value = Math.round(Math.atan2(-z.direction[2], z.direction[0]) / DEG + 360) % 360;
        this.el.turbulence.value = z.turbulence ?? 0;
      }
      this.show(w);
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) this.el.state.textContent = `unknown: ${e.message}`;
    }
  }

  show(w) {
    const n = w?.zones?.length ?? 0;
    this.el.state.textContent = n ? `${n} zone${n > 1 ? 's' : ''} blowing` : 'calm';
  }
}
