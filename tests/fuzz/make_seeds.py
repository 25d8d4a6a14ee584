#!/usr/bin/env python3
"""Writes the hand-shaped seeds of the fuzz_schema, fuzz_vmc and fuzz_vrm corpora
(tests/fuzz/corpus/fuzz_<name>/), the inputs real users send, so that a fuzz run starts
from them and `make test` replays them:

  fuzz_schema  instance definitions as JSON documents (POST /v1/instances, `ponytail sim`):
               every field, every collider kind, both solvers, bone-attached colliders,
               strands with collider masks, values at the limits of core/SCHEMA.md, and a
               few of the mistakes people make (typos, wrong types, out-of-range values).
  fuzz_vmc     VMC (OSC over UDP) packets as trackers send them (VSeeFace, VMagicMirror,
               XR Animator, Warudo...): /VMC/Ext/OK, /T, /Root/Pos, /Bone/Pos for the whole
               humanoid, /Blend/Val and /Blend/Apply, trackers, nested bundles, single
               messages; byte-exact OSC. fuzz_vmc.c splits an input into datagrams at every
               "\\n--\\n", so a stream of packets is one file with that separator.
  fuzz_vrm     small VRM files (GLB): VRM 0.x and VRM 1.0 (VRMC_springBone) with the export
               quirks seen in the wild (a BIN chunk longer than buffer 0's byteLength, skin
               views past that byteLength but inside the chunk, JSON padded with NULs,
               bytes after the GLB, unknown chunks, missing optional fields, nodes given
               as matrices or scaled, unicode and duplicate names),
               spring chains on several bones, branching joints, every collider kind
               (sphere, capsule, extended plane, inside sphere / capsule), angle limits.
               Files named *.json are the JSON chunk alone: fuzz_vrm.c wraps them into a GLB
               whose BIN chunk is as long as the last byte says (' ' = 32 bytes).

The seeds that were there before this script (all_shapes.json, stream, v1_avatar.glb...)
are not written by it and are left alone. Python stdlib only, deterministic: run from the
repository root, `python3 tests/fuzz/make_seeds.py [schema|vmc|vrm]...` (default: all),
and commit what changes. Check the seeds with the replay builds:
`FUZZ_VERBOSE=1 build/fuzz-replay/fuzz_schema tests/fuzz/corpus/fuzz_schema` prints
"valid" or the error each one reaches (fuzz_vrm: "imported" or the error)."""
import json
import math
import os
import re
import struct
import sys

OUT = 'tests/fuzz/corpus'


def write(target, name, data):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode('utf-8')
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)
    return len(data)


def axis_angle(axis, deg):
    n = math.sqrt(sum(c * c for c in axis))
    s = math.sin(math.radians(deg) / 2)
    return [axis[0] / n * s, axis[1] / n * s, axis[2] / n * s, math.cos(math.radians(deg) / 2)]


def r6(v):
    """Rounded as a person or an exporter writes it."""
    if isinstance(v, list):
        return [r6(x) for x in v]
    return round(v, 6)


# =====================================================================================
# fuzz_schema: instance definitions
# =====================================================================================

def curl(anchor, n, seg, turn_deg, side=0.0):
    """A curved rest shape: n points from anchor, each segment turning a little more."""
    pts = [list(anchor)]
    for i in range(n - 1):
        a = math.radians(turn_deg * (i + 1))
        p = pts[-1]
        pts.append([p[0] + side * seg * 0.3, p[1] - seg * math.cos(a), p[2] - seg * math.sin(a)])
    return r6(pts)


def pretty(v):
    """Indented JSON with each vector on one line, as people lay it out."""
    text = json.dumps(v, indent=2, ensure_ascii=False)
    return re.sub(r'\[\s+([^\[\]{}"]*?)\s+\]', lambda m: '[' + re.sub(r',\s+', ', ', m.group(1)) + ']', text) + '\n'


