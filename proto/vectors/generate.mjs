#!/usr/bin/env node
// Writes the golden vectors (proto/vectors/README.md). Run from the repo root:
//   node proto/vectors/generate.mjs
// The bytes come from the JS module; they are trusted only because the C tests and the JS
// tests both decode every one to the stored JSON and re-encode it byte for byte, and both
// suites also check hand-written bytes for small messages and the worked strand example.
// Deterministic: the synthetic strands use only fround'ed arithmetic of fixed inputs.

import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { bytesToHex, decodeMessage, encodeMessage, encodeRecord, hexToBytes, quat16Pack, toJSONable } from '../js/msg.mjs';
import { StrandDecoder, StrandEncoder } from '../js/strand.mjs';
import { decodeBatchC } from '../js/compact.mjs';
import { MISREADINGS, basis, keyData, reconstruct } from './recon.mjs';

const root = dirname(fileURLToPath(import.meta.url));
const f32 = Math.fround;

function clean(dir) {
  mkdirSync(join(root, dir), { recursive: true });
  for (const f of readdirSync(join(root, dir))) rmSync(join(root, dir, f));
}

// Pretty enough to diff, compact enough to keep: arrays without objects on one line.
function format(v, pad = '') {
  if (Array.isArray(v) && v.some((x) => x && typeof x === 'object' && !Array.isArray(x))) {
    return `[\n${v.map((x) => pad + ' ' + format(x, pad + ' ')).join(',\n')}\n${pad}]`;
  }
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const body = Object.entries(v).map(([k, x]) => `${pad} ${JSON.stringify(k)}: ${format(x, pad + ' ')}`);
    return `{\n${body.join(',\n')}\n${pad}}`;
  }
  return JSON.stringify(v);
}

function json(path, obj) {
  writeFileSync(join(root, path), format(obj) + '\n');
}

// ---- valid messages

const identity = quat16Pack([0, 0, 0, 1]);
const record = (id, seq, data) => ({
  id, flags: 0, last_seq: seq, head_p: [0.25, 1.5, -0.125], head_q: quat16Pack([0.1, 0.7, -0.05, 0.7]), data,
});
const twin = [-0.05, 0.05].map((x) => ({ points: 12, segment_length: 0.03, anchor: [x, 0.04, -0.11], direction: [0, -1, 0] }));
// A whole avatar's count of chains (1.3): n short strands, every value exact in binary32.
const many = (n) => Array.from({ length: n }, (_, i) => ({
  points: 2 + (i % 3), segment_length: 0.0625, anchor: [(i % 16) * 0.0625 - 0.5, 1 - (i >> 4) * 0.0625, 0.125], direction: [0, -1, (i % 5) * 0.25],
}));

