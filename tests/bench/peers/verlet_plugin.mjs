// Peer: the web plugin article's ponytail (shared/seeds/ponytail-plugin-article.zh.txt,
// sections 2.2-3.3) written as plain JavaScript the way a web developer would ship it,
// timed on bench_verlet.c's scene so that make bench can say how it compares with ours.
//
// The article's algorithm, unchanged in kind, lifted from 2D to 3D:
//   - a Ponytail class per strand, points as arrays of {x, y, z} objects (the article's
//     positions / prevPositions), the root pinned to its anchor before integrating;
//   - Verlet: v = (pos - prev) * damping; prev = pos; pos += v + g h^2;
//   - `iterations` Gauss-Seidel distance passes, the root segment moving only the child,
//     the others splitting the correction half and half;
//   - then a collision pass pushing points out of the head sphere (the article's
//     headRadius) and of a neck capsule (its "lower exclusion circle" for the neck, 4.1).
// What is matched to bench_verlet.c: 10,000 instances x 3 strands x 12 points, 0.03 m
// segments, anchors (+-0.05, 0.04, -0.11) and (0, 0.09, -0.08) on the head, gravity
// -9.81 m/s^2, damping 0.96 per 1/60 s frame plus the default air drag 2/s (kept-velocity
// factor 0.96^(60h) e^(-2h), as core does), 3 iterations, head sphere r 0.1 and neck
// capsule r 0.05 from (0, -0.08, 0) to (0, -0.2, 0) in head space, point radius 0.005,
// heads shaking +-45 deg at 0.6 s with base x = i % 100 and phase i * 0.01 s, the head
// pose interpolated across substeps (position lerp, rotation nlerp), 60 Hz ticks at 1 and
// 4 substeps, 0.25 s of warm-up, best of REPS (3; the C bench takes 5) repetitions of
// STEPS (30) ticks, setting head poses included (as in bench_verlet.c). What is not: ours also solves exact lengths,
// follow-the-leader contacts, inelastic contact with friction; this does less per point.
//
// Usage: node verlet_plugin.mjs [instances]   prints METRIC lines (peer.js_verlet.*) and
// a sanity line; exits 1 if the simulation went non-finite or lost its shape.
const INSTANCES = Number(process.argv[2]) || 10000;
const STRANDS = 3, POINTS = 12, STEPS = 30, REPS = 3, TICK_HZ = 60;

class Ponytail {
	constructor(options = {}) {
		this.pointCount = options.pointCount ?? 12;
		this.segmentLength = options.segmentLength ?? 0.03;
		this.gravity = options.gravity ?? -9.81;
		this.damping = options.damping ?? 0.96; // per 1/60 s frame
		this.drag = options.drag ?? 2.0; // air resistance, 1/s
		this.iterations = options.iterations ?? 3;
		this.radius = options.radius ?? 0.005;
		this.anchor = options.anchor ?? { x: 0, y: 0, z: 0 }; // head space
		this.root = { x: 0, y: 0, z: 0 }; // world space, set by the avatar
		this.positions = [];
		this.prevPositions = [];
	}

	place(root) {
		this.root.x = root.x, this.root.y = root.y, this.root.z = root.z;
		for (let i = 0; i < this.pointCount; i++) {
			const y = root.y - i * this.segmentLength;
			this.positions.push({ x: root.x, y, z: root.z });
			this.prevPositions.push({ x: root.x, y, z: root.z });
		}
		this.prevPositions[1].x += 1e-4; // the article's nudge
	}