def schema_seeds():
    s = {}
    # Every field of the schema, verlet solver, every collider kind, each attach kind.
    s['full_verlet_every_field.json'] = {
        'name': 'Alice (full)', 'room': 'stage-1.main_hall', 'solver': 'verlet', 'substeps': 4,
        'prewarm_s': 1.0, 'gravity': [0, -9.81, 0],
        'wind': {'velocity': [1.5, 0, -0.5], 'turbulence': 0.4, 'drag': 2, 'seed': 12345},
        'verlet': {'damping': 0.96, 'iterations': 3, 'bend_stiffness': 0.15,
                   'stretch': {'mode': 'nonlinear', 'stiffness': 0.2, 'max_strain': 0.05},
                   'self_collision': True},
        'springbone': {'form': 'vrm', 'center': 'world', 'rate': 'frame', 'stiffness': 1,
                       'drag_force': 0.4, 'gravity_power': 0, 'gravity_dir': [0, -1, 0],
                       'hit_radius': 0.02, 'limit': {'type': 'none', 'angle_deg': 180, 'axis': [1, 0, 0]}},
        'strands': [
            {'anchor': [0, 0.06, -0.09], 'direction': [0, -1, 0], 'points': 12, 'segment_length': 0.03,
             'colliders': [0, 1, 2, 3], 'anchor_bone': 'J_Bip_C_Head', 'mass': {'root': 1, 'tip': 0.5},
             'radius': 0.005, 'gravity_scale': 1,
             'springbone': {'stiffness': [1, 1, 0.9, 0.9, 0.8, 0.8, 0.7, 0.7, 0.6, 0.6, 0.5]}},
            {'rest': curl([0.05, 0.05, -0.1], 6, 0.035, 6), 'mass': [1.2, 1.0, 0.8, 0.6, 0.4],
             'radius': [0.006, 0.0055, 0.005, 0.0045, 0.004], 'gravity_scale': 0.8,
             'colliders': [0, 5, 6], 'anchor_bone': 'J_Bip_C_Head',
             'joints': ['J_Sec_HairL_01', 'J_Sec_HairL_02', 'J_Sec_HairL_03', 'J_Sec_HairL_04',
                        'J_Sec_HairL_05', 'J_Sec_HairL_end']},
            {'anchor': [0, 0.1, 0.08], 'direction': [0, -0.2, 1], 'points': 4, 'segment_length': 0.02,
             'gravity_scale': -0.5, 'colliders': [], 'joints': ['Bang_01', 'Bang_02', 'Bang_03', '']},
        ],
        'colliders': [
            {'shape': 'sphere', 'attach': 'head', 'center': [0, 0.02, 0], 'radius': 0.1},
            {'shape': 'ellipsoid', 'attach': 'head', 'center': [0, 0, -0.01], 'radii': [0.09, 0.11, 0.1]},
            {'shape': 'capsule', 'attach': 'head', 'a': [0, -0.08, 0], 'b': [0, -0.2, 0], 'radius': 0.05,
             'radius_b': 0.04},
            {'shape': 'plane', 'attach': 'world', 'point': [0, 0, 0], 'normal': [0, 1, 0]},
            {'shape': 'inside_sphere', 'attach': 'head', 'center': [0, -0.1, 0], 'radius': 0.6},
            {'shape': 'inside_capsule', 'attach': 'chest', 'a': [0, 0.3, 0], 'b': [0, -0.3, 0], 'radius': 0.8},
            {'shape': 'capsule', 'attach': 'chest', 'a': [-0.12, 0.05, 0.02], 'b': [0.12, 0.05, 0.02],
             'radius': 0.09},
        ],
        'bones': {'chest': {'position': [0, -0.3, 0.02], 'rotation': [0, 0, 0, 1]}},
        'teleport': {'distance': 0.5, 'angle_deg': 60, 'mode': 'keep'},
    }
    # The spring-bone solver, "vrm" form, with every per-joint field as an array.
    n = 6
    s['springbone_vrm_per_joint.json'] = {
        'name': 'sb-vrm', 'solver': 'springbone', 'substeps': 2, 'prewarm_s': 0.5,
        'springbone': {'form': 'vrm', 'center': 'head', 'rate': 'substep', 'stiffness': 1.5,
                       'drag_force': 0.5, 'gravity_power': 0.3, 'gravity_dir': [0, -1, 0.1],
                       'hit_radius': 0.015, 'limit': {'type': 'cone', 'angle_deg': 45}},
        'strands': [
            {'rest': curl([-0.06, 0.07, 0.02], n, 0.04, -8, side=-1), 'anchor_bone': 'Head',
             'joints': ['HairL_%02d' % (i + 1) for i in range(n)],
             'springbone': {'stiffness': [2, 1.8, 1.5, 1.2, 1.0], 'drag_force': [0.6, 0.55, 0.5, 0.45, 0.4],
                            'gravity_power': [0.1, 0.2, 0.3, 0.4, 0.5], 'hit_radius': [0.01, 0.012, 0.014, 0.016, 0.018],
                            'gravity_dir': [[0, -1, 0], [0, -1, 0], [0, -1, 0.1], [0, -1, 0.2], [0.1, -1, 0.2]],
                            'limit': [{'type': 'cone', 'angle_deg': 30}, {'type': 'hinge', 'axis': [1, 0, 0], 'angle_deg': 60},
                                      {}, {'angle_deg': 90}, {'type': 'none'}]}},
            {'anchor': [0.06, 0.07, 0.02], 'direction': [0.2, -1, 0], 'points': n, 'segment_length': 0.04,
             'springbone': {'stiffness': 0.8, 'drag_force': 0.3, 'gravity_dir': [0, -1, -0.1],
                            'limit': {'type': 'hinge', 'axis': [0, 0, 1], 'angle_deg': 20}}},
        ],
        'colliders': [{'shape': 'sphere', 'center': [0, 0.03, 0.01], 'radius': 0.085},
                      {'shape': 'capsule', 'attach': 'upper_chest', 'a': [-0.07, 0.08, 0.02], 'b': [0.06, 0.09, 0.02],
                       'radius': 0.07}],
        'bones': {'upper_chest': {'position': [0, -0.22, 0], 'rotation': [0.05, 0, 0, 0.99875]}},
    }
    # The "pull" form (the spring-bone lesson's variant), stiffness in [0, 1].
    s['springbone_pull_form.json'] = {
        'name': 'pull', 'solver': 'springbone',
        'springbone': {'form': 'pull', 'center': 'world', 'rate': 'frame', 'stiffness': 0.35,
                       'drag_force': 0.2, 'gravity_power': 0, 'hit_radius': 0.01},
        'strands': [{'anchor': [0, 0.09, -0.07], 'direction': [0, -0.8, -0.6], 'points': 8,
                     'segment_length': 0.05, 'springbone': {'stiffness': [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3]}}],
        'colliders': [{'shape': 'ellipsoid', 'radii': [0.085, 0.1, 0.095]}],
        'teleport': {'distance': 2, 'angle_deg': 120, 'mode': 'reset'},
    }
    # What `ponytail import-vrm` writes for a VRM 1.0 avatar: rest shapes, joint names,
    # body bones and their rest poses, colliders on the head, the chest and the hips.
    s['imported_from_vrm.json'] = {
        'name': 'Ponytail test avatar', 'solver': 'springbone', 'prewarm_s': 1,
        'springbone': {'form': 'vrm', 'center': 'head', 'stiffness': 1, 'drag_force': 0.4,
                       'gravity_power': 0.2, 'gravity_dir': [0, -1, 0], 'hit_radius': 0.01,
                       'limit': {'type': 'none', 'angle_deg': 180, 'axis': [1, 0, 0]}},
        'strands': [
            {'rest': [[0.06, 0.07, 0.02], [0.031809, 0.06974, 0.02], [-0.012623, 0.0609, 0.02],
                      [-0.068706, 0.041466, 0.02], [-0.103391, 0.023068, 0.02], [-0.103391, -0.046932, 0.02]],
             'anchor_bone': 'Head', 'joints': ['HairL_01', 'HairL_02', 'HairL_03', 'HairL_04', 'HairL_05', ''],
             'colliders': [0, 1, 2],
             'springbone': {'hit_radius': [0.01, 0.012, 0.014, 0.016, 0.016]}},
            {'rest': [[0, 0.06, -0.08], [0, 0.029094, -0.119298], [0, 0.004118, -0.143791],
                      [0, -0.029962, -0.180434], [0, -0.065297, -0.240836], [0, -0.074937, -0.263911]],
             'anchor_bone': 'Head', 'joints': ['HairB_01', 'HairB_02', 'HairB_03', 'HairB_04', 'HairB_05', 'HairB_06'],
             'colliders': [0, 1, 2],
             'springbone': {'stiffness': 1.5}},
            {'rest': [[0.1, -0.9, 0.02], [0.11, -1.1, 0.03], [0.12, -1.3, 0.05]], 'anchor_bone': 'Hips',
             'joints': ['Skirt_L_01', 'Skirt_L_02', 'Skirt_L_03'], 'colliders': [3, 4]},
        ],
        'colliders': [
            {'shape': 'sphere', 'attach': 'head', 'center': [0, 0.03, 0.01], 'radius': 0.085},
            {'shape': 'capsule', 'attach': 'chest', 'a': [-0.07, 0.08, 0.02], 'b': [0.06, 0.09, 0.02], 'radius': 0.07},
            {'shape': 'plane', 'attach': 'chest', 'point': [0, 0, -0.11], 'normal': [0, 0, -1]},
            {'shape': 'capsule', 'attach': 'left_upper_leg', 'a': [0, 0, 0], 'b': [0, -0.4, 0], 'radius': 0.07,
             'radius_b': 0.05},
            {'shape': 'capsule', 'attach': 'right_upper_leg', 'a': [0, 0, 0], 'b': [0, -0.4, 0], 'radius': 0.07,
             'radius_b': 0.05},
        ],
        'bones': {'chest': {'position': [0, -0.24, 0], 'rotation': [0, 0, 0, 1]},
                  'left_upper_leg': {'position': [0.09, -0.55, 0], 'rotation': [0, 0, 0, 1]},
                  'right_upper_leg': {'position': [-0.09, -0.55, 0], 'rotation': [0, 0, 0, 1]},
                  'hips': {'position': [0, -0.5, 0], 'rotation': [0, 0, 0, 1]}},
    }
    # Many strands, each seeing its own subset of the colliders (C collider_mask).
    cols = [{'shape': 'sphere', 'center': [0, 0.02, 0], 'radius': 0.1},
            {'shape': 'capsule', 'attach': 'neck', 'a': [0, 0.05, 0], 'b': [0, -0.05, 0], 'radius': 0.05},
            {'shape': 'capsule', 'attach': 'left_shoulder', 'a': [0, 0, 0], 'b': [0.12, 0, 0], 'radius': 0.05},
            {'shape': 'capsule', 'attach': 'right_shoulder', 'a': [0, 0, 0], 'b': [-0.12, 0, 0], 'radius': 0.05},
            {'shape': 'sphere', 'attach': 'upper_chest', 'center': [0, 0, 0.03], 'radius': 0.11},
            {'shape': 'plane', 'attach': 'upper_chest', 'point': [0, 0, -0.1], 'normal': [0, 0, -1]},
            {'shape': 'inside_sphere', 'center': [0, -0.3, 0], 'radius': 0.9},
            {'shape': 'ellipsoid', 'attach': 'world', 'center': [0, 1, 0.4], 'radii': [0.3, 0.05, 0.2]}]
    masks = [[0], [0, 1], [0, 1, 2], [0, 1, 3], [0, 4, 5], [4, 5, 6], [], [7], None, [0, 2, 3, 6]]
    strands = []
    for i, m in enumerate(masks):
        a = 2 * math.pi * i / len(masks)
        st = {'anchor': r6([0.08 * math.sin(a), 0.05, 0.08 * math.cos(a)]), 'direction': r6([math.sin(a), -2, math.cos(a)]),
              'points': 6 + i, 'segment_length': 0.025 + 0.002 * i}
        if m is not None:
            st['colliders'] = m
        strands.append(st)
    s['many_strands_collider_masks.json'] = {
        'name': 'masks', 'room': 'masks', 'strands': strands, 'colliders': cols,
        'verlet': {'self_collision': True, 'iterations': 4},
        'bones': {'neck': {'position': [0, -0.08, 0], 'rotation': [0, 0, 0, 1]},
                  'upper_chest': {'position': [0, -0.2, 0], 'rotation': [0, 0, 0, 1]},
                  'left_shoulder': {'position': [0.04, -0.16, 0], 'rotation': [0, 0, -0.08, 0.9968]},
                  'right_shoulder': {'position': [-0.04, -0.16, 0], 'rotation': [0, 0, 0.08, 0.9968]}},
    }
    # The counts at their limits: 32 strands of 64 points, 32 colliders, 32 bones.
    bone_names = ['hips', 'spine', 'chest', 'upper_chest', 'neck', 'left_eye', 'right_eye', 'jaw']
    for side in ('left', 'right'):
        bone_names += [side + '_' + b for b in ('upper_leg', 'lower_leg', 'foot', 'toes', 'shoulder',
                                                'upper_arm', 'lower_arm', 'hand', 'thumb_metacarpal',
                                                'thumb_proximal', 'thumb_distal', 'index_proximal')]
    bone_names = bone_names[:32]
    bones = {b: {'position': r6([0.01 * (i % 7) - 0.03, -0.05 * (i % 9), 0.01 * (i % 3)]),
                 'rotation': [0, 0, 0, 1] if i % 2 else r6(axis_angle([0, 1, 0], 10 * i))}
             for i, b in enumerate(bone_names)}
    kinds = ['sphere', 'ellipsoid', 'capsule', 'plane', 'inside_sphere', 'inside_capsule']
    colliders = []
    for i in range(32):
        k = kinds[i % len(kinds)]
        c = {'shape': k, 'attach': ['head', 'world', bone_names[i]][i % 3]}
        if k in ('sphere', 'inside_sphere'):
            c.update(center=r6([0.001 * i, 0, 0]), radius=0.05 if k == 'sphere' else 2)
        elif k == 'ellipsoid':
            c.update(radii=[0.05, 0.06, 0.07])
        elif k == 'capsule':
            c.update(a=[0, 0, 0], b=[0, -0.1, 0], radius=0.03, radius_b=0.02)
        elif k == 'plane':
            c.update(point=[0, -2, 0], normal=[0, 1, 0])
        else:
            c.update(a=[0, 1, 0], b=[0, -1, 0], radius=3)
        colliders.append(c)
    s['limits_max_counts.json'] = {
        'name': 'max counts', 'solver': 'verlet', 'prewarm_s': 0,
        'strands': [{'anchor': r6([0.004 * (i - 16), 0.06, -0.09]), 'direction': [0, -1, 0], 'points': 64,
                     'segment_length': 0.01} for i in range(32)],
        'colliders': colliders, 'bones': bones,
    }
    # Every number at the top of its documented range (names at 63 bytes of UTF-8).
    s['limits_max_values.json'] = {
        'name': '\u9aea' * 21, 'room': 'R' * 63, 'solver': 'verlet', 'substeps': 16, 'prewarm_s': 10,
        'gravity': [0, -100, 0],
        'wind': {'velocity': [60, 0, 80], 'turbulence': 2, 'drag': 100, 'seed': 4294967295},
        'verlet': {'damping': 1, 'iterations': 32, 'bend_stiffness': 1,
                   'stretch': {'mode': 'nonlinear', 'stiffness': 1, 'max_strain': 1}, 'self_collision': True},
        'springbone': {'form': 'vrm', 'stiffness': 100, 'drag_force': 1, 'gravity_power': 100,
                       'gravity_dir': [0, -1000, 0], 'hit_radius': 1,
                       'limit': {'type': 'hinge', 'angle_deg': 180, 'axis': [0, 0, 1]}},
        'strands': [{'anchor': [0, 10, 0], 'direction': [1, 1, 1], 'points': 64, 'segment_length': 1,
                     'mass': {'root': 100, 'tip': 100}, 'radius': 0.1, 'gravity_scale': 10,
                     'anchor_bone': 'B' * 63},
                    {'rest': [[0, 0, 0], [1, 0, 0], [1, 1, 0], [1, 1, 1]], 'mass': [100, 100, 100],
                     'radius': [0.1, 0.1, 0.1], 'gravity_scale': -10,
                     'joints': ['\u9aea' * 21, 'J' * 63, 'K' * 63, '']}],
        'colliders': [{'shape': 'sphere', 'center': [1000, 0, 0], 'radius': 10},
                      {'shape': 'ellipsoid', 'center': [0, 0, -1000], 'radii': [10, 10, 10]},
                      {'shape': 'capsule', 'a': [0, 1000, 0], 'b': [0, -1000, 0], 'radius': 10, 'radius_b': 10},
                      {'shape': 'plane', 'point': [0, -1000, 0], 'normal': [0, 1e-3, 0]},
                      {'shape': 'inside_sphere', 'radius': 100},
                      {'shape': 'inside_capsule', 'a': [0, 1000, 0], 'b': [0, -1000, 0], 'radius': 100}],
        'bones': {'hips': {'position': [0, -10, 0], 'rotation': [0, 0, 0, 2]}},
        'teleport': {'distance': 1000, 'angle_deg': 180, 'mode': 'reset'},
    }
    # ... and at the bottom.
    s['limits_min_values.json'] = {
        'name': '', 'room': '', 'solver': 'springbone', 'substeps': 0, 'prewarm_s': 0, 'gravity': [0, 0, 0],
        'wind': {'velocity': [0, 0, 0], 'turbulence': 0, 'drag': 0, 'seed': 0},
        'verlet': {'damping': 0, 'iterations': 1, 'bend_stiffness': 0,
                   'stretch': {'mode': 'exact', 'stiffness': 1e-6, 'max_strain': 0.001}, 'self_collision': False},
        'springbone': {'form': 'pull', 'center': 'head', 'rate': 'substep', 'stiffness': 0, 'drag_force': 0,
                       'gravity_power': 0, 'gravity_dir': [0, 0, -2e-6], 'hit_radius': 0,
                       'limit': {'type': 'cone', 'angle_deg': 0, 'axis': [0, 2e-6, 0]}},
        'strands': [{'anchor': [0, 0, 0], 'direction': [0, 0, 2e-6], 'points': 2, 'segment_length': 0.001,
                     'mass': {'root': 0.001, 'tip': 0.001}, 'radius': 0, 'gravity_scale': 0, 'colliders': [],
                     'anchor_bone': '', 'joints': ['', '']},
                    {'rest': [[0, 0, 0], [0, -0.001, 0]], 'mass': [0.001], 'radius': [0]}],
        'colliders': [{'shape': 'sphere', 'radius': 0}, {'shape': 'capsule', 'a': [0, 0, 0], 'b': [0, 0, 0], 'radius': 0,
                                                          'radius_b': 0},
                      {'shape': 'ellipsoid', 'radii': [0.001, 0.001, 0.001]},
                      {'shape': 'inside_sphere', 'radius': 0.001},
                      {'shape': 'inside_capsule', 'a': [0, 0, 0], 'b': [0, 0, 0], 'radius': 0.001}],
        'bones': {},
        'teleport': {'distance': 1e-6, 'angle_deg': 1e-6, 'mode': 'keep'},
    }
    out = {k: pretty(v) for k, v in s.items()}
    # Typed the way people type: integral reals for integers, exponents, \u escapes, CRLF,
    # comments-free but loose whitespace; the smallest documents.
    out['hand_typed_crlf_escapes.json'] = (
        '{\r\n\t"name" : "Bob \\u00e9\\ud83d\\ude00",\r\n\t"room":"lobby",\r\n\t"substeps" : 4.0,\r\n'
        '\t"prewarm_s": 5e-1, "gravity": [0E0, -9.80665, -0.0],\r\n'
        '\t"wind": {"seed": 42.0, "velocity": [2.5e0, 0, 0], "turbulence": 1E-1},\r\n'
        '\t"verlet": {"iterations": 8.0, "damping": 0.98},\r\n'
        '\t"strands": [ {"points": 16.0, "segment_length": 2.5e-2, "direction": [0, -1, -0.25]} ],\r\n'
        '\t"colliders": [ {"shape":"sphere","radius":1e-1}, {"shape":"plane","normal":[0,1,0],"point":[0,-1.5,0],"attach":"world"} ]\r\n'
        '}\r\n')
    out['empty_object.json'] = '{}\n'
    # Mistakes users make; each is refused with a message naming the field.
    out['invalid_unknown_field_typo.json'] = json.dumps(
        {'verlet': {'dampnig': 0.9}, 'strands': [{'lenght': 0.3, 'points': 10}]}, indent=2) + '\n'
    out['invalid_wrong_types.json'] = json.dumps(
        {'name': 'types', 'substeps': '4', 'gravity': [0, -9.81], 'verlet': {'self_collision': 1},
         'strands': [{'points': 12.5, 'anchor': ['0', 0.06, -0.09]}],
         'colliders': [{'shape': 'sphere', 'radius': '0.1'}]}, indent=2) + '\n'
    out['invalid_out_of_range.json'] = json.dumps(
        {'prewarm_s': 60, 'gravity': [0, -101, 0], 'strands': [{'segment_length': 2}],
         'teleport': {'distance': 0}}, indent=2) + '\n'
    out['invalid_counts_over_limit.json'] = json.dumps(
        {'substeps': 17, 'strands': [{'points': 65}] + [{}] * 32}) + '\n'
    out['invalid_collider_fields.json'] = json.dumps(
        {'colliders': [{'shape': 'sphere', 'radius': 0.1, 'radii': [0.1, 0.1, 0.1]},
                       {'shape': 'capsule', 'a': [0, 0, 0], 'radius': 0.05},
                       {'shape': 'inside_capsule', 'a': [0, 0, 0], 'b': [0, 1, 0], 'radius': 1, 'radius_b': 0.5},
                       {'shape': 'cylinder', 'radius': 0.1}]}, indent=2) + '\n'
    out['invalid_bone_without_rest_pose.json'] = json.dumps(
        {'colliders': [{'shape': 'sphere', 'attach': 'neck', 'radius': 0.05},
                       {'shape': 'sphere', 'attach': 'chest', 'radius': 0.12}],
         'bones': {'neck': {'position': [0, -0.1, 0], 'rotation': [0, 0, 0, 1]}}}, indent=2) + '\n'
    out['invalid_rest_with_points.json'] = json.dumps(
        {'solver': 'springbone', 'strands': [
            {'rest': [[0, 0, 0], [0, -0.05, 0], [0, -0.1, 0]], 'points': 3,
             'springbone': {'stiffness': [1, 0.5, 0.25]}, 'joints': ['a', 'b']}]}, indent=2) + '\n'
    out['invalid_server_driver_field.json'] = json.dumps(
        {'name': 'driven', 'driver': {'type': 'sine', 'amplitude': 0.2}}, indent=2) + '\n'
    out['invalid_duplicate_key_and_overflow.json'] = (
        '{"name": "dup", "name": "again", "gravity": [0, -3.5e38, 0]}\n')
    out['invalid_syntax_trailing_comma.json'] = (
        '{\n  "strands": [\n    {"points": 8, "segment_length": 0.04},\n  ],\n}\n')
    for name, text in out.items():
        write('fuzz_schema', name, text)
    return sorted(out)


