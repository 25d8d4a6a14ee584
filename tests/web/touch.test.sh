#!/usr/bin/env bash
# Touch and wind in the browser page (tests/web/touch.test.mjs; issue 40 item 5): a real
# ponytaild, Debian's headless Chromium under playwright-core, as e2e.test.sh.
#
# Bounded: the node run is stopped after 200 s, a bound for a hang. Skips (exit 0, with the
# reason) only when Chromium is not installed and cannot be (not root).
# timeout: 220 (the node run's own bound is 200 s)
set -eu
cd "$(dirname "$0")/../.."
. tests/web/lib.sh
web_setup touch
web_run 200 --test --test-reporter=spec "$here/touch.test.mjs"
