// Shared by the avatar page's browser tests (avatar.test.mjs, avatar-sample.test.mjs): the
// room as an independent WebSocket subscriber decodes it (proto's JS decoder, no page
// code), and the comparison of the page's bones with those points, tick by tick.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeMessage, encodeMessage, StrandDecoder } from '../../proto/js/ponytail-proto.mjs';
import { Daemon, launchChromium, sleep, WAIT_MS } from './harness.mjs';

export const TOL_M = 1e-3;
export const FRAMES = 60;

// The room as the wire carries it: tick -> id -> flat points.
export class Subscriber {
  static async open(url, room) {
    const s = new Subscriber();
    s.decoders = new Map();
    s.frames = new Map();
    s.lastSeq = new Map(); // id -> the newest head pose's seq the server applied
    s.ws = new WebSocket(url, 'ponytail.v1');
    s.ws.binaryType = 'arraybuffer';
    s.ws.addEventListener('message', (e) => s.onMessage(decodeMessage(new Uint8Array(e.data))));
    await new Promise((res, rej) => {
      s.ws.addEventListener('open', res, { once: true });
      s.ws.addEventListener('error', () => rej(new Error('websocket did not open')), { once: true });
    });
    s.ws.send(encodeMessage({ type: 'hello', major: 1, minor: 0, client_name: 'avatar-test' }));
    s.ws.send(encodeMessage({ type: 'subscribe', room, ids: [] }));
    return s;
  }

  onMessage(m) {
    if (m.type === 'instance_event') {
      if (m.kind === 'removed') this.decoders.delete(m.instance_id.toString());
      else this.decoders.set(m.instance_id.toString(), new StrandDecoder(m.shape));
    } else if (m.type === 'frame_batch') {
      const tick = Number(m.tick);
      for (const rec of m.records) {
        const dec = this.decoders.get(rec.id.toString());
        if (!dec) continue;
        const pts = dec.apply(m.tick, rec);
        if (!this.frames.has(tick)) this.frames.set(tick, new Map());
        this.frames.get(tick).set(rec.id.toString(), pts);
        this.lastSeq.set(rec.id.toString(), rec.last_seq);
      }
    }
  }

  close() { try { this.ws.close(); } catch {} }
}

// Every bone of the page's log for `key` against the subscriber's points of the same tick:
// the ticks both have, the largest distance on them, the bones compared per frame, how
// far the tips moved over them, and the largest root shift the page reported (how far it
// had to move a chain's root off its parent's place to meet the server's point 0).
export function compare(log, sub, key) {
  const mine = log.filter((e) => e.key === key).sort((a, b) => a.tick - b.tick);
  const both = [];
  for (const e of mine) {
    const pts = sub.frames.get(e.tick)?.get(key);
    if (pts) both.push({ e, pts });
  }
  let worst = 0, bones = 0, tipTravel = 0, rootShift = 0;
  const tip0 = [];
  for (const { e, pts } of both) {
    let off = 0, n = 0;
    e.bones.forEach((strand, s) => {
      strand.forEach((b, i) => {
        if (!b) return; // a point without a bone (the 0.x virtual tail)
        const k = (off + i) * 3;
        worst = Math.max(worst, Math.hypot(b[0] - pts[k], b[1] - pts[k + 1], b[2] - pts[k + 2]));
        n++;
      });
      const t = strand[strand.length - 1] ?? strand[strand.length - 2];
      if (t) {
        tip0[s] ??= t;
        tipTravel = Math.max(tipTravel, Math.hypot(t[0] - tip0[s][0], t[1] - tip0[s][1], t[2] - tip0[s][2]));
      }
      off += strand.length;
    });
    bones = n;
    rootShift = Math.max(rootShift, e.rootShift ?? 0);
  }
  return { run: both.length, worst, bones, tipTravel, rootShift };
}

// Gathers the page's log for `key` until FRAMES ticks are seen by both the page and the
// subscriber (a viewer that falls behind is sent the newest tick, so which ticks, and how
// soon they come, is the machine's speed: up to WAIT_MS), then asserts every bone within
// TOL_M of the server's point on each of them and that the tips moved (else the
// comparison would prove nothing).
export async function checkRun(page, sub, key, what) {
  await page.evaluate(() => window.ptAvatar.takeLog()); // from now on
  const log = [];
  let r;
  for (const end = Date.now() + WAIT_MS; ;) {
    await sleep(500); // the page keeps 2000 log entries: taken every half second
    log.push(...(await page.evaluate(() => window.ptAvatar.takeLog())));
    r = compare(log, sub, key);
    if ((r.run >= FRAMES && r.tipTravel > 0.02) || Date.now() > end) break;
  }
  console.log(`${what}: ${r.run} frames matched, ${r.bones} bones each, worst ${(r.worst * 1000).toFixed(4)} mm, tips moved up to ${(r.tipTravel * 100).toFixed(1)} cm, roots moved up to ${(r.rootShift * 1000).toFixed(1)} mm off their parents' place`);
  assert.ok(r.run >= FRAMES, `${what}: only ${r.run} frames seen by both the page and the subscriber`);
  assert.ok(r.worst <= TOL_M, `${what}: a bone is ${(r.worst * 1000).toFixed(3)} mm from the server's point`);
  assert.ok(r.tipTravel > 0.02, `${what}: the chains hardly moved (${r.tipTravel} m): the comparison would prove nothing`);
  return r;
}

// What both avatar-page tests start with: a daemon in PT_WEB_TMP (or a fresh directory
// named after `name`), Chromium at 800 x 600 with every request to anywhere but the daemon
// kept in `foreign`, and a subscriber of `room`. close() ends them in reverse order.
export async function avatarRoom(name, room) {
  const tmp = process.env.PT_WEB_TMP || fs.mkdtempSync(path.join(os.tmpdir(), `pt-${name}-`));
  const r = { foreign: [], daemon: new Daemon(path.join(tmp, 'data'), path.join(tmp, 'ponytaild.log')) };
  r.close = async () => {
    r.sub?.close();
    await r.context?.close();
    await r.daemon.stop();
  };
  try {
    await r.daemon.start();
    r.context = await launchChromium(path.join(tmp, 'profile'), { width: 800, height: 600 });
    r.context.on('request', (q) => {
      if (!q.url().startsWith(r.daemon.base) && !q.url().startsWith(r.daemon.wsUrl)) r.foreign.push(q.url());
    });
    r.sub = await Subscriber.open(`${r.daemon.wsUrl}/`, room);
  } catch (e) {
    // the caller gets no room to close: what started must not hold the run until its timeout
    await r.close().catch(() => {});
    throw e;
  }
  return r;
}
