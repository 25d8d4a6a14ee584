#!/usr/bin/env python3
"""An independent VRMC_springBone 1.0 implementation (the spec's algorithm on the glTF node
hierarchy: initialLocalRotation, boneAxis, parentWorldRotation, fromTo rotations per joint),
run against `ponytail import-vrm --length rest` (the spec's bone length; the import's default
is three-vrm's: tests/vrm/threevrm_parity.test.sh) + `ponytail sim` on an avatar with curved,
unequal chains.

It writes the avatar (a VRM 1.0 .glb: a head with two curved hair chains of unequal bones,
per-joint parameters, a head sphere collider), imports it, drives it with a head shake, and
checks every point of every frame against its own simulation to 1e-4 m, at 1 and 4 substeps.
A second run adds a chest bone with a sphere collider of its own, swaying and turning apart
from the head (its pose given to `ponytail sim` in the pose lines' "bones"): the collider
must stay on the chest in the import and the hair must match the reference that moves the
chest node, again to 1e-4 m (and the chest must change the hair by more than 1 cm).
Nothing of the project's code is used here but the two commands.

usage: springbone_reference.py BUILD_DIR
"""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

# ---- quaternions [x, y, z, w] ------------------------------------------------------------


def qmul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return [aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz]


def qconj(q):
    return [-q[0], -q[1], -q[2], q[3]]


def qrot(q, v):
    return qmul(qmul(q, [v[0], v[1], v[2], 0.0]), qconj(q))[:3]


def qaxis(axis, deg):
    n = math.sqrt(sum(c * c for c in axis))
    s = math.sin(math.radians(deg) / 2)
    return [axis[0] / n * s, axis[1] / n * s, axis[2] / n * s, math.cos(math.radians(deg) / 2)]


def qnorm(q):
    n = math.sqrt(sum(c * c for c in q))
    return [c / n for c in q]


def from_to(a, b):
    """The shortest rotation taking unit a to unit b."""
    d = dot(a, b)
    c = cross(a, b)
    return qnorm([c[0], c[1], c[2], 1.0 + d])


def add(a, b): return [a[i] + b[i] for i in range(3)]
def sub(a, b): return [a[i] - b[i] for i in range(3)]
def scale(a, s): return [x * s for x in a]
def dot(a, b): return sum(a[i] * b[i] for i in range(3))
def cross(a, b): return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
def length(a): return math.sqrt(dot(a, a))
def normalize(a): return scale(a, 1.0 / length(a))


# ---- the avatar ------------------------------------------------------------------------

def chain_nodes(first, translations, rotations, name):
    nodes = []
    for i, (t, r) in enumerate(zip(translations, rotations)):
        n = {'name': '%s_%02d' % (name, i), 'translation': t, 'rotation': r}
        if i + 1 < len(translations):
            n['children'] = [first + i + 1]
        nodes.append(n)
    return nodes


def avatar(chest=False):
    # Bones of 3, 5, 4 and 6 cm (and 2, 4, 7 cm), each joint turned against its parent:
    # curved and unequal, as real hair chains are.
    a = chain_nodes(1, [[0, 0.05, -0.1], [0, -0.03, 0], [0, -0.05, 0], [0, -0.04, 0], [0, -0.06, 0]],
                    [qaxis([1, 0, 0], -25), qaxis([1, 0, 0], -20), qaxis([0, 0, 1], 15),
                     qaxis([1, 0, 0], -30), [0, 0, 0, 1]], 'J_Sec_Hair1')
    b = chain_nodes(6, [[0.07, 0.04, -0.06], [0, -0.02, 0], [0, -0.04, 0], [0, -0.07, 0]],
                    [qaxis([0, 0, 1], 20), qaxis([1, 1, 0], 25), qaxis([0, 0, 1], -35),
                     [0, 0, 0, 1]], 'J_Sec_Hair2')
    nodes = [{'name': 'Head', 'translation': [0, 1.5, 0], 'children': [1, 6]}] + a + b
    if chest:  # node 10: a body bone of its own (a root here), moved apart from the head
        nodes.append({'name': 'Chest', 'translation': list(CHEST_REST)})
    joint = lambda n, s, d, g: {'node': n, 'stiffness': s, 'dragForce': d, 'gravityPower': g,
                                'gravityDir': [0, -1, 0], 'hitRadius': 0.01}
    springs = [
        {'name': 'Hair1', 'colliderGroups': [0], 'joints': [
            joint(1, 1.0, 0.4, 0.5), joint(2, 0.8, 0.35, 0.4), joint(3, 0.6, 0.3, 0.3),
            joint(4, 0.5, 0.3, 0.3), {'node': 5}]},
        {'name': 'Hair2', 'colliderGroups': [0], 'joints': [
            joint(6, 1.2, 0.5, 0.2), joint(7, 0.9, 0.4, 0.3), joint(8, 0.7, 0.4, 0.4),
            {'node': 9}]},
    ]
    colliders = [{'node': 0, 'shape': {'sphere': {'offset': [0, 0, 0], 'radius': 0.09}}}]
    bones = {'head': {'node': 0}}
    if chest:
        colliders.append({'node': 10, 'shape': {'sphere': {'offset': CHEST_OFFSET, 'radius': CHEST_R}}})
        bones['chest'] = {'node': 10}
        for sp in springs:
            sp['colliderGroups'] = [0, 1]
    return {
        'asset': {'version': '2.0'},
        'extensionsUsed': ['VRMC_vrm', 'VRMC_springBone'],
        'nodes': nodes,
        'extensions': {
            'VRMC_vrm': {'specVersion': '1.0', 'meta': {'name': 'Curvy'},
                         'humanoid': {'humanBones': bones}},
            'VRMC_springBone': {
                'specVersion': '1.0',
                'colliders': colliders,
                'colliderGroups': [{'colliders': [0]}] + ([{'colliders': [1]}] if chest else []),
                'springs': springs,
            },
        },
    }


