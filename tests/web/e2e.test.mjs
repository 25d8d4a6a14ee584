// End-to-end test of the browser client (clients/web) against a real ponytaild, in
// Debian's headless Chromium driven by playwright-core. Run by e2e.test.sh (which installs
// playwright-core and checks for /usr/bin/chromium); needs PT_BUILD (the build directory)
// and runs from the repository root.
//
// One daemon on free loopback ports with a temporary --data directory, one room ("e2e")
// with a bot instance moved by the built-in "shake" motion; the page creates its own
// instance in that room. The steps share the page and run in order.
//
// Nothing here depends on the machine's speed (issue 37): what the page must show (frames,
// a moved head, a changed picture, the overlay's counters) is waited for with harness.mjs's
// generous deadline; how fast it comes (frame rates, latency) is not judged.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BUILD, DAEMON, Daemon, launchChromium, sleep, until, WAIT_MS } from './harness.mjs';

const ROOM = 'e2e';

// Canvas statistics computed in the page: a cheap fingerprint, the number of distinct
// colours among sampled pixels, and the pixels themselves (subsampled) for comparisons.
async function canvasSample(page) {
  return page.evaluate(() => {
    const c = document.getElementById('scene');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const colours = new Set();
    const px = [];
    for (let i = 0; i < d.length; i += 4 * 13) {
      colours.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      px.push(d[i], d[i + 1], d[i + 2]);
    }
    return { w: c.width, h: c.height, colours: colours.size, px };
  });
}

function pixelsDiffer(a, b) {
  let n = 0;
  for (let i = 0; i < a.px.length; i++) if (Math.abs(a.px[i] - b.px[i]) > 8) n++;
  return n;
}

