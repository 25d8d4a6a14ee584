// Peer: @pixiv/three-vrm's spring bone (VRMSpringBoneManager / VRMSpringBoneJoint, the
// version pinned in tests/bench/package-lock.json) on plain three.js Object3D chains, no
// renderer, timed on bench_springbone.c's scene so that make bench can say how it compares.
//
// Matched to bench_springbone.c (sb_def_avatar): 1,000 avatars x 4 chains x 12 joints; per
// chain a root bone at (ax, 0.05, -0.1) on the head (ax = -0.06, -0.02, 0.02, 0.06) and 12
// bones of 0.025 m along normalize(ax, -1, -0.3); joints with stiffness 1, drag 0.4,
// gravity power 0.3 down, hit radius 0.02; a head sphere (r 0.1) and a neck capsule (r 0.05,
// (0, -0.08, 0) to (0, -0.2, 0)) as VRMSpringBoneColliders under the head, in one collider
// group every joint uses; heads at (0.5 (i % 40), 1.5, 0.5 floor(i / 40)) shaking +-45 deg
// at 0.6 s with phase 0.013 i s; 60 Hz, one update per tick (three-vrm has no substeps);
// WARMUP ticks, then the best of REPS runs of STEPS ticks. As in the C bench only the
// solver is timed: the heads' position and quaternion are set outside the clock, and
// manager.update(dt) (which updates the head's and colliders' world matrices) inside it.
// One manager per avatar, as a VRM has. Each head has no parent: a real VRM's bone
// hierarchy above the head would only add to three-vrm's time.
//
// Usage: node springbone_threevrm.mjs [avatars]   prints METRIC lines
// (peer.threevrm_springbone.*) and a sanity line; exits 1 if the chains misbehave.
import * as THREE from "three";
import {
	VRMSpringBoneCollider,
	VRMSpringBoneColliderShapeCapsule,
	VRMSpringBoneColliderShapeSphere,
	VRMSpringBoneJoint,
	VRMSpringBoneManager,
} from "@pixiv/three-vrm";

const AVATARS = Number(process.argv[2]) || 1000;
const CHAINS = 4, JOINTS = 12, SEG = 0.025, WARMUP = 60, STEPS = 60, REPS = 3, TICK_HZ = 60;
const AX = [-0.06, -0.02, 0.02, 0.06];

function avatar() {
	const head = new THREE.Object3D();
	const sphere = new VRMSpringBoneCollider(new VRMSpringBoneColliderShapeSphere({ radius: 0.1 }));
	const capsule = new VRMSpringBoneCollider(new VRMSpringBoneColliderShapeCapsule({
		offset: new THREE.Vector3(0, -0.08, 0), tail: new THREE.Vector3(0, -0.2, 0), radius: 0.05,
	}));
	head.add(sphere, capsule);
	const group = { colliders: [sphere, capsule], name: "head" };
	const manager = new VRMSpringBoneManager();
	const chains = [];
	for (const ax of AX) {
		const dir = new THREE.Vector3(ax, -1, -0.3).normalize();
		const bones = [new THREE.Object3D()];
		bones[0].position.set(ax, 0.05, -0.1);
		head.add(bones[0]);
		for (let j = 1; j <= JOINTS; j++) {
			const b = new THREE.Object3D();
			b.position.copy(dir).multiplyScalar(SEG);
			bones[j - 1].add(b);
			bones.push(b);
		}
		for (let j = 0; j < JOINTS; j++)
			manager.addJoint(new VRMSpringBoneJoint(bones[j], bones[j + 1], {
				hitRadius: 0.02, stiffness: 1.0, dragForce: 0.4, gravityPower: 0.3,
				gravityDir: new THREE.Vector3(0, -1, 0),
			}, [group]));
		chains.push(bones);
	}
	return { head, manager, chains };
}

const yawAxis = new THREE.Vector3(0, 1, 0);
function setHeads(avatars, tick) {
	for (let i = 0; i < avatars.length; i++) {
		const t = tick / TICK_HZ + 0.013 * i;
		const yaw = 45 * Math.PI / 180 * Math.sin(2 * Math.PI / 0.6 * t);
		avatars[i].head.position.set(0.5 * (i % 40), 1.5, 0.5 * Math.floor(i / 40));
		avatars[i].head.quaternion.setFromAxisAngle(yawAxis, yaw);
	}
}

const avatars = [];
for (let i = 0; i < AVATARS; i++) avatars.push(avatar());
setHeads(avatars, 0);
for (const a of avatars) {
	a.head.updateMatrixWorld(true);
	a.manager.setInitState();
}
let tick = 0;
for (; tick < WARMUP; tick++) {
	setHeads(avatars, tick);
	for (const a of avatars) a.manager.update(1 / TICK_HZ);
}
let best = Infinity;
for (let r = 0; r < REPS; r++) {
	let el = 0n;
	for (let k = 0; k < STEPS; k++, tick++) {
		setHeads(avatars, tick);
		const t0 = process.hrtime.bigint();
		for (let i = 0; i < avatars.length; i++) avatars[i].manager.update(1 / TICK_HZ);
		el += process.hrtime.bigint() - t0;
	}
	best = Math.min(best, Number(el));
}
const ns = best / STEPS / (AVATARS * CHAINS * JOINTS);

// Sanity: bones keep their 0.025 m (three-vrm re-normalises every tail), the tips have left
// their rest positions (the solver ran), nothing non-finite.
let lenErr = 0, moved = 0, bad = 0;
const p = new THREE.Vector3(), q = new THREE.Vector3(), rest = new THREE.Vector3();
for (const a of avatars)
	for (const bones of a.chains) {
		for (let j = 1; j <= JOINTS; j++) {
			bones[j].getWorldPosition(p), bones[j - 1].getWorldPosition(q);
			if (![p.x, p.y, p.z].every(Number.isFinite)) bad++;
			lenErr = Math.max(lenErr, Math.abs(p.distanceTo(q) - SEG) / SEG);
		}
		const ax = bones[0].position.x;
		rest.set(ax, -1, -0.3).normalize().multiplyScalar(SEG * JOINTS).add(bones[0].position);
		a.head.localToWorld(rest);
		moved += bones[JOINTS].getWorldPosition(p).distanceTo(rest) > 0.01;
	}
const chains = AVATARS * CHAINS;
console.log(`three-vrm spring bone peer (@pixiv/three-vrm, three r${THREE.REVISION}, node ${process.version}): ` +
	`${AVATARS} avatars x ${CHAINS} x ${JOINTS}, ${(best / STEPS / 1e6).toFixed(2)} ms per tick; largest bone-length ` +
	`error ${(100 * lenErr).toFixed(4)} %, ${moved} of ${chains} tips off rest by > 1 cm, ${bad} non-finite`);
console.log(`METRIC peer.threevrm_springbone.ns_per_joint_substep ${ns.toFixed(2)} ns @pixiv/three-vrm's ` +
	`VRMSpringBoneManager on Object3D chains, bench_springbone's scene, one update per 1/60 s tick`);
if (bad > 0 || lenErr > 1e-3 || moved < chains / 2) {
	console.error("springbone_threevrm: the peer's chains misbehaved; its timing would mean nothing");
	process.exit(1);
}