	update(h, colliders) {
		const keep = Math.pow(this.damping, 60 * h) * Math.exp(-this.drag * h);
		const g = this.gravity * h * h;
		const pts = this.positions, prevs = this.prevPositions, n = this.pointCount;
		pts[0].x = this.root.x, pts[0].y = this.root.y, pts[0].z = this.root.z;
		prevs[0].x = this.root.x, prevs[0].y = this.root.y, prevs[0].z = this.root.z;
		for (let i = 1; i < n; i++) {
			const pos = pts[i], prev = prevs[i];
			const vx = (pos.x - prev.x) * keep, vy = (pos.y - prev.y) * keep, vz = (pos.z - prev.z) * keep;
			prev.x = pos.x, prev.y = pos.y, prev.z = pos.z;
			pos.x += vx;
			pos.y += vy + g;
			pos.z += vz;
		}
		for (let iter = 0; iter < this.iterations; iter++) {
			for (let i = 0; i < n - 1; i++) {
				const a = pts[i], b = pts[i + 1];
				const dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
				const dist = Math.sqrt(dx * dx + dy * dy + dz * dz);
				if (dist < 0.0001) continue;
				const diff = (dist - this.segmentLength) / dist;
				if (i === 0) {
					b.x -= dx * diff, b.y -= dy * diff, b.z -= dz * diff;
				} else {
					const ox = dx * diff * 0.5, oy = dy * diff * 0.5, oz = dz * diff * 0.5;
					a.x += ox, a.y += oy, a.z += oz;
					b.x -= ox, b.y -= oy, b.z -= oz;
				}
			}
		}
		for (let i = 1; i < n; i++) {
			const p = pts[i];
			for (const c of colliders) {
				let cx = c.a.x, cy = c.a.y, cz = c.a.z;
				if (c.b) { // capsule: nearest point of the segment a-b
					const sx = c.b.x - cx, sy = c.b.y - cy, sz = c.b.z - cz;
					let t = ((p.x - cx) * sx + (p.y - cy) * sy + (p.z - cz) * sz) / (sx * sx + sy * sy + sz * sz);
					t = Math.max(0, Math.min(1, t));
					cx += sx * t, cy += sy * t, cz += sz * t;
				}
				const dx = p.x - cx, dy = p.y - cy, dz = p.z - cz;
				const dist = Math.sqrt(dx * dx + dy * dy + dz * dz), r = c.radius + this.radius;
				if (dist < r && dist > 0) {
					p.x = cx + dx / dist * r, p.y = cy + dy / dist * r, p.z = cz + dz / dist * r;
				}
			}
		}
	}
}

// Rotates v by the unit quaternion q into out.
function rotate(q, v, out) {
	const tx = 2 * (q.y * v.z - q.z * v.y), ty = 2 * (q.z * v.x - q.x * v.z), tz = 2 * (q.x * v.y - q.y * v.x);
	out.x = v.x + q.w * tx + (q.y * tz - q.z * ty);
	out.y = v.y + q.w * ty + (q.z * tx - q.x * tz);
	out.z = v.z + q.w * tz + (q.x * ty - q.y * tx);
	return out;
}

// core's PT_MOTION_SHAKE: yaw 45 deg * sin(2 pi t / 0.6) about +Y at base (bx, 1.5, 0).
function shakePose(bx, t, out) {
	const yaw = 45 * Math.PI / 180 * Math.sin(2 * Math.PI / 0.6 * t);
	out.p.x = bx, out.p.y = 1.5, out.p.z = 0;
	out.q.x = 0, out.q.y = Math.sin(yaw / 2), out.q.z = 0, out.q.w = Math.cos(yaw / 2);
	return out;
}

class Avatar {
	constructor(bx) {
		this.bx = bx;
		this.prev = { p: { x: 0, y: 0, z: 0 }, q: { x: 0, y: 0, z: 0, w: 1 } };
		this.target = { p: { x: 0, y: 0, z: 0 }, q: { x: 0, y: 0, z: 0, w: 1 } };
		this.pose = { p: { x: 0, y: 0, z: 0 }, q: { x: 0, y: 0, z: 0, w: 1 } };
		const anchors = [{ x: -0.05, y: 0.04, z: -0.11 }, { x: 0.05, y: 0.04, z: -0.11 }, { x: 0, y: 0.09, z: -0.08 }];
		this.tails = anchors.map((anchor) => new Ponytail({ anchor }));
		this.headLocal = [
			{ a: { x: 0, y: 0, z: 0 }, b: null, radius: 0.1 },
			{ a: { x: 0, y: -0.08, z: 0 }, b: { x: 0, y: -0.2, z: 0 }, radius: 0.05 },
		];
		this.colliders = this.headLocal.map((c) => ({ a: { ...c.a }, b: c.b && { ...c.b }, radius: c.radius }));
	}

	setHead(t) {
		const p = this.prev, c = this.target;
		p.p.x = c.p.x, p.p.y = c.p.y, p.p.z = c.p.z;
		p.q.x = c.q.x, p.q.y = c.q.y, p.q.z = c.q.z, p.q.w = c.q.w;
		shakePose(this.bx, t, this.target);
	}

