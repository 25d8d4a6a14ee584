// The definition of an instance this page creates: a three-strand ponytail on a head
// ellipsoid with a neck (core/SCHEMA.md).
export function ownDefinition(room, name) {
  const strand = (dx, dy, dz, ddx) => ({
    anchor: [dx, 0.075 + dy, -0.092 + dz], direction: [ddx, -0.35, -1], points: 12, segment_length: 0.027,
  });
  return {
    name, room, solver: 'verlet', prewarm_s: 0.5,
    verlet: { damping: 0.96, iterations: 4 },
    strands: [strand(0, 0, 0, 0), strand(0.014, -0.008, 0.002, 0.12), strand(-0.014, -0.008, 0.002, -0.12)],
    colliders: [
      { shape: 'ellipsoid', attach: 'head', center: [0, 0, 0], radii: [0.082, 0.105, 0.098] },
      { shape: 'capsule', attach: 'head', a: [0, -0.07, -0.012], b: [0, -0.22, -0.02], radius: 0.046, radius_b: 0.052 },
    ],
  };
}