def glb(doc):
    body = json.dumps(doc).encode()
    body += b' ' * (-len(body) % 4)
    return struct.pack('<III', 0x46546C67, 2, 12 + 8 + len(body)) + \
        struct.pack('<II', len(body), 0x4E4F534A) + body


# ---- the spec's update on the node hierarchy --------------------------------------------

class Rig:
    def __init__(self, doc):
        self.nodes = doc['nodes']
        self.parent = {c: i for i, n in enumerate(self.nodes) for c in n.get('children', [])}
        self.local_rot = [list(n.get('rotation', [0, 0, 0, 1])) for n in self.nodes]
        sb = doc['extensions']['VRMC_springBone']
        self.colliders = [(c['node'], c['shape']['sphere']['offset'], c['shape']['sphere']['radius'])
                          for c in sb['colliders']]
        self.springs = [s['joints'] for s in sb['springs']]
        self.head_pose = ([0, 1.5, 0], [0, 0, 0, 1])
        self.chest_pose = (list(CHEST_REST), [0, 0, 0, 1])
        self.state = []
        for joints in self.springs:
            st = []
            for j, tail in zip(joints, joints[1:]):
                n = j['node']
                t = self.world_pos(tail['node'])
                st.append({'node': n, 'tail': tail['node'], 'cur': t, 'prev': t,
                           'axis': normalize(self.nodes[tail['node']]['translation']),
                           'len': length(sub(t, self.world_pos(n))),
                           'init': list(self.local_rot[n]), 'p': j})
            self.state.append(st)

    def world(self, i):
        """World position and rotation of node i (the head's from the current pose)."""
        if i == 0:
            return self.head_pose
        if i == 10:
            return self.chest_pose
        pp, pq = self.world(self.parent[i])
        return add(pp, qrot(pq, self.nodes[i]['translation'])), qmul(pq, self.local_rot[i])

    def world_pos(self, i):
        return self.world(i)[0]

    def step(self, dt):
        for st in self.state:
            for s in st:
                pos, _ = self.world(s['node'])
                parent_rot = self.world(self.parent[s['node']])[1]
                p = s['p']
                inertia = scale(sub(s['cur'], s['prev']), 1.0 - p['dragForce'])
                stiff = scale(qrot(qmul(parent_rot, s['init']), s['axis']), dt * p['stiffness'])
                ext = scale(p['gravityDir'], dt * p['gravityPower'])
                nxt = add(add(add(s['cur'], inertia), stiff), ext)
                nxt = add(pos, scale(normalize(sub(nxt, pos)), s['len']))
                for node, off, r in self.colliders:
                    cp, cq = self.world(node)
                    c = add(cp, qrot(cq, off))
                    d = length(sub(nxt, c)) - r - p['hitRadius']
                    if d < 0:
                        nxt = sub(nxt, scale(normalize(sub(nxt, c)), d))
                        nxt = add(pos, scale(normalize(sub(nxt, pos)), s['len']))
                s['prev'], s['cur'] = s['cur'], nxt
                w0 = qmul(parent_rot, s['init'])
                to = normalize(qrot(qconj(w0), sub(nxt, pos)))
                self.local_rot[s['node']] = qmul(s['init'], from_to(s['axis'], to))

    def points(self):
        return [[self.world_pos(st[0]['node'])] + [s['cur'] for s in st] for st in self.state]


# The chest (second scenario): a sphere behind the neck, on a bone of its own that sways and
# turns on its own while the head shakes, so the hair hits a collider the head does not move.
CHEST_REST, CHEST_OFFSET, CHEST_R = [0, 1.28, -0.05], [0.03, 0.05, -0.04], 0.05


def chest_at(t):
    u = min(t, 3.0)
    return ([0.04 * math.sin(2 * math.pi * 0.8 * u), 1.28, -0.05 + 0.03 * math.sin(2 * math.pi * 0.6 * u)],
            qaxis([0, 1, 0], 25 * math.sin(2 * math.pi * 0.9 * u)))


