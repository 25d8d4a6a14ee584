#!/usr/bin/env python3
"""A third-party client of a live ponytaild, from proto/PROTOCOL.md alone: the WebSocket
handshake over a plain socket (RFC 6455, subprotocol ponytail.v1), hello 1.1, subscribe,
and every frame record decoded by ref_decoder.py. Each decoded tick is compared with the
daemon's own points for that tick (GET /v1/instances/{id}/frame, polled meanwhile): every
point must lie within the welcome's max_error_m (plus binary32 rounding).
With RATE_HZ (protocol 1.2, "Per-viewer rates"): hello 1.2 and a subscription at that
rate; every record must then be of a tick on the rate's grid (tick mod d = 0) and decode
through the records' step.
With compact (hello 1.2, features bit 0): frame_batch_c decoded by ref_compact.py; with
compact RATE_HZ too, the subscription asks for that rate and the frames come every d-th
tick as for classic ones, decoded through the records' step (PROTOCOL.md 11.2).
It runs for SECONDS and then on until at least 10 ticks are compared (the frames and the
polled points must meet on a tick: how often is the machine's speed), 30 s at most; batch
ticks must rise (and lie on the rate's grid), not come at some rate in wall time (issue 37).
Usage: ref_client.py HTTP_URL WS_PORT INSTANCE_ID SECONDS [compact] [RATE_HZ]; prints one summary
line, exit 1 on any failure."""
import base64
import json
import math
import os
import socket
import struct
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_decoder as rd  # noqa: E402
import ref_compact as rc  # noqa: E402


class Ws:
    def __init__(self, port):
        self.s = socket.create_connection(('127.0.0.1', port), timeout=5)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall((f'GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n'
                        f'Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n'
                        'Sec-WebSocket-Protocol: ponytail.v1\r\n\r\n').encode())
        self.buf = b''
        while b'\r\n\r\n' not in self.buf:
            d = self.s.recv(4096)
            if not d:
                raise RuntimeError('closed during the handshake')
            self.buf += d
        head, self.buf = self.buf.split(b'\r\n\r\n', 1)
        if not head.startswith(b'HTTP/1.1 101') or b'ponytail.v1' not in head:
            raise RuntimeError('handshake: ' + head.decode('latin1'))

    def send(self, payload):  # one binary frame, masked as a client must
        mask = os.urandom(4)
        n = len(payload)
        hdr = bytes([0x82, 0x80 | n]) if n < 126 else bytes([0x82, 0x80 | 126]) + struct.pack('>H', n)
        self.s.sendall(hdr + mask + bytes(b ^ mask[i & 3] for i, b in enumerate(payload)))

    def recv(self):
        """The next binary message (pings answered, fragments joined)."""
        msg = b''
        while True:
            fin, op, data = self.frame()
            if op == 9:
                self.control(10, data)
            elif op == 8:
                raise RuntimeError('closed: %r' % data[:2])
            elif op in (0, 2):
                msg += data
                if fin:
                    return msg

    def control(self, op, data):
        mask = os.urandom(4)
        self.s.sendall(bytes([0x80 | op, 0x80 | len(data)]) + mask + bytes(b ^ mask[i & 3] for i, b in enumerate(data)))

    def need(self, n):
        while len(self.buf) < n:
            d = self.s.recv(65536)
            if not d:
                raise RuntimeError('connection closed')
            self.buf += d

    def frame(self):
        self.need(2)
        b0, b1 = self.buf[0], self.buf[1]
        n, off = b1 & 127, 2
        if n == 126:
            self.need(4)
            n, off = struct.unpack('>H', self.buf[2:4])[0], 4
        elif n == 127:
            self.need(10)
            n, off = struct.unpack('>Q', self.buf[2:10])[0], 10
        self.need(off + n)
        data, self.buf = self.buf[off:off + n], self.buf[off + n:]
        return b0 >> 7, b0 & 15, data


def message(t, minor, body):
    return b'PT' + bytes([1, minor, t, 0]) + struct.pack('<I', len(body)) + body


