#!/usr/bin/env node
// Seeds the fuzz_proto_decode and fuzz_proto_strand corpora from the golden vectors (run
// from the repo root: node tests/fuzz/make-corpus.mjs). The schema, VMC and VRM targets'
// seeds (instance definitions, tracker packets, VRM 0.x / 1.0 files with their export
// quirks) are written by tests/fuzz/make_seeds.py (Python stdlib: python3
// tests/fuzz/make_seeds.py [schema|vmc|vrm]...). libFuzzer names its own finds by content
// hash; the seeds keep readable names.
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const vec = 'proto/vectors';
const out = 'tests/fuzz/corpus';
const msgDir = join(out, 'fuzz_proto_decode');
const strandDir = join(out, 'fuzz_proto_strand');
mkdirSync(msgDir, { recursive: true });
mkdirSync(strandDir, { recursive: true });

for (const sub of ['valid', 'invalid']) {
  for (const f of readdirSync(join(vec, sub)).filter((x) => x.endsWith('.bin'))) {
    copyFileSync(join(vec, sub, f), join(msgDir, `${sub}_${f.slice(0, -4)}`));
  }
}

// Records of the stream vectors: whole frame batches for the message target, bare strand
// data (after the 33-byte record header) for the strand target.
const batch = (rec) => {
  const b = Buffer.alloc(28 + rec.length);
  b.write('PT', 0, 'latin1');
  b[2] = 1;
  b[4] = 0x82;
  b.writeUInt32LE(18 + rec.length, 6);
  b.writeUInt16LE(1, 26);
  rec.copy(b, 28);
  return b;
};
for (const f of readdirSync(join(vec, 'stream')).filter((x) => x.endsWith('.json'))) {
  const v = JSON.parse(readFileSync(join(vec, 'stream', f), 'utf8'));
  v.steps.filter((s) => s.record).slice(0, 4).forEach((s, i) => {
    const rec = Buffer.from(s.record, 'hex');
    const name = `${f.slice(0, -5)}_${i}`;
    writeFileSync(join(strandDir, name), rec.subarray(33));
    if (i === 0) writeFileSync(join(msgDir, `batch_${name}`), batch(rec));
  });
}
