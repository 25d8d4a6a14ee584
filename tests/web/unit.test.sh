#!/usr/bin/env bash
# The browser client's modules that need no browser (tests/web/unit.test.mjs: cameras,
# strand curves, error mapping, WebSocket URL, decoding frames through the page's link,
# interpolation, follower hairs; tests/web/headpose.test.mjs: the camera's pose solver,
# its filter and tracker; tests/web/avatar-params.test.mjs: the avatar page's URL parameters).
# sanitize: skip (JavaScript only: no code of ours under the sanitizers)
set -eu
cd "$(dirname "$0")/../.."
command -v node >/dev/null || { echo "web unit: node not found (apt-get install nodejs)" >&2; exit 1; }
exec node --test tests/web/unit.test.mjs tests/web/headpose.test.mjs tests/web/avatar-params.test.mjs
