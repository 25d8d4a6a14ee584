#!/usr/bin/env python3
"""Reference decoder of the Ponytail wire protocol, written from proto/PROTOCOL.md alone
(Python 3 standard library, no project code): messages (sections 1-5), frame records (6)
and strand data (7). It is a third implementation beside the C and JS ones: it must decode
every golden vector of proto/vectors/ (README there) to the stored JSON, report the stored
error for every invalid one, and decode every strand stream to the stored points to the
bit. Usage: ref_decoder.py VECTOR_DIR; prints one line per failure and a summary."""
import json
import math
import os
import struct
import sys

MAJOR, MINOR = 1, 4
HEADER, MAX_PAYLOAD = 10, 1 << 20
FLT_MAX = struct.unpack('<f', b'\xff\xff\x7f\x7f')[0]
TYPES = {0x01: 'hello', 0x02: 'authorize', 0x03: 'subscribe', 0x04: 'unsubscribe',
         0x05: 'head_pose', 0x06: 'keyframe_request', 0x07: 'ping', 0x81: 'welcome',
         0x82: 'frame_batch', 0x83: 'instance_event', 0x84: 'pong', 0x85: 'error'}
KINDS = {1: 'added', 2: 'removed', 3: 'changed', 4: 'reset'}


class Err(Exception):
    """A protocol error; .code is its name as the spec writes it (`truncated`, ...)."""

    def __init__(self, code):
        super().__init__(code)
        self.code = code


def need(cond, code):
    if not cond:
        raise Err(code)


class Reader:
    """Little-endian fields off a byte string; running out is `truncated` (section 1)."""

    def __init__(self, b, pos=0, end=None):
        self.b, self.pos, self.end = b, pos, len(b) if end is None else end

    def left(self):
        return self.end - self.pos

    def take(self, n):
        need(n <= self.left(), 'truncated')
        self.pos += n
        return self.b[self.pos - n:self.pos]

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack('<H', self.take(2))[0]

    def u32(self):
        return struct.unpack('<I', self.take(4))[0]

    def u64(self):
        return struct.unpack('<Q', self.take(8))[0]

    def i64(self):
        return struct.unpack('<q', self.take(8))[0]

    def i16(self):
        return struct.unpack('<h', self.take(2))[0]

    def f32(self):
        v = struct.unpack('<f', self.take(4))[0]
        need(math.isfinite(v), 'non_finite')
        return v

    def f32s(self, n):
        return [self.f32() for _ in range(n)]

    def str8(self, limit):
        n = self.u8()
        need(n <= limit, 'limit')
        raw = self.take(n)
        need(b'\0' not in raw, 'utf8')
        try:
            return raw.decode('utf-8')  # strict: refuses overlong forms and surrogates
        except UnicodeDecodeError:
            raise Err('utf8') from None

    def count(self, bits, limit, size, low=0, low_error='limit'):
        """A count (u8 or u16): its limit first, then the bytes its elements need."""
        n = self.u8() if bits == 8 else self.u16()
        need(n >= low, low_error)
        need(n <= limit, 'limit')
        need(n * size <= self.left(), 'count')
        return n


def flags(r, known, strict):
    v = r.u8()
    need(not strict or v & ~known == 0, 'flags')
    return v & known


def ids(r):
    return [str(r.u64()) for _ in range(r.count(16, 256, 8))]


def record(r, strict, minor=MINOR):
    """Section 6, as the vectors' JSON form."""
    rid = r.u64()
    f = r.u8()
    need(not strict or minor >= 2 or f & 0x3e == 0, 'flags')  # 1.2: bits 1..5 = step - 1
    seq = r.u32()
    hp = r.f32s(3)
    c = []
    for _ in range(3):
        c.append(r.i16())
        need(c[-1] != -32768, 'range')
    need(sum(x * x for x in c) <= 46340 * 46340, 'range')
    data = r.take(r.u16())
    out = {'id': str(rid), 'flags': f & 1, 'head_q': {'largest': f >> 6, 'c': c},
           'last_seq': seq, 'head_p': hp, 'data': data.hex()}
    if minor >= 4 and f & 1:  # 1.4: a key record's data ends with the u64 state hash
        need(len(data) >= 8, 'truncated')
        out['data'], out['state_hash'] = data[:-8].hex(), str(int.from_bytes(data[-8:], 'little'))
    if (f >> 1) & 31:
        out['step'] = ((f >> 1) & 31) + 1
    return out