# =====================================================================================
# fuzz_vmc: OSC packets
# =====================================================================================

def osc_str(s):
    b = s.encode('utf-8') + b'\0'
    return b + b'\0' * (-len(b) % 4)


def osc_msg(addr, *args, types=None):
    """An OSC message; args typed by Python type unless `types` says ('f' float, 'd'
    double, 'i' int32, 's' string, 'T'/'F' booleans without data)."""
    if types is None:
        types = ''.join('s' if isinstance(a, str) else 'i' if isinstance(a, int) else 'f' for a in args)
    out = osc_str(addr) + osc_str(',' + types)
    ai = iter(args)
    for t in types:
        if t in 'TFNI':
            continue
        a = next(ai)
        if t == 'f':
            out += struct.pack('>f', a)
        elif t == 'd':
            out += struct.pack('>d', a)
        elif t == 'i':
            out += struct.pack('>i', a)
        elif t == 's':
            out += osc_str(a)
        else:
            raise ValueError(t)
    return out


def osc_bundle(elems, timetag=1):
    out = b'#bundle\0' + struct.pack('>Q', timetag)
    for e in elems:
        out += struct.pack('>i', len(e)) + e
    return out


def stream(*datagrams):
    for d in datagrams:
        assert b'\n--\n' not in d, 'a datagram holds the separator'
    return b'\n--\n'.join(datagrams)


# Unity's HumanBodyBones in enum order, as VSeeFace and the VMC reference sender loop over
# them (UpperChest is last: it was added to the enum later).
HUMAN_BONES = ['Hips', 'LeftUpperLeg', 'RightUpperLeg', 'LeftLowerLeg', 'RightLowerLeg', 'LeftFoot',
               'RightFoot', 'Spine', 'Chest', 'Neck', 'Head', 'LeftShoulder', 'RightShoulder',
               'LeftUpperArm', 'RightUpperArm', 'LeftLowerArm', 'RightLowerArm', 'LeftHand', 'RightHand',
               'LeftToes', 'RightToes', 'LeftEye', 'RightEye', 'Jaw']
for _side in ('Left', 'Right'):
    for _f in ('Thumb', 'Index', 'Middle', 'Ring', 'Little'):
        for _j in ('Proximal', 'Intermediate', 'Distal'):
            HUMAN_BONES.append(_side + _f + _j)
HUMAN_BONES.append('UpperChest')

# Parent-relative rest offsets of a 1.5 m avatar, Unity frame (left is -X).
BONE_OFFSET = {'Hips': [0, 0.95, 0], 'Spine': [0, 0.1, 0.01], 'Chest': [0, 0.12, 0], 'UpperChest': [0, 0.12, -0.01],
               'Neck': [0, 0.1, 0.02], 'Head': [0, 0.08, 0], 'LeftEye': [-0.03, 0.06, 0.07], 'RightEye': [0.03, 0.06, 0.07],
               'Jaw': [0, 0.01, 0.03]}
for _side, _x in (('Left', -1), ('Right', 1)):
    BONE_OFFSET.update({
        _side + 'UpperLeg': [0.08 * _x, -0.05, 0], _side + 'LowerLeg': [0, -0.4, 0], _side + 'Foot': [0, -0.4, 0],
        _side + 'Toes': [0, -0.05, 0.1], _side + 'Shoulder': [0.03 * _x, 0.09, 0], _side + 'UpperArm': [0.09 * _x, 0, 0],
        _side + 'LowerArm': [0.24 * _x, 0, 0], _side + 'Hand': [0.22 * _x, 0, 0]})
    for _k, _f in enumerate(('Thumb', 'Index', 'Middle', 'Ring', 'Little')):
        BONE_OFFSET[_side + _f + 'Proximal'] = [0.04 * _x, 0, 0.03 - 0.015 * _k]
        BONE_OFFSET[_side + _f + 'Intermediate'] = [0.03 * _x, 0, 0]
        BONE_OFFSET[_side + _f + 'Distal'] = [0.02 * _x, 0, 0]

BLEND_PRESETS = ['Neutral', 'A', 'I', 'U', 'E', 'O', 'Blink', 'Joy', 'Angry', 'Sorrow', 'Fun', 'LookUp',
                 'LookDown', 'LookLeft', 'LookRight', 'Blink_L', 'Blink_R']


def bone_pose(name, t):
    """A plausible rotation of each bone at time t (s): breathing, a head turn, curled
    fingers; unit quaternions as float32."""
    if name == 'Head':
        return axis_angle([0.3, 1, 0.1], 25 * math.sin(2 * math.pi * 0.8 * t) + 1e-3)
    if name == 'Neck':
        return axis_angle([0, 1, 0], 8 * math.sin(2 * math.pi * 0.8 * t) + 1e-3)
    if name in ('Spine', 'Chest', 'UpperChest'):
        return axis_angle([1, 0, 0], 2 * math.sin(2 * math.pi * 0.25 * t) + 1e-3)
    if name.endswith(('Intermediate', 'Distal')):
        return axis_angle([0, 0, 1 if name.startswith('Left') else -1], 20)
    if name.endswith('UpperArm'):
        return axis_angle([0, 0, -1 if name.startswith('Left') else 1], 70)
    return [0.0, 0.0, 0.0, 1.0]


def bone_msg(name, t, types='sfffffff'):
    p, q = BONE_OFFSET[name], bone_pose(name, t)
    return osc_msg('/VMC/Ext/Bone/Pos', name, *p, *q, types=types)


def root_msg(t, extra=False, name='root'):
    q = axis_angle([0, 1, 0], 20)
    args = [name, 0.0, 0.0, 2.0 + 0.01 * t, *q]
    if extra:  # VMC 2.1: scale, then offset
        return osc_msg('/VMC/Ext/Root/Pos', *args, 1.0, 1.0, 1.0, 0.0, 0.02, 0.0, types='s' + 'f' * 13)
    return osc_msg('/VMC/Ext/Root/Pos', *args, types='sfffffff')


def blends(values):
    return [osc_msg('/VMC/Ext/Blend/Val', k, float(v), types='sf') for k, v in values] + [osc_msg('/VMC/Ext/Blend/Apply')]


def vseeface_frame(t, bones=HUMAN_BONES, blend=None, ok_args=(1,)):
    """One VSeeFace-style packet: OK, T, Root, every bone, the blend shapes, Apply."""
    msgs = [osc_msg('/VMC/Ext/OK', *ok_args, types='i' * len(ok_args)), osc_msg('/VMC/Ext/T', float(t), types='f'),
            root_msg(t)]
    msgs += [bone_msg(b, t) for b in bones]
    if blend is None:
        blend = [(k, 0.0) for k in BLEND_PRESETS]
        blend[6] = ('Blink', 0.8 if int(t * 4) % 5 == 0 else 0.0)
        blend[1] = ('A', round(0.5 + 0.5 * math.sin(t * 9), 3))
    msgs += blends(blend)
    return osc_bundle(msgs)


def read_capture(path='tests/fixtures/vmc/nod-turn.txt'):
    """Frames of the fixture capture: [(t, [(name, p, q)...])]."""
    frames = []
    with open(path) as f:
        for line in f:
            if line.startswith('#') or not line.strip():
                continue
            w = line.split()
            t, rest, items = float(w[0]), w[1:], []
            for k in range(0, len(rest), 8):
                items.append((rest[k], [float(x) for x in rest[k + 1:k + 4]], [float(x) for x in rest[k + 4:k + 8]]))
            frames.append((t, items))
    return frames


def vmc_seeds():
    out = {}
    # A whole VSeeFace frame: 55 humanoid bones and the preset blend shapes.
    out['vseeface_full_humanoid_frame'] = vseeface_frame(0.5, ok_args=(1, 3, 0, 1))
    # Eight frames of the fixture capture (root + Hips..Head), as a tracker streams them at
    # 60 Hz: one bundle a frame, with OK (loaded, calibrated, mode, tracking) and T.
    frames = read_capture()
    dg = []
    for t, items in frames[:60:8]:
        msgs = [osc_msg('/VMC/Ext/OK', 1, 3, 0, 1, types='iiii'), osc_msg('/VMC/Ext/T', t + 12.5, types='f')]
        for name, p, q in items:
            addr = '/VMC/Ext/Root/Pos' if name == 'Root' else '/VMC/Ext/Bone/Pos'
            msgs.append(osc_msg(addr, name, *p, *q, types='sfffffff'))
        msgs += blends([('Blink', 0.0), ('A', 0.2)])
        dg.append(osc_bundle(msgs))
    out['capture_nod_turn_8_frames'] = stream(*dg)
    # VMC 2.1 (XR Animator, newer VSeeFace): Root/Pos with scale and offset, a real NTP
    # time tag instead of "immediately".
    msgs = [osc_msg('/VMC/Ext/OK', 1, types='i'), osc_msg('/VMC/Ext/T', 3600.25, types='f'), root_msg(1.0, extra=True)]
    msgs += [bone_msg(b, 1.0) for b in ('Hips', 'Spine', 'Chest', 'UpperChest', 'Neck', 'Head', 'LeftEye', 'RightEye')]
    out['vmc21_root_scale_offset'] = osc_bundle(msgs, timetag=(3913056000 << 32) | 0x40000000)
    # A tracker rig (Virtual Motion Capture, VMagicMirror with trackers): HMD, controllers,
    # generic trackers with serials, local-space variants, and a "Head" tracker.
    msgs = [osc_msg('/VMC/Ext/OK', 1, types='i'), osc_msg('/VMC/Ext/T', 100.0, types='f'),
            osc_msg('/VMC/Ext/Hmd/Pos', 'LHR-1A2B3C4D', 0.0, 1.6, 0.1, *axis_angle([0, 1, 0], 15), types='sfffffff'),
            osc_msg('/VMC/Ext/Hmd/Pos/Local', 'LHR-1A2B3C4D', 0.0, 1.6, 0.1, 0.0, 0.13, 0.0, 0.99, types='sfffffff'),
            osc_msg('/VMC/Ext/Con/Pos', 'LHR-CTRL0001', -0.3, 1.1, 0.2, 0.0, 0.0, 0.0, 1.0, types='sfffffff'),
            osc_msg('/VMC/Ext/Con/Pos', 'LHR-CTRL0002', 0.3, 1.1, 0.2, 0.0, 0.0, 0.0, 1.0, types='sfffffff'),
            osc_msg('/VMC/Ext/Tra/Pos', 'LHR-TRK00003', 0.0, 0.95, 0.0, 0.0, 0.0, 0.0, 1.0, types='sfffffff'),
            osc_msg('/VMC/Ext/Tra/Pos/Local', 'LHR-TRK00003', 0.0, 0.95, 0.0, 0.0, 0.0, 0.0, 1.0, types='sfffffff'),
            osc_msg('/VMC/Ext/Tra/Pos', 'head', 0.02, 1.55, 0.05, *axis_angle([1, 0.2, 0], 12), types='sfffffff')]
    out['tracker_rig_hmd_controllers'] = osc_bundle(msgs)
    # Nested bundles: a frame split into a bones bundle and a blends bundle inside one.
    inner_bones = osc_bundle([root_msg(2.0)] + [bone_msg(b, 2.0) for b in ('Hips', 'Spine', 'Chest', 'Neck', 'Head')])
    inner_blend = osc_bundle(blends([('Joy', 1.0), ('Blink_L', 0.3), ('Blink_R', 0.3)]), timetag=0)
    out['nested_bones_and_blends'] = osc_bundle([osc_msg('/VMC/Ext/OK', 1, types='i'), inner_bones, inner_blend])
    # No bundles at all: one message a datagram (OSC senders that do not bundle).
    dg = [osc_msg('/VMC/Ext/OK', 1, types='i'), osc_msg('/VMC/Ext/T', 0.016, types='f'), root_msg(0.0)]
    dg += [bone_msg(b, 0.016) for b in ('Hips', 'Spine', 'Chest', 'UpperChest', 'Neck', 'Head')]
    dg += blends([('A', 0.7)])
    out['single_messages_stream'] = stream(*dg)
    # Doubles for floats ('d', which some senders use and the parser accepts).
    msgs = [root_msg(0.0)] + [bone_msg(b, 0.25, types='sddddddd') for b in ('Hips', 'Spine', 'Chest', 'Neck', 'Head')]
    out['double_precision_bones'] = osc_bundle(msgs)
    # Everything else a full VMC performer sends: camera, light, period settings, receive
    # enable, key and MIDI events, background colour, remote, blend names in Japanese (VRM
    # 0.x custom clips), and VRChat-style OSC parameters sent to the wrong port.
    msgs = [osc_msg('/VMC/Ext/Cam', 'Camera', 0.0, 1.4, -1.2, 0.0, 0.0, 0.0, 1.0, 35.0, types='sffffffff'),
            osc_msg('/VMC/Ext/Light', 'Light', 0.0, 3.0, 0.0, *axis_angle([1, 0, 0], 50), 1.0, 0.95, 0.9, 1.0,
                    types='sfffffffffff'),
            osc_msg('/VMC/Ext/Set/Period', 1, 1, 1, 1, 1, 1, types='iiiiii'),
            osc_msg('/VMC/Ext/Rcv', 1, 39540, '127.0.0.1', types='iis'),
            osc_msg('/VMC/Ext/Key', 1, 'Space', 32, types='isi'),
            osc_msg('/VMC/Ext/Midi/Note', 1, 0, 60, 0.8, types='iiif'),
            osc_msg('/VMC/Ext/Midi/CC/Val', 7, 0.5, types='if'),
            osc_msg('/VMC/Ext/Setting/Color', 0.0, 1.0, 0.0, 1.0, types='ffff'),
            osc_msg('/VMC/Ext/Setting/Win', 1, 0, 0, 0, types='iiii'),
            osc_msg('/VMC/Ext/Remote', 'VMCProtocolRemote', '{"req":1}', types='ss'),
            osc_msg('/VMC/Ext/Opt', 'option-string', types='s'),
            osc_msg('/VMC/Ext/VRM', 'C:/avatars/\u3042\u3044.vrm', 'Alice', types='ss'),
            osc_msg('/VMC/Ext/Blend/Val', '\u307e\u3070\u305f\u304d', 1.0, types='sf'),
            osc_msg('/VMC/Ext/Blend/Apply'),
            osc_msg('/avatar/parameters/VelocityZ', 0.0, types='f'),
            osc_msg('/avatar/parameters/Grounded', types='T'),
            osc_msg('/VMC/Ext/Bone/Pos', 'Head', 0.0, 0.08, 0.0, 0.0, 0.0, 0.0, 1.0, types='sfffffff')]
    out['performer_misc_messages'] = osc_bundle(msgs)
    # The tracker's "Head" holds for 1 s, then the bone chain takes over: 70 small
    # datagrams 16 ms apart (the harness's clock), chain without UpperChest.
    dg = [osc_msg('/VMC/Ext/Tra/Pos', 'Head', 0.0, 1.5, 0.0, 0.0, 0.0, 0.0, 1.0, types='sfffffff'),
          osc_bundle([root_msg(0.0)] + [bone_msg(b, 0.0) for b in ('Hips', 'Spine', 'Chest', 'Neck', 'Head')])]
    dg += [osc_msg('/VMC/Ext/T', 0.016 * k, types='f') for k in range(68)]
    dg.append(bone_msg('Head', 1.2))
    out['tracker_hold_expires'] = stream(*dg)
    # What goes wrong on the wire: a bundle element whose size runs past the datagram, one
    # not a multiple of 4, wrong argument types, a NaN / infinity, a zero rotation, a
    # truncated message, bundles nested deeper than the parser follows.
    good = bone_msg('Head', 0.0)
    bad_size = b'#bundle\0' + struct.pack('>Q', 1) + struct.pack('>i', len(good) + 8) + good
    odd_size = b'#bundle\0' + struct.pack('>Q', 1) + struct.pack('>i', len(good) - 2) + good
    deep = good
    for _ in range(10):
        deep = osc_bundle([deep])
    out['malformed_bundles_and_args'] = stream(
        bad_size, odd_size,
        osc_bundle([root_msg(0.0), osc_msg('/VMC/Ext/Bone/Pos', 'Hips', 0.0, 1.0, 0.0, types='sfff'),
                    osc_msg('/VMC/Ext/Bone/Pos', 'Spine', 0, 0, 0, 0, 0, 0, 1, types='siiiiiii'), bone_msg('Neck', 0.0)]),
        osc_msg('/VMC/Ext/Bone/Pos', 'Head', float('nan'), 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, types='sfffffff'),
        osc_msg('/VMC/Ext/Root/Pos', 'root', float('inf'), 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, types='sfffffff'),
        osc_msg('/VMC/Ext/Bone/Pos', 'Head', 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, types='sfffffff'),
        osc_msg('/VMC/Ext/Bone/Pos', 'Head', 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 3.0, types='sfffffff'),
        good[:-6], deep, b'#bundle\0', b'')
    for name, data in out.items():
        write('fuzz_vmc', name, data)
    return sorted(out)


