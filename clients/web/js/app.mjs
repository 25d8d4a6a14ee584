// The Ponytail thin client: follows one room over the WebSocket, draws every instance in it,
// publishes head poses for the instance it owns, and edits that instance through REST.
//
// URL options: ?room=NAME (else the room of the instance this tab owns, else the first
// room the server lists, else "lobby"); ?ws=PORT or ?ws=ws://host:port/ (else /v1/info);
// ?create=0 (do not create an instance of your own); ?views=front,side,orbit; ?interp=0
// (draw each frame as it arrives instead of interpolating, interp.mjs); ?locks=0 (the 3D
// view draws the guide strands only, not the follower hairs around them);
// #id=ID&token=TOKEN adopts an existing instance (its write token), kept for this tab.

import { ApiError, Link, api } from './net.mjs';
import { DEG, add, clamp, quatFromYawPitchRoll } from './math.mjs';
import { View, layout } from './view.mjs';
import { drawView } from './render.mjs';
import { Panel } from './panel.mjs';
import { ownDefinition } from './definition.mjs';
import { CameraControl } from './camera.mjs';
import { FrameClock, pushFrame, sampleFrames } from './interp.mjs';
import { ReplayControls } from './replay.mjs';
import { HandControl, WindControl } from './touch.mjs';

const $ = (id) => document.getElementById(id);
const STORE_KEY = 'ponytail.own';

class App {
  constructor() {
    const q = new URLSearchParams(location.search);
    const h = new URLSearchParams(location.hash.slice(1));
    this.params = q;
    this.allowCreate = q.get('create') !== '0';
    this.instances = new Map(); // key -> instance being drawn
    this.own = null; // {key, token, room}
    this.ownInfo = null; // GET /v1/instances/{id} of the own instance
    this.link = new Link({ location, wsOverride: q.get('ws'), minor: 4 }); // 1.2+: the hand goes out as a body bone
    this.canvas = $('scene');
    this.ctx = this.canvas.getContext('2d');
    this.views = [];
    this.viewKinds = (q.get('views') || $('view-mode').value).split(',').filter((k) => ['front', 'side', 'orbit'].includes(k));
    if (!this.viewKinds.length) this.viewKinds = ['front', 'side', 'orbit'];
    const mode = $('view-mode');
    if (![...mode.options].some((o) => o.value === this.viewKinds.join(','))) {
      mode.add(new Option(this.viewKinds.join(' + ').replace('orbit', '3D'), this.viewKinds.join(',')));
    }
    mode.value = this.viewKinds.join(',');
    this.orbit = { yaw: 50 * DEG, pitch: 14 * DEG };
    // Head pose the user steers: base position + dragged offset, yaw/pitch/roll.
    this.pose = { base: [0, 1.5, 0], offset: [0, 0, 0], yaw: 0, pitch: 0, roll: 0 };
    this.keys = new Set();
    this.lastPoseSent = 0;
    this.lastPoseKey = '';
    this.framing = null;
    this.clock = new FrameClock(); // server time -> this page's clock, for interpolation
    this.interpolate = q.get('interp') !== '0';
    this.locks = q.get('locks') !== '0';
    this.followersDrawn = 0;
    this.stats = {
      renders: 0, batches: 0, bytes: 0, at: performance.now(), fps: 0, tps: 0, kbs: 0,
      latency: [], latencyMs: null, rtt: null, lastSeq: 0, tick: 0n, frames: 0,
    };
    this.panel = new Panel($('panel'), (patch) => this.patchOwn(patch));
    this.camera = new CameraControl({ button: $('btn-camera'), status: $('cam-status'), video: $('cam-video') });
    this.cameraPublished = 0; // poses sent while the camera steered
    this.replay = new ReplayControls(() => this.room); // instant replay (replay.mjs)
    this.hand = new HandControl(this, $('btn-hand')); // the pointer as a hand (touch.mjs)
    this.wind = new WindControl(this, {
      strength: $('wind-strength'), direction: $('wind-direction'), turbulence: $('wind-turbulence'), state: $('wind-state'),
    });
    this.fromHash = h.get('id') && h.get('token') ? { key: h.get('id'), token: h.get('token') } : null;
    if (this.fromHash) history.replaceState(null, '', location.pathname + location.search);
    this.hooks();
  }