def main(http, ws_port, iid, seconds, compact=False, rate=None):
    ws = Ws(ws_port)
    name = b'ref_client.py'
    minor = 2 if compact or rate is not None else 1
    if compact:  # hello 1.2 with features bit 0: frame_batch_c (PROTOCOL.md 11)
        ws.send(message(0x01, 2, bytes([1, 2, len(name)]) + name + bytes([1])))
    else:
        ws.send(message(0x01, 0, bytes([1, minor, len(name)]) + name))  # hello 1.1 or 1.2
    welcome = rd.decode_message(ws.recv())
    assert welcome['type'] == 'welcome' and welcome['minor'] == minor and welcome.get('header_minor') == minor, welcome
    bound = welcome['max_error_m']
    tick, time_us, hz = int(welcome['tick']), int(welcome['server_time_us']), welcome['tick_hz']
    sub = bytes([0]) + struct.pack('<HQ', 1, iid)  # no room, one id
    if rate is None:
        ws.send(message(0x03, 1, sub))
        div = 1
    else:
        ws.send(message(0x03, 2, sub + bytes([rate])))
        div = max(1, min(32, round(welcome['tick_hz'] / rate))) if rate else 1
    sdiv = div  # both codings: every d-th tick (PROTOCOL.md 5, 11.3)
    decoded, truth, t0 = {}, {}, time.time()
    done, lock = threading.Event(), threading.Lock()
    need, deadline = 10, t0 + max(seconds, 30)
    ws.s.settimeout(30)  # frames come every tick; a silence this long is a failure

    def running():
        if time.time() < t0 + seconds:
            return True
        with lock:
            met = len(set(decoded) & set(truth)) >= need
        if met or time.time() > deadline:
            done.set()
        return not done.is_set()

    def poll():  # the daemon's own points, a tick at a time
        while not done.is_set():
            with urllib.request.urlopen(f'{http}/v1/instances/{iid}/frame', timeout=30) as r:
                f = json.load(r)
            with lock:
                truth[f['tick']] = [p for s in f['strands'] for p in s]
            time.sleep(0.013)
    th = threading.Thread(target=poll)
    th.start()
    dec, batches, keys, errors, last_tick = None, 0, 0, [], None

    def rising(t):
        nonlocal last_tick
        if last_tick is not None and t <= last_tick:
            errors.append(f'tick {t} after {last_tick}')
        last_tick = t
    while running():
        raw = ws.recv()
        if compact and raw[4] == 0x87:
            gap, dev, recs = rc.decode_batch(raw)
            tick += gap
            time_us += (gap * 10**6 + hz // 2) // hz + dev
            batches += 1
            rising(tick)
            if tick % sdiv:
                errors.append(f'tick {tick} is not on the {rate} Hz grid')
            for rec in recs:
                keys += rec['flags'] & 1
                if rec['step'] != sdiv:
                    errors.append(f"tick {tick}: step {rec['step']}, not {sdiv}")
                try:
                    decoded[tick] = dec.apply_compact(tick, rec['step'], rec)[0]
                except rd.Err as e:
                    errors.append(f'tick {tick}: {e.code}')
            continue
        m = rd.decode_message(raw)
        if m['type'] == 'instance_event' and m['kind'] in ('added', 'changed', 'reset'):
            dec = rc.CompactDecoder(m['shape']) if compact else rd.StrandDecoder(m['shape'])
        elif m['type'] == 'frame_batch':
            batches += 1
            rising(int(m['tick']))
            if int(m['tick']) % sdiv:
                errors.append(f"tick {m['tick']} is not on the {rate} Hz grid")
            for rec in m['records']:
                keys += rec['flags']
                try:
                    decoded[int(m['tick'])] = dec.apply(int(m['tick']), rec)
                except rd.Err as e:
                    errors.append(f"tick {m['tick']}: {e.code}")
        elif m['type'] == 'error':
            errors.append(f'error {m}')
    done.set()
    th.join()
    common = sorted(set(decoded) & set(truth))
    worst = max((math.dist(a, b) for t in common for a, b in zip(decoded[t], truth[t])), default=None)
    # the bound holds for the doubles; each decoded float is then rounded (< 3e-7 m here)
    ok = not errors and len(common) >= need and worst is not None and worst <= bound + 3e-7
    print(f'ref_client: {batches} batches ({keys} keyframe records), {len(common)} ticks compared with '
          f'the daemon, worst {worst} m, bound {bound} m, errors {errors[:3]}'
          + (', compact' if compact else '') + (f', at {rate} Hz' if rate is not None else ''))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]),
                  len(sys.argv) > 5 and sys.argv[5] == 'compact',
                  int(sys.argv[-1]) if len(sys.argv) > 5 and sys.argv[-1] != 'compact' else None))
