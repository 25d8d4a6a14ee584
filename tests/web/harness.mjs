// Shared by the web tests and the screenshot script: polling, a ponytaild started from
// the build directory on loopback ports of its own choosing, and Debian's Chromium under playwright-core.
// Nothing here measures speed (issue 37): a wait is for a condition, failing only past
// WAIT_MS, which a slow, loaded machine (a sanitizer build on 2 cores, other tests and a
// browser beside it) does not reach.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

export const ROOT = process.env.PT_ROOT || process.cwd();
export const BUILD = path.resolve(ROOT, process.env.PT_BUILD || 'build');
export const DAEMON = path.join(BUILD, 'bin', 'ponytaild');
export const CHROMIUM = process.env.PT_CHROMIUM || '/usr/bin/chromium';

// A fresh profile directory, no GPU, nothing fetched from anywhere but the page's origin.
// The camera is Chromium's fake one (a moving test pattern, no face in it), granted
// without asking.
export function launchChromium(userDataDir, viewport = { width: 1280, height: 720 }, extra = {}) {
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
      '--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream',
    ],
    viewport,
    ...extra,
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// How long a test waits for something the page or the daemon must do before it fails.
export const WAIT_MS = 30000;

export async function until(what, fn, timeoutMs = WAIT_MS, everyMs = 50) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${last?.message ?? JSON.stringify(last)})`);
    await sleep(everyMs);
  }
}

// A ponytaild on 127.0.0.1. Its first start asks for ports 0 and reads the ones the
// daemon bound from its log ("listening: http://…:P/ ws://…:Q/"): ports picked here and
// closed before the daemon binds them could be taken in between by a test running beside
// (an outgoing connection's local port, say). A restart binds the same ports again.
export class Daemon {
  // extraArgs: more ponytaild flags (a test that needs one says why).
  constructor(dataDir, logPath, extraArgs = []) {
    Object.assign(this, { httpPort: 0, wsPort: 0, dataDir, logPath, proc: null, base: null, extraArgs });
  }

  async start() {
    const from = fs.existsSync(this.logPath) ? fs.statSync(this.logPath).size : 0;
    const log = fs.openSync(this.logPath, 'a');
    this.proc = spawn(DAEMON, [
      '--bind', '127.0.0.1', '--http-port', String(this.httpPort), '--ws-port', String(this.wsPort),
      '--data', this.dataDir, '--web-root', path.join(ROOT, 'clients/web'),
      '--proto-js', path.join(ROOT, 'proto/js'), '--workers', '1', '--log-level', 'info',
      ...this.extraArgs,
    ], { cwd: ROOT, stdio: ['ignore', log, log] });
    fs.closeSync(log);
    const exited = new Promise((r) => this.proc.once('exit', (code, sig) => r({ code, sig })));
    this.exited = exited;
    const gone = async () => {
      const g = await Promise.race([exited, sleep(0).then(() => null)]);
      if (g) throw new Error(`ponytaild exited (${g.code ?? g.sig}); log: ${this.logPath}`);
    };
    await until('ponytaild listening', async () => {
      await gone();
      const text = fs.readFileSync(this.logPath, 'utf8').slice(from);
      const m = /listening: http:\/\/[\d.]+:(\d+)\/ ws:\/\/[\d.]+:(\d+)\//.exec(text);
      if (m) [this.httpPort, this.wsPort] = [Number(m[1]), Number(m[2])];
      return !!m;
    });
    this.base = `http://127.0.0.1:${this.httpPort}`;
    this.wsUrl = `ws://127.0.0.1:${this.wsPort}`;
    await until('ponytaild /readyz', async () => {
      await gone();
      const r = await fetch(`${this.base}/readyz`);
      return r.ok;
    });
  }

  async stop() {
    if (!this.proc || this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.kill('SIGTERM');
    let timer; // a drain may take a while; cleared, so that it holds nothing up after
    const done = await Promise.race([this.exited, new Promise((r) => { timer = setTimeout(() => r(null), WAIT_MS); })]);
    clearTimeout(timer);
    if (!done) {
      this.proc.kill('SIGKILL');
      await this.exited;
    }
  }

  async api(method, p, body, token) {
    const headers = {};
    if (body) headers['Content-Type'] = 'application/json';
    if (token) headers.Authorization = `Bearer ${token}`;
    const r = await fetch(this.base + p, { method, headers, body: body ? JSON.stringify(body) : undefined });
    const text = await r.text();
    return { status: r.status, json: text ? JSON.parse(text) : null };
  }
}