  // ---- start-up ---------------------------------------------------------------------

  async start() {
    this.bindLink();
    this.bindInput();
    this.replay.bind();
    this.hand.bind();
    this.wind.bind();
    requestAnimationFrame((t) => this.frame(t));
    setInterval(() => this.tickStats(), 500);
    setInterval(() => this.link.ping(), 2000);

    let stored = null;
    try {
      stored = JSON.parse(sessionStorage.getItem(STORE_KEY) || 'null');
    } catch {
      stored = null;
    }
    const candidate = this.fromHash ?? stored;
    let room = this.params.get('room');
    if (candidate) {
      const info = await this.tryGet(candidate.key);
      if (info) {
        this.adopt({ key: candidate.key, token: candidate.token, room: info.room, base: candidate.base }, info);
        room ??= info.room;
      } else if (info === null) {
        sessionStorage.removeItem(STORE_KEY);
        this.note(this.fromHash ? `instance ${candidate.key} does not exist` : '');
      }
    }
    if (room === null) room = await this.defaultRoom();
    this.room = room;
    $('room-name').textContent = room || '(none)';
    this.link.setRoom(room);
    if (this.own && this.own.room !== room) this.link.follow(this.own.key);
    this.link.start();
    this.wind.load();
    this.updateButtons();
  }

  async defaultRoom() {
    try {
      const list = await api('GET', '/v1/instances');
      const all = list?.instances ?? [];
      const pick = all.find((i) => i.driven && i.room) ?? all.find((i) => i.room);
      if (pick) return pick.room;
    } catch {
      // the daemon may be restarting: the default room will do
    }
    return 'lobby';
  }

  // GET /v1/instances/{key}: the instance, null when it does not exist, undefined when the
  // daemon cannot be asked.
  async tryGet(key) {
    try {
      return await api('GET', `/v1/instances/${key}`);
    } catch (e) {
      if (e instanceof ApiError && (e.status === 404 || e.status === 400)) return null;
      return undefined;
    }
  }

  // fresh: an instance this page just created (no pose applied yet). Otherwise (a reload,
  // a token) the server drops poses older than the newest it applied (PROTOCOL.md
  // head_pose) while this page's link counts from 1: it publishes once the instance's
  // first frame said where to go on from (onFrames).
  adopt(own, info, fresh = false) {
    this.own = own;
    this.seqFrom = fresh ? 0 : undefined;
    if (Array.isArray(own.base)) this.pose.base = own.base;
    else this.needBase = true; // an instance made elsewhere: steer it from where it is
    sessionStorage.setItem(STORE_KEY, JSON.stringify(own));
    this.link.authorize(own.key, own.token);
    $('own-id').textContent = `#${own.key}`;
    this.ownInfo = info ?? null;
    if (info) this.panel.load(info);
    const inst = this.instances.get(own.key);
    if (inst) inst.own = true;
    this.updateButtons();
    this.note('');
  }

  dropOwn(message) {
    if (this.own) {
      this.link.forget(this.own.key);
      const inst = this.instances.get(this.own.key);
      if (inst) inst.own = false;
    }
    this.own = null;
    this.ownInfo = null;
    sessionStorage.removeItem(STORE_KEY);
    $('own-id').textContent = '';
    this.panel.setEnabled(false);
    this.note(message);
    this.updateButtons();
  }

  // Places a new head beside the others, then creates the instance.
  async createOwn() {
    if (this.creating) return;
    this.creating = true;
    try {
      let x = 0;
      let any = false;
      for (const inst of this.instances.values()) {
        if (!inst.headP) continue;
        x = Math.max(x, inst.headP[0]);
        any = true;
      }
      this.pose.base = [any ? Math.round((x + 0.42) * 100) / 100 : 0, 1.5, 0];
      this.pose.offset = [0, 0, 0];
      const name = `web-${Math.random().toString(36).slice(2, 6)}`;
      const res = await api('POST', '/v1/instances', { body: ownDefinition(this.room, name) });
      const { token, ...info } = res;
      this.adopt({ key: String(res.id), token, room: res.room, base: this.pose.base }, info, true);
      this.note('');
      this.lastPoseKey = '';
    } catch (e) {
      this.note(`could not create an instance: ${e.message}`);
    } finally {
      this.creating = false;
    }
  }