# =====================================================================================
# fuzz_vrm: VRM files
# =====================================================================================

def qmul(a, b):
    return [a[3] * b[0] + a[0] * b[3] + a[1] * b[2] - a[2] * b[1],
            a[3] * b[1] - a[0] * b[2] + a[1] * b[3] + a[2] * b[0],
            a[3] * b[2] + a[0] * b[1] - a[1] * b[0] + a[2] * b[3],
            a[3] * b[3] - a[0] * b[0] - a[1] * b[1] - a[2] * b[2]]


class Avatar:
    """A node tree built parent first: add() returns the node index."""

    def __init__(self):
        self.nodes = []

    def add(self, name, parent=None, t=None, r=None, s=None, matrix=None, extra=None):
        nd = {}
        if name is not None:
            nd['name'] = name
        if matrix is not None:
            nd['matrix'] = matrix
        else:
            if t is not None:
                nd['translation'] = r6(t)
            if r is not None:
                nd['rotation'] = r6(r)
            if s is not None:
                nd['scale'] = s
        if extra:
            nd.update(extra)
        self.nodes.append(nd)
        i = len(self.nodes) - 1
        if parent is not None:
            self.nodes[parent].setdefault('children', []).append(i)
        return i

    def chain(self, prefix, parent, t0, lengths, direction=(0, -1, 0), r0=None, names=None):
        """A chain of joints: the root at t0 under parent, then one child per length."""
        out, p = [], parent
        for k in range(len(lengths) + 1):
            nm = names[k] if names else '%s_%02d' % (prefix, k + 1)
            t = t0 if k == 0 else [c * lengths[k - 1] for c in direction]
            p = self.add(nm, p, t, r0 if k == 0 else None)
            out.append(p)
        return out


def body(av, v0=False, upper_chest=False, names=None):
    """Hips..Head and the limbs VRM 1.0 requires; returns {humanoid bone: node}."""
    nm = names or {}
    z = -1 if v0 else 1  # 0.x models face -Z
    hb = {}
    hb['hips'] = av.add(nm.get('hips', 'Hips'), None, [0, 0.9, 0])
    hb['spine'] = av.add(nm.get('spine', 'Spine'), hb['hips'], [0, 0.12, 0])
    hb['chest'] = av.add(nm.get('chest', 'Chest'), hb['spine'], [0, 0.14, 0])
    top = hb['chest']
    if upper_chest:
        hb['upperChest'] = top = av.add(nm.get('upperChest', 'UpperChest'), top, [0, 0.1, 0.01 * z])
    hb['neck'] = av.add(nm.get('neck', 'Neck'), top, [0, 0.1 if upper_chest else 0.16, 0])
    hb['head'] = av.add(nm.get('head', 'Head'), hb['neck'], [0, 0.08, 0])
    for side, x in (('left', 1), ('right', -1)):
        xs = x * (-1 if v0 else 1)
        S = side.capitalize()
        hb[side + 'UpperLeg'] = av.add(nm.get(side + 'UpperLeg', S + 'UpperLeg'), hb['hips'], [0.09 * xs, -0.05, 0])
        hb[side + 'LowerLeg'] = av.add(nm.get(side + 'LowerLeg', S + 'LowerLeg'), hb[side + 'UpperLeg'], [0, -0.4, 0])
        hb[side + 'Foot'] = av.add(nm.get(side + 'Foot', S + 'Foot'), hb[side + 'LowerLeg'], [0, -0.4, 0])
        hb[side + 'UpperArm'] = av.add(nm.get(side + 'UpperArm', S + 'UpperArm'), top, [0.18 * xs, 0.1, 0])
        hb[side + 'LowerArm'] = av.add(nm.get(side + 'LowerArm', S + 'LowerArm'), hb[side + 'UpperArm'], [0.25 * xs, 0, 0])
        hb[side + 'Hand'] = av.add(nm.get(side + 'Hand', S + 'Hand'), hb[side + 'LowerArm'], [0.22 * xs, 0, 0])
    return hb


# The BIN chunk: the test avatars' generator's own (a view and an accessor per add).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fixtures', 'vrm'))
from make_test_avatar import Bin  # noqa: E402


def add_mesh(doc, head, scene_nodes, b=None):
    b = b or Bin()
    r = 0.09
    pos = [[r, 1.4, 0], [-r, 1.4, 0], [0, 1.4 + r, 0], [0, 1.4 - r, 0], [0, 1.4, r], [0, 1.4, -r]]
    a_pos = b.add('f', pos, 'VEC3', 5126, 34962)
    b.accessors[a_pos]['min'] = [-r, 1.4 - r, -r]
    b.accessors[a_pos]['max'] = [r, 1.4 + r, r]
    a_j = b.add('H', [[0, 0, 0, 0]] * 6, 'VEC4', 5123, 34962)
    a_w = b.add('f', [[1, 0, 0, 0]] * 6, 'VEC4', 5126, 34962)
    a_i = b.add('H', [[0], [2], [4], [1], [4], [2], [0], [5], [2], [1], [2], [5],
                      [0], [4], [3], [1], [3], [4], [0], [3], [5], [1], [5], [3]], 'SCALAR', 5123, 34963)
    a_ibm = b.add('f', [[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, -1.4, 0, 1]], 'MAT4', 5126)
    nodes = doc['nodes']
    nodes.append({'name': 'Face', 'mesh': 0, 'skin': 0})
    scene_nodes.append(len(nodes) - 1)
    doc['meshes'] = [{'name': 'Face', 'primitives': [{'attributes': {'POSITION': a_pos, 'JOINTS_0': a_j,
                                                                     'WEIGHTS_0': a_w}, 'indices': a_i,
                                                      'material': 0,
                                                      'targets': [{'POSITION': a_pos}]}],
                      'extras': {'targetNames': ['Blink']}}]
    doc['materials'] = [{'name': 'Skin', 'pbrMetallicRoughness': {'baseColorFactor': [0.9, 0.75, 0.65, 1]}}]
    doc['skins'] = [{'joints': [head], 'inverseBindMatrices': a_ibm, 'skeleton': head}]
    return b


def glb(doc, b=None, *, bin_extra=0, json_pad=b' ', trailing=b'', extra_chunks=(), no_bin=False,
        declare_bin=True, declared_len=None):
    """A GLB of doc and b's bytes. bin_extra: bytes in the BIN chunk beyond buffer 0's
    byteLength (UniVRM pads so); json_pad: the JSON chunk's padding byte (some exporters
    use NUL); trailing: bytes after the GLB's declared length; extra_chunks: (type,
    bytes) after BIN (readers skip unknown chunks); declared_len: buffer 0's byteLength
    when it is not the data's length."""
    doc = dict(doc)
    data = b.data if b else b''
    if b and declare_bin:
        doc['buffers'] = [{'byteLength': len(data) if declared_len is None else declared_len}]
        doc['bufferViews'] = b.views
        doc['accessors'] = b.accessors
    j = json.dumps(doc, separators=(',', ':'), ensure_ascii=False).encode('utf-8')
    j += json_pad * (-len(j) % 4)
    chunks = struct.pack('<II', len(j), 0x4E4F534A) + j
    if not no_bin:
        data = data + b'\0' * bin_extra
        data += b'\0' * (-len(data) % 4)
        chunks += struct.pack('<II', len(data), 0x004E4942) + data
    for ctype, body in extra_chunks:
        body += b'\0' * (-len(body) % 4)
        chunks += struct.pack('<II', len(body), ctype) + body
    return struct.pack('<4sII', b'glTF', 2, 12 + len(chunks)) + chunks + trailing


def vrm0_ext(hb, groups, bone_groups, meta=True):
    ext = {'exporterVersion': 'UniVRM-0.99.0', 'specVersion': '0.0',
           'humanoid': {'humanBones': [{'bone': k, 'node': v, 'useDefaultValues': True} for k, v in hb.items()],
                        'armStretch': 0.05, 'legStretch': 0.05, 'upperArmTwist': 0.5, 'lowerArmTwist': 0.5,
                        'upperLegTwist': 0.5, 'lowerLegTwist': 0.5, 'feetSpacing': 0, 'hasTranslationDoF': False},
           'secondaryAnimation': {'colliderGroups': groups, 'boneGroups': bone_groups}}
    if meta:
        ext['meta'] = {'title': 'Seed', 'version': '1.0', 'author': 'ponytail', 'allowedUserName': 'Everyone',
                       'violentUssageName': 'Disallow', 'sexualUssageName': 'Disallow',
                       'commercialUssageName': 'Allow', 'licenseName': 'CC0'}
    return ext


def xyz(v):
    return {'x': v[0], 'y': v[1], 'z': v[2]}


def doc_of(av, exts, used, scene_nodes=None):
    roots = [i for i in range(len(av.nodes)) if not any(i in n.get('children', []) for n in av.nodes)]
    return {'asset': {'version': '2.0', 'generator': 'ponytail tests/fuzz/make_seeds.py'},
            'extensionsUsed': used, 'scene': 0, 'scenes': [{'nodes': scene_nodes if scene_nodes is not None else roots}],
            'nodes': av.nodes, 'extensions': exts}


