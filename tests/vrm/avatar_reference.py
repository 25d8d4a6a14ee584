#!/usr/bin/env python3
"""The independent spring-bone reference (springbone_reference.py's update, per the
VRMC_springBone 1.0 spec and its 0.x interpretation) run on the generated test avatar files
(tests/fixtures/vrm/test_avatar_{1,0}.vrm, written by make_test_avatar.py), against
`ponytail import-vrm --length rest` (the spec's bone length) + `ponytail sim`: every point of
every frame within 1e-4 m.

What this adds to springbone_reference.py: a full skeleton (hips to head, arms, legs), the
spring's `center` (VRM 1.0 here: the head, so inertia lives in the head's space), VRM 0.x
(boneGroups, a chain down children[0], the 7 cm virtual tail past the leaf, collider
offsets in Unity's frame, the model facing -Z), and every collider shape the files hold:
sphere, capsule and the extended plane (VRMC_springBone_extended_collider; its fallback
sphere is ignored, as a runtime with the extension does).

The scene: the whole avatar moves rigidly with the head pose (the model's root carried so
that the head bone has the pose), and every body bone of the import's "bones" table gets
its pose in the pose lines, as a client whose avatar moves in one piece sends them (an
unposed chest would keep still while the head turns: core/SCHEMA.md). Everything is read from the GLB here; nothing
of the importer is used but its output. Frames: the reference runs in the importer's
head frame (the head bone's rest position and axes; 0.x turned 180 degrees about Y), the
frame in which the instance at pose identity is the avatar at rest.

usage: avatar_reference.py BUILD_DIR
"""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from springbone_reference import (add, dot, from_to, head_at, length, normalize, qconj,  # noqa: E402
                                  qmul, qrot, scale, sub)

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fixtures', 'vrm')
VIRTUAL_TAIL_M = 0.07
TURN_Y = [0.0, 1.0, 0.0, 0.0]


def read_glb(path):
    b = open(path, 'rb').read()
    magic, _ver, _total = struct.unpack('<4sII', b[:12])
    assert magic == b'glTF'
    jl, _jt = struct.unpack('<II', b[12:20])
    return json.loads(b[20:20 + jl])