  note(text) {
    let t = text;
    if (!t && !this.own) t = 'You are watching; create an instance to steer a head.';
    if (!t && this.ownInfo?.driven) t = 'Your instance is moved by its head motion; set it to "none" to steer it yourself.';
    $('own-note').textContent = t || '';
  }

  updateButtons() {
    $('btn-new').textContent = this.own ? 'New instance' : 'Create instance';
    $('btn-reset').disabled = !this.own;
    $('btn-delete').disabled = !this.own;
  }

  async patchOwn(patch) {
    if (!this.own) throw new Error('no instance of yours to change');
    const info = await api('PATCH', `/v1/instances/${this.own.key}`, { body: patch, token: this.own.token });
    this.ownInfo = info;
    const inst = this.instances.get(this.own.key);
    if (inst) {
      inst.def = info.definition;
      inst.driven = info.driven;
    }
    this.note('');
    return info;
  }

  // ---- network ------------------------------------------------------------------------

  bindLink() {
    const L = this.link;
    L.addEventListener('state', (e) => {
      const { state, detail } = e.detail;
      $('conn').dataset.state = state;
      const text = { connecting: 'connecting…', open: 'connected', reconnecting: 'reconnecting', closed: 'closed', idle: 'idle' }[state];
      $('conn-text').textContent = detail ? `${text} — ${detail}` : text;
      if (state !== 'open') this.markStale();
    });
    L.addEventListener('welcome', () => this.onWelcome());
    L.addEventListener('event', (e) => this.onInstanceEvent(e.detail));
    L.addEventListener('frames', (e) => this.onFrames(e.detail));
    L.addEventListener('pong', (e) => { this.stats.rtt = e.detail.rtt; });
    L.addEventListener('error', (e) => this.onProtoError(e.detail));
  }

  markStale() {
    for (const inst of this.instances.values()) inst.stale = true;
  }

  async onWelcome() {
    // After a restart the instances come back with their events; drop the ones that do not.
    this.welcomedAt = performance.now();
    if (this.own) {
      const info = await this.tryGet(this.own.key);
      if (info === null) this.dropOwn('your instance is gone (the server no longer has it)');
      else if (info) {
        this.ownInfo = info;
        this.panel.load(info);
      }
    }
    if (!this.own && this.allowCreate && !this.createdOnce) {
      this.createdOnce = true;
      // Wait briefly for the room's first frames so the new head is placed beside them.
      await new Promise((r) => setTimeout(r, 400));
      if (!this.own) await this.createOwn();
    }
  }

  onInstanceEvent(m) {
    const key = m.key;
    if (m.kind === 'removed') {
      this.instances.delete(key);
      if (this.own?.key === key) this.dropOwn('your instance was deleted');
      return;
    }
    let inst = this.instances.get(key);
    if (!inst) {
      inst = { key, id: m.instance_id, pts: null, headP: null, headQ: null, def: null, lastSeq: 0 };
      this.instances.set(key, inst);
    }
    Object.assign(inst, { name: m.name, room: m.room, shape: m.shape, own: this.own?.key === key, stale: false });
    if (m.kind === 'added' || m.kind === 'changed') this.fetchDefinition(inst);
  }

  async fetchDefinition(inst) {
    const info = await this.tryGet(inst.key);
    if (!info) return;
    inst.def = info.definition;
    inst.driven = info.driven;
    if (this.own?.key === inst.key) {
      this.ownInfo = info;
      this.panel.load(info);
    }
  }

