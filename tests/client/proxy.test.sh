#!/usr/bin/env bash
# The CLI behind a proxy that routes by room (the scale-out of server/README.md, docker/'s front
# nginx): two daemons, and an nginx on loopback sending each request to the node of the
# room it names (?room= or X-Ponytail-Room) -- rooms "alpha" and "*-0" on node A, all
# others on node B. create, get/patch/delete with --room, watch --room, stream --room and
# load must each reach the right node; a call without its room reaches the other node.
. "$(dirname "$0")/lib.sh"
command -v nginx >/dev/null || { echo "skip: no nginx"; exit 0; }

# Two nodes: the lib's daemon (B) and one more (A), both announcing /ws as their WebSocket.
start_daemon --ws-public-url /ws
B_HTTP=$HTTP_PORT B_WS=$WS_PORT
mkdir -p "$T/a"
"$PD" --http-port 0 --ws-port 0 --data "$T/a/data" --web-root "$T" --ws-public-url /ws \
	>"$T/a/log" 2>&1 &
APID=$!
trap 'kill -TERM "$APID" 2>/dev/null; [ -f "$T/nginx.pid" ] && kill -QUIT "$(cat "$T/nginx.pid")" 2>/dev/null; stop_daemon; sleep 0.2; rm -rf "$T"' EXIT
line=""
for _ in $(seq 100); do
	line=$(grep -m1 -o 'listening: http://[0-9.]*:[0-9]*/ ws://[0-9.]*:[0-9]*/' "$T/a/log") && break
	sleep 0.05
done
[ -n "$line" ] || { echo "FAIL: node A did not start"; cat "$T/a/log"; exit 1; }
A_HTTP=$(echo "$line" | sed -E 's|.*http://[0-9.]*:([0-9]+)/.*|\1|')
A_WS=$(echo "$line" | sed -E 's|.*ws://[0-9.]*:([0-9]+)/.*|\1|')
A="http://127.0.0.1:$A_HTTP"
B="$S"

