#!/usr/bin/env bash
# Installs the pinned npm packages of the daemon's tests (tests/server/package-lock.json:
# ajv, @seriousme/openapi-schema-validator) into tests/server/node_modules, when missing or
# older than the lock file. Run from the repository root.
set -eu
here=tests/server
stamp="$here/node_modules/.package-lock.json" # written by npm ci
if [ ! -f "$stamp" ] || [ "$here/package-lock.json" -nt "$stamp" ]; then
	command -v npm >/dev/null || { echo "FAIL: npm not found (.ci/deps test installs it)" >&2; exit 1; }
	echo "server tests: npm ci in $here (pinned: ajv, @seriousme/openapi-schema-validator)" >&2
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
