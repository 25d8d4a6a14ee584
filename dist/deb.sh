#!/usr/bin/env bash
# make deb: stages `make install PREFIX=/usr` and packs it with Debian's own tools:
# dpkg-shlibdeps finds the library packages the binaries need, dpkg-deb builds
# BUILD/ponytail_VERSION_ARCH.deb. Usage: [DEB_MAINTAINER="Name <address>"] dist/deb.sh
# BUILD_DIR VERSION
set -eu
B="$1" version="$2"
: "${DEB_MAINTAINER:=Ponytail team <ponytail@example.org>}"
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
root="$PWD/$B/deb/root"
rm -rf "$B/deb"
mkdir -p "$root/DEBIAN"
make --no-print-directory install PREFIX=/usr LIBDIR="/usr/lib/$multiarch" DESTDIR="$root" >"$B/deb/install.log"
gzip -9n "$root/usr/share/man/man1/ponytail.1" "$root/usr/share/man/man8/ponytaild.8"
# What Debian policy asks of every package's doc directory.
doc="$root/usr/share/doc/ponytail"
printf 'ponytail (%s) unstable; urgency=medium\n\n  * Built from the repository by make deb.\n\n -- %s  %s\n' \
	"$version" "$DEB_MAINTAINER" "$(date -R -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")" |
	gzip -9n >"$doc/changelog.gz"
cat >"$doc/copyright" <<'COPYRIGHT'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: ponytail

Files: *
Copyright: 2026 the Ponytail team
License: none-stated
 The project has not stated a license yet; until it does, no rights beyond those of
 the law are granted.
COPYRIGHT
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
Maintainer: $DEB_MAINTAINER
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
# Maintainer scripts as debhelper's dh_installsystemd writes them (deb-systemd-helper and
# deb-systemd-invoke, from init-system-helpers), skipped under dpkg --root (DPKG_ROOT).
cat >"$root/DEBIAN/postinst" <<'SH'
#!/bin/sh
set -e
if [ -n "${DPKG_ROOT:-}" ]; then exit 0; fi
if [ "$1" = configure ] || [ "$1" = abort-upgrade ] || [ "$1" = abort-deconfigure ] || [ "$1" = abort-remove ]; then
	deb-systemd-helper unmask ponytaild.service >/dev/null || true
	if deb-systemd-helper --quiet was-enabled ponytaild.service; then
		deb-systemd-helper enable ponytaild.service >/dev/null || true
	else
		deb-systemd-helper update-state ponytaild.service >/dev/null || true
	fi
	if [ -d /run/systemd/system ]; then
		systemctl --system daemon-reload >/dev/null || true
		deb-systemd-invoke restart ponytaild.service >/dev/null || true
	fi
fi
SH
cat >"$root/DEBIAN/prerm" <<'SH'
#!/bin/sh
set -e
if [ -n "${DPKG_ROOT:-}" ]; then exit 0; fi
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
	deb-systemd-invoke stop ponytaild.service >/dev/null || true
fi
SH
cat >"$root/DEBIAN/postrm" <<'SH'
#!/bin/sh
set -e
if [ -n "${DPKG_ROOT:-}" ]; then exit 0; fi
if [ -d /run/systemd/system ]; then
	systemctl --system daemon-reload >/dev/null || true
fi
if [ "$1" = remove ] && command -v deb-systemd-helper >/dev/null; then
	deb-systemd-helper mask ponytaild.service >/dev/null || true
fi
if [ "$1" = purge ]; then
	if command -v deb-systemd-helper >/dev/null; then
		deb-systemd-helper purge ponytaild.service >/dev/null || true
		deb-systemd-helper unmask ponytaild.service >/dev/null || true
	fi
	# The store is the user's data: removed on purge only (DynamicUser keeps it in private/).
	rm -rf /var/lib/private/ponytail /var/lib/ponytail
fi
SH
chmod 755 "$root/DEBIAN/postinst" "$root/DEBIAN/prerm" "$root/DEBIAN/postrm"
deb="$B/ponytail_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "deb: $deb ($(du -k "$deb" | cut -f1) KiB), Depends: $depends"
