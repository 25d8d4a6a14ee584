// One avatar (a three-vrm VRM) driven by the server: its head (and, a quarter of the turn,
// its chest) from the frame's head pose, the bones of every spring chain (hair, skirt,
// sleeves, a branch hanging from another chain) from the frame's points through
// jointRotations (proto/js/joints.mjs). three-vrm's own spring bones never run: the page
// never calls vrm.update() (which is where they would step) and drops the manager.
//
// Frames: the server's world is this scene's world. A strand's rest points are head-local
// (the importer's frame: the head bone's rest axes, VRM 0.x turned 180° about Y so that the
// face looks +Z, as three-vrm's rotateVRM0 turns the model); C below maps head-local axes
// onto the head bone's own: identity for VRM 1.0, a half turn about Y for 0.x. So a frame
// with head (p, q) puts the head bone at p with world rotation q * C^-1, and the instance's
// q is the head bone's world rotation times C.
//
// Bones: point i of strand s is the node named bones[s].joints[i] (GET /v1/instances/{id}
// "bones"; "" for a point without a bone, as a VRM 0.x virtual tail). Joint i's rotation
// L_i from jointRotations is local to a chain whose rest rotations are all the identity in
// the frame of the root's parent P; a glTF chain has rest rotations I_i, so node i gets
// I_i * (C_i^-1 L_i C_i) with C_i = I_0 ... I_i (joints.mjs). The root bone is put on
// point 0 (where its parent holds it when page and server pose the body alike). Then every
// bone sits on its point of the frame. Chains are posed roots first, so that a branch
// reads its parent joint after that joint has moved.
//
// Body bones (protocol 1.2): besides the head the page moves the hips (the whole avatar
// follows the head) and turns the chest (upper chest when the model has one); the
// children of those follow them rigidly. bodyBones() gives both as a head_pose's bones:
// world position, and rotation in the importer's convention (a bone's rest rotation is
// the head's rest axes, core/SCHEMA.md "Body bones"): its turn from rest, then the head's
// rest q, as the head's own q is its turn from rest times its rest q.

import * as THREE from 'three';
import { BONE_NAMES, jointRotations } from '../../../proto/js/ponytail-proto.mjs';

const HALF_TURN_Y = new THREE.Quaternion(0, 1, 0, 0);
const CHEST_SHARE = 0.25; // of the head's turn away from rest that the chest takes

// glTF node name -> the Object3D three's GLTFLoader made of it (names are sanitised by
// three, so the exact name comes from the file's JSON through the parser's associations).
export function nodesByName(gltf) {
  const json = gltf.parser.json;
  const out = new Map();
  for (const [obj, assoc] of gltf.parser.associations) {
    if (!obj?.isObject3D || assoc?.nodes === undefined) continue;
    const name = json.nodes?.[assoc.nodes]?.name;
    if (name === undefined) continue;
    const had = out.get(name);
    if (!had || (obj.isBone && !had.isBone)) out.set(name, obj);
  }
  return out;
}

const v3 = (a) => new THREE.Vector3(a[0], a[1], a[2]);

function depthOf(o) {
  let d = 0;
  for (let p = o.parent; p; p = p.parent) d++;
  return d;
}