def shape(r, minor):
    out = []
    n = r.u8()  # section 5: 1..32 up to minor 2; from 3, 1..255 or 0 and a u16 of 256
    if n == 0 and minor >= 3:
        n = r.u16()
        need(n >= 256, 'range')
    need(n >= 1, 'limit')
    need(n <= (256 if minor >= 3 else 32), 'limit')
    need(n * 29 <= r.left(), 'count')
    for _ in range(n):
        s = {'points': r.u8()}
        need(2 <= s['points'] <= 64, 'range')
        s['segment_length'] = r.f32()
        need(0 < s['segment_length'] <= 10, 'range')
        s['anchor'] = r.f32s(3)
        d = s['direction'] = r.f32s(3)
        need(d[0] * d[0] + d[1] * d[1] + d[2] * d[2] >= 1e-12, 'range')
        out.append(s)
    return out


def payload(t, r, minor, strict):
    m = {}
    if t == 'hello':
        m['major'] = r.u8()
        need(m['major'] == MAJOR, 'version')
        m['minor'] = r.u8()
        m['client_name'] = r.str8(64)
        if minor >= 2:  # section 11: bit 0 asks for compact frames
            m['features'] = flags(r, 1, strict)
    elif t == 'authorize':
        m['instance_id'] = str(r.u64())
        m['token'] = r.str8(128)
        need(len(m['token'].encode()) >= 1, 'range')
    elif t in ('subscribe', 'unsubscribe'):
        m['room'] = r.str8(64)
        m['ids'] = ids(r)
        if t == 'subscribe' and minor >= 2:
            m['rate_hz'] = r.u8()
            need(m['rate_hz'] in (0, 60, 30, 20, 10), 'range')
    elif t == 'keyframe_request':
        m['ids'] = ids(r)
    elif t == 'head_pose':
        m['instance_id'] = str(r.u64())
        m['seq'] = r.u32()
        m['client_time_us'] = str(r.i64())
        m['flags'] = flags(r, 7 if minor >= 2 else 3, strict)  # bit 2: bones, since 1.2
        m['p'] = r.f32s(3)
        q = m['q'] = r.f32s(4)
        need(0.25 <= q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] <= 4, 'range')
        if m['flags'] & 1:
            m['v'] = r.f32s(3)
        if m['flags'] & 2:
            m['w'] = r.f32s(3)
        if m['flags'] & 4:
            n = r.u8()
            need(n <= 54, 'limit')
            need(n >= 1, 'range')
            need(n * 29 <= r.left(), 'count')
            m['bones'] = []
            for _ in range(n):
                b = {'bone': r.u8()}
                need(b['bone'] < 54, 'range')
                b['p'] = r.f32s(3)
                bq = b['q'] = r.f32s(4)
                need(0.25 <= bq[0] * bq[0] + bq[1] * bq[1] + bq[2] * bq[2] + bq[3] * bq[3] <= 4,
                     'range')
                m['bones'].append(b)
    elif t == 'ping':
        m['client_time_us'] = str(r.i64())
    elif t == 'welcome':
        m['major'], m['minor'] = r.u8(), r.u8()
        m['tick_hz'] = r.u16()
        need(m['tick_hz'] >= 1, 'range')
        m['substeps'] = r.u8()
        m['keyframe_interval'] = r.u16()
        need(m['keyframe_interval'] >= 1, 'range')
        m['max_message'] = r.u32()
        m['max_subscriptions'] = r.u16()
        m['server_time_us'] = str(r.i64())
        m['tick'] = str(r.u64())
        m['server_version'] = r.str8(255)
        if minor >= 1:
            m['max_error_m'] = r.f32()
            need(0 < m['max_error_m'] <= 1, 'range')
    elif t == 'frame_batch':
        m['tick'] = str(r.u64())
        m['server_time_us'] = str(r.i64())
        n = r.count(16, 65535, 33)
        m['records'] = [record(r, strict, minor) for _ in range(n)]
    elif t == 'instance_event':
        k = r.u8()
        need(k in KINDS, 'range')
        m['kind'] = KINDS[k]
        m['instance_id'] = str(r.u64())
        m['tick'] = str(r.u64())
        if m['kind'] != 'removed':
            m['name'] = r.str8(64)
            m['room'] = r.str8(64)
            m['shape'] = shape(r, minor)
    elif t == 'pong':
        m['client_time_us'] = str(r.i64())
        m['server_time_us'] = str(r.i64())
    elif t == 'error':
        m['code'] = r.u16()
        m['flags'] = flags(r, 1, strict)
        m['about_type'] = r.u8()
        m['instance_id'] = str(r.u64())
        m['text'] = r.str8(255)
    return m


