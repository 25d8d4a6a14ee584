#!/usr/bin/env bash
# Installs the browser client's run-time packages from npm (clients/web/package-lock.json:
# MediaPipe Face Mesh for the camera control, three.js and @pixiv/three-vrm for the avatar
# page) into clients/web/node_modules, which the
# daemon serves with the page. Run by `make` when the lock file changes.
#
# Without npm: as root, Debian's npm is installed; otherwise this warns and exits 0 (the C
# build does not need it; the page then says the camera is unavailable). With npm, a
# failed install is an error.
set -eu
cd "$(dirname "$0")"
if ! command -v npm >/dev/null; then
  if [ "$(id -u)" = 0 ]; then
    echo "web: installing Debian's npm" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >&2 ||
      { apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends npm >&2; }
  else
    echo "web: npm not found: the camera control's MediaPipe files are not installed" >&2
    echo "web: run:  sudo apt-get install -y npm  (then make again)" >&2
    exit 0
  fi
fi
echo "web: npm ci in clients/web (@mediapipe/face_mesh, three, @pixiv/three-vrm; pinned)" >&2
npm ci --no-audit --no-fund --ignore-scripts --loglevel=error >&2
