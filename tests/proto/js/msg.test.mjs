// Messages: bytes written out by hand from PROTOCOL.md (the same as tests/proto/test_msg.c),
// decoder rejections and the JSON form.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  BONE_NAMES, MINOR, ProtoError, decodeMessage, encodeMessage, encodeRecord, quat16Pack, quat16Unpack, toJSONable,
} from '../../../proto/js/ponytail-proto.mjs';

const B = (...a) => Uint8Array.from(a);
const code = (f) => {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof ProtoError, String(e));
    return e.code;
  }
  return 'ok';
};

test('head_pose with bones (1.2): hand-written bytes, minor rules', () => {
  const f = (x) => [...new Uint8Array(new Float32Array([x]).buffer)];
  const bytes = B(0x50, 0x54, 1, 2, 0x05, 0, 79, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 4, ...f(0), ...f(1.5), ...f(0), ...f(0), ...f(0), ...f(0), ...f(1),
    1, 2, ...f(0), ...f(1.25), ...f(0), ...f(0), ...f(0), ...f(0), ...f(1));
  const m = {
    type: 'head_pose', instance_id: 7n, seq: 1, client_time_us: 0n, flags: 4, p: [0, 1.5, 0], q: [0, 0, 0, 1],
    bones: [{ bone: 2, p: [0, 1.25, 0], q: [0, 0, 0, 1] }],
  };
  assert.deepEqual(encodeMessage(m, 2), bytes);
  const d = decodeMessage(bytes);
  assert.equal(d.bones.length, 1);
  assert.equal(BONE_NAMES[d.bones[0].bone], 'chest');
  assert.equal(BONE_NAMES.length, 54);
  assert.equal(BONE_NAMES[53], 'right_little_distal');
  assert.equal(BONE_NAMES[24], 'left_thumb_metacarpal');
  assert.equal(code(() => encodeMessage(m, 1)), 'flags'); // a 1.1 message has no bones
  assert.equal(code(() => encodeMessage({ ...m, bones: [] }, 2)), 'range');
  // 54 (every body bone once) is the limit; a repeated id is carried as sent
  const all = encodeMessage({ ...m, bones: Array(54).fill(m.bones[0]) }, 2);
  assert.equal(all.length, 10 + 49 + 1 + 54 * 29);
  assert.equal(decodeMessage(all).bones.length, 54);
  assert.equal(code(() => encodeMessage({ ...m, bones: Array(55).fill(m.bones[0]) }, 2)), 'limit');
  const newer = Uint8Array.of(...bytes, 0xaa);
  newer[3] = MINOR + 1;
  newer[6] = 80;
  newer[30] |= 0x80;
  assert.deepEqual(decodeMessage(newer).bones[0].p, [0, 1.25, 0]);
});

test('ping, hello, error: hand-written bytes', () => {
  const ping = B(0x50, 0x54, 1, 0, 0x07, 0, 8, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1);
  assert.deepEqual(encodeMessage({ type: 'ping', client_time_us: 0x0102030405060708n }, 0), ping);
  assert.equal(decodeMessage(ping).client_time_us, 0x0102030405060708n);

  const hello = B(0x50, 0x54, 1, 0, 0x01, 0, 6, 0, 0, 0, 1, 0, 3, 0x77, 0x65, 0x62);
  assert.deepEqual(encodeMessage({ type: 'hello', major: 1, minor: 0, client_name: 'web' }, 0), hello);
  assert.deepEqual({ ...decodeMessage(hello) }, { type: 'hello', major: 1, minor: 0, client_name: 'web' });

  const err = B(0x50, 0x54, 1, 0, 0x85, 0, 16, 0, 0, 0, 4, 0, 1, 5, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0x62, 0x69, 0x67);
  const m = { type: 'error', code: 4, flags: 1, about_type: 5, instance_id: 0n, text: 'big' };
  assert.deepEqual(encodeMessage(m, 0), err);
  assert.deepEqual({ ...decodeMessage(err) }, m);
});

// 1.5f = 0x3fc00000, 1.0f = 0x3f800000, -2.0f = 0xc0000000
const pose = B(
  0x50, 0x54, 1, 0, 0x05, 0, 61, 0, 0, 0,
  7, 0, 0, 0, 0, 0, 0, 0,
  0xff, 0xff, 0xff, 0xff,
  0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
  0x01,
  0, 0, 0, 0, 0, 0, 0xc0, 0x3f, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x3f,
  0, 0, 0, 0xc0, 0, 0, 0, 0, 0, 0, 0, 0,
);

