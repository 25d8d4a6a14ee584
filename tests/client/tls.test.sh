#!/usr/bin/env bash
# TLS end to end (issue 14): ponytaild --tls-cert/--tls-key serving HTTPS and WSS, and the
# clients verifying it. A root CA, an intermediate CA and server certificates are made here
# with openssl in the test's temporary directory (nothing secret is committed):
#   - start-up refuses a bad, missing, encrypted or mismatched cert/key, naming the flag;
#   - REST round trip over https (create, get, patch, delete) with --ca; WSS frames (watch,
#     stream, load, the library's example) with --ca, the chain sent by both listeners;
#   - without --ca, or with the wrong CA, or for a name the certificate does not carry,
#     the clients refuse with a "TLS:" reason and a hint; --insecure works and says so;
#   - plain HTTP and plain WebSocket to the TLS ports fail cleanly, and neither they nor
#     handshakes stalled for 6 s disturb a watcher (frames in order and no gap of 3 s: a
#     loop blocked by a stalled handshake would show one as long as the stall) or the daemon;
#   - SIGTERM still drains (exit 0), and the sanitizers (SANITIZE=1) report nothing.
# Nothing else depends on the machine's speed (issue 37): counts, order, and what must
# arrive waited for with a generous deadline.
# timeout: 240 (about 40 s alone: certificates, two nginx, a 6 s stalled handshake)
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || { echo "FAIL: openssl not installed (.ci/deps test)"; exit 1; }
EX="$B/bin/ponytail-client-example"
SAN_RE='runtime error:|ERROR: (Address|Leak|Thread|UndefinedBehavior)Sanitizer'

# --- certificates: root -> intermediate -> server (leaf + intermediate in one file) ---------
C="$T/pki"
mkdir -p "$C"
ossl() { openssl "$@" 2>>"$C/openssl.log" || { fail "openssl $*: $(tail -3 "$C/openssl.log")"; finish tls; exit 1; }; }
key() { ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }
key "$C/root.key"
ossl req -x509 -new -key "$C/root.key" -days 2 -subj /CN=ponytail-test-root -out "$C/root.pem"
key "$C/int.key"
ossl req -new -key "$C/int.key" -subj /CN=ponytail-test-intermediate -out "$C/int.csr"
printf 'basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\n' >"$C/int.ext"
ossl x509 -req -in "$C/int.csr" -CA "$C/root.pem" -CAkey "$C/root.key" -CAcreateserial \
	-days 2 -extfile "$C/int.ext" -out "$C/int.pem"
leaf() { # NAME SAN: $C/NAME.key and $C/NAME.pem (leaf, then the intermediate)
	key "$C/$1.key"
	ossl req -new -key "$C/$1.key" -subj "/CN=$1" -out "$C/$1.csr"
	printf 'basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=%s\n' "$2" >"$C/$1.ext"
	ossl x509 -req -in "$C/$1.csr" -CA "$C/int.pem" -CAkey "$C/int.key" -CAcreateserial \
		-days 1 -extfile "$C/$1.ext" -out "$C/$1.leaf"
	cat "$C/$1.leaf" "$C/int.pem" >"$C/$1.pem"
	chmod 600 "$C/$1.key"
}
leaf srv "IP:127.0.0.1,DNS:localhost"
leaf elsewhere "DNS:elsewhere.invalid" # the same CA, for a name we never connect to
key "$C/other-root.key"                # a CA that issued none of them
ossl req -x509 -new -key "$C/other-root.key" -days 2 -subj /CN=other-root -out "$C/other-root.pem"
ossl pkey -in "$C/srv.key" -aes256 -passout pass:secret -out "$C/encrypted.key"
printf 'not a certificate\n' >"$C/junk.pem"

