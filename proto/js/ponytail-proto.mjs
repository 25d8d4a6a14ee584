// Ponytail wire protocol, JavaScript side: byte-compatible with the C library in proto/src
// (proto/PROTOCOL.md is the contract, proto/vectors/ the shared test cases). An ES module
// without dependencies, for browsers and node >= 18.
//
//   import { decodeMessage, StrandDecoder } from './ponytail-proto.mjs';
//   const msg = decodeMessage(new Uint8Array(event.data));
//   if (msg.type === 'frame_batch')
//     for (const rec of msg.records) points = decoders.get(rec.id).apply(msg.tick, rec);
//
// jointRotations(restPoints, points, parentRotation) turns a strand's points into the
// local rotations of a skinned hair chain's bones (joints.mjs).

export * from './wire.mjs';
export * from './msg.mjs';
export * from './strand.mjs';
export { jointRotations } from './joints.mjs';
export * from './compact.mjs';