// A bound for a hang (the script's is 280 s): about 25 s here alone.
describe('browser client, end to end', { timeout: 270000 }, () => {
  let daemon;
  let tmp;
  let context;
  let page;
  let ownKey;
  let bot;
  let phase = 'load';
  const consoleErrors = []; // {phase, text}
  const pageErrors = [];
  const requests = []; // every URL the browser asked for: {url, status}

  // Console errors a phase may expect: Chromium reports every non-2xx fetch and every
  // refused connection as a console error by itself.
  const expected = {
    invalid: [/status of 422/],
    restart: [/ERR_CONNECTION_REFUSED/, /WebSocket connection to .* failed/, /ERR_CONNECTION_RESET/, /ERR_EMPTY_RESPONSE/],
  };
  const unexpectedErrors = () => consoleErrors.filter((e) => !(expected[e.phase] ?? []).some((re) => re.test(e.text)));

  before(async () => {
    assert.ok(fs.existsSync(DAEMON), `no daemon at ${DAEMON} (build first: make)`);
    // e2e.test.sh makes (and removes) PT_WEB_TMP; run directly, the test makes its own.
    tmp = process.env.PT_WEB_TMP || fs.mkdtempSync(path.join(os.tmpdir(), 'ponytail-web-'));
    daemon = new Daemon(path.join(tmp, 'data'), path.join(tmp, 'ponytaild.log'));
    await daemon.start();
    bot = await daemon.api('POST', '/v1/instances', {
      name: 'bot', room: ROOM,
      strands: [
        { anchor: [-0.05, 0.06, -0.08], direction: [-0.3, -1, -0.2], points: 12, segment_length: 0.03 },
        { anchor: [0.05, 0.06, -0.08], direction: [0.3, -1, -0.2], points: 12, segment_length: 0.03 },
      ],
      colliders: [{ shape: 'sphere', attach: 'head', center: [0, 0, 0], radius: 0.1 }],
      driver: { motion: 'shake', amplitude: 40, period: 1.0 },
    });
    assert.equal(bot.status, 201, JSON.stringify(bot.json));

    context = await launchChromium(path.join(tmp, 'profile'));
    page = context.pages()[0] ?? (await context.newPage());
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push({ phase, text: m.text() });
    });
    page.on('pageerror', (e) => pageErrors.push(`${phase}: ${e.message}`));
    context.on('request', (r) => requests.push({ url: r.url(), phase }));
    page.on('websocket', (w) => requests.push({ url: w.url(), phase, status: 101 }));
    context.on('response', (r) => {
      const q = requests.findLast((x) => x.url === r.url() && x.status === undefined);
      if (q) q.status = r.status();
    });
  });

  after(async () => {
    for (const e of consoleErrors) console.log(`# console error (${e.phase}): ${e.text}`);
    await context?.close().catch(() => {});
    await daemon?.stop();
    if (tmp && !process.env.PT_WEB_TMP) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('the page loads without console errors, connects and creates its instance', async () => {
    await page.goto(`${daemon.base}/?room=${ROOM}`);
    await until('the WebSocket to open', () => page.evaluate(() => window.ponytail?.state === 'open'));
    ownKey = await until('an instance of its own', () => page.evaluate(() => window.ponytail.own?.key));
    await until('frames of both instances', () => page.evaluate(() => {
      const l = window.ponytail.instances();
      return l.length === 2 && l.every((i) => i.hasFrame && i.hasDef);
    }));
    assert.equal(await page.locator('#conn').getAttribute('data-state'), 'open');
    assert.equal(await page.locator('#own-id').textContent(), `#${ownKey}`);
    const listed = await daemon.api('GET', `/v1/instances/${ownKey}`);
    assert.equal(listed.status, 200);
    assert.equal(listed.json.room, ROOM);
    // The overlay's counters fill (once a second): batches, renders and bytes counted, and a
    // latency measured on the page's own poses (re-sent every 250 ms). Their values are the
    // machine's speed.
    const stats = await until('the overlay\'s counters', async () => {
      const st = await page.evaluate(() => window.ponytail.stats);
      return st.tps > 0 && st.fps > 0 && st.kbs > 0 && st.latencyMs !== null && st;
    });
    assert.equal(stats.decodeErrors, 0);
    assert.ok(stats.latencyMs >= 0, `input-to-frame latency: ${stats.latencyMs}`);
    assert.match(await page.locator('#st-lat').textContent(), /ms$/);
    // Every control has an accessible name.
    const unnamed = await page.evaluate(() => [...document.querySelectorAll('input, select, button, canvas')]
      .filter((el) => !(el.labels?.length || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby') || el.textContent.trim()))
      .map((el) => el.id || el.outerHTML.slice(0, 60)));
    assert.deepEqual(unnamed, []);
    assert.match(await page.locator('#st-kbs').textContent(), /kB\/s$/);
    assert.deepEqual(unexpectedErrors(), []);
    assert.deepEqual(pageErrors, []);
  });

  test('it renders non-blank, animated frames', async () => {
    const a = await canvasSample(page);
    assert.ok(a.w > 300 && a.h > 200, `canvas ${a.w}x${a.h}`);
    assert.ok(a.colours > 40, `only ${a.colours} colours: blank canvas?`);
    // Animated: the picture changes (the shaking bot), however many frames that takes.
    let changed = 0;
    await until('the picture to change', async () => (changed = pixelsDiffer(a, await canvasSample(page))) > 50)
      .catch((e) => assert.fail(`${e.message}: only ${changed} sampled pixels changed: not animated?`));
    // The shaking bot's strands move in the decoded frames too.
    const botKey = (await page.evaluate(() => window.ponytail.instances())).find((i) => !i.own).key;
    const p0 = await page.evaluate((k) => window.ponytail.points(k), botKey);
    let moved = 0;
    await until('the bot\'s strands to move', async () => {
      const p1 = await page.evaluate((k) => window.ponytail.points(k), botKey);
      moved = Math.max(...p0.map((p, i) => Math.hypot(p[0] - p1[i][0], p[1] - p1[i][1], p[2] - p1[i][2])));
      return moved > 0.01;
    }).catch((e) => assert.fail(`${e.message}: bot strands moved ${moved} m`));
  });

  test('a mouse drag moves the head and the strands follow', async () => {
    phase = 'drag';
    const before = await page.evaluate((k) => ({ head: window.ponytail.ownHead(), pts: window.ponytail.points(k) }), ownKey);
    const start = await page.evaluate((h) => window.ponytail.screenOf('front', h), before.head);
    assert.ok(start, 'own head is not in the front view');
    const shot0 = await canvasSample(page);
    // The strands lag behind the head: relative to their roots, the tips move. The page
    // samples every frame it decodes from now on (the swing lasts a while, but how soon the
    // test looks is the machine's speed), keeping the largest tip swing and head shift.
    const tip = before.pts.length / 3 - 1; // last point of the first strand (3 strands of 12)
    await page.evaluate(({ k, tip, head0, pts0 }) => {
      const rel = (pts) => pts[tip].map((v, j) => v - pts[0][j]);
      const r0 = rel(pts0);
      const probe = { swing: 0, dx: 0, timer: 0 };
      probe.timer = setInterval(() => {
        const pts = window.ponytail.points(k);
        const h = window.ponytail.ownHead();
        if (!pts || !h) return;
        const r1 = rel(pts);
        probe.swing = Math.max(probe.swing, Math.hypot(r0[0] - r1[0], r0[1] - r1[1], r0[2] - r1[2]));
        probe.dx = Math.max(probe.dx, h[0] - head0[0]);
      }, 5);
      window.__dragProbe = probe;
    }, { k: ownKey, tip, head0: before.head, pts0: before.pts });
    await page.mouse.move(start.x, start.y);
    await page.mouse.down();
    for (let i = 1; i <= 12; i++) {
      await page.mouse.move(start.x + i * 12, start.y - i * 3);
      await sleep(16);
    }
    await page.mouse.up();
    const probe = () => page.evaluate(() => ({ swing: window.__dragProbe.swing, dx: window.__dragProbe.dx }));
    let seen = {};
    await until('the head to move right and the tip to swing', async () => (seen = await probe()).dx > 0.05 && seen.swing > 0.005)
      .catch(() => {});
    await page.evaluate(() => clearInterval(window.__dragProbe.timer));
    assert.ok(seen.dx > 0.05, `the head moved ${seen.dx} m right in the frames`);
    assert.ok(seen.swing > 0.005, `the tip swung ${seen.swing} m relative to its root`);
    await until('the picture to change', async () => pixelsDiffer(shot0, await canvasSample(page)) > 50)
      .catch(() => assert.fail('the picture did not change'));
    assert.deepEqual(unexpectedErrors(), []);
  });

  test('a parameter change round-trips through PATCH', async () => {
    phase = 'params';
    const patched = page.waitForResponse((r) => r.request().method() === 'PATCH');
    await page.getByLabel('damping').fill('0.9');
    await page.getByLabel('damping').press('Enter');
    assert.equal((await patched).status(), 200);
    let got = await daemon.api('GET', `/v1/instances/${ownKey}`);
    assert.equal(got.json.definition.verlet.damping, 0.9);

    const patched2 = page.waitForResponse((r) => r.request().method() === 'PATCH');
    await page.getByLabel('gravity y').fill('-5');
    await page.getByLabel('gravity y').press('Tab');
    assert.equal((await patched2).status(), 200);
    got = await daemon.api('GET', `/v1/instances/${ownKey}`);
    assert.deepEqual(got.json.definition.gravity, [0, -5, 0]);

    const patched3 = page.waitForResponse((r) => r.request().method() === 'PATCH');
    await page.getByLabel('colliders').uncheck();
    assert.equal((await patched3).status(), 200);
    got = await daemon.api('GET', `/v1/instances/${ownKey}`);
    assert.ok(got.json.definition.strands.every((s) => Array.isArray(s.colliders) && s.colliders.length === 0),
      JSON.stringify(got.json.definition.strands.map((s) => s.colliders)));
    assert.equal(await page.getByLabel('colliders').isChecked(), false);
    assert.equal(await page.locator('#f-verlet-damping-error').textContent(), '');
    assert.deepEqual(unexpectedErrors(), []);
  });

  test("an invalid value shows the server's error next to its field", async () => {
    phase = 'invalid';
    const patched = page.waitForResponse((r) => r.request().method() === 'PATCH');
    await page.getByLabel('damping').fill('1.5');
    await page.getByLabel('damping').press('Enter');
    const res = await patched;
    assert.equal(res.status(), 422);
    const body = await res.json();
    assert.equal(body.error.field, 'verlet.damping');
    const slot = page.locator('#f-verlet-damping-error');
    await until('the error text', async () => (await slot.textContent()) !== '');
    assert.equal(await slot.textContent(), body.error.message);
    assert.equal(await page.getByLabel('damping').getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('#f-verlet-iterations-error').textContent(), '');
    const got = await daemon.api('GET', `/v1/instances/${ownKey}`);
    assert.equal(got.json.definition.verlet.damping, 0.9, 'the rejected value was not applied');
    // Another field's change goes through and leaves the rejected one as typed.
    const other = page.waitForResponse((r) => r.request().method() === 'PATCH');
    await page.getByLabel('iterations').fill('6');
    await page.getByLabel('iterations').press('Enter');
    assert.equal((await other).status(), 200);
    assert.equal((await daemon.api('GET', `/v1/instances/${ownKey}`)).json.definition.verlet.iterations, 6);
    assert.equal(await page.getByLabel('damping').inputValue(), '1.5');
    assert.equal(await slot.textContent(), body.error.message);
    // Fixing the value clears the message.
    const fixed = page.waitForResponse((r) => r.request().method() === 'PATCH');
    await page.getByLabel('damping').fill('0.95');
    await page.getByLabel('damping').press('Enter');
    assert.equal((await fixed).status(), 200);
    await until('the error to clear', async () => (await slot.textContent()) === '');
    assert.deepEqual(unexpectedErrors(), []);
  });

  test('the page reconnects by itself after the daemon restarts', async () => {
    phase = 'restart';
    await daemon.stop();
    await until('the page to notice', () => page.evaluate(() => window.ponytail.state !== 'open'));
    await sleep(500);
    await daemon.start();
    await until('the WebSocket to reopen', () => page.evaluate(() => window.ponytail.state === 'open'));
    const t0 = await page.evaluate(() => window.ponytail.stats.frames);
    await until('frames to flow again', async () => (await page.evaluate(() => window.ponytail.stats.frames)) > t0 + 20);
    // The same instance (durable in --data) is still the page's, and still steerable.
    assert.equal(await page.evaluate(() => window.ponytail.own?.key), ownKey);
    const before = await page.evaluate(() => window.ponytail.ownHead());
    await page.locator('#scene').focus();
    await page.keyboard.press('r'); // recentre: the head goes back to its base position
    await until('the recentred head in the frames', async () => {
      const h = await page.evaluate(() => window.ponytail.ownHead());
      return h && Math.abs(h[0] - before[0]) > 0.05;
    });
    assert.equal(await page.locator('#conn').getAttribute('data-state'), 'open');
    assert.deepEqual(unexpectedErrors(), []);
    assert.deepEqual(pageErrors, []);
  });
  test('a reload steers the same instance, its poses applied at once', async () => {
    phase = 'reload';
    const key = await page.evaluate(() => window.ponytail.own.key);
    const before = await until('poses applied before the reload', () => page.evaluate((k) => window.ponytail.app.instances.get(k)?.lastSeq || 0, key));
    await page.reload();
    await until('the same instance adopted again', () => page.evaluate((k) => window.ponytail?.own?.key === k && window.ponytail.state === 'open', key));
    // The server drops a pose older than one it applied: the reloaded page goes on from
    // there (its link would count from 1 again and be ignored for as many poses).
    const first = await until('the reloaded page publishing', () => page.evaluate(() => window.ponytail.firstSeq));
    assert.ok(first > before, `the reloaded page's first pose (seq ${first}) is newer than those applied before (${before})`);
    await until('its poses applied', () => page.evaluate(([k, f]) => (window.ponytail.app.instances.get(k)?.lastSeq ?? 0) >= f, [key, first]));
    assert.deepEqual(unexpectedErrors(), []);
    assert.deepEqual(pageErrors, []);
  });

  test('a page given a token (#id=&token=) steers that instance, here the bot once its motion is off', async () => {
    phase = 'adopt';
    const id = String(bot.json.id);
    const second = await context.newPage();
    second.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push({ phase, text: m.text() });
    });
    second.on('pageerror', (e) => pageErrors.push(`${phase}: ${e.message}`));
    try {
      await second.goto(`${daemon.base}/?create=0#id=${id}&token=${bot.json.token}`);
      await until('the bot to be adopted', () => second.evaluate((k) => window.ponytail?.own?.key === k && window.ponytail.state === 'open', id));
      assert.equal(new URL(second.url()).hash, '', 'the token left the address bar');
      await until('the panel to show the motion', async () => (await second.getByLabel('head motion').inputValue()) === 'shake');
      const patched = second.waitForResponse((r) => r.request().method() === 'PATCH');
      await second.getByLabel('head motion').selectOption('none');
      assert.equal((await patched).status(), 200);
      const got = await daemon.api('GET', `/v1/instances/${id}`);
      assert.equal(got.json.driven, false);
      // Now its head follows this page: recentred it faces forward (which the shaking
      // never holds), then the keyboard turns it.
      const yawQ = () => second.evaluate((k) => window.ponytail.app.instances.get(k).headQ[1], id);
      await second.locator('#scene').focus();
      await second.keyboard.press('r');
      await until('the head to face forward', async () => Math.abs(await yawQ()) < 0.02);
      await sleep(300);
      assert.ok(Math.abs(await yawQ()) < 0.02, 'the head stays forward: the motion is off');
      // Held until the frames show the head turned (how long that takes is the page's
      // frame rate: it turns 110 degrees a second of frames).
      await second.keyboard.down('ArrowLeft');
      try {
        await until('the turned head in the frames', async () => (await yawQ()) > 0.25);
      } finally {
        await second.keyboard.up('ArrowLeft');
      }
      // The first page shows the same head turning.
      let q1;
      await until('the first page to see the turn', async () => (q1 = await page.evaluate((k) => window.ponytail.app.instances.get(k).headQ, id))[1] > 0.2)
        .catch(() => assert.fail(`first page sees yaw component ${q1?.[1]}`));
    } finally {
      await second.close();
    }
    assert.deepEqual(unexpectedErrors(), []);
    assert.deepEqual(pageErrors, []);
  });
  test('the camera: Face Mesh loads from the daemon, the fake camera shows no face, nothing is published', async () => {
    phase = 'camera';
    const head0 = await page.evaluate(() => window.ponytail.ownHead());
    assert.equal(await page.locator('#cam-status').textContent(), 'camera off');
    await page.getByRole('button', { name: 'Camera' }).click();
    assert.equal(await page.getByRole('button', { name: 'Camera' }).getAttribute('aria-pressed'), 'true');
    await until('the model to load and run', () => page.evaluate(() => window.ponytail.camera.status === 'no face' && window.ponytail.camera.frames >= 3), 2 * WAIT_MS, 100);
    const t0 = await page.evaluate(() => window.ponytail.camera.frames);
    const cam = await until('Face Mesh to keep processing camera frames', async () => {
      const c = await page.evaluate(() => window.ponytail.camera);
      return c.frames > t0 && c;
    });
    assert.equal(cam.status, 'no face');
    assert.equal(await page.locator('#cam-status').textContent(), 'no face');
    assert.equal(cam.faces, 0, 'a face in the test pattern?');
    assert.equal(cam.posesUsed, 0);
    assert.equal(cam.published, 0, 'poses published from the camera without a face');
    const head1 = await page.evaluate(() => window.ponytail.ownHead());
    assert.ok(Math.hypot(...head1.map((v, i) => v - head0[i])) < 1e-4, 'the head did not move');
    // The model came from this daemon: script, WebAssembly and packed model, all 200.
    const mine = new URL(daemon.base).host;
    for (const file of ['face_mesh.js', 'face_mesh_solution_packed_assets.data', 'face_mesh.binarypb']) {
      const r = requests.find((q) => q.url.endsWith(`/node_modules/@mediapipe/face_mesh/${file}`));
      assert.ok(r && new URL(r.url).host === mine && r.status === 200, `${file}: ${JSON.stringify(r)}`);
    }
    assert.ok(requests.some((q) => /face_mesh_solution_(simd_)?wasm_bin\.wasm$/.test(q.url) && q.status === 200), 'the .wasm');
    // Nothing, in the whole session, went anywhere but this daemon's two ports.
    const ours = [mine, `127.0.0.1:${daemon.wsPort}`];
    const elsewhere = requests.filter((q) => !/^(data|blob):/.test(q.url) && !ours.includes(new URL(q.url).host));
    assert.deepEqual(elsewhere, []);
    assert.ok(requests.some((q) => q.url.startsWith('ws://')), 'WebSockets are watched too');
    // A face, as Face Mesh would report one (landmarks of the solver's fixtures: yaw 30°,
    // pitch -25°, roll 15°): Face Mesh's send() answers with them for a while. The head
    // turns to that pose in the daemon's frames; when the real answers return, "no face"
    // again, publishing from the camera stops and the head stays where it was.
    const fx = JSON.parse(fs.readFileSync(new URL('./fixtures/face-landmarks.json', import.meta.url)));
    const face = fx.cases.find((c) => c.width === 640 && c.yaw === 30 && c.pitch === -25);
    await page.evaluate(({ lm }) => {
      const cam = window.ponytail.app.camera;
      const list = Object.assign([], lm);
      cam.realSend = cam.mesh.send;
      cam.mesh.send = async () => cam.onResults({ multiFaceLandmarks: [list] });
    }, { lm: face.landmarks });
    await until('tracking', () => page.evaluate(() => window.ponytail.camera.status === 'tracking'));
    const { quatFromYawPitchRoll, DEG } = await import('../../clients/web/js/math.mjs');
    const qWant = quatFromYawPitchRoll(face.yaw * DEG, face.pitch * DEG, face.roll * DEG);
    await until('the head at the face\'s pose in the frames', async () => {
      const q = await page.evaluate((k) => window.ponytail.app.instances.get(k).headQ, ownKey);
      const d = Math.abs(q.reduce((acc, v, i) => acc + v * qWant[i], 0));
      return 2 * Math.acos(Math.min(1, d)) < 2 * DEG;
    });
    const tracked = await page.evaluate(() => window.ponytail.camera);
    assert.ok(tracked.published > 0, `poses published while tracking: ${tracked.published}`);
    await page.evaluate(() => {
      const cam = window.ponytail.app.camera;
      cam.mesh.send = cam.realSend;
    });
    await until('"no face" once the face is gone', () => page.evaluate(() => window.ponytail.camera.status === 'no face'));
    const n = await page.evaluate(() => window.ponytail.camera.published);
    await sleep(600);
    assert.ok((await page.evaluate(() => window.ponytail.camera.published)) <= n + 1, 'publishing from the camera stopped');
    await page.getByRole('button', { name: 'Camera' }).click();
    assert.equal(await page.locator('#cam-status').textContent(), 'camera off');
    assert.deepEqual(unexpectedErrors(), []);
    assert.deepEqual(pageErrors, []);
  });
  test('the 3D view draws each strand as a lock of follower hairs with split ends', async () => {
    phase = 'locks';
    const { HAIRS_PER_STRAND } = await import('../../clients/web/js/locks.mjs');
    // A watching page with the 3D view alone, looking at the first page's instance from
    // behind and zoomed in, drawn with and without the follower hairs.
    const watch = await context.newPage();
    watch.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push({ phase, text: m.text() });
    });
    watch.on('pageerror', (e) => pageErrors.push(`${phase}: ${e.message}`));
    try {
      await watch.setViewportSize({ width: 900, height: 700 });
      await watch.goto(`${daemon.base}/?room=${ROOM}&create=0&views=orbit`);
      await until('frames of the instance', () => watch.evaluate((k) => window.ponytail?.points(k), ownKey));
      await watch.evaluate(() => {
        const app = window.ponytail.app;
        app.orbit = { yaw: Math.PI - 0.6, pitch: 0.2 };
        app.views[0].zoom = 2.2;
      });
      // The cameras' framing settles (half a second's smoothing, in frames: on a slow page
      // it takes longer): waited for until the hair's box stays put between two looks.
      const measure = () => watch.evaluate((k) => {
        return new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(() => {
          const at = window.ponytail.points(k).map((p) => window.ponytail.screenOf('orbit', p)).filter(Boolean);
          const r = document.getElementById('scene').getBoundingClientRect();
          const d = window.devicePixelRatio;
          const x0 = Math.min(...at.map((p) => p.x)) - r.left - 20;
          const y0 = Math.min(...at.map((p) => p.y)) - r.top - 20;
          const x1 = Math.max(...at.map((p) => p.x)) - r.left + 20;
          const y1 = Math.max(...at.map((p) => p.y)) - r.top + 20;
          resolve({ x: Math.floor(x0 * d), y: Math.floor(y0 * d), w: Math.ceil((x1 - x0) * d), h: Math.ceil((y1 - y0) * d), left: r.left, top: r.top, d });
        })));
      }, ownKey);
      let box = await measure();
      await until('the 3D view\'s framing to settle', async () => {
        await sleep(300);
        const b = await measure();
        const still = ['x', 'y', 'w', 'h'].every((f) => Math.abs(b[f] - box[f]) <= 2);
        box = b;
        return still;
      });
      assert.ok(box.w > 40 && box.h > 80 && box.x >= 0 && box.y >= 0, `the hair's box in the 3D view: ${JSON.stringify(box)}`);
      // Edges: neighbouring pixels whose brightness differs by more than 24 of 255.
      const look = (locks) => watch.evaluate(({ b, locks }) => new Promise((resolve) => {
        window.ponytail.app.locks = locks;
        requestAnimationFrame(() => requestAnimationFrame(() => {
          const d = document.getElementById('scene').getContext('2d').getImageData(b.x, b.y, b.w, b.h).data;
          let edges = 0;
          const lum = (i) => d[i] * 0.3 + d[i + 1] * 0.59 + d[i + 2] * 0.11;
          for (let y = 0; y < b.h; y++) for (let x = 0; x + 1 < b.w; x++) {
            const i = 4 * (y * b.w + x);
            if (Math.abs(lum(i) - lum(i + 4)) > 24) edges++;
          }
          resolve({ edges, followers: window.ponytail.stats.followers });
        }));
      }), { b: box, locks });
      const cx = Math.max(0, box.left + box.x / box.d);
      const cy = Math.max(0, box.top + box.y / box.d);
      const clip = { x: cx, y: cy, width: Math.min(900 - cx, box.w / box.d), height: Math.min(700 - cy, box.h / box.d) };
      const shots = path.join(BUILD, 'web-e2e');
      fs.mkdirSync(shots, { recursive: true });
      const hairs = await look(true);
      await watch.screenshot({ path: path.join(shots, 'orbit-locks.png'), clip });
      const guides = await look(false);
      await watch.screenshot({ path: path.join(shots, 'orbit-guides.png'), clip });
      // Three strands of this instance and two of the bot.
      assert.ok(hairs.followers >= 5 * HAIRS_PER_STRAND, `follower hairs drawn: ${hairs.followers}`);
      assert.equal(guides.followers, 0);
      // Thin hairs in three shades over the filled locks: far more edges than the guides'
      // smooth fills (screenshots of both in build/web-e2e/).
      assert.ok(hairs.edges > 1.5 * guides.edges, `edges: ${hairs.edges} with the hairs, ${guides.edges} without`);
    } finally {
      await watch.close();
    }
    assert.deepEqual(unexpectedErrors(), []);
    assert.deepEqual(pageErrors, []);
  });
});
