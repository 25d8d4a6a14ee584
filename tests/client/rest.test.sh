#!/usr/bin/env bash
# `ponytail create | list | get | patch | delete | reset` against a real daemon: human and
# --json output, the server's errors (unknown id, bad token, invalid definition), an
# unreachable server, and flag validation.
. "$(dirname "$0")/lib.sh"
start_daemon --admin-token admin-token-0123456789

cat >"$T/a.json" <<'J'
{"name": "alice", "room": "lobby",
 "strands": [{"anchor": [0, 0.06, -0.09], "points": 12, "segment_length": 0.03},
             {"anchor": [0.05, 0.06, -0.09], "points": 6, "segment_length": 0.04}],
 "colliders": [{"shape": "sphere", "center": [0, 0, 0], "radius": 0.1}]}
J
echo '{"name": "bob", "room": "hall"}' >"$T/b.json"

# --- create ------------------------------------------------------------------------------
run 0 "" create "$T/a.json" --server "$S"
grep -q '^created instance [0-9]* "alice" in room "lobby"$' "$T/out" || fail "create: $(cat "$T/out")"
A_TOKEN=$(sed -n 's/^token: //p' "$T/out")
A_ID=$(sed -n 's/^created instance \([0-9]*\).*/\1/p' "$T/out")
[ -n "$A_TOKEN" ] && [ -n "$A_ID" ] || fail "create: no id/token in $(cat "$T/out")"
run 0 "" create "$T/b.json" --server "$S" --json
py "j = json.loads(out); assert j['name'] == 'bob' and j['room'] == 'hall' and len(j['token']) > 8" ||
	fail "create --json: $(cat "$T/out")"
B_ID=$(py "print(json.loads(out)['id'])")
B_TOKEN=$(py "print(json.loads(out)['token'])")
PONYTAIL_SERVER="$S" run 0 "" create - <"$T/b.json"   # stdin, server from the environment
C_ID=$(sed -n 's/^created instance \([0-9]*\).*/\1/p' "$T/out")

# The server's validation error comes back with its field; local JSON errors name the line.
echo '{"name": "x", "strands": [{"points": 1}]}' >"$T/bad.json"
run 1 "422 invalid: strands[0].points" create "$T/bad.json" --server "$S"
echo '{"name": "x", "wobble": 1}' >"$T/bad.json"
run 1 "wobble" create "$T/bad.json" --server "$S"
printf '{"name": "x",\n "room": }\n' >"$T/bad.json"
run 1 "bad.json: line 2" create "$T/bad.json" --server "$S"
echo '[1, 2]' >"$T/bad.json"
run 1 "expected a JSON object" create "$T/bad.json" --server "$S"
run 1 "No such file" create "$T/missing.json" --server "$S"

# --- list / get --------------------------------------------------------------------------
run 0 "" list --server "$S"
grep -q "^3 instances$" "$T/out" || fail "list: $(cat "$T/out")"
grep -q "^$A_ID  *alice  *lobby  *no$" "$T/out" || fail "list row: $(cat "$T/out")"
run 0 "" list --room hall --server "$S" --json
py "j = json.loads(out); assert j['count'] == 2 and {i['name'] for i in j['instances']} == {'bob'}" ||
	fail "list --room --json: $(cat "$T/out")"
run 0 "" list --room nowhere --server "$S"
grep -q "^0 instances$" "$T/out" || fail "list empty room: $(cat "$T/out")"
run 0 "" get "$A_ID" --server "$S"
grep -q "^strands *2 (12 + 6 points)$" "$T/out" || fail "get: $(cat "$T/out")"
grep -q "^room *lobby$" "$T/out" || fail "get room: $(cat "$T/out")"
run 0 "" get "$A_ID" --server "$S" --json
py "j = json.loads(out); assert j['id'] == $A_ID and len(j['definition']['strands']) == 2" ||
	fail "get --json: $(cat "$T/out")"
run 0 "" get "$A_ID" --frame --server "$S" --json
py "j = json.loads(out); s = j['strands']; assert len(s) == 2 and len(s[0]) == 12 and len(s[1]) == 6" ||
	fail "get --frame --json: $(head -c 300 "$T/out")"
run 0 "" get "$A_ID" --frame --server "$S"
grep -q "^strand 1 *6 points, tip" "$T/out" || fail "get --frame: $(cat "$T/out")"