def vrm_v0_univrm():
    """VRM 0.x as UniVRM 0.x exports it: J_Bip_* / J_Sec_* names, the BIN chunk longer
    than buffer 0's byteLength, the schema's "stiffiness" spelling, gravityDir / offsets as
    {x, y, z}, center -1, virtual tails (every leaf), hair, bust and skirt groups."""
    av = Avatar()
    names = {'hips': 'J_Bip_C_Hips', 'spine': 'J_Bip_C_Spine', 'chest': 'J_Bip_C_Chest', 'upperChest': 'J_Bip_C_UpperChest',
             'neck': 'J_Bip_C_Neck', 'head': 'J_Bip_C_Head'}
    for side, L in (('left', 'L'), ('right', 'R')):
        for k, v in (('UpperLeg', 'UpperLeg'), ('LowerLeg', 'LowerLeg'), ('Foot', 'Foot'), ('UpperArm', 'UpperArm'),
                     ('LowerArm', 'LowerArm'), ('Hand', 'Hand')):
            names[side + k] = 'J_Bip_%s_%s' % (L, v)
    root = av.add('Root')
    hb = body(av, v0=True, upper_chest=True, names=names)
    av.nodes[root]['children'] = [hb['hips']]
    head = hb['head']
    front = av.chain('J_Sec_Hair1', head, [0, 0.1, -0.09], [0.03, 0.03, 0.025], (0, -0.6, -0.8))
    sideL = av.chain('J_Sec_Hair2', head, [0.07, 0.08, 0], [0.04, 0.04, 0.04, 0.035], (0.2, -1, 0))
    sideR = av.chain('J_Sec_Hair3', head, [-0.07, 0.08, 0], [0.04, 0.04, 0.04, 0.035], (-0.2, -1, 0))
    back = av.chain('J_Sec_Hair4', head, [0, 0.08, 0.09], [0.05, 0.05, 0.05, 0.05, 0.05], (0, -0.9, 0.3))
    bustL = av.chain('J_Sec_L_Bust', hb['upperChest'], [0.05, 0, -0.05], [0.05], (0, 0, -1))
    bustR = av.chain('J_Sec_R_Bust', hb['upperChest'], [-0.05, 0, -0.05], [0.05], (0, 0, -1))
    skirt = [av.chain('J_Sec_Skirt%d' % k, hb['hips'], r6([0.12 * math.sin(a), -0.02, 0.12 * math.cos(a)]),
                      [0.12, 0.12], r6([math.sin(a) * 0.3, -1, math.cos(a) * 0.3]))
             for k, a in enumerate([2 * math.pi * i / 6 for i in range(6)])]
    groups = [{'node': head, 'colliders': [{'offset': xyz([0, 0.07, 0]), 'radius': 0.09},
                                           {'offset': xyz([0, 0.03, 0.03]), 'radius': 0.08}]},
              {'node': hb['upperChest'], 'colliders': [{'offset': xyz([0, 0.02, 0]), 'radius': 0.1}]},
              {'node': hb['leftUpperLeg'], 'colliders': [{'offset': xyz([0, -0.1, 0]), 'radius': 0.08},
                                                        {'offset': xyz([0, -0.25, 0]), 'radius': 0.07}]},
              {'node': hb['rightUpperLeg'], 'colliders': [{'offset': xyz([0, -0.1, 0]), 'radius': 0.08},
                                                         {'offset': xyz([0, -0.25, 0]), 'radius': 0.07}]}]
    bone_groups = [
        {'comment': 'Hair', 'stiffiness': 0.8, 'gravityPower': 0.05, 'gravityDir': xyz([0, -1, 0]), 'dragForce': 0.4,
         'center': -1, 'hitRadius': 0.02, 'bones': [front[0], sideL[0], sideR[0], back[0]], 'colliderGroups': [0, 1]},
        {'comment': 'Bust', 'stiffiness': 2.5, 'gravityPower': 0, 'gravityDir': xyz([0, -1, 0]), 'dragForce': 0.3,
         'center': -1, 'hitRadius': 0.02, 'bones': [bustL[0], bustR[0]], 'colliderGroups': []},
        {'comment': 'Skirt', 'stiffiness': 1.2, 'gravityPower': 0.3, 'gravityDir': xyz([0, -1, 0]), 'dragForce': 0.5,
         'center': -1, 'hitRadius': 0.03, 'bones': [c[0] for c in skirt], 'colliderGroups': [2, 3]},
    ]
    doc = doc_of(av, {'VRM': vrm0_ext(hb, groups, bone_groups)}, ['VRM'])
    doc['scenes'][0]['nodes'] = [root]
    b = add_mesh(doc, head, doc['scenes'][0]['nodes'])
    return glb(doc, b, bin_extra=64)


def vrm_v0_branching_unicode():
    """VRM 0.x with a branching bone group (one root, a tree of descendants: every path is
    a chain), Japanese node names, a ribbon under a non-humanoid node, a gravity pull
    sideways (Unity frame), and a chain whose leaf sits on its parent (no tail)."""
    av = Avatar()
    hb = body(av, v0=True)
    head = hb['head']
    root = av.add('\u9aea_root', head, [0, 0.09, 0.08])
    a1 = av.add('\u9aea_\u5de6_01', root, [0.03, -0.04, 0.01])
    a2 = av.add('\u9aea_\u5de6_02', a1, [0.01, -0.05, 0.01])
    av.add('\u9aea_\u5de6_03', a2, [0, -0.05, 0.01])
    b1 = av.add('\u9aea_\u53f3_01', root, [-0.03, -0.04, 0.01])
    b2 = av.add('\u9aea_\u53f3_02', b1, [-0.01, -0.05, 0.01])
    av.add('\u9aea_\u53f3_03\U0001F380', b2, [0, -0.05, 0.01])
    av.add('\u9aea_\u53f3_02b', b1, [-0.03, -0.04, 0])
    c1 = av.add('\u9aea_\u4e2d_01', root, [0, -0.06, 0.02])
    av.add('\u9aea_\u4e2d_02', c1, [0, 0, 0])  # a leaf on its parent: no direction for a tail
    acc = av.add('Accessory', head, [0.08, 0.1, 0])
    rib = av.chain('\u30ea\u30dc\u30f3', acc, [0.02, 0, 0], [0.03, 0.03], (0.3, -1, 0))
    groups = [{'node': head, 'colliders': [{'offset': xyz([0, 0.06, -0.01]), 'radius': 0.095}]},
              {'node': -1, 'colliders': [{'offset': xyz([0, 0, 0]), 'radius': 0.1}]}]
    bone_groups = [
        {'comment': '\u9aea', 'stiffiness': 1.0, 'gravityPower': 0.2, 'gravityDir': xyz([0.3, -1, 0.2]),
         'dragForce': 0.45, 'center': -1, 'hitRadius': 0.015, 'bones': [root], 'colliderGroups': [0, 1]},
        {'comment': '\u30ea\u30dc\u30f3', 'stiffness': 0.6, 'gravityPower': 0.5, 'dragForce': 0.6,
         'center': acc, 'hitRadius': 0.01, 'bones': [rib[0]], 'colliderGroups': [0]},
    ]
    doc = doc_of(av, {'VRM': vrm0_ext(hb, groups, bone_groups)}, ['VRM'])
    return glb(doc, add_mesh(doc, head, doc['scenes'][0]['nodes']))


def vrm_v0_minimal_optional():
    """VRM 0.x with every optional field left out: no meta, no colliderGroups, a bone
    group with only "bones", nodes without names, no scene, no mesh, no BIN chunk."""
    av = Avatar()
    hips = av.add(None, None, [0, 1, 0])
    head = av.add(None, hips, [0, 0.5, 0])
    hair = av.chain(None, head, [0, 0.05, 0.1], [0.05, 0.05], (0, -1, 0), names=[None, None, None])
    doc = {'asset': {'version': '2.0'}, 'nodes': av.nodes,
           'extensions': {'VRM': {'humanoid': {'humanBones': [{'bone': 'hips', 'node': hips},
                                                              {'bone': 'head', 'node': head}]},
                                  'secondaryAnimation': {'boneGroups': [{'bones': [hair[0]]}]}}}}
    return glb(doc, no_bin=True)


def vrm_v0_fingers_body_colliders():
    """VRM 0.x with the full humanoid (fingers, 0.x thumb names that map one down, eyes,
    jaw, toes) and collider groups on hands, arms and chest: colliders attached to body
    bones. Hair over the shoulders sees them; node scale 1.02 on the head (a tally)."""
    av = Avatar()
    hb = body(av, v0=True, upper_chest=True)
    for side, x in (('left', -1), ('right', 1)):
        S = side.capitalize()
        hb[side + 'Shoulder'] = av.add(S + 'Shoulder', hb['upperChest'], [0.03 * x, 0.08, 0])
        hb[side + 'Toes'] = av.add(S + 'Toes', hb[side + 'Foot'], [0, -0.05, -0.1])
        for k, f in enumerate(('Thumb', 'Index', 'Middle', 'Ring', 'Little')):
            p = hb[side + 'Hand']
            for j in ('Proximal', 'Intermediate', 'Distal'):
                p = hb[side + f + j] = av.add(S + f + j, p, [0.03 * x, 0, -0.03 + 0.015 * k] if j == 'Proximal'
                                              else [0.025 * x, 0, 0])
    hb['leftEye'] = av.add('LeftEye', hb['head'], [-0.03, 0.06, -0.07])
    hb['rightEye'] = av.add('RightEye', hb['head'], [0.03, 0.06, -0.07])
    hb['jaw'] = av.add('Jaw', hb['head'], [0, 0.01, -0.03])
    av.nodes[hb['head']]['scale'] = [1.02, 1.02, 1.02]
    head = hb['head']
    tail = av.chain('Ponytail', head, [0, 0.1, 0.1], [0.06, 0.06, 0.06, 0.06, 0.06, 0.06], (0, -0.95, 0.3))
    groups = [{'node': head, 'colliders': [{'offset': xyz([0, 0.07, 0]), 'radius': 0.1}]},
              {'node': hb['upperChest'], 'colliders': [{'offset': xyz([0, 0, 0.02]), 'radius': 0.12},
                                                       {'offset': xyz([0.08, 0.05, 0.04]), 'radius': 0.08},
                                                       {'offset': xyz([-0.08, 0.05, 0.04]), 'radius': 0.08}]},
              {'node': hb['leftUpperArm'], 'colliders': [{'offset': xyz([-0.1, 0, 0]), 'radius': 0.05}]},
              {'node': hb['rightUpperArm'], 'colliders': [{'offset': xyz([0.1, 0, 0]), 'radius': 0.05}]},
              {'node': hb['leftHand'], 'colliders': [{'offset': xyz([-0.05, 0, 0]), 'radius': 0.04}]},
              {'node': hb['rightHand'], 'colliders': [{'offset': xyz([0.05, 0, 0]), 'radius': 0.04}]},
              {'node': hb['leftThumbIntermediate'], 'colliders': [{'offset': xyz([0, 0, 0]), 'radius': 0.015}]}]
    bone_groups = [{'comment': 'Ponytail', 'stiffiness': 0.5, 'gravityPower': 0.4, 'gravityDir': xyz([0, -1, 0]),
                    'dragForce': 0.35, 'center': -1, 'hitRadius': 0.025, 'bones': [tail[0]],
                    'colliderGroups': list(range(len(groups)))}]
    doc = doc_of(av, {'VRM': vrm0_ext(hb, groups, bone_groups)}, ['VRM'])
    return glb(doc, add_mesh(doc, head, doc['scenes'][0]['nodes']))


