// The scale-out topology of docker/ on loopback: ponytaild nodes (--node-id 1, 2, ...),
// one edge nginx per node (docker/edge.conf) and front nginx processes (docker/nginx.conf)
// routing by room and by instance id, every config file the real one with only its
// addresses rewritten. Everything runs in one temporary directory.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request, sleep, startDaemon } from '../server/js/daemon.mjs';

export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => spawnSync(p, ['-v']).status === 0);
export const SPAN = 1e12; // ids per node (server/store.h)
export const nodeOf = (id) => Math.floor(Number(id) / SPAN);

export function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); });
  });
}

const listening = (port) => new Promise((r) => {
  const s = net.connect(port, '127.0.0.1', () => { s.destroy(); r(true); });
  s.on('error', () => r(false));
});

// docker/nginx.conf for nodes 1..n: node3's lines are the pattern of every further node.
export function frontConf(n) {
  const text = readFileSync('docker/nginx.conf', 'utf8');
  const out = [];
  for (const line of text.split('\n')) {
    out.push(line);
    if (!/node3/.test(line)) continue;
    for (let k = 4; k <= n; k++)
      out.push(line.replace(/node3/g, `node${k}`).replace(/\^3\[/, `^${k}[`).replace(/\/3\[/, `/${k}[`));
  }
  return out.join('\n');
}

// Every nginx started here dies with the test process, whatever ends it.
const live = new Set();
process.on('exit', () => { for (const p of live) try { p.kill('SIGKILL'); } catch {} });

export class Topology {
  constructor() {
    this.dir = mkdtempSync(join(tmpdir(), 'pt-scale-'));
    this.procs = new Set();
    this.nodes = new Map(); // node id -> {d, data, edgePort}
  }

  // Runs nginx on config text; resolves once it accepts connections on port.
  async nginx(name, conf, port) {
    const temps = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']
      .map((t) => `    ${t}_temp_path ${this.dir}/${name}-${t};`).join('\n');
    conf = conf.replace(/^http \{$/m, `http {\n    access_log off;\n${temps}`);
    const path = join(this.dir, `${name}.conf`);
    writeFileSync(path, conf);
    const p = spawn(NGINX, ['-p', this.dir, '-c', path, '-g', `daemon off; pid ${this.dir}/${name}.pid; error_log stderr warn;`],
      { stdio: ['ignore', 'ignore', 'pipe'] });
    p.log = '';
    p.stderr.on('data', (s) => { p.log += s; });
    this.procs.add(p);
    live.add(p);
    p.on('exit', () => live.delete(p));
    /* a deadline only a broken nginx reaches on a loaded machine (issue 37) */
    for (const end = performance.now() + 30000; performance.now() < end;) {
      if (await listening(port)) return p;
      if (p.exitCode !== null) { // its last words first
        await new Promise((r) => (p.stderr.readableEnded ? r() : p.stderr.once('end', r)));
        break;
      }
      await sleep(20);
    }
    throw new Error(`nginx ${name} did not start: ${p.log}`);
  }

  // Runs nginx on confFor(port) for a port that was free a moment ago; another test may take
  // it first, so a few tries, each on a new one. Resolves with {p, port}.
  async nginxOnFreePort(name, confFor) {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      try {
        return { p: await this.nginx(name, confFor(port), port), port };
      } catch (e) {
        if (attempt >= 5 || !/in use/.test(e.message)) throw e;
      }
    }
  }

  // Starts node k (a daemon with its own data directory) and its edge.
  async addNode(k) {
    const data = join(this.dir, `node${k}-data`);
    const d = await startDaemon({ data, args: ['--node-id', String(k), '--ws-public-url', '/ws'] });
    let edgeConf;
    const { p: edge, port: edgePort } = await this.nginxOnFreePort(`edge${k}`, (port) => (edgeConf = readFileSync('docker/edge.conf', 'utf8')
      .replace(/listen 80;/, `listen 127.0.0.1:${port};`)
      .replace(/127\.0\.0\.1:8081/g, `127.0.0.1:${d.wsPort}`)
      .replace(/127\.0\.0\.1:8080/g, `127.0.0.1:${d.httpPort}`)));
    this.nodes.set(k, { d, data, edgePort, edgeConf, edge });
    return d;
  }

  // Stops node k's daemon and its edge (in compose they share a network namespace, so
  // they go together); restartNode brings both back on the same ports and data directory.
  async stopNode(k) {
    const n = this.nodes.get(k);
    const e = await n.d.stop('SIGTERM');
    if (e.code !== 0) throw new Error(`node ${k} exited ${JSON.stringify(e)}:\n${n.d.log.slice(-2000)}`);
    const gone = new Promise((r) => n.edge.on('exit', r));
    n.edge.kill('SIGTERM');
    await gone;
    this.procs.delete(n.edge);
  }

  async restartNode(k) {
    const n = this.nodes.get(k);
    n.d = await startDaemon({ data: n.data, args: ['--node-id', String(k), '--ws-public-url', '/ws',
      '--http-port', String(n.d.httpPort), '--ws-port', String(n.d.wsPort)] });
    n.edge = await this.nginx(`edge${k}`, n.edgeConf, n.edgePort);
    return n.d;
  }

  // A front proxy over nodes 1..n; returns its base URL.
  async front(n, name = `front${n}`) {
    const { port } = await this.nginxOnFreePort(name, (port) => frontConf(n)
      .replace(/listen 80;/, `listen 127.0.0.1:${port};`)
      .replace(/node(\d+):80/g, (_, k) => `127.0.0.1:${this.nodes.get(Number(k)).edgePort}`));
    return `http://127.0.0.1:${port}`;
  }

  async close() {
    for (const p of this.procs) p.kill('SIGTERM');
    for (const { d } of this.nodes.values()) await d.cleanup();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

// The node a request reaches: /v1/info's node_id (room given by ?room= or not at all).
export async function nodeFor(front, room) {
  for (const end = performance.now() + 30000; ;) {
    const r = await request(front, 'GET', room === undefined ? '/v1/info' : `/v1/info?room=${encodeURIComponent(room)}`);
    if (r.status === 200) return r.json.node_id;
    if (r.status !== 429 || performance.now() > end) throw new Error(`GET /v1/info?room=${room}: ${r.status} ${r.text}`);
    await sleep(100); // the front's per-client rate limit
  }
}
