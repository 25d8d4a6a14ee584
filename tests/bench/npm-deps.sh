#!/usr/bin/env bash
# Installs the benchmark peers' pinned npm packages (tests/bench/package-lock.json: three,
# @pixiv/three-vrm) into tests/bench/node_modules, when missing or older than the lock
# file; `make bench` runs it. Installs Debian's nodejs / npm first when root, else prints
# the exact command. Run from the repository root.
set -eu
here=tests/bench
stamp="$here/node_modules/.package-lock.json" # written by npm ci
apt_install() {
	[ "$(id -u)" = 0 ] || return 1
	echo "bench: installing $*" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2 ||
		{ apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2; }
}
command -v node >/dev/null || apt_install nodejs ||
	{ echo "bench: node not found; run:  sudo apt-get install -y nodejs" >&2; exit 1; }
if [ ! -f "$stamp" ] || [ "$here/package-lock.json" -nt "$stamp" ]; then
	# npm comes with some nodejs builds and is Debian's separate package otherwise.
	command -v npm >/dev/null || apt_install npm ||
		{ echo "bench: npm not found; run:  sudo apt-get install -y npm" >&2; exit 1; }
	echo "bench: npm ci in $here (pinned: three, @pixiv/three-vrm)" >&2
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
