// Takes the README's picture of the browser client against a real ponytaild:
//
//   make && (cd tests/web && npm ci) && node tests/web/screenshot.mjs [out.png]
//
// (from the repository root; default out: clients/web/screenshot.png). A temporary daemon
// gets the demo instance of `make run` (twin tails moved by "shake") and a nodding
// springbone bot; the page creates its own ponytail, whose head is then dragged and turned
// so the hair is caught mid-swing.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Daemon, ROOT, launchChromium, sleep, until } from './harness.mjs';

const out = path.resolve(process.argv[2] || path.join(ROOT, 'clients/web/screenshot.png'));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ponytail-shot-'));
const daemon = new Daemon(path.join(tmp, 'data'), path.join(tmp, 'ponytaild.log'));
let context;
try {
  await daemon.start();
  const made = await daemon.api('POST', '/v1/instances', {
    name: 'demo', room: 'demo',
    strands: [
      { anchor: [-0.05, 0.06, -0.08], direction: [-0.3, -1, -0.2], points: 14, segment_length: 0.03 },
      { anchor: [0.05, 0.06, -0.08], direction: [0.3, -1, -0.2], points: 14, segment_length: 0.03 },
    ],
    colliders: [
      { shape: 'sphere', attach: 'head', center: [0, 0, 0], radius: 0.1 },
      { shape: 'capsule', attach: 'head', a: [0, -0.08, 0], b: [0, -0.2, 0], radius: 0.05 },
    ],
    driver: { motion: 'shake', amplitude: 30, period: 1.5 },
  });
  if (made.status !== 201) throw new Error(JSON.stringify(made.json));
  await daemon.api('POST', '/v1/instances', {
    name: 'nodder', room: 'demo', solver: 'springbone',
    springbone: { stiffness: 0.3, drag_force: 0.35, gravity_power: 1.5 },
    strands: [
      { anchor: [-0.03, 0.09, -0.07], direction: [-0.2, -0.5, -1], points: 12, segment_length: 0.028 },
      { anchor: [0.03, 0.09, -0.07], direction: [0.2, -0.5, -1], points: 12, segment_length: 0.028 },
    ],
    colliders: [
      { shape: 'ellipsoid', attach: 'head', center: [0, 0, 0], radii: [0.085, 0.1, 0.1] },
      { shape: 'capsule', attach: 'head', a: [0, -0.07, -0.01], b: [0, -0.2, -0.02], radius: 0.045 },
    ],
    driver: { motion: 'nod', amplitude: 25, period: 1.3, position: [-0.42, 1.5, 0] },
  });

  context = await launchChromium(path.join(tmp, 'profile'), { width: 1280, height: 720 });
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`${daemon.base}/?room=demo`);
  await until('own instance frames', () => page.evaluate(() => window.ponytail?.ownHead()));
  await sleep(1500);
  const head = await page.evaluate(() => window.ponytail.ownHead());
  const at = await page.evaluate((h) => window.ponytail.screenOf('side', h), head);
  await page.mouse.move(at.x, at.y);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) {
    await page.mouse.move(at.x - i * 5, at.y - i * 3);
    await sleep(16);
  }
  await page.mouse.up();
  await page.keyboard.down('ArrowLeft');
  await sleep(300);
  await page.keyboard.up('ArrowLeft');
  await sleep(1500); // the overlay's counters settle
  await page.evaluate(() => document.activeElement?.blur());
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  await context?.close().catch(() => {});
  await daemon.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
}
