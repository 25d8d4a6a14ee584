#!/usr/bin/env bash
# The committed test avatar (tests/fixtures/vrm/test_avatar_{1,0}.vrm, written by
# make_test_avatar.py, which does not use the importer): the generator still writes exactly
# those bytes; each file is a consistent skinned glTF (every accessor inside its buffer,
# the bind pose puts every vertex where the node tree does); and `ponytail import-vrm`
# reads both without error and reports the chains and colliders the generator put in
# (test_avatar.expect.json): names, joints, rest lengths, bend and points, collider
# shapes, the bone each collider is attached to (its own: "chest", not folded into the
# head), the bones' head-local rest positions and the colliders' coordinates in their
# bone's frame; the instance names every point's bone ("joints", the root bone first, ""
# for the 0.x virtual tail); `ponytail sim` runs the imports.
# Run by `make test` from the repository root with PT_BUILD set.
set -u
bin="${PT_BUILD:-build}/bin/ponytail"
dir=tests/fixtures/vrm
[ -x "$bin" ] || { echo "FAIL: $bin not built"; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

python3 "$dir/make_test_avatar.py" "$tmp" || fail "make_test_avatar.py"
for f in test_avatar_1.vrm test_avatar_0.vrm test_avatar.expect.json; do
	cmp -s "$tmp/$f" "$dir/$f" || fail "$dir/$f differs from what make_test_avatar.py writes (regenerate it)"
done

for v in 1 0; do
	"$bin" import-vrm "$dir/test_avatar_$v.vrm" >"$tmp/i$v.json" 2>"$tmp/i$v.err" || fail "import $v: $(cat "$tmp/i$v.err")"
	"$bin" import-vrm --report "$dir/test_avatar_$v.vrm" >"$tmp/r$v.json" 2>/dev/null || fail "import --report $v"
	"$bin" sim "$tmp/i$v.json" --ticks 30 --motion stress --summary >"$tmp/s$v" 2>&1 || fail "sim $v: $(cat "$tmp/s$v")"
	grep -q '"nan_count":0' "$tmp/s$v" || fail "sim $v: $(cat "$tmp/s$v")"
done

python3 - "$dir" "$tmp" <<'EOF' || fails=$((fails + 1))
import json, math, struct, sys
d, tmp = sys.argv[1], sys.argv[2]
want = json.load(open(d + '/test_avatar.expect.json'))
bad = []
def near(a, b, tol=1e-5):
    return all(abs(x - y) <= tol for x, y in zip(a, b)) and len(a) == len(b)
def check(cond, what):
    if not cond:
        bad.append(what)

def glb_check(path):
    """Parses the GLB; every accessor inside its view and buffer; the bind pose maps each
    vertex through its joint's inverse bind matrix and world matrix back onto itself."""
    b = open(path, 'rb').read()
    magic, ver, total = struct.unpack('<4sII', b[:12])
    check(magic == b'glTF' and ver == 2 and total == len(b), path + ': GLB header')
    jl, jt = struct.unpack('<II', b[12:20])
    doc = json.loads(b[20:20 + jl])
    bl, bt = struct.unpack('<II', b[20 + jl:28 + jl])
    check(jt == 0x4E4F534A and bt == 0x004E4942, path + ': chunk types')
    binc = b[28 + jl:28 + jl + bl]
    check(doc['buffers'][0]['byteLength'] <= bl, path + ': buffer')
    size = {5126: 4, 5123: 2}
    n = {'SCALAR': 1, 'VEC3': 3, 'VEC4': 4, 'MAT4': 16}
    def acc(i):
        a = doc['accessors'][i]
        v = doc['bufferViews'][a['bufferView']]
        need = a['count'] * n[a['type']] * size[a['componentType']]
        check(need <= v['byteLength'] and v['byteOffset'] + v['byteLength'] <= bl, path + ': accessor %d' % i)
        raw = binc[v['byteOffset']:v['byteOffset'] + need]
        vals = struct.unpack('<%d%s' % (need // size[a['componentType']], 'f' if a['componentType'] == 5126 else 'H'), raw)
        k = n[a['type']]
        return [vals[j:j + k] for j in range(0, len(vals), k)]
    nodes = doc['nodes']
    parent = {c: i for i, nd in enumerate(nodes) for c in nd.get('children', [])}
    def world(i):  # 4x4 row-major
        nd = nodes[i]
        x, y, z, w = nd.get('rotation', [0, 0, 0, 1])
        t = nd.get('translation', [0, 0, 0])
        m = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w), t[0]],
             [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w), t[1]],
             [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y), t[2]], [0, 0, 0, 1]]
        if i in parent:
            p = world(parent[i])
            m = [[sum(p[r][k] * m[k][c] for k in range(4)) for c in range(4)] for r in range(4)]
        return m
    prim = doc['meshes'][0]['primitives'][0]
    pos, jts, wts = (acc(prim['attributes'][k]) for k in ('POSITION', 'JOINTS_0', 'WEIGHTS_0'))
    idx = acc(prim['indices'])
    check(all(i[0] < len(pos) for i in idx) and len(idx) % 3 == 0, path + ': indices')
    skin = doc['skins'][0]
    ibm = acc(skin['inverseBindMatrices'])
    for p, j, w in zip(pos, jts, wts):
        check(abs(sum(w) - 1) < 1e-6, path + ': weights')
        node = skin['joints'][j[0]]
        m, ib = world(node), ibm[j[0]]  # ib column-major
        local = [sum(ib[c * 4 + r] * (list(p) + [1])[c] for c in range(4)) for r in range(4)]
        back = [sum(m[r][k] * local[k] for k in range(4)) for r in range(3)]
        check(near(back, p, 1e-5), path + ': vertex %s does not come back in the bind pose (%s)' % (p, back))
    return doc

