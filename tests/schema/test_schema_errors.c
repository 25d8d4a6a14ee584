/* Bad input: every invalid field of the schema yields an error naming it.
 *
 * One table, one row per way to get a field wrong (type, range, enum, array length,
 * unknown key, missing required key), at every level of the schema. Snippets use ' for "
 * to stay readable. Range rows exercise core's pt_instance_validate() through the
 * binding, so they also check that its field names come back as JSON paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>

#include "schema_test.h"

#define A16 "aaaaaaaaaaaaaaaa"
#define A64 A16 A16 A16 A16
#define SB "'solver': 'springbone', "
#define SB4 SB "'strands': [{'points': 4, 'springbone': "
#define SPH "{'shape': 'sphere', 'radius': 0.1"
#define BONE "{'position': [0, -0.3, 0.05], 'rotation': [0, 0, 0, 1]}"
/* 129 and 257 empty objects: one past PT_MAX_COLLIDERS and PT_MAX_STRANDS */
#define S8 "{},{},{},{},{},{},{},{},"
#define S64 S8 S8 S8 S8 S8 S8 S8 S8
#define S129 S64 S64 "{}"
#define S257 S64 S64 S64 S64 "{}"

static const struct row {
	const char *json;  /* ' stands for " */
	const char *field; /* expected err.field */
	const char *says;  /* expected in err.message */
} rows[] = {
    /* the document */
    {"[]", "", "expected an object"},
    {"{'foo': 1}", "foo", "unknown field"},
    {"{'nmae': 'x'}", "nmae", "did you mean \"name\""},
    /* name, room, solver, substeps, prewarm_s, gravity */
    {"{'name': 5}", "name", "expected a string"},
    {"{'name': '" A64 "'}", "name", "at most 63 bytes"},
    {"{'room': ['lobby']}", "room", "expected a string"},
    {"{'room': '" A64 "'}", "room", "at most 63 bytes"},
    {"{'room': 'lob by'}", "room", "A-Z a-z 0-9"},
    {"{'room': 'caf\\u00e9'}", "room", "A-Z a-z 0-9"},
    {"{'solver': 'euler'}", "solver", "\"verlet\", \"springbone\""},
    {"{'solver': 1}", "solver", "expected one of"},
    {"{'substeps': '4'}", "substeps", "expected an integer"},
    {"{'substeps': 4.5}", "substeps", "expected an integer"},
    {"{'substeps': 17}", "substeps", "[0, 16]"},
    {"{'substeps': -1}", "substeps", "[0, 16]"},
    {"{'substeps': 1e10}", "substeps", "integer in"},
    {"{'substeps': 99999999999}", "substeps", "integer in"},
    {"{'prewarm_s': true}", "prewarm_s", "expected a number"},
    {"{'prewarm_s': -1}", "prewarm_s", "[0, 10]"},
    {"{'prewarm_s': 11}", "prewarm_s", "[0, 10]"},
    {"{'prewarm_s': 1e300}", "prewarm_s", "32-bit float"},
    {"{'prewarm_s': -1e300}", "prewarm_s", "32-bit float"},
    {"{'gravity': [0, -9.81]}", "gravity", "array of 3 numbers"},
    {"{'gravity': [0, -9.81, 0, 0]}", "gravity", "array of 3 numbers"},
    {"{'gravity': {'y': -9.81}}", "gravity", "array of 3 numbers"},
    {"{'gravity': [0, 'down', 0]}", "gravity[1]", "expected a number"},
    {"{'gravity': [0, 1e39, 0]}", "gravity[1]", "32-bit float"},
    {"{'gravity': [0, -200, 0]}", "gravity", "exceeds 100"},
    {"{'gravity': [3e38, 3e38, 0]}", "gravity", "exceeds 100"},
    /* wind */
    {"{'wind': 1}", "wind", "expected an object"},
    {"{'wind': {'speed': 1}}", "wind.speed", "unknown field"},
    {"{'wind': {'velocity': [1, 2]}}", "wind.velocity", "array of 3"},
    {"{'wind': {'velocity': [0, 0, 500]}}", "wind.velocity", "exceeds 100"},
    {"{'wind': {'turbulence': 'x'}}", "wind.turbulence", "expected a number"},
    {"{'wind': {'turbulence': 3}}", "wind.turbulence", "[0, 2]"},
    {"{'wind': {'drag': -1}}", "wind.drag", "[0, 100]"},
    {"{'wind': {'seed': -1}}", "wind.seed", "[0, 4294967295]"},
    {"{'wind': {'seed': 4294967296}}", "wind.seed", "[0, 4294967295]"},
    {"{'wind': {'seed': 1.5}}", "wind.seed", "expected an integer"},
    /* verlet */
    {"{'verlet': []}", "verlet", "expected an object"},
    {"{'verlet': {'dampnig': 0.9}}", "verlet.dampnig", "did you mean \"damping\""},
    {"{'verlet': {'damping': null}}", "verlet.damping", "expected a number"},
    {"{'verlet': {'damping': 1.5}}", "verlet.damping", "[0, 1]"},
    {"{'verlet': {'damping': -0.5}}", "verlet.damping", "[0, 1]"},
    {"{'verlet': {'iterations': 0}}", "verlet.iterations", "[1, 32]"},
    {"{'verlet': {'iterations': 33}}", "verlet.iterations", "[1, 32]"},
    {"{'verlet': {'iterations': '3'}}", "verlet.iterations", "expected an integer"},
    {"{'verlet': {'bend_stiffness': 2}}", "verlet.bend_stiffness", "[0, 1]"},
    {"{'verlet': {'self_collision': 1}}", "verlet.self_collision", "true or false"},
    {"{'verlet': {'stretch': 'exact'}}", "verlet.stretch", "expected an object"},
    {"{'verlet': {'stretch': {'mode': 'linear'}}}", "verlet.stretch.mode",
     "\"exact\", \"nonlinear\""},
    {"{'verlet': {'stretch': {'modes': 'exact'}}}", "verlet.stretch.modes",
     "did you mean \"mode\""},
    {"{'verlet': {'stretch': {'stiffness': 0}}}", "verlet.stretch.stiffness", "(0, 1]"},
    {"{'verlet': {'stretch': {'stiffness': 1.5}}}", "verlet.stretch.stiffness", "(0, 1]"},
    {"{'verlet': {'stretch': {'max_strain': 0}}}", "verlet.stretch.max_strain", "[0.001, 1]"},
    {"{'verlet': {'stretch': {'max_strain': 2}}}", "verlet.stretch.max_strain", "[0.001, 1]"},
    /* springbone: options and the joint defaults (range-checked for the springbone solver) */
    {"{'springbone': 'vrm'}", "springbone", "expected an object"},
    {"{'springbone': {'form': 'spring'}}", "springbone.form", "\"vrm\", \"pull\""},
    {"{'springbone': {'center': 'hips'}}", "springbone.center", "\"world\", \"head\""},
    {"{'springbone': {'center': true}}", "springbone.center", "expected one of"},
    {"{'springbone': {'stiffnes': 1}}", "springbone.stiffnes", "did you mean \"stiffness\""},
    {"{" SB "'springbone': {'stiffness': 'stiff'}}", "springbone.stiffness", "expected a number"},
    {"{" SB "'springbone': {'stiffness': -1}}", "springbone.stiffness", "[0, 100]"},
    {"{" SB "'springbone': {'stiffness': 101}}", "springbone.stiffness", "[0, 100]"},
    {"{" SB "'springbone': {'form': 'pull', 'stiffness': 2}}", "springbone.stiffness", "[0, 1]"},
    {"{" SB "'springbone': {'drag_force': 1.5}}", "springbone.drag_force", "[0, 1]"},
    {"{" SB "'springbone': {'gravity_power': -1}}", "springbone.gravity_power", "[0, 100]"},
    {"{" SB "'springbone': {'hit_radius': 2}}", "springbone.hit_radius", "[0, 1]"},
    {"{" SB "'springbone': {'gravity_dir': [0, 0, 0]}}", "springbone.gravity_dir", "non-zero"},
    {"{" SB "'springbone': {'gravity_dir': [0, -1]}}", "springbone.gravity_dir", "array of 3"},
    {"{" SB "'springbone': {'limit': 'cone'}}", "springbone.limit", "expected an object"},
    {"{" SB "'springbone': {'limit': {'type': 'ball'}}}", "springbone.limit.type",
     "\"none\", \"cone\", \"hinge\""},
    {"{" SB "'springbone': {'limit': {'type': 'cone', 'angle_deg': 200}}}",
     "springbone.limit.angle_deg", "[0, 180]"},
    {"{" SB "'springbone': {'limit': {'angle_deg': -5}}}", "springbone.limit.angle_deg",
     "[0, 180]"},
    {"{" SB "'springbone': {'limit': {'angle_deg': '30'}}}", "springbone.limit.angle_deg",
     "expected a number"},
    {"{" SB "'springbone': {'limit': {'type': 'hinge', 'axis': [0, 0, 0]}}}",
     "springbone.limit.axis", "non-zero"},
    {"{" SB "'springbone': {'limit': {'axis': [1, 0]}}}", "springbone.limit.axis", "array of 3"},
    {"{" SB "'springbone': {'limit': {'angle': 30}}}", "springbone.limit.angle", "unknown field"},
    /* strands */
    {"{'strands': {}}", "strands", "expected an array"},
    {"{'strands': []}", "strands", "1 to 256"},
    {"{'strands': [" S257 "]}", "strands", "at most 256"},
    {"{'strands': [1]}", "strands[0]", "expected an object"},
    {"{'strands': [{'lenght': 1}]}", "strands[0].lenght", "unknown field"},
    {"{'strands': [{'anchor': [0, 0]}]}", "strands[0].anchor", "array of 3"},
    {"{'strands': [{'anchor': [0, 20, 0]}]}", "strands[0].anchor", "exceeds 10"},
    {"{'strands': [{'direction': [0, 0, 0]}]}", "strands[0].direction", "non-zero"},
    {"{'strands': [{'direction': 'down'}]}", "strands[0].direction", "array of 3"},
    {"{'strands': [{'points': 1}]}", "strands[0].points", "[2, 64]"},
    {"{'strands': [{'points': 65}]}", "strands[0].points", "[2, 64]"},
    {"{'strands': [{'points': 12.5}]}", "strands[0].points", "expected an integer"},
    {"{'strands': [{}, {'points': 0}]}", "strands[1].points", "[2, 64]"},
    {"{'strands': [{'segment_length': 0}]}", "strands[0].segment_length", "[0.001, 1]"},
    {"{'strands': [{'segment_length': 2}]}", "strands[0].segment_length", "[0.001, 1]"},
    {"{'strands': [{'segment_length': '3cm'}]}", "strands[0].segment_length", "expected a number"},
    {"{'strands': [{'colliders': 0}]}", "strands[0].colliders", "array of collider indices"},
    {"{'strands': [{'colliders': [0]}]}", "strands[0].colliders[0]", "no colliders"},
    {"{'colliders': [" SPH "}], 'strands': [{'colliders': [0, 1]}]}", "strands[0].colliders[1]",
     "[0, 0]"},
    {"{'colliders': [" SPH "}], 'strands': [{'colliders': [-1]}]}", "strands[0].colliders[0]",
     "[0, 0]"},
    {"{'colliders': [" SPH "}], 'strands': [{'colliders': ['0']}]}", "strands[0].colliders[0]",
     "collider index"},
    {"{'colliders': [" SPH "}], 'strands': [{'colliders': [0.5]}]}", "strands[0].colliders[0]",
     "collider index"},
    {"{'strands': [{'anchor_bone': 1}]}", "strands[0].anchor_bone", "expected a string"},
    {"{'strands': [{'anchor_bone': '" A64 "'}]}", "strands[0].anchor_bone", "at most 63"},
    {"{'strands': [{'points': 3, 'joints': 'J_Hair'}]}", "strands[0].joints",
     "array of bone names, one per point"},
    {"{'strands': [{'points': 3, 'joints': ['a', 'b']}]}", "strands[0].joints",
     "points = 3 of them, got 2"},
    {"{'strands': [{'rest': [[0, 0, 0], [0, -0.1, 0]], 'joints': ['a', 'b', 'c']}]}",
     "strands[0].joints", "points = 2 of them, got 3"},
    {"{'strands': [{'points': 2, 'joints': ['a', 7]}]}", "strands[0].joints[1]",
     "expected a string"},
    {"{'strands': [{'points': 2, 'joints': ['" A64 "', 'b']}]}", "strands[0].joints[0]",
     "at most 63 bytes"},
    {"{'strands': [{'mass': 1}]}", "strands[0].mass", "one mass per point after the root"},
    {"{'strands': [{'points': 3, 'mass': [1]}]}", "strands[0].mass", "points - 1 = 2 of them"},
    {"{'strands': [{'points': 3, 'mass': [1, 0.0001]}]}", "strands[0].mass[1]",
     "[0.001, 100]"},
    {"{'strands': [{'points': 3, 'mass': [1, 'x']}]}", "strands[0].mass[1]", "expected a number"},
    {"{'strands': [{'points': 3, 'radius': [0.01]}]}", "strands[0].radius", "points - 1 = 2"},
    {"{'strands': [{'points': 3, 'radius': [0.01, 0.2]}]}", "strands[0].radius[1]", "[0, 0.1]"},
    {"{'strands': [{'gravity_scale': 11}]}", "strands[0].gravity_scale", "[-10, 10]"},
    {"{'strands': [{'gravity_scale': 'up'}]}", "strands[0].gravity_scale", "expected a number"},
    {"{'strands': [{'rest': [[0, 0, 0]]}]}", "strands[0].rest", "2 to 64 points"},
    {"{'strands': [{'rest': {'x': 0}}]}", "strands[0].rest", "array of [x, y, z] rest positions"},
    {"{'strands': [{'rest': [[0, 0, 0], [0, -1]]}]}", "strands[0].rest[1]", "array of 3"},
    {"{'strands': [{'rest': [[0, 0, 0], [0, -0.0001, 0]]}]}", "strands[0].rest[1]",
     "segments must be in [0.001, 1] m"},
    {"{'strands': [{'rest': [[0, 0, 0], [0, -0.03, 0], [0, -2, 0]]}]}", "strands[0].rest[2]",
     "segments must be in [0.001, 1] m"},
    {"{'strands': [{'rest': [[0, 0, 0], [0, -0.03, 0], [0, 20, 0]]}]}", "strands[0].rest[2]",
     "exceeds 10"},
    {"{'strands': [{'rest': [[0, 0, 0], [0, -0.03, 0]], 'points': 2}]}", "strands[0].points",
     "not allowed with"},
    {"{'strands': [{'anchor': [0, 0, 0], 'rest': [[0, 0, 0], [0, -0.03, 0]]}]}",
     "strands[0].anchor", "not allowed with"},
    {"{'strands': [{'mass': {'root': 0}}]}", "strands[0].mass.root", "[0.001, 100]"},
    {"{'strands': [{'mass': {'root': 1e-45}}]}", "strands[0].mass.root", "[0.001, 100]"},
    {"{'strands': [{'mass': {'tip': 101}}]}", "strands[0].mass.tip", "[0.001, 100]"},
    {"{'strands': [{'mass': {'tip': 'heavy'}}]}", "strands[0].mass.tip", "expected a number"},
    {"{'strands': [{'mass': {'middle': 1}}]}", "strands[0].mass.middle", "unknown field"},
    {"{'strands': [{'radius': -0.1}]}", "strands[0].radius", "[0, 0.1]"},
    {"{'strands': [{'radius': 0.5}]}", "strands[0].radius", "[0, 0.1]"},
    {"{'strands': [{'springbone': []}]}", "strands[0].springbone", "expected an object"},
    {"{'strands': [{'springbone': {'form': 'vrm'}}]}", "strands[0].springbone.form",
     "unknown field"},
    /* per-strand joint overrides: 4 points = 3 joints */
    {"{" SB4 "{'stiffness': [1, 2]}}]}", "strands[0].springbone.stiffness", "points - 1 = 3"},
    {"{" SB4 "{'stiffness': [1, 2, 3, 4]}}]}", "strands[0].springbone.stiffness", "got 4"},
    {"{" SB4 "{'stiffness': [1, 'x', 1]}}]}", "strands[0].springbone.stiffness[1]",
     "expected a number"},
    {"{" SB4 "{'stiffness': [1, 1, -1]}}]}", "strands[0].springbone.stiffness[2]", "[0, 100]"},
    {"{" SB4 "{'stiffness': -1}}]}", "strands[0].springbone.stiffness", "[0, 100]"},
    {"{" SB4 "{'stiffness': {'value': 1}}}]}", "strands[0].springbone.stiffness",
     "expected a number"},
    {"{" SB4 "{'drag_force': [0, 0, 2]}}]}", "strands[0].springbone.drag_force[2]", "[0, 1]"},
    {"{" SB4 "{'gravity_power': [0, -1, 0]}}]}", "strands[0].springbone.gravity_power[1]",
     "[0, 100]"},
    {"{" SB4 "{'hit_radius': [0, 0, 5]}}]}", "strands[0].springbone.hit_radius[2]", "[0, 1]"},
    {"{" SB4 "{'hit_radius': 5}}]}", "strands[0].springbone.hit_radius", "[0, 1]"},
    {"{" SB4 "{'gravity_dir': [[0, -1, 0], [0, 0, 0], [0, -1, 0]]}}]}",
     "strands[0].springbone.gravity_dir[1]", "non-zero"},
    {"{" SB4 "{'gravity_dir': [[0, -1, 0]]}}]}", "strands[0].springbone.gravity_dir",
     "points - 1 = 3"},
    {"{" SB4 "{'gravity_dir': [[0, -1], [0, -1, 0], [0, -1, 0]]}}]}",
     "strands[0].springbone.gravity_dir[0]", "array of 3"},
    {"{" SB4 "{'gravity_dir': [0, 0, 0]}}]}", "strands[0].springbone.gravity_dir", "non-zero"},
    {"{" SB4 "{'limit': [{'type': 'cone'}]}}]}", "strands[0].springbone.limit", "points - 1 = 3"},
    {"{" SB4 "{'limit': [1, {}, {}]}}]}", "strands[0].springbone.limit[0]", "expected an object"},
    {"{" SB4 "{'limit': [{}, {}, {'type': 'cone', 'angle_deg': 190}]}}]}",
     "strands[0].springbone.limit[2].angle_deg", "[0, 180]"},
    {"{" SB4 "{'limit': [{}, {'type': 'hinge', 'axis': [0, 0, 0]}, {}]}}]}",
     "strands[0].springbone.limit[1].axis", "non-zero"},
    {"{" SB4 "{'limit': {'type': 'hinge', 'axis': [0, 0, 0]}}}]}",
     "strands[0].springbone.limit.axis", "non-zero"},
    {"{" SB4 "{'limit': [{}, {'kind': 'cone'}, {}]}}]}", "strands[0].springbone.limit[1].kind",
     "unknown field"},
    /* colliders */
    {"{'colliders': {}}", "colliders", "expected an array"},
    {"{'colliders': [" S129 "]}", "colliders", "at most 128"},
    {"{'colliders': [1]}", "colliders[0]", "expected an object"},
    {"{'colliders': [{}]}", "colliders[0].shape", "required"},
    {"{'colliders': [{'shape': 'cube'}]}", "colliders[0].shape", "\"sphere\", \"ellipsoid\""},
    {"{'colliders': [{'shape': 'sphere'}]}", "colliders[0].radius", "required for shape"},
    {"{'colliders': [" SPH ", 'radii': [1, 1, 1]}]}", "colliders[0].radii", "not a field"},
    {"{'colliders': [" SPH ", 'colour': 1}]}", "colliders[0].colour", "unknown field"},
    {"{'colliders': [" SPH ", 'attach': 'nek'}]}", "colliders[0].attach",
     "head, world or a VRM bone: hips spine chest upper_chest neck"},
    {"{'colliders': [" SPH ", 'attach': 7}]}", "colliders[0].attach", "thumb_metacarpal"},
    {"{'colliders': [" SPH ", 'attach': 'neck'}]}", "colliders[0].attach",
     "\"neck\" has no rest pose: add \"bones\""},
    {"{'bones': {'chest': " BONE "}, 'colliders': [" SPH ", 'attach': 'neck'}]}",
     "colliders[0].attach", "\"neck\" has no rest pose"},
    /* bones (the rest table) */
    {"{'bones': []}", "bones", "expected an object"},
    {"{'bones': {'hed': " BONE "}}", "bones.hed", "not a body bone"},
    {"{'bones': {'head': " BONE "}}", "bones.head", "other than the head"},
    {"{'bones': {'chest': 1}}", "bones.chest", "expected an object"},
    {"{'bones': {'chest': {'position': [0, 0, 0]}}}", "bones.chest.rotation", "required"},
    {"{'bones': {'chest': {'rotation': [0, 0, 0, 1]}}}", "bones.chest.position", "required"},
    {"{'bones': {'chest': {'position': [0, 0, 0], 'rotation': [0, 0, 1]}}}",
     "bones.chest.rotation", "four numbers"},
    {"{'bones': {'chest': {'position': [0, 0, 0], 'rotation': [0, 0, 'a', 1]}}}",
     "bones.chest.rotation[2]", "expected a number"},
    {"{'bones': {'chest': {'position': [0, 0, 0], 'rotation': [0, 0, 0, 0.1]}}}",
     "bones.chest.rotation", "length near 1"},
    {"{'bones': {'chest': {'position': [0, 20, 0], 'rotation': [0, 0, 0, 1]}}}",
     "bones.chest.position", "exceeds 10"},
    {"{'bones': {'chest': {'position': [0, 0], 'rotation': [0, 0, 0, 1]}}}",
     "bones.chest.position", "array of 3"},
    {"{'bones': {'chest': {'position': [0, 0, 0], 'rotation': [0, 0, 0, 1], 'scale': 1}}}",
     "bones.chest.scale", "unknown field"},
    {"{'colliders': [" SPH ", 'center': [0, 0]}]}", "colliders[0].center", "array of 3"},
    {"{'colliders': [" SPH ", 'center': [0, 2000, 0]}]}", "colliders[0].center", "exceeds 1000"},
    {"{'colliders': [{'shape': 'sphere', 'radius': -1}]}", "colliders[0].radius", "[0, 10]"},
    {"{'colliders': [{'shape': 'sphere', 'radius': 11}]}", "colliders[0].radius", "[0, 10]"},
    {"{'colliders': [{'shape': 'sphere', 'radius': '10cm'}]}", "colliders[0].radius",
     "expected a number"},
    {"{'colliders': [" SPH "}, {'shape': 'sphere', 'radius': 11}]}", "colliders[1].radius",
     "[0, 10]"},
    {"{'colliders': [{'shape': 'ellipsoid'}]}", "colliders[0].radii", "required for shape"},
    {"{'colliders': [{'shape': 'ellipsoid', 'radii': [0.1, 0, 0.1]}]}", "colliders[0].radii[1]",
     "[0.001, 10]"},
    {"{'colliders': [{'shape': 'ellipsoid', 'radii': [0.1, 0.1]}]}", "colliders[0].radii",
     "array of 3"},
    {"{'colliders': [{'shape': 'ellipsoid', 'radii': [1,1,1], 'radius': 1}]}",
     "colliders[0].radius", "not a field"},
    {"{'colliders': [{'shape': 'capsule', 'b': [0, 1, 0], 'radius': 0.1}]}", "colliders[0].a",
     "required for shape"},
    {"{'colliders': [{'shape': 'capsule', 'a': [0, 1, 0], 'radius': 0.1}]}", "colliders[0].b",
     "required for shape"},
    {"{'colliders': [{'shape': 'capsule', 'a': [0, 1, 0], 'b': [0, 0, 0]}]}", "colliders[0].radius",
     "required for shape"},
    {"{'colliders': [{'shape': 'capsule', 'a': [0, 1], 'b': [0, 0, 0], 'radius': 0.1}]}",
     "colliders[0].a", "array of 3"},
    {"{'colliders': [{'shape': 'capsule', 'a': [0, 0, 0], 'b': [0, 5000, 0], 'radius': 0.1}]}",
     "colliders[0].b", "exceeds 1000"},
    {"{'colliders': [{'shape': 'capsule', 'a': [0, 0, 0], 'b': [0, 1, 0], 'radius': 0.1, "
     "'radius_b': 11}]}",
     "colliders[0].radius_b", "[0, 10]"},
    {"{'colliders': [{'shape': 'capsule', 'a': [0, 0, 0], 'b': [0, 1, 0], 'radius': 0.1, "
     "'radius_b': 'same'}]}",
     "colliders[0].radius_b", "expected a number"},
    {"{'colliders': [{'shape': 'plane'}]}", "colliders[0].normal", "required for shape"},
    {"{'colliders': [{'shape': 'plane', 'normal': [0, 0, 0]}]}", "colliders[0].normal", "non-zero"},
    {"{'colliders': [{'shape': 'plane', 'normal': [0, 1, 0], 'point': [0, 0]}]}",
     "colliders[0].point", "array of 3"},
    {"{'colliders': [{'shape': 'plane', 'normal': [0, 1, 0], 'point': [0, 5000, 0]}]}",
     "colliders[0].point", "exceeds 1000"},
    {"{'colliders': [{'shape': 'plane', 'normal': [0, 1, 0], 'center': [0, 0, 0]}]}",
     "colliders[0].center", "not a field of shape \"plane\""},
    {"{'colliders': [{'shape': 'inside_sphere', 'radius': 0}]}", "colliders[0].radius",
     "[0.001, 100]"},
    {"{'colliders': [{'shape': 'inside_capsule', 'a': [0, 0, 0], 'b': [0, 1, 0], 'radius': 1, "
     "'radius_b': 2}]}",
     "colliders[0].radius_b", "not a field"},
    {"{'colliders': [{'shape': 'inside_capsule', 'a': [0, 0, 0], 'b': [0, 1, 0], 'radius': "
     "0}]}",
     "colliders[0].radius", "[0.001, 100]"},
    /* teleport */
    {"{'teleport': 1}", "teleport", "expected an object"},
    {"{'teleport': {'distance': 0}}", "teleport.distance", "(0, 1000]"},
    {"{'teleport': {'distance': 2000}}", "teleport.distance", "(0, 1000]"},
    {"{'teleport': {'distance': 'far'}}", "teleport.distance", "expected a number"},
    {"{'teleport': {'angle_deg': 0}}", "teleport.angle_deg", "(0, 180]"},
    {"{'teleport': {'angle_deg': 181}}", "teleport.angle_deg", "(0, 180]"},
    {"{'teleport': {'mode': 'snap'}}", "teleport.mode", "\"keep\", \"reset\""},
    {"{'teleport': {'dist': 1}}", "teleport.dist", "unknown field"},
};