test('head pose: hand-written bytes, optional velocities', () => {
  const m = {
    type: 'head_pose', instance_id: 7n, seq: 0xffffffff, client_time_us: -2n, flags: 1,
    p: [0, 1.5, 0], q: [0, 0, 0, 1], v: [-2, 0, 0], w: [0, 0, 9],
  };
  assert.deepEqual(encodeMessage(m, 0), pose);
  const d = decodeMessage(pose);
  assert.deepEqual(d.v, [-2, 0, 0]);
  assert.equal(d.w, undefined); // not flagged: not sent
  assert.equal(d.header_minor, 0);
});

test('subscribe and frame batch: hand-written bytes', () => {
  const sub = B(0x50, 0x54, 1, 0, 3, 0, 21, 0, 0, 0, 2, 0x72, 0x31, 2, 0, 1, 0, 0, 0, 2, 0, 0, 0, ...Array(8).fill(0xff));
  assert.deepEqual(encodeMessage({ type: 'subscribe', room: 'r1', ids: [(2n << 32n) | 1n, 2n ** 64n - 1n] }, 0), sub);
  assert.deepEqual(decodeMessage(sub).ids, [(2n << 32n) | 1n, 2n ** 64n - 1n]);

  const rec = B(9, 0, 0, 0, 0, 0, 0, 0, 0xc1, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xc0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0xab, 0xcd);
  const r = { id: 9n, flags: 1, last_seq: 5, head_p: [0, 1.5, 0], head_q: quat16Pack([0, 0, 0, -1]), data: B(0xab, 0xcd) };
  assert.deepEqual(encodeRecord(r), rec);
  const batch = B(0x50, 0x54, 1, 0, 0x82, 0, 18 + rec.length, 0, 0, 0, 60, 0, 0, 0, 0, 0, 0, 0, 0x40, 0x42, 0x0f, 0, 0, 0, 0, 0, 1, 0, ...rec);
  assert.deepEqual(encodeMessage({ type: 'frame_batch', tick: 60n, server_time_us: 1000000n, records: [r] }, 0), batch);
  assert.deepEqual(encodeMessage({ type: 'frame_batch', tick: 60n, server_time_us: 1000000n, records: [rec] }, 0), batch);
  const d = decodeMessage(batch);
  assert.deepEqual(toJSONable(d.records[0]), {
    id: '9', flags: 1, last_seq: 5, head_p: [0, 1.5, 0], head_q: { largest: 3, c: [0, 0, 0] }, data: 'abcd',
  });
});

test('every truncation is refused as truncated', () => {
  for (let n = 0; n < pose.length; n++) {
    const b = pose.slice(0, n);
    assert.equal(code(() => decodeMessage(b)), 'truncated', `prefix ${n}`);
    if (n >= 10) {
      b[6] = n - 10; // header agrees: the fields run out instead
      assert.equal(code(() => decodeMessage(b)), 'truncated', `prefix ${n} with length`);
    }
  }
});

test('header rules: magic, version, reserved, size, length, newer minor', () => {
  const p = (at, ...v) => { const b = pose.slice(); b.set(v, at); return b; };
  assert.equal(code(() => decodeMessage(p(1, 0x58))), 'bad_magic');
  assert.equal(code(() => decodeMessage(p(2, 2))), 'version');
  assert.equal(code(() => decodeMessage(p(4, 0x7e))), 'unknown_type');
  assert.equal(code(() => decodeMessage(p(5, 1))), 'flags');
  assert.equal(code(() => decodeMessage(p(9, 1))), 'too_big');
  assert.equal(code(() => decodeMessage(B(...pose, 0))), 'length');
  const longer = B(...pose, 0x55);
  longer[6] = 62;
  assert.equal(code(() => decodeMessage(longer)), 'trailing');
  longer[3] = MINOR;
  assert.equal(code(() => decodeMessage(longer)), 'trailing');
  longer[3] = MINOR + 1; // a newer minor may append fields and use reserved bits
  longer[5] = 0xff;
  const d = decodeMessage(longer);
  assert.equal(d.header_minor, MINOR + 1);
  assert.deepEqual(d.v, [-2, 0, 0]);
});

