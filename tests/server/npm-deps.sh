#!/usr/bin/env bash
# Installs the pinned npm packages of the daemon's tests (tests/server/package-lock.json:
# ajv, @seriousme/openapi-schema-validator) into tests/server/node_modules, when missing or
# older than the lock file. Run from the repository root.
set -eu
here=tests/server
stamp="$here/node_modules/.package-lock.json" # written by npm ci
if [ ! -f "$stamp" ] || [ "$here/package-lock.json" -nt "$stamp" ]; then
	# npm comes with some nodejs builds and is Debian's separate package otherwise.
	if ! command -v npm >/dev/null && [ "$(id -u)" = 0 ]; then
		echo "server tests: installing npm" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >&2 ||
			{ apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >&2; }
	fi
	command -v npm >/dev/null || { echo "FAIL: npm not found (apt-get install npm)" >&2; exit 1; }
	echo "server tests: npm ci in $here (pinned: ajv, @seriousme/openapi-schema-validator)" >&2
	(cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi
