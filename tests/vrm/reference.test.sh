#!/usr/bin/env bash
# An independent VRMC_springBone implementation (springbone_reference.py, Python stdlib)
# against import-vrm + sim on an avatar with curved, unequal hair chains.
set -eu
exec python3 "$(dirname "$0")/springbone_reference.py" "${PT_BUILD:-build}"
