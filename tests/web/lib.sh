# Set-up shared by the browser tests (e2e.test.sh, avatar.test.sh), sourced from the
# repository root: `web_setup NAME` makes sure of Debian's Chromium (installed as root,
# else the test is skipped with the command to run), node, npm, the built daemon and
# tests/web's playwright-core (npm ci, no browser download), then exports PT_ROOT,
# PT_BUILD and a fresh PT_WEB_TMP; `web_run NAME SECONDS NODE_ARGS...` runs the node test in
# its own process group, bounded, ends the group and removes PT_WEB_TMP whatever happens,
# prints the daemon's last log lines on failure and exits with node's status.
here=tests/web

web_apt_install() {
  [ "$(id -u)" = 0 ] || return 1
  echo "$web_name: installing $*" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2 ||
    { apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2; }
}

web_setup() {
  web_name="$1"
  export PT_ROOT="$PWD"
  export PT_BUILD="${PT_BUILD:-build}"
  local chromium="${PT_CHROMIUM:-/usr/bin/chromium}"
  if [ ! -x "$chromium" ]; then
    web_apt_install chromium || true
    if [ ! -x "$chromium" ]; then
      echo "$web_name: SKIPPED — no Chromium at $chromium and it cannot be installed here (run as root, or: sudo apt-get install chromium)"
      exit 0
    fi
  fi
  command -v node >/dev/null || { echo "$web_name: node not found (apt-get install nodejs)" >&2; exit 1; }
  if ! command -v npm >/dev/null; then
    web_apt_install npm || { echo "$web_name: npm not found (apt-get install npm)" >&2; exit 1; }
  fi
  [ -x "$PT_BUILD/bin/ponytaild" ] || { echo "$web_name: $PT_BUILD/bin/ponytaild not built (make)" >&2; exit 1; }
  if [ ! -f "$here/node_modules/playwright-core/package.json" ] ||
     ! grep -q "\"version\": \"$(node -p "require('./$here/package-lock.json').packages['node_modules/playwright-core'].version")\"" \
          "$here/node_modules/playwright-core/package.json"; then
    echo "$web_name: npm ci in $here (playwright-core; no browser download)" >&2
    (cd "$here" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error >&2)
  fi
  export PT_WEB_TMP="$(mktemp -d "${TMPDIR:-/tmp}/ponytail-$web_name-XXXXXX")"
}

# The test starts (and restarts) the daemon itself and Playwright starts Chromium; all of
# them run in the process group `timeout` makes for itself, which the trap ends whatever
# happens (and timeout itself ends on expiry).
web_run() {
  local secs="$1"; shift
  timeout "$secs" node "$@" &
  web_group=$!
  trap 'kill -TERM -- -"$web_group" 2>/dev/null || true; sleep 0.2; rm -rf "$PT_WEB_TMP"' EXIT INT TERM
  local rc=0
  wait "$web_group" || rc=$?
  if [ "$rc" != 0 ]; then
    [ "$rc" = 124 ] && echo "$web_name: timed out after $secs s" >&2
    echo "$web_name: --- last lines of the daemon's log ---" >&2
    tail -n 40 "$PT_WEB_TMP/ponytaild.log" >&2 2>/dev/null || true
  fi
  exit "$rc"
}