  onFrames(f) {
    this.stats.tick = f.tick;
    const tickHz = this.link.welcome?.tick_hz || 60;
    const serverT = f.serverTimeUs !== undefined ? Number(f.serverTimeUs) / 1e6 : Number(f.tick) / tickHz;
    this.clock.observe(serverT, performance.now() / 1000);
    for (const r of f.records) {
      const inst = this.instances.get(r.key);
      if (!inst) continue;
      inst.hist ??= [];
      pushFrame(inst.hist, { t: serverT, pts: r.pts, headP: r.headP, headQ: r.headQ });
      inst.pts = r.pts;
      inst.headP = r.headP;
      inst.headQ = r.headQ;
      inst.stale = false;
      inst.tick = f.tick;
      if (inst.own && this.needBase) {
        this.needBase = false;
        this.pose.base = r.headP.map((v) => Math.round(v * 1000) / 1000);
        this.own.base = this.pose.base;
        sessionStorage.setItem(STORE_KEY, JSON.stringify(this.own));
      }
      if (inst.own && this.seqFrom === undefined) {
        this.seqFrom = r.lastSeq;
        if (r.lastSeq > this.link.seq) this.link.seq = r.lastSeq;
      }
      if (inst.own && r.lastSeq !== inst.lastSeq) {
        const ms = this.link.latencyOf(r.lastSeq);
        if (ms !== null) this.stats.latency.push(ms);
      }
      inst.lastSeq = r.lastSeq;
    }
    this.stats.frames++;
  }

  onProtoError(m) {
    const names = { 5: 'unauthorized', 6: 'not found', 7: 'limit', 8: 'rate' };
    const what = names[m.code] ?? `error ${m.code}`;
    if (m.code === 5 && this.own && m.key === this.own.key) {
      this.dropOwn(`the server refused your token (${m.text})`);
      return;
    }
    if (m.code === 8) return; // a dropped pose; the next one follows
    this.note(`server: ${what}${m.text ? ` — ${m.text}` : ''}`);
  }

  // ---- input --------------------------------------------------------------------------

