#!/usr/bin/env bash
# Runs the JS module's tests (node's built-in runner, no npm dependencies) from the repo
# root: messages, strand codec and the golden vectors shared with the C tests.
# sanitize: skip (JavaScript only: no code of ours under the sanitizers)
set -eu
command -v node >/dev/null || { echo "js.test.sh: node not found (apt-get install nodejs)" >&2; exit 1; }
exec node --test tests/proto/js/
