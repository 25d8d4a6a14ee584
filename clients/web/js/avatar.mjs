// The avatar page (avatar.html): it opens on the sample avatar (sample/sample.vrm, made
// by the project's own generator) or on a .vrm opened or dropped on it; the daemon imports
// its spring bones (POST /v1/import/vrm, the importer of `ponytail import-vrm`), the page
// creates the instance (POST /v1/instances) and stores the file with it
// (PUT /v1/instances/{id}/avatar); then the mouse (or the webcam) turns the head, the page
// publishes head poses, and every avatar of the room -- the visitor's own and everyone
// else's, each fetched from GET /v1/instances/{id}/avatar -- is drawn from the server's
// frames: head and chest from the frame's head pose, every spring chain's bones from its
// points (avatar-rig.mjs). three-vrm's own spring bones never run. A new file replaces
// the own avatar (its instance is deleted).
//
// view=stream draws the room's avatars only, on a transparent background, with no
// controls, at width x height: an OBS browser source. The parameters: avatar-params.mjs.

import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { VRMLoaderPlugin, VRMUtils } from '@pixiv/three-vrm';
import { AvatarRig } from './avatar-rig.mjs';
import { CameraControl } from './camera.mjs';
import { api, ApiError, Link } from './net.mjs';
import { clamp, DEG, quatFromYawPitchRoll, quatMul } from './math.mjs';
import { avatarParams, SAMPLE_URL } from './avatar-params.mjs';

const params = avatarParams(location.search);
const { room, demo, stream } = params;
const $ = (id) => document.getElementById(id);
const statusEl = $('status');

function status(text, state = '') {
  statusEl.textContent = text;
  statusEl.dataset.state = state;
  if (stream && state === 'error') console.warn(text);
}

// The stream view: no controls at all (the header goes), the stage at the URL's size.
if (stream) {
  document.body.classList.add('stream');
  $('controls').remove();
  const stage = $('stage');
  if (params.width) stage.style.width = `${params.width}px`;
  if (params.height) stage.style.height = `${params.height}px`;
}
if (params.errors.length) {
  const p = document.createElement('p');
  p.id = 'param-errors';
  p.setAttribute('role', 'alert');
  p.textContent = `avatar.html: ${params.errors.join('; ')}`;
  document.body.append(p);
  console.warn(p.textContent);
}

// ---- three.js scene -------------------------------------------------------------------

const stage = $('stage');
const scene = new THREE.Scene();
if (!stream) scene.background = new THREE.Color(0x20232a); // the stream's stays clear
scene.add(new THREE.AmbientLight(0xffffff, 1.2));
const sun = new THREE.DirectionalLight(0xffffff, 2);
sun.position.set(1, 2, 3);
scene.add(sun);
if (!stream) scene.add(new THREE.GridHelper(6, 12, 0x555a66, 0x3a3e48));
const camera = new THREE.PerspectiveCamera(35, 1, 0.05, 50);
camera.position.set(0, 1.0, 3.6); // a whole body, 1.8 m tall, in view
camera.lookAt(0, 0.9, 0);
let renderer = null;
try {
  renderer = new THREE.WebGLRenderer({ antialias: true, alpha: stream });
  if (stream) renderer.setClearColor(0x000000, 0);
  // the stream's canvas has exactly the URL's pixels (what OBS captures)
  renderer.setPixelRatio(stream ? 1 : Math.min(devicePixelRatio, 2));
  stage.append(renderer.domElement);
} catch (e) {
  status(`no WebGL here (${e.message}): the avatars are posed but not drawn`, 'error');
}
function resize() {
  const w = stage.clientWidth || 640, h = stage.clientHeight || 480;
  camera.aspect = w / h;
  camera.updateProjectionMatrix();
  renderer?.setSize(w, h, false);
}
addEventListener('resize', resize);
resize();

// ---- the room's avatars ------------------------------------------------------------------

const link = new Link({ location, wsOverride: params.ws, clientName: 'ponytail-avatar', minor: 4 });
const avatars = new Map(); // key -> {key, rig, latest, tick, gone}
const localFiles = new Map(); // key -> bytes of an avatar this page uploaded
let own = null; // {key, token, name, sample, warnings, seqFrom}: the avatar this page steers
const probeLog = []; // [{key, tick, bones}] after each applied frame (the browser test)

