// Strand codec: the worked example of PROTOCOL.md bit by bit (the same bytes as
// tests/proto/test_strand.c), the quantisation bound, and keyframe/delta equivalence.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  ProtoError, StrandDecoder, StrandEncoder, bytesToHex, decodeMessage,
} from '../../../proto/js/ponytail-proto.mjs';

const line = (points, len) => [{ points, segment_length: len, anchor: [0, 0, 0], direction: [0, 0, 1] }];
const rec = (bytes) => {
  // a record is parsed the way a client gets it: inside a frame batch
  const head = Uint8Array.of(0x50, 0x54, 1, 0, 0x82, 0, 0, 0, 0, 0, ...new Uint8Array(16), 1, 0);
  const msg = Uint8Array.of(...head, ...bytes);
  new DataView(msg.buffer).setUint32(6, msg.length - 10, true);
  return decodeMessage(msg).records[0];
};

test('worked example: key, hold, delta', () => {
  const e = new StrandEncoder(line(2, 1));
  const d = new StrandDecoder(line(2, 1));
  assert.equal(e.bits[0], 13);
  const steps = [
    [[0, 0, 0, 0, 0, 1], '01eefffb7f30', 1],
    [[0, 0, 0, 0, 0, 1], '0100', 0],
    [[0, 0, 0, 1, 0, 0], '010100f0ff03', 0],
  ];
  steps.forEach(([pts, hex, key], i) => {
    e.tick([0, 0, 0], [0, 0, 0, 1], pts);
    const r = rec(e.record(false, 1n, i + 1));
    assert.equal(bytesToHex(r.data), hex);
    assert.equal(r.flags, key);
    assert.deepEqual(Array.from(d.apply(i + 1, r)), pts);
  });
});

test('any direction within 1.42 / M of its code', () => {
  const e = new StrandEncoder(line(2, 1), { max_error_m: 0.01, keyframe_interval: 60 });
  const d = new StrandDecoder(line(2, 1));
  const m = 2 ** (e.bits[0] - 1) - 1;
  let worst = 0;
  for (let i = 0; i < 5000; i++) {
    const z = 1 - 2 * ((i + 0.5) / 5000), a = i * 2.399963229728653, r = Math.sqrt(1 - z * z);
    const pts = Float32Array.of(0, 0, 0, r * Math.cos(a), r * Math.sin(a), z);
    e.tick([0, 0, 0], [0, 0, 0, 1], pts);
    const out = d.apply(i + 1, rec(e.record(false, 1n, 0)));
    const err = Math.hypot(out[3] - pts[3], out[4] - pts[4], out[5] - pts[5]);
    assert.ok(Math.abs(err - e.lastError) < 1e-6);
    worst = Math.max(worst, err);
  }
  assert.ok(worst <= 1.42 / m && worst > 1.2 / m, `${worst * m}`);
});

test('a keyframe and the delta of the same tick leave decoders identical', () => {
  const shape = [{ points: 8, segment_length: 0.04, anchor: [0, 0.1, -0.1], direction: [0, -1, 0] }];
  const e = new StrandEncoder(shape);
  const a = new StrandDecoder(shape), b = new StrandDecoder(shape);
  for (let t = 1; t <= 120; t++) {
    const pts = [];
    let x = 0, y = 1.6, z = -0.1;
    for (let i = 0; i < 8; i++) {
      pts.push(x, y, z);
      const ang = 0.8 * Math.sin(t / 7 - i * 0.3);
      x += 0.04 * Math.sin(ang);
      y -= 0.04 * Math.cos(ang);
    }
    e.tick([0, 1.5, 0], [0, 0, 0, 1], pts);
    const pa = a.apply(t, rec(e.record(false, 1n, t)));
    if (t >= 50) {
      const pb = b.apply(t, rec(e.record(t === 50, 1n, t)));
      assert.deepEqual(pb, pa);
    }
  }
  assert.throws(() => b.apply(122, rec(e.record(false, 1n, 122))), (err) => err instanceof ProtoError && err.code === 'no_key');
});
