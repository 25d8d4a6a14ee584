#!/usr/bin/env python3
"""A model, in Python double precision, of what @pixiv/three-vrm 3.5.5's spring bones do on a
VRM 1.0 file (VRMSpringBoneManager.update + VRMSpringBoneJoint.update, read from its source;
springs without `center`), driven by the world poses of the humanoid bones tick by tick:
the VRMC_springBone 1.0 update with one difference from the spec, selectable here.

- length="threevrm": a joint's bone length is measured, every tick, from the joint's position
  now to its child node's world position as the previous tick left it (three-vrm reads
  `child.matrixWorld`, which the manager updates only when it steps the child's own joint,
  later in the tick). The child node sits at the rigid length along the tail's direction, so
  the length is |p_i(t) - (p_i(t-1) + |c_i| d_i(t-1))|, d_i the tail's direction at the end
  of tick t - 1 (the rest pose before tick 0); the tail state keeps that length while the
  nodes (what a frame shows) keep the rigid one.
- length="rigid": the spec's constant length |c_i| (c_i = the child's rest translation).

Colliders push in the order the spring lists its collider groups, each group in its own
order (index_order=True: in the file's collider order instead, each collider once). Non-joint nodes between a humanoid bone and a chain root (and a branch's root under
another chain's joint) are carried at their rest local transform by their parent's pose now.

Used by threevrm_parity.py: model(frames of threevrm_drive.mjs) -> joint positions per tick.
"""
import json
import math
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from springbone_reference import add, dot, from_to, length, normalize, qconj, qmul, qrot, scale, sub  # noqa: E402

DT = 1.0 / 60.0


def read_glb(path):
    b = open(path, 'rb').read()
    (jl,) = struct.unpack('<I', b[12:16])
    return json.loads(b[20:20 + jl])


def snake(n):
    return ''.join('_' + c.lower() if c.isupper() else c for c in n)


class Model:
    def __init__(self, path, length_rule, index_order=False):
        doc = read_glb(path)
        self.nodes = doc['nodes']
        self.parent = {c: i for i, n in enumerate(self.nodes) for c in n.get('children', [])}
        self.t = [list(n.get('translation', [0, 0, 0])) for n in self.nodes]
        self.q = [list(n.get('rotation', [0, 0, 0, 1])) for n in self.nodes]  # current local
        self.q0 = [list(q) for q in self.q]
        ext = doc['extensions']
        self.human = {v['node']: snake(k) for k, v in ext['VRMC_vrm']['humanoid']['humanBones'].items()}
        sb = ext['VRMC_springBone']
        cols = [(k, c['node'], c['shape']) for k, c in enumerate(sb['colliders'])]
        self.rigid = length_rule == 'rigid'
        self.springs = []
        for s in sb['springs']:
            if s.get('center') is not None:
                raise ValueError('spring %s has a center; the model has none' % s.get('name'))
            group = [cols[k] for g in s.get('colliderGroups', []) for k in sb['colliderGroups'][g]['colliders']]
            if index_order:
                group = [cols[k] for k in sorted({c[0] for c in group})]
            js = s['joints']
            joints = [{'node': j['node'], 'child': js[k + 1]['node'], 'stiff': j['stiffness'], 'drag': j['dragForce'],
                       'grav': j['gravityPower'], 'dir': j['gravityDir'], 'hit': j['hitRadius']}
                      for k, j in enumerate(js[:-1])]
            self.springs.append({'name': s['name'], 'joints': joints, 'nodes': [j['node'] for j in js],
                                 'colliders': group})
        self.bones = {}  # humanoid bone -> (p, q) now
        self.cache = {}
        rest = self.rest_world()
        for s in self.springs:
            for j in s['joints']:
                j['cur'] = j['prev'] = j['child_prev'] = rest[j['child']][0]
                j['axis'] = normalize(self.t[j['child']])

    def rest_world(self):
        out = {}

        def w(i):
            if i not in out:
                if i in self.parent:
                    pp, pq = w(self.parent[i])
                    out[i] = (add(pp, qrot(pq, self.t[i])), qmul(pq, self.q0[i]))
                else:
                    out[i] = (self.t[i], self.q0[i])
            return out[i]
        for i in range(len(self.nodes)):
            w(i)
        return out

    def world(self, i):
        """A humanoid bone: its pose now; any other node: its parent's world x its local now."""
        if i in self.human:
            return self.bones[self.human[i]]
        pp, pq = self.world(self.parent[i])
        return add(pp, qrot(pq, self.t[i])), qmul(pq, self.q[i])

    def collide(self, nxt, pos, j, s):
        ln = j['len']
        for _k, node, shape in s['colliders']:
            bp, bq = self.world(node)
            if 'capsule' in shape:
                c = shape['capsule']
                a = add(bp, qrot(bq, c['offset']))
                ab = qrot(bq, sub(c['tail'], c['offset']))
                tgt = sub(nxt, a)
                k = dot(ab, tgt)
                if k > 0:
                    tgt = sub(tgt, ab) if dot(ab, ab) <= k else sub(tgt, scale(ab, k / dot(ab, ab)))
                r = c['radius']
            else:
                c = shape['sphere']
                tgt, r = sub(nxt, add(bp, qrot(bq, c['offset']))), c['radius']
            d_ = length(tgt) - j['hit'] - r
            if d_ < 0:
                nxt = add(nxt, scale(tgt, -d_ / length(tgt)))
                nxt = add(pos, scale(sub(nxt, pos), ln / length(sub(nxt, pos))))
        return nxt

    def step(self, bones):
        """One tick: bones = {snake name: (p, q)} of every humanoid bone. Returns node name ->
        world position of every spring node."""
        self.bones = bones
        out = {}
        for s in self.springs:
            for j in s['joints']:
                n = j['node']
                pp, pq = self.world(self.parent[n])
                pos = add(pp, qrot(pq, self.t[n]))
                c = self.t[j['child']]
                j['len'] = length(c) if self.rigid else length(sub(pos, j['child_prev']))
                init = qmul(pq, self.q0[n])
                axis = qrot(init, j['axis'])
                nxt = add(j['cur'], scale(sub(j['cur'], j['prev']), 1 - j['drag']))
                nxt = add(add(nxt, scale(axis, j['stiff'] * DT)), scale(j['dir'], j['grav'] * DT))
                nxt = add(pos, scale(normalize(sub(nxt, pos)), j['len']))
                nxt = self.collide(nxt, pos, j, s)
                j['prev'], j['cur'] = j['cur'], nxt
                self.q[n] = qmul(self.q0[n], from_to(j['axis'], normalize(qrot(qconj(init), sub(nxt, pos)))))
                q = qmul(pq, self.q[n])
                j['child_prev'] = add(pos, qrot(q, c))
                out[self.nodes[n]['name']] = pos
                out[self.nodes[j['child']]['name']] = j['child_prev']
        return out


def run(path, frames, length_rule, index_order=False):
    """frames: threevrm_drive.mjs's per-tick objects (their "bones")."""
    m = Model(path, length_rule, index_order)
    return [m.step({k: (v['p'], v['q']) for k, v in f['bones'].items()}) for f in frames]


if __name__ == '__main__':
    sys.exit('used by threevrm_parity.py')
