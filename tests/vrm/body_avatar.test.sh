#!/usr/bin/env bash
# The committed whole-body test avatar (tests/fixtures/vrm/body_avatar_1.vrm, written by
# make_body_avatar.py, which does not use the importer): the generator still writes exactly
# those bytes (and body_avatar.expect.json), and `ponytail import-vrm` reads the file and
# reports every chain the generator put in (names, joints root to tip, the node each hangs
# from) and every collider on its own bone.
# Run by `make test` from the repository root with PT_BUILD set.
set -u
bin="${PT_BUILD:-build}/bin/ponytail"
dir=tests/fixtures/vrm
[ -x "$bin" ] || { echo "FAIL: $bin not built"; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

python3 "$dir/make_body_avatar.py" "$tmp" || fail "make_body_avatar.py"
for f in body_avatar_1.vrm body_avatar.expect.json; do
	cmp -s "$tmp/$f" "$dir/$f" || fail "$dir/$f differs from what make_body_avatar.py writes (regenerate it)"
done
"$bin" import-vrm --report "$dir/body_avatar_1.vrm" >"$tmp/r.json" 2>"$tmp/r.err" ||
	fail "import-vrm --report: $(cat "$tmp/r.err")"
python3 - "$dir/body_avatar.expect.json" "$tmp/r.json" <<'PY' || fails=$((fails + 1))
import json, sys
want, rep = (json.load(open(p)) for p in sys.argv[1:3])
bad = []
got = [(s['name'], s['joints'], s.get('anchor_bone')) for s in rep['strands']]
put = [(c['name'], c['joints'], c['parent']) for c in want['chains']]
if got != put:
    bad.append('chains: imported %s, put in %s' % (got, put))
snake = lambda n: ''.join('_' + ch.lower() if ch.isupper() else ch for ch in n).lstrip('_')
cg = [(c['node'], c['shape'], c['bone']) for c in rep['colliders']]
cp = [(c['bone'], c['shape'], snake(c['bone'])) for c in want['colliders']]
if cg != cp:
    bad.append('colliders: imported %s, put in %s' % (cg, cp))
for b in bad:
    print('FAIL:', b)
sys.exit(1 if bad else 0)
PY
[ "$fails" -eq 0 ] && echo "ok: body avatar"
[ "$fails" -eq 0 ]