static char *unquote(const char *s)
{
	char *t = strdup(s);
	for (char *p = t; *p; p++)
		if (*p == '\'')
			*p = '"';
	return t;
}

static void test_every_invalid_field_is_named(void **state)
{
	(void)state;
	int failures = 0;
	pt_instance_def *d = tdef_new();
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char *json = unquote(rows[i].json);
		pt_error e;
		memset(&e, 0, sizeof e);
		e.ok = 1;
		int rc = parse_text(json, d, NULL, &e);
		if (rc == 0 || e.ok || strcmp(e.field, rows[i].field) != 0 ||
		    !strstr(e.message, rows[i].says)) {
			print_message(
			    "row %zu: %s\n  want: %s: ...%s...\n  got:  rc %d ok %d %s: %s\n", i,
			    json, rows[i].field, rows[i].says, rc, e.ok, e.field, e.message);
			failures++;
		}
		free(json);
	}
	tdef_free(d);
	assert_int_equal(failures, 0);
}

/* The table must cover every key the schema knows (checked against a valid document
 * that uses them all: a key nobody tests would show up here). */
static void test_table_covers_every_field(void **state)
{
	(void)state;
	static const char *const fields[] = {"name",
	                                     "room",
	                                     "solver",
	                                     "substeps",
	                                     "prewarm_s",
	                                     "gravity",
	                                     "wind.velocity",
	                                     "wind.turbulence",
	                                     "wind.drag",
	                                     "wind.seed",
	                                     "verlet.damping",
	                                     "verlet.iterations",
	                                     "verlet.bend_stiffness",
	                                     "verlet.self_collision",
	                                     "verlet.stretch.mode",
	                                     "verlet.stretch.stiffness",
	                                     "verlet.stretch.max_strain",
	                                     "springbone.form",
	                                     "springbone.center",
	                                     "springbone.stiffness",
	                                     "springbone.drag_force",
	                                     "springbone.gravity_power",
	                                     "springbone.gravity_dir",
	                                     "springbone.hit_radius",
	                                     "springbone.limit.type",
	                                     "springbone.limit.angle_deg",
	                                     "springbone.limit.axis",
	                                     "strands[0].anchor",
	                                     "strands[0].direction",
	                                     "strands[0].points",
	                                     "strands[0].segment_length",
	                                     "strands[0].colliders[0]",
	                                     "strands[0].anchor_bone",
	                                     "strands[0].joints",
	                                     "strands[0].joints[1]",
	                                     "strands[0].mass.root",
	                                     "strands[0].mass.tip",
	                                     "strands[0].radius",
	                                     "strands[0].mass[1]",
	                                     "strands[0].radius[1]",
	                                     "strands[0].gravity_scale",
	                                     "strands[0].rest",
	                                     "strands[0].rest[1]",
	                                     "strands[0].springbone.stiffness",
	                                     "strands[0].springbone.drag_force[2]",
	                                     "strands[0].springbone.gravity_power[1]",
	                                     "strands[0].springbone.hit_radius",
	                                     "strands[0].springbone.gravity_dir",
	                                     "strands[0].springbone.limit[2].angle_deg",
	                                     "colliders[0].shape",
	                                     "colliders[0].attach",
	                                     "colliders[0].center",
	                                     "colliders[0].radius",
	                                     "colliders[0].radii",
	                                     "colliders[0].a",
	                                     "colliders[0].b",
	                                     "colliders[0].radius_b",
	                                     "colliders[0].point",
	                                     "colliders[0].normal",
	                                     "bones",
	                                     "bones.chest",
	                                     "bones.chest.position",
	                                     "bones.chest.rotation",
	                                     "teleport.distance",
	                                     "teleport.angle_deg",
	                                     "teleport.mode",
	                                     NULL};
	for (const char *const *f = fields; *f; f++) {
		int found = 0;
		for (size_t i = 0; i < sizeof rows / sizeof rows[0] && !found; i++)
			found = strcmp(rows[i].field, *f) == 0;
		if (!found)
			print_message("no row names %s\n", *f);
		assert_true(found);
	}
}

