// The One Euro filter (Casiez, Roussel and Vogel, CHI 2012): a first-order low-pass whose
// cut-off rises with the signal's speed, fc = minCutoff + beta · |dx/dt| (the speed itself
// low-passed at dCutoff), so it smooths jitter when still and keeps up when moving.
//
// Lag. A first-order low-pass at fc delays a steadily moving signal by its time constant
// tau = 1 / (2 pi fc), whatever the sampling period (alpha = 1 / (1 + tau / Te)): lagFor()
// below. With the head-pose settings of camera.mjs -- angles: minCutoff 1.5 Hz, beta 1 per
// rad/s; position: minCutoff 1.5 Hz, beta 10 per m/s -- the lag is 106 ms when still (where
// jitter shows), 52 ms for a head turning at 90°/s, 45 ms for one moving at 0.2 m/s.
// tests/web/unit.test.mjs measures it on a ramp.

const alphaOf = (cutoff, dt) => 1 / (1 + 1 / (2 * Math.PI * cutoff * dt));

export class OneEuro {
  constructor({ minCutoff = 1.5, beta = 1, dCutoff = 1 } = {}) {
    Object.assign(this, { minCutoff, beta, dCutoff });
    this.reset();
  }

  reset() {
    this.x = null;
    this.raw = null;
    this.dx = 0;
    this.t = null;
  }

  // The steady lag (s) of a signal moving at `speed` (units per second).
  lagFor(speed) {
    return 1 / (2 * Math.PI * (this.minCutoff + this.beta * Math.abs(speed)));
  }

  // Filters value v sampled at time t (seconds); returns the filtered value.
  filter(v, t) {
    if (this.x === null || !(t > this.t)) {
      if (this.x === null) this.x = this.raw = v;
      this.t = t;
      return this.x;
    }
    const dt = t - this.t;
    this.t = t;
    // The speed from the raw samples (as the authors' C++ does), so a steady motion gets
    // exactly the cut-off, and the lag, that lagFor() states.
    const dxRaw = (v - this.raw) / dt;
    this.raw = v;
    this.dx += alphaOf(this.dCutoff, dt) * (dxRaw - this.dx);
    const cutoff = this.minCutoff + this.beta * Math.abs(this.dx);
    this.x += alphaOf(cutoff, dt) * (v - this.x);
    return this.x;
  }
}