  bindInput() {
    const c = this.canvas;
    let drag = null;
    c.addEventListener('contextmenu', (e) => e.preventDefault());
    c.addEventListener('pointerdown', (e) => {
      const { x, y } = this.canvasPoint(e);
      const view = this.views.find((v) => v.contains(x, y));
      if (!view) return;
      c.focus();
      const turn = e.button === 2 || e.shiftKey;
      const own = this.own && this.instances.get(this.own.key);
      let mode;
      if (!turn && this.hand.down(view, x, y)) mode = 'hand';
      else if (turn && this.own) mode = 'turn';
      else if (view.kind === 'orbit' && !(own && this.hitsHead(view, own, x, y))) mode = 'orbit';
      else if (this.own) mode = 'move';
      else if (view.kind === 'orbit') mode = 'orbit';
      else return;
      drag = { mode, view, x, y, id: e.pointerId };
      c.setPointerCapture(e.pointerId);
      c.classList.add('dragging');
      e.preventDefault();
    });
    c.addEventListener('pointermove', (e) => {
      const { x, y } = this.canvasPoint(e);
      const over = drag?.view ?? this.views.find((v) => v.contains(x, y));
      if (over) this.hand.move(over, x, y);
      if (!drag || e.pointerId !== drag.id || drag.mode === 'hand') return;
      const dx = x - drag.x;
      const dy = y - drag.y;
      drag.x = x;
      drag.y = y;
      if (drag.mode === 'move') {
        const at = add(this.pose.base, this.pose.offset);
        const d = drag.view.unproject(dx, dy, at);
        this.pose.offset = this.pose.offset.map((v, i) => clamp(v + d[i], -1.2, 1.2));
      } else if (drag.mode === 'turn') {
        this.pose.yaw = clamp(this.pose.yaw + dx * 0.6 * DEG, -170 * DEG, 170 * DEG);
        this.pose.pitch = clamp(this.pose.pitch + dy * 0.5 * DEG, -70 * DEG, 70 * DEG);
      } else {
        this.orbit.yaw -= dx * 0.5 * DEG;
        this.orbit.pitch = clamp(this.orbit.pitch + dy * 0.4 * DEG, -80 * DEG, 85 * DEG);
      }
    });
    const end = (e) => {
      if (!drag || e.pointerId !== drag.id) return;
      if (drag.mode === 'hand') this.hand.up();
      drag = null;
      c.classList.remove('dragging');
    };
    c.addEventListener('pointerup', end);
    c.addEventListener('pointercancel', end);
    c.addEventListener('pointerleave', () => { if (!drag) this.hand.p = null; });
    c.addEventListener('wheel', (e) => {
      const { x, y } = this.canvasPoint(e);
      const view = this.views.find((v) => v.contains(x, y));
      if (!view) return;
      e.preventDefault();
      view.zoom = clamp(view.zoom * Math.exp(-e.deltaY * 0.0015), 0.3, 6);
    }, { passive: false });
    const typing = (e) => e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement;
    window.addEventListener('keydown', (e) => {
      if (typing(e) || e.ctrlKey || e.metaKey || e.altKey) return;
      const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
      if (['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', 'q', 'e'].includes(k)) {
        this.keys.add(k);
        e.preventDefault();
      } else if (k === 'r' || k === 'Home') {
        Object.assign(this.pose, { offset: [0, 0, 0], yaw: 0, pitch: 0, roll: 0 });
        this.camera.tracker.recentre();
        e.preventDefault();
      }
    });
    window.addEventListener('keyup', (e) => {
      const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
      this.keys.delete(k);
    });
    window.addEventListener('blur', () => this.keys.clear());
    $('view-mode').addEventListener('change', (e) => {
      this.viewKinds = e.target.value.split(',');
      this.views = [];
    });
    $('btn-new').addEventListener('click', async () => {
      await this.createOwn();
    });
    $('btn-reset').addEventListener('click', async () => {
      if (!this.own) return;
      Object.assign(this.pose, { offset: [0, 0, 0], yaw: 0, pitch: 0, roll: 0 });
      try {
        await api('POST', `/v1/instances/${this.own.key}/reset`, { token: this.own.token });
      } catch (e) {
        this.note(`reset failed: ${e.message}`);
      }
    });
    $('btn-delete').addEventListener('click', async () => {
      if (!this.own) return;
      const key = this.own.key;
      try {
        await api('DELETE', `/v1/instances/${key}`, { token: this.own.token });
        this.instances.delete(key);
        this.dropOwn('deleted; create a new one to steer a head again');
      } catch (e) {
        this.note(`delete failed: ${e.message}`);
      }
    });
  }

  canvasPoint(e) {
    const r = this.canvas.getBoundingClientRect();
    return { x: (e.clientX - r.left) * this.dpr, y: (e.clientY - r.top) * this.dpr };
  }

  hitsHead(view, inst, x, y) {
    if (!inst.headP) return false;
    const p = view.project(inst.headP);
    return p && Math.hypot(p[0] - x, p[1] - y) < 0.14 * p[3];
  }

  // Turns held keys into rotation (degrees per second) and publishes the pose.
  steer(dt) {
    const rate = 110 * DEG * dt;
    const P = this.pose;
    if (this.keys.has('ArrowLeft')) P.yaw += rate;
    if (this.keys.has('ArrowRight')) P.yaw -= rate;
    if (this.keys.has('ArrowUp')) P.pitch -= rate;
    if (this.keys.has('ArrowDown')) P.pitch += rate;
    if (this.keys.has('q')) P.roll += rate;
    if (this.keys.has('e')) P.roll -= rate;
    // The camera steers while it sees a face; otherwise the pose stays where it was left
    // and the mouse and keys steer it.
    const cam = this.camera.current();
    if (cam) Object.assign(P, { yaw: cam.yaw, pitch: cam.pitch, roll: cam.roll, offset: cam.offset });
    P.yaw = clamp(P.yaw, -170 * DEG, 170 * DEG);
    P.pitch = clamp(P.pitch, -70 * DEG, 70 * DEG);
    P.roll = clamp(P.roll, -50 * DEG, 50 * DEG);
    if (!this.own || !this.link.open || this.seqFrom === undefined) return;
    if (this.instances.get(this.own.key)?.driven || this.ownInfo?.driven) return;
    const p = add(P.base, P.offset);
    const q = quatFromYawPitchRoll(P.yaw, P.pitch, P.roll);
    const bones = this.hand.bones();
    const key = p.concat(q, bones ? bones[0].p : []).map((v) => v.toFixed(5)).join(',');
    const now = performance.now();
    // New poses as they change (at most ~120/s, under the server's 240/s), and the same
    // pose again every 250 ms so the latency figure stays current; with the hand out,
    // every 50 ms, well inside the time the daemon holds a hand (touch.mjs).
    const every = bones ? 50 : 250;
    if ((key !== this.lastPoseKey && now - this.lastPoseSent >= 8) || now - this.lastPoseSent > every) {
      const seq = this.link.sendPose(this.own.key, p, q, bones);
      if (seq) {
        this.firstSeq ??= seq;
        this.lastPoseKey = key;
        this.lastPoseSent = now;
        if (cam) this.cameraPublished++;
      }
    }
  }

