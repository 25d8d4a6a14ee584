// Webcam head tracking: MediaPipe Face Mesh finds the face's landmarks in each camera
// frame, headpose.mjs fits the canonical face to them, One Euro filters smooth the angles
// and position, and the app steers the own head with the result. No face in view (or
// landmarks that do not fit a face): nothing is published from the camera, the status says
// "no face", and the mouse and keys keep steering.
//
// Face Mesh comes from npm (@mediapipe/face_mesh, pinned in clients/web/package.json and
// installed by the build into clients/web/node_modules), and the daemon serves it with the
// page: the script, its WebAssembly and its model load from this origin only.

import { solveHeadPose } from './headpose.mjs';
import { OneEuro } from './oneeuro.mjs';
import { quatFromYawPitchRoll } from './math.mjs';

export const FACE_MESH_DIR = 'node_modules/@mediapipe/face_mesh/';
const LOST_AFTER_S = 0.5; // no fitted face for this long: "no face"

// The part without a browser: Face Mesh results in, a filtered head pose (or none) out.
export class HeadTracker {
  constructor() {
    const angle = { minCutoff: 1.5, beta: 1, dCutoff: 1 }; // see oneeuro.mjs for the lag
    const pos = { minCutoff: 1.5, beta: 10, dCutoff: 1 };
    this.filters = {
      yaw: new OneEuro(angle), pitch: new OneEuro(angle), roll: new OneEuro(angle),
      x: new OneEuro(pos), y: new OneEuro(pos), z: new OneEuro(pos),
    };
    this.neutral = null; // the head's position when tracking began: offsets are from it
    this.lastFaceT = -Infinity;
    this.status = 'no face';
    this.pose = null;
  }

  recentre() {
    this.neutral = null;
  }

  // results: Face Mesh's {multiFaceLandmarks}; width, height: the camera image; t: seconds.
  // Returns the pose to steer with ({yaw, pitch, roll, offset, q}) or null.
  update(results, width, height, t) {
    const lm = results?.multiFaceLandmarks?.[0];
    const fit = lm ? solveHeadPose(lm, { width, height }) : { ok: false, reason: 'no face' };
    if (!fit.ok) {
      this.lastReason = fit.reason;
      if (t - this.lastFaceT > LOST_AFTER_S) {
        this.status = 'no face';
        this.pose = null;
        for (const f of Object.values(this.filters)) f.reset();
      }
      return null;
    }
    this.lastFaceT = t;
    this.status = 'tracking';
    if (!this.neutral) this.neutral = fit.position;
    const F = this.filters;
    const yaw = F.yaw.filter(fit.yaw, t);
    const pitch = F.pitch.filter(fit.pitch, t);
    const roll = F.roll.filter(fit.roll, t);
    const p = [F.x.filter(fit.position[0], t), F.y.filter(fit.position[1], t), F.z.filter(fit.position[2], t)];
    const offset = p.map((v, i) => Math.max(-0.5, Math.min(0.5, v - this.neutral[i])));
    this.pose = { yaw, pitch, roll, offset, q: quatFromYawPitchRoll(yaw, pitch, roll), residualCm: fit.residualCm };
    return this.pose;
  }
}

// Loads face_mesh.js once (it defines window.FaceMesh).
let scriptLoading = null;
function loadFaceMeshScript() {
  scriptLoading ??= new Promise((resolve, reject) => {
    const s = document.createElement('script');
    s.src = FACE_MESH_DIR + 'face_mesh.js';
    s.onload = () => (window.FaceMesh ? resolve(window.FaceMesh) : reject(new Error('face_mesh.js defined no FaceMesh')));
    s.onerror = () => reject(new Error(`cannot load ${s.src} (is clients/web/node_modules installed? make)`));
    document.head.append(s);
  });
  return scriptLoading;
}

// The "camera" control: a toggle button, a status line, a small preview.
export class CameraControl {
  constructor({ button, status, video }) {
    Object.assign(this, { button, statusEl: status, video });
    this.tracker = new HeadTracker();
    this.on = false;
    this.stats = { frames: 0, faces: 0, posesUsed: 0 };
    this.setStatus('camera off');
    button.addEventListener('click', () => (this.on ? this.stop() : this.start()));
  }

  setStatus(text) {
    this.status = text;
    this.statusEl.textContent = text;
    this.statusEl.dataset.state = text.split(/[ :…]/)[0];
  }

  // The pose to steer with now, or null (camera off, no face, or stale).
  current() {
    return this.on && this.tracker.status === 'tracking' ? this.tracker.pose : null;
  }

  async start() {
    if (this.on) return;
    this.on = true;
    this.button.setAttribute('aria-pressed', 'true');
    const run = (this.run = {});
    try {
      this.setStatus('starting camera…');
      if (!navigator.mediaDevices?.getUserMedia) throw new Error('this browser gives no camera access here (a secure origin is needed)');
      const stream = await navigator.mediaDevices.getUserMedia({ video: { width: 640, height: 480 }, audio: false });
      if (this.run !== run) { // switched off while the browser asked: let the camera go
        for (const t of stream.getTracks()) t.stop();
        return;
      }
      this.stream = stream;
      this.video.srcObject = stream;
      this.video.hidden = false;
      await this.video.play();
      this.setStatus('loading face model…');
      if (!this.mesh) {
        const FaceMesh = await loadFaceMeshScript();
        const mesh = new FaceMesh({ locateFile: (file) => FACE_MESH_DIR + file });
        mesh.setOptions({ maxNumFaces: 1, refineLandmarks: false, minDetectionConfidence: 0.5, minTrackingConfidence: 0.5, selfieMode: false });
        mesh.onResults((r) => this.onResults(r));
        await mesh.initialize();
        this.mesh = mesh;
      }
      if (this.run !== run) return;
      this.setStatus('no face');
      this.loop(run);
    } catch (e) {
      if (this.run === run) {
        this.stop();
        this.setStatus(`camera unavailable: ${e.message ?? e}`);
      }
    }
  }

  stop() {
    this.on = false;
    this.run = null;
    this.button.setAttribute('aria-pressed', 'false');
    for (const t of this.stream?.getTracks() ?? []) t.stop();
    this.stream = null;
    this.video.srcObject = null;
    this.video.hidden = true;
    this.tracker = new HeadTracker();
    this.setStatus('camera off');
  }

  async loop(run) {
    while (this.run === run) {
      if (this.video.readyState >= 2) {
        try {
          await this.mesh.send({ image: this.video });
        } catch (e) {
          this.stop();
          this.setStatus(`camera unavailable: ${e.message ?? e}`);
          return;
        }
      }
      await new Promise((r) => requestAnimationFrame(r));
    }
  }

  onResults(r) {
    if (!this.on) return;
    this.stats.frames++;
    const pose = this.tracker.update(r, this.video.videoWidth, this.video.videoHeight, performance.now() / 1000);
    if (r.multiFaceLandmarks?.length) this.stats.faces++;
    if (pose) this.stats.posesUsed++;
    const reason = this.tracker.lastReason && this.tracker.status === 'no face' && r.multiFaceLandmarks?.length ? ` (${this.tracker.lastReason})` : '';
    this.setStatus(this.tracker.status + reason);
  }
}
