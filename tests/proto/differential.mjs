// Differential check of the C and JS decoders (run by differential.test.sh): mutates the
// golden vectors at random (fixed seed), feeds the same bytes to both, and requires the
// same error name for every message and, for strand records, the same error or the same
// decoded floats bit for bit. Usage: node differential.mjs DRIVER [COUNT]
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import {
  BatchClock, CompactDecoder, StrandDecoder, decodeBatchC, decodeMessage, encodeMessage, encodeRecord, hexToBytes,
} from '../../proto/js/ponytail-proto.mjs';

const [driver, countArg] = process.argv.slice(2);
const count = Number(countArg ?? 20000);
const vec = join(process.env.PT_ROOT ?? process.cwd(), 'proto', 'vectors');
let seed = 20240601;
const rnd = (n) => { // mulberry32: 32-bit integer arithmetic only, so every value is exact
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) % n;
};
const u32 = (x) => { const b = Buffer.alloc(4); b.writeUInt32LE(x); return b; };
const errorOf = (f) => {
  try {
    return [f(), 'ok'];
  } catch (e) {
    if (!e.code) throw e;
    return [null, e.code];
  }
};
function mutate(b, headerAware) {
  let d = Uint8Array.from(b);
  for (let j = 1 + rnd(4); j > 0; j--) {
    const op = rnd(headerAware ? 5 : 4);
    if (op === 0 && d.length) d[rnd(d.length)] = rnd(256);
    else if (op === 1 && d.length) d[rnd(d.length)] ^= 1 << rnd(8);
    else if (op === 2) d = d.subarray(0, rnd(d.length + 1));
    else if (op === 3) d = Uint8Array.of(...d, rnd(256));
    else if (op === 4 && d.length >= 10) new DataView(d.buffer, d.byteOffset).setUint32(6, d.length - 10 + rnd(3) - 1 >>> 0, true);
  }
  return d;
}
function run(input, label) {
  const r = spawnSync(driver, [], { input, maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`${label}: driver exited ${r.status}: ${r.stderr}`);
  return r.stdout.toString().trim().split('\n');
}
let failures = 0;
function compare(label, want, got, inputs) {
  if (got.length !== want.length) throw new Error(`${label}: ${got.length} results for ${want.length} inputs`);
  for (let i = 0; i < want.length; i++) {
    if (want[i] !== got[i] && failures++ < 10) {
      console.error(`${label} #${i}: JS ${want[i]}, C ${got[i]}: ${Buffer.from(inputs[i]).toString('hex')}`);
    }
  }
}

// Messages: every valid and invalid vector, mutated.
const seeds = ['valid', 'invalid'].flatMap((sub) => readdirSync(join(vec, sub))
  .filter((f) => f.endsWith('.bin')).sort().map((f) => new Uint8Array(readFileSync(join(vec, sub, f)))));
const msgs = Array.from({ length: count }, () => mutate(seeds[rnd(seeds.length)], true));
const wantM = msgs.map((b) => errorOf(() => decodeMessage(b))[1]);
compare('message', wantM, run(Buffer.concat([Buffer.from('M'), ...msgs.flatMap((b) => [u32(b.length), Buffer.from(b)])]), 'message'), msgs);

// Strand records: the swing stream's records with mutated data, after its keyframe.
const v = JSON.parse(readFileSync(join(vec, 'stream', 'swing.json'), 'utf8'));
const parse = (bytes) => decodeMessage(encodeMessage({ type: 'frame_batch', tick: 0n, server_time_us: 0n, records: [bytes] })).records[0];
const key = hexToBytes(v.steps[0].record);
const bases = v.steps.map((s) => parse(hexToBytes(s.record)));
const head = [Buffer.from([0x53, v.shape.length])];
for (const s of v.shape) {
  const b = Buffer.alloc(29);
  b[0] = s.points;
  [s.segment_length, ...s.anchor, ...s.direction].forEach((x, i) => b.writeFloatLE(x, 1 + 4 * i));
  head.push(b);
}
head.push(u32(key.length), Buffer.from(key));
const recs = [];
const wantS = [];
const body = [];
for (let i = 0; i < count; i++) {
  const base = bases[rnd(bases.length)];
  const rec = encodeRecord({ ...base, data: mutate(base.data, false) });
  const tick = rnd(10) === 0 ? 3 : 2;
  const dec = new StrandDecoder(v.shape);
  dec.apply(1, parse(key));
  const [pts, e] = errorOf(() => dec.apply(tick, parse(rec)));
  let h = 0n;
  if (pts) {
    h = 1469598103934665603n;
    for (const x of new Uint32Array(pts.buffer)) h = ((h ^ BigInt(x)) * 1099511628211n) & 0xffffffffffffffffn;
  }
  wantS.push(`${e} ${h.toString(16).padStart(16, '0')}`);
  recs.push(rec);
  body.push(u32(tick), u32(rec.length), Buffer.from(rec));
}
compare('strand', wantS, run(Buffer.concat([...head, ...body]), 'strand'), recs);

// Compact frames (PROTOCOL.md 11): compact_swing's messages, mutated, each decoded with a
// clock at tick 1 and applied after its keyframe (the driver's 'C' mode says how).
const cv = JSON.parse(readFileSync(join(vec, 'compact', 'compact_swing.json'), 'utf8'));
const cmsgs = cv.steps.filter((s) => s.message).map((s) => hexToBytes(s.message));
const ckeyRec = decodeBatchC(cmsgs[0]).records[0];
const chead = [Buffer.from([0x43, cv.shape.length])];
for (const s of cv.shape) {
  const b = Buffer.alloc(29);
  b[0] = s.points;
  [s.segment_length, ...s.anchor, ...s.direction].forEach((x, i) => b.writeFloatLE(x, 1 + 4 * i));
  chead.push(b);
}
const cin = [];
const wantC = [];
const cbody = [];
for (let i = 0; i < count; i++) {
  const m = mutate(cmsgs[1 + rnd(cmsgs.length - 1)], true);
  const dec = new CompactDecoder(cv.shape);
  dec.applyCompact(1n, 1n, ckeyRec);
  const clock = new BatchClock(1n, 0n, 60);
  const [b, be0] = errorOf(() => decodeBatchC(m));
  let be = be0, e = 'invalid', h = 0n, seq = 0;
  if (b) {
    const [, ce] = errorOf(() => clock.advance(b));
    be = ce;
  }
  if (be === 'ok' && b.records.length) {
    const [got, ae] = errorOf(() => dec.applyCompact(clock.tick, 1n, b.records[0]));
    e = ae;
    if (got) {
      h = 1469598103934665603n;
      for (const x of new Uint32Array(got.points.buffer)) h = ((h ^ BigInt(x)) * 1099511628211n) & 0xffffffffffffffffn;
      seq = got.last_seq;
    }
  }
  wantC.push(`${be} ${e} ${h.toString(16).padStart(16, '0')} ${seq}`);
  cin.push(m);
  cbody.push(u32(m.length), Buffer.from(m));
}
chead.push(u32(cmsgs[0].length), Buffer.from(cmsgs[0]));
compare('compact', wantC, run(Buffer.concat([...chead, ...cbody]), 'compact'), cin);

const kinds = (a) => new Set(a.map((x) => x.split(' ')[0])).size;
console.log(`differential: ${count} messages (${kinds(wantM)} outcomes), ${count} strand records (${kinds(wantS)} outcomes), ${count} compact messages (${new Set(wantC.map((x) => x.split(' ').slice(0, 2).join(' '))).size} outcomes), ${failures} disagreements`);
process.exit(failures ? 1 : 0);
