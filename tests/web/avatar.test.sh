#!/usr/bin/env bash
# The avatar page's end-to-end test (tests/web/avatar.test.mjs): as e2e.test.sh, a real
# ponytaild on free loopback ports, Debian's headless Chromium under playwright-core, plus
# node's WebSocket (--experimental-websocket) for the test's own subscriber. Run by
# `make test` from the repository root with PT_BUILD set.
#
# Bounded: the node run is stopped after 280 s, a bound for a hang (about 20 s alone;
# nothing in it depends on the machine's speed, issue 37). Skips (exit 0, with the
# reason) only when Chromium is not installed and cannot be (not root); everything else
# that is missing is a failure.
# timeout: 300 (the node run's own bound is 280 s)
set -eu
cd "$(dirname "$0")/../.."
. tests/web/lib.sh
[ -f clients/web/node_modules/@pixiv/three-vrm/package.json ] ||
  { echo "avatar: clients/web/node_modules has no three-vrm (make installs it: clients/web/install-deps.sh)" >&2; exit 1; }
web_setup avatar
web_run 280 --experimental-websocket --no-warnings --test --test-reporter=spec "$here/avatar.test.mjs"