# --- patch / reset / delete: tokens ------------------------------------------------------
echo '{"verlet": {"damping": 0.9}}' >"$T/p.json"
run 0 "" patch "$A_ID" "$T/p.json" --server "$S" --token "$A_TOKEN"
grep -q "^patched instance $A_ID$" "$T/out" || fail "patch: $(cat "$T/out")"
run 0 "" get "$A_ID" --server "$S" --json
py "j = json.loads(out); assert abs(j['definition']['verlet']['damping'] - 0.9) < 1e-6" ||
	fail "patch not applied: $(cat "$T/out")"
run 0 "" patch "$A_ID" "$T/p.json" --server "$S" --token "$A_TOKEN" --json
py "j = json.loads(out); assert j['id'] == $A_ID" || fail "patch --json: $(cat "$T/out")"
run 1 "403 forbidden" patch "$A_ID" "$T/p.json" --server "$S" --token "$B_TOKEN"
run 1 "403 forbidden" reset "$A_ID" --server "$S" --token wrong-token
run 1 "403 forbidden" delete "$A_ID" --server "$S" --token wrong-token
echo '{"verlet": {"damping": 7}}' >"$T/p.json"
run 1 "verlet.damping" patch "$A_ID" "$T/p.json" --server "$S" --token "$A_TOKEN"
run 0 "" reset "$A_ID" --server "$S" --token "$A_TOKEN"
grep -q "^reset instance $A_ID$" "$T/out" || fail "reset: $(cat "$T/out")"
PONYTAIL_TOKEN="$B_TOKEN" run 0 "" reset "$B_ID" --server "$S"
run 0 "" delete "$C_ID" --server "$S" --token admin-token-0123456789
grep -q "^deleted instance $C_ID$" "$T/out" || fail "delete (admin token): $(cat "$T/out")"
run 0 "" delete "$B_ID" --server "$S" --token "$B_TOKEN"

# --- unknown ids -------------------------------------------------------------------------
run 1 "404 not_found: no instance $B_ID" get "$B_ID" --server "$S"
run 1 "404 not_found" get 999999 --frame --server "$S"
run 1 "404 not_found" delete "$B_ID" --server "$S" --token "$B_TOKEN"
run 1 "404 not_found" reset 999999 --server "$S" --token admin-token-0123456789
run 1 "404 not_found" patch 999999 "$T/b.json" --server "$S" --token admin-token-0123456789

# --- an unreachable server ---------------------------------------------------------------
dead="http://127.0.0.1:$(dead_port)"
run 1 "cannot reach $dead" list --server "$dead"
run 1 "cannot reach $dead" get 1 --server "$dead"
run 1 "cannot reach $dead" create "$T/a.json" --server "$dead"
run 1 "cannot reach" delete 1 --server "$dead" --token x

# --- flags: exit 2 and a message naming the problem --------------------------------------
run 2 "missing instance ID" get --server "$S"
run 2 "missing FILE.json" create --server "$S"
run 2 "expected an instance id" get abc --server "$S"
run 2 "expected an instance id" get 0 --server "$S"
run 2 "expected an instance id" get 1234567890123456789 --server "$S"
run 2 "needs the instance's write token" delete 1 --server "$S"
run 2 "unexpected argument 'x'" get 1 x --server "$S"
run 2 "unknown flag '--frame'" list --frame --server "$S"
run 2 "unknown flag '--bogus'" delete 1 --bogus --token t --server "$S"
run 2 "--server: expected http://host[:port]" list --server ftp://x
run 2 "--server: missing value" list --server
run 2 "--timeout: expected a number in [0.1, 600]" list --timeout 0 --server "$S"
run 2 "--room: expected 1 to 64 of A-Z a-z 0-9 _ . -" list --room "" --server "$S"
run 2 "--room: expected 1 to 64 of A-Z a-z 0-9 _ . -" get 1 --room "a b" --server "$S"
run 2 "--json takes no value" list --json=1 --server "$S"
run 0 "" create --help
grep -q -- "--token" "$T/out" || fail "create --help lacks --token"
run 0 "" --help
for c in create list get patch delete reset stream watch load; do
	grep -q "^  $c " "$T/out" || fail "ponytail --help does not list $c"
done

finish "rest"