def head_at(t):
    """3 s of shaking (yaw 40 deg at 1.2 Hz, pitch 15 deg at 0.7 Hz), then still."""
    u = min(t, 3.0)
    q = qmul(qaxis([0, 1, 0], 40 * math.sin(2 * math.pi * 1.2 * u)),
             qaxis([1, 0, 0], 15 * math.sin(2 * math.pi * 0.7 * u)))
    return [0.05 * math.sin(2 * math.pi * 0.5 * u), 1.5, 0], q


def run(cli, tmp, chest):
    """One scenario: import, simulate with the sim and with the rig, compare every point.
    Returns the rig's frames."""
    ticks = 240
    tag = 'chest' if chest else 'head'
    doc = avatar(chest)
    path = os.path.join(tmp, tag + '.vrm')
    with open(path, 'wb') as f:
        f.write(glb(doc))
    imp = subprocess.run([cli, 'import-vrm', '--prewarm', '0', '--length', 'rest', path], capture_output=True, text=True)
    if imp.returncode != 0:
        sys.exit('FAIL: import-vrm: ' + imp.stderr)
    if 'unequal' in imp.stderr or 'curved' in imp.stderr:
        sys.exit('FAIL: import-vrm still approximates the rest shape: ' + imp.stderr)
    inst = json.loads(imp.stdout)
    if chest:  # the chest collider stays on its bone, the bone's rest offset in the table
        col = inst['colliders'][1]
        want = sub(CHEST_REST, [0, 1.5, 0])
        if col['attach'] != 'chest' or length(sub(col['center'], CHEST_OFFSET)) > 1e-6 or \
                length(sub(inst['bones']['chest']['position'], want)) > 1e-6:
            sys.exit('FAIL: chest collider imported as %s, bones %s' % (col, inst.get('bones')))
    rig = Rig(doc)
    # the imported rest shape is the node hierarchy's, point for point
    for s, st in enumerate(rig.points()):
        rest = inst['strands'][s]['rest']
        for p, want in zip(rest, st):
            if length(sub(add(p, [0, 1.5, 0]), want)) > 1e-6:
                sys.exit('FAIL: strand %d rest %s, the hierarchy says %s' % (s, p, want))
    with open(os.path.join(tmp, tag + '.json'), 'w') as f:
        json.dump(inst, f)
    with open(os.path.join(tmp, tag + '.jsonl'), 'w') as f:
        for k in range(ticks):
            p, q = head_at(k / 60)
            line = {'tick': k, 'p': p, 'q': q}
            if chest:
                cp, cq = chest_at(k / 60)
                line['bones'] = {'chest': {'p': cp, 'q': cq}}
            f.write(json.dumps(line) + '\n')
    ref = []
    for k in range(ticks):
        rig.head_pose = head_at(k / 60)
        if chest:
            rig.chest_pose = chest_at(k / 60)
        rig.step(1.0 / 60)
        ref.append(rig.points())
    for substeps in (1, 4):
        sim = subprocess.run([cli, 'sim', os.path.join(tmp, tag + '.json'), '--poses',
                              os.path.join(tmp, tag + '.jsonl'), '--ticks', str(ticks),
                              '--substeps', str(substeps)], capture_output=True, text=True)
        if sim.returncode != 0:
            sys.exit('FAIL: sim: ' + sim.stderr)
        worst = 0.0
        for k, line in enumerate(sim.stdout.splitlines()):
            frame = json.loads(line)
            for s, strand in enumerate(frame['strands']):
                for p, want in zip(strand, ref[k][s]):
                    worst = max(worst, length(sub(p, want)))
        moved = max(length(sub(ref[k][0][-1], ref[0][0][-1])) for k in range(ticks))
        print('curved, unequal VRM chains%s, %d substeps: max %.2g m from the reference '
              '(tips move %.2f m)' % (', chest collider on its own moving bone' if chest else '',
                                      substeps, worst, moved))
        if worst > 1e-4 or moved < 0.05:
            sys.exit('FAIL: springbone differs from the reference by %.3g m' % worst)
    return ref


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else 'build'
    cli = os.path.join(build, 'bin', 'ponytail')
    with tempfile.TemporaryDirectory() as tmp:
        plain = run(cli, tmp, False)
        chest = run(cli, tmp, True)
        # the moving chest really changes the hair (else the second run proves nothing)
        effect = max(length(sub(a, b)) for fa, fb in zip(plain, chest)
                     for sa, sb in zip(fa, fb) for a, b in zip(sa, sb))
        print('the chest collider moves the hair by up to %.3f m' % effect)
        if effect < 0.01:
            sys.exit('FAIL: the chest collider never touches the hair (%.3g m)' % effect)
    print('ok: springbone reference')


if __name__ == '__main__':
    main()