  // ---- drawing ------------------------------------------------------------------------

  resize() {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(1, Math.round(this.canvas.clientWidth * dpr));
    const h = Math.max(1, Math.round(this.canvas.clientHeight * dpr));
    if (this.canvas.width !== w || this.canvas.height !== h || this.dpr !== dpr || !this.views.length) {
      this.canvas.width = w;
      this.canvas.height = h;
      this.dpr = dpr;
      const old = new Map(this.views.map((v) => [v.kind, v]));
      this.views = layout(this.viewKinds, w, h, Math.round(6 * dpr)).map(({ kind, rect }) => {
        const v = old.get(kind) ?? new View(kind, rect);
        v.rect = rect;
        return v;
      });
    }
  }

  // What the cameras keep in sight: every head (own: its base position, not the dragged
  // offset, so a drag moves the head and not the camera), smoothed over half a second.
  frameScene(dt) {
    let lo = null;
    let hi = null;
    for (const inst of this.instances.values()) {
      if (!inst.headP) continue;
      const p = inst.own ? this.pose.base : inst.headP;
      lo = lo ? lo.map((v, i) => Math.min(v, p[i])) : [...p];
      hi = hi ? hi.map((v, i) => Math.max(v, p[i])) : [...p];
    }
    if (!lo) {
      lo = this.framing?.lo ?? [0, 1.5, 0];
      hi = this.framing?.hi ?? [0, 1.5, 0];
    }
    if (!this.framing) this.framing = { lo, hi };
    const a = 1 - Math.exp(-dt / 0.5);
    this.framing.lo = this.framing.lo.map((v, i) => v + (lo[i] - v) * a);
    this.framing.hi = this.framing.hi.map((v, i) => v + (hi[i] - v) * a);
  }

  frame(t) {
    const dt = this.lastT ? Math.min((t - this.lastT) / 1000, 0.1) : 1 / 60;
    this.lastT = t;
    this.steer(dt);
    this.resize();
    this.frameScene(dt);
    const ctx = this.ctx;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    // Each instance as it was at one instant of the server's clock, between its two newest
    // frames (interp.mjs); inst itself keeps the newest frame.
    const at = this.clock.renderTime(t / 1000, 1 / (this.link.welcome?.tick_hz || 60));
    let list;
    if (this.replay.player) { /* the room as its recording had it */
      list = this.replay.advance(dt);
    } else {
      list = [...this.instances.values()].map((inst) => {
        const s = this.interpolate && inst.hist ? sampleFrames(inst.hist, at) : null;
        return s ? { ...inst, pts: s.pts, headP: s.headP, headQ: s.headQ } : inst;
      });
    }
    for (const v of this.views) {
      v.lo = this.framing.lo;
      v.hi = this.framing.hi;
      if (v.kind === 'orbit') Object.assign(v, { yaw: this.orbit.yaw, pitch: this.orbit.pitch });
      v.update();
      const f = drawView(ctx, v, list, { locks: this.locks });
      this.hand.draw(ctx, v);
      if (v.kind === 'orbit') this.followersDrawn = f;
    }
    this.stats.renders++;
    requestAnimationFrame((tt) => this.frame(tt));
  }