// header_minor: the minor written in the header (0 unless given).
const welcome = {
  type: 'welcome', major: 1, minor: 0, tick_hz: 60, substeps: 4, keyframe_interval: 60, max_message: 4096,
  max_subscriptions: 1024, server_time_us: 1700000000000000n, tick: 3600n, server_version: 'ponytaild 0.1.0',
};
const valid = {
  hello: { type: 'hello', major: 1, minor: 0, client_name: 'ponytail-web/0.1' },
  hello_v1: { type: 'hello', header_minor: 1, major: 1, minor: 1, client_name: 'ponytail-py/1.1' },
  hello_empty_name: { type: 'hello', major: 1, minor: 3, client_name: '' },
  authorize: { type: 'authorize', instance_id: (3n << 32n) | 17n, token: 'pt_4f9a0c1e8b7d6a5f' },
  subscribe_ids: { type: 'subscribe', room: '', ids: [1n, (1n << 32n) | 2n, 0xffffffffffffffffn] },
  subscribe_room: { type: 'subscribe', room: 'lobby', ids: [] },
  subscribe_rate: { type: 'subscribe', header_minor: 2, room: 'lobby', ids: [7n], rate_hz: 10 },
  unsubscribe_v2: { type: 'unsubscribe', header_minor: 2, room: '', ids: [7n] },
  unsubscribe: { type: 'unsubscribe', room: 'caf\u00e9-2', ids: [5n] },
  head_pose: {
    type: 'head_pose', instance_id: 1n, seq: 1, client_time_us: 1700000000123456n, flags: 0,
    p: [0, 1.5, 0], q: [0, 0, 0, 1],
  },
  head_pose_imu: {
    type: 'head_pose', instance_id: 1n, seq: 4294967295, client_time_us: -1n, flags: 3,
    p: [0.1, 1.62, -0.3], q: [0.0436, 0.3827, -0.0181, 0.9227], v: [0, 0.5, -1.25], w: [0.2, -3.5, 0],
  },
  // 1.2: body-bone poses next to the head's (flags bit 2); ids are PROTOCOL.md's table
  head_pose_bones: {
    type: 'head_pose', header_minor: 2, instance_id: 1n, seq: 2, client_time_us: 1700000000140123n, flags: 4,
    p: [0, 1.5, 0], q: [0, 0.3827, 0, 0.9239],
    bones: [
      { bone: 2, p: [0, 1.22, 0.02], q: [0, 0, 0, 1] },
      { bone: 16, p: [0.06, 1.3, 0], q: [0, 0, -0.1305, 0.9914] },
    ],
  },
  head_pose_imu_bones: {
    type: 'head_pose', header_minor: 2, instance_id: (2n << 32n) | 5n, seq: 3, client_time_us: 0n, flags: 7,
    p: [0.1, 1.62, -0.3], q: [0, 0, 0, 2], v: [0, 0, 1], w: [0, 1, 0],
    bones: [{ bone: 53, p: [-0.5, 1.0, 0.25], q: [0.5, 0.5, 0.5, 0.5] }],
  },
  // every body bone (the limit, 54), last id first, each its own pose: 49 + 1 + 54 * 29 B
  head_pose_all_bones: {
    type: 'head_pose', header_minor: 2, instance_id: 9n, seq: 5, client_time_us: 1700000000150000n, flags: 4,
    p: [0, 1.5, 0], q: [0, 0, 0, 1],
    bones: Array.from({ length: 54 }, (_, i) => {
      const id = 53 - i, a = 0.05 * id;
      return { bone: id, p: [0.01 * id - 0.25, 0.02 * id, 0.1 - 0.003 * id], q: [0, Math.sin(a / 2), 0, Math.cos(a / 2)] };
    }),
  },
  // the same bone twice: valid; the later applies (PROTOCOL.md 5)
  head_pose_bones_repeat: {
    type: 'head_pose', header_minor: 2, instance_id: 9n, seq: 6, client_time_us: 0n, flags: 4,
    p: [0, 1.5, 0], q: [0, 0, 0, 1],
    bones: [
      { bone: 19, p: [0.3, 1.0, 0], q: [0, 0, 0, 1] },
      { bone: 19, p: [0.35, 1.05, 0.1], q: [0, 0, 0.7071, 0.7071] },
    ],
  },
  hello_v2: { type: 'hello', header_minor: 2, major: 1, minor: 2, client_name: 'ponytail-body/1.2' },
  keyframe_request: { type: 'keyframe_request', ids: [7n, 8n] },
  ping: { type: 'ping', client_time_us: 123456789n },
  welcome,
  welcome_v1: { ...welcome, header_minor: 1, minor: 1, max_error_m: f32(0.001) },
  frame_batch_empty: { type: 'frame_batch', tick: 0n, server_time_us: 0n, records: [] },
  frame_batch: {
    type: 'frame_batch', tick: 12n, server_time_us: 200000n,
    records: [
      { id: 1n, flags: 1, last_seq: 0, head_p: [0, 1.5, 0], head_q: identity, data: Uint8Array.of(1, 0xee, 0xff, 0xfb, 0x7f, 0x30) },
      record((1n << 32n) | 2n, 77, Uint8Array.of(2, 0, 0)),
      record(3n, 78, new Uint8Array(0)),
    ],
  },
  frame_batch_step: {
    type: 'frame_batch', header_minor: 2, tick: 18n, server_time_us: 300000n,
    records: [{ ...record(4n, 9, Uint8Array.of(1, 0)), step: 6 }, record(5n, 9, Uint8Array.of(1, 0))],
  },
  // 1.4: a key record's data ends with the instance's state hash (PROTOCOL.md 6); the
  // same records at 1.3 (frame_batch_hash_v3) are the bytes they always were
  frame_batch_hash: {
    type: 'frame_batch', header_minor: 4, tick: 12n, server_time_us: 200000n,
    records: [
      { id: 1n, flags: 1, last_seq: 0, head_p: [0, 1.5, 0], head_q: identity, data: Uint8Array.of(1, 0xee, 0xff, 0xfb, 0x7f, 0x30), state_hash: 0x0123456789abcdefn },
      record((1n << 32n) | 2n, 77, Uint8Array.of(2, 0, 0)),
      { ...record(3n, 78, Uint8Array.of(1, 0)), flags: 1, step: 2, state_hash: 0xfedcba9876543210n },
    ],
  },
  frame_batch_hash_v3: {
    type: 'frame_batch', header_minor: 3, tick: 12n, server_time_us: 200000n,
    records: [
      { id: 1n, flags: 1, last_seq: 0, head_p: [0, 1.5, 0], head_q: identity, data: Uint8Array.of(1, 0xee, 0xff, 0xfb, 0x7f, 0x30) },
      record((1n << 32n) | 2n, 77, Uint8Array.of(2, 0, 0)),
      { ...record(3n, 78, Uint8Array.of(1, 0)), flags: 1, step: 2 },
    ],
  },
  instance_added: { type: 'instance_event', kind: 'added', instance_id: 1n, tick: 1n, name: 'alice', room: 'lobby', shape: twin },
  instance_changed: {
    type: 'instance_event', kind: 'changed', instance_id: 1n, tick: 99n, name: '', room: '',
    shape: [{ points: 64, segment_length: 10, anchor: [1e-7, -2.5, 3.4e38], direction: [0.001, 0, 0] }],
  },
  instance_removed: { type: 'instance_event', kind: 'removed', instance_id: 1n, tick: 100n },
  instance_added_40: { type: 'instance_event', header_minor: 3, kind: 'added', instance_id: 7n, tick: 1n, name: 'alice', room: 'lobby', shape: many(40) },
  instance_added_256: { type: 'instance_event', header_minor: 3, kind: 'added', instance_id: 8n, tick: 1n, name: 'alice', room: 'lobby', shape: many(256) },
  instance_reset: { type: 'instance_event', kind: 'reset', instance_id: 2n, tick: 5n, name: 'bob', room: 'r', shape: twin.slice(0, 1) },
  pong: { type: 'pong', client_time_us: 123456789n, server_time_us: -9007199254740993n },
  error: { type: 'error', code: 5, flags: 0, about_type: 0x05, instance_id: 1n, text: 'no token for instance 1' },
  error_closing: { type: 'error', code: 4, flags: 1, about_type: 0, instance_id: 0n, text: '' },
};

// ---- invalid messages: [bytes, expected error, what it shows]

const bytesOf = (name) => encodeMessage(valid[name], valid[name].header_minor ?? 0);
const patch = (b, at, ...v) => {
  const c = Uint8Array.from(b);
  c.set(v, at);
  return c;
};
const setLen = (b, n) => {
  const c = Uint8Array.from(b);
  new DataView(c.buffer).setUint32(6, n, true);
  return c;
};
const pose = bytesOf('head_pose');
const poseBones = bytesOf('head_pose_bones'); // flags at 30, count at 59, bone 0 at 60, bone 1 at 89
const hello = bytesOf('hello');
const batch = bytesOf('frame_batch');
const ev = bytesOf('instance_added');
const helloFeatures = encodeMessage({ type: 'hello', major: 1, minor: 2, client_name: 'compact', features: 1 }, 2);
const ev40 = bytesOf('instance_added_40'); // header minor 3; strand count at 39
const ev256 = bytesOf('instance_added_256'); // header minor 3; 0 at 39, u16 count at 40

