#!/usr/bin/env python3
"""A deliberately slow WebSocket consumer for tests/server/js/lifecycle.test.mjs.

Connects with a small receive buffer (SO_RCVBUF, which also turns off the kernel's
autotuning, so a stalled reader blocks the server within a fraction of a second instead
of after many megabytes), says hello, subscribes to a room, stops reading for PAUSE
seconds, then reads for READ seconds and prints one JSON line: the tick and
(id, flags, step) of every record of every frame batch received, in order.

Usage: slow_client.py PORT ROOM PAUSE READ [MINOR] [compact]
MINOR 2 speaks protocol 1.2 (subscribe with rate_hz 0: every tick, and the server may
move it down a rate while it is behind); the default 0 speaks 1.0. `compact` (with MINOR
2) asks for compact frames (frame_batch_c, PROTOCOL.md 11): ticks from welcome's tick and
the batches' tick gaps, steps from the records' flags bits 2..5 (classic 1.2: bits 1..5).
"""
import base64, json, os, socket, struct, sys, time

port, room, pause, read_s = int(sys.argv[1]), sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
minor = int(sys.argv[5]) if len(sys.argv) > 5 else 0
compact = len(sys.argv) > 6 and sys.argv[6] == 'compact'

def msg(mtype, payload, header_minor=0):
    return b"PT" + bytes([1, header_minor, mtype, 0]) + struct.pack("<I", len(payload)) + payload

def frame(data):
    mask = os.urandom(4)
    head = bytes([0x82]) + (bytes([0x80 | len(data)]) if len(data) < 126 else bytes([0x80 | 126]) + struct.pack(">H", len(data)))
    return head + mask + bytes(b ^ mask[i & 3] for i, b in enumerate(data))

s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", port))
key = base64.b64encode(os.urandom(16)).decode()
s.sendall(f"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
          f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
          f"Sec-WebSocket-Protocol: ponytail.v1\r\n\r\n".encode())
buf = b""
while b"\r\n\r\n" not in buf:
    buf += s.recv(4096)
head, buf = buf.split(b"\r\n\r\n", 1)
assert head.startswith(b"HTTP/1.1 101"), head
if compact:  # hello 1.2 with features bit 0
    s.sendall(frame(msg(0x01, bytes([1, 2, 4]) + b"slow" + bytes([1]), 2)))
else:
    s.sendall(frame(msg(0x01, bytes([1, minor, 4]) + b"slow")))
r = room.encode()
sub = bytes([len(r)]) + r + struct.pack("<H", 0)
s.sendall(frame(msg(0x03, sub + bytes([0]), 2) if minor >= 2 else msg(0x03, sub)))
time.sleep(pause)

def varint(b, o):
    x, sh = 0, 0
    while True:
        x |= (b[o] & 0x7f) << sh
        sh += 7
        o += 1
        if not b[o - 1] & 0x80:
            return x, o

batches, total, ctick = [], 0, None
s.settimeout(0.05)
end = time.time() + read_s
while time.time() < end:
    try:
        chunk = s.recv(65536)
    except socket.timeout:
        chunk = b""
    if chunk == b"" and time.time() >= end:
        break
    total += len(chunk)
    buf += chunk
    while len(buf) >= 2:
        n, off = buf[1] & 127, 2
        if n == 126:
            if len(buf) < 4: break
            n, off = struct.unpack(">H", buf[2:4])[0], 4
        elif n == 127:
            if len(buf) < 10: break
            n, off = struct.unpack(">Q", buf[2:10])[0], 10
        if len(buf) < off + n: break
        op, p = buf[0] & 15, buf[off:off + n]
        buf = buf[off + n:]
        if op != 2:
            continue
        if p[4] == 0x81:  # welcome: the compact batch clock starts at its tick
            ctick = struct.unpack("<Q", p[31:39])[0]
            continue
        if p[4] == 0x87:  # frame_batch_c: tick_gap, time_dev, count, records
            gap, o = varint(p, 10)
            _, o = varint(p, o)
            count, o = varint(p, o)
            ctick += gap
            recs = []
            for _ in range(count):
                hi, o = varint(p, o)
                lo, o = varint(p, o)
                flags = p[o]
                blen, o = varint(p, o + 1)
                recs.append([hi << 32 | lo, flags & ~0x3c, (flags >> 2 & 15) + 1])
                o += blen
            if gap == 0 and batches:  # a split batch continues
                batches[-1][1].extend(recs)
            else:
                batches.append([ctick, recs])
            continue
        if p[4] != 0x82:
            continue
        tick, _, count = struct.unpack("<QqH", p[10:28])
        recs, o = [], 28
        for _ in range(count):
            rid, flags = struct.unpack("<QB", p[o:o + 9])
            dlen = struct.unpack("<H", p[o + 31:o + 33])[0]
            recs.append([rid, flags, (flags >> 1 & 31) + 1 if minor >= 2 else 1])
            o += 33 + dlen
        batches.append([tick, recs])
print(json.dumps({"bytes": total, "batches": batches}))
