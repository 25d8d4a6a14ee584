#!/usr/bin/env bash
# `ponytail import-vrm` end to end, through the built binary: avatars written here (VRM 1.0
# with extended colliders and limits, VRM 0.x), imported, and the imports run by
# `ponytail sim` (the schema accepts them, nothing explodes); malformed files exit 1, bad
# usage 2. The numbers themselves are checked in test_import_vrm.c.
# Run by `make test` from the repository root with PT_BUILD set.
set -u
bin="${PT_BUILD:-build}/bin/ponytail"
if [ ! -x "$bin" ] || ! "$bin" import-vrm --help >/dev/null 2>&1; then
	echo "skip: $bin has no import-vrm command yet"
	exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # check NAME EXPECTED_STATUS ACTUAL_STATUS
	if [ "$2" != "$3" ]; then
		echo "FAIL: $1: exit $3, expected $2"
		fails=$((fails + 1))
	else
		echo "ok: $1"
	fi
}

python3 - "$tmp" <<'EOF'
import json, struct, sys
out = sys.argv[1]

def glb(doc):
    j = json.dumps(doc).encode()
    j += b' ' * (-len(j) % 4)
    chunk = struct.pack('<II', len(j), 0x4E4F534A) + j
    return struct.pack('<4sII', b'glTF', 2, 12 + len(chunk)) + chunk

def chain(name, parent_t, n, step):
    return [{"name": "%s%d" % (name, i), "translation": parent_t if i == 0 else step} for i in range(n)]

# VRM 1.0: head with a 5-joint ponytail (cone and hinge limits), twin tails, a skirt on
# the hips; sphere, capsule, plane and inside-sphere colliders; center = head.
nodes = [
    {"name": "Hips", "translation": [0, 1.0, 0], "children": [1]},
    {"name": "Head", "translation": [0, 0.55, 0], "children": []},
]
springs = []
def add_chain(parent, name, t0, n, step, joint_extra=None):
    first = len(nodes)
    for i, nd in enumerate(chain(name, t0, n, step)):
        if i + 1 < n:
            nd["children"] = [first + i + 1]
        nodes.append(nd)
    nodes[parent].setdefault("children", []).append(first)
    joints = [{"node": first + i, "stiffness": 1.0, "dragForce": 0.4, "gravityPower": 0.5,
               "hitRadius": 0.02} for i in range(n)]
    if joint_extra:
        for i, e in joint_extra.items():
            joints[i]["extensions"] = {"VRMC_springBone_limit": {"specVersion": "1.0-draft", "limit": e}}
    return joints
springs.append({"name": "Ponytail", "colliderGroups": [0], "center": 1, "joints": add_chain(
    1, "Tail", [0, 0.05, -0.1], 5, [0, -0.04, 0],
    {0: {"cone": {"angle": 0.6}}, 1: {"hinge": {"angle": 1.2}}})})
springs.append({"name": "TwinL", "colliderGroups": [0], "center": 1,
                "joints": add_chain(1, "TwinL", [0.08, 0.06, 0], 4, [0.01, -0.05, 0])})
springs.append({"name": "TwinR", "colliderGroups": [0], "center": 1,
                "joints": add_chain(1, "TwinR", [-0.08, 0.06, 0], 4, [-0.01, -0.05, 0])})
springs.append({"name": "Skirt", "colliderGroups": [1], "center": 1,
                "joints": add_chain(0, "Skirt", [0.12, -0.05, 0.05], 3, [0, -0.12, 0])})
ext = lambda shape: {"VRMC_springBone_extended_collider": {"specVersion": "1.0", "shape": shape}}
v1 = {
    "asset": {"version": "2.0"},
    "extensionsUsed": ["VRMC_vrm", "VRMC_springBone", "VRMC_springBone_extended_collider",
                       "VRMC_springBone_limit"],
    "nodes": nodes,
    "extensions": {
        "VRMC_vrm": {"specVersion": "1.0", "meta": {"name": "Sim Test"},
                     "humanoid": {"humanBones": {"hips": {"node": 0}, "head": {"node": 1}}}},
        "VRMC_springBone": {
            "specVersion": "1.0",
            "colliders": [
                {"node": 1, "shape": {"sphere": {"offset": [0, 0.02, 0], "radius": 0.09}}},
                {"node": 1, "shape": {"capsule": {"offset": [0, -0.1, -0.02], "tail": [0, -0.25, -0.05], "radius": 0.05}}},
                {"node": 0, "shape": {"sphere": {"offset": [0, -1000, 0], "radius": 1000}},
                 "extensions": ext({"plane": {"offset": [0, -0.9, 0], "normal": [0, 1, 0]}})},
                {"node": 1, "shape": {"sphere": {"offset": [0, -10000, 0], "radius": 0}},
                 "extensions": ext({"sphere": {"offset": [0, -0.1, 0], "radius": 0.6, "inside": True}})},
                {"node": 0, "shape": {"sphere": {"offset": [0, 0, 0], "radius": 0.13}}},
            ],
            "colliderGroups": [{"colliders": [0, 1, 2, 3]}, {"colliders": [4, 2]}],
            "springs": springs,
        },
    },
}
open(out + "/v1.vrm", "wb").write(glb(v1))

