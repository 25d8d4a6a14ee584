// @pixiv/three-vrm's spring bones driving a .vrm file in node, no renderer: the peer that
// tests/vrm/threevrm_parity.test.sh compares `ponytail import-vrm` + `ponytail sim` with.
// three and @pixiv/three-vrm are the versions tests/bench/package-lock.json pins (installed
// by tests/bench/npm-deps.sh, which tests/setup.sh runs).
//
// The file is parsed with GLTFLoader + VRMLoaderPlugin (which calls setInitState on the
// spring bones in the rest pose). Tick k (t = k / 60 s) sets every humanoid bone's local
// rotation and the hips' local position to the motion below at t, then calls
// vrm.springBoneManager.update(1 / 60) once (what vrm.update does for the spring bones; the
// raw bones are posed directly, so the humanoid's normalized-to-raw copy is not used), then
// reads the world poses. The motion is exactly the rest pose at t = 0 (every term is a
// sine or 1 - cos), so tick 0 starts from the state the loader set, as an instance created
// at poses[0] does. The motion turns, bends and swings: hips translating (8, 3, 6 cm) and
// turning (35 deg yaw, 8 deg pitch), spine / chest / upper chest bending and twisting (15,
// 10, 12 deg), neck and head turning (15 + 30 deg) and nodding (20 deg), upper arms lowered
// up to 70 deg and swinging 30 deg, forearms bending up to 40 deg, legs swinging 20 deg.
//
// Usage: node threevrm_drive.mjs AVATAR.vrm FRAMES POSES.jsonl
//   stdout, one JSON line per tick: {"tick": k, "head": {"p", "q"}, "bones": {name:
//   {"p", "q"}} (every humanoid bone, VRM snake_case names), "joints": {node name: [x, y, z]}
//   (every spring joint's node, root to tip, world metres)}.
//   POSES.jsonl: the same ticks as `ponytail sim --poses` lines: {"tick", "p", "q"} of the
//   head and "bones" of the humanoid bones a spring chain or a collider hangs from (the
//   nearest humanoid ancestor of each chain's root node and of each collider's node).
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const mods = fileURLToPath(new URL("../bench/node_modules/", import.meta.url));
const load = (p) => import(pathToFileURL(mods + p).href);
const THREE = await load("three/build/three.module.js");
const { GLTFLoader } = await load("three/examples/jsm/loaders/GLTFLoader.js");
const { VRMLoaderPlugin } = await load("@pixiv/three-vrm/lib/three-vrm.module.js");

const [file, framesArg, posesOut] = process.argv.slice(2);
const FRAMES = Number(framesArg);
if (!file || !posesOut || !(FRAMES >= 1 && FRAMES <= 100000)) {
	console.error("usage: threevrm_drive.mjs AVATAR.vrm FRAMES(1..100000) POSES.jsonl");
	process.exit(2);
}
const buf = readFileSync(file);
const gltf = await new Promise((ok, fail) => {
	const loader = new GLTFLoader();
	loader.register((parser) => new VRMLoaderPlugin(parser));
	loader.parse(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength), "", ok, fail);
});
const vrm = gltf.userData.vrm;
if (!vrm || !vrm.springBoneManager) {
	console.error(`${file}: three-vrm found no VRM / spring bones`);
	process.exit(1);
}
const HZ = 60;
const deg = Math.PI / 180;
const bone = (name) => vrm.humanoid.getRawBoneNode(name);
const names = Object.keys(vrm.humanoid.humanBones).filter((n) => bone(n));
const snake = (n) => n.replace(/[A-Z]/g, (c) => "_" + c.toLowerCase());
const restPos = new Map(names.map((n) => [n, bone(n).position.clone()]));
const restRot = new Map(names.map((n) => [n, bone(n).quaternion.clone()]));

const euler = new THREE.Euler(), dq = new THREE.Quaternion();
function rotate(name, x, y, z) { // local rotation = rest * R(x, y, z), degrees, order XYZ
	const b = bone(name);
	if (!b) return;
	dq.setFromEuler(euler.set(x * deg, y * deg, z * deg, "XYZ"));
	b.quaternion.copy(restRot.get(name)).multiply(dq);
}
const S = (t, a, period) => a * Math.sin(2 * Math.PI * t / period);
const C = (t, a, period) => a * (1 - Math.cos(2 * Math.PI * t / period)) / 2; // 0 at t = 0

function pose(t) {
	const hips = bone("hips");
	hips.position.copy(restPos.get("hips")).add(new THREE.Vector3(S(t, 0.08, 2.2), S(t, 0.03, 0.7), S(t, 0.06, 1.7)));
	rotate("hips", S(t, 8, 1.1), S(t, 35, 1.9), 0);
	rotate("spine", S(t, 15, 1.3), 0, 0);
	rotate("chest", 0, 0, S(t, 10, 1.7));
	rotate("upperChest", 0, S(t, 12, 1.5), 0);
	rotate("neck", 0, S(t, 15, 1.1), 0);
	rotate("head", S(t, 20, 1.25), S(t, 30, 0.9), 0);
	for (const [side, s] of [["left", 1], ["right", -1]]) {
		rotate(side + "UpperArm", 0, s * S(t, 30, 0.8), -s * C(t, 70, 1.6));
		rotate(side + "LowerArm", 0, -s * C(t, 40, 1.0), 0);
		rotate(side + "UpperLeg", s * S(t, 20, 1.0), 0, 0);
	}
}

// the humanoid bones a chain or collider hangs from: the nearest humanoid ancestor
const byNode = new Map(names.map((n) => [bone(n), n]));
const humanOf = (o) => { for (; o; o = o.parent) if (byNode.has(o)) return byNode.get(o); return null; };
const joints = [...vrm.springBoneManager.joints];
const posed = new Set();
for (const j of joints) posed.add(humanOf(j.bone.parent));
for (const c of vrm.springBoneManager.colliders) posed.add(humanOf(c.parent));
posed.delete("head");
posed.delete(null);
// every spring joint's node and the tip nodes (a joint's child that is no joint itself)
const jointNodes = new Set();
for (const j of joints) { jointNodes.add(j.bone); if (j.child) jointNodes.add(j.child); }

const p = new THREE.Vector3(), q = new THREE.Quaternion();
const r = (x) => Math.round(x * 1e9) / 1e9;
const pq = (o) => { o.getWorldPosition(p); o.getWorldQuaternion(q); return { p: [p.x, p.y, p.z].map(r), q: [q.x, q.y, q.z, q.w].map(r) }; };
const poseLines = [];
const out = [];
for (let k = 0; k < FRAMES; k++) {
	pose(k / HZ);
	vrm.springBoneManager.update(1 / HZ);
	vrm.scene.updateMatrixWorld(true); // what a render would do; changes no spring state
	const head = pq(bone("head"));
	const bones = {};
	for (const n of names) bones[snake(n)] = pq(bone(n));
	const js = {};
	for (const o of jointNodes) { o.getWorldPosition(p); js[o.name] = [p.x, p.y, p.z].map(r); }
	out.push(JSON.stringify({ tick: k, head, bones, joints: js }));
	const pb = {};
	for (const n of [...posed].sort()) pb[snake(n)] = bones[snake(n)];
	poseLines.push(JSON.stringify({ tick: k, p: head.p, q: head.q, bones: pb }));
}
writeFileSync(posesOut, poseLines.join("\n") + "\n");
process.stdout.write(out.join("\n") + "\n");
