#!/usr/bin/env python3
"""Reference decoder for the compact coding (PROTOCOL.md section 11), written from the
document; the strand blocks, Exp-Golomb and reconstruction are ref_decoder.py's
(sections 7.1-7.3). Decodes every stream of proto/vectors/compact/ and compares ticks,
server times, errors, points and head poses with the vector, exactly."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ref_decoder import FLT_MAX, Bits, Err, StrandDecoder, f32, need, rotation, strand_points, unzigzag  # noqa: E402


def varint(b, pos):
    """11.1: LEB128, at most 10 bytes, the tenth <= 1, the shortest form only."""
    x = 0
    for i in range(10):
        need(pos < len(b), 'truncated')
        byte = b[pos]
        pos += 1
        need(not (i == 9 and byte > 1), 'range')
        x |= (byte & 0x7f) << (7 * i)
        if not byte & 0x80:
            need(not (byte == 0 and i > 0), 'range')
            return x, pos
    raise Err('range')


def decode_batch(b):
    """Section 2's header checks, then 11.1 and 11.2's framing."""
    need(len(b) >= 10, 'truncated')
    need(b[0:2] == b'PT', 'bad_magic')
    need(b[2] == 1, 'version')
    length = int.from_bytes(b[6:10], 'little')
    need(length <= 1 << 20, 'too_big')
    need(length <= len(b) - 10, 'truncated')
    need(length == len(b) - 10, 'length')
    minor = b[3]
    strict = minor <= 4  # this document's minor (3: 1.2's layout, never sent)
    need(not strict or b[5] == 0, 'flags')
    need(b[4] == 0x87, 'unknown_type')
    gap, pos = varint(b, 10)
    need(gap <= 1 << 32, 'range')
    z, pos = varint(b, pos)
    dev = -(z + 1) // 2 if z & 1 else z // 2
    count, pos = varint(b, pos)
    need(count <= 65535, 'limit')
    need(count * 4 <= len(b) - pos, 'count')
    recs = []
    for _ in range(count):
        hi, pos = varint(b, pos)
        lo, pos = varint(b, pos)
        need(hi < 1 << 32 and lo < 1 << 32, 'range')
        need(pos < len(b), 'truncated')
        fl = b[pos]
        pos += 1
        n, pos = varint(b, pos)
        need(n <= 65535, 'range')
        need(pos + n <= len(b), 'truncated')
        # flags bits 2..5: the stream's step - 1 (PROTOCOL.md 11.2)
        rec = {'id': hi << 32 | lo, 'flags': fl & ~0x3c, 'step': (fl >> 2 & 15) + 1, 'body': b[pos:pos + n]}
        if minor >= 4 and fl & 1:  # 1.4: a key record's body ends with the u64 state hash
            need(n >= 8, 'truncated')
            rec['body'], rec['state_hash'] = b[pos:pos + n - 8], int.from_bytes(b[pos + n - 8:pos + n], 'little')
        recs.append(rec)
        pos += n
    need(not strict or pos == len(b), 'trailing')
    return gap, dev, recs


def triple(bits):
    k = bits.get(4)
    out = []
    for _ in range(3):
        v = unzigzag(bits.eg(k))
        need(abs(v) < 1 << 19, 'range')
        out.append(v)
    return out


def signed(v, n):
    return v - (1 << n) if v >= 1 << (n - 1) else v


class CompactDecoder(StrandDecoder):
    """11.3: the head block and its history, then section 7's strand blocks."""

    def __init__(self, shape):
        super().__init__(shape)
        self.head = None  # (seq, largest, cur[6], vel[6])

    def apply_compact(self, tick, step, rec):
        bits = Bits(rec['body'])
        in_seq = self.last_tick is not None and tick - self.last_tick == step
        largest = rec['flags'] >> 6
        if rec['flags'] & 2:  # abs
            seq = bits.get(32)
            cur = [signed(bits.get(32), 32) for _ in range(3)] + [signed(bits.get(16), 16) for _ in range(3)]
            vel = triple(bits) + triple(bits)
        else:
            need(self.head is not None and in_seq, 'no_key')
            oseq, olargest, ocur, ovel = self.head
            d = bits.eg(0)
            need(d < 1 << 20, 'range')
            seq = (oseq + d) % (1 << 32)
            r = triple(bits) + triple(bits)
            need(largest == olargest, 'range')
            cur = [ocur[j] + ovel[j] + r[j] for j in range(6)]
            vel = [cur[j] - ocur[j] for j in range(6)]
            need(all(abs(v) < 1 << 19 for v in vel), 'range')
        need(all(abs(p) <= 1 << 30 for p in cur[:3]), 'range')
        need(all(-32767 <= c <= 32767 for c in cur[3:]), 'range')
        need(sum(c * c for c in cur[3:]) <= 46340 * 46340, 'range')
        new, raw = [], []
        for s, st in zip(self.shape, self.state):
            new_st, pts = self.block(bits, s, st, in_seq)
            new.append(new_st)
            raw.append(pts)
        pad = bits.n - bits.pos
        need(pad < 8, 'trailing')
        need(bits.get(pad) == 0, 'flags')
        hq = {'largest': largest, 'c': cur[3:]}
        head_p = [p / 65536 for p in cur[:3]]
        R = rotation(hq)
        out = []
        for s, st, pts in zip(self.shape, new, raw):
            out += pts if pts is not None else strand_points(s, st, R, head_p)
        for p in out:
            need(all(abs(c) <= FLT_MAX for c in p), 'range')
        self.state, self.last_tick, self.head = new, tick, (seq, largest, cur, vel)
        return [[f32(c) for c in p] for p in out], seq, head_p, hq


def run(v):
    dec = CompactDecoder(v['shape'])
    tick, time_us, hz = int(v['welcome_tick']), int(v['welcome_time_us']), v['tick_hz']
    applied = 0
    for st in v['steps']:
        if 'message' not in st:
            continue
        gap, dev, recs = decode_batch(bytes.fromhex(st['message']))
        tick += gap
        time_us += (gap * 10**6 + hz // 2) // hz + dev
        if tick != int(st['tick']) or time_us != int(st['time_us']):
            return f"tick {st['tick']}: the clock says {tick} at {time_us}"
        if recs[0]['step'] != v['step']:
            return f"tick {st['tick']}: the record says step {recs[0]['step']}, the stream {v['step']}"
        try:
            got = 'ok', dec.apply_compact(tick, recs[0]['step'], recs[0])
        except Err as e:
            got = e.code, None
        if got[0] != st['expect']:
            return f"tick {st['tick']}: {got[0]}, vector says {st['expect']}"
        if got[1] is None:
            continue
        pts, seq, head_p, hq = got[1]
        h = st['head']
        if pts != st['decoded'] or seq != h['last_seq'] or head_p != h['head_p'] or hq != {'largest': h['largest'], 'c': h['c']}:
            return f"tick {st['tick']}: decodes differently"
        applied += 1
    return None if applied >= 10 else 'too few records applied'


def main(root):
    d = os.path.join(root, 'compact')
    names = sorted(f for f in os.listdir(d) if f.endswith('.json'))
    failures = []
    for n in names:
        with open(os.path.join(d, n)) as f:
            why = run(json.load(f))
        if why:
            failures.append(f'compact/{n}: {why}')
    for f in failures:
        print('FAIL', f)
    print(f'ref_compact: {len(names)} streams - {len(failures)} failures')
    return 1 if failures or len(names) < 6 else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else 'proto/vectors'))