test('welcome: 1.1 appends max_error_m, 1.0 has none (the C test has the same bytes)', () => {
  const v0 = B(0x50, 0x54, 1, 0, 0x81, 0, 31, 0, 0, 0, 1, 0, 60, 0, 4, 60, 0,
    0, 0x10, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 1, 0x76);
  const v1 = B(0x50, 0x54, 1, 1, 0x81, 0, 35, 0, 0, 0, 1, 1, 60, 0, 4, 60, 0,
    0, 0x10, 0, 0, 0, 4, 1, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 1, 0x76, 0x6f, 0x12, 0x83, 0x3a);
  const m = {
    type: 'welcome', major: 1, minor: 0, tick_hz: 60, substeps: 4, keyframe_interval: 60, max_message: 4096,
    max_subscriptions: 1024, server_time_us: 1n, tick: 9n, server_version: 'v', max_error_m: 0.001,
  };
  assert.deepEqual(encodeMessage(m, 0), v0);
  assert.equal(decodeMessage(v0).max_error_m, undefined);
  assert.deepEqual(encodeMessage({ ...m, minor: 1 }, 1), v1);
  assert.deepEqual(encodeMessage(m), v0); // default: 1.0, which every peer reads
  assert.equal(decodeMessage(v1).max_error_m, Math.fround(0.001));
  assert.equal(code(() => encodeMessage(m, MINOR + 1)), 'invalid');
  assert.equal(code(() => encodeMessage({ ...m, max_error_m: 0 }, 1)), 'range');
  assert.equal(code(() => encodeMessage({ ...m, max_error_m: 1.5 }, 1)), 'range');
  const cut = v1.slice(0, v0.length);
  cut[6] = 31;
  assert.equal(code(() => decodeMessage(cut)), 'truncated');
});

test('hello: a payload major other than 1 is a version error', () => {
  const h = encodeMessage({ type: 'hello', major: 1, minor: 1, client_name: 'x' });
  assert.equal(code(() => encodeMessage({ type: 'hello', major: 2, minor: 0, client_name: 'x' })), 'version');
  for (const major of [0, 2, 255]) {
    const b = h.slice();
    b[10] = major;
    assert.equal(code(() => decodeMessage(b)), 'version');
  }
});

test('encoder refuses what the decoder refuses', () => {
  const m = { ...decodeMessage(pose) };
  assert.equal(code(() => encodeMessage({ ...m, p: [Infinity, 0, 0] })), 'non_finite');
  assert.equal(code(() => encodeMessage({ ...m, q: [0, 0, 0, 0] })), 'range');
  assert.equal(code(() => encodeMessage({ ...m, flags: 0x80 })), 'flags');
  assert.equal(code(() => encodeMessage({ ...m, type: 'nope' })), 'unknown_type');
  assert.equal(code(() => encodeMessage({ type: 'hello', major: 1, minor: 0, client_name: 'x'.repeat(65) })), 'limit');
  assert.equal(code(() => encodeMessage({ type: 'authorize', instance_id: 1n, token: '' })), 'range');
  assert.equal(code(() => encodeMessage({ type: 'subscribe', room: '', ids: Array(257).fill(1n) })), 'limit');
  assert.equal(code(() => encodeMessage({ type: 'ping', client_time_us: 2n ** 63n })), 'invalid');
});

test('quat16: ties, sign, precision', () => {
  const p = quat16Pack([0, 0.70710677, 0, 0.70710677]);
  assert.deepEqual(p, { largest: 1, c: [0, 0, 32767] });
  assert.equal(code(() => quat16Pack([0, 0, 0, 0])), 'range');
  assert.equal(code(() => quat16Pack([NaN, 0, 0, 1])), 'non_finite');
  for (let i = 0; i < 1000; i++) {
    const r = [0, 1, 2, 3].map((k) => Math.fround(Math.sin(i * 1.7 + k * 2.3 + i * k * 0.01)));
    const n = Math.hypot(...r);
    const u = quat16Unpack(quat16Pack(r));
    const s = Math.sign(u.reduce((a, x, k) => a + x * r[k], 0));
    for (let k = 0; k < 4; k++) assert.ok(Math.abs(u[k] - s * r[k] / n) < 3e-5);
  }
});
