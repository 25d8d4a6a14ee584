// The rigid part of MediaPipe's canonical face model: the vertices of
// mediapipe/modules/face_geometry/data/canonical_face_model.obj (Apache License 2.0, the
// MediaPipe authors) at the Face Mesh landmark indices the head-pose solver fits. The model
// is in centimetres, right-handed, +Y up, +Z out of the face, +X toward the subject's left:
// exactly our head-local frame (core/README.md "Units and axes"), so its rotation is the head's.
//
// Chosen to be rigid and spread out: forehead and nose bridge, nose tip and wings, eye
// corners, cheekbones and the sides of the face by the ears. Lips, jaw and brows move with
// expressions and are left out. The model is mirror-symmetric; the pairs are
// 33/263, 133/362, 50/280, 98/327, 116/345, 127/356, 234/454.
export const FACE_POINTS = Object.freeze({
  1: [0, -1.126865, 7.475604], // nose tip
  6: [0, 2.473255, 5.788627], // nose bridge
  9: [0, 4.885979, 5.385258], // between the brows
  10: [0, 8.261778, 4.481535], // top of the forehead
  151: [0, 6.54539, 5.027311], // forehead
  168: [0, 3.271027, 5.236015], // top of the nose bridge
  33: [-4.445859, 2.663991, 3.173422], // right eye, outer corner
  263: [4.445859, 2.663991, 3.173422], // left eye, outer corner
  133: [-1.856432, 2.585245, 3.757904], // right eye, inner corner
  362: [1.856432, 2.585245, 3.757904], // left eye, inner corner
  50: [-4.765501, -0.701554, 3.534632], // right cheekbone
  280: [4.765501, -0.701554, 3.534632], // left cheekbone
  98: [-1.405627, -1.714196, 5.241087], // right nose wing
  327: [1.405627, -1.714196, 5.241087], // left nose wing
  116: [-6.46517, 0.937119, 1.689873], // right cheek, outer
  345: [6.46517, 0.937119, 1.689873], // left cheek, outer
  127: [-7.743095, 2.364999, -2.005167], // right side, by the ear
  356: [7.743095, 2.364999, -2.005167], // left side, by the ear
  234: [-7.664182, 0.673132, -2.435867], // right side, lower
  454: [7.664182, 0.673132, -2.435867], // left side, lower
});

export const FACE_INDICES = Object.freeze(Object.keys(FACE_POINTS).map(Number));