class Avatar:
    def __init__(self, doc):
        self.nodes = doc['nodes']
        self.parent = {c: i for i, n in enumerate(self.nodes) for c in n.get('children', [])}
        self.local_t = [list(n.get('translation', [0, 0, 0])) for n in self.nodes]
        self.local_q = [list(n.get('rotation', [0, 0, 0, 1])) for n in self.nodes]
        ext = doc['extensions']
        self.v1 = 'VRMC_vrm' in ext
        if self.v1:
            head = ext['VRMC_vrm']['humanoid']['humanBones']['head']['node']
        else:
            head = next(b['node'] for b in ext['VRM']['humanoid']['humanBones'] if b['bone'] == 'head')
        self.head = head
        # the importer's head frame: rest position, rest axes (0.x: turned about Y)
        hp, hq = self.gltf_world(head)
        self.origin = hp
        self.frame = hq if self.v1 else qmul(hq, TURN_Y)
        inv = qconj(self.frame)
        # rest world transforms of every node in that frame
        self.rest = []
        for i in range(len(self.nodes)):
            p, q = self.gltf_world(i)
            self.rest.append((qrot(inv, sub(p, self.origin)), qmul(inv, q)))
        self.to_frame_dir = lambda d: qrot(inv, d)
        self.read_springs(ext)
        self.spring_nodes = {j['node'] for ch in self.chains for j in ch['joints']}
        self.pose = ([0, 0, 0], [0, 0, 0, 1])

    def gltf_world(self, i):
        if i not in self.parent:
            return self.local_t[i], self.local_q[i]
        pp, pq = self.gltf_world(self.parent[i])
        return add(pp, qrot(pq, self.local_t[i])), qmul(pq, self.local_q[i])

    def read_springs(self, ext):
        self.chains = []
        if self.v1:
            sb = ext['VRMC_springBone']
            cols = []
            for c in sb['colliders']:
                shape = c.get('extensions', {}).get('VRMC_springBone_extended_collider', {}).get('shape') or c['shape']
                cols.append((c['node'], shape))
            for s in sb['springs']:
                group = [cols[k] for g in s.get('colliderGroups', []) for k in sb['colliderGroups'][g]['colliders']]
                js = s['joints']
                joints = [{'node': j['node'], 'stiffness': j['stiffness'], 'drag': j['dragForce'],
                           'gravity': j['gravityPower'], 'dir': self.to_frame_dir(j['gravityDir']),
                           'hit': j['hitRadius'], 'tail': js[k + 1]['node']} for k, j in enumerate(js[:-1])]
                self.chains.append({'joints': joints, 'colliders': group, 'center': s.get('center'),
                                    'virtual_tail': None})
            return
        sa = ext['VRM']['secondaryAnimation']
        unity = lambda v: [v['x'], v['y'], -v['z']]  # 0.x vectors are in Unity's frame
        groups = [[(g['node'], {'sphere': {'offset': unity(c['offset']), 'radius': c['radius']}})
                   for c in g['colliders']] for g in sa['colliderGroups']]
        for bg in sa['boneGroups']:
            for root in bg['bones']:
                chain = [root]
                while self.nodes[chain[-1]].get('children'):
                    chain.append(self.nodes[chain[-1]]['children'][0])
                leaf = chain[-1]
                lp, lq = self.rest[leaf]
                pp, _ = self.rest[self.parent[leaf]]
                tail_w = add(lp, scale(normalize(sub(lp, pp)), VIRTUAL_TAIL_M))
                joints = [{'node': n, 'stiffness': bg['stiffiness'], 'drag': bg['dragForce'],
                           'gravity': bg['gravityPower'], 'dir': self.to_frame_dir(unity(bg['gravityDir'])),
                           'hit': bg['hitRadius'], 'tail': chain[k + 1] if k + 1 < len(chain) else None}
                          for k, n in enumerate(chain)]
                self.chains.append({'joints': joints, 'center': None if bg['center'] < 0 else bg['center'],
                                    'colliders': [c for g in bg['colliderGroups'] for c in groups[g]],
                                    # the virtual tail: fixed in the leaf's rest frame
                                    'virtual_tail': qrot(qconj(lq), sub(tail_w, lp))})

    # ---- the scene ----
    def world(self, i):
        """Position and rotation of node i now: spring joints from their parents and their
        current local rotation, every other node carried rigidly by the head pose."""
        if i not in self.spring_nodes:
            p, q = self.rest[i]
            P, Q = self.pose
            return add(P, qrot(Q, p)), qmul(Q, q)
        pp, pq = self.world(self.parent[i])
        return add(pp, qrot(pq, self.local_t[i])), qmul(pq, self.local_q[i])

    def tail_world(self, j, chain):
        if j['tail'] is not None:
            return self.world(j['tail'])[0]
        p, q = self.world(j['node'])
        return add(p, qrot(q, chain['virtual_tail']))

    def tail_local(self, j, chain):
        """The tail in the joint's local frame (at rest)."""
        if j['tail'] is not None:
            return self.local_t[j['tail']]
        return chain['virtual_tail']

    def center(self, chain):
        if chain['center'] is None:
            return [0, 0, 0], [0, 0, 0, 1]
        return self.world(chain['center'])

    def start(self):
        for ch in self.chains:
            cp, cq = self.center(ch)
            for j in ch['joints']:
                t = self.tail_world(j, ch)
                j['cur'] = j['prev'] = qrot(qconj(cq), sub(t, cp))  # center space
                j['axis'] = normalize(self.tail_local(j, ch))
                j['len'] = length(sub(t, self.world(j['node'])[0]))
                j['init'] = list(self.local_q[j['node']])

    def collide(self, nxt, pos, j, ch):
        for node, shape in ch['colliders']:
            np_, nq = self.world(node)
            at = lambda v: add(np_, qrot(nq, v))
            if 'plane' in shape:
                n = normalize(qrot(nq, shape['plane']['normal']))
                d = dot(sub(nxt, at(shape['plane']['offset'])), n) - j['hit']
                if d < 0:
                    nxt = sub(nxt, scale(n, d))
                    nxt = add(pos, scale(normalize(sub(nxt, pos)), j['len']))
                continue
            if 'capsule' in shape:
                a, b = at(shape['capsule']['offset']), at(shape['capsule']['tail'])
                ab = sub(b, a)
                t = max(0.0, min(1.0, dot(sub(nxt, a), ab) / dot(ab, ab)))
                c, r = add(a, scale(ab, t)), shape['capsule']['radius']
            else:
                c, r = at(shape['sphere']['offset']), shape['sphere']['radius']
            d = length(sub(nxt, c)) - r - j['hit']
            if d < 0:
                nxt = sub(nxt, scale(normalize(sub(nxt, c)), d))
                nxt = add(pos, scale(normalize(sub(nxt, pos)), j['len']))
        return nxt

    def step(self, dt):
        for ch in self.chains:
            for j in ch['joints']:
                cp, cq = self.center(ch)
                to_w = lambda v: add(cp, qrot(cq, v))
                pos = self.world(j['node'])[0]
                parent_rot = self.world(self.parent[j['node']])[1]
                cur, prev = to_w(j['cur']), to_w(j['prev'])
                inertia = scale(sub(cur, prev), 1.0 - j['drag'])
                stiff = scale(qrot(qmul(parent_rot, j['init']), j['axis']), dt * j['stiffness'])
                ext = scale(j['dir'], dt * j['gravity'])
                nxt = add(add(add(cur, inertia), stiff), ext)
                nxt = add(pos, scale(normalize(sub(nxt, pos)), j['len']))
                nxt = self.collide(nxt, pos, j, ch)
                j['prev'] = j['cur']
                j['cur'] = qrot(qconj(cq), sub(nxt, cp))
                w0 = qmul(parent_rot, j['init'])
                to = normalize(qrot(qconj(w0), sub(nxt, pos)))
                self.local_q[j['node']] = qmul(j['init'], from_to(j['axis'], to))

    def points(self):
        out = []
        for ch in self.chains:
            cp, cq = self.center(ch)
            pts = [self.world(ch['joints'][0]['node'])[0]]
            pts += [add(cp, qrot(cq, j['cur'])) for j in ch['joints']]
            out.append(pts)
        return out


