// Crash trials: TRIALS times (default 10), on one data directory, start the daemon, run
// a stream of creates, patches and deletes from 4 writers, and kill -9 it at a random
// moment (50-600 ms in). Then, on a copy of the files as the kill left them, PRAGMA
// integrity_check must say ok (python3's sqlite3), and after a restart every
// acknowledged write must be there and nothing half-applied: each instance is exactly
// its last acknowledged version, or the version of the one write in flight for it
// (a patch sets name and damping together, so a torn write would show); acknowledged
// deletes are gone; an in-flight create may or may not exist, but whole.
//   node --experimental-websocket tests/server/js/crash.mjs [TRIALS]
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bearer, def, sleep, startDaemon, tempDir } from './daemon.mjs';

const TRIALS = Number(process.argv[2] || process.env.TRIALS || 10);
const data = tempDir();
const known = new Map(); /* id -> {token, acked: version|null (deleted), inflight: [versions]} */
const fail = [];
let acked = 0, writes = 0;
const version = (k) => ({ name: `v${k}`, verlet: { damping: 0.5 + (k % 400) / 1000 } });

function integrity() {
  const tmp = mkdtempSync(join(tmpdir(), 'pt-crash-'));
  try {
    for (const f of ['ponytail.db', 'ponytail.db-wal'])
      if (existsSync(join(data, f))) copyFileSync(join(data, f), join(tmp, f));
    return execFileSync('python3', ['-c', 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA integrity_check").fetchone()[0])',
      join(tmp, 'ponytail.db')]).toString().trim();
  } finally { rmSync(tmp, { recursive: true, force: true }); }
}

async function writer(dm, stop) {
  while (!stop.now) {
    const ids = [...known.keys()].filter((id) => known.get(id).acked);
    const r = Math.random();
    const k = ++writes;
    try {
      if (ids.length < 5 || r < 0.35) {
        const res = await dm.req('POST', '/v1/instances', def({ ...version(k), prewarm_s: 0 }));
        if (res.status === 201) {
          known.set(res.json.id, { token: res.json.token, acked: version(k).name, inflight: [] });
          acked++;
        }
      } else {
        const id = ids[Math.floor(Math.random() * ids.length)], e = known.get(id);
        if (e.inflight.length) continue;
        if (r < 0.85) {
          e.inflight.push(version(k).name);
          const res = await dm.req('PATCH', `/v1/instances/${id}`, version(k), bearer(e.token));
          if (res.status === 200) { e.acked = version(k).name; acked++; }
          e.inflight = [];
        } else {
          e.inflight.push(null);
          const res = await dm.req('DELETE', `/v1/instances/${id}`, undefined, bearer(e.token));
          if (res.status === 204) { e.acked = null; acked++; }
          e.inflight = [];
        }
      }
    } catch { return; /* the daemon died under us: whatever was in flight stays in flight */ }
  }
}

for (let t = 0; t < TRIALS; t++) {
  const dm = await startDaemon({ data, args: ['--write-rate', '0'] });
  /* Check the previous trial's outcome on this fresh start. */
  for (const [id, e] of known) {
    const r = await dm.req('GET', `/v1/instances/${id}`);
    const got = r.status === 200 ? r.json.name : null;
    const allowed = [e.acked, ...e.inflight];
    if (!allowed.includes(got)) fail.push(`trial ${t}: instance ${id} is ${got}, expected one of ${allowed.join(', ')}`);
    if (r.status === 200) {
      const v = Number(got.slice(1));
      if (Math.abs(r.json.definition.verlet.damping - version(v).verlet.damping) > 1e-6)
        fail.push(`trial ${t}: instance ${id} has name ${got} but the damping of another version (torn)`);
    }
    if (e.inflight.length) { e.acked = got; e.inflight = []; } /* settled now */
    if (got === null) known.delete(id);
  }
  const stop = { now: false };
  const ws = [writer(dm, stop), writer(dm, stop), writer(dm, stop), writer(dm, stop)];
  await sleep(50 + Math.random() * 550);
  await dm.stop('SIGKILL');
  stop.now = true;
  await Promise.all(ws);
  const ic = integrity();
  if (ic !== 'ok') fail.push(`trial ${t}: integrity_check says ${ic}`);
}
/* The last trial's writes, checked on one more start. */
const last = await startDaemon({ data });
for (const [id, e] of known) {
  const r = await last.req('GET', `/v1/instances/${id}`);
  const got = r.status === 200 ? r.json.name : null;
  if (![e.acked, ...e.inflight].includes(got)) fail.push(`final: instance ${id} is ${got}, expected ${e.acked}`);
}
await last.cleanup();
rmSync(data, { recursive: true, force: true });
console.log(`crash trials: ${TRIALS} kill -9 during writes, ${acked} acknowledged writes of ${writes} attempted, ` +
  `${known.size} instances at the end, integrity_check ok after each: ${fail.length ? 'NO' : 'yes'}`);
for (const f of fail) console.log('FAIL: ' + f);
process.exit(fail.length ? 1 : 0);
