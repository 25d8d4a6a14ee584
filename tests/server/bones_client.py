#!/usr/bin/env python3
"""Body-bone poses over the wire move a chest collider (issue 12 item 1), against a live
ponytaild. The instance: one 10 x 0.04 m strand hanging from the head's origin, and a chest
sphere (r 0.12 m) attached to "chest", whose rest pose puts it 0.5 m in front of the head.

1. A 1.2 client (hello minor 2) sends head poses only: the chest stays at its rest offset
   and the strand hangs straight (every point within 1 mm of the plumb line).
2. The same client sends the chest's pose 0.08 m in front of the strand: every point ends
   outside the sphere (distance >= r + particle radius - 1 mm) and the strand is pushed
   back (a point at z < -0.02 m).
3. A 1.1 client (hello minor 1) sends the very same bytes to a second instance: the bones
   are ignored (PROTOCOL.md 3), the head applies, the strand hangs straight, no error.
4. The REST pose endpoint takes "bones" too and names the field of a bad one.
5. A bone beyond 10 km gets error text naming bones[0].p; the connection stays open.
6. All 54 body bones in one head_pose (the limit; ids from PROTOCOL.md's table) are taken
   without an error; with the chest among them moved 5 m away the strand hangs straight.
7. The chest twice in one head_pose, far first, then in front: the later applies (the
   strand is pushed back).
4 also checks REST's field names for bad bones (bones.NAME, .p, .q, an unknown key, 55
entries), and that all 54 names, or a bone the instance has no collider on, are a 204.
Nothing here depends on the machine's speed (issue 37): a state the poses must bring
about is polled for (up to WAIT_S, 30 s), and "no error" means none before the pong to a
ping sent after the poses (the daemon answers a connection's messages in order).
Usage: bones_client.py HTTP_URL WS_PORT; exit 1 on any failure."""
import json
import math
import os
import struct
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'proto'))
import ref_decoder as rd  # noqa: E402
from ref_client import Ws, message  # noqa: E402

R, PR = 0.12, 0.005  # chest radius, particle radius


def spec_bone_names():
    """The bone table of proto/PROTOCOL.md section 5 (rows "| id | name | id | name | ..."):
    the names by id, read from the spec, not from the code under test."""
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
    names = {}
    for line in open(os.path.join(root, 'proto', 'PROTOCOL.md')):
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) == 6 and all(c.isdigit() for c in cells[0::2]):
            for i in range(0, 6, 2):
                names[int(cells[i])] = cells[i + 1]
    assert sorted(names) == list(range(54)), sorted(names)
    return [names[i] for i in range(54)]


BONE_NAMES = spec_bone_names()
WAIT_S = 30  # how long a state the daemon must reach is waited for
HEAD = (0.0, 1.6, 0.0)
CHEST = (0.0, 1.3, 0.08)
fails = []


def check(cond, what):
    print(('ok   ' if cond else 'FAIL ') + what)
    if not cond:
        fails.append(what)


def rest(http, method, path, body=None):
    req = urllib.request.Request(http + path, None if body is None else json.dumps(body).encode(),
                                 {'Content-Type': 'application/json'}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            data = r.read()
            return r.status, json.loads(data) if data else None
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b'null')


def create(http, name):
    body = {'name': name, 'prewarm_s': 0.2,
            'strands': [{'anchor': [0, 0, 0], 'direction': [0, -1, 0], 'points': 10,
                         'segment_length': 0.04, 'radius': PR}],
            'bones': {'chest': {'position': [0, -0.3, 0.5], 'rotation': [0, 0, 0, 1]}},
            'colliders': [{'shape': 'sphere', 'attach': 'chest', 'center': [0, 0, 0], 'radius': R}]}
    st, j = rest(http, 'POST', '/v1/instances', body)
    assert st == 201, (st, j)
    return j['id'], j['token']


def pose_bytes(iid, seq, bones):
    """head_pose at HEAD, identity; with bones (flags bit 2) when given: header minor 2."""
    flags = 4 if bones else 0
    body = struct.pack('<QIqB', iid, seq, 0, flags) + struct.pack('<7f', *HEAD, 0, 0, 0, 1)
    if bones:
        body += bytes([len(bones)])
        for bone, p in bones:
            body += bytes([bone]) + struct.pack('<7f', *p, 0, 0, 0, 1)
    return message(0x05, 2 if bones else 0, body)


def connect(ws_port, minor, iid, token):
    ws = Ws(ws_port)
    name = b'bones_client.py'
    ws.send(message(0x01, 0, bytes([1, minor, len(name)]) + name))
    w = rd.decode_message(ws.recv())
    assert w['type'] == 'welcome' and w['minor'] == minor, w
    tok = token.encode()
    ws.send(message(0x02, minor, struct.pack('<Q', iid) + bytes([len(tok)]) + tok))
    return ws


def stream(ws, iid, seconds, bones, seq0):
    seq = seq0
    stop = time.time() + seconds
    while time.time() < stop:
        seq += 1
        ws.send(pose_bytes(iid, seq, bones))
        time.sleep(1 / 60)
    return seq


def points(http, iid):
    st, f = rest(http, 'GET', f'/v1/instances/{iid}/frame')
    assert st == 200, (st, f)
    return [p for s in f['strands'] for p in s]


PINGS = [0]


def errors_before_pong(ws, minor):
    """The error messages the daemon sent for what this connection sent before now: a ping
    is answered after everything sent before it, so those errors precede its pong (nothing
    is subscribed: no frames). Returns (errors, pong)."""
    PINGS[0] += 1
    ident = 7000000000 + PINGS[0]
    ws.s.settimeout(WAIT_S)
    ws.send(message(0x07, minor, struct.pack('<q', ident)))
    errs = []
    while True:
        m = rd.decode_message(ws.recv())
        if m['type'] == 'error':
            errs.append(m)
        elif m['type'] == 'pong' and m['client_time_us'] == str(ident):
            ws.s.settimeout(5)
            return errs, m


def eventually(fn, ok):
    """fn()'s value once ok(value) holds, or its last value after WAIT_S seconds."""
    end = time.time() + WAIT_S
    while True:
        v = fn()
        if ok(v) or time.time() > end:
            return v
        time.sleep(0.05)


def at_head(pts):
    return abs(pts[0][1] - HEAD[1]) < 1e-4  # the root where the head poses put it


def gap_back(http, iid):
    """How far the strand is outside the chest sphere, and how far back it went."""
    pts = points(http, iid)
    return min(math.dist(p, CHEST) for p in pts) - R - PR, min(p[2] for p in pts)


def pushed(gb):
    return gb[0] >= -1e-3 and gb[1] < -0.02


def hangs_straight(pts):
    return max(math.hypot(p[0] - HEAD[0], p[2] - HEAD[2]) for p in pts)


