#!/usr/bin/env bash
# Installs the browser tests' pinned npm package (tests/web/package-lock.json:
# playwright-core, which drives Debian's Chromium; no browser is downloaded) into
# tests/web/node_modules, when missing or older than the lock file. Run from the
# repository root (tests/setup.sh does).
set -eu
here=tests/web
stamp="$here/node_modules/.package-lock.json" # written by npm ci
if [ ! -f "$stamp" ] || [ "$here/package-lock.json" -nt "$stamp" ]; then
	command -v npm >/dev/null || { echo "FAIL: npm not found (apt-get install npm)" >&2; exit 1; }
	echo "web tests: npm ci in $here (pinned: playwright-core; no browser download)" >&2
	(cd "$here" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >&2)
fi