  tickStats() {
    const s = this.stats;
    const now = performance.now();
    const dt = (now - s.at) / 1000;
    if (dt <= 0) return;
    s.fps = s.renders / dt;
    s.tps = (this.link.batches - s.batches) / dt;
    s.kbs = (this.link.bytesIn - s.bytes) / dt / 1000;
    s.renders = 0;
    s.batches = this.link.batches;
    s.bytes = this.link.bytesIn;
    s.at = now;
    if (s.latency.length) {
      const sorted = [...s.latency].sort((a, b) => a - b);
      s.latencyMs = sorted[Math.floor(sorted.length / 2)];
      s.latency = [];
    }
    $('st-fps').textContent = s.fps.toFixed(0);
    $('st-tps').textContent = this.link.open ? s.tps.toFixed(0) : '–';
    $('st-lat').textContent = s.latencyMs === null ? '–' : `${s.latencyMs.toFixed(1)} ms`;
    $('st-rtt').textContent = s.rtt === null ? '–' : `${s.rtt.toFixed(1)} ms`;
    $('st-kbs').textContent = `${s.kbs.toFixed(1)} kB/s`;
    $('st-n').textContent = String(this.instances.size);
    if (!this.own && !$('own-note').textContent) this.note('');
  }

  // A read-only view of the state for tests and the console (window.ponytail).
  hooks() {
    const app = this;
    window.ponytail = {
      app,
      get state() { return app.link.state; },
      get own() { return app.own ? { key: app.own.key, room: app.own.room } : null; },
      get tick() { return Number(app.stats.tick); },
      get stats() {
        const s = app.stats;
        return { fps: s.fps, tps: s.tps, kbs: s.kbs, latencyMs: s.latencyMs, rtt: s.rtt, frames: s.frames, decodeErrors: app.link.decodeErrors, followers: app.followersDrawn };
      },
      // Points of an instance as [[x, y, z], ...] (all strands, flattened), or null.
      points(key) {
        const inst = app.instances.get(String(key));
        if (!inst?.pts) return null;
        const out = [];
        for (let i = 0; i < inst.pts.length; i += 3) out.push([inst.pts[i], inst.pts[i + 1], inst.pts[i + 2]]);
        return out;
      },
      instances() {
        return [...app.instances.values()].map((i) => ({ key: i.key, name: i.name, room: i.room, own: !!i.own, hasFrame: !!i.pts, driven: !!i.driven, hasDef: !!i.def }));
      },
      // Canvas pixel position (CSS px, relative to the page) of a world point in a view.
      screenOf(kind, p) {
        const v = app.views.find((x) => x.kind === kind);
        const pr = v?.project(p);
        if (!pr) return null;
        const r = app.canvas.getBoundingClientRect();
        return { x: r.left + pr[0] / app.dpr, y: r.top + pr[1] / app.dpr };
      },
      // The pointer hand: where it is, the grab it holds, grabs made.
      get hand() { const h = app.hand; return { on: h.on, p: h.p, grab: h.grab, grabs: h.grabs, presses: h.presses, tries: h.tries }; },
      // The camera control: its status line, frames and faces seen, poses published.
      get camera() {
        const c = app.camera;
        return { on: c.on, status: c.status, ...c.stats, published: app.cameraPublished };
      },
      // The seq of the first pose this page load published (null before it).
      get firstSeq() { return app.firstSeq ?? null; },
      // The instant replay being shown: null when live.
      get replay() {
        const p = app.replay.player;
        if (!p) return null;
        return { length: p.length, index: p.index, tick: p.frame?.tick ?? null, playing: p.playing, room: p.room,
          keys: (p.frame?.instances ?? []).map((i) => i.key) };
      },
      replayPoints(key) {
        const i = app.replay.player?.frame?.instances.find((x) => x.key === String(key));
        if (!i) return null;
        const out = [];
        for (let k = 0; k < i.pts.length; k += 3) out.push([i.pts[k], i.pts[k + 1], i.pts[k + 2]]);
        return out;
      },
      ownHead() {
        const inst = app.own && app.instances.get(app.own.key);
        return inst?.headP ?? null;
      },
    };
  }
}

const app = new App();
app.start();