def main(http, ws_port):
    a, ta = create(http, 'bones-a')
    ws = connect(ws_port, 2, a, ta)
    seq = stream(ws, a, 0.6, None, 0)
    # The head poses only: once applied (the root at the head), the strand hangs straight.
    pts = eventually(lambda: points(http, a), at_head)
    off = hangs_straight(pts)
    check(at_head(pts) and off < 1e-3,
          f'1.2 client, head only: the strand hangs straight ({off * 1e3:.3f} mm off the plumb line)')
    seq = stream(ws, a, 1.2, [(2, CHEST)], seq)
    gap, back = eventually(lambda: gap_back(http, a), pushed)
    check(gap >= -1e-3, f'chest pose over the wire: no point inside the chest (gap {gap * 1e3:.3f} mm)')
    check(back < -0.02, f'the chest pushed the strand back (z down to {back:.3f} m)')
    errs, _ = errors_before_pong(ws, 2)
    check(not errs, f'no errors for good bone poses ({errs[:1]})')
    # 5: a bone 20 km away: refused with the field named, the connection stays open
    ws.send(pose_bytes(a, seq + 1, [(2, (2e4, 1.3, 0))]))
    errs, pong = errors_before_pong(ws, 2)
    check(any('bones[0].p' in e['text'] for e in errs), f'far bone: error names bones[0].p ({errs[:1]})')
    check(pong['type'] == 'pong', 'the connection stays open after the refused pose')
    # 6: every body bone in one head_pose (54, the limit), the chest 5 m away: no error,
    # and the strand hangs straight again (the chest moved off, the others move nothing)
    far = (0.0, 1.3, 5.0)
    all54 = [(i, far if i == 2 else (0.01 * i, 1.0, 3.0)) for i in range(54)]
    seq = stream(ws, a, 0.6, all54, seq + 1)
    errs, _ = errors_before_pong(ws, 2)
    check(not errs, f'54 bones in one head_pose: no error ({errs[:1]})')
    pts = eventually(lambda: points(http, a), lambda p: hangs_straight(p) < 1e-3)
    check(hangs_straight(pts) < 1e-3,
          f'54 bones, chest far away: the strand hangs straight ({hangs_straight(pts) * 1e3:.3f} mm)')
    # 7: the chest twice in one message, far first, then in front of the strand: the later
    # wins (PROTOCOL.md 5), so the strand is pushed back again
    seq = stream(ws, a, 1.2, [(2, far), (2, CHEST)], seq)
    gap, back = eventually(lambda: gap_back(http, a), pushed)
    check(pushed((gap, back)), f'a repeated bone: the later pose applies (z down to {back:.3f} m)')
    errs, _ = errors_before_pong(ws, 2)
    check(not errs, f'no error for a repeated bone ({errs[:1]})')

    # 3: a 1.1 client's bones are ignored
    b, tb = create(http, 'bones-b')
    old = connect(ws_port, 1, b, tb)
    stream(old, b, 1.0, [(2, CHEST)], 0)
    # Applied (the root at the head, as the poses put it) and straight: the bones ignored.
    errs, _ = errors_before_pong(old, 1)
    check(not errs, f'1.1 client: no error for the ignored bones ({errs[:1]})')
    pts = eventually(lambda: points(http, b), at_head)
    off = hangs_straight(pts)
    check(at_head(pts) and off < 1e-3,
          f'1.1 client sending bones: ignored, the strand hangs straight ({off * 1e3:.3f} mm)')

    # 4: REST
    auth = {'Authorization': 'Bearer ' + tb}
    def put(body):
        req = urllib.request.Request(f'{http}/v1/instances/{b}/pose', json.dumps(body).encode(),
                                     {'Content-Type': 'application/json', **auth}, method='PUT')
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, None
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())
    for _ in range(60):
        st, _ = put({'p': list(HEAD), 'q': [0, 0, 0, 1], 'bones': {'chest': {'p': list(CHEST), 'q': [0, 0, 0, 2]}}})
        time.sleep(1 / 60)
    check(st == 204, f'REST pose with bones: {st}')
    gap, back = eventually(lambda: gap_back(http, b), pushed)
    check(pushed((gap, back)), f'REST bones move the chest (gap {gap * 1e3:.3f} mm, z down to {back:.3f} m)')
    ok_bone = {'p': [0, 1, 0], 'q': [0, 0, 0, 1]}
    all54 = {name: ok_bone for name in BONE_NAMES}
    for bones, field in (({'chst': {'p': [0, 0, 0], 'q': [0, 0, 0, 1]}}, 'bones.chst'),
                         ({'chest': {'p': [0, 0, 0], 'q': [0, 0, 0, 0]}}, 'bones.chest.q'),
                         ({'chest': {'p': [0, 'x', 0], 'q': [0, 0, 0, 1]}}, 'bones.chest.p'),
                         ({'hips': ok_bone, 'left_hand': {'p': [0, 0, 2e4], 'q': [0, 0, 0, 1]}},
                          'bones.left_hand.p'),
                         ({'chest': {'p': [0, 0, 0], 'q': [0, 0, 0, 1], 'v': [0, 0, 0]}}, 'bones.chest.v'),
                         ({'head': ok_bone}, 'bones.head'),  # the head is p and q, not a bone
                         # a long name is cut to 64 bytes, back to a character boundary
                         ({'a' + '\u00e9' * 40: ok_bone}, 'bones.a' + '\u00e9' * 31),
                         ({**all54, 'tail': ok_bone}, 'bones'),  # 55 entries
                         ([1, 2], 'bones')):
        st, j = put({'p': list(HEAD), 'q': [0, 0, 0, 1], 'bones': bones})
        check(st == 422 and j and j['error'].get('field') == field,
              f'REST bad bones {json.dumps(bones)[:80]}: {st} {j}')
    # every body bone at once (54, the limit): accepted, though the instance uses only the
    # chest; the others are held by core and move nothing
    st, j = put({'p': list(HEAD), 'q': [0, 0, 0, 1], 'bones': all54})
    check(st == 204, f'REST pose with all 54 bones: {st} {j}')
    st, j = put({'p': list(HEAD), 'q': [0, 0, 0, 1], 'bones': {'left_little_distal': ok_bone}})
    check(st == 204, f'REST pose for a bone the instance does not use: {st} {j}')
    print(f'bones_client: {len(fails)} failures')
    return 1 if fails else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1], int(sys.argv[2])))
