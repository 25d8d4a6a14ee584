#!/usr/bin/env bash
# make deb, then the package installed into a scratch root with dpkg --root (no container,
# maintainer scripts chrootless): the files are where they belong, the man pages list
# every option the programs have, the unit is sandboxed, clients/lib/example.c builds with
# pkg-config against the installed library and header only, and runs against the
# installed daemon serving the installed web client.
# timeout: 240 (make deb compresses a 10 MB package with xz, then installs it twice;
# 35 s alone, several times that beside two other tests on two cores)
# sanitize: skip (checks the package and its files; the daemon code it runs, the other tests
# run under the sanitizers)
set -u
B="${PT_BUILD:-build}"
san=0
[ "$B" = build/san ] && san=1
T=$(mktemp -d)
DPID=""
trap '[ -n "$DPID" ] && kill -TERM "$DPID" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
die() { echo "FAIL: $*"; exit 1; }

make --no-print-directory deb SANITIZE=$san >"$T/make.log" 2>&1 || { cat "$T/make.log"; die "make deb"; }
deb=$(ls "$B"/ponytail_*.deb 2>/dev/null | head -n 1)
[ -f "$deb" ] || die "make deb made no $B/ponytail_*.deb"
grep '^deb:' "$T/make.log"
dpkg-deb --info "$deb" | grep -q 'Depends: .*libwebsockets17' || fail "Depends lacks libwebsockets17"

# make install with another PREFIX: every path follows it.
make --no-print-directory install SANITIZE=$san PREFIX=/opt/pt DESTDIR="$T/inst" >"$T/install.log" 2>&1 ||
	{ cat "$T/install.log"; die "make install PREFIX=/opt/pt DESTDIR=..."; }
grep -qx 'prefix=/opt/pt' "$T/inst/opt/pt/lib/pkgconfig/ponytail-client.pc" || fail "pc file prefix is not /opt/pt"
grep -qx 'ExecStart=/opt/pt/sbin/ponytaild' "$T/inst/opt/pt/lib/systemd/system/ponytaild.service" || fail "unit ExecStart"
grep -qx 'EnvironmentFile=-/opt/pt/etc/default/ponytaild' "$T/inst/opt/pt/lib/systemd/system/ponytaild.service" ||
	fail "unit EnvironmentFile"
[ -x "$T/inst/opt/pt/sbin/ponytaild" ] && [ -f "$T/inst/opt/pt/etc/default/ponytaild" ] &&
	[ -f "$T/inst/opt/pt/share/man/man8/ponytaild.8" ] || fail "make install PREFIX=/opt/pt: files missing"
[ -z "$(find "$T/inst" -path "$T/inst/opt" -prune -o -type f -print)" ] || fail "make install wrote outside PREFIX"

R="$T/root"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
lib="usr/lib/$multiarch"
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates"
: >"$R/var/lib/dpkg/status"
dpkg --root="$R" --force-script-chrootless --force-depends --log=/dev/null -i "$deb" >"$T/dpkg.log" 2>&1 ||
	{ cat "$T/dpkg.log"; die "dpkg --root -i"; }
dpkg --root="$R" -s ponytail 2>/dev/null | grep -q '^Status: install ok installed' || fail "dpkg does not list ponytail as installed"

for f in usr/sbin/ponytaild usr/bin/ponytail $lib/libponytail_client.a usr/include/ponytail/ponytail_client.h \
	usr/include/ponytail/ptp/proto.h $lib/pkgconfig/ponytail-client.pc usr/share/ponytail/web/index.html \
	usr/share/ponytail/web/avatar.html usr/share/ponytail/web/sample/sample.vrm \
	usr/share/doc/ponytail/copyright usr/share/doc/ponytail/changelog.gz \
	usr/share/ponytail/proto/js/ponytail-proto.mjs usr/share/man/man8/ponytaild.8.gz usr/share/man/man1/ponytail.1.gz \
	usr/lib/systemd/system/ponytaild.service etc/default/ponytaild; do
	[ -e "$R/$f" ] || fail "not installed: /$f"