static void test_failure_leaves_output_untouched(void **state)
{
	(void)state;
	pt_instance_def *d = malloc(sizeof *d), *copy = malloc(sizeof *copy);
	pt_error e;
	assert_non_null(d);
	assert_non_null(copy);
	memset(d, 0xa5, sizeof *d);
	memcpy(copy, d, sizeof *d);
	assert_int_equal(
	    parse_text("{\"name\": \"x\", \"strands\": [{\"points\": 99}]}", d, NULL, &e), -1);
	assert_memory_equal(d, copy, sizeof *d);
	/* A range error found by core after a complete parse must not leak either. */
	assert_int_equal(parse_text("{\"name\": \"x\", \"prewarm_s\": 99}", d, NULL, &e), -1);
	assert_memory_equal(d, copy, sizeof *d);
	free(d);
	free(copy);
}

static void test_extra_keys_are_the_callers(void **state)
{
	(void)state;
	static const char *const extra[] = {"driver", "id", NULL};
	const char *doc = "{\"name\": \"a\", \"driver\": {\"kind\": \"bot\"}, \"id\": 7}";
	pt_instance_def *d = tdef_new();
	pt_error e;
	assert_int_equal(parse_text(doc, d, NULL, &e), -1);
	assert_string_equal(e.field, "driver");
	assert_int_equal(parse_text(doc, d, extra, &e), 0);
	assert_true(e.ok);
	assert_string_equal(d->name, "a");
	/* extra keys are top-level only */
	assert_int_equal(parse_text("{\"wind\": {\"driver\": 1}}", d, extra, &e), -1);
	assert_string_equal(e.field, "wind.driver");
	tdef_free(d);
}

static void test_null_error_is_allowed(void **state)
{
	(void)state;
	pt_instance_def *d = tdef_new();
	json_t *j = json_pack("{s:i}", "substeps", 99);
	assert_int_equal(pt_schema_parse(j, d, NULL, NULL), -1);
	json_decref(j);
	j = json_object();
	assert_int_equal(pt_schema_parse(j, d, NULL, NULL), 0);
	json_decref(j);
	tdef_free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_invalid_field_is_named),
	    cmocka_unit_test(test_table_covers_every_field),
	    cmocka_unit_test(test_failure_leaves_output_untouched),
	    cmocka_unit_test(test_extra_keys_are_the_callers),
	    cmocka_unit_test(test_null_error_is_allowed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