# VRM 0.x: head with a branching bang and a long back chain (virtual tails), sphere colliders.
nodes0 = [
    {"name": "Hips", "translation": [0, 1.0, 0], "children": [1]},
    {"name": "Head", "translation": [0, 0.55, 0], "children": [2, 6]},
    {"name": "Bang", "translation": [0, 0.08, -0.09], "children": [3, 5]},
    {"name": "Bang1", "translation": [0, -0.04, -0.01], "children": [4]},
    {"name": "Bang2", "translation": [0, -0.04, 0]},
    {"name": "BangSide", "translation": [0.03, -0.04, 0]},
    {"name": "Back", "translation": [0, 0.05, 0.1], "children": [7]},
    {"name": "Back1", "translation": [0, -0.06, 0.01], "children": [8]},
    {"name": "Back2", "translation": [0, -0.06, 0]},
]
v0 = {
    "asset": {"version": "2.0"},
    "extensionsUsed": ["VRM"],
    "nodes": nodes0,
    "extensions": {"VRM": {
        "meta": {"title": "Zero"},
        "humanoid": {"humanBones": [{"bone": "hips", "node": 0}, {"bone": "head", "node": 1}]},
        "secondaryAnimation": {
            "colliderGroups": [{"node": 1, "colliders": [{"offset": {"x": 0, "y": 0.02, "z": 0}, "radius": 0.09}]}],
            "boneGroups": [{"comment": "hair", "stiffiness": 1.0, "gravityPower": 0.3,
                            "gravityDir": {"x": 0, "y": -1, "z": 0}, "dragForce": 0.4,
                            "center": -1, "hitRadius": 0.02, "bones": [2, 6], "colliderGroups": [0]}],
        },
    }},
}
open(out + "/v0.vrm", "wb").write(glb(v0))
open(out + "/bad.vrm", "wb").write(b"glTX" + glb(v0)[4:])
EOF

for v in v1 v0; do
	"$bin" import-vrm "$tmp/$v.vrm" >"$tmp/$v.json" 2>"$tmp/$v.err"
	check "import $v" 0 $?
	for motion in still shake stress; do
		"$bin" sim "$tmp/$v.json" --ticks 10 --motion "$motion" --summary >"$tmp/$v.$motion" 2>&1
		check "sim $v --motion $motion" 0 $?
		grep -q '"nan_count":0' "$tmp/$v.$motion" || {
			echo "FAIL: sim $v $motion: $(cat "$tmp/$v.$motion")"
			fails=$((fails + 1))
		}
	done
done
grep -q '"limit"' "$tmp/v1.json" || { echo "FAIL: v1 import has no limits"; fails=$((fails + 1)); }
# the branching bang hangs from the bang chain's joint: a branch, no warning
grep -q '"parent"' "$tmp/v0.json" && ! grep -q 'warning: chains branch off' "$tmp/v0.err" || {
	echo "FAIL: v0 import did not make the bang's branch a branch: $(cat "$tmp/v0.err")"
	fails=$((fails + 1))
}

"$bin" import-vrm --report "$tmp/v1.vrm" 2>/dev/null | python3 -c \
	'import json,sys; r=json.load(sys.stdin); assert r["source"]["format"]=="VRM 1.0" and len(r["strands"])==4' 
check "import --report" 0 $?
"$bin" import-vrm "$tmp/bad.vrm" >/dev/null 2>"$tmp/bad.err"
check "bad magic" 1 $?
grep -q 'bad magic' "$tmp/bad.err" || { echo "FAIL: $(cat "$tmp/bad.err")"; fails=$((fails + 1)); }
"$bin" import-vrm "$tmp/missing.vrm" >/dev/null 2>&1
check "missing file" 1 $?
"$bin" import-vrm >/dev/null 2>&1
check "no file" 2 $?
"$bin" import-vrm --bogus "$tmp/v1.vrm" >/dev/null 2>&1
check "unknown option" 2 $?

[ "$fails" -eq 0 ]
