#!/usr/bin/env bash
# The avatar page's sample and stream view, end to end (tests/web/avatar-sample.test.mjs):
# as avatar.test.sh, a real ponytaild on free loopback ports, Debian's headless Chromium
# under playwright-core, node's WebSocket for the test's own subscriber. First, the
# shipped sample (clients/web/sample/sample.vrm) must be what the project's generator
# writes (tests/fixtures/vrm/make_sample_avatar.py), byte for byte.
#
# Bounded: the node run is stopped after 280 s, a bound for a hang. Skips (exit 0, with
# the reason) only when Chromium is not installed and cannot be (not root).
# timeout: 300 (the node run's own bound is 280 s)
set -eu
cd "$(dirname "$0")/../.."
. tests/web/lib.sh
[ -f clients/web/node_modules/@pixiv/three-vrm/package.json ] ||
  { echo "avatar-sample: clients/web/node_modules has no three-vrm (make installs it: clients/web/install-deps.sh)" >&2; exit 1; }
web_setup avatar-sample
mkdir -p "$PT_WEB_TMP/gen"
python3 tests/fixtures/vrm/make_sample_avatar.py "$PT_WEB_TMP/gen" >/dev/null
cmp "$PT_WEB_TMP/gen/sample.vrm" clients/web/sample/sample.vrm ||
  { echo "avatar-sample: clients/web/sample/sample.vrm is not what make_sample_avatar.py writes (run it to regenerate)" >&2; rm -rf "$PT_WEB_TMP"; exit 1; }
web_run 280 --experimental-websocket --no-warnings --test --test-reporter=spec "$here/avatar-sample.test.mjs"