def decode_message(b):
    """Section 2's checks in its order; returns the JSON form (README of the vectors)."""
    need(len(b) >= HEADER, 'truncated')
    need(b[0:2] == b'PT', 'bad_magic')
    major, minor, t, reserved = b[2], b[3], b[4], b[5]
    need(major == MAJOR, 'version')
    n = struct.unpack('<I', b[6:10])[0]
    need(n <= MAX_PAYLOAD, 'too_big')
    need(n <= len(b) - HEADER, 'truncated')
    need(n == len(b) - HEADER, 'length')
    strict = minor <= MINOR
    need(not strict or reserved == 0, 'flags')
    need(t in TYPES, 'unknown_type')
    r = Reader(b, HEADER)
    m = {'type': TYPES[t]}
    if minor:
        m['header_minor'] = minor
    m.update(payload(TYPES[t], r, minor, strict))
    need(not strict or r.left() == 0, 'trailing')
    return m


class Bits:
    """Section 7: bit i is bit i % 8 of byte i // 8; fields least significant bit first."""

    def __init__(self, b):
        self.b, self.pos, self.n = b, 0, 8 * len(b)

    def bit(self):
        need(self.pos < self.n, 'truncated')
        v = self.b[self.pos >> 3] >> (self.pos & 7) & 1
        self.pos += 1
        return v

    def get(self, n):
        return sum(self.bit() << i for i in range(n))

    def eg(self, k):
        zeros = 0
        while self.bit() == 0:
            zeros += 1
            need(zeros < 21 - k, 'range')
        m = zeros + k
        return (1 << m) + self.get(m) - (1 << k)


def unzigzag(z):
    return -(z + 1) // 2 if z & 1 else z // 2


def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]


def sgn(t):
    return -1.0 if t < 0 else 1.0