PX_PORT=$(dead_port)
mkdir -p "$T/ngx"
cat >"$T/nginx.conf" <<NGX
worker_processes 1;
daemon off;
user root;
pid $T/nginx.pid;
error_log $T/ngx/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $T/ngx; proxy_temp_path $T/ngx; fastcgi_temp_path $T/ngx;
    uwsgi_temp_path $T/ngx; scgi_temp_path $T/ngx;
    map \$arg_room \$room { "" \$http_x_ponytail_room; default \$arg_room; }
    map \$room \$node { ~^(alpha|.*-0)\$ a; default b; }
    map \$http_upgrade \$connection_upgrade { default upgrade; "" close; }
    upstream rest_a { server 127.0.0.1:$A_HTTP; }
    upstream rest_b { server 127.0.0.1:$B_HTTP; }
    upstream ws_a { server 127.0.0.1:$A_WS; }
    upstream ws_b { server 127.0.0.1:$B_WS; }
    server {
        listen 127.0.0.1:$PX_PORT;
        location /ws {
            proxy_pass http://ws_\$node;
            proxy_http_version 1.1;
            proxy_set_header Upgrade \$http_upgrade;
            proxy_set_header Connection \$connection_upgrade;
            proxy_read_timeout 1h;
            proxy_buffering off;
        }
        location / {
            proxy_pass http://rest_\$node;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
NGX
nginx -c "$T/nginx.conf" -p "$T" >"$T/ngx/out" 2>&1 &
PX="http://127.0.0.1:$PX_PORT"
for _ in $(seq 100); do
	python3 -c "import urllib.request as u; u.urlopen('$PX/readyz', timeout=1)" 2>/dev/null && break
	sleep 0.05
done

# create: routed by the definition's room.
echo '{"name": "a1", "room": "alpha"}' >"$T/alpha.json"
echo '{"name": "b1", "room": "beta"}' >"$T/beta.json"
run 0 "" create "$T/alpha.json" --server "$PX" --json
AID=$(py "print(json.loads(out)['id'])"); ATOK=$(py "print(json.loads(out)['token'])")
run 0 "" create "$T/beta.json" --server "$PX" --json
BID=$(py "print(json.loads(out)['id'])"); BTOK=$(py "print(json.loads(out)['token'])")
run 0 "" list --server "$A" --json
py "assert [i['name'] for i in json.loads(out)['instances']] == ['a1']" || fail "node A holds: $(cat "$T/out")"
run 0 "" list --server "$B" --json
py "assert [i['name'] for i in json.loads(out)['instances']] == ['b1']" || fail "node B holds: $(cat "$T/out")"

# get / patch / reset with --room reach the node; without it, the other node says 404.
run 0 "" get "$AID" --room alpha --server "$PX" --json
py "assert json.loads(out)['name'] == 'a1'" || fail "get --room alpha: $(cat "$T/out")"
run 0 "" list --room alpha --server "$PX" --json
py "assert json.loads(out)['count'] == 1" || fail "list --room alpha: $(cat "$T/out")"
[ "$AID" = "$BID" ] || run 1 "404 not_found" get "$AID" --server "$PX"
echo '{"verlet": {"damping": 0.9}}' >"$T/p.json"
run 0 "" patch "$AID" "$T/p.json" --room alpha --token "$ATOK" --server "$PX"
run 0 "" reset "$AID" --room alpha --token "$ATOK" --server "$PX"

# watch --room and stream --room: the WebSocket (ws://proxy/ws?room=...) reaches the node.
run 0 "" watch --room alpha --count 10 --server "$PX"
py "assert len(out.splitlines()) == 10 and all(json.loads(l)['id'] == $AID for l in out.splitlines())" ||
	fail "watch --room alpha through the proxy: $(head -c 300 "$T/out")"
run 0 "" stream "$AID" --room alpha --motion nod --count 30 --token "$ATOK" --server "$PX"
grep -q "the server applied the last one" "$T/out" || fail "stream --room through the proxy: $(cat "$T/out")"
run 0 "" stream "$BID" --room beta --motion nod --count 10 --token "$BTOK" --server "$PX" --json
py "assert json.loads(out)['last_applied']" || fail "stream to node B: $(cat "$T/out")"

# load: rooms px-0 (node A) and px-1 (node B), every connection routed.
run 0 "" load --rooms 2 --per-room 2 --publishers 2 --subscribers 4 --duration 1 --ramp 0.2 \
	--prefix px --json "$T/r.json" --server "$PX"
python3 -c "
import json; j = json.load(open('$T/r.json'))
assert j['connections'] == {'made': 6, 'failed': 0, 'lost': 0}, j['connections']
assert j['errors'] == {}, j['errors']
assert j['records']['received'] >= 0.8 * j['records']['expected'] > 0 and j['latency_ms']['samples'] > 0, j" ||
	fail "load through the proxy: $(cat "$T/out")"
for node in "$A" "$B"; do
	run 0 "" list --server "$node" --json
	py "assert not [i for i in json.loads(out)['instances'] if i['room'].startswith('px-')]" ||
		fail "load left instances on $node: $(cat "$T/out")"
done

run 0 "" load --rooms 2 --per-room 1 --publishers 0 --subscribers 2 --duration 0.3 --ramp 0 \
	--prefix kp --keep --server "$PX"
run 0 "" list --server "$A" --json
py "assert [i['room'] for i in json.loads(out)['instances'] if i['room'].startswith('kp-')] == ['kp-0']" ||
	fail "load did not create room kp-0 on node A: $(cat "$T/out")"
run 0 "" list --server "$B" --json
py "assert [i['room'] for i in json.loads(out)['instances'] if i['room'].startswith('kp-')] == ['kp-1']" ||
	fail "load did not create room kp-1 on node B: $(cat "$T/out")"

# delete with --room.
run 0 "" delete "$AID" --room alpha --token "$ATOK" --server "$PX"
run 0 "" delete "$BID" --room beta --token "$BTOK" --server "$PX"

finish "proxy"