async function loadVrm(bytes) {
  const loader = new GLTFLoader();
  loader.register((parser) => new VRMLoaderPlugin(parser));
  const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const gltf = await loader.parseAsync(buf, '');
  const vrm = gltf.userData.vrm;
  if (!vrm) throw new Error('not a VRM file (no VRM extension)');
  if (vrm.meta?.metaVersion === '0') VRMUtils.rotateVRM0(vrm);
  vrm.scene.traverse((o) => { o.frustumCulled = false; });
  return { vrm, gltf };
}

async function fetchBytes(path) {
  const res = await fetch(path, { cache: 'no-store' });
  if (!res.ok) {
    let body = null;
    try { body = await res.json(); } catch {}
    throw new ApiError(res.status, body);
  }
  return new Uint8Array(await res.arrayBuffer());
}

// An instance of the room appeared: its bones, then its avatar file (which may follow
// the instance by a moment when its owner is still uploading it).
async function addAvatar(key) {
  if (avatars.has(key)) return;
  const a = { key, rig: null, latest: null, tick: -1, gone: false };
  avatars.set(key, a);
  for (let attempt = 0; attempt < 20 && !a.gone; attempt++) {
    try {
      const inst = await api('GET', `/v1/instances/${key}`);
      const bytes = localFiles.get(key) ?? (inst.avatar ? await fetchBytes(inst.avatar.url) : null);
      if (!bytes || !inst.bones) {
        await new Promise((r) => setTimeout(r, 500));
        continue;
      }
      const { vrm, gltf } = await loadVrm(bytes);
      if (a.gone) return;
      a.rig = new AvatarRig(vrm, gltf, inst.bones);
      scene.add(vrm.scene);
      if (a.rig.problems.length) console.warn(`instance ${key}:`, a.rig.problems.join('; '));
      if (key === own?.key) status(`${own.name} (instance ${key}): ${a.rig.order.length} chains driven by the server${own.warnings ? `; ${own.warnings} import warnings (console)` : ''}${a.rig.problems.length ? ` (${a.rig.problems[0]})` : ''}`, 'ok');
      return;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404 && e.field === 'id') break; // deleted
      if (!(e instanceof ApiError)) {
        console.warn(`instance ${key}: ${e.message}`);
        if (key === own?.key) status(`cannot show the avatar: ${e.message}`, 'error');
        return;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

function removeAvatar(key) {
  const a = avatars.get(key);
  if (!a) return;
  a.gone = true;
  if (a.rig) {
    scene.remove(a.rig.root);
    VRMUtils.deepDispose(a.rig.root);
  }
  avatars.delete(key);
}

link.addEventListener('event', (ev) => {
  const m = ev.detail;
  if (m.kind === 'removed') removeAvatar(m.key);
  else if (m.room === undefined || m.room === room) addAvatar(m.key);
});
link.addEventListener('frames', (ev) => {
  for (const r of ev.detail.records) {
    const a = avatars.get(r.key);
    if (!a) continue;
    a.latest = r;
    a.tick = ev.detail.tick;
    // An adopted avatar (after a reload): the server drops poses older than the newest it
    // applied (PROTOCOL.md head_pose), and this page's link counts from 1: go on from there.
    if (r.key === own?.key && own.seqFrom === undefined) {
      own.seqFrom = r.lastSeq;
      if (r.lastSeq > link.seq) link.seq = r.lastSeq;
    }
    if (!a.rig) continue;
    a.rig.apply(r);
    if (probeLog.length < 2000) probeLog.push({ key: r.key, tick: Number(ev.detail.tick), bones: a.rig.bonePositions(), rootShift: a.rig.rootShift });
  }
});
link.addEventListener('state', (ev) => {
  if (ev.detail.state !== 'open' && !own) status(`server: ${ev.detail.state} ${ev.detail.detail}`);
});

// ---- the visitor's own avatar ------------------------------------------------------------

async function upload(method, path, bytes, token) {
  const headers = { 'Content-Type': 'model/gltf-binary' };
  if (token) headers.Authorization = `Bearer ${token}`;
  const res = await fetch(path, { method, headers, body: bytes });
  const text = await res.text();
  let json = null;
  try { json = text ? JSON.parse(text) : null; } catch {}
  if (!res.ok) throw new ApiError(res.status, json);
  return json;
}

// A name of at most 63 bytes of UTF-8, cut at a character.
function shortName(s) {
  const enc = new TextEncoder();
  while (enc.encode(s).length > 63) s = s.slice(0, -1);
  return s || 'avatar';
}

// The own avatar, one at a time: the tab keeps {key, token, name, sample} in
// sessionStorage (a reload adopts it); a new file replaces it, and the sample's instance
// goes when the page does.
const STORE_KEY = `ponytail-avatar:${room}`;
let ownQueue = Promise.resolve();

function setOwn(o) {
  own = o;
  if (o) {
    link.authorize(o.key, o.token);
    sessionStorage.setItem(STORE_KEY, JSON.stringify(o));
  } else sessionStorage.removeItem(STORE_KEY);
}

async function dropOwn(old) {
  if (!old) return;
  removeAvatar(old.key);
  localFiles.delete(old.key);
  try {
    await api('DELETE', `/v1/instances/${old.key}`, { token: old.token });
  } catch (e) {
    if (!(e instanceof ApiError && e.status === 404)) console.warn(`could not delete instance ${old.key}: ${e.message}`);
  }
}

async function openBytes(bytes, fileName, sample = false) {
  try {
    status(`importing ${fileName} (${(bytes.length / 1e6).toFixed(1)} MB)…`);
    const imp = await upload('POST', '/v1/import/vrm', bytes);
    const def = { ...imp.definition, room, name: shortName(fileName.replace(/\.(vrm|glb)$/i, '')) };
    const c = await api('POST', '/v1/instances', { body: def });
    const key = String(c.id);
    localFiles.set(key, bytes);
    const old = own;
    const warnings = imp.report?.warnings ?? [];
    setOwn({ key, token: c.token, name: def.name, sample, warnings: warnings.length, seqFrom: 0 }); // a new instance: no pose yet
    await upload('PUT', `/v1/instances/${key}/avatar`, bytes, c.token);
    await dropOwn(old);
    if (!avatars.get(key)?.rig) status(`instance ${key} created: ${def.strands.length} strands${warnings.length ? `; ${warnings.length} import warnings (console)` : ''}`, 'ok');
    if (warnings.length) console.warn('import-vrm:', warnings.join('\n'));
    addAvatar(key);
  } catch (e) {
    status(`${fileName}: ${e instanceof ApiError ? `${e.field ? `${e.field}: ` : ''}${e.message}` : e.message}`, 'error');
  }
}

function openFile(file) {
  ownQueue = ownQueue.then(async () => openBytes(new Uint8Array(await file.arrayBuffer()), file.name));
  return ownQueue;
}

// On open: the tab's own avatar again after a reload, else (create=1, sample=1) the sample.
async function startOwn() {
  if (!params.create) {
    status('watching the room; open or drop a .vrm to add your own avatar');
    return;
  }
  let stored = null;
  try {
    stored = JSON.parse(sessionStorage.getItem(STORE_KEY) || 'null');
  } catch {}
  if (stored?.key && stored.token) {
    try {
      const inst = await api('GET', `/v1/instances/${stored.key}`);
      if (inst.room === room && inst.avatar) {
        setOwn({ key: stored.key, token: stored.token, name: stored.name, sample: !!stored.sample, warnings: stored.warnings ?? 0 });
        addAvatar(stored.key);
        return;
      }
    } catch {}
    setOwn(null);
  }
  if (!params.sample) {
    status('open or drop a .vrm: the server imports its spring bones and moves every chain');
    return;
  }
  ownQueue = ownQueue.then(async () => {
    status('opening the sample avatar…');
    try {
      await openBytes(await fetchBytes(SAMPLE_URL), 'sample.vrm', true);
    } catch (e) {
      status(`the sample avatar (${SAMPLE_URL}): ${e.message}`, 'error');
    }
  });
}

addEventListener('pagehide', () => {
  if (!own?.sample) return;
  fetch(`/v1/instances/${own.key}`, { method: 'DELETE', keepalive: true, headers: { Authorization: `Bearer ${own.token}` } });
  sessionStorage.removeItem(STORE_KEY);
});

if (!stream) {
  $('vrm-file').addEventListener('change', (ev) => {
    const f = ev.target.files?.[0];
    if (f) openFile(f);
  });
  // a .vrm dropped anywhere on the page
  addEventListener('dragover', (ev) => {
    ev.preventDefault();
    if (ev.dataTransfer) ev.dataTransfer.dropEffect = 'copy';
  });
  addEventListener('drop', (ev) => {
    ev.preventDefault();
    const files = [...(ev.dataTransfer?.files ?? [])];
    const f = files.find((x) => /\.(vrm|glb)$/i.test(x.name)) ?? files[0];
    if (f) openFile(f);
  });
}

// The head: the mouse over the stage (yaw and pitch), the webcam when it sees a face, or
// with ?demo=1 a sweep. Published at 60 Hz while the own avatar is shown.
const cam = stream ? null : new CameraControl({ button: $('btn-camera'), status: $('cam-status'), video: $('cam-video') });
const mouse = { yaw: 0, pitch: 0 };
stage.addEventListener('pointermove', (ev) => {
  const r = stage.getBoundingClientRect();
  mouse.yaw = clamp(((ev.clientX - r.left) / r.width - 0.5) * 2, -1, 1) * 60 * DEG;
  mouse.pitch = clamp(((ev.clientY - r.top) / r.height - 0.5) * 2, -1, 1) * 30 * DEG;
});

function ownPose(t) {
  const a = own && avatars.get(own.key);
  if (!a?.rig) return null;
  const rest = a.rig.restPose();
  const slot = [0, 1, -1, 2, -2][(Number(own.key) + 4) % 5]; // side by side by id, the first in the middle
  const p = [rest.p[0] + slot * 0.8, rest.p[1], rest.p[2]];
  let q;
  const c = cam?.current();
  if (demo) q = quatFromYawPitchRoll(40 * DEG * Math.sin(2 * Math.PI * 0.7 * t), 15 * DEG * Math.sin(2 * Math.PI * 0.45 * t), 0);
  else if (c) {
    q = c.q;
    for (let i = 0; i < 3; i++) p[i] += c.offset[i];
  } else q = quatFromYawPitchRoll(mouse.yaw, mouse.pitch, 0);
  q = quatMul(q, rest.q);
  return { p, q, bones: a.rig.bodyBones(p, q) }; // every body bone the page moves with it
}

const t0 = performance.now();
let lastSent = null; // the last pose published, for the browser test
const firstSeq = new Map(); // own key -> the seq of the first pose this page sent for it
setInterval(() => {
  const pose = ownPose((performance.now() - t0) / 1000);
  if (!pose || !link.open || own.seqFrom === undefined) return;
  const seq = link.sendPose(own.key, pose.p, pose.q, pose.bones);
  if (seq) lastSent = pose;
  if (seq && !firstSeq.has(own.key)) firstSeq.set(own.key, seq);
}, 1000 / 60);

function frame() {
  renderer?.render(scene, camera);
  requestAnimationFrame(frame);
}

if (!stream) $('room-name').textContent = room || '""';
link.setRoom(room);
link.start();
requestAnimationFrame(frame);
startOwn();

// For the browser test (tests/web/avatar.test.mjs) and the curious: the state of the page.
window.ptAvatar = {
  room,
  view: params.view,
  errors: params.errors,
  get own() { return own?.key ?? null; },
  get ownIsSample() { return !!own?.sample; },
  firstSeq: (key) => firstSeq.get(key) ?? 0,
  get shown() { return [...avatars.values()].filter((a) => a.rig).map((a) => a.key); },
  get status() { return statusEl.textContent; },
  get problems() { return [...avatars.values()].flatMap((a) => a.rig?.problems ?? []); },
  names(key) { return avatars.get(key)?.rig?.strands.map((s) => s && s.objs.map((o) => o?.name ?? null)) ?? null; },
  takeLog() { return probeLog.splice(0); },
  get lastPose() { return lastSent; },
  openUrl: async (url) => openFile(new File([await fetchBytes(url)], url.split('/').pop())),
  contextAttributes: () => renderer?.getContext().getContextAttributes() ?? null,
  canvasSize: () => (renderer ? [renderer.domElement.width, renderer.domElement.height] : null),
};