class StrandDecoder:
    """Sections 7.1-7.3 for one instance's shape (a list of strands, JSON form)."""

    def __init__(self, shape):
        self.shape = shape
        self.state = [None] * len(shape)  # per strand: (b, cur, vel) when valid
        self.last_tick = None

    def apply(self, tick, rec):
        data = bytes.fromhex(rec['data'])
        need(len(data) >= 1, 'truncated')
        count, at = data[0], 1  # section 7: a byte, or 0 and a u16 for 256 strands and more
        if count == 0 and len(self.shape) > 255:
            need(len(data) >= 3, 'truncated')
            count, at = data[1] | data[2] << 8, 3
        need(count == len(self.shape), 'shape')
        bits = Bits(data[at:])
        in_seq = self.last_tick is not None and tick == self.last_tick + rec.get('step', 1)
        new, raw = [], []
        for s, st in zip(self.shape, self.state):
            new_st, pts = self.block(bits, s, st, in_seq)
            new.append(new_st)
            raw.append(pts)
        pad = bits.n - bits.pos
        need(pad < 8, 'trailing')
        need(bits.get(pad) == 0, 'flags')
        out = []
        R = rotation(rec['head_q'])
        for s, st, pts in zip(self.shape, new, raw):
            out += pts if pts is not None else strand_points(s, st, R, rec['head_p'])
        for p in out:
            need(all(abs(c) <= FLT_MAX for c in p), 'range')
        self.state, self.last_tick = new, tick  # all or nothing
        return [[f32(c) for c in p] for p in out]

    @staticmethod
    def block(bits, s, st, in_seq):
        n = 2 * (s['points'] - 1)
        mode = bits.get(2)
        if mode == 3:  # raw
            pts = []
            for _ in range(s['points']):
                p = [struct.unpack('<f', struct.pack('<I', bits.get(32)))[0] for _ in range(3)]
                need(all(math.isfinite(c) for c in p), 'non_finite')
                pts.append(p)
            return None, pts
        if mode == 2:  # key
            b = bits.get(4) + 2
            need(b <= 16, 'range')
            M = (1 << (b - 1)) - 1
            cur = []
            for _ in range(n):
                c = bits.get(b)
                need(c <= 2 * M, 'range')
                cur.append(c - M)
            k = bits.get(4)
            vel = []
            for _ in range(n):
                vel.append(unzigzag(bits.eg(k)))
                need(abs(vel[-1]) <= 2 * M, 'range')
            return (b, cur, vel), None
        need(st is not None and in_seq, 'no_key')
        b, cur, vel = st
        M = (1 << (b - 1)) - 1
        pred, k = (bits.get(2), bits.get(4)) if mode == 1 else (1, 0)
        codes, e_prev = [], [0, 0]
        for i in range(n):
            p = cur[i] + (vel[i] if pred & 1 else 0)
            e = 0
            if mode == 1:
                e = unzigzag(bits.eg(k)) + (e_prev[i & 1] if pred & 2 else 0)
            e_prev[i & 1] = e
            c = p + e
            need(-M <= c <= M, 'range')
            codes.append(c)
        return (b, codes, [c - o for c, o in zip(codes, cur)]), None


def rotation(hq):
    """Section 6's smallest three unpacked as 7.3 step 1, then R row-major."""
    q, S, k = [0.0] * 4, 0.0, 0
    for i in range(4):
        if i == hq['largest']:
            continue
        q[i] = hq['c'][k] / 46340
        S = S + q[i] * q[i]
        k += 1
    q[hq['largest']] = math.sqrt(1 - S) if S < 1 else 0.0
    x, y, z, w = q
    return [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
            2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
            2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]


def strand_points(s, st, R, head_p):
    """Section 7.3 steps 2-5 (Python floats are IEEE doubles and never fused)."""
    dx, dy, dz = s['direction']
    ln = math.sqrt(dx * dx + dy * dy + dz * dz)
    nx, ny, nz = dx / ln, dy / ln, dz / ln
    sg = -1.0 if nz < 0 else 1.0
    a = -1 / (sg + nz)
    beta = nx * ny * a
    B = [1 + sg * nx * nx * a, beta, nx,
         sg * beta, sg + ny * ny * a, ny,
         -sg * nx, -ny, nz]
    F = [R[3 * r] * B[c] + R[3 * r + 1] * B[3 + c] + R[3 * r + 2] * B[6 + c]
         for r in range(3) for c in range(3)]
    an, L = s['anchor'], s['segment_length']
    p = [head_p[r] + (R[3 * r] * an[0] + R[3 * r + 1] * an[1] + R[3 * r + 2] * an[2])
         for r in range(3)]
    out = [p]
    b, codes, _ = st
    M = (1 << (b - 1)) - 1
    for i in range(s['points'] - 1):
        x, y = codes[2 * i] / M, codes[2 * i + 1] / M
        z = 1 - abs(x) - abs(y)
        if z < 0:
            x, y = (1 - abs(y)) * sgn(x), (1 - abs(x)) * sgn(y)
        m = math.sqrt(x * x + y * y + z * z)
        o = (x / m, y / m, z / m)
        p = [p[r] + L * (F[3 * r] * o[0] + F[3 * r + 1] * o[1] + F[3 * r + 2] * o[2])
             for r in range(3)]
        out.append(p)
    return out