def vrm1_ext(hb, colliders, groups, springs, extra_used=()):
    ext = {'VRMC_vrm': {'specVersion': '1.0',
                        'meta': {'name': 'Seed', 'version': '1', 'authors': ['ponytail'],
                                 'licenseUrl': 'https://vrm.dev/licenses/1.0/', 'avatarPermission': 'everyone',
                                 'commercialUsage': 'personalNonProfit'},
                        'humanoid': {'humanBones': {k: {'node': v} for k, v in hb.items()}}},
           'VRMC_springBone': {'specVersion': '1.0', 'colliders': colliders, 'colliderGroups': groups,
                               'springs': springs}}
    return ext, ['VRMC_vrm', 'VRMC_springBone'] + list(extra_used)


def joints_of(nodes, **kw):
    out = []
    for k, n in enumerate(nodes):
        j = {'node': n}
        for key, v in kw.items():
            j[key] = v[k] if isinstance(v, list) and key != 'gravityDir' else v
        out.append(j)
    return out


def vrm_v1_several_chains():
    """VRM 1.0 as UniVRM 1.0 / VRoid Studio export it: spring chains on several bones
    (front, side and back hair on the head, bust on the upper chest, a tail on the hips,
    skirt on the upper legs), sphere and capsule colliders on head, chest, legs; center
    nodes, per-joint parameters, the BIN chunk longer than buffer 0 declares."""
    av = Avatar()
    hb = body(av, upper_chest=True)
    head = hb['head']
    hair = [av.chain('HairFront', head, [0, 0.1, 0.09], [0.03, 0.03, 0.03], (0, -0.7, 0.7)),
            av.chain('HairSideL', head, [0.07, 0.07, 0.02], [0.04, 0.045, 0.05], (0.15, -1, 0)),
            av.chain('HairSideR', head, [-0.07, 0.07, 0.02], [0.04, 0.045, 0.05], (-0.15, -1, 0)),
            av.chain('HairBack', head, [0, 0.06, -0.09], [0.05, 0.05, 0.06, 0.06, 0.07], (0, -0.9, -0.3))]
    bust = [av.chain('BustL', hb['upperChest'], [0.05, 0, 0.05], [0.05], (0, 0, 1)),
            av.chain('BustR', hb['upperChest'], [-0.05, 0, 0.05], [0.05], (0, 0, 1))]
    tail = av.chain('Tail', hb['hips'], [0, 0, -0.1], [0.1, 0.1, 0.1, 0.1], (0, -0.3, -1))
    skirt = [av.chain('Skirt%s' % s, hb[s.lower() + 'UpperLeg'], [0.02 * x, 0, 0.08], [0.1, 0.1], (0.2 * x, -1, 0.3))
             for s, x in (('Left', 1), ('Right', -1))]
    cols = [{'node': head, 'shape': {'sphere': {'offset': [0, 0.06, 0], 'radius': 0.1}}},
            {'node': hb['upperChest'], 'shape': {'capsule': {'offset': [-0.08, 0.02, 0.02], 'tail': [0.08, 0.02, 0.02],
                                                             'radius': 0.1}}},
            {'node': hb['neck'], 'shape': {'capsule': {'offset': [0, 0, 0], 'tail': [0, 0.08, 0], 'radius': 0.05}}},
            {'node': hb['leftUpperLeg'], 'shape': {'capsule': {'offset': [0, 0, 0], 'tail': [0, -0.4, 0], 'radius': 0.08}}},
            {'node': hb['rightUpperLeg'], 'shape': {'capsule': {'offset': [0, 0, 0], 'tail': [0, -0.4, 0], 'radius': 0.08}}},
            {'node': hb['hips'], 'shape': {'sphere': {'offset': [0, -0.05, 0], 'radius': 0.15}}}]
    groups = [{'name': 'Head', 'colliders': [0, 2]}, {'name': 'Body', 'colliders': [1]},
              {'name': 'Legs', 'colliders': [3, 4, 5]}]
    springs = []
    for ch in hair:
        n = len(ch)
        springs.append({'name': av.nodes[ch[0]]['name'], 'colliderGroups': [0, 1], 'center': hb['hips'],
                        'joints': joints_of(ch, stiffness=[r6(1.5 - 0.2 * k) for k in range(n)], dragForce=0.4,
                                            gravityPower=[0.0] + [0.1] * (n - 1), gravityDir=[0, -1, 0],
                                            hitRadius=[r6(0.02 - 0.002 * k) for k in range(n)])})
    for ch in bust:
        springs.append({'name': av.nodes[ch[0]]['name'], 'joints': joints_of(ch, stiffness=3.0, dragForce=0.2)})
    springs.append({'name': 'Tail', 'colliderGroups': [2], 'joints': joints_of(tail, stiffness=0.8, gravityPower=0.5)})
    for ch in skirt:
        springs.append({'name': av.nodes[ch[0]]['name'], 'colliderGroups': [2], 'center': hb['hips'],
                        'joints': joints_of(ch, stiffness=1.0, dragForce=0.5, hitRadius=0.03)})
    ext, used = vrm1_ext(hb, cols, groups, springs)
    doc = doc_of(av, ext, used)
    return glb(doc, add_mesh(doc, head, doc['scenes'][0]['nodes']), bin_extra=128)


def vrm_v1_extended_colliders():
    """VRM 1.0 with VRMC_springBone_extended_collider: a plane behind the back (with its
    fallback sphere), inside sphere and inside capsule (a hood, a sleeve), an unknown
    extension specVersion (the fallback shape is used), a collider on node -1 and one
    without a shape (skipped), and a zero plane normal."""
    av = Avatar()
    hb = body(av)
    head = hb['head']
    hair = av.chain('Hair', head, [0, 0.06, -0.09], [0.06, 0.06, 0.06, 0.06], (0, -1, -0.2))
    ear = av.chain('EarL', head, [0.05, 0.12, 0], [0.04, 0.04], (0.3, 1, 0))
    ext = lambda shape, ver='1.0': {'VRMC_springBone_extended_collider': {'specVersion': ver, 'shape': shape}}
    cols = [
        {'node': head, 'shape': {'sphere': {'offset': [0, 0.05, 0], 'radius': 0.1}}},
        {'node': hb['chest'], 'shape': {'sphere': {'offset': [0, 0, -1000.11], 'radius': 1000}},
         'extensions': ext({'plane': {'offset': [0, 0, -0.11], 'normal': [0, 0, -1]}})},
        {'node': head, 'shape': {'sphere': {'offset': [0, 0, 0], 'radius': 0.5}},
         'extensions': ext({'sphere': {'offset': [0, 0.05, 0], 'radius': 0.4, 'inside': True}})},
        {'node': hb['chest'], 'shape': {'capsule': {'offset': [0, 0.3, 0], 'tail': [0, -0.3, 0], 'radius': 0.5}},
         'extensions': ext({'capsule': {'offset': [0, 0.3, 0], 'tail': [0, -0.5, 0], 'radius': 0.45, 'inside': True}})},
        {'node': head, 'shape': {'sphere': {'offset': [0, 0, 0], 'radius': 0.09}},
         'extensions': ext({'cone': {'radius': 1}}, ver='2.0')},
        {'node': -1, 'shape': {'sphere': {'radius': 0.1}}},
        {'node': head, 'shape': {}},
        {'node': hb['chest'], 'shape': {'sphere': {'radius': 0.2}},
         'extensions': ext({'plane': {'offset': [0, 0, 0], 'normal': [0, 0, 0]}})},
        {'node': hb['hips'], 'shape': {'capsule': {'offset': [0, 0, 0], 'tail': [0, 0.1, 0], 'radius': 0.12}},
         'extensions': ext({'capsule': {'offset': [0, 0, 0], 'tail': [0, 0.1, 0], 'radius': 0.12, 'inside': False}})},
    ]
    groups = [{'colliders': [0, 1, 2, 3, 4, 5, 6, 7, 8]}, {'colliders': [0]}]
    springs = [{'name': 'Hair', 'colliderGroups': [0], 'joints': joints_of(hair, hitRadius=0.02, gravityPower=0.3)},
               {'name': 'Ear', 'colliderGroups': [1], 'joints': joints_of(ear, stiffness=4)}]
    ext_, used = vrm1_ext(hb, cols, groups, springs, ['VRMC_springBone_extended_collider'])
    return glb(doc_of(av, ext_, used))


def vrm_v1_angle_limits():
    """VRM 1.0 with the draft VRMC_springBone_limit: cone and hinge limits with rotations,
    a spherical one (unsupported), a limit on the spring (an older draft), an unknown
    specVersion, an angle over pi."""
    av = Avatar()
    hb = body(av)
    head = hb['head']
    a = av.chain('Cone', head, [0.05, 0.06, -0.08], [0.05, 0.05, 0.05], (0, -1, 0))
    b = av.chain('Hinge', head, [-0.05, 0.06, -0.08], [0.05, 0.05, 0.05], (0, -1, 0))
    c = av.chain('Mixed', head, [0, 0.1, -0.05], [0.04, 0.04, 0.04, 0.04], (0, -0.5, -1))
    lim = lambda body, ver='1.0-draft': {'VRMC_springBone_limit': {'specVersion': ver, 'limit': body}}
    ja = joints_of(a, stiffness=1.0)
    for k, j in enumerate(ja[:-1]):
        j['extensions'] = lim({'cone': {'angle': 0.3 + 0.2 * k, 'rotation': r6(axis_angle([1, 0, 0], 10 * k + 1))}})
    jb = joints_of(b)
    for j in jb[:-1]:
        j['extensions'] = lim({'hinge': {'angle': 1.0, 'rotation': r6(axis_angle([0, 1, 0], 90))}}, ver='1.0')
    jc = joints_of(c, gravityPower=0.2)
    jc[0]['extensions'] = lim({'spherical': {'pitch': 0.5, 'yaw': 0.5}})
    jc[1]['extensions'] = lim({'cone': {'angle': 4.0}})
    jc[2]['extensions'] = lim({'cone': {'angle': 0.5}}, ver='2.0')
    springs = [{'name': 'Cone', 'joints': ja}, {'name': 'Hinge', 'joints': jb},
               {'name': 'Mixed', 'joints': jc},
               {'name': 'SpringLimit', 'extensions': lim({'cone': {'angle': 0.7}}),
                'joints': joints_of(av.chain('Old', head, [0, 0.02, 0.1], [0.03, 0.03], (0, -1, 0.2)))}]
    cols = [{'node': head, 'shape': {'sphere': {'offset': [0, 0.05, 0], 'radius': 0.1}}}]
    ext, used = vrm1_ext(hb, cols, [{'colliders': [0]}], springs, ['VRMC_springBone_limit'])
    return glb(doc_of(av, ext, used))


