// Test helper: runs a real ponytaild on free loopback ports with a temporary data
// directory, and talks to it (REST with fetch, WebSocket with the proto/js codec).
// Every daemon started here is killed when the test process exits.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { check } from './contract.mjs';

const BUILD = process.env.PT_BUILD || 'build';
export const BIN = join(BUILD, 'bin', 'ponytaild');
const live = new Set();
process.on('exit', () => { for (const p of live) try { p.kill('SIGKILL'); } catch {} });

export function tempDir() {
  return mkdtempSync(join(tmpdir(), 'pt-server-test-'));
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// How long a test waits for something the daemon must do before calling it a failure
// (issue 37): generous enough for a sanitizer build on a loaded 2-core machine; reaching
// it is the failure, never a pass.
export const WAIT_MS = 30000;

// Polls cond() (sync or async) every `every` ms until it returns a truthy value, which it
// resolves with; throws naming `what` (a string or a function giving one) after timeoutMs.
export async function until(cond, what, timeoutMs = WAIT_MS, every = 20) {
  const end = performance.now() + timeoutMs;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (performance.now() > end)
      throw new Error(`not within ${timeoutMs} ms: ${typeof what === 'function' ? what() : what}`);
    await sleep(every);
  }
}

// Starts the daemon; resolves when it logs its listening line. opts.args: extra flags,
// opts.data: data directory (a new temporary one by default), opts.env: extra variables.
export async function startDaemon(opts = {}) {
  const data = opts.data ?? tempDir();
  /* --drain-timeout 10 (the default): a stop is a full drain, which on a loaded machine
   * may wait a while for clients to answer the close (the watchdog's exit 1 would fail
   * cleanup()); the grace period before the listeners close is 1 s either way. */
  const args = ['--http-port', '0', '--ws-port', '0', '--data', data, '--tick-hz', '60',
    '--log-level', 'info', '--drain-timeout', '10', ...(opts.args ?? [])];
  const proc = spawn(BIN, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...opts.env } });
  live.add(proc);
  const d = { proc, data, log: '', exited: null };
  d.exit = new Promise((resolve) => proc.on('exit', (code, signal) => {
    live.delete(proc);
    d.exited = { code, signal };
    resolve(d.exited);
  }));
  proc.stderr.setEncoding('utf8');
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('daemon did not start:\n' + d.log)), 2 * WAIT_MS);
    proc.stderr.on('data', (s) => {
      d.log += s;
      const m = /listening: http:\/\/([\d.]+):(\d+)\/ ws:\/\/[\d.]+:(\d+)\//.exec(d.log);
      if (m && !d.http) {
        d.http = `http://${m[1]}:${m[2]}`;
        d.ws = `ws://${m[1]}:${m[3]}/`;
        d.wsPort = Number(m[3]);
        d.httpPort = Number(m[2]);
        clearTimeout(timer);
        resolve();
      }
    });
    d.exit.then((e) => { clearTimeout(timer); reject(new Error(`daemon exited ${JSON.stringify(e)}:\n${d.log}`)); });
  });
  // Wait for the first tick so readiness holds.
  await until(async () => {
    if (d.exited) throw new Error(`daemon exited ${JSON.stringify(d.exited)}:\n${d.log}`);
    const r = await request(d.http, 'GET', '/readyz').catch((e) => { if (/contract/.test(e.message)) throw e; return null; });
    return r && r.status === 200;
  }, () => 'the daemon is not ready (/readyz):\n' + d.log.slice(-3000), 2 * WAIT_MS);
  d.stop = async (signal = 'SIGTERM') => {
    if (d.exited) return d.exited;
    proc.kill(signal);
    /* the watchdog exits past --drain-timeout; this is only for a daemon that hangs */
    const t = setTimeout(() => proc.kill('SIGKILL'), 2 * WAIT_MS);
    const e = await d.exit;
    clearTimeout(t);
    return e;
  };
  // Stops the daemon and fails the test if the sanitizers (SANITIZE=1 builds) found anything.
  d.cleanup = async () => {
    await d.stop('SIGTERM');
    if (!opts.data) rmSync(data, { recursive: true, force: true });
    const bad = /runtime error:|ERROR: (Address|Leak|Thread|UndefinedBehavior)Sanitizer/.exec(d.log);
    if (bad) throw new Error('sanitizer report in the daemon log:\n' + d.log.slice(bad.index, bad.index + 3000));
    if (d.exited.code !== 0 && d.exited.signal !== 'SIGKILL')
      throw new Error(`daemon exited ${JSON.stringify(d.exited)}:\n${d.log.slice(-3000)}`);
  };
  d.req = (method, path, body, headers = {}) => request(d.http, method, path, body, headers);
  return d;
}

// REST call: body objects are sent as JSON; returns {status, headers, json, text}. Every
// answer is checked against the REST contract, server/openapi.json (contract.mjs).
export async function request(base, method, path, body, headers = {}) {
  const h = { ...headers };
  let payload;
  const stream = body instanceof ReadableStream; // sent chunked, without Content-Length
  if (body !== undefined) {
    payload = typeof body === 'string' || stream ? body : JSON.stringify(body);
    if (!('Content-Type' in h)) h['Content-Type'] = 'application/json';
  }
  const r = await fetch(base + path, { method, headers: h, body: payload, ...(stream ? { duplex: 'half' } : {}) });
  const text = await r.text();
  let json = null;
  try { json = JSON.parse(text); } catch {}
  const res = { status: r.status, headers: r.headers, json, text };
  check(method, base + path, res);
  return res;
}

export const bearer = (token) => ({ Authorization: `Bearer ${token}` });

// A small valid definition: one strand of `points` points, a head sphere.
export function def(over = {}) {
  return {
    name: 'test', room: 'lobby', prewarm_s: 0.2,
    strands: [{ anchor: [0, 0.06, -0.09], direction: [0, -1, 0], points: 8, segment_length: 0.03 }],
    colliders: [{ shape: 'sphere', attach: 'head', center: [0, 0, 0], radius: 0.1 }],
    ...over,
  };
}

// Reads a /metrics sample: metric('ponytail_ticks_total') or with a label filter string.
export async function metric(d, name, labels = '') {
  const text = (await d.req('GET', '/metrics')).text;
  const re = new RegExp('^' + name.replace(/[{}]/g, '\\$&') + (labels ? '\\{' + labels.replace(/[{}"]/g, '\\$&') + '\\}' : '') + ' (\\S+)$', 'm');
  const m = re.exec(text);
  return m ? Number(m[1]) : null;
}

// Resident memory of a process in KiB (Linux).
export async function rssKiB(pid) {
  const { readFileSync } = await import('node:fs');
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : 0;
}