def parse_record(hexrec):
    r = Reader(bytes.fromhex(hexrec))
    rec = record(r, True, 3)  # the stream vectors' records: a 1.3 batch's (no state hash)
    need(r.left() == 0, 'length')
    return rec


def run_stream(v, fail):
    dec = StrandDecoder(v['shape'])
    inp, steps = None, 0
    for st in v['steps']:
        inp = st.get('input', inp)
        if 'record' not in st:
            continue
        try:
            got, pts = 'ok', dec.apply(int(st['tick']), parse_record(st['record']))
        except Err as e:
            got, pts = e.code, None
        if got != st['expect']:
            fail(f"tick {st['tick']}: {got}, vector says {st['expect']}")
            return
        if pts is None:
            continue
        if pts != st['decoded']:
            bad = next(i for i, (a, b) in enumerate(zip(pts, st['decoded'])) if a != b)
            fail(f"tick {st['tick']} point {bad}: {pts[bad]}, vector says {st['decoded'][bad]}")
            return
        if 'params' in v and v['params'] and inp:
            for i, (a, b) in enumerate(zip(pts, inp['points'])):
                if math.dist(a, b) > v['params']['max_error_m']:
                    fail(f"tick {st['tick']} point {i}: {math.dist(a, b)} m from the input")
        steps += 1
    return steps


def decode_compact_batch(b):
    """ref_compact.py's frame_batch_c framing (11.1, 11.2). It imports this file as the
    module ref_decoder, whose Err is not this script's when run as __main__."""
    import ref_compact  # not at the top: it imports this module
    try:
        return ref_compact.decode_batch(b)
    except ref_compact.Err as e:
        raise Err(e.code) from None


def main(root):
    failures, counts = [], {'valid': 0, 'invalid': 0, 'stream': 0, 'stream steps': 0}

    def names(sub, ext):
        return sorted(f[:-len(ext)] for f in os.listdir(os.path.join(root, sub)) if f.endswith(ext))

    def load(*p):
        with open(os.path.join(root, *p), 'rb') as f:
            return f.read()

    for n in names('valid', '.bin'):
        want = json.loads(load('valid', n + '.json'))
        try:
            got = decode_message(load('valid', n + '.bin'))
            if got != want:
                failures.append(f'valid/{n}: decodes to {json.dumps(got)}')
        except Err as e:
            failures.append(f'valid/{n}: {e.code}')
        counts['valid'] += 1
    for n in names('invalid', '.bin'):
        vec = json.loads(load('invalid', n + '.json'))
        want = vec['error']
        # "coding": "compact": a frame_batch_c (section 11.1), for ref_compact.py's decoder
        decode = decode_message
        if vec.get('coding') == 'compact':
            decode = decode_compact_batch
        try:
            decode(load('invalid', n + '.bin'))
            got = 'ok'
        except Err as e:
            got = e.code
        if got != want:
            failures.append(f'invalid/{n}: {got}, vector says {want}')
        counts['invalid'] += 1
    for n in names('stream', '.json'):
        steps = run_stream(json.loads(load('stream', n + '.json')), lambda s, n=n: failures.append(f'stream/{n}: {s}'))
        counts['stream'] += 1
        counts['stream steps'] += steps or 0
    for f in failures:
        print('FAIL', f)
    print('ref_decoder:', ', '.join(f'{v} {k}' for k, v in counts.items()), f'- {len(failures)} failures')
    return 1 if failures or counts['valid'] < 20 or counts['invalid'] < 40 or counts['stream'] < 10 else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else 'proto/vectors'))