	// Head at fraction s of the tick: lerp / nlerp between the last two poses.
	headAt(s) {
		const a = this.prev, b = this.target, o = this.pose;
		o.p.x = a.p.x + (b.p.x - a.p.x) * s, o.p.y = a.p.y + (b.p.y - a.p.y) * s, o.p.z = a.p.z + (b.p.z - a.p.z) * s;
		const sign = a.q.x * b.q.x + a.q.y * b.q.y + a.q.z * b.q.z + a.q.w * b.q.w < 0 ? -1 : 1;
		let x = a.q.x + (sign * b.q.x - a.q.x) * s, y = a.q.y + (sign * b.q.y - a.q.y) * s;
		let z = a.q.z + (sign * b.q.z - a.q.z) * s, w = a.q.w + (sign * b.q.w - a.q.w) * s;
		const l = Math.hypot(x, y, z, w);
		o.q.x = x / l, o.q.y = y / l, o.q.z = z / l, o.q.w = w / l;
		return o;
	}

	toWorld(head, local, out) {
		rotate(head.q, local, out);
		out.x += head.p.x, out.y += head.p.y, out.z += head.p.z;
		return out;
	}

	update(dt, substeps) {
		const h = dt / substeps;
		for (let s = 1; s <= substeps; s++) {
			const head = this.headAt(s / substeps);
			for (let c = 0; c < this.colliders.length; c++) {
				this.toWorld(head, this.headLocal[c].a, this.colliders[c].a);
				if (this.colliders[c].b) this.toWorld(head, this.headLocal[c].b, this.colliders[c].b);
			}
			for (const tail of this.tails) {
				this.toWorld(head, tail.anchor, tail.root);
				tail.update(h, this.colliders);
			}
		}
	}
}

function scene(n) {
	const avatars = [];
	for (let i = 0; i < n; i++) {
		const a = new Avatar(i % 100);
		a.setHead(0), a.setHead(0);
		for (const tail of a.tails) tail.place(a.toWorld(a.target, tail.anchor, { x: 0, y: 0, z: 0 }));
		avatars.push(a);
	}
	// warm-up: core prewarms 0.25 s at 60 Hz x 4 with the head still
	for (let k = 0; k < 15; k++) for (const a of avatars) a.update(1 / TICK_HZ, 4);
	return avatars;
}

// Best ns per point-substep over REPS runs of STEPS ticks at `substeps`.
function run(n, substeps) {
	const avatars = scene(n);
	let best = Infinity, tick = 0;
	for (let r = 0; r < REPS; r++) {
		const t0 = process.hrtime.bigint();
		for (let s = 0; s < STEPS; s++, tick++) {
			for (let i = 0; i < n; i++) avatars[i].setHead(tick / TICK_HZ + i * 0.01);
			for (let i = 0; i < n; i++) avatars[i].update(1 / TICK_HZ, substeps);
		}
		best = Math.min(best, Number(process.hrtime.bigint() - t0));
	}
	return { ns: best / (n * STRANDS * POINTS * STEPS * substeps), avatars };
}

// Sanity: every coordinate finite, no segment more than 50 % off its length (the article's
// soft passes do stretch: the sanity line prints by how much).
function check(avatars) {
	let worst = 0, bad = 0;
	for (const a of avatars)
		for (const tail of a.tails)
			for (let i = 1; i < tail.pointCount; i++) {
				const p = tail.positions[i], q = tail.positions[i - 1];
				if (![p.x, p.y, p.z].every(Number.isFinite)) bad++;
				worst = Math.max(worst, Math.abs(Math.hypot(p.x - q.x, p.y - q.y, p.z - q.z) / tail.segmentLength - 1));
			}
	return { worst, bad };
}

const one = run(INSTANCES, 1), four = run(INSTANCES, 4);
const c1 = check(one.avatars), c4 = check(four.avatars);
console.log(`js verlet peer (node ${process.version}): ${INSTANCES} instances x ${STRANDS} x ${POINTS}; ` +
	`largest segment error ${(100 * c1.worst).toFixed(1)} % (1 substep), ${(100 * c4.worst).toFixed(1)} % (4); ` +
	`${c1.bad + c4.bad} non-finite`);
console.log(`METRIC peer.js_verlet.ns_per_point_substep ${one.ns.toFixed(3)} ns the plugin article's algorithm in plain JS, bench_verlet's scene, 1 substep`);
console.log(`METRIC peer.js_verlet.ns_per_point_substep_x4 ${four.ns.toFixed(3)} ns same, 4 substeps`);
if (c1.bad + c4.bad > 0 || c1.worst > 0.5 || c4.worst > 0.5) {
	console.error("verlet_plugin: the peer's simulation lost its shape; its timing would mean nothing");
	process.exit(1);
}