# --- start-up refusals: exit 2, one line naming the flag, nothing listening ---------------
refused() { # WANT_SUBSTRING FLAGS...
	local want="$1"
	shift
	timeout 10 "$PD" --http-port 0 --ws-port 0 --data "$T/refused" "$@" >"$T/r.out" 2>"$T/r.err"
	local rc=$?
	[ "$rc" -eq 2 ] || fail "ponytaild $*: exit $rc, want 2 ($(head -c 300 "$T/r.err"))"
	grep -qF -- "$want" "$T/r.err" || fail "ponytaild $*: stderr lacks '$want': $(head -c 400 "$T/r.err")"
	grep -q 'listening:' "$T/r.err" && fail "ponytaild $*: listened anyway"
}
refused "--tls-cert is set but --tls-key is not" --tls-cert "$C/srv.pem"
refused "--tls-key is set but --tls-cert is not" --tls-key "$C/srv.key"
refused "--tls-cert $C/nope.pem: cannot open: No such file or directory" --tls-cert "$C/nope.pem" --tls-key "$C/srv.key"
refused "--tls-key $C/nope.key: cannot open" --tls-cert "$C/srv.pem" --tls-key "$C/nope.key"
refused "--tls-cert $C: not a regular file" --tls-cert "$C" --tls-key "$C/srv.key"
refused "--tls-cert $C/junk.pem: no PEM certificate in it" --tls-cert "$C/junk.pem" --tls-key "$C/srv.key"
refused "--tls-key $C/srv.pem: no PEM private key in it" --tls-cert "$C/srv.pem" --tls-key "$C/srv.pem"
refused "--tls-key $C/elsewhere.key: does not match the certificate in --tls-cert $C/srv.pem" \
	--tls-cert "$C/srv.pem" --tls-key "$C/elsewhere.key"
refused "--tls-key $C/encrypted.key: the key is encrypted" --tls-cert "$C/srv.pem" --tls-key "$C/encrypted.key"
# The config table: the environment and a --config file take the same checks.
PONYTAIL_TLS_CERT="$C/junk.pem" PONYTAIL_TLS_KEY="$C/srv.key" refused "--tls-cert $C/junk.pem: no PEM certificate"
printf 'tls-cert %s\ntls-key %s\n' "$C/srv.pem" "$C/elsewhere.key" >"$T/tls.conf"
refused "does not match the certificate" --config "$T/tls.conf"
refused "--tls-cert: expected printable ASCII without spaces" --tls-cert "$C/a b.pem" --tls-key "$C/srv.key"
"$PD" --help | grep -q -- "--tls-cert" || fail "ponytaild --help lacks --tls-cert"
"$PD" --help | grep -q "PONYTAIL_TLS_KEY" || fail "ponytaild --help lacks PONYTAIL_TLS_KEY"

# --- a daemon serving HTTPS and WSS -----------------------------------------------------------
# start_tls_daemon CERT KEY [FLAGS...]: sets S (https URL), WS (wss URL), the ports.
start_tls_daemon() {
	local cert="$1" key="$2"
	shift 2
	: >"$T/daemon.log"
	"$PD" --http-port 0 --ws-port 0 --data "$T/data" --web-root "$T" \
		--tls-cert "$cert" --tls-key "$key" "$@" >>"$T/daemon.log" 2>&1 &
	DPID=$!
	local line="" end=$((SECONDS + WAIT_S))
	while [ "$SECONDS" -lt "$end" ]; do
		line=$(grep -m1 -o 'listening: https://[0-9.]*:[0-9]*/ wss://[0-9.]*:[0-9]*/' "$T/daemon.log") && break
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.05
	done
	[ -n "$line" ] || { echo "FAIL: ponytaild (TLS) did not start:"; cat "$T/daemon.log"; exit 1; }
	HTTP_PORT=$(echo "$line" | sed -E 's|.*https://[0-9.]*:([0-9]+)/.*|\1|')
	WS_PORT=$(echo "$line" | sed -E 's|.*wss://[0-9.]*:([0-9]+)/.*|\1|')
	S="https://127.0.0.1:$HTTP_PORT"
	WS="wss://127.0.0.1:$WS_PORT/"
}
start_tls_daemon "$C/srv.pem" "$C/srv.key"
grep -q "HTTPS and WSS: certificate /CN=srv (2 in the chain" "$T/daemon.log" ||
	fail "the daemon did not log its certificate: $(grep -m1 tls "$T/daemon.log")"