export class AvatarRig {
  // vrm: from VRMLoaderPlugin (VRM 0.x already turned by VRMUtils.rotateVRM0); gltf: the
  // loader's result (for node names); bones: the instance's "bones".
  constructor(vrm, gltf, bones) {
    this.vrm = vrm;
    this.root = vrm.scene;
    this.v0 = vrm.meta?.metaVersion === '0';
    this.C = this.v0 ? HALF_TURN_Y.clone() : new THREE.Quaternion();
    this.Cinv = this.C.clone().invert();
    // three-vrm's spring bones stay off: nothing may step them. Its joints took their
    // bones' matrices over (matrixAutoUpdate = false); give them back to three.js.
    for (const j of vrm.springBoneManager?.joints ?? []) j.bone.matrixAutoUpdate = true;
    vrm.springBoneManager = undefined;
    const hum = vrm.humanoid;
    this.head = hum.getRawBoneNode('head');
    this.chest = hum.getRawBoneNode('upperChest') ?? hum.getRawBoneNode('chest');
    this.hips = hum.getRawBoneNode('hips');
    if (!this.head) throw new Error('the avatar has no head bone');
    this.root.updateMatrixWorld(true);
    this.rootRestPos = this.root.position.clone();
    this.headRestPos = this.head.getWorldPosition(new THREE.Vector3());
    this.headRestQ = this.head.getWorldQuaternion(new THREE.Quaternion());
    this.headRestLocal = this.head.quaternion.clone();
    this.chestRestLocal = this.chest?.quaternion.clone();
    this.chestRestQ = this.chest?.getWorldQuaternion(new THREE.Quaternion());
    // the body bones this rig moves: [protocol id, node, rest world rotation]
    this.driven = [
      ['hips', this.hips],
      [hum.getRawBoneNode('upperChest') ? 'upper_chest' : 'chest', this.chest],
    ].filter(([, n]) => n).map(([name, n]) => [BONE_NAMES.indexOf(name), n, n.getWorldQuaternion(new THREE.Quaternion())]);
    this.problems = [];
    this.points = bones.map((b) => b.rest.length); // per strand, as the frames carry them
    const byName = nodesByName(gltf);
    this.strands = bones.map((b, s) => this.chain(byName, b, s));
    // Posed root first: a chain hanging from another chain's joint (a branch) after that
    // chain. Its root lies deeper in the node tree than the root of any chain it hangs
    // from, so the order of the roots' depths is such an order.
    const offsets = [];
    bones.reduce((off, b) => (offsets.push(off), off + b.rest.length), 0);
    this.order = this.strands.map((st, s) => ({ st, off: offsets[s], depth: st ? depthOf(st.objs[0]) : 0 }))
      .filter((e) => e.st).sort((a, b) => a.depth - b.depth);
    this.rootShift = 0; // m: how far the last frame moved a chain's root off its parent's place
  }

  // The head pose an instance of this avatar is at rest with: {p, q}.
  restPose() {
    const q = this.headRestQ.clone().multiply(this.C);
    return { p: this.headRestPos.toArray(), q: [q.x, q.y, q.z, q.w] };
  }

  // Head-local point -> world, for the avatar at rest.
  restWorld(x) {
    return v3(x).applyQuaternion(this.C).applyQuaternion(this.headRestQ).add(this.headRestPos);
  }

  chain(byName, b, s) {
    const names = b.joints ?? [];
    const objs = names.map((n) => (n ? byName.get(n) ?? null : null));
    const n = b.rest.length;
    // drivable joints: from the root while each bone has a node whose parent is the last
    let count = 0;
    while (count < n - 1 && objs[count] && (count === 0 || objs[count].parent === objs[count - 1])) count++;
    if (!objs[0]) {
      this.problems.push(`strand ${s}: no bone named "${names[0] ?? ''}"`);
      return null;
    }
    const P = objs[0].parent;
    const Pinv = P.matrixWorld.clone().invert();
    const rest = b.rest.map((x) => this.restWorld(x).applyMatrix4(Pinv).toArray());
    // the file's skeleton and the instance's rest shape must agree
    for (let i = 0; i < n; i++) {
      if (!objs[i]) continue;
      const d = objs[i].getWorldPosition(new THREE.Vector3()).distanceTo(this.restWorld(b.rest[i]));
      if (d > 1e-3) this.problems.push(`strand ${s} point ${i} ("${names[i]}"): the bone is ${(d * 1000).toFixed(1)} mm from the instance's rest point`);
    }
    for (const o of objs) if (o) o.matrixAutoUpdate = true;
    const I = objs.slice(0, count).map((o) => o.quaternion.clone());
    const Ccum = [];
    const acc = new THREE.Quaternion();
    for (const q of I) Ccum.push(acc.multiply(q).clone());
    return { objs, count, P, rest, I, Ccum, n, rootRest: objs[0].position.clone() };
  }

  // Puts the avatar where frame record rec says: rec = {pts: flat xyz of every strand,
  // headP, headQ}.
  apply(rec) {
    this.body(rec.headP, rec.headQ);
    this.root.updateMatrixWorld(true);
    this.rootShift = 0;
    for (const { st, off } of this.order) if (st) this.chainPose(st, rec.pts.subarray(off * 3, (off + st.n) * 3));
    this.root.updateMatrixWorld(true);
  }