done

# The web client's npm assets (camera control), when the build has them, without the
# build's npm files; nothing in the web root is executable.
if [ -f clients/web/node_modules/@mediapipe/face_mesh/face_mesh.js ]; then
	[ -f "$R/usr/share/ponytail/web/node_modules/@mediapipe/face_mesh/face_mesh.js" ] || fail "web client lacks MediaPipe"
fi
for f in install-deps.sh package.json package-lock.json screenshot.png; do
	[ ! -e "$R/usr/share/ponytail/web/$f" ] || fail "build file installed: /usr/share/ponytail/web/$f"
done
[ -z "$(find "$R/usr/share/ponytail" -type f -perm /111)" ] || fail "executable files under /usr/share/ponytail"

# The man pages come from the option tables: every option --help lists is in them.
zcat "$R/usr/share/man/man8/ponytaild.8.gz" >"$T/ponytaild.8"
for flag in $("$R/usr/sbin/ponytaild" --help | grep -oE '^  --[a-z-]+'); do
	grep -qF -- "$(echo "$flag" | sed 's/-/\\-/g')" "$T/ponytaild.8" || fail "ponytaild.8 lacks $flag"
done
grep -qF 'PONYTAIL_NODE_ID' "$T/ponytaild.8" || fail "ponytaild.8 lacks the environment variables"
zcat "$R/usr/share/man/man1/ponytail.1.gz" >"$T/ponytail.1"
for cmd in $("$R/usr/bin/ponytail" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'); do
	grep -q "^\.SH \"PONYTAIL $(echo "$cmd" | tr a-z A-Z)\"" "$T/ponytail.1" || fail "ponytail.1 lacks $cmd"
done
if command -v man >/dev/null; then
	for p in ponytaild.8 ponytail.1; do
		w=$(man --warnings -l "$T/$p" 2>&1 >/dev/null)
		[ -z "$w" ] || fail "man $p warns: $w"
	done
fi

# The unit: sandboxed, and pointing at the installed files.
unit="$R/usr/lib/systemd/system/ponytaild.service"
for want in DynamicUser=yes StateDirectory=ponytail ProtectSystem=strict ProtectHome=yes NoNewPrivileges=yes \
	PrivateDevices=yes 'CapabilityBoundingSet=$' 'ExecStart=/usr/sbin/ponytaild$' \
	'PONYTAIL_WEB_ROOT=/usr/share/ponytail/web$' 'EnvironmentFile=-/etc/default/ponytaild$'; do
	grep -q "^$want" "$unit" || grep -q "^Environment=$want" "$unit" || fail "unit lacks $want"
done
# Where systemd is installed: the unit verifies, and its exposure stays low (0 best, 10 worst).
if command -v systemd-analyze >/dev/null; then
	sed "s|^ExecStart=/usr/sbin/ponytaild|ExecStart=$R/usr/sbin/ponytaild|" "$unit" >"$T/ponytaild.service"
	systemd-analyze verify --man=no "$T/ponytaild.service" >"$T/verify" 2>&1 || fail "systemd-analyze verify: $(cat "$T/verify")"
	systemd-analyze security --offline=yes --threshold=20 "$T/ponytaild.service" >"$T/security" 2>&1 ||
		fail "systemd-analyze security: exposure over 2.0: $(tail -1 "$T/security")"
	grep -o 'Overall exposure level.*' "$T/security"
fi

# Where lintian is installed: no errors (warnings are printed, not failed on).
if command -v lintian >/dev/null; then
	lintian --tag-display-limit 0 "$deb" >"$T/lintian" 2>/dev/null
	grep '^[EW]: ' "$T/lintian"
	grep -q '^E: ' "$T/lintian" && fail "lintian reports errors"
fi

# The example, built from a copy (so only the installed header can be found).
cp clients/lib/example.c "$T/example.c"
export PKG_CONFIG_SYSROOT_DIR="$R" PKG_CONFIG_PATH="$R/$lib/pkgconfig"
pkg-config --validate ponytail-client || fail "pkg-config --validate ponytail-client"
flags=$(pkg-config --cflags --libs ponytail-client) || die "pkg-config ponytail-client"
extra=""
[ "$san" = 1 ] && extra="-fsanitize=address,undefined"
cc -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror $extra -o "$T/example" "$T/example.c" $flags \
	>"$T/cc.log" 2>&1 || { cat "$T/cc.log"; die "example.c does not build against the installed library ($flags)"; }

# The installed daemon, on free loopback ports, serving the installed web client.
"$R/usr/sbin/ponytaild" --http-port 0 --ws-port 0 --data "$T/data" --web-root "$R/usr/share/ponytail/web" \
	--proto-js "$R/usr/share/ponytail/proto/js" >"$T/daemon.log" 2>&1 &
DPID=$!
# Deadlines (30 s) that only a broken daemon reaches on a loaded machine (issue 37).
line="" end=$((SECONDS + 30))
while [ "$SECONDS" -lt "$end" ] && kill -0 "$DPID" 2>/dev/null; do
	line=$(grep -m1 -oE 'listening: http://[0-9.]+:[0-9]+/ ws://[0-9.]+:[0-9]+/' "$T/daemon.log") && break
	sleep 0.05
done
[ -n "$line" ] || { cat "$T/daemon.log"; die "the installed ponytaild did not start"; }
S=$(echo "$line" | sed -E 's|listening: (http://[0-9.]+:[0-9]+)/.*|\1|')
WS=$(echo "$line" | sed -E 's|.* (ws://[0-9.]+:[0-9]+)/|\1|')
python3 - "$S" >"$T/made" <<'PY' || die "cannot create an instance on the installed daemon"
import json, sys, time, urllib.request as u
base = sys.argv[1]
end = time.time() + 30
while True:
    try:
        u.urlopen(base + "/readyz", timeout=5); break
    except Exception:
        if time.time() > end:
            raise
        time.sleep(0.05)
page = u.urlopen(base + "/", timeout=30).read().decode()
assert "<html" in page.lower() and "placeholder" not in page.lower(), page[:200]
assert u.urlopen(base + "/proto/js/ponytail-proto.mjs", timeout=30).status == 200
sample = u.urlopen(base + "/sample/sample.vrm", timeout=30)  # the avatar page opens on it
assert sample.headers["Content-Type"] == "model/gltf-binary" and sample.read(4) == b"glTF", "the sample avatar"
body = json.dumps({"name": "deb", "strands": [{"points": 8}]}).encode()
r = json.load(u.urlopen(u.Request(base + "/v1/instances", data=body, headers={"Content-Type": "application/json"}), timeout=30))
print(r["id"], r["token"])
PY
read -r ID TOKEN <"$T/made"
timeout 90 "$T/example" "$WS" "$ID" "$TOKEN" --frames 30 --timeout 60 >"$T/example.out" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "example exited $rc: $(tail -5 "$T/example.out")"
grep -q '^connected: ' "$T/example.out" || fail "example did not connect: $(head -3 "$T/example.out")"
[ "$(grep -c '^tick ' "$T/example.out")" -ge 30 ] || fail "example printed fewer than 30 frames"
"$R/usr/bin/ponytail" list --server "$S" --json >"$T/list" 2>&1 && grep -q '"deb"' "$T/list" ||
	fail "the installed ponytail list: $(cat "$T/list")"
kill -TERM "$DPID"
wait "$DPID" || fail "the installed daemon did not exit 0 on SIGTERM: $(tail -3 "$T/daemon.log")"
DPID=""
[ "$fails" = 0 ] && echo "deb: installed into a scratch root; example ran $(grep -c '^tick ' "$T/example.out") frames against the installed daemon"
[ "$fails" = 0 ]
