// GET /v1/instances/{id}/frame answers from the newest published frame without waiting
// for a tick (server/instances.h, frame_ring.h: snapshots). Checked by tick numbers, not
// by timing (issue 37): reads one after another that each waited for the next tick would
// each carry a new tick number, so two reads in a row that carry the same one did not
// wait. At 4 ticks per second that happens at once on any machine that answers a read in
// less than a quarter of a second; the deadline is only there to fail a daemon that waits.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { def, metric, startDaemon, until } from './daemon.mjs';

let d;
before(async () => { d = await startDaemon({ args: ['--tick-hz', '4', '--write-rate', '0'] }); });
after(async () => { await d.cleanup(); });

const SEG = 0.03;
const ANCHOR = [0, 0.06, -0.09];

function rotate(q, v) { /* q = [x, y, z, w] unit: v + 2w(u x v) + 2u x (u x v) */
  const [x, y, z, w] = q;
  const c1 = [y * v[2] - z * v[1], z * v[0] - x * v[2], x * v[1] - y * v[0]];
  const c2 = [y * c1[2] - z * c1[1], z * c1[0] - x * c1[2], x * c1[1] - y * c1[0]];
  return [0, 1, 2].map((i) => v[i] + 2 * w * c1[i] + 2 * c2[i]);
}

test('frame reads after the first answer from the newest published tick, without waiting', async () => {
  const made = await d.req('POST', '/v1/instances', def({ driver: { motion: 'shake', amplitude: 30, period: 0.8 } }));
  assert.equal(made.status, 201, made.text);
  const path = `/v1/instances/${made.json.id}/frame`;
  const first = await d.req('GET', path); /* waits for a tick; asks the sim for snapshots */
  assert.equal(first.status, 200, first.text);
  const ticks0 = await metric(d, 'ponytail_ticks_total');
  /* at least 20 reads, and on until two in a row carry the same tick */
  const frames = [];
  const repeated = () => frames.some((f, i) => i > 0 && f.tick === frames[i - 1].tick);
  await until(async () => {
    const r = await d.req('GET', path);
    assert.equal(r.status, 200, r.text);
    frames.push(r.json);
    return frames.length >= 20 && repeated();
  }, () => `two reads in a row of the same tick: ${frames.length} reads saw ticks ${frames.map((f) => f.tick)}`, 30000, 0);
  const ticks1 = await metric(d, 'ponytail_ticks_total');
  const distinct = new Set(frames.map((f) => f.tick));
  /* the reads saw no tick the daemon did not make, and fewer ticks than there were reads */
  assert.ok(distinct.size <= ticks1 - ticks0 + 1, `${distinct.size} ticks seen, ${ticks1 - ticks0} ticked`);
  assert.ok(distinct.size < frames.length, `${frames.length} reads, ${distinct.size} ticks`);
  /* Ticks never go back, and each frame is the state after its tick. */
  for (let i = 1; i < frames.length; i++) assert.ok(frames[i].tick >= frames[i - 1].tick);
  for (const f of frames) {
    assert.equal(f.id, made.json.id);
    assert.ok(Math.abs(f.t - f.tick / 4) < 1e-9);
    const pts = f.strands[0];
    assert.equal(pts.length, 8);
    /* The root is the anchor carried by the head; every segment keeps its exact length. */
    const root = rotate(f.head.q, ANCHOR).map((v, i) => v + f.head.p[i]);
    for (let i = 0; i < 3; i++) assert.ok(Math.abs(pts[0][i] - root[i]) < 1e-5, `root ${pts[0]} vs ${root}`);
    for (let j = 1; j < pts.length; j++) {
      const len = Math.hypot(...[0, 1, 2].map((i) => pts[j][i] - pts[j - 1][i]));
      assert.ok(Math.abs(len - SEG) < 1e-5, `segment ${j}: ${len}`);
    }
  }
  /* Reads of the same tick share one rendering: byte for byte the same body. */
  const byTick = new Map();
  for (const f of frames) {
    const s = JSON.stringify(f);
    if (byTick.has(f.tick)) assert.equal(byTick.get(f.tick), s);
    byTick.set(f.tick, s);
  }
});

test('an unknown instance is still 404, and a deleted one stops being served', async () => {
  const r = await d.req('GET', '/v1/instances/999999/frame');
  assert.equal(r.status, 404);
  const made = await d.req('POST', '/v1/instances', def());
  const path = `/v1/instances/${made.json.id}/frame`;
  assert.equal((await d.req('GET', path)).status, 200);
  assert.equal((await d.req('GET', path)).status, 200);
  const del = await d.req('DELETE', `/v1/instances/${made.json.id}`, undefined, { Authorization: `Bearer ${made.json.token}` });
  assert.equal(del.status, 204);
  /* DELETE returns after the tick that applied it is published: no snapshot of it is left */
  assert.equal((await d.req('GET', path)).status, 404);
});