def run(build, path, ticks=240):
    cli = os.path.join(build, 'bin', 'ponytail')
    name = os.path.basename(path)
    imp = subprocess.run([cli, 'import-vrm', '--prewarm', '0', '--length', 'rest', path], capture_output=True, text=True)
    if imp.returncode != 0:
        sys.exit('FAIL: import-vrm %s: %s' % (name, imp.stderr))
    inst = json.loads(imp.stdout)
    av = Avatar(read_glb(path))
    av.pose = head_at(0)  # an instance starts at rest at its first pose (tick contract)
    av.start()
    P, Q = av.pose
    for s, pts in enumerate(av.points()):  # the rest shape, point for point
        for p, want in zip(inst['strands'][s]['rest'], pts):
            if length(sub(add(P, qrot(Q, p)), want)) > 1e-6:
                sys.exit('FAIL: %s strand %d rest %s, the file says %s' % (name, s, p, want))
    ref = []
    for k in range(ticks):
        av.pose = head_at(k / 60)
        av.step(1.0 / 60)
        ref.append(av.points())
    worst_all = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, 'inst.json'), 'w') as f:
            json.dump(inst, f)
        with open(os.path.join(tmp, 'poses.jsonl'), 'w') as f:
            for k in range(ticks):
                p, q = head_at(k / 60)
                line = {'tick': k, 'p': p, 'q': q}
                if inst.get('bones'):  # head-local rest poses, carried with the head
                    line['bones'] = {b: {'p': add(p, qrot(q, r['position'])),
                                         'q': qmul(q, r['rotation'])}
                                     for b, r in inst['bones'].items()}
                f.write(json.dumps(line) + '\n')
        for substeps in (1, 4):
            sim = subprocess.run([cli, 'sim', os.path.join(tmp, 'inst.json'), '--poses',
                                  os.path.join(tmp, 'poses.jsonl'), '--ticks', str(ticks),
                                  '--substeps', str(substeps)], capture_output=True, text=True)
            if sim.returncode != 0:
                sys.exit('FAIL: sim %s: %s' % (name, sim.stderr))
            worst, frames = 0.0, 0
            for k, line in enumerate(sim.stdout.splitlines()):
                frames += 1
                for s, strand in enumerate(json.loads(line)['strands']):
                    if len(strand) != len(ref[k][s]):
                        sys.exit('FAIL: %s strand %d has %d points, the reference %d' % (name, s, len(strand), len(ref[k][s])))
                    for p, want in zip(strand, ref[k][s]):
                        worst = max(worst, length(sub(p, want)))
            if frames != ticks:
                sys.exit('FAIL: %s: sim wrote %d frames, not %d' % (name, frames, ticks))
            moved = max(length(sub(ref[k][s][-1], ref[0][s][-1])) for k in range(ticks) for s in range(len(ref[0])))
            print('%s, %d substeps: max %.2g m from the reference over %d frames (tips move %.2f m)'
                  % (name, substeps, worst, ticks, moved))
            if worst > 1e-4 or moved < 0.05:
                sys.exit('FAIL: %s: springbone differs from the reference by %.3g m' % (name, worst))
            worst_all = max(worst_all, worst)
    return worst_all


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else 'build'
    for f in ('test_avatar_1.vrm', 'test_avatar_0.vrm'):
        run(build, os.path.join(FIX, f))
    print('ok: springbone reference on the test avatar')


if __name__ == '__main__':
    main()