  // The body bones this rig moves for head pose (p, q), as head_pose bones [{bone, p, q}]
  // (see the top). The avatar is left as it was.
  bodyBones(p, q) {
    const saved = [this.root.position.clone(), this.head.quaternion.clone(), this.chest?.quaternion.clone()];
    this.body(p, q);
    const headRest = this.headRestQ.clone().multiply(this.C);
    const out = this.driven.map(([bone, n, restQ]) => {
      const turn = n.getWorldQuaternion(new THREE.Quaternion()).multiply(restQ.clone().invert());
      const bq = turn.multiply(headRest);
      return { bone, p: n.getWorldPosition(new THREE.Vector3()).toArray(), q: [bq.x, bq.y, bq.z, bq.w] };
    });
    this.root.position.copy(saved[0]);
    this.head.quaternion.copy(saved[1]);
    if (this.chest) this.chest.quaternion.copy(saved[2]);
    this.root.updateMatrixWorld(true);
    return out;
  }

  // The head at (headP, headQ), the chest turned with it, the whole avatar moved along.
  body(headP, headQv) {
    const q = new THREE.Quaternion(headQv[0], headQv[1], headQv[2], headQv[3]).normalize();
    const headWorld = q.clone().multiply(this.Cinv); // the head bone's world rotation
    // the chest takes a share of the head's turn from rest (in the world), the head the rest
    this.root.position.copy(this.rootRestPos);
    this.head.quaternion.copy(this.headRestLocal);
    if (this.chest) {
      const turn = headWorld.clone().multiply(this.headRestQ.clone().invert());
      const share = new THREE.Quaternion().slerp(turn, CHEST_SHARE);
      const want = share.multiply(this.chestRestQ);
      this.chest.quaternion.copy(this.chestRestLocal);
      this.root.updateMatrixWorld(true);
      const parentQ = this.chest.parent.getWorldQuaternion(new THREE.Quaternion());
      this.chest.quaternion.copy(parentQ.invert().multiply(want));
    }
    this.root.updateMatrixWorld(true);
    const hp = this.head.parent.getWorldQuaternion(new THREE.Quaternion());
    this.head.quaternion.copy(hp.invert().multiply(headWorld));
    this.root.updateMatrixWorld(true);
    // then the whole avatar moves so that the head bone is at p
    const at = this.head.getWorldPosition(new THREE.Vector3());
    this.root.position.add(v3(headP).sub(at));
    this.root.updateMatrixWorld(true);
  }

  // One chain, any chain (hair, skirt, sleeve, a branch): its root bone on the frame's
  // point 0, then its joints' rotations from the points. The root is already there when
  // the page and the server pose the body the same way (rootShift 0); where they do not
  // (a daemon that hangs a body chain from the head, say), the chain follows the server.
  chainPose(st, pts) {
    st.P.updateWorldMatrix(true, false);
    const root = st.objs[0];
    root.position.copy(st.rootRest);
    const was = root.getWorldPosition(new THREE.Vector3());
    const at = new THREE.Vector3(pts[0], pts[1], pts[2]);
    this.rootShift = Math.max(this.rootShift, was.distanceTo(at));
    root.position.copy(st.P.worldToLocal(at));
    const Pq = st.P.getWorldQuaternion(new THREE.Quaternion());
    const L = jointRotations(st.rest, pts, [Pq.x, Pq.y, Pq.z, Pq.w]);
    for (let i = 0; i < st.count; i++) {
      const Li = new THREE.Quaternion(L[i][0], L[i][1], L[i][2], L[i][3]);
      const Ci = st.Ccum[i];
      const local = st.I[i].clone().multiply(Ci.clone().invert().multiply(Li).multiply(Ci));
      st.objs[i].quaternion.copy(local);
    }
  }

  // World positions of every strand's bones now ([[x, y, z] | null per point], per strand;
  // all null for a strand with no bone in the file):
  // what the browser test compares with the server's points.
  bonePositions() {
    this.root.updateMatrixWorld(true);
    return this.strands.map((st, s) => (st ? st.objs.map((o) => (o ? o.getWorldPosition(new THREE.Vector3()).toArray() : null)) : Array(this.points[s]).fill(null)));
  }
}