for v, fmt in (('1', 'VRM 1.0'), ('0', 'VRM 0.x')):
    glb_check(d + '/test_avatar_%s.vrm' % v)
    rep = json.load(open(tmp + '/r%s.json' % v))
    inst = json.load(open(tmp + '/i%s.json' % v))
    check(rep['source']['format'] == fmt, v + ': format ' + rep['source']['format'])
    check(len(rep['strands']) == len(want['chains']) == len(inst['strands']), v + ': strand count')
    for s, i, c in zip(rep['strands'], inst['strands'], want['chains']):
        pts = c['rest_head_local']
        seg = [math.dist(pts[k], pts[k + 1]) for k in range(len(pts) - 1)]
        first = [(pts[1][k] - pts[0][k]) / seg[0] for k in range(3)]
        bend = max(math.degrees(math.acos(max(-1, min(1, sum((pts[k + 1][a] - pts[k][a]) * first[a] for a in range(3)) / seg[k]))))
                   for k in range(len(seg)))
        tail = v == '0'  # 0.x: a virtual tail after the leaf joint
        check(s['name'] == c['name'] and s['joints'] == c['joints'], v + ': chain %s joints %s' % (s['name'], s['joints']))
        check(i.get('joints') == c['joints'] + [''] * tail, v + ': %s instance joints %s' % (c['name'], i.get('joints')))
        check(s['virtual_tail'] == tail and s['points'] == len(pts) + tail == len(i['rest']), v + ': %s points' % c['name'])
        check(near(s['segment_lengths'][:len(seg)], seg, 1e-6), v + ': %s lengths %s, put in %s' % (c['name'], s['segment_lengths'], seg))
        check(abs(s['rest_bend_max_deg'] - bend) < 1e-3, v + ': %s bend %s, put in %s' % (c['name'], s['rest_bend_max_deg'], bend))
        check(all(near(a, b) for a, b in zip(i['rest'], pts)), v + ': %s rest %s, put in %s' % (c['name'], i['rest'], pts))
    cw = want['colliders']['1.0' if v == '1' else '0.x']
    check([(c['node'], c['shape']) for c in rep['colliders']] == [(c['bone'], c['shape']) for c in cw],
          v + ': colliders %s' % [(c['node'], c['shape']) for c in rep['colliders']])
    check(all(c['used'] for c in rep['colliders']), v + ': an unused collider')
    bone = want['bones_head_local']
    # every collider stays on its own bone: "attach" names it (snake_case), the bones table
    # has the bone's head-local rest position, and the collider's coordinates are the
    # generator's offsets in that bone's frame (rest rotation identity: head axes)
    snake = lambda n: ''.join('_' + ch.lower() if ch.isupper() else ch for ch in n).lstrip('_')
    at = lambda c, k: c[k]
    for got, c in zip(inst['colliders'], cw):
        name = snake(c['bone'])
        check(got['attach'] == name, v + ': collider on %s attached to %s' % (c['bone'], got['attach']))
        if name != 'head':
            b = inst.get('bones', {}).get(name)
            check(b is not None and near(b['position'], bone[c['bone']]) and b['rotation'] == [0, 0, 0, 1],
                  v + ': bones.%s = %s, put in %s' % (name, b, bone[c['bone']]))
        ok = got['shape'] == c['shape']
        if c['shape'] == 'sphere':
            ok = ok and near(got['center'], at(c, 'offset')) and abs(got['radius'] - c['radius']) < 1e-6
        elif c['shape'] == 'capsule':
            ok = ok and near(got['a'], at(c, 'offset')) and near(got['b'], at(c, 'tail')) and abs(got['radius'] - c['radius']) < 1e-6
        else:
            ok = ok and near(got['point'], at(c, 'offset')) and near(got['normal'], c['normal'])
        check(ok, v + ': collider %s imported as %s' % (c, got))
for b in bad:
    print('FAIL:', b)
print('test avatar: %d problems' % len(bad))
sys.exit(1 if bad else 0)
EOF

[ "$fails" -eq 0 ] && echo "ok: test avatar"
[ "$fails" -eq 0 ]