def vrm_v1_branching_reused():
    """VRM 1.0 springs that branch off one another: a second spring starting below a
    moving joint of the first, one reusing a joint of an earlier spring (VRM forbids it:
    cut), one listing joints out of parent order, one of a single joint, and a spring
    with more joints than a strand holds (truncated)."""
    av = Avatar()
    hb = body(av)
    head = hb['head']
    main = av.chain('Braid', head, [0, 0.05, -0.1], [0.04] * 5, (0, -1, -0.1))
    branch = av.chain('BraidTip', main[2], [0.02, -0.01, 0], [0.03, 0.03], (0.5, -1, 0))
    long_chain = av.chain('Long', head, [0.02, 0.02, -0.1], [0.015] * 69, (0, -1, 0))
    lone = av.add('Lone', head, [0, 0.12, 0])
    springs = [{'name': 'Braid', 'joints': joints_of(main)},
               {'name': 'BraidTip', 'joints': joints_of(branch)},
               {'name': 'Reuse', 'joints': joints_of([main[3], main[4], main[5]])},
               {'name': 'Order', 'joints': joints_of([branch[2], branch[1], branch[0]])},
               {'name': 'Lone', 'joints': joints_of([lone])},
               {'name': 'Long', 'joints': joints_of(long_chain, stiffness=0.5)},
               {'name': 'Empty', 'joints': []}]
    cols = [{'node': head, 'shape': {'sphere': {'offset': [0, 0.05, 0], 'radius': 0.1}}}]
    ext, used = vrm1_ext(hb, cols, [{'colliders': [0]}], springs)
    return glb(doc_of(av, ext, used))


def vrm_v1_unicode_matrix_scale():
    """VRM 1.0 whose nodes are given as matrices (Blender's exporter with "matrix" on),
    a scaled armature (0.01, as an FBX-sourced model), a mirrored node, unicode and
    duplicate names, empty names, a rotated head (the head-frame note)."""
    av = Avatar()
    arm = av.add('Armature', None, [0, 0, 0], axis_angle([1, 0, 0], 0.0001), [0.01, 0.01, 0.01])
    hips = av.add('Hips', arm, [0, 90, 0])
    spine = av.add('Spine', hips, None, matrix=[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 12, 0, 1])
    neck = av.add('Neck', spine, [0, 30, 0])
    q = r6(axis_angle([0, 1, 0], 5))
    head = av.add('Head', neck, [0, 8, 0], q)
    hb = {'hips': hips, 'spine': spine, 'neck': neck, 'head': head}
    hb['chest'] = av.add('', spine, [0, 14, 0])
    c1 = av.chain('\u0425\u0432\u043e\u0441\u0442', head, [0, 6, -9], [5, 5, 5], (0, -1, 0),
                  names=['\u0425\u0432\u043e\u0441\u0442', 'Ha\u0303ir', 'Ha\u0303ir', '\U0001F600'])
    mir = av.add('Mirror', head, [5, 6, 0], None, [-1, 1, 1])
    c2 = av.chain('', mir, [1, 0, 0], [4, 4], (0, -1, 0), names=['', '', ''])
    c3 = av.chain('Side', head, [-5, 6, 0], [4, 4], (0, -1, 0), names=['Side', 'Side', 'Side'])
    springs = [{'name': '\u9aea', 'joints': joints_of(c1)}, {'joints': joints_of(c2)},
               {'name': 'Side', 'joints': joints_of(c3, hitRadius=2.0, stiffness=200, dragForce=-1)}]
    cols = [{'node': head, 'shape': {'sphere': {'offset': [0, 5, 0], 'radius': 9}}},
            {'node': hb['chest'], 'shape': {'capsule': {'offset': [-8, 0, 0], 'tail': [8, 0, 0], 'radius': 11}}}]
    ext, used = vrm1_ext(hb, cols, [{'colliders': [0, 1]}], springs)
    for s in springs:
        s['colliderGroups'] = [0]
    return glb(doc_of(av, ext, used))


def vrm_v1_export_quirks():
    """VRM 1.0 with container quirks: JSON padded with NULs, an unknown chunk after BIN,
    bytes after the GLB's declared length, extensionsRequired, a second buffer with a
    data: URI, springBone specVersion "1.0-beta", a collider on node -1, "extras" and an
    unknown extension."""
    av = Avatar()
    hb = body(av)
    head = hb['head']
    hair = av.chain('Hair', head, [0, 0.06, -0.09], [0.05, 0.05, 0.05], (0, -1, 0))
    cols = [{'node': head, 'shape': {'sphere': {'offset': [0, 0.05, 0], 'radius': 0.1}}, 'extras': {'x': 1}},
            {'node': -1, 'shape': {'sphere': {'offset': [0, 0, 0], 'radius': 0.1}}}]
    springs = [{'name': 'Hair', 'colliderGroups': [0], 'joints': joints_of(hair), 'extras': {'tool': 'seed'}}]
    ext, used = vrm1_ext(hb, cols, [{'colliders': [0, 1]}], springs)
    ext['VRMC_springBone']['specVersion'] = '1.0-beta'
    ext['VRMC_materials_mtoon'] = {'unknown': True}
    doc = doc_of(av, ext, used + ['KHR_materials_unlit'])
    doc['extensionsRequired'] = ['VRMC_vrm']
    b = add_mesh(doc, head, doc['scenes'][0]['nodes'])
    doc['buffers'] = [{'byteLength': len(b.data)}, {'byteLength': 4, 'uri': 'data:application/octet-stream;base64,AAAAAA=='}]
    doc['bufferViews'] = b.views + [{'buffer': 1, 'byteOffset': 0, 'byteLength': 4}]
    doc['accessors'] = b.accessors
    return glb(doc, b, declare_bin=False, json_pad=b'\0', trailing=b'\0' * 7,
               extra_chunks=[(0x54584554, b'unknown chunk type')])


def vrm_v1_views_past_buffer0():
    """VRM 1.0 whose skins' inverse-bind-matrix views lie past the byteLength buffer 0
    declares, though inside the BIN chunk (seen in a real VRM 1.0 export; three.js reads
    them from the chunk), plus a mesh nothing references whose view lies outside the
    chunk altogether (nothing reads it, so it cannot reject the file)."""
    av = Avatar()
    hb = body(av)
    head = hb['head']
    hair = av.chain('Hair', head, [0, 0.06, -0.09], [0.05, 0.05, 0.05, 0.05], (0, -1, -0.1))
    doc = doc_of(av, {}, [])
    b = add_mesh(doc, head, doc['scenes'][0]['nodes'])
    declared = len(b.data)  # buffer 0 ends here; both skins' matrices are written after it
    doc['skins'][0]['inverseBindMatrices'] = b.add('f', [[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, -1.4, 0, 1]],
                                                   'MAT4', 5126)
    ibm2 = b.add('f', [[1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, -1.45, 0.09, 1]] * 2, 'MAT4', 5126)
    doc['skins'].append({'joints': [hair[0], hair[1]], 'inverseBindMatrices': ibm2})
    doc['nodes'].append({'name': 'HairMesh', 'mesh': 0, 'skin': 1})
    doc['scenes'][0]['nodes'].append(len(doc['nodes']) - 1)
    b.views.append({'buffer': 0, 'byteOffset': 1 << 20, 'byteLength': 64})
    b.accessors.append({'bufferView': len(b.views) - 1, 'componentType': 5126, 'count': 4, 'type': 'VEC4'})
    doc['meshes'].append({'name': 'Unused', 'primitives': [{'attributes': {'POSITION': len(b.accessors) - 1}}]})
    cols = [{'node': head, 'shape': {'sphere': {'offset': [0, 0.05, 0], 'radius': 0.1}}}]
    springs = [{'name': 'Hair', 'colliderGroups': [0], 'joints': joints_of(hair, hitRadius=0.02)}]
    ext, used = vrm1_ext(hb, cols, [{'colliders': [0]}], springs)
    doc['extensions'], doc['extensionsUsed'] = ext, used
    return glb(doc, b, declared_len=declared)


def vrm_both_versions():
    """A file carrying both VRM 0.x and VRM 1.0 extensions (a converter's output): read as
    1.0, with the 0.x block still there."""
    av = Avatar()
    hb = body(av)
    head = hb['head']
    hair = av.chain('Hair', head, [0, 0.06, -0.09], [0.05, 0.05], (0, -1, 0))
    ext, used = vrm1_ext(hb, [], [], [{'joints': joints_of(hair)}])
    ext['VRM'] = vrm0_ext(hb, [], [{'bones': [hair[0]]}])
    return glb(doc_of(av, ext, used + ['VRM']))


def vrm_json_forms(glb_bytes):
    """The JSON chunk of a GLB, without its mesh (so no buffer needs the BIN chunk), ending
    in a space: fuzz_vrm.c makes it a GLB with a 32-byte BIN chunk."""
    jl = struct.unpack('<I', glb_bytes[12:16])[0]
    doc = json.loads(glb_bytes[20:20 + jl].rstrip(b' \0'))
    for k in ('buffers', 'bufferViews', 'accessors', 'meshes', 'skins', 'materials'):
        doc.pop(k, None)
    doc['nodes'] = [n for n in doc['nodes'] if 'mesh' not in n]
    if 'scenes' in doc:
        doc['scenes'] = [{'nodes': [i for i in s['nodes'] if i < len(doc['nodes'])]} for s in doc['scenes']]
    return (json.dumps(doc, separators=(',', ':'), ensure_ascii=False) + ' ').encode('utf-8')


def vrm_seeds():
    out = {
        'v0_univrm_bin_longer_than_buffer.glb': vrm_v0_univrm(),
        'v0_branching_unicode_names.glb': vrm_v0_branching_unicode(),
        'v0_minimal_no_optional_fields.glb': vrm_v0_minimal_optional(),
        'v0_full_humanoid_body_colliders.glb': vrm_v0_fingers_body_colliders(),
        'v1_several_chains_sphere_capsule.glb': vrm_v1_several_chains(),
        'v1_extended_plane_inside_colliders.glb': vrm_v1_extended_colliders(),
        'v1_angle_limits.glb': vrm_v1_angle_limits(),
        'v1_branching_reused_joints.glb': vrm_v1_branching_reused(),
        'v1_matrix_scale_unicode_names.glb': vrm_v1_unicode_matrix_scale(),
        'v1_container_quirks.glb': vrm_v1_export_quirks(),
        'v1_views_past_buffer0_length.glb': vrm_v1_views_past_buffer0(),
        'v0_and_v1_extensions.glb': vrm_both_versions(),
    }
    # The mutation-friendly JSON forms of a few (see fuzz_vrm.c).
    for name in ('v0_univrm_bin_longer_than_buffer.glb', 'v0_branching_unicode_names.glb',
                 'v1_several_chains_sphere_capsule.glb', 'v1_extended_plane_inside_colliders.glb',
                 'v1_angle_limits.glb', 'v1_branching_reused_joints.glb'):
        out[name[:-4] + '.json'] = vrm_json_forms(out[name])
    for name, data in out.items():
        assert len(data) <= 64 * 1024, name
        write('fuzz_vrm', name, data)
    return sorted(out)


def main(argv):
    which = argv or ['schema', 'vmc', 'vrm']
    for w in which:
        names = {'schema': schema_seeds, 'vmc': vmc_seeds, 'vrm': vrm_seeds}[w]()
        print('fuzz_%s: %d seeds written' % (w, len(names)))


if __name__ == '__main__':
    main(sys.argv[1:])