grep -q "readable by others" "$T/daemon.log" && fail "a mode-600 key was called readable"

# REST round trip, verified against the root CA through the intermediate the server sends.
echo '{"name": "tls-a", "room": "secure", "strands": [{"points": 8, "segment_length": 0.03}]}' >"$T/a.json"
run 0 "" create "$T/a.json" --server "$S" --ca "$C/root.pem" --json
read -r A TA < <(py "j = json.loads(out); print(j['id'], j['token'])")
[ -n "${A:-}" ] || { fail "create over https: $(cat "$T/out" "$T/err")"; finish tls; exit 1; }
run 0 "" get "$A" --server "$S" --ca "$C/root.pem" --json
py "j = json.loads(out); assert j['name'] == 'tls-a' and j['room'] == 'secure', j" || fail "get over https: $(head -c 300 "$T/out")"
echo '{"gravity": [0, -3, 0]}' >"$T/p.json"
run 0 "" patch "$A" "$T/p.json" --server "$S" --ca "$C/root.pem" --token "$TA" --json
py "j = json.loads(out); assert j['definition']['gravity'] == [0, -3, 0], j['definition']['gravity']" ||
	fail "patch over https: $(head -c 300 "$T/out")"
# $PONYTAIL_CA is --ca's default; --server's https:// host name localhost is in the SANs too.
PONYTAIL_CA="$C/root.pem" run 0 "" get "$A" --server "https://localhost:$HTTP_PORT" --json

# Verification: no CA, the wrong CA, a CA file that is none; then --insecure.
run 1 "TLS: SSL certificate problem: unable to get local issuer certificate (give the CA that issued it with --ca FILE" \
	get "$A" --server "$S"
run 1 "TLS: SSL certificate problem" get "$A" --server "$S" --ca "$C/other-root.pem"
grep -q "is --ca the CA that issued" "$T/err" || fail "wrong --ca: no hint: $(cat "$T/err")"
run 2 "--ca: cannot read $C/none.pem" get "$A" --server "$S" --ca "$C/none.pem"
run 0 "--insecure: the server's TLS certificate is not verified" get "$A" --server "$S" --insecure --json
py "assert json.loads(out)['id'] == $A" || fail "get --insecure"
run 2 "--insecure" get "$A" --server "$S" --insecure=1

# WSS: watch learns wss:// from the https:// --server and /v1/info's ws_port.
run 0 "" watch "$A" --count 30 --server "$S" --ca "$C/root.pem"
python3 - "$T/out" "$A" <<'PY' || fail "watch over wss: $(head -c 300 "$T/out") $(cat "$T/err")"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 30, len(lines)
ticks = [json.loads(l)["tick"] for l in lines]
assert all(json.loads(l)["id"] == int(sys.argv[2]) for l in lines)
assert all(b > a for a, b in zip(ticks, ticks[1:])), ticks  # in order (how dense is speed)
f = json.loads(lines[-1])
assert [len(s) for s in f["strands"]] == [8], f["strands"]
PY
run 1 "TLS: the server's certificate did not verify: unable to get local issuer certificate" \
	watch "$A" --count 1 --ws "$WS"