const invalid = {
  empty: [new Uint8Array(0), 'truncated', 'no header at all'],
  header_cut: [pose.subarray(0, 9), 'truncated', 'nine bytes of a ten-byte header'],
  payload_cut: [pose.subarray(0, pose.length - 1), 'truncated', 'header declares one byte more than present'],
  field_cut: [setLen(pose.subarray(0, pose.length - 4), pose.length - 14), 'truncated', 'header agrees, but q.w is missing'],
  bad_magic: [patch(pose, 0, 0x50, 0x55), 'bad_magic', '"PU" instead of "PT"'],
  version_major_2: [patch(pose, 2, 2), 'version', 'major version 2'],
  version_major_0: [patch(pose, 2, 0), 'version', 'major version 0'],
  unknown_type: [patch(pose, 4, 0x7e), 'unknown_type', 'type 0x7e is not in the catalogue'],
  unknown_type_server: [patch(pose, 4, 0x86), 'unknown_type', 'type 0x86 is not in the catalogue'],
  reserved_byte: [patch(pose, 5, 1), 'flags', 'reserved header byte not zero in minor 0'],
  too_big: [setLen(pose, (1 << 20) + 1), 'too_big', 'declared payload one byte over 1 MiB'],
  extra_bytes: [Uint8Array.of(...pose, 0), 'length', 'one byte after the declared payload'],
  trailing_field: [setLen(Uint8Array.of(...pose, 0), pose.length - 9), 'trailing', 'payload one byte longer than its fields'],
  nan_position: [patch(pose, 31, 0, 0, 0xc0, 0x7f), 'non_finite', 'p.x is a quiet NaN'],
  inf_orientation: [patch(pose, 55, 0, 0, 0x80, 0xff), 'non_finite', 'q.w is -infinity'],
  zero_quaternion: [patch(pose, 55, 0, 0, 0, 0), 'range', 'q = (0, 0, 0, 0)'],
  pose_flags: [patch(pose, 30, 4), 'flags', 'unknown head_pose flag bit 2'],
  pose_missing_velocity: [patch(pose, 30, 1), 'truncated', 'flag says velocity follows, it does not'],
  pose_bones_in_v1: [patch(poseBones, 3, 1), 'flags', 'head_pose flag bit 2 (bones) in a header-minor-1 message: reserved before 1.2'],
  pose_bones_in_v0: [patch(poseBones, 3, 0), 'flags', 'head_pose flag bit 2 (bones) in a header-minor-0 message'],
  pose_bones_count_zero: [setLen(patch(poseBones.subarray(0, 60), 59, 0), 50), 'range', 'bones flagged, count 0'],
  pose_bones_over_limit: [patch(poseBones, 59, 55), 'limit', '55 bones (limit 54, every body bone once), checked before the bytes'],
  pose_bones_over_bytes: [patch(poseBones, 59, 3), 'count', 'three bones claimed, bytes for two (29 B each)'],
  pose_bones_missing: [setLen(poseBones.subarray(0, 59), 49), 'truncated', 'flag says bones follow, no count'],
  pose_bones_cut: [setLen(poseBones.subarray(0, poseBones.length - 1), poseBones.length - 11), 'count', 'last bone cut by one byte: the count is checked against the bytes left before any bone is read'],
  pose_bone_id: [patch(poseBones, 89, 54), 'range', 'bone id 54 (ids are 0..53)'],
  pose_bone_id_head: [patch(poseBones, 60, 0xff), 'range', 'bone id 255'],
  pose_bone_nan: [patch(poseBones, 61, 0, 0, 0xc0, 0x7f), 'non_finite', 'bone 0 p.x is NaN'],
  pose_bone_quat_zero: [patch(poseBones, 73, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 'range', 'bone 0 q = (0, 0, 0, 0)'],
  pose_bones_trailing: [setLen(Uint8Array.of(...poseBones, 0), poseBones.length - 9), 'trailing', 'a byte after the last bone at the decoder\'s own minor'],
  ids_count_over_bytes: [patch(bytesOf('keyframe_request'), 10, 3), 'count', 'count 3, bytes for 2 ids'],
  ids_count_over_limit: [setLen(Uint8Array.of(...bytesOf('subscribe_room').subarray(0, 16), 0x01, 0x01), 8), 'limit', '257 ids (limit 256)'],
  record_hash_cut: [patch(batch, 3, 4), 'truncated', 'a 1.3 batch\'s key record (6 bytes of data) in a header minor 4 batch: the state hash, the last 8 bytes of a 1.4 key record\'s data, is cut short'],
  record_step_v1: [patch(bytesOf('frame_batch_step'), 3, 1), 'flags', 'a 1.2 record step (flags bits 1..5) in a header minor 1 batch'],
  subscribe_rate_45: [patch(bytesOf('subscribe_rate'), bytesOf('subscribe_rate').length - 1, 45), 'range', 'rate_hz 45: only 0, 60, 30, 20 or 10'],
  subscribe_rate_cut: [setLen(bytesOf('subscribe_rate').subarray(0, bytesOf('subscribe_rate').length - 1), bytesOf('subscribe_rate').length - 11),
    'truncated', 'header minor 2 without the 1.2 rate_hz byte'],
  subscribe_v1_trailing_rate: [patch(bytesOf('subscribe_rate'), 3, 1), 'trailing', 'header minor 1 carrying the 1.2 rate_hz: in 1.1 it is a byte too many'],
  name_over_limit: [(() => {
    const b = encodeMessage({ type: 'hello', major: 1, minor: 0, client_name: 'x'.repeat(64) }, 0);
    return setLen(Uint8Array.of(...b.subarray(0, 12), 65, ...b.subarray(13), 0x78), 68);
  })(), 'limit', 'client name of 65 bytes (limit 64)'],
  name_over_bytes: [patch(hello, 12, 60), 'truncated', 'name length 60, 16 bytes present'],
  name_not_utf8: [patch(hello, 13, 0xc3, 0x28), 'utf8', 'invalid UTF-8 sequence C3 28'],
  name_overlong_utf8: [patch(hello, 13, 0xc0, 0xaf), 'utf8', 'overlong encoding of "/"'],
  name_surrogate_utf8: [patch(hello, 13, 0xed, 0xa0, 0x80), 'utf8', 'UTF-8 of surrogate U+D800'],
  name_nul: [patch(hello, 14, 0), 'utf8', 'NUL inside a name'],
  token_empty: [Uint8Array.of(0x50, 0x54, 1, 0, 0x02, 0, 9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0), 'range',
    'authorize with an empty token'],
  batch_count_over_bytes: [patch(batch, 26, 9), 'count', 'nine records claimed, three present'],
  batch_record_cut: [setLen(batch.subarray(0, batch.length - 1), batch.length - 11), 'truncated', 'last record cut by one byte'],
  record_flags: [patch(batch, 28 + 8, 0xc3), 'flags', 'record flag bit 1 set'],
  record_nan_head: [patch(batch, 28 + 13, 0, 0, 0x80, 0x7f), 'non_finite', 'record head_p.x is +infinity'],
  record_quat_min: [patch(batch, 28 + 25, 0x00, 0x80), 'range', 'smallest-three component -32768'],
  record_quat_norm: [patch(batch, 28 + 25, 0xff, 0x7f, 0xff, 0x7f, 0xff, 0x7f), 'range', 'smallest-three components with |c|^2 > 1'],
  event_kind: [patch(ev, 10, 5), 'range', 'instance event kind 5'],
  event_strands_zero: [setLen(patch(ev.subarray(0, 27 + 12 + 1), 39, 0), 30), 'limit', 'shape with zero strands'],
  event_strands_over_limit: [patch(ev, 39, 33), 'limit', 'shape with 33 strands (limit 32 up to minor 2)'],
  event_strands_40_in_v2: [patch(ev40, 3, 2), 'limit', 'a 40-strand shape in a minor 2 message (limit 32)'],
  event_strands_escape_in_v2: [patch(ev256, 3, 2), 'limit', 'the u16 escape (count byte 0) in a minor 2 message'],
  event_strands_escape_small: [patch(ev256, 40, 255, 0), 'range', 'minor 3 escape with a u16 count of 255 (the u8 says that)'],
  event_strands_escape_over_limit: [patch(ev256, 40, 1, 1), 'limit', 'minor 3 escape with 257 strands (limit 256), before the bytes'],
  event_strands_escape_over_bytes: [setLen(ev256.subarray(0, ev256.length - 29), ev256.length - 39), 'count', '256 strands claimed, 255 present'],
  event_strands_over_bytes: [patch(ev, 39, 3), 'count', 'three strands claimed, two present'],
  event_points: [patch(ev, 40, 1), 'range', 'strand with one point'],
  event_segment_nan: [patch(ev, 41, 0x01, 0x00, 0x80, 0x7f), 'non_finite', 'segment length is a signalling NaN'],
  event_segment_zero: [patch(ev, 41, 0, 0, 0, 0), 'range', 'segment length 0'],
  event_direction_zero: [patch(ev, 61, 0, 0, 0, 0), 'range', 'rest direction (0, 0, 0)'],
  error_flags: [patch(bytesOf('error'), 12, 2), 'flags', 'error flag bit 1 set'],
  welcome_tick_hz: [patch(bytesOf('welcome'), 12, 0, 0), 'range', 'tick rate 0'],
  hello_major_2: [patch(hello, 10, 2), 'version', 'hello payload major 2 (header major 1): the server answers error version and closes'],
  hello_major_0: [patch(hello, 10, 0), 'version', 'hello payload major 0'],
  welcome_v1_cut: [(() => {
    const b = bytesOf('welcome_v1');
    return setLen(b.subarray(0, b.length - 4), b.length - 14);
  })(), 'truncated', 'header minor 1 but no max_error_m'],
  welcome_v1_error_zero: [patch(bytesOf('welcome_v1'), bytesOf('welcome_v1').length - 4, 0, 0, 0, 0), 'range', 'max_error_m 0'],
  welcome_v1_error_over: [patch(bytesOf('welcome_v1'), bytesOf('welcome_v1').length - 4, 0, 0, 0xc0, 0x3f), 'range', 'max_error_m 1.5'],
  welcome_v1_error_nan: [patch(bytesOf('welcome_v1'), bytesOf('welcome_v1').length - 4, 0, 0, 0xc0, 0x7f), 'non_finite', 'max_error_m NaN'],
  hello_features_in_v1: [patch(helloFeatures, 3, 1), 'trailing', 'a 1.2 hello (minor field 2, features 1) whose header says minor 1: the features byte is read by the header minor, not the minor field, and is a byte too many'],
  hello_features_in_v0: [patch(helloFeatures, 3, 0), 'trailing', 'the same with header minor 0: a client that asks for compact frames writes 2 or more in the hello\'s header'],
  welcome_v0_trailing: [setLen(Uint8Array.of(...bytesOf('welcome_v1').subarray(0, 3), 0, ...bytesOf('welcome_v1').subarray(4)),
    bytesOf('welcome_v1').length - 10), 'trailing', 'header minor 0 carrying the 1.1 field: in 1.0 it is a byte too many'],
};

// ---- invalid frame_batch_c messages (PROTOCOL.md 11.1, 11.2): "coding": "compact" in
// their JSON, so every checker decodes them with its compact batch decoder. The JS module
// has no compact encoder: the bytes are written here by hand, each a one-record batch
// (header minor 2) that is valid but for the one field named.

const uvarint = (v) => {
  const out = [];
  let x = BigInt(v);
  do {
    const b = Number(x & 0x7fn);
    x >>= 7n;
    out.push(x ? b | 0x80 : b);
  } while (x);
  return out;
};
// the batch's payload fields, each an array of bytes
function batchC({ gap = uvarint(1), dev = uvarint(0), count = uvarint(1), hi = uvarint(1), lo = uvarint(1),
  flags = [0x03], len = uvarint(2), body = [0, 0], tail = [], minor = 2, reserved = 0 } = {}) {
  const payload = [...gap, ...dev, ...count, ...hi, ...lo, ...flags, ...len, ...body, ...tail];
  const b = Uint8Array.of(0x50, 0x54, 1, minor, 0x87, reserved, 0, 0, 0, 0, ...payload);
  new DataView(b.buffer).setUint32(6, payload.length, true);
  return b;
}
const compactInvalid = {
  batch_c_tick_gap_over: [batchC({ gap: uvarint((1n << 32n) + 1n) }), 'range', 'tick_gap 2^32 + 1: at most 2^32 (2^32 itself is allowed)'],
  batch_c_varint_long: [batchC({ gap: [0x81, 0x00] }), 'range', 'tick_gap 1 in two bytes: only the shortest form of a varint is valid'],
  batch_c_varint_tenth: [batchC({ gap: [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02] }), 'range', 'a ten-byte varint whose tenth byte is 2: the value would not fit 64 bits'],
  batch_c_varint_eleven: [batchC({ gap: [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81, 0x00] }), 'range', 'a varint running into an eleventh byte (its tenth, 0x81, is above 1)'],
  batch_c_varint_cut: [batchC({ gap: [0x81], dev: [], count: [], hi: [], lo: [], flags: [], len: [], body: [] }), 'truncated', 'the payload ends inside tick_gap'],
  batch_c_count_over_limit: [batchC({ count: uvarint(65536) }), 'limit', '65536 records (at most 65535), checked before the bytes'],
  batch_c_count_over_bytes: [batchC({ count: uvarint(2) }), 'count', 'two records claimed, 6 bytes left: at least 4 per record'],
  batch_c_id_hi_over: [batchC({ hi: uvarint(1n << 32n) }), 'range', 'id_hi 2^32: each half of the id is at most 2^32 - 1'],
  batch_c_id_lo_over: [batchC({ lo: uvarint(1n << 32n) }), 'range', 'id_lo 2^32'],
  batch_c_body_len_over: [batchC({ len: uvarint(65536) }), 'range', 'body_len 65536 (at most 65535)'],
  batch_c_body_cut: [batchC({ len: uvarint(3) }), 'truncated', 'body_len 3, two bytes left'],
  batch_c_trailing: [batchC({ tail: [0] }), 'trailing', 'a byte after the last record at header minor 2'],
  batch_c_reserved: [batchC({ reserved: 1 }), 'flags', 'reserved header byte 1 at header minor 2'],
  batch_c_hash_cut: [batchC({ minor: 4 }), 'truncated', 'header minor 4: the key record (flags bit 0) has a 2-byte body, too short for the state hash its last 8 bytes hold from 1.4 on'],
  batch_c_trailing_v4: [batchC({ minor: 4, flags: [0x02], tail: [0] }), 'trailing', 'a byte after the last record at header minor 4 (strict up to the decoder\'s own minor)'],
};
for (const [name, [b, error]] of Object.entries(compactInvalid)) {
  let got = 'ok';
  try {
    decodeBatchC(b);
  } catch (e) {
    got = e.code;
  }
  if (got !== error) throw new Error(`invalid/${name}: expected ${error}, JS compact decoder says ${got}`);
}
// the base batch itself decodes: each vector differs from a valid one in its named field
decodeBatchC(batchC());

// ---- strand streams

// Three strands of different lengths and rest directions on a head that turns about a
// tilted axis and bobs: a wave runs down each strand.
const streamShape = [
  { points: 12, segment_length: 0.03, anchor: [-0.05, 0.04, -0.11], direction: [0, -1, 0] },
  { points: 6, segment_length: 0.05, anchor: [0, 0.09, 0.08], direction: [0, -0.5, 1] },
  { points: 4, segment_length: 0.01, anchor: [0.07, 0.1, 0], direction: [0.2, 1, 0] },
].map((s) => ({ ...s, segment_length: f32(s.segment_length), anchor: s.anchor.map(f32), direction: s.direction.map(f32) }));

function frame(tick, shape, stretch = 0) {
  const t = tick / 60;
  const ang = 0.7 * Math.sin(2 * Math.PI * t / 0.6);
  const ax = [0.3, 0.9, 0.1].map((v) => v / Math.hypot(0.3, 0.9, 0.1));
  const q = [...ax.map((v) => v * Math.sin(ang / 2)), Math.cos(ang / 2)].map(f32);
  const p = [0.2 * t, 1.5 + 0.04 * Math.sin(2 * Math.PI * t * 2), 0].map(f32);
  const rot = (v) => { // q v q*
    const [x, y, z, w] = q;
    const tx = 2 * (y * v[2] - z * v[1]), ty = 2 * (z * v[0] - x * v[2]), tz = 2 * (x * v[1] - y * v[0]);
    return [v[0] + w * tx + (y * tz - z * ty), v[1] + w * ty + (z * tx - x * tz), v[2] + w * tz + (x * ty - y * tx)];
  };
  const pts = [];
  shape.forEach((s, si) => {
    const d0 = s.direction.map((v) => v / Math.hypot(...s.direction));
    let x = rot(s.anchor).map((v, i) => v + p[i]);
    for (let i = 0; i < s.points; i++) {
      pts.push(x.map(f32));
      const a = 0.5 * Math.sin(2 * Math.PI * t * 1.3 - 0.4 * i + si);
      // rest direction tilted about the world Z axis by a, then a little about X
      const dx = d0[0] * Math.cos(a) - d0[1] * Math.sin(a);
      const dy = d0[0] * Math.sin(a) + d0[1] * Math.cos(a);
      const dz = d0[2] + 0.2 * Math.sin(a * 0.7);
      const n = Math.hypot(dx, dy, dz);
      const len = s.segment_length * (1 + (i === 1 ? stretch : 0));
      x = [x[0] + len * dx / n, x[1] + len * dy / n, x[2] + len * dz / n];
    }
  });
  return { head_p: p, head_q: q, points: pts };
}

// steps: [tick, {key, see, stretch, expect}] -> vector with encoder inputs and records.
function stream(shape, params, plan, note) {
  const enc = new StrandEncoder(shape, params);
  const steps = [];
  let fed = 0;
  for (const s of plan) {
    const step = { tick: String(s.tick) };
    if (s.tick !== fed) {
      const input = frame(s.tick, shape, s.stretch ?? 0);
      enc.tick(input.head_p, input.head_q, input.points.flat());
      step.input = input;
      fed = s.tick;
    }
    if (s.see !== false) {
      step.key = !!s.key;
      step.record = bytesToHex(enc.record(!!s.key, 1n, s.tick));
      step.expect = s.expect ?? 'ok';
    }
    steps.push(step);
  }
  return { note, shape, params, steps };
}

const range = (a, b, f = (t) => ({ tick: t })) => Array.from({ length: b - a + 1 }, (_, i) => f(a + i));

const streams = {
  swing: stream(streamShape, { max_error_m: 0.001, keyframe_interval: 30 }, range(1, 75),
    'three strands, 75 ticks, periodic keyframes at ticks 1, 31, 61'),
  late_join: stream(streamShape, { max_error_m: 0.001, keyframe_interval: 600 }, [
    ...range(1, 5, (t) => ({ tick: t, see: false })),
    { tick: 6, key: true },
    ...range(7, 9),
    { tick: 10, see: false },
    { tick: 11, expect: 'no_key' },
    { tick: 11, key: true },
    ...range(12, 20),
  ], 'joins at tick 6 from an on-demand keyframe, misses tick 10, its delta at 11 is refused, the keyframe of 11 recovers'),
  raw_fallback: stream(streamShape, { max_error_m: 0.0005, keyframe_interval: 600 }, [
    ...range(1, 4),
    { tick: 5, stretch: 0.2 },
    { tick: 6, stretch: 0.2 },
    ...range(7, 10),
  ], 'segment 1 of every strand 20 % too long at ticks 5-6: sent raw, then keyframed'),
  coarse: stream(streamShape, { max_error_m: 0.02, keyframe_interval: 600 }, range(1, 30),
    'max error 2 cm: fewer bits per code'),
  whole_avatar: stream(many(256), { max_error_m: 0.001, keyframe_interval: 600 }, [
    ...range(1, 3), { tick: 4, see: false }, { tick: 5, expect: 'no_key' }, { tick: 5, key: true }, ...range(6, 7),
  ], '256 strands (1.3): the strand data opens with 0 and a u16 count; misses tick 4, the keyframe of 5 recovers'),
};
{ // the u16 count against a 256-strand shape: cut, or a count byte other than the escape
  const st = streams.whole_avatar;
  const rec1 = st.steps[0].record, rec2 = st.steps[1].record;
  const mutate = (hex, f) => {
    const b = hexToBytes(hex);
    const len = b[31] | b[32] << 8;
    const data = f(Uint8Array.from(b.subarray(33, 33 + len)));
    const out = new Uint8Array(33 + data.length);
    out.set(b.subarray(0, 33));
    out[31] = data.length & 0xff;
    out[32] = data.length >> 8;
    out.set(data, 33);
    return bytesToHex(out);
  };
  const badMany = (name, f, expect, note) => {
    streams[`invalid_${name}`] = {
      note, shape: st.shape, steps: [
        { tick: '1', record: rec1, expect: 'ok' },
        { tick: '2', record: mutate(rec2, f), expect },
        { tick: '2', record: rec2, expect: 'ok' },
      ],
    };
  };
  badMany('count_u16_cut', (d) => d.subarray(0, 2), 'truncated', '256 strands: the count escape 0 with one byte of its u16');
  badMany('count_u16_other', (d) => { d[1] = 255; d[2] = 0; return d; }, 'shape', '256 strands: the u16 count says 255');
  badMany('count_byte_for_many', (d) => Uint8Array.of(255, ...d.subarray(3)), 'shape', '256 strands: a count byte of 255 instead of the escape');
}

// Decoder-only streams: a good keyframe, a corrupted record, then proof nothing changed.
const keyRec = (() => {
  const e = new StrandEncoder(streamShape);
  const input = frame(1, streamShape);
  e.tick(input.head_p, input.head_q, input.points.flat());
  const k1 = e.record(false, 1n, 1);
  const i2 = frame(2, streamShape);
  e.tick(i2.head_p, i2.head_q, i2.points.flat());
  return { k1, d2: e.record(false, 1n, 2) };
})();
const withData = (rec, f) => {
  const r = decodeMessage(encodeMessage({ type: 'frame_batch', tick: 0n, server_time_us: 0n, records: [rec] })).records[0];
  return bytesToHex(encodeRecord({ ...r, data: f(Uint8Array.from(r.data)) }));
};
const bad = (name, mutate, expect, note) => {
  streams[`invalid_${name}`] = {
    note, shape: streamShape, steps: [
      { tick: '1', record: bytesToHex(keyRec.k1), expect: 'ok' },
      { tick: '2', record: withData(keyRec.d2, mutate), expect },
      { tick: '2', record: bytesToHex(keyRec.d2), expect: 'ok' },
    ],
  };
};
bad('truncated', (d) => d.subarray(0, d.length - 1), 'truncated', 'delta missing its last byte');
bad('empty', () => new Uint8Array(0), 'truncated', 'no strand data at all');
bad('trailing', (d) => Uint8Array.of(...d, 0), 'trailing', 'one byte more than the strands use');
bad('padding', (d) => { d[d.length - 1] |= 0x80; return d; }, 'flags', 'a padding bit set');
bad('strand_count', (d) => { d[0] = 2; return d; }, 'shape', 'strand count 2, shape has 3');
bad('eg_prefix', (d) => {
  const o = new Uint8Array(d.length + 4); // mode delta, pred 0, k 0, then 32 zero bits
  o[0] = 3; o[1] = 0x01; return o;
}, 'range', 'an Exp-Golomb prefix longer than 20 zeros');
bad('key_bits', (d) => Uint8Array.of(3, 0x02 | (15 << 2), ...new Uint8Array(40)), 'range', 'keyframe with b - 2 = 15');
bad('key_code', (d) => Uint8Array.of(3, 0x02 | (6 << 2) | 0xc0, 0xff, 0xff, ...new Uint8Array(40)), 'range',
  'keyframe with b = 8 and a first code of 255 - 127 = 128 > M');
bad('raw_nan', () => { // strand 0 raw: first x = NaN
  const o = new Uint8Array(1 + Math.ceil((2 + 96 * 12 + 2 + 2 + 96 * 6 + 96 * 4) / 8));
  o[0] = 3;
  o[1] = 0x03 | (0x00 << 2);
  const nan = 0x7fc00000 * 4; // bits 2..33
  for (let i = 0; i < 5; i++) o[1 + i] |= Math.floor(nan / 2 ** (8 * i)) & 0xff;
  return o;
}, 'non_finite', 'raw strand whose first x is NaN');
streams.invalid_delta_without_key = {
  note: 'a delta before any keyframe', shape: streamShape,
  steps: [{ tick: '2', record: bytesToHex(keyRec.d2), expect: 'no_key' }, { tick: '1', record: bytesToHex(keyRec.k1), expect: 'ok' }],
};

// ---- hand-made strand vectors: points from recon.mjs (PROTOCOL.md 7.3 read literally)

let seed = 12;
const rnd = () => { // mulberry32: the same vectors on every run
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const r = (a, b) => a + (b - a) * rnd();

// A head position that cancels one point per axis to a few nanometres (the points at the
// origin chosen at random), so that the last bits of the doubles show in binary32.
function cancelling(strands, hq) {
  const at0 = reconstruct(strands, [0, 0, 0], hq);
  return [0, 1, 2].map((a) => f32(-at0[3 * Math.floor(r(0, at0.length / 3)) + a]));
}

// A strand that curls past 90 degrees from its rest direction (up to 160 at the tip), so
// the encoder must use folded octahedral codes (|u| + |v| > M).
function curl(tick, shape) {
  const t = tick / 60;
  const pts = [];
  for (const s of shape) {
    const d = s.direction.map((v) => v / Math.hypot(...s.direction));
    const u0 = Math.abs(d[0]) < 0.9 ? [1, 0, 0] : [0, 1, 0]; // u = normalised u0 - (u0.d) d
    const k = u0[0] * d[0] + u0[1] * d[1] + u0[2] * d[2];
    const u = u0.map((x, i) => x - k * d[i]).map((x, _, a) => x / Math.hypot(...a));
    let x = s.anchor.map((c, i) => c + [0.1, 1.6, 0][i]);
    for (let i = 0; i < s.points; i++) {
      pts.push(x.map(f32));
      const th = Math.min(2.8, (i + 1) * (0.3 + 0.1 * Math.sin(2 * Math.PI * t)));
      x = x.map((c, j) => c + s.segment_length * (Math.cos(th) * d[j] + Math.sin(th) * u[j]));
    }
  }
  return { head_p: [0.1, 1.6, 0].map(f32), head_q: [0, 0, 0, 1], points: pts };
}
{
  const shape = [
    { points: 14, segment_length: f32(0.03), anchor: [0, 0.05, -0.1].map(f32), direction: [0, -1, 0] },
    { points: 9, segment_length: f32(0.05), anchor: [0.06, 0, 0].map(f32), direction: [1, -1, 0.5].map(f32) },
  ];
  const enc = new StrandEncoder(shape, { max_error_m: 0.001, keyframe_interval: 10 });
  const steps = [];
  for (let tick = 1; tick <= 20; tick++) {
    const input = curl(tick, shape);
    enc.tick(input.head_p, input.head_q, input.points.flat());
    steps.push({ tick: String(tick), input, key: false, record: bytesToHex(enc.record(false, 1n, tick)), expect: 'ok' });
  }
  streams.folded = { note: 'strands curling up to 160 degrees from their rest direction: folded octahedral codes, keyframes every 10 ticks', shape, params: { max_error_m: 0.001, keyframe_interval: 10 }, steps };
}

// Misreadings under which these strands decode to other floats.
const caught = (strands, head_p, head_q, names = Object.keys(MISREADINGS)) => {
  const want = reconstruct(strands, head_p, head_q);
  return names.filter((m) => reconstruct(strands, head_p, head_q, { [m]: true }).some((x, i) => x !== want[i]));
};

// One decoder-only stream of key records with the given strands per tick (same shape);
// each step lists the misreadings it catches.
function keyStream(note, shape, ticks) {
  const steps = ticks.map(({ tick, head_p, q, bits, codes, flags = 1 }) => {
    const strands = shape.map((s, i) => ({ ...s, bits: bits[i], codes: codes[i] }));
    const head_q = quat16Pack(q);
    const rec = encodeRecord({ id: 1n, flags, last_seq: tick, head_p: head_p.map(f32), head_q, data: keyData(strands) });
    const pts = reconstruct(strands, head_p, head_q);
    const step = { tick: String(tick), record: bytesToHex(rec), expect: 'ok' };
    step.catches = caught(strands, head_p, head_q);
    step.decoded = Array.from({ length: pts.length / 3 }, (_, i) => pts.slice(3 * i, 3 * i + 3));
    return step;
  });
  return { note, shape, steps };
}

{
  // Every corner and edge of the octahedral square, folded and not, at b = 2, 3 and 16.
  const shape = [{ points: 17, segment_length: f32(0.02), anchor: [0.01, 0.02, 0.03].map(f32), direction: [0.3, -1, 0.2].map(f32) }];
  const edge = (M) => [
    [M, M], [-M, M], [M, -M], [-M, -M], [M, 0], [-M, 0], [0, M], [0, -M], [0, 0],
    [M - 1, 1], [1, M - 1], [-(M - 1), -1], [M, 1], [1, -M], [-M, -1], [Math.ceil(M / 2), -Math.ceil(M / 2)],
  ].flat();
  const codes = (M) => edge(M).map((c) => Math.max(-M, Math.min(M, c)));
  // Tick 4: (32766, 1) is on the edge |u| + |v| = M, yet its computed z is -2^-60, so it
  // folds; a pose where that shows in binary32.
  const edgeCodes = Array.from({ length: 32 }, (_, i) => (i % 4 < 2 ? [32766, 1] : [-32766, -1])[i % 2]);
  let q4;
  let p4;
  for (let trial = 0; trial < 5000 && !p4; trial++) {
    const q = [r(-1, 1), r(-1, 1), r(-1, 1), r(-1, 1)];
    const st = [{ ...shape[0], bits: 16, codes: edgeCodes }];
    const hp = cancelling(st, quat16Pack(q));
    if (caught(st, hp, quat16Pack(q), ['fold_integer']).length) [q4, p4] = [q, hp];
  }
  if (!p4) throw new Error('oct_codes: no pose shows the edge fold');
  streams.oct_codes = keyStream('octahedral codes on the corners and edges of the grid, folded (computed z < 0) and not, at b = 2, 3 and 16; tick 4: codes on the edge that fold by rounding', shape, [
    { tick: 1, head_p: [0, 1.5, 0], q: [0, 0, 0, 1], bits: [2], codes: [codes(1)] },
    { tick: 2, head_p: [0, 1.5, 0], q: [0.1, 0.7, -0.05, 0.7], bits: [3], codes: [codes(3)] },
    { tick: 3, head_p: [-0.2, 1.4, 0.3], q: [0.3, -0.2, 0.6, 0.7], bits: [16], codes: [codes(32767)] },
    { tick: 4, head_p: p4, q: q4, bits: [16], codes: [edgeCodes] },
  ]);
  const all = new Set(streams.oct_codes.steps.flatMap((st) => st.catches));
  for (const m of ['fold_integer', 'fold_swapped']) if (!all.has(m)) throw new Error(`oct_codes does not catch ${m}`);
}

{
  // The record flag `key` is the sender's summary of the blocks; a decoder goes by the
  // blocks' modes. Tick 1: key blocks, flag clear. Tick 2: hold blocks, flag set (decodes,
  // from tick 1). Tick 4: hold blocks, flag set, tick 3 missed: no_key.
  const shape = [{ points: 3, segment_length: f32(0.04), anchor: [0, 0, 0], direction: [0, -1, 0] }];
  const base = keyStream('', shape, [{ tick: 1, head_p: [0, 1.5, 0], q: [0, 0, 0, 1], bits: [8], codes: [[10, -20, 30, 5]], flags: 0 }]);
  const head = { id: 1n, flags: 1, head_p: [0, 1.5, 0], head_q: quat16Pack([0, 0, 0, 1]), data: Uint8Array.of(1, 0) };
  streams.key_flag = {
    note: 'the record key flag does not change decoding: an unflagged record of key blocks decodes, a flagged record of hold blocks needs the previous tick',
    shape,
    steps: [
      base.steps[0],
      { tick: '2', record: bytesToHex(encodeRecord({ ...head, last_seq: 2 })), expect: 'ok', decoded: base.steps[0].decoded },
      { tick: '4', record: bytesToHex(encodeRecord({ ...head, last_seq: 4 })), expect: 'no_key' },
    ],
  };
}

{
  // Records on which each misreading of "in the order written" (recon.mjs MISREADINGS)
  // decodes at least one float differently: random poses and codes, cancelling heads.
  const shape = Array.from({ length: 4 }, () => ({
    points: 2 + Math.floor(r(1, 8)), segment_length: f32(r(0.01, 0.2)),
    anchor: [0, 0, 0].map(() => f32(r(-0.1, 0.1))), direction: [0, 0, 0].map(() => f32(r(-1, 1))),
  }));
  // the basis is fixed by the shape: make strand 0's differ under the two misreadings of it
  const differs = (d, m) => basis(d, { [m]: true }).some((x, i) => x !== basis(d)[i]);
  while (!differs(shape[0].direction, 'basis_regrouped') || !differs(shape[0].direction, 'direction_reciprocal')) {
    shape[0].direction = [0, 0, 0].map(() => f32(r(-1, 1)));
  }
  const left = new Set(Object.keys(MISREADINGS).filter((m) => m !== 'fold_integer')); // oct_codes has it
  const ticks = [];
  for (let trial = 0; left.size && trial < 20000; trial++) {
    const q = [r(-1, 1), r(-1, 1), r(-1, 1), r(-1, 1)];
    const bits = shape.map(() => 3 + Math.floor(r(0, 14)));
    const codes = shape.map((s, i) => {
      const M = 2 ** (bits[i] - 1) - 1;
      return Array.from({ length: 2 * (s.points - 1) }, () => Math.round(r(-M, M)));
    });
    const strands = shape.map((s, i) => ({ ...s, bits: bits[i], codes: codes[i] }));
    const hq = quat16Pack(q);
    const head_p = cancelling(strands, hq);
    const catches = caught(strands, head_p, hq, [...left]);
    if (!catches.length) continue;
    catches.forEach((m) => left.delete(m));
    ticks.push({ tick: ticks.length + 1, head_p, q, bits, codes });
  }
  if (left.size) throw new Error(`order: no record found that tells apart ${[...left].join(', ')}`);
  streams.order = keyStream('each step decodes differently under the misreadings of PROTOCOL.md 7.3 it lists in "catches" (proto/vectors/recon.mjs)', shape, ticks);
}

// A per-viewer rate's stream (PROTOCOL.md 5, 6): the encoder ticked every 3rd tick (20 Hz
// at a 60 Hz tick), every record saying step 3 in flags bits 1..5, as the server sets them
// (the encoder knows no step). A decoder that ignores the step (the record of tick - 1)
// refuses the deltas; one that takes any earlier record applies tick 30's delta after the
// missed tick 27.
{
  const STEP = 3;
  const st = stream(streamShape, { max_error_m: 0.001, keyframe_interval: 8 }, [
    ...range(1, 8, (i) => ({ tick: STEP * i })),
    { tick: 27, see: false },
    { tick: 30, expect: 'no_key' },
    { tick: 30, key: true },
    ...range(11, 16, (i) => ({ tick: STEP * i })),
  ], 'a 20 Hz stream: records 3 ticks apart, each saying step 3; tick 27 missed, so the delta of 30 is refused and its keyframe recovers; keyframes every 8 of its own ticks');
  for (const s of st.steps) {
    if (!s.record) continue;
    const rec = hexToBytes(s.record);
    rec[8] |= (STEP - 1) << 1;
    s.record = bytesToHex(rec);
  }
  streams.rate_step = { note: st.note, shape: st.shape, params: st.params, step: STEP, steps: st.steps };
}

// ---- write

clean('valid');
clean('invalid');
clean('stream');
for (const [name, m] of Object.entries(valid)) {
  const b = encodeMessage(m, m.header_minor ?? 0);
  writeFileSync(join(root, 'valid', `${name}.bin`), b);
  const d = decodeMessage(b);
  const { type, ...fields } = toJSONable(d);
  json(`valid/${name}.json`, d.header_minor ? { type, header_minor: d.header_minor, ...fields } : { type, ...fields });
}
for (const [name, [b, error, note]] of Object.entries(invalid)) {
  if (!b) throw new Error(`invalid/${name}: no bytes`);
  let got = 'ok';
  try {
    decodeMessage(b);
  } catch (e) {
    got = e.code;
  }
  if (got !== error) throw new Error(`invalid/${name}: expected ${error}, JS decoder says ${got}`);
  writeFileSync(join(root, 'invalid', `${name}.bin`), b);
  json(`invalid/${name}.json`, { error, note });
}
for (const [name, [b, error, note]] of Object.entries(compactInvalid)) {
  writeFileSync(join(root, 'invalid', `${name}.bin`), b);
  json(`invalid/${name}.json`, { coding: 'compact', error, note });
}
// The JS decoder must agree with every expectation before anything is written (the C
// tests then check the same independently).
for (const [name, v] of Object.entries(streams)) {
  const dec = new StrandDecoder(v.shape);
  for (const step of v.steps) {
    if (!step.record) continue;
    const rec = decodeMessage(encodeMessage({ type: 'frame_batch', tick: 0n, server_time_us: 0n, records: [hexToBytes(step.record)] }, 3)).records[0];
    let got = 'ok';
    let pts;
    try {
      pts = dec.apply(BigInt(step.tick), rec);
    } catch (e) {
      if (!e.code) throw e;
      got = e.code;
    }
    if (got !== step.expect) throw new Error(`stream/${name} tick ${step.tick}: expected ${step.expect}, got ${got}`);
    if (!pts) continue;
    const decoded = Array.from({ length: pts.length / 3 }, (_, i) => Array.from(pts.subarray(3 * i, 3 * i + 3)));
    // hand-made vectors bring their points from recon.mjs: the module must agree to the bit
    if (step.decoded && JSON.stringify(step.decoded) !== JSON.stringify(decoded)) {
      throw new Error(`stream/${name} tick ${step.tick}: proto/js decodes ${JSON.stringify(decoded)}, recon.mjs ${JSON.stringify(step.decoded)}`);
    }
    step.decoded = decoded;
  }
  json(`stream/${name}.json`, v);
}
console.log(`wrote ${Object.keys(valid).length} valid, ${Object.keys(invalid).length} invalid, ${Object.keys(streams).length} stream vectors`);
