#!/usr/bin/env bash
# Everything the tests need from outside, installed once before any test starts (make
# test runs it as `make deps-test`): the Debian packages of `.ci/deps test`, then the
# pinned npm packages of the daemon's tests (tests/server), the browser tests (tests/web:
# playwright-core, no browser download) and the benchmark peers (tests/bench: three,
# three-vrm). Installs as root; otherwise prints the commands and fails. Nothing is
# installed while tests run: two tests installing at once would race for dpkg's lock,
# and an install inside a test spends that test's time.
set -eu
cd "$(dirname "$0")/.."
.ci/deps test
bash tests/server/npm-deps.sh
bash tests/web/npm-deps.sh
bash tests/bench/npm-deps.sh