grep -q "give the CA that issued it with --ca FILE" "$T/err" || fail "watch without --ca: no hint: $(cat "$T/err")"
run 1 "TLS: the server's certificate did not verify" watch "$A" --count 1 --ws "$WS" --ca "$C/other-root.pem"
run 1 "CA file $C/junk.pem: no PEM certificate in it" watch "$A" --count 1 --ws "$WS" --ca "$C/junk.pem"
run 0 "--insecure: the server's TLS certificate is not verified" watch "$A" --count 5 --ws "$WS" --insecure
[ "$(wc -l <"$T/out")" -eq 5 ] || fail "watch --insecure: $(wc -l <"$T/out") frames, want 5"
run 2 "--ws: expected ws:// or wss://" watch "$A" --ws "wss://"

# stream publishes over WSS and sees its own poses applied; the example and load too.
# (stream waits 2 s for its last pose's echo; later than that, the daemon is asked.)
run 0 "" stream "$A" --motion nod --count 60 --server "$S" --ca "$C/root.pem" --token "$TA" --json
py "j = json.loads(out); assert j['poses_sent'] == 60 and (j['frames_timed'] > 0 or not j['last_seq_applied']), j" ||
	fail "stream over wss: $(head -c 400 "$T/out") $(cat "$T/err")"
applied "$A" "$(py "print(json.loads(out)['last_seq_sent'])")" "$S" --ca "$C/root.pem"
timeout 90 "$EX" "$WS" "$A" "$TA" --frames 20 --ca "$C/root.pem" --timeout 60 >"$T/ex.out" 2>"$T/ex.err" ||
	fail "client example over wss: $(tail -c 300 "$T/ex.out") $(cat "$T/ex.err")"
timeout 60 "$EX" "$WS" "$A" --frames 5 --timeout 30 >"$T/ex.out" 2>"$T/ex.err" &&
	fail "client example trusted an unknown CA"
grep -q "closed: TLS: the server's certificate did not verify" "$T/ex.out" || fail "example: $(cat "$T/ex.out")"
run 0 "" load --rooms 1 --per-room 2 --publishers 1 --subscribers 2 --duration 1 --ramp 0.2 \
	--server "$S" --ca "$C/root.pem" --json "$T/load.json"
python3 - "$T/load.json" <<'PY' || fail "load over https/wss: $(head -c 600 "$T/load.json")"
import json, sys
j = json.load(open(sys.argv[1]))
c = j["connections"]
assert c["made"] == 3 and c["failed"] == 0 and c["lost"] == 0, c
PY
run 1 "TLS: SSL certificate problem" load --rooms 1 --per-room 1 --publishers 0 --subscribers 1 \
	--duration 0.5 --ramp 0 --server "$S"

# --- plain text to the TLS ports, and a stalled handshake, while a watcher watches ------------
# The watcher runs until the abuse is over and it has frames of later ticks, then Ctrl-C.
timeout 300 "$P" watch "$A" --duration 250 --server "$S" --ca "$C/root.pem" >"$T/w.out" 2>"$T/w.err" &
wpid=$!
eventually "the watcher's first frames" lines_in "$T/w.out" 5
python3 - "$HTTP_PORT" "$WS_PORT" <<'PY' || fail "plain text to the TLS ports"
import socket, sys, time
http, ws = int(sys.argv[1]), int(sys.argv[2])
def plain(port, data):
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    s.sendall(data)
    got = b""
    try:
        while len(got) < 4096:
            b = s.recv(4096)
            if not b:
                break
            got += b
    except (ConnectionResetError, socket.timeout):
        pass
    s.close()
    # A TLS server answers plain text with a TLS alert or nothing: never an HTTP answer.
    assert not got.startswith(b"HTTP/"), got[:80]
for _ in range(20):
    plain(http, b"GET /v1/info HTTP/1.1\r\nHost: x\r\n\r\n")
    plain(ws, b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
              b"Sec-WebSocket-Protocol: ponytail.v1\r\n\r\n")
    plain(http, bytes(range(256)) * 4)
# Stalled handshakes: connected, silent, closed 6 s later (each holds a connection thread /
# a slot in the WebSocket loop).
stalled = [socket.create_connection(("127.0.0.1", p), timeout=30) for p in (http, ws) for _ in range(8)]
time.sleep(6.0)
for s in stalled:
    s.close()
