// The store at start-up: PRAGMA quick_check runs before anything is written, and a store
// that is corrupt or not a database stops start-up with a clear message, the file left
// byte for byte as it was.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { BIN, bearer, def, startDaemon, tempDir } from './daemon.mjs';

const sha = (f) => createHash('sha256').update(readFileSync(f)).digest('hex');

// Runs the daemon on data until it exits (it should not start); returns {code, log}.
function startFails(data) {
  return new Promise((resolve, reject) => {
    const p = spawn(BIN, ['--http-port', '0', '--ws-port', '0', '--data', data], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    p.stderr.on('data', (s) => { log += s; });
    /* it exits at once; the deadline only fails a daemon that started (or hangs) */
    const t = setTimeout(() => { p.kill('SIGKILL'); reject(new Error('daemon started on a bad store:\n' + log)); }, 60000);
    p.on('exit', (code) => { clearTimeout(t); resolve({ code, log }); });
  });
}

test('a store whose free-page list is corrupt stops start-up and is left untouched', async () => {
  const data = tempDir();
  try {
    const d = await startDaemon({ data });
    try {
      /* Long canonical documents (every joint explicit), so deletes free whole pages. */
      const strand = { anchor: [0, 0.06, -0.09], direction: [0, -1, 0], points: 30, segment_length: 0.01 };
      const made = [];
      for (let i = 0; i < 30; i++) {
        const r = await d.req('POST', '/v1/instances', def({ strands: [strand, strand] }));
        assert.equal(r.status, 201, r.text);
        made.push(r.json);
      }
      for (const m of made.slice(0, 20))
        assert.equal((await d.req('DELETE', `/v1/instances/${m.id}`, undefined, bearer(m.token))).status, 204);
    } finally { await d.cleanup(); }
    const file = join(data, 'ponytail.db');
    const b = readFileSync(file);
    const free = b.readUInt32BE(36);
    assert.ok(free > 0, 'the deletes should have left free pages');
    b.writeUInt32BE(free + 5, 36); /* the header's free-page count disagrees with the list */
    writeFileSync(file, b);
    const before = sha(file), files = readdirSync(data).sort();
    const r = await startFails(data);
    assert.notEqual(r.code, 0);
    assert.match(r.log, /ponytail\.db is unreadable or corrupt \(PRAGMA quick_check: .*freelist/);
    assert.match(r.log, /left untouched/);
    assert.doesNotMatch(r.log, /listening:/);
    assert.equal(sha(file), before);
    assert.deepEqual(readdirSync(data).sort(), files);
  } finally { rmSync(data, { recursive: true, force: true }); }
});

test('a file that is not a database stops start-up and is left untouched', async () => {
  const data = tempDir();
  try {
    const file = join(data, 'ponytail.db');
    writeFileSync(file, 'these are not the bytes of an SQLite database, '.repeat(100));
    const before = sha(file);
    const r = await startFails(data);
    assert.notEqual(r.code, 0);
    assert.match(r.log, /unreadable or corrupt \(PRAGMA quick_check: file is not a database\)/);
    assert.equal(sha(file), before);
  } finally { rmSync(data, { recursive: true, force: true }); }
});
