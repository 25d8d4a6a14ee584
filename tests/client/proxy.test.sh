#!/usr/bin/env bash
# The CLI behind a proxy that routes by room (the scale-out of server/README.md, docker/'s front
# nginx): two daemons, and an nginx on loopback sending each request to the node of the
# room it names (?room= or X-Ponytail-Room) -- rooms "alpha" and "*-0" on node A, all
# others on node B. create, get/patch/delete with --room, watch --room, stream --room and
# load must each reach the right node; a call without its room reaches the other node.
# timeout: 180 (about 30 s alone: two daemons and nginx, two load runs)
. "$(dirname "$0")/lib.sh"
command -v nginx >/dev/null || { echo "skip: no nginx"; exit 0; }

# Two nodes: the lib's daemon (B) and one more (A), both announcing /ws as their WebSocket.
start_daemon --ws-public-url /ws
B_HTTP=$HTTP_PORT B_WS=$WS_PORT
mkdir -p "$T/a"
"$PD" --http-port 0 --ws-port 0 --data "$T/a/data" --web-root "$T" --ws-public-url /ws \
	>"$T/a/log" 2>&1 &
APID=$!
NPID=""
stop_all() {
	[ -n "$NPID" ] && kill -QUIT "$NPID" 2>/dev/null
	kill -TERM "$APID" 2>/dev/null
	kill_jobs
	stop_daemon
	wait 2>/dev/null # node A and nginx, gone before their directory
	rm -rf "$T"
}
trap stop_all EXIT
line="" end=$((SECONDS + WAIT_S))
while [ "$SECONDS" -lt "$end" ]; do
	line=$(grep -m1 -o 'listening: http://[0-9.]*:[0-9]*/ ws://[0-9.]*:[0-9]*/' "$T/a/log") && break
	kill -0 "$APID" 2>/dev/null || break
	sleep 0.05
done
[ -n "$line" ] || { echo "FAIL: node A did not start"; cat "$T/a/log"; exit 1; }
A_HTTP=$(echo "$line" | sed -E 's|.*http://[0-9.]*:([0-9]+)/.*|\1|')
A_WS=$(echo "$line" | sed -E 's|.*ws://[0-9.]*:([0-9]+)/.*|\1|')
A="http://127.0.0.1:$A_HTTP"
B="$S"

# nginx on a port that was free a moment ago: another test may take it first, so a few
# tries, each on a new one.
mkdir -p "$T/ngx"
for try in 1 2 3 4 5; do
	PX_PORT=$(dead_port)
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
	NPID=$!
	PX="http://127.0.0.1:$PX_PORT"
	up=0 end=$((SECONDS + WAIT_S))
	while [ "$SECONDS" -lt "$end" ] && kill -0 "$NPID" 2>/dev/null; do
		python3 -c "import urllib.request as u; u.urlopen('$PX/readyz', timeout=5)" 2>/dev/null && { up=1; break; }
		sleep 0.05
	done
	[ "$up" = 1 ] && break
	kill -QUIT "$NPID" 2>/dev/null; wait "$NPID" 2>/dev/null; NPID=""
	grep -q "in use" "$T/ngx/error.log" "$T/ngx/out" 2>/dev/null || break
done
[ "$up" = 1 ] || { echo "FAIL: nginx did not start: $(cat "$T/ngx/error.log" "$T/ngx/out" 2>/dev/null)"; exit 1; }

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
# Every pose sent reaches the node: the frames (read through the proxy too) end up showing
# the last one. (stream itself waits 2 s for that echo; on a loaded machine it may come
# later, so the test asks the node until it does.)
run 0 "" stream "$AID" --room alpha --motion nod --count 30 --token "$ATOK" --server "$PX" --json
py "j = json.loads(out); assert j['poses_sent'] == 30 and j['poses_dropped'] == 0, j" ||
	fail "stream --room through the proxy: $(cat "$T/out")"
applied "$AID" "$(py "print(json.loads(out)['last_seq_sent'])")" "$PX" --room alpha
run 0 "" stream "$BID" --room beta --motion nod --count 10 --token "$BTOK" --server "$PX" --json
py "j = json.loads(out); assert j['poses_sent'] == 10, j" || fail "stream to node B: $(cat "$T/out")"
applied "$BID" "$(py "print(json.loads(out)['last_seq_sent'])")" "$PX" --room beta

# load: rooms px-0 (node A) and px-1 (node B), every connection routed. Each node counts
# what reached it: exactly its room's publisher and two subscribers (WebSocket connections
# accepted), poses from that publisher, frames for those subscribers. load's own figures
# say the rest: all connections made and kept, no errors, poses echoed. Not how many of
# its window's ticks each subscriber got: load takes the window from the newest tick any
# connection saw, and each node numbers its own ticks (PROTOCOL.md 9), so the subscribers
# of the node started later see older tick numbers, partly or wholly before the window
# (and how many ticks a subscriber gets is the machine's speed anyway, `make bench`'s).
# Neither is load's verdict line read: it sets no exit status (0 once it has measured).
metrics() { # NODE_URL: the counters the routing check reads, one line
	python3 - "$1" <<'PY'
import re, sys, urllib.request
text = urllib.request.urlopen(sys.argv[1] + "/metrics", timeout=30).read().decode()
get = lambda n: int(float(re.search(r"^%s (\S+)$" % n, text, re.M).group(1)))
print(*(get(n) for n in ("ponytail_ws_accepted_total", "ponytail_poses_received_total", "ponytail_ws_records_sent_total")))
PY
}
read -r a_acc0 a_pos0 a_rec0 < <(metrics "$A")
read -r b_acc0 b_pos0 b_rec0 < <(metrics "$B")
run 0 "" load --rooms 2 --per-room 2 --publishers 2 --subscribers 4 --duration 2 --ramp 0.2 \
	--prefix px --json "$T/r.json" --server "$PX"
python3 - "$T/r.json" <<'PY' || fail "load through the proxy: $(cat "$T/out")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j['connections'] == {'made': 6, 'failed': 0, 'lost': 0}, j['connections']
assert j['errors'] == {}, j['errors']
r = j['records']
assert 0 < r['received'] <= r['expected'], r
assert j['latency_ms']['samples'] > 0, j['latency_ms']  # poses published through the proxy came back
PY
read -r a_acc a_pos a_rec < <(metrics "$A")
read -r b_acc b_pos b_rec < <(metrics "$B")
for n in "A $((a_acc - a_acc0)) $((a_pos - a_pos0)) $((a_rec - a_rec0))" "B $((b_acc - b_acc0)) $((b_pos - b_pos0)) $((b_rec - b_rec0))"; do
	read -r node acc pos rec <<<"$n"
	[ "$acc" -eq 3 ] && [ "$pos" -gt 0 ] && [ "$rec" -gt 0 ] ||
		fail "load through the proxy, node $node: $acc WebSocket connections (want 3: its room's publisher and 2 subscribers), $pos poses, $rec records sent"
done
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
