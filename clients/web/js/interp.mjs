// Render-side interpolation: the server steps at its tick rate (60 Hz), the screen refreshes
// at its own (60, 120, 144 Hz...). Drawing the newest frame as it comes makes motion judder
// on a faster screen (a frame shown for 2 or 3 refreshes in turn) and on any screen when
// frames arrive unevenly. Instead, as the mass-spring article's double buffer does, the page
// keeps the newest frames of each instance and draws the state between two of them at a
// time of its own clock, a little behind the newest: every refresh shows a new, evenly
// spaced state.
//
// Clock. A frame carries the server's time at its tick; the page maps that to its own
// clock with the smallest (arrival - server time) seen, which is the network's least delay
// (jitter only makes frames later), allowed to creep up 2 ms per second so a changed route
// or a drifting clock is followed, and reset after a jump of a second (a restarted daemon).
// It draws at server time now - offset - DELAY_TICKS ticks: 1.5 ticks (25 ms at 60 Hz)
// behind, so the frame after the drawn instant has nearly always arrived (up to half a
// tick, 8 ms, of jitter); later than that it holds the newest state rather than guess
// ahead.

export const DELAY_TICKS = 1.5;
const CREEP_PER_S = 0.002;
const TELEPORT_M = 0.5; // a head jump this large between two frames is drawn as a cut

export class FrameClock {
  constructor() {
    this.offset = null;
    this.lastLocal = 0;
  }

  // A frame of server time serverT (s) arrived at localT (s, this page's clock).
  observe(serverT, localT) {
    const sample = localT - serverT;
    if (this.offset === null || Math.abs(sample - this.offset) > 1) this.offset = sample;
    else this.offset = Math.min(sample, this.offset + CREEP_PER_S * Math.max(0, localT - this.lastLocal));
    this.lastLocal = localT;
  }

  // The server time to draw at localT, for ticks of tickS seconds (null before a frame).
  renderTime(localT, tickS) {
    return this.offset === null ? null : localT - this.offset - DELAY_TICKS * tickS;
  }
}

// Keeps the newest frames, oldest first, each {t, pts, headP, headQ}: the drawn instant,
// 1.5 ticks behind the least delay, lies up to 2 ticks behind the newest frame.
const KEEP = 4;
export function pushFrame(hist, frame) {
  const newer = hist[hist.length - 1];
  if (newer && !(frame.t > newer.t)) {
    hist.length = 0; // time went back: a restarted daemon; start over
  }
  hist.push(frame);
  while (hist.length > KEEP) hist.shift();
  return hist;
}

// The state to draw at server time t: {pts, headP, headQ, alpha} between the two frames
// around t (alpha 0: the earlier, 1: the later); a frame alone when there is nothing to
// interpolate (one frame, a different shape, a teleport, t past the newest or before the
// oldest); null when empty.
export function sampleFrames(hist, t) {
  const last = hist[hist.length - 1];
  if (!last) return null;
  const only = (f, alpha) => ({ pts: f.pts, headP: f.headP, headQ: f.headQ, alpha });
  if (t === null || t >= last.t) return only(last, 1);
  let i = hist.length - 1;
  while (i > 0 && hist[i - 1].t > t) i--;
  if (i === 0) return only(hist[0], 0);
  const a = hist[i - 1];
  const b = hist[i];
  if (a.pts.length !== b.pts.length) return only(b, 1);
  const jump = Math.hypot(b.headP[0] - a.headP[0], b.headP[1] - a.headP[1], b.headP[2] - a.headP[2]);
  if (jump > TELEPORT_M) return only(b, 1);
  const alpha = (t - a.t) / (b.t - a.t);
  const pts = new Float32Array(b.pts.length);
  for (let k = 0; k < pts.length; k++) pts[k] = a.pts[k] + (b.pts[k] - a.pts[k]) * alpha;
  const headP = [0, 1, 2].map((k) => a.headP[k] + (b.headP[k] - a.headP[k]) * alpha);
  // Normalised linear interpolation of the rotation, along the shorter way.
  const s = a.headQ.reduce((acc, v, k) => acc + v * b.headQ[k], 0) < 0 ? -1 : 1;
  const q = [0, 1, 2, 3].map((k) => a.headQ[k] + (s * b.headQ[k] - a.headQ[k]) * alpha);
  const n = Math.hypot(...q);
  return { pts, headP, headQ: q.map((v) => v / n), alpha };
}
