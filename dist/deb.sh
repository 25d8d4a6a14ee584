#!/usr/bin/env bash
# make deb: stages `make install PREFIX=/usr` and packs it with Debian's own tools:
# dpkg-shlibdeps finds the library packages the binaries need, dpkg-deb builds
# BUILD/ponytail_VERSION_ARCH.deb. Usage: dist/deb.sh BUILD_DIR VERSION
set -eu
B="$1" version="$2"
arch=$(dpkg --print-architecture)
root="$PWD/$B/deb/root"
rm -rf "$B/deb"
mkdir -p "$root/DEBIAN"
make --no-print-directory install PREFIX=/usr DESTDIR="$root" >"$B/deb/install.log"
gzip -9n "$root/usr/share/man/man1/ponytail.1" "$root/usr/share/man/man8/ponytaild.8"
strip --strip-unneeded "$root/usr/sbin/ponytaild" "$root/usr/bin/ponytail"

# dpkg-shlibdeps reads a debian/control; give it a minimal one of its own.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/debian"
printf 'Source: ponytail\n\nPackage: ponytail\nArchitecture: any\n' >"$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O -e"$root/usr/sbin/ponytaild" -e"$root/usr/bin/ponytail" 2>/dev/null |
	sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

cat >"$root/DEBIAN/control" <<CONTROL
Package: ponytail
Version: $version
Architecture: $arch
Maintainer: Ponytail team <ponytail@localhost>
Installed-Size: $(du -sk "$root/usr" | cut -f1)
Depends: $depends
Suggests: libwebsockets-dev, pkg-config
Section: net
Priority: optional
Description: networked hair-simulation daemon, client and C client library
 ponytaild hosts many hair-simulation instances, steps them at a fixed tick and
 streams compact pose frames over WebSocket; a REST API creates and changes
 them. Includes the ponytail command (offline simulation, VRM import, REST and
 WebSocket client, load generator), the browser client, the C client library
 (static, with pkg-config file ponytail-client) and a sandboxed systemd unit.
CONTROL
echo /etc/default/ponytaild >"$root/DEBIAN/conffiles"
# Maintainer scripts: systemd only on a live system (not under dpkg --root / DPKG_ROOT).
cat >"$root/DEBIAN/postinst" <<'SH'
#!/bin/sh
set -e
if [ "$1" = configure ] && [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
	systemctl daemon-reload
	systemctl enable ponytaild.service >/dev/null 2>&1 || true
	systemctl restart ponytaild.service || true
fi
SH
cat >"$root/DEBIAN/prerm" <<'SH'
#!/bin/sh
set -e
if [ "$1" = remove ] && [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
	systemctl stop ponytaild.service || true
	systemctl disable ponytaild.service >/dev/null 2>&1 || true
fi
SH
cat >"$root/DEBIAN/postrm" <<'SH'
#!/bin/sh
set -e
if [ -z "${DPKG_ROOT:-}" ] && [ -d /run/systemd/system ]; then
	systemctl daemon-reload || true
fi
# The store is the user's data: removed on purge only (DynamicUser keeps it in private/).
if [ "$1" = purge ]; then
	rm -rf "${DPKG_ROOT:-}/var/lib/private/ponytail" "${DPKG_ROOT:-}/var/lib/ponytail"
fi
SH
chmod 755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
deb="$B/ponytail_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "deb: $deb ($(du -k "$deb" | cut -f1) KiB), Depends: $depends"
