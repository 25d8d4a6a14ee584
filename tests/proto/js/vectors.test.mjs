// Golden vectors (proto/vectors), the same files tests/proto/test_vectors.c runs:
// valid messages decode to their JSON and re-encode byte for byte; invalid ones fail with
// the stored error; strand streams re-encode to the stored records and decode to the
// stored points exactly, within max_error_m of the encoder's input.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import {
  StrandDecoder, StrandEncoder, bytesToHex, decodeBatchC, decodeMessage, encodeMessage, hexToBytes, toJSONable,
} from '../../../proto/js/ponytail-proto.mjs';

const dir = join(process.env.PT_ROOT ?? process.cwd(), 'proto', 'vectors');
const names = (sub, ext) => readdirSync(join(dir, sub)).filter((f) => f.endsWith(ext)).map((f) => f.slice(0, -ext.length)).sort();
const json = (...p) => JSON.parse(readFileSync(join(dir, ...p), 'utf8'));
const bin = (...p) => new Uint8Array(readFileSync(join(dir, ...p)));

test('vector sets are not empty', () => {
  assert.ok(names('valid', '.bin').length >= 20);
  assert.ok(names('invalid', '.bin').length >= 40);
  assert.ok(names('stream', '.json').length >= 10);
});

for (const name of names('valid', '.bin')) {
  test(`valid/${name}`, () => {
    const b = bin('valid', `${name}.bin`);
    const want = json('valid', `${name}.json`);
    const m = decodeMessage(b);
    const got = toJSONable(m);
    if (m.header_minor !== 0) got.header_minor = m.header_minor;
    assert.deepEqual(got, want);
    assert.equal(bytesToHex(encodeMessage(want, want.header_minor ?? 0)), bytesToHex(b));
  });
}

for (const name of names('invalid', '.bin')) {
  test(`invalid/${name}`, () => {
    const { error, coding } = json('invalid', `${name}.json`);
    // "coding": "compact": a frame_batch_c, for the compact batch decoder (PROTOCOL.md 11.1)
    const decode = coding === 'compact' ? decodeBatchC : decodeMessage;
    assert.throws(() => decode(bin('invalid', `${name}.bin`)), (e) => e.code === error);
  });
}

// through a batch of this document's minor: a record's step exists from 1.2 on
const recordOf = (hex) => decodeMessage(encodeMessage({
  type: 'frame_batch', tick: 0n, server_time_us: 0n, records: [hexToBytes(hex)],
}, 3)).records[0];

for (const name of names('stream', '.json')) {
  test(`stream/${name}`, () => {
    const v = json('stream', `${name}.json`);
    const enc = v.params ? new StrandEncoder(v.shape, v.params) : null;
    const dec = new StrandDecoder(v.shape);
    let input = null;
    let checked = 0;
    for (const s of v.steps) {
      if (s.input) {
        input = s.input;
        enc.tick(input.head_p, input.head_q, input.points.flat());
      }
      if (!s.record) continue;
      if (enc) {
        const mine = enc.record(s.key, 1n, Number(s.tick));
        if (v.step > 1) mine[8] |= (v.step - 1) << 1; // a rate stream's step, set as the server does
        assert.equal(bytesToHex(mine), s.record, `tick ${s.tick}`);
      }
      let got = 'ok';
      let pts = null;
      try {
        pts = dec.apply(BigInt(s.tick), recordOf(s.record));
      } catch (e) {
        got = e.code;
      }
      assert.equal(got, s.expect, `tick ${s.tick}`);
      if (!pts) continue;
      assert.deepEqual(Array.from(pts), s.decoded.flat(), `tick ${s.tick}`);
      if (enc) {
        const want = input.points.flat();
        for (let i = 0; i < want.length; i += 3) {
          const e = Math.hypot(pts[i] - want[i], pts[i + 1] - want[i + 1], pts[i + 2] - want[i + 2]);
          assert.ok(e <= v.params.max_error_m, `tick ${s.tick} point ${i / 3}: ${e}`);
        }
      }
      checked++;
    }
    assert.ok(checked > 0 || v.steps.some((s) => s.expect !== 'ok'));
  });
}
