#!/usr/bin/env bash
# The avatar page's end-to-end test (tests/web/avatar.test.mjs): as e2e.test.sh, a real
# ponytaild on free loopback ports, Debian's headless Chromium under playwright-core, plus
# node's WebSocket (--experimental-websocket) for the test's own subscriber. Run by
# `make test` from the repository root with PT_BUILD set.
#
# Bounded: the node run is stopped after 90 s. Skips (exit 0, with the reason) only when Chromium is not installed and cannot be
# (not root); everything else that is missing is a failure.
set -eu
cd "$(dirname "$0")/../.."
export PT_ROOT="$PWD"
export PT_BUILD="${PT_BUILD:-build}"
here=tests/web
chromium="${PT_CHROMIUM:-/usr/bin/chromium}"

apt_install() {
  [ "$(id -u)" = 0 ] || return 1
  echo "avatar: installing $*" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2 ||
    { apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2; }
}

if [ ! -x "$chromium" ]; then
  apt_install chromium || true
  if [ ! -x "$chromium" ]; then
    echo "avatar: SKIPPED — no Chromium at $chromium and it cannot be installed here (run as root, or: sudo apt-get install chromium)"
    exit 0
  fi
fi
command -v node >/dev/null || { echo "avatar: node not found (apt-get install nodejs)" >&2; exit 1; }
if ! command -v npm >/dev/null; then
  apt_install npm || { echo "avatar: npm not found (apt-get install npm)" >&2; exit 1; }
fi
[ -x "$PT_BUILD/bin/ponytaild" ] || { echo "avatar: $PT_BUILD/bin/ponytaild not built (make)" >&2; exit 1; }

if [ ! -f "$here/node_modules/playwright-core/package.json" ] ||
   ! grep -q "\"version\": \"$(node -p "require('./$here/package-lock.json').packages['node_modules/playwright-core'].version")\"" \
        "$here/node_modules/playwright-core/package.json"; then
  echo "avatar: npm ci in $here (playwright-core; no browser download)" >&2
  (cd "$here" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >&2)
fi

# The test starts (and restarts) the daemon itself and Playwright starts Chromium; all of
# them run in the process group `timeout` makes for itself, which the trap ends whatever
# happens (and timeout itself ends on expiry).
export PT_WEB_TMP="$(mktemp -d "${TMPDIR:-/tmp}/ponytail-avatar-XXXXXX")"
[ -f clients/web/node_modules/@pixiv/three-vrm/package.json ] ||
  { echo "avatar: clients/web/node_modules has no three-vrm (make installs it: clients/web/install-deps.sh)" >&2; exit 1; }
timeout 90 node --experimental-websocket --no-warnings --test --test-reporter=spec "$here/avatar.test.mjs" &
group=$!
trap 'kill -TERM -- -"$group" 2>/dev/null || true; sleep 0.2; rm -rf "$PT_WEB_TMP"' EXIT INT TERM
rc=0
wait "$group" || rc=$?
if [ "$rc" != 0 ]; then
  [ "$rc" = 124 ] && echo "avatar: timed out after 90 s" >&2
  echo "avatar: --- last lines of the daemon's log ---" >&2
  tail -n 40 "$PT_WEB_TMP/ponytaild.log" >&2 2>/dev/null || true
fi
exit "$rc"