PY
run 1 "cannot reach http://127.0.0.1:$HTTP_PORT" get "$A" --server "http://127.0.0.1:$HTTP_PORT"
run 1 "cannot connect to ws://127.0.0.1:$WS_PORT/" watch "$A" --count 1 --ws "ws://127.0.0.1:$WS_PORT/" --timeout 2
n_after=$(wc -l <"$T/w.out")
eventually "the watcher's frames after the abuse" lines_in "$T/w.out" $((n_after + 5))
kill -TERM "$wpid"
wait "$wpid" || fail "watch during the plain-text abuse: $(cat "$T/w.err")"
python3 - "$T/w.out" <<'PY' || fail "the watcher lost frames during the abuse: $(tail -c 200 "$T/w.err")"
import json, sys
# The abuse catalogue's rule (tests/server/js/abuse.test.mjs): every frame sent decodes
# (watch prints only decoded ones) and comes in order. Not every tick: on a shared machine
# the daemon may skip ticks for a socket that lags (newest tick only). A gap as long as
# the 6 s stall would be a loop blocked by it; 3 s is far beyond any machine's lag.
ticks = [json.loads(l)["tick"] for l in open(sys.argv[1])]
assert all(b > a for a, b in zip(ticks, ticks[1:])), "ticks out of order"
gap = max(b - a for a, b in zip(ticks, ticks[1:]))
assert gap <= 180, ("a gap of %d ticks" % gap)
print("tls: the watcher got %d frames during the abuse, longest gap %d ticks" % (len(ticks), gap))
PY
run 0 "" get "$A" --server "$S" --ca "$C/root.pem" --json # still answering
kill -0 "$DPID" || fail "the daemon died"

# --- a certificate for another name: refused by both clients, whatever the CA -----------------
stop_daemon
grep -qE "stopped cleanly" "$T/daemon.log" || fail "no clean stop under TLS: $(tail -3 "$T/daemon.log")"
grep -qE "$SAN_RE" "$T/daemon.log" && fail "sanitizer report: $(grep -m1 -A20 -E "$SAN_RE" "$T/daemon.log")"
start_tls_daemon "$C/elsewhere.pem" "$C/elsewhere.key"
run 1 "TLS: SSL: no alternative certificate subject name matches target host name '127.0.0.1'" \
	get "$A" --server "$S" --ca "$C/root.pem"
run 1 "TLS: the server's certificate did not verify: " watch "$A" --count 1 --ws "$WS" --ca "$C/root.pem"
grep -qiE "host ?name mismatch|IP address mismatch" "$T/err" || fail "watch: not a name mismatch: $(cat "$T/err")"
run 0 "" get "$A" --server "$S" --insecure --json
stop_daemon
grep -qE "$SAN_RE" "$T/daemon.log" && fail "sanitizer report: $(grep -m1 -A20 -E "$SAN_RE" "$T/daemon.log")"

# --- the alternative: TLS terminated at docker/'s front nginx (docker/tls.conf), for real ------
# A plain daemon behind docker/edge.conf and docker/nginx.conf (every node of the ring
# pointing at the one edge), the front's TLS include dir holding tls.conf and srv's files.
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
free_port() { dead_port; }
nginx_run() { # NAME CONF PORT: runs nginx on CONF in $T until the test ends: 0 once it
	# listens, 2 when a port it was given was taken meanwhile (by another test), else 1
	local temps="" t pid end
	for t in client_body proxy fastcgi uwsgi scgi; do temps="$temps    ${t}_temp_path $T/$1-$t;\n"; done
	sed -i "s|^http {\$|http {\n    access_log off;\n$temps|" "$2"
	"$NGINX" -p "$T" -c "$2" -g "daemon off; pid $T/$1.pid; error_log stderr warn;" 2>"$T/$1.log" &
	pid=$!
	NGINX_PIDS="${NGINX_PIDS:-} $pid"
	end=$((SECONDS + WAIT_S))
	while [ "$SECONDS" -lt "$end" ] && kill -0 "$pid" 2>/dev/null; do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', $3), timeout=5)" 2>/dev/null && return 0
		sleep 0.05
	done
	grep -q "in use" "$T/$1.log" && return 2
	fail "nginx $1 did not start: $(cat "$T/$1.log")"
	return 1
}
trap 'for p in ${NGINX_PIDS:-}; do kill "$p" 2>/dev/null; done; kill_jobs; stop_daemon; wait 2>/dev/null; rm -rf "$T"' EXIT
start_daemon --ws-public-url /ws
mkdir -p "$T/ngtls"
cp "$C/srv.pem" "$T/ngtls/cert.pem"
cp "$C/srv.key" "$T/ngtls/key.pem"
# Ports free a moment ago: another test may take one first, so a few tries on new ones.
for try in 1 2 3 4 5; do
	EP=$(free_port) FP=$(free_port) FTP=$(free_port)
	sed -e "s|listen 443 ssl;|listen 127.0.0.1:$FTP ssl;|" -e "s|/etc/nginx/ponytail-tls/|$T/ngtls/|g" \
		docker/tls.conf >"$T/ngtls/tls.conf"
	sed -e "s|listen 80;|listen 127.0.0.1:$EP;|" -e "s|127.0.0.1:8081|127.0.0.1:$WS_PORT|" \
		-e "s|127.0.0.1:8080|127.0.0.1:$HTTP_PORT|" docker/edge.conf >"$T/edge.conf"
	sed -e "s|listen 80;|listen 127.0.0.1:$FP;|" -e "s|node[0-9]*:80|127.0.0.1:$EP|g" \
		-e "s|/etc/nginx/ponytail-tls/|$T/ngtls/|" docker/nginx.conf >"$T/front.conf"
	up=0
	nginx_run edge "$T/edge.conf" "$EP" || up=$?
	[ "$up" = 0 ] && { nginx_run front "$T/front.conf" "$FTP" || up=$?; }
	[ "$up" = 2 ] || break
	for p in ${NGINX_PIDS:-}; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	NGINX_PIDS=""
done
[ "$up" = 2 ] && fail "nginx: its ports were taken on every try"
grep -q "include $T/ngtls/\*.conf;" "$T/front.conf" || fail "docker/nginx.conf lacks the TLS include"
if [ "$up" = 0 ]; then
	FS="https://127.0.0.1:$FTP"
	echo '{"name": "tls-f"}' >"$T/f.json" # room "": the front routes a create by its room
	run 0 "" create "$T/f.json" --server "$FS" --ca "$C/root.pem" --json
	read -r F TF < <(py "j = json.loads(out); print(j['id'], j['token'])")
	run 0 "" get "$F" --server "$FS" --ca "$C/root.pem" --json
	py "assert json.loads(out)['name'] == 'tls-f'" || fail "get through the TLS front"
	# /v1/info says ws_url /ws: the client makes it wss://<front>/ws (with ?room=).
	run 0 "" watch "$F" --count 20 --server "$FS" --ca "$C/root.pem"
	[ "$(wc -l <"$T/out")" -eq 20 ] || fail "watch through the TLS front: $(cat "$T/err")"
	run 1 "TLS: SSL certificate problem" get "$F" --server "$FS"
	run 0 "" get "$F" --server "http://127.0.0.1:$FP" --json # port 80 still plain
fi
stop_daemon
grep -qE "$SAN_RE" "$T/daemon.log" && fail "sanitizer report: $(grep -m1 -A20 -E "$SAN_RE" "$T/daemon.log")"
grep -qE "$SAN_RE" "$T/err" "$T/ex.err" && fail "sanitizer report in a client"

finish tls
