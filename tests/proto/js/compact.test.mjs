// The compact coding (PROTOCOL.md 11) on the JS side: proto/vectors/compact/ (written by
// tests/proto/test_compact.c from the C encoder) decoded by proto/js/compact.mjs to the
// same ticks, errors, points and head poses, bit for bit; hand-built framing errors; the
// hello features field of minor 2.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import {
  BatchClock, CompactDecoder, FRAME_BATCH_C, MINOR, decodeBatchC, decodeMessage, hexToBytes,
} from '../../../proto/js/ponytail-proto.mjs';

const dir = join(process.env.PT_ROOT ?? process.cwd(), 'proto', 'vectors', 'compact');
const names = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

test('compact vectors exist', () => assert.ok(names.length >= 6));

for (const name of names) {
  test(`compact/${name}`, () => {
    const v = JSON.parse(readFileSync(join(dir, name), 'utf8'));
    const dec = new CompactDecoder(v.shape);
    const clock = new BatchClock(v.welcome_tick, v.welcome_time_us, v.tick_hz);
    let applied = 0;
    for (const st of v.steps) {
      if (!st.message) continue;
      const b = decodeBatchC(hexToBytes(st.message));
      clock.advance(b);
      assert.equal(clock.tick, BigInt(st.tick), `tick ${st.tick}`);
      assert.equal(clock.time_us, BigInt(st.time_us), `tick ${st.tick} time`);
      assert.equal(b.records.length, 1);
      assert.equal(b.records[0].step, v.step, `tick ${st.tick}: the record's step`);
      let got;
      let err = 'ok';
      try {
        got = dec.applyCompact(clock.tick, b.records[0].step, b.records[0]);
      } catch (e) {
        if (!e.code) throw e;
        err = e.code;
      }
      assert.equal(err, st.expect, `tick ${st.tick}`);
      if (err !== 'ok') continue;
      assert.deepEqual(Array.from(got.points), st.decoded.flat(), `tick ${st.tick} points`);
      assert.equal(got.last_seq, st.head.last_seq);
      assert.deepEqual(got.head_p, st.head.head_p);
      assert.deepEqual(got.head_q, { largest: st.head.largest, c: st.head.c });
      applied++;
    }
    assert.ok(applied >= 10);
  });
}

const batch = (payload, minor = 2, reserved = 0) => Uint8Array.of(
  0x50, 0x54, 1, minor, FRAME_BATCH_C, reserved, payload.length, 0, 0, 0, ...payload);

test('frame_batch_c framing errors', () => {
  const cases = [
    [[0, 0, 0], 'ok'],
    [[0x80, 0x00, 0, 0], 'range'], // a varint longer than needed
    [[0x80], 'truncated'],
    [[0x81, 0x80, 0x80, 0x80, 0x10, 0, 0], 'range'], // tick_gap 2^32 + 1
    [[0, 0, 1], 'count'],
    [[0, 0, 0, 0], 'trailing'],
    [[0, 0, 1, 0x01, 0x05, 0x00, 0x80, 0x80, 0x04], 'range'], // body_len > 65535
    [[0, 0, 1, 0x01, 0x05, 0x00, 0x02, 0xaa], 'truncated'],
  ];
  for (const [p, want] of cases) {
    let got = 'ok';
    try {
      decodeBatchC(batch(p));
    } catch (e) {
      got = e.code;
    }
    assert.equal(got, want, JSON.stringify(p));
  }
  // flags bits 2..5 are the stream's step - 1 (PROTOCOL.md 11.2), kept out of flags
  const s = decodeBatchC(batch([0, 0, 2, 0x01, 0x05, 0x17, 0x00, 0x01, 0x06, 0x3c, 0x00]));
  assert.deepEqual(s.records.map((r) => [r.flags, r.step]), [[0x03, 6], [0x00, 16]]);
  assert.equal(decodeBatchC(batch([0, 0, 1, 0x01, 0x05, 0xc3, 0x00])).records[0].step, 1);
  // a newer minor: the reserved header byte and trailing bytes are ignored
  const b = decodeBatchC(batch([0, 0, 1, 0x01, 0x05, 0x3c, 0x01, 0xaa, 0xee], MINOR + 1, 9));
  assert.equal(b.records[0].id, (1n << 32n) | 5n);
  assert.equal(b.records[0].flags, 0);
  assert.equal(b.records[0].step, 16);
});

test('hello: features from minor 2 on', () => {
  const hello = (minor, extra) => Uint8Array.of(0x50, 0x54, 1, minor, 1, 0, 4 + extra.length, 0, 0, 0,
    1, 2, 1, 0x61, ...extra);
  assert.equal(decodeMessage(hello(2, [1])).features, 1);
  assert.equal(decodeMessage(hello(1, [])).features, undefined);
});
