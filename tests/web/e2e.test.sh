#!/usr/bin/env bash
# The browser client's end-to-end test (tests/web/e2e.test.mjs): a real ponytaild on free
# loopback ports with a temporary --data directory, Debian's headless Chromium driven by
# playwright-core (from npm, installed here into tests/web/node_modules when missing; never
# a downloaded browser). Run by `make test` from the repository root with PT_BUILD set.
#
# Bounded: the node run is stopped after 280 s, a bound for a hang (about 25 s alone;
# nothing in it depends on the machine's speed, issue 37). Skips (exit 0, with the
# reason) only when Chromium is not installed and cannot be (not root); everything else
# that is missing is a failure.
# timeout: 300 (the node run's own bound is 280 s)
set -eu
cd "$(dirname "$0")/../.."
. tests/web/lib.sh
web_setup e2e
web_run 280 --test --test-reporter=spec "$here/e2e.test.mjs"
